//! The built-in tools: read_file, write_file, edit_file, list_dir, search and run_command.
//!
//! File tools go through [`Workspace`], so they cannot reach outside it or change `.git` and
//! `.merkle`. Inputs arrive checked against each tool's schema; the field readers here still
//! return errors rather than assume, since a handler may be called directly.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::tools::command;
use crate::tools::search::{self, Query, SearchLimits, looks_binary};
use crate::tools::workspace::{EntryKind, Workspace};
use crate::tools::{ToolConfig, ToolDefinition};

/// The built-in tools acting on `workspace` within `config`'s limits.
pub fn builtin_tools(workspace: &Arc<Workspace>, config: &ToolConfig) -> Vec<ToolDefinition> {
    let config = *config;
    vec![
        read_file_tool(workspace, config),
        write_file_tool(workspace),
        edit_file_tool(workspace, config),
        list_dir_tool(workspace, config),
        search_tool(workspace, config),
        run_command_tool(workspace, config),
    ]
}

/// The read_file tool: a text file, whole or some of its lines.
fn read_file_tool(workspace: &Arc<Workspace>, config: ToolConfig) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "read_file",
        "Read a text file of the workspace. Optional offset (first line, from 1) and limit \
         (number of lines) read part of a long file.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace root"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
        move |input| read_file(&ws, input, &config),
    )
}

/// The write_file tool: creates or replaces a file.
fn write_file_tool(workspace: &Arc<Workspace>) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "write_file",
        "Create or replace a file of the workspace with the given content; missing folders \
         are created. .git and .merkle cannot be written.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
            },
            "required": ["path", "content"],
            "additionalProperties": false,
        }),
        move |input| {
            let path = str_field(input, "write_file", "path")?;
            let content = str_field(input, "write_file", "content")?;
            let written = ws.write(path, content.as_bytes())?;
            Ok(format!("wrote {} bytes to {written}", content.len()))
        },
    )
    .changing()
}

/// The edit_file tool: replaces one exact occurrence of a string in a file.
fn edit_file_tool(workspace: &Arc<Workspace>, config: ToolConfig) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "edit_file",
        "Replace one exact occurrence of old_string in a file with new_string. old_string \
         must occur exactly once: include enough surrounding text to make it unique.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false,
        }),
        move |input| edit_file(&ws, input, &config),
    )
    .changing()
}

/// The list_dir tool: a folder's entries.
fn list_dir_tool(workspace: &Arc<Workspace>, config: ToolConfig) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "list_dir",
        "List a folder of the workspace (default: its root). Folders end in /, symbolic \
         links in @.",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "additionalProperties": false,
        }),
        move |input| list_dir(&ws, input, &config),
    )
}

/// The search tool: the lines of the workspace's files that match a regular expression.
fn search_tool(workspace: &Arc<Workspace>, config: ToolConfig) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "search",
        "Search the workspace's files for a regular expression (Rust regex syntax), \
         skipping what .gitignore excludes. Prints path:line: text for each matching line.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "Folder or file to search; default the root"},
                "ignore_case": {"type": "boolean"},
            },
            "required": ["pattern"],
            "additionalProperties": false,
        }),
        move |input| {
            let pattern = str_field(input, "search", "pattern")?;
            let path = optional_str(input, "path").unwrap_or(".");
            let ignore_case = input
                .get("ignore_case")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let limits = SearchLimits {
                max_matches: config.search_matches,
                max_file_bytes: config.read_bytes,
                max_line_bytes: 300,
            };
            let query = Query {
                pattern,
                path,
                ignore_case,
            };
            search::search(&ws, &query, &limits)
        },
    )
}

/// The run_command tool: a shell command in the workspace root, killed after a timeout.
fn run_command_tool(workspace: &Arc<Workspace>, config: ToolConfig) -> ToolDefinition {
    let ws = Arc::clone(workspace);
    ToolDefinition::new(
        "run_command",
        "Run a shell command (sh -c) in the workspace root, without input. Prints the exit \
         code, stdout and stderr. Killed after timeout_secs (default and maximum set by the \
         user).",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout_secs": {"type": "integer", "minimum": 1},
            },
            "required": ["command"],
            "additionalProperties": false,
        }),
        move |input| run_command(&ws, input, &config),
    )
    .changing()
}

/// Runs the run_command tool's command; one that runs out of time is an error that still
/// holds its output.
fn run_command(ws: &Workspace, input: &Value, config: &ToolConfig) -> Result<String> {
    let command = str_field(input, "run_command", "command")?;
    let timeout = input
        .get("timeout_secs")
        .and_then(Value::as_f64)
        .map_or(config.command_timeout, |secs| {
            Duration::from_secs_f64(secs.max(1.0).min(u32::MAX.into()))
        })
        .min(config.max_command_timeout);
    // Both streams and the framing must fit the registry's cap, which would cut the
    // end (where errors usually are) that the streams keep.
    let stream_cap = config.output_bytes.saturating_sub(200) / 2;
    let output = command::run(command, ws.root(), timeout, stream_cap)?;
    if output.timed_out {
        return Err(Error::CommandTimedOut {
            command: command.to_owned(),
            limit: timeout,
            output: output.render(),
        });
    }
    Ok(output.render())
}

fn read_file(ws: &Workspace, input: &Value, config: &ToolConfig) -> Result<String> {
    let path = str_field(input, "read_file", "path")?;
    let text = read_text(ws, path, config)?;
    let offset = input.get("offset").and_then(Value::as_u64);
    let limit = input.get("limit").and_then(Value::as_u64);
    if offset.is_none() && limit.is_none() {
        return Ok(text);
    }
    let total = text.lines().count();
    let first = offset.unwrap_or(1).max(1) as usize;
    let count = limit.map_or(usize::MAX, |l| l as usize);
    let mut out: String = text
        .lines()
        .skip(first - 1)
        .take(count)
        .flat_map(|line| [line, "\n"])
        .collect();
    let last = (first - 1).saturating_add(count).min(total);
    if first > total {
        let lines = if total == 1 { "line" } else { "lines" };
        out.push_str(&format!("[{path} has only {total} {lines}]\n"));
    } else if first > 1 || last < total {
        out.push_str(&format!("[lines {first}-{last} of {total}]\n"));
    }
    Ok(out)
}

fn edit_file(ws: &Workspace, input: &Value, config: &ToolConfig) -> Result<String> {
    let path = str_field(input, "edit_file", "path")?;
    let old = str_field(input, "edit_file", "old_string")?;
    let new = str_field(input, "edit_file", "new_string")?;
    if old.is_empty() {
        return Err(Error::InvalidInput {
            tool: "edit_file".into(),
            reason: "old_string is empty; use write_file to create a file".into(),
        });
    }
    let text = read_text(ws, path, config)?;
    // Overlapping occurrences count: replacing one of two overlapping matches is ambiguous.
    let mut positions = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(old) {
        positions.push(from + found);
        from += found
            + text[from + found..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
    }
    match positions[..] {
        [] => Err(Error::NoMatch { path: path.into() }),
        [at] => {
            let mut edited = String::with_capacity(text.len() - old.len() + new.len());
            edited.push_str(&text[..at]);
            edited.push_str(new);
            edited.push_str(&text[at + old.len()..]);
            let written = ws.write(path, edited.as_bytes())?;
            let line = text[..at].matches('\n').count() + 1;
            Ok(format!("edited {written} at line {line}"))
        }
        _ => Err(Error::AmbiguousMatch {
            path: path.into(),
            count: positions.len(),
        }),
    }
}

fn list_dir(ws: &Workspace, input: &Value, config: &ToolConfig) -> Result<String> {
    let path = optional_str(input, "path").unwrap_or(".");
    let (_, entries) = ws.list(path)?;
    if entries.is_empty() {
        return Ok("(empty folder)\n".to_owned());
    }
    let mut out = String::new();
    for entry in entries.iter().take(config.list_entries) {
        out.push_str(&entry.name);
        out.push_str(match entry.kind {
            EntryKind::Dir => "/",
            EntryKind::Symlink => "@",
            EntryKind::File | EntryKind::Other => "",
        });
        out.push('\n');
    }
    if entries.len() > config.list_entries {
        let more = entries.len() - config.list_entries;
        out.push_str(&format!(
            "[... {more} more {} not shown]\n",
            if more == 1 { "entry" } else { "entries" }
        ));
    }
    Ok(out)
}

/// A workspace file as text; binary files are refused and invalid UTF-8 replaced.
fn read_text(ws: &Workspace, path: &str, config: &ToolConfig) -> Result<String> {
    let bytes = ws.read(path, config.read_bytes)?;
    if looks_binary(&bytes) {
        return Err(Error::NotText { path: path.into() });
    }
    String::from_utf8(bytes).map_err(|_| Error::NotText { path: path.into() })
}

pub(crate) fn str_field<'a>(input: &'a Value, tool: &str, field: &str) -> Result<&'a str> {
    input
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::InvalidInput {
            tool: tool.to_owned(),
            reason: format!("the string field {field:?} is required"),
        })
}

pub(crate) fn optional_str<'a>(input: &'a Value, field: &str) -> Option<&'a str> {
    input.get(field).and_then(Value::as_str)
}
