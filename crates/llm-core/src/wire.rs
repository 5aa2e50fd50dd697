//! The providers' wire formats as serde types, one module per format.
//!
//! The clients in this crate encode requests and decode answers with them, and the fake
//! server in `llm-sim` decodes requests and encodes answers with the very same types, so a
//! field the client writes is a field the simulator reads. They are public for that reason
//! only: the rest of the workspace speaks [`crate::types`].

pub mod anthropic;
