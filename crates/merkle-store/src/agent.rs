//! Agents and their roles: every write to the store names a registered agent.
use std::collections::BTreeMap;

use crate::codec::{Reader, Writer};
pub use merkle_hash::Role;

/// A registered agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// The agent's id, as writes name it.
    pub id: String,
    /// What it may do.
    pub role: Role,
    /// What the agent is configured with, by name (the CLI keeps its preferred `provider`,
    /// `model` and `base_url` here). Opaque to the store: it only keeps them.
    pub settings: BTreeMap<String, String>,
}

/// An agent record's value: the role's code, then its settings as length-prefixed (name,
/// value) pairs. A record of the role alone (written before settings existed) has none.
pub(crate) fn encode(role: Role, settings: &BTreeMap<String, String>) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(role.code());
    for (name, value) in settings {
        w.str(name).str(value);
    }
    w.0
}

/// Reads what [`encode`] wrote; `None` if it is malformed.
pub(crate) fn decode(id: &str, value: &[u8]) -> Option<Agent> {
    let mut r = Reader::new(value);
    let role = Role::from_code(r.u8()?)?;
    let mut settings = BTreeMap::new();
    while !r.is_empty() {
        let name = r.str()?;
        settings.insert(name.to_owned(), r.str()?.to_owned());
    }
    Some(Agent {
        id: id.to_owned(),
        role,
        settings,
    })
}
