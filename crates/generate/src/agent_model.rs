//! An agent's own model, as the store keeps it among the agent's settings
//! (`merkle_store::Agent::settings`): which keys hold it, the checks a new one passes, and its
//! one JSON shape and one line of text, so that every front end registers and shows an agent's
//! model the same way.
use std::collections::BTreeMap;

use merkle_store::Agent;
use serde_json::{Value, json};

/// The settings that hold an agent's own model.
pub const PROVIDER: &str = "provider";
pub const MODEL: &str = "model";
/// The agent's price, `IN,OUT,READ,WRITE` dollars per million tokens.
pub const PRICE: &str = "price";
pub const BASE_URL: &str = "base_url";
/// The name of the variable holding the agent's key, never the key.
pub const API_KEY_ENV: &str = "api_key_env";
/// The API an OpenAI-style provider speaks.
pub const API: &str = "api";

/// The providers a model may name.
pub const PROVIDERS: [&str; 5] = ["anthropic", "openai", "ollama", "openai-compatible", "sim"];

/// The APIs an OpenAI-style provider may speak, and the providers that speak them.
pub const APIS: [&str; 2] = ["chat", "responses"];
pub const OPENAI_STYLE: [&str; 3] = ["openai", "ollama", "openai-compatible"];

/// A model to register with an agent. `price` is already in its stored form.
#[derive(Clone, Copy, Debug, Default)]
pub struct NewModel<'a> {
    pub provider: &'a str,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub api: Option<&'a str>,
    pub api_key_env: Option<&'a str>,
    pub price: Option<&'a str>,
}

impl NewModel<'_> {
    /// The settings that store this model, or why it cannot be stored (a message naming the
    /// flag at fault, as the CLI names them).
    pub fn settings(&self) -> Result<BTreeMap<String, String>, String> {
        let provider = self.provider;
        if provider == "openai-compatible" && self.base_url.is_none() {
            return Err(
                "--provider openai-compatible needs --base-url (the server's OpenAI-style API)"
                    .to_owned(),
            );
        }
        if let Some(api) = self.api.filter(|_| !OPENAI_STYLE.contains(&provider)) {
            return Err(format!(
                "--api {api} is for the providers that speak OpenAI's APIs ({}), not {provider}",
                OPENAI_STYLE.join(", ")
            ));
        }
        if self.model.is_some_and(|m| m.trim().is_empty()) {
            return Err("--model is empty".to_owned());
        }
        let mut settings = BTreeMap::new();
        settings.insert(PROVIDER.to_owned(), provider.to_owned());
        for (key, value) in [
            (MODEL, self.model),
            (BASE_URL, self.base_url),
            (API, self.api),
            (API_KEY_ENV, self.api_key_env),
            (PRICE, self.price),
        ] {
            if let Some(value) = value {
                settings.insert(key.to_owned(), value.to_owned());
            }
        }
        Ok(settings)
    }
}

/// An agent as `agent add` and `agent list` answer it: its id, role and model settings.
pub fn agent_json(a: &Agent) -> Value {
    let setting = |key: &str| a.settings.get(key);
    json!({
        "agent_id": a.id,
        "role": a.role.as_str(),
        "provider": setting(PROVIDER),
        "model": setting(MODEL),
        "base_url": setting(BASE_URL),
        "api": setting(API),
        "api_key_env": setting(API_KEY_ENV),
        "price": setting(PRICE),
    })
}

/// An agent's own model as `provider [model] [base URL] [(api A)] [(key from $NAME)] [at $P
/// per million tokens]`, if it has one.
pub fn model_text(a: &Agent) -> Option<String> {
    let parts: Vec<&str> = [PROVIDER, MODEL, BASE_URL]
        .iter()
        .filter_map(|key| a.settings.get(*key).map(String::as_str))
        .collect();
    let api = match a.settings.get(API) {
        Some(api) => format!(" (api {api})"),
        None => String::new(),
    };
    let key = match a.settings.get(API_KEY_ENV) {
        Some(variable) => format!(" (key from ${variable})"),
        None => String::new(),
    };
    let price = match a.settings.get(PRICE) {
        Some(price) => format!(" at ${price} per million tokens"),
        None => String::new(),
    };
    (!parts.is_empty()).then(|| format!("{}{api}{key}{price}", parts.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use merkle_store::Role;
    use pretty_assertions::assert_eq;

    fn agent(settings: BTreeMap<String, String>) -> Agent {
        Agent {
            id: "a".to_owned(),
            role: Role::Writer,
            settings,
        }
    }

    #[test]
    fn a_model_is_checked_stored_and_shown_one_way() {
        let new = NewModel {
            provider: "openai-compatible",
            model: Some("m"),
            base_url: Some("http://127.0.0.1:9"),
            api: Some("responses"),
            api_key_env: Some("KEY"),
            price: Some("1,2,0.1,1.25"),
        };
        let a = agent(new.settings().expect("valid"));
        assert_eq!(
            model_text(&a).as_deref(),
            Some(
                "openai-compatible m http://127.0.0.1:9 (api responses) (key from $KEY) at \
                 $1,2,0.1,1.25 per million tokens"
            )
        );
        assert_eq!(agent_json(&a)["api_key_env"], "KEY");
        assert_eq!(model_text(&agent(BTreeMap::new())), None);

        let bad = |m: NewModel<'_>| m.settings().expect_err("refused");
        assert!(
            bad(NewModel {
                provider: "openai-compatible",
                ..NewModel::default()
            })
            .contains("--base-url")
        );
        assert!(
            bad(NewModel {
                provider: "anthropic",
                api: Some("chat"),
                ..NewModel::default()
            })
            .contains("not anthropic")
        );
        assert!(
            bad(NewModel {
                provider: "openai",
                model: Some(" "),
                ..NewModel::default()
            })
            .contains("--model is empty")
        );
    }
}
