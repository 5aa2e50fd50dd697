//! Runtime governance for tool-using agents: intents, roles, a hash-chained audit log and a loop
//! governor, all decided in code before a tool runs.
//!
//! It knows nothing of LLM providers or storage engines.
