//! The agent runtime: a crash-safe conversation store, identity files in the system prompt,
//! workspace-confined tools, the turn loop and compaction.
