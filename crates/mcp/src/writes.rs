//! What writing takes, which the handler (on stdio and over HTTP) and the HTTP gate both go by:
//! the role each tool needs of the agent it writes as, what to say when there is no agent, and
//! how the gate tells the handler which agent a request acts as and that it refused a write.
use merkle_store::Role;

/// The header that tells the handler which agent a request acts as (the gate sets it, and
/// drops any a client sends).
pub(crate) const AGENT_HEADER: &str = "x-merkle-agent";

/// The reason the gate refused a tool call for its agent's role, passed to the handler in the
/// request's extensions: it answers this as the tool's error and runs nothing.
#[derive(Clone, Debug)]
pub(crate) struct Refused(pub(crate) String);

/// The role a tool needs of the agent it writes as; `None` for a tool that only reads.
pub(crate) fn role_needed(tool: &str) -> Option<Role> {
    match tool {
        "put_frame" => Some(Role::Writer),
        "synthesize" => Some(Role::Synthesis),
        _ => None,
    }
}

/// Why `tool`, which writes, cannot: no agent to write as.
pub(crate) fn no_agent(tool: &str) -> String {
    format!(
        "{tool} writes as an agent and none is configured: start the server with \
         `merkle mcp --agent ID` (or MERKLE_AGENT=ID)"
    )
}
