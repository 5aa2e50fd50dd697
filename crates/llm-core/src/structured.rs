//! Structured outputs: a request's answer as the JSON its [`ResponseSchema`] asks for.
//!
//! The providers ask for it in their own way (OpenAI: a strict `json_schema` response format;
//! Anthropic: one tool whose input schema is the schema, forced with `tool_choice`), and
//! [`structured_answer`] reads it back either way (the forced tool's input, else the text as
//! JSON) and checks it with [`crate::types::schema::validate`]: an answer that is not JSON of
//! the schema is [`Error::SchemaMismatch`], never passed on.
use serde_json::Value;

use crate::client::LlmClient;
use crate::error::{Error, Result};
use crate::text::excerpt;
use crate::types::schema::validate;
use crate::types::{Request, Response, ResponseSchema};

/// The answer to `request`, whose `response_schema` must be set, as checked JSON, with the
/// response it came in.
pub async fn complete_structured(
    client: &dyn LlmClient,
    request: &Request,
) -> Result<(Value, Response)> {
    let Some(schema) = &request.response_schema else {
        return Err(Error::Config {
            details: "a structured completion needs the request's response_schema".to_owned(),
        });
    };
    let response = client.complete(request).await?;
    let value = structured_answer(schema, &response)?;
    Ok((value, response))
}

/// The JSON `response` answers for `schema`: the input of a call of the tool named after it
/// (Anthropic's form), else its text; checked against the schema.
pub fn structured_answer(schema: &ResponseSchema, response: &Response) -> Result<Value> {
    let mismatch = |details: String, answer: &str| Error::SchemaMismatch {
        schema: schema.name.clone(),
        details,
        answer: excerpt(answer, 500),
    };
    let value = match response
        .tool_calls()
        .into_iter()
        .find(|call| call.name == schema.name)
    {
        Some(call) => call.input.clone(),
        None => {
            let text = response.text();
            serde_json::from_str(text.trim())
                .map_err(|e| mismatch(format!("it is not JSON ({e})"), &text))?
        }
    };
    validate(&schema.schema, &value).map_err(|details| mismatch(details, &value.to_string()))?;
    Ok(value)
}
