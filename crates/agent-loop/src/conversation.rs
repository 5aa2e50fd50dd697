//! Conversations on disk: one folder each, a transcript that survives crashes, and metadata.
//!
//! A conversation lives in `<workspace>/.merkle/conversations/<id>/`:
//! - `metadata.json`: [`Metadata`], rewritten atomically;
//! - `transcript.jsonl`: one llm-core [`Message`] per line, appended as the conversation
//!   grows and rewritten atomically only by compaction or a repair on load;
//! - `archive.jsonl`: every transcript that compaction replaced, kept whole.
//!
//! [`ConversationStore`] owns the in-memory copy of the messages; every change goes to disk
//! first and to memory once it is durable, so memory never holds what a crash would lose and
//! a crash mid-turn loses at most the message being written. Loading repairs what a crash can
//! leave (see [`crate::storage`]) and what an interrupted turn leaves: a tool call with no
//! result gets a placeholder result, because providers reject a request in which a call is
//! unanswered.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use llm_core::{Clock, ContentBlock, Message, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compaction::Ledger;
use crate::error::{Error, Result};
use crate::storage::{self, Damage};
use crate::time::{compact_utc, format_utc};

const METADATA: &str = "metadata.json";
const TRANSCRIPT: &str = "transcript.jsonl";
const ARCHIVE: &str = "archive.jsonl";

/// The text of the result given to a tool call that a crash or stop left unanswered.
pub const INTERRUPTED: &str =
    "interrupted: the agent stopped before this tool call returned; its effects are unknown";

/// Where a workspace keeps its conversations.
pub fn conversations_dir(workspace: &Path) -> PathBuf {
    workspace.join(".merkle").join("conversations")
}

/// What is known about a conversation besides its messages. Serialized as `metadata.json`;
/// fields this version does not know are kept in `extra` and written back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub id: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How many times compaction replaced the transcript.
    #[serde(default)]
    pub compaction_count: u32,
    /// blake3 of each identity file the system prompt was last built from, by file name.
    #[serde(default)]
    pub identity_hashes: BTreeMap<String, String>,
    /// Files read and modified and tool failures of every message compaction replaced, so
    /// the next compaction's ledger still lists them.
    #[serde(default)]
    pub ledger: Ledger,
    /// One entry per compaction, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<Compaction>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// What one compaction did: it replaced messages `0..dropped` of the transcript as it was then
/// (archived in `archive.jsonl` under `replaced_at` = `at`) by one summary message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// RFC 3339, UTC.
    pub at: String,
    /// How many of the oldest messages were replaced.
    pub dropped: usize,
    /// Their estimated tokens.
    pub dropped_tokens: u64,
    /// Whether the model's summary replaced them; `false`: the summarizer failed twice and
    /// they were dropped with a note (`note` says why).
    pub summarized: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What loading found and repaired; empty when the conversation was intact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Damage to the transcript file and how it was repaired.
    pub damage: Option<Damage>,
    /// Ids of tool calls that had no result and were given an [`INTERRUPTED`] one.
    pub interrupted: Vec<String>,
}

impl LoadReport {
    pub fn is_clean(&self) -> bool {
        self.damage.is_none() && self.interrupted.is_empty()
    }
}

/// One entry of [`list_conversations`]: a conversation folder and its metadata, or why the
/// metadata could not be read.
#[derive(Debug)]
pub struct Listed {
    pub id: String,
    pub metadata: Result<Metadata>,
}

/// Every conversation of `workspace`, oldest first (by creation time, then id). Folders with
/// a metadata file that cannot be read are listed with the error, not skipped.
pub fn list_conversations(workspace: &Path) -> Result<Vec<Listed>> {
    let root = conversations_dir(workspace);
    let entries = match fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&root, e)),
    };
    let mut listed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&root, e))?;
        let Some(id) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if validate_id(&id).is_err() || !entry.path().is_dir() {
            continue;
        }
        let metadata = storage::read_json(&entry.path().join(METADATA));
        listed.push(Listed { id, metadata });
    }
    listed.sort_by(|a, b| {
        let created = |l: &Listed| l.metadata.as_ref().map(|m| m.created_at.clone()).ok();
        created(a).cmp(&created(b)).then_with(|| a.id.cmp(&b.id))
    });
    Ok(listed)
}

/// One conversation: its folder, its metadata and its messages in memory.
pub struct ConversationStore {
    dir: PathBuf,
    metadata: Metadata,
    messages: Vec<Message>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ConversationStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationStore")
            .field("dir", &self.dir)
            .field("metadata", &self.metadata)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

impl ConversationStore {
    /// Opens conversation `id`, creating it (metadata and an empty transcript) if it does not
    /// exist. Safe to repeat after a crash in the middle of a creation.
    pub fn initialize(
        workspace: &Path,
        id: &str,
        clock: Arc<dyn Clock>,
    ) -> Result<(Self, LoadReport)> {
        validate_id(id)?;
        let dir = conversations_dir(workspace).join(id);
        fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Self::finish_creation(&dir, id, clock.as_ref())?;
        Self::load(workspace, id, clock)
    }

    /// Creates a conversation with a fresh id made from the clock's time
    /// (`20260205-143000`, then `20260205-143000-2` if that is taken).
    pub fn create(workspace: &Path, clock: Arc<dyn Clock>) -> Result<Self> {
        let root = conversations_dir(workspace);
        fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
        let stamp = compact_utc(clock.system_now());
        let mut n = 1u32;
        let id = loop {
            let id = if n == 1 {
                stamp.clone()
            } else {
                format!("{stamp}-{n}")
            };
            // Creating the folder claims the id, even against another process.
            match fs::create_dir(root.join(&id)) {
                Ok(()) => break id,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(Error::io(root.join(&id), e)),
            }
        };
        Self::finish_creation(&root.join(&id), &id, clock.as_ref())?;
        let (store, _clean) = Self::load(workspace, &id, clock)?;
        Ok(store)
    }

    /// Loads conversation `id` into memory, repairing a damaged transcript and unanswered tool
    /// calls; what was repaired is in the report. This is how a conversation is resumed.
    pub fn load(workspace: &Path, id: &str, clock: Arc<dyn Clock>) -> Result<(Self, LoadReport)> {
        validate_id(id)?;
        let dir = conversations_dir(workspace).join(id);
        let metadata: Metadata = match storage::read_json(&dir.join(METADATA)) {
            Ok(metadata) => metadata,
            Err(Error::NotFound { .. }) => {
                return Err(Error::NoSuchConversation {
                    id: id.to_owned(),
                    dir: conversations_dir(workspace),
                });
            }
            Err(e) => return Err(e),
        };
        let transcript = dir.join(TRANSCRIPT);
        let recovered = match storage::recover_jsonl::<Message>(&transcript) {
            Ok(recovered) => recovered,
            // Creation writes metadata first; the transcript may not have followed.
            Err(Error::NotFound { .. }) => storage::Jsonl {
                entries: Vec::new(),
                damage: None,
            },
            Err(e) => return Err(e),
        };
        let mut store = Self {
            dir,
            metadata,
            messages: recovered.entries,
            clock,
        };
        let interrupted = store.answer_interrupted_calls()?;
        Ok((
            store,
            LoadReport {
                damage: recovered.damage,
                interrupted,
            },
        ))
    }

    pub fn id(&self) -> &str {
        &self.metadata.id
    }

    /// The conversation's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The messages, from memory.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Appends `message` to the transcript on disk and, once that is durable, in memory.
    pub fn append_message(&mut self, message: Message) -> Result<()> {
        // A torn tail can only be left by an append of ours that failed, and that failure
        // was reported then; cutting it off is the repair.
        storage::append_jsonl(&self.dir.join(TRANSCRIPT), &message)?;
        self.messages.push(message);
        Ok(())
    }

    /// Replaces the whole transcript with `messages` (compaction's summary and what it kept),
    /// atomically. The replaced messages are first appended to `archive.jsonl`, so nothing a
    /// compaction drops is lost.
    pub fn replace_transcript(&mut self, messages: Vec<Message>) -> Result<()> {
        let replaced_at = format_utc(self.clock.system_now());
        let archived: Vec<Archived<'_>> = self
            .messages
            .iter()
            .enumerate()
            .map(|(index, message)| Archived {
                replaced_at: &replaced_at,
                index,
                message,
            })
            .collect();
        storage::append_jsonl_all(&self.dir.join(ARCHIVE), &archived)?;
        storage::write_jsonl(&self.dir.join(TRANSCRIPT), &messages)?;
        self.messages = messages;
        Ok(())
    }

    /// Changes the metadata with `update` and writes it atomically; memory changes only if
    /// the write succeeds.
    pub fn update_metadata(&mut self, update: impl FnOnce(&mut Metadata)) -> Result<()> {
        let mut metadata = self.metadata.clone();
        update(&mut metadata);
        // The id names the folder; it is not the caller's to change.
        metadata.id.clone_from(&self.metadata.id);
        storage::write_json(&self.dir.join(METADATA), &metadata)?;
        self.metadata = metadata;
        Ok(())
    }

    /// Writes whichever of metadata and transcript a folder lacks.
    fn finish_creation(dir: &Path, id: &str, clock: &dyn Clock) -> Result<()> {
        let metadata = dir.join(METADATA);
        if !metadata.exists() {
            storage::write_json(
                &metadata,
                &Metadata {
                    id: id.to_owned(),
                    created_at: format_utc(clock.system_now()),
                    title: None,
                    agent: None,
                    model: None,
                    compaction_count: 0,
                    identity_hashes: BTreeMap::new(),
                    ledger: Ledger::default(),
                    compactions: Vec::new(),
                    extra: BTreeMap::new(),
                },
            )?;
        }
        let transcript = dir.join(TRANSCRIPT);
        if !transcript.exists() {
            storage::write_jsonl::<Message>(&transcript, &[])?;
        }
        Ok(())
    }

    /// Gives every tool call that the next message does not answer an [`INTERRUPTED`] result
    /// in that next message, so the conversation is a valid request again. Returns the ids.
    /// Loading does this; so does the turn loop before a turn, after a turn was abandoned.
    ///
    /// The usual case, a crash after the model asked for tools, is repaired by one append;
    /// anything else (results missing before later messages) by an atomic rewrite.
    pub fn answer_interrupted_calls(&mut self) -> Result<Vec<String>> {
        let mut interrupted = Vec::new();
        let mut rewrite = false;
        let mut index = 0;
        while index < self.messages.len() {
            let unanswered = unanswered_calls(&self.messages, index);
            if unanswered.is_empty() {
                index += 1;
                continue;
            }
            let placeholders = unanswered.iter().map(|id| ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: INTERRUPTED.to_owned(),
                is_error: true,
            });
            match self.messages.get_mut(index + 1) {
                None => {
                    let answer = Message {
                        role: Role::User,
                        content: placeholders.collect(),
                    };
                    storage::append_jsonl(&self.dir.join(TRANSCRIPT), &answer)?;
                    self.messages.push(answer);
                }
                // Providers want tool results first in the message that follows the call.
                Some(next) if next.role == Role::User => {
                    next.content.splice(0..0, placeholders);
                    rewrite = true;
                }
                Some(_) => {
                    let answer = Message {
                        role: Role::User,
                        content: placeholders.collect(),
                    };
                    self.messages.insert(index + 1, answer);
                    rewrite = true;
                }
            }
            interrupted.extend(unanswered);
            index += 1;
        }
        if rewrite {
            storage::write_jsonl(&self.dir.join(TRANSCRIPT), &self.messages)?;
        }
        Ok(interrupted)
    }
}

/// Ids of the tool calls of `messages[index]` that `messages[index + 1]` does not answer.
fn unanswered_calls(messages: &[Message], index: usize) -> Vec<String> {
    let message = &messages[index];
    if message.role != Role::Assistant {
        return Vec::new();
    }
    let next: &[ContentBlock] = match messages.get(index + 1) {
        Some(next) if next.role == Role::User => &next.content,
        _ => &[],
    };
    // This runs over every message on load and before every turn, and a message makes few
    // calls: scanning the answer's blocks for each call is cheaper than building a set.
    let answered = |id: &str| {
        next.iter().any(|block| {
            matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id)
        })
    };
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse(call) if !answered(&call.id) => Some(call.id.clone()),
            _ => None,
        })
        .collect()
}

/// One line of `archive.jsonl`: a message that a transcript replacement removed.
#[derive(Serialize)]
struct Archived<'a> {
    replaced_at: &'a str,
    /// The message's position in the replaced transcript.
    index: usize,
    message: &'a Message,
}

/// Ids name folders: letters, digits, `-`, `_` and `.`, not starting with `.`, so an id can
/// never name a folder outside the conversations folder.
pub fn validate_id(id: &str) -> Result<()> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > 128 {
        Some("it is longer than 128 bytes")
    } else if id.starts_with('.') {
        Some("it starts with '.'")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Some("use only letters, digits, '-', '_' and '.'")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidConversationId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}
