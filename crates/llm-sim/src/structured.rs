//! Answers that follow the shape a request asks for, as a real model's do: a request with a
//! response schema gets JSON of that schema, and a request that forces a tool gets a call of
//! that tool, whatever the script said, when what it said does not already fit.
//!
//! The JSON is [`example`]: the smallest value the schema allows (each required property, the
//! first of an `enum`, the `minimum` of a number, `minItems` items), so that tests can check a
//! client's structured-output path end to end.
use llm_core::types::schema::validate;
use llm_core::{ContentBlock, Request, Response, StopReason, ToolCall, ToolChoice};
use serde_json::{Map, Value, json};

/// Makes `response` fit `request`'s response schema or forced tool.
pub fn fit_answer(request: &Request, response: &mut Response) {
    if let Some(schema) = &request.response_schema {
        if llm_core::structured_answer(schema, response).is_err() {
            response.content = vec![ContentBlock::text(example(&schema.schema).to_string())];
            response.stop_reason = StopReason::EndTurn;
        }
        return;
    }
    let Some(ToolChoice::Tool { name }) = &request.tool_choice else {
        return;
    };
    let Some(tool) = request.tools.iter().find(|t| &t.name == name) else {
        return;
    };
    let fits = response
        .tool_calls()
        .into_iter()
        .any(|call| &call.name == name && validate(&tool.input_schema, &call.input).is_ok());
    if !fits {
        response.content = vec![ContentBlock::ToolUse(ToolCall {
            id: "toolu_sim_forced".to_owned(),
            name: name.clone(),
            input: example(&tool.input_schema),
        })];
        response.stop_reason = StopReason::ToolUse;
    }
}

/// The smallest value `schema` allows (see the module documentation).
pub fn example(schema: &Value) -> Value {
    example_in(schema, schema, 0)
}

fn example_in(root: &Value, schema: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object() else {
        return Value::Null;
    };
    if depth > 32 {
        return Value::Null;
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        return example_in(root, target, depth + 1);
    }
    if let Some(constant) = s.get("const") {
        return constant.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|o| o.first()) {
            return example_in(root, first, depth + 1);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ => "null",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            let properties = s.get("properties").and_then(Value::as_object);
            for name in llm_core::types::schema::required(s) {
                let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                out.insert(name.to_owned(), example_in(root, property, depth + 1));
            }
            Value::Object(out)
        }
        "array" => {
            let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = s.get("items").unwrap_or(&Value::Null);
            Value::Array((0..n).map(|_| example_in(root, item, depth + 1)).collect())
        }
        "string" => {
            let n = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            Value::String("x".repeat(usize::try_from(n).unwrap_or(0)))
        }
        "integer" => {
            let min = s.get("minimum").and_then(Value::as_i64).unwrap_or(0);
            json!(
                min.max(
                    s.get("exclusiveMinimum")
                        .and_then(Value::as_i64)
                        .map_or(min, |m| m + 1)
                )
            )
        }
        "number" => json!(s.get("minimum").and_then(Value::as_f64).unwrap_or(0.0)),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}
