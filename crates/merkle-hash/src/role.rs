//! [`Role`]: what an agent may do. In the leaf crate so that governance, which caps an
//! agent's intents by it, builds without the store (which keeps it in its agent records and
//! re-exports it as `merkle_store::Role`).
use std::fmt;

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

    /// The byte the store keeps it as.
    pub fn code(self) -> u8 {
        match self {
            Role::Reader => 1,
            Role::Writer => 2,
            Role::Synthesis => 3,
        }
    }

    /// The role the store's byte `c` names.
    pub fn from_code(c: u8) -> Option<Role> {
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
