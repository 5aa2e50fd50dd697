//! Counting a request's input tokens on an OpenAI-style server: OpenAI's own count for the
//! Responses API (`POST /v1/responses/input_tokens`), tiktoken for OpenAI's models on the
//! chat API (and on a server without the count endpoint), and the calibrated estimate for
//! other servers' models.

use serde_json::Value;

use super::{OpenAiClient, classify};
use crate::count::{CountSource, TokenCount};
use crate::error::{Error, Result};
use crate::http::{ask_provider, json_body};
use crate::openai::responses::OpenAiApi;
use crate::tokens::{Encoding, count_request};
use crate::types::Request;
use crate::wire::responses::{INPUT_TOKENS_FIELDS, InputTokens};

impl OpenAiClient {
    /// The model that answers `request`: its own, else the client's default.
    pub(crate) fn model_of<'a>(&'a self, request: &'a Request) -> &'a str {
        match request.model.as_str() {
            "" => self.default_model.as_deref().unwrap_or_default(),
            model => model,
        }
    }

    /// The count made here: exact with the model's tiktoken encoding, else the estimate
    /// scaled by what earlier answers taught.
    pub(crate) fn local_count(&self, request: &Request) -> TokenCount {
        let model = self.model_of(request);
        match Encoding::for_model(model) {
            Some(encoding) => {
                TokenCount::new(count_request(request, encoding), CountSource::Tokenizer)
            }
            None => self.transport.estimate(model, request),
        }
    }

    /// The provider's count where the API has an endpoint for it, else [`Self::local_count`].
    pub(crate) async fn count_input_inner(&self, request: &Request) -> Result<TokenCount> {
        if self.api != OpenAiApi::Responses {
            return Ok(self.local_count(request));
        }
        let mut body = self.request_body(request, false)?;
        if let Value::Object(fields) = &mut body {
            fields.retain(|name, _| INPUT_TOKENS_FIELDS.contains(&name.as_str()));
        }
        let url = format!("{}/input_tokens", self.url);
        let decode = |provider, answer: &[u8]| {
            json_body::<InputTokens>(provider, answer, "the input token count")
                .map(|counted| counted.input_tokens)
        };
        let endpoint = (url.as_str(), self.headers.clone());
        match ask_provider(
            &self.transport,
            &self.counted,
            endpoint,
            &body,
            classify,
            decode,
        )
        .await
        {
            Ok(tokens) => Ok(TokenCount::new(tokens, CountSource::Provider)),
            // A compatible server that speaks the Responses API but does not count.
            Err(Error::InvalidRequest {
                status: 404 | 405, ..
            }) => Ok(self.local_count(request)),
            Err(error) => Err(error),
        }
    }
}
