//! The system prompt: the agent's identity files, the tools, and the runtime facts, assembled
//! so that the same inputs give the same bytes.
//!
//! Identity files live in the agent's home folder: [`IDENTITY_FILES`], in that order. A missing
//! file leaves a marker in its place; a file over [`PromptLimits::per_file_bytes`], or past
//! [`PromptLimits::total_bytes`] for all files together, is truncated with a visible marker
//! and a warning. Each file's blake3 hash (of the whole file, before any truncation) is
//! recorded so the conversation's metadata can say which versions a turn saw.
//!
//! Byte stability matters because providers cache prompt prefixes: the stable parts come first
//! and the volatile one, the time, comes last. The time is given by the caller as text, so
//! its precision is the caller's choice; everything after the system prompt (the messages)
//! loses its cache when the prompt changes, so a coarse time (the date) caches best.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use llm_core::Tool;

/// The identity files, in the order the prompt shows them.
pub const IDENTITY_FILES: [&str; 6] = [
    "SOUL.md",
    "IDENTITY.md",
    "USER.md",
    "MEMORY.md",
    "AGENTS.md",
    "TOOLS.md",
];

/// Size caps for identity files, in bytes of UTF-8 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLimits {
    pub per_file_bytes: usize,
    pub total_bytes: usize,
}

impl Default for PromptLimits {
    fn default() -> Self {
        Self {
            per_file_bytes: 20_000,
            total_bytes: 60_000,
        }
    }
}

/// The identity files as loaded: what the prompt shows of each, and what went wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityFiles {
    /// One entry per name in [`IDENTITY_FILES`], in that order.
    pub files: Vec<IdentityFile>,
    /// For the user: truncations and unreadable files.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityFile {
    pub name: &'static str,
    pub content: IdentityContent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityContent {
    Missing,
    /// The file exists but could not be read; the reason is shown in the prompt.
    Unreadable(String),
    Present {
        /// What the prompt shows: the file, or its first `text.len()` bytes if `truncated`.
        text: String,
        /// The file's size in bytes.
        size: u64,
        /// blake3 of the whole file, hex.
        hash: String,
        truncated: bool,
    },
}

impl IdentityFiles {
    /// blake3 hashes of the files that exist, by name, for the conversation metadata.
    pub fn hashes(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .filter_map(|file| match &file.content {
                IdentityContent::Present { hash, .. } => Some((file.name.to_owned(), hash.clone())),
                _ => None,
            })
            .collect()
    }
}

/// Reads the identity files from `home`, applying `limits` in [`IDENTITY_FILES`] order: a
/// file earlier in the list keeps its text before a later one.
pub fn load_identity_files(home: &Path, limits: &PromptLimits) -> IdentityFiles {
    let mut loaded = IdentityFiles::default();
    let mut room = limits.total_bytes;
    for name in IDENTITY_FILES {
        let path = home.join(name);
        let content = match fs::read(&path) {
            Ok(bytes) => {
                let size = bytes.len() as u64;
                let hash = blake3::hash(&bytes).to_hex().to_string();
                let mut text = match String::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(e) => {
                        loaded.warnings.push(format!(
                            "{} is not valid UTF-8; invalid bytes are shown as U+FFFD",
                            path.display()
                        ));
                        String::from_utf8_lossy(e.as_bytes()).into_owned()
                    }
                };
                let cap = limits.per_file_bytes.min(room);
                let truncated = text.len() > cap;
                if truncated {
                    text.truncate(text.floor_char_boundary(cap));
                    let why = if cap == limits.per_file_bytes {
                        format!("the {}-byte limit for one identity file", cap)
                    } else {
                        format!(
                            "what remained of the {}-byte limit for all identity files",
                            limits.total_bytes
                        )
                    };
                    loaded.warnings.push(format!(
                        "{} is {size} bytes, over {why}; the prompt shows its first {} bytes",
                        path.display(),
                        text.len()
                    ));
                }
                room -= text.len();
                IdentityContent::Present {
                    text,
                    size,
                    hash,
                    truncated,
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => IdentityContent::Missing,
            Err(e) => {
                loaded
                    .warnings
                    .push(format!("cannot read {}: {e}", path.display()));
                IdentityContent::Unreadable(e.kind().to_string())
            }
        };
        loaded.files.push(IdentityFile { name, content });
    }
    loaded
}

/// Facts about the run that the model should know. `current_time` is volatile and goes last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeInfo {
    /// The workspace the tools act on, as the user would write it.
    pub workspace: String,
    pub current_time: String,
}

/// Assembles the system prompt: identity files, then the tools, then the workspace, then the
/// time. Pure: the same inputs give the same bytes.
pub fn build_system_prompt(
    identity: &IdentityFiles,
    tools: &[Tool],
    runtime: &RuntimeInfo,
) -> String {
    let mut prompt = String::new();
    for file in &identity.files {
        let _ = write!(prompt, "# {}\n\n", file.name);
        match &file.content {
            IdentityContent::Missing => {
                let _ = writeln!(
                    prompt,
                    "[{} is missing from the agent's home folder]",
                    file.name
                );
            }
            IdentityContent::Unreadable(reason) => {
                let _ = writeln!(prompt, "[{} could not be read: {reason}]", file.name);
            }
            IdentityContent::Present {
                text,
                size,
                truncated,
                ..
            } => {
                if *size == 0 {
                    let _ = writeln!(prompt, "[{} is empty]", file.name);
                }
                prompt.push_str(text);
                if !text.is_empty() && !text.ends_with('\n') {
                    prompt.push('\n');
                }
                if *truncated {
                    let _ = writeln!(
                        prompt,
                        "[... {} truncated: {} of {size} bytes shown]",
                        file.name,
                        text.len()
                    );
                }
            }
        }
        prompt.push('\n');
    }
    prompt.push_str("# Tools\n\n");
    if tools.is_empty() {
        prompt.push_str("No tools are available.\n");
    }
    for tool in tools {
        let _ = writeln!(prompt, "- {}: {}", tool.name, tool.description);
    }
    let _ = write!(
        prompt,
        "\n# Workspace\n\n{}\n\n# Current time\n\n{}\n",
        runtime.workspace, runtime.current_time
    );
    prompt
}
