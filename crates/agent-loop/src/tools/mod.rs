//! Tools the model can call: a registry of definitions with handlers, and the built-in tools.
//!
//! A [`ToolDefinition`] is a name, a description, a JSON schema for its input and a handler.
//! The [`ToolRegistry`] exports the definitions as llm-core [`Tool`]s (each provider client
//! translates them to its wire format) and runs calls. Whatever a call does, the loop gets a
//! result to send back, never a panic or an error that ends the turn: an unknown tool, input
//! that breaks the schema, a handler's error and even a handler's panic all become error
//! results the model can read and correct. Every result is capped at
//! [`ToolConfig::output_bytes`] with a marker saying how much was cut.

mod builtin;
pub mod command;
pub mod context;
pub mod control;
pub mod schema;
pub mod search;
pub mod workspace;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use llm_core::{ContentBlock, Tool, ToolCall};
use serde_json::Value;

pub use builtin::builtin_tools;
pub use workspace::{DirEntry, EntryKind, Workspace};

use crate::error::{Error, Result};

/// Runs one call of a tool on its (schema-checked) input.
pub type Handler = Box<dyn Fn(&Value) -> Result<String> + Send + Sync>;

/// A tool: what the model is told about it, and what runs when it is called.
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: Value,
    pub handler: Handler,
    /// Whether a call changes the workspace (a write, an edit, a command): a `complete` after
    /// such a call failed, and was not redone with success, is "not completed". A failed
    /// read, search or lookup says nothing of the task.
    pub changes: bool,
}

impl ToolDefinition {
    /// Marks the tool as one that changes the workspace (see [`ToolDefinition::changes`]).
    pub fn changing(mut self) -> Self {
        self.changes = true;
        self
    }

    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(&Value) -> Result<String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            handler: Box::new(handler),
            changes: false,
        }
    }

    /// The definition as the model sees it, without the handler.
    pub fn to_tool(&self) -> Tool {
        Tool {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
        }
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

/// The result of one call, as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
}

/// Limits of the built-in tools and of every tool's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolConfig {
    /// Any result longer than this is cut, with a marker; a command's output is cut in the
    /// middle, keeping its start and end.
    pub output_bytes: usize,
    /// Files larger than this are not read (or searched).
    pub read_bytes: u64,
    pub list_entries: usize,
    pub search_matches: usize,
    /// A command's time limit when the model gives none.
    pub command_timeout: Duration,
    /// The most a model may ask for.
    pub max_command_timeout: Duration,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            output_bytes: 30_000,
            read_bytes: 4 * 1024 * 1024,
            list_entries: 1_000,
            search_matches: 200,
            command_timeout: Duration::from_secs(120),
            max_command_timeout: Duration::from_secs(600),
        }
    }
}

/// The tools of an agent, in registration order.
#[derive(Debug)]
pub struct ToolRegistry {
    tools: Vec<ToolDefinition>,
    output_bytes: usize,
}

impl ToolRegistry {
    /// An empty registry whose results are capped at `output_bytes`.
    pub fn new(output_bytes: usize) -> Self {
        Self {
            tools: Vec::new(),
            output_bytes,
        }
    }

    /// A registry holding the built-in tools for `workspace`.
    pub fn with_builtins(workspace: &Arc<Workspace>, config: &ToolConfig) -> Self {
        Self {
            tools: builtin_tools(workspace, config),
            output_bytes: config.output_bytes,
        }
    }

    /// Adds `tool`; names are unique.
    pub fn register(&mut self, tool: ToolDefinition) -> Result<()> {
        if self.get(&tool.name).is_some() {
            return Err(Error::DuplicateTool { name: tool.name });
        }
        self.tools.push(tool);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// The tools as the model sees them, in registration order.
    pub fn export(&self) -> Vec<Tool> {
        self.tools.iter().map(ToolDefinition::to_tool).collect()
    }

    /// Runs tool `name` on `input`. Never fails: every failure is an error outcome.
    pub fn call(&self, name: &str, input: &Value) -> ToolOutcome {
        let result = match self.get(name) {
            None => Err(Error::UnknownTool {
                name: name.to_owned(),
                known: self
                    .tools
                    .iter()
                    .map(|tool| tool.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
            Some(tool) => {
                let problems = schema::violations(input, &tool.input_schema);
                if problems.is_empty() {
                    // A panicking handler is a bug in it, not a reason to end the agent.
                    catch_unwind(AssertUnwindSafe(|| (tool.handler)(input))).unwrap_or_else(
                        |panic| {
                            Err(Error::Handler {
                                tool: name.to_owned(),
                                message: format!("it panicked: {}", panic_message(&*panic)),
                            })
                        },
                    )
                } else {
                    Err(Error::InvalidInput {
                        tool: name.to_owned(),
                        reason: problems.join("; "),
                    })
                }
            }
        };
        let (content, is_error) = match result {
            Ok(content) => (content, false),
            Err(e) => (format!("error: {e}"), true),
        };
        ToolOutcome {
            content: cap_output(content, self.output_bytes),
            is_error,
        }
    }

    /// Runs `call` and wraps the outcome as the tool-result block that answers it.
    pub fn dispatch(&self, call: &ToolCall) -> ContentBlock {
        let outcome = self.call(&call.name, &call.input);
        ContentBlock::ToolResult {
            tool_use_id: call.id.clone(),
            content: outcome.content,
            is_error: outcome.is_error,
        }
    }
}

/// Cuts `text` to at most `cap` bytes (on a character boundary) and says so.
pub fn cap_output(mut text: String, cap: usize) -> String {
    if text.len() <= cap {
        return text;
    }
    let total = text.len();
    text.truncate(text.floor_char_boundary(cap));
    let shown = text.len();
    text.push_str(&format!(
        "\n[... output truncated: {shown} of {total} bytes shown]"
    ));
    text
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message")
}
