//! Agents and their roles: every write to the store names a registered agent.
use std::collections::BTreeMap;
use std::fmt;

use crate::codec::{Reader, Writer};

/// What an agent may do. Each role can do everything the one before it can.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Reads nodes and frames; every write is refused.
    Reader,
    /// Also puts frames on nodes.
    Writer,
    /// Also synthesizes directory frames from children.
    Synthesis,
}

impl Role {
    /// The role's name, as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Writer => "writer",
            Role::Synthesis => "synthesis",
        }
    }

    /// Parses a role name.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "reader" => Some(Role::Reader),
            "writer" => Some(Role::Writer),
            "synthesis" => Some(Role::Synthesis),
            _ => None,
        }
    }

    /// Whether the role may put frames.
    pub fn can_write(self) -> bool {
        self >= Role::Writer
    }

    /// Whether the role may synthesize directory frames.
    pub fn can_synthesize(self) -> bool {
        self >= Role::Synthesis
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Role::Reader => 1,
            Role::Writer => 2,
            Role::Synthesis => 3,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Role> {
        match c {
            1 => Some(Role::Reader),
            2 => Some(Role::Writer),
            3 => Some(Role::Synthesis),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
