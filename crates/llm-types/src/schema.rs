//! Structured outputs: the JSON Schema a request asks its answer to follow
//! ([`crate::Request::response_schema`]), and [`validate`], which checks an answer against it.
//!
//! The validator covers what providers' strict structured outputs accept: `type` (one or a
//! list), `properties`, `required`, `additionalProperties` (`false` or a schema), `items`,
//! `prefixItems`, `enum`, `const`, `anyOf`, `oneOf`, `allOf`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `minItems`, `maxItems`,
//! and `$ref` to `#/$defs/...` or `#/definitions/...`. Keywords it does not know (`format`,
//! `pattern`, `description`, ...) constrain nothing here.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON Schema the answer must follow, with the name providers want for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSchema {
    /// `[A-Za-z0-9_-]`, at most 64 characters (OpenAI's rule for a schema's name, Anthropic's
    /// for a tool's).
    pub name: String,
    pub schema: Value,
}

/// The property names an object schema's `required` lists.
pub fn required(schema: &Map<String, Value>) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether `value` follows `schema`; the first place it does not, as `at /path: what`.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, schema, value, &mut Vec::new())
}

fn at(path: &[String]) -> String {
    if path.is_empty() {
        "/".to_owned()
    } else {
        format!("/{}", path.join("/"))
    }
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(value: &Value, ty: &str) -> bool {
    let actual = type_of(value);
    actual == ty
        || (ty == "number" && actual == "integer")
        || (ty == "integer" && value.as_f64().is_some_and(|f| f.fract() == 0.0))
}

/// The schema `#/$defs/x` (or `#/definitions/x`) names in `root`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn check(
    root: &Value,
    schema: &Value,
    value: &Value,
    path: &mut Vec<String>,
) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        // `true` (or anything not an object) allows anything; `false` nothing.
        return if schema == &Value::Bool(false) {
            Err(format!("at {}: nothing is allowed here", at(path)))
        } else {
            Ok(())
        };
    };
    if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
        let Some(target) = resolve(root, reference) else {
            return fail(
                path,
                format!("the schema's $ref {reference:?} names nothing"),
            );
        };
        check(root, target, value, path)?;
    }
    check_kind(s, value, path)?;
    check_choices(root, s, value, path)?;
    check_range(s, value, path)?;
    if let Some(items) = value.as_array() {
        check_items(root, s, items, path)?;
    }
    if let Some(object) = value.as_object() {
        check_properties(root, s, object, path)?;
    }
    Ok(())
}

/// The error for `value` at `path`: `at /path: what`.
fn fail(path: &[String], what: String) -> Result<(), String> {
    Err(format!("at {}: {what}", at(path)))
}

/// Checks the schema's `type`, `enum` and `const`.
fn check_kind(s: &Map<String, Value>, value: &Value, path: &[String]) -> Result<(), String> {
    match s.get("type") {
        Some(Value::String(ty)) if !is_type(value, ty) => {
            return fail(path, format!("expected {ty}, found {}", type_of(value)));
        }
        Some(Value::Array(types))
            if !types
                .iter()
                .filter_map(Value::as_str)
                .any(|ty| is_type(value, ty)) =>
        {
            return fail(
                path,
                format!("expected one of {types:?}, found {}", type_of(value)),
            );
        }
        _ => {}
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        return fail(
            path,
            format!("{value} is not one of {}", Value::Array(allowed.clone())),
        );
    }
    if let Some(constant) = s.get("const")
        && constant != value
    {
        return fail(path, format!("expected {constant}, found {value}"));
    }
    Ok(())
}

/// Checks the schema's `anyOf` and `oneOf` (how many of the schemas match), then `allOf`.
fn check_choices(
    root: &Value,
    s: &Map<String, Value>,
    value: &Value,
    path: &mut Vec<String>,
) -> Result<(), String> {
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = s.get(key).and_then(Value::as_array) {
            let matching = options
                .iter()
                .filter(|o| check(root, o, value, path).is_ok())
                .count();
            if matching == 0 || (key == "oneOf" && matching > 1) {
                return fail(
                    path,
                    format!("{matching} of the {key} schemas match {}", type_of(value)),
                );
            }
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for option in all {
            check(root, option, value, path)?;
        }
    }
    Ok(())
}

/// Checks a number against the schema's bounds and a string's length against its limits.
fn check_range(s: &Map<String, Value>, value: &Value, path: &[String]) -> Result<(), String> {
    let number = |key: &str| s.get(key).and_then(Value::as_f64);
    if let Some(x) = value.as_f64()
        && (number("minimum").is_some_and(|m| x < m)
            || number("maximum").is_some_and(|m| x > m)
            || number("exclusiveMinimum").is_some_and(|m| x <= m)
            || number("exclusiveMaximum").is_some_and(|m| x >= m))
    {
        return fail(path, format!("{x} is out of the schema's range"));
    }
    let count = |key: &str| s.get(key).and_then(Value::as_u64);
    if let Some(text) = value.as_str() {
        let n = text.chars().count() as u64;
        if count("minLength").is_some_and(|m| n < m) || count("maxLength").is_some_and(|m| n > m) {
            return fail(path, format!("a string of {n} characters is out of range"));
        }
    }
    Ok(())
}

/// Checks an array's length against the schema's limits, then each item against its
/// `prefixItems` schema or else `items`.
fn check_items(
    root: &Value,
    s: &Map<String, Value>,
    items: &[Value],
    path: &mut Vec<String>,
) -> Result<(), String> {
    let count = |key: &str| s.get(key).and_then(Value::as_u64);
    let n = items.len() as u64;
    if count("minItems").is_some_and(|m| n < m) || count("maxItems").is_some_and(|m| n > m) {
        return fail(path, format!("{n} items is out of range"));
    }
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    for (i, item) in items.iter().enumerate() {
        let item_schema = prefix.and_then(|p| p.get(i)).or_else(|| {
            s.get("items")
                .filter(|it| it.is_object() || it.is_boolean())
        });
        if let Some(item_schema) = item_schema {
            path.push(i.to_string());
            check(root, item_schema, item, path)?;
            path.pop();
        }
    }
    Ok(())
}

/// Checks that an object has the properties the schema requires, then each property against
/// its schema in `properties` or else `additionalProperties`.
fn check_properties(
    root: &Value,
    s: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<(), String> {
    let properties = s.get("properties").and_then(Value::as_object);
    for name in required(s) {
        if !object.contains_key(name) {
            return fail(path, format!("the required property {name:?} is missing"));
        }
    }
    for (name, v) in object {
        path.push(name.clone());
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check(root, property, v, path)?,
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    path.pop();
                    return fail(path, format!("the property {name:?} is not allowed"));
                }
                Some(extra @ Value::Object(_)) => check(root, extra, v, path)?,
                _ => {}
            },
        }
        path.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked_against_the_strict_subset() {
        let schema = json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["pass", "fail"]},
                "score": {"type": "integer", "minimum": 0, "maximum": 10},
                "files": {"type": "array", "items": {"$ref": "#/$defs/file"}, "maxItems": 2},
                "note": {"type": ["string", "null"]},
            },
            "required": ["verdict", "score", "files", "note"],
            "additionalProperties": false,
            "$defs": {"file": {"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"], "additionalProperties": false}},
        });
        let good =
            json!({"verdict": "pass", "score": 7, "files": [{"path": "a.rs"}], "note": null});
        assert_eq!(validate(&schema, &good), Ok(()));
        for (bad, says) in [
            (
                json!({"verdict": "maybe", "score": 7, "files": [], "note": null}),
                "not one of",
            ),
            (
                json!({"verdict": "pass", "score": 11, "files": [], "note": null}),
                "/score",
            ),
            (
                json!({"verdict": "pass", "score": 1.5, "files": [], "note": null}),
                "expected integer",
            ),
            (
                json!({"verdict": "pass", "score": 1, "files": [{"name": "x"}], "note": null}),
                "/files/0",
            ),
            (
                json!({"verdict": "pass", "score": 1, "files": [], "note": null, "x": 1}),
                "\"x\" is not allowed",
            ),
            (
                json!({"verdict": "pass", "score": 1, "files": []}),
                "\"note\" is missing",
            ),
            (json!("pass"), "expected object"),
        ] {
            let err = validate(&schema, &bad).expect_err("invalid");
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
