//! Checks a tool call's input against the tool's JSON schema before the handler sees it.
//!
//! This is the part of JSON Schema that tool schemas use: `type` (one or a list), `enum`,
//! `required`, `properties`, `additionalProperties: false`, `items`, `minimum` and `maximum`.
//! Other keywords are ignored, so an unusual schema is checked less, never rejected. Every
//! problem is reported, so a model can fix its call in one try.

use serde_json::Value;

/// Every way `input` breaks `schema`, each naming where (`input.path`, `input.items[2]`),
/// sorted.
pub fn violations(input: &Value, schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(input, schema, "input", &mut problems);
    // Sorted, so the order does not depend on how the JSON map orders its keys.
    problems.sort();
    problems
}

fn check(value: &Value, schema: &Value, at: &str, problems: &mut Vec<String>) {
    if let Some(expected) = schema.get("type") {
        let allowed: Vec<&str> = match expected {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|ty| has_type(value, ty)) {
            problems.push(format!(
                "{at} must be {}, not {}",
                allowed.join(" or "),
                type_name(value)
            ));
            return;
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        let options: Vec<String> = options.iter().map(Value::to_string).collect();
        problems.push(format!("{at} must be one of {}", options.join(", ")));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            problems.push(format!("{at} must be at least {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            problems.push(format!("{at} must be at most {max}"));
        }
    }
    match value {
        Value::Object(fields) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !fields.contains_key(name) {
                        problems.push(format!("{at} is missing the required field {name:?}"));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (name, field) in fields {
                match properties.and_then(|p| p.get(name)) {
                    Some(field_schema) => {
                        check(field, field_schema, &format!("{at}.{name}"), problems);
                    }
                    None if closed => {
                        problems.push(format!("{at} has an unknown field {name:?}"));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{at}[{index}]"), problems);
                }
            }
        }
        _ => {}
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        // Some models write integers as 3.0.
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        // A type this checker does not know is not held against the input.
        _ => true,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn check(input: Value, expected: &[&str]) {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "mode": {"enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["path"],
            "additionalProperties": false,
        });
        assert_eq!(violations(&input, &schema), expected);
    }

    #[test]
    fn accepts_valid_input() {
        check(json!({"path": "a"}), &[]);
        check(
            json!({"path": "a", "limit": 3.0, "mode": "b", "tags": ["x"]}),
            &[],
        );
    }

    #[test]
    fn reports_every_problem() {
        check(
            json!({"limit": 0, "mode": "c", "tags": ["x", 1], "extra": true}),
            &[
                "input has an unknown field \"extra\"",
                "input is missing the required field \"path\"",
                "input.limit must be at least 1",
                "input.mode must be one of \"a\", \"b\"",
                "input.tags[1] must be string, not a number",
            ],
        );
        check(
            json!({"path": 7}),
            &["input.path must be string, not a number"],
        );
        check(json!("path"), &["input must be object, not a string"]);
        check(
            json!({"path": "a", "limit": 1.5}),
            &["input.limit must be integer, not a number"],
        );
    }
}
