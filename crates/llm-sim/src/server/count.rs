//! The count endpoints: Anthropic's `POST /v1/messages/count_tokens` and OpenAI's
//! `POST /v1/responses/input_tokens`, each answered with the count the server bills the same
//! request by ([`super::counter`]). Like the services, they refuse the fields that shape only
//! an answer (`max_tokens`, `stream`, ...).

use llm_core::wire::anthropic::COUNT_TOKENS_FIELDS;
use serde_json::{Value, json};

use super::http::HttpRequest;
use super::{Api, anthropic, counter, openai, responses};

/// Fields `input_tokens` takes beyond those llm-core sends: the service also counts a stored
/// conversation's items.
const MORE_INPUT_FIELDS: [&str; 4] = [
    "conversation",
    "previous_response_id",
    "parallel_tool_calls",
    "truncation",
];

/// The status and body for a request to a count endpoint, or `None` for any other path.
pub(super) fn route(request: &HttpRequest) -> Option<(u16, Value)> {
    let api = match request.path.trim_end_matches('/') {
        "/v1/messages/count_tokens" => Api::Anthropic,
        "/v1/responses/input_tokens" | "/responses/input_tokens" => Api::Responses,
        _ => return None,
    };
    if request.method != "POST" {
        let message = format!("{} takes POST, not {}", request.path, request.method);
        return Some((405, refusal(api, &message, None)));
    }
    let counted = match api {
        Api::Anthropic => anthropic_request(&request.body),
        _ => responses_request(&request.body),
    };
    Some(match counted {
        Ok(request) => {
            let tokens = counter(api)(&request);
            match api {
                Api::Anthropic => (200, json!({ "input_tokens": tokens })),
                _ => (
                    200,
                    json!({ "object": "response.input_tokens", "input_tokens": tokens }),
                ),
            }
        }
        Err((message, param)) => (400, refusal(api, &message, param.as_deref())),
    })
}

type Refused = (String, Option<String>);

fn anthropic_request(body: &[u8]) -> Result<llm_core::Request, Refused> {
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|err| (format!("the body is not json: {err}"), None))?;
    // As the API words it for a field only a model call takes.
    if let Some(name) = unknown_field(&value, &COUNT_TOKENS_FIELDS) {
        return Err((format!("{name}: Extra inputs are not permitted"), None));
    }
    // Read as the Messages body it is a part of.
    value["max_tokens"] = json!(1);
    anthropic::parse_request(&value)
        .map(|(request, _)| request)
        .map_err(|message| (message, None))
}

/// The first field of `value` that is not among `known`.
fn unknown_field(value: &Value, known: &[&str]) -> Option<String> {
    value.as_object().and_then(|fields| {
        fields
            .keys()
            .find(|name| !known.contains(&name.as_str()))
            .cloned()
    })
}

fn responses_request(body: &[u8]) -> Result<llm_core::Request, Refused> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| (format!("the body is not json: {err}"), None))?;
    let known: Vec<&str> = llm_core::wire::responses::INPUT_TOKENS_FIELDS
        .into_iter()
        .chain(MORE_INPUT_FIELDS)
        .collect();
    if let Some(name) = unknown_field(&value, &known) {
        return Err((format!("Unknown parameter: '{name}'."), Some(name)));
    }
    responses::parse_body(body)
        .map(|(request, _)| request)
        .map_err(|message| (message, None))
}

fn refusal(api: Api, message: &str, param: Option<&str>) -> Value {
    match api {
        Api::Anthropic => anthropic::error_json("invalid_request_error", message),
        _ => {
            let mut body = openai::error_json(message, "invalid_request_error", None);
            body["error"]["param"] = json!(param);
            body
        }
    }
}
