//! `report`'s data: the state of the context (counts, stale frames) and what changed since a
//! root hash or a git revision, as one JSON document; front ends render it (the CLI as Markdown).
//!
//! A root hash names any tree a scan recorded (node records are never deleted). A git revision
//! is hashed from git's objects (`git ls-tree` and `git cat-file --batch`) with merkle-store's
//! own NodeID functions, so it needs no scan and no checkout; it holds git's tracked files only,
//! so untracked files of the workspace show as added.
//!
//! This is the one place where context runs a program: git, in the store's workspace. Reading
//! git's objects through git itself keeps the workspace free of a git library, and a report is
//! the one operation that asks about a tree the store never scanned.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use merkle_store::{FrameId, NodeId, NodeKind, PathTree, Store, TreeDiff, TreeNode, diff_trees};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::regenerate::{Stale, stale_frames};

/// What `report` answers.
#[derive(Clone, Debug)]
pub struct Report {
    /// The tree of the last scan.
    pub root: NodeId,
    /// Its files (symlinks included) and directories.
    pub files: usize,
    pub dirs: usize,
    /// Frames in the store.
    pub frames: u64,
    pub stale: Vec<Stale>,
    /// What changed since the tree the request named, if it named one.
    pub since: Option<Since>,
}

/// The changes from an earlier tree to the current one.
#[derive(Clone, Debug)]
pub struct Since {
    /// The root hash or git revision as given.
    pub given: String,
    /// The earlier tree's root NodeID, in hex.
    pub root: String,
    pub diff: TreeDiff,
    /// The head frames of the added and changed nodes.
    pub frames_added: Vec<AddedFrame>,
}

/// A head frame on an added or changed node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedFrame {
    pub path: String,
    pub frame_type: String,
    pub agent_id: String,
    pub frame_id: FrameId,
}

impl Report {
    /// Its one JSON shape: `root`, `files`, `dirs`, `frames`, [`super::stale_json`]'s fields,
    /// and `since` (`given`, `root`, `added`, `removed`, `changed`, `frames_added`) when asked.
    pub fn json(&self) -> Value {
        let mut document = json!({
            "root": self.root.to_hex(),
            "files": self.files,
            "dirs": self.dirs,
            "frames": self.frames,
        });
        if let (Some(doc), Value::Object(stale)) =
            (document.as_object_mut(), super::stale_json(&self.stale))
        {
            doc.extend(stale);
        }
        if let Some(since) = &self.since {
            let paths = |nodes: &mut dyn Iterator<Item = &TreeNode>| -> Vec<Value> {
                nodes
                    .map(|n| json!({"path": n.path, "kind": n.kind.as_str()}))
                    .collect()
            };
            let diff = &since.diff;
            document["since"] = json!({
                "given": since.given,
                "root": since.root,
                "added": paths(&mut diff.added.iter()),
                "removed": paths(&mut diff.removed.iter()),
                "changed": paths(&mut diff.changed.iter().map(|(_, n)| n)),
                "frames_added": since.frames_added.iter().map(|f| json!({
                    "path": f.path, "frame_type": f.frame_type, "agent_id": f.agent_id,
                    "frame_id": f.frame_id.to_hex(),
                })).collect::<Vec<_>>(),
            });
        }
        document
    }
}

/// The report of the store's last scan; with `since` (a root hash, or a unique prefix of 8+
/// hex digits, from an earlier scan, or a git revision), what changed from that tree to it.
pub fn report(store: &Store, since: Option<&str>) -> Result<Report> {
    let root = store.root()?.ok_or(merkle_store::Error::NotScanned)?;
    let current = store.tree_at(&root)?;
    let files = current.values().filter(|n| n.kind.is_leaf()).count();
    let (_, frames) = store.counts()?;
    let stale = stale_frames(store)?;
    let since = match since {
        Some(given) => {
            let (old_root, old) = since_tree(store, given)?;
            let diff = diff_trees(&old, &current);
            let mut frames_added = Vec::new();
            for n in diff.added.iter().chain(diff.changed.iter().map(|(_, n)| n)) {
                for f in store.heads(&n.node_id)? {
                    frames_added.push(AddedFrame {
                        path: n.path.clone(),
                        frame_type: f.frame_type,
                        agent_id: f.agent_id,
                        frame_id: f.frame_id,
                    });
                }
            }
            Some(Since {
                given: given.to_owned(),
                root: old_root,
                diff,
                frames_added,
            })
        }
        None => None,
    };
    Ok(Report {
        root,
        files,
        dirs: current.len() - files,
        frames,
        stale,
        since,
    })
}

/// The tree `since` names, and its root hash.
fn since_tree(store: &Store, since: &str) -> Result<(String, PathTree)> {
    if merkle_store::is_id_prefix(since)
        && let Ok(node) = store.resolve_prefix(since)
        && node.path.is_empty()
    {
        return Ok((node.node_id.to_hex(), store.tree_at(&node.node_id)?));
    }
    let tree = git_tree(store.workspace(), since)?;
    let root_id = tree
        .get("")
        .map(|n| n.node_id.to_hex())
        .ok_or_else(|| git("the revision's tree has no root"))?;
    Ok((root_id, tree))
}

/// An error of git or of reading its answer.
fn git(message: impl Into<String>) -> Error {
    Error::Git {
        message: message.into(),
        source: None,
    }
}

/// An I/O error on git's pipes, worded as the error itself, as `merkle report` has always
/// printed it.
fn pipe(e: std::io::Error) -> Error {
    git(e.to_string())
}

/// The tree of git revision `rev` below the workspace root, hashed as a scan would hash it.
fn git_tree(workspace: &Path, rev: &str) -> Result<PathTree> {
    let listed = Command::new("git")
        .args(["ls-tree", "-r", "-z", rev])
        .current_dir(workspace)
        .output()
        .map_err(|source| Error::Git {
            message: "running git ls-tree (is git installed?)".to_owned(),
            source: Some(source),
        })?;
    if !listed.status.success() {
        return Err(git(format!(
            "{rev:?} is neither a root hash of this store nor a git revision: {}",
            String::from_utf8_lossy(&listed.stderr).trim()
        )));
    }
    // "<mode> SP <type> SP <object> TAB <path>" NUL-terminated; submodules (commits) are skipped.
    let mut leaves: Vec<(String, NodeKind, String)> = Vec::new();
    for entry in listed.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = std::str::from_utf8(entry).map_err(|_| git("git printed a non-UTF-8 path"))?;
        let (meta, path) = entry
            .split_once('\t')
            .ok_or_else(|| git("unexpected git ls-tree line"))?;
        let mut fields = meta.split(' ');
        let (mode, kind, object) = (fields.next(), fields.next(), fields.next());
        match (mode, kind, object) {
            // Scans never enter the store folder, so its tracked files (a committed
            // views.yaml) are not part of the tree either.
            _ if path == ".merkle" || path.starts_with(".merkle/") => {}
            (Some("120000"), Some("blob"), Some(id)) => {
                leaves.push((path.to_owned(), NodeKind::Symlink, id.to_owned()));
            }
            (Some(_), Some("blob"), Some(id)) => {
                leaves.push((path.to_owned(), NodeKind::File, id.to_owned()));
            }
            _ => {}
        }
    }
    let hashes = blob_hashes(workspace, leaves.iter().map(|(_, _, id)| id.as_str()))?;
    Ok(merkle_store::tree_of_leaves(
        leaves
            .into_iter()
            .zip(hashes)
            .map(|((path, kind, _), hash)| (path, kind, hash))
            .collect(),
    ))
}

/// The content hashes of git blobs, in the order given, through one `git cat-file --batch`;
/// each blob is hashed as it streams by, so memory stays at one read buffer.
fn blob_hashes<'a>(
    workspace: &Path,
    ids: impl Iterator<Item = &'a str>,
) -> Result<Vec<merkle_store::Hash>> {
    let ids: Vec<&str> = ids.collect();
    let mut child = Command::new("git")
        .args(["cat-file", "--batch"])
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|source| Error::Git {
            message: "running git cat-file".to_owned(),
            source: Some(source),
        })?;
    let mut stdin = child.stdin.take().ok_or_else(|| git("git's stdin"))?;
    let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // Written from another thread: git answers as it reads, and both pipes must keep moving.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().ok_or_else(|| git("git's stdout"))?);
    let mut contents = Vec::with_capacity(ids.len());
    for id in &ids {
        let mut header = String::new();
        out.read_line(&mut header).map_err(pipe)?;
        let size: usize = header
            .split(' ')
            .nth(2)
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                git(format!(
                    "git cat-file could not read {id}: {}",
                    header.trim()
                ))
            })?;
        let mut hasher = blake3::Hasher::new();
        let copied = std::io::copy(&mut (&mut out).take(size as u64), &mut hasher).map_err(pipe)?;
        if copied != size as u64 {
            return Err(git(format!("git cat-file ended in the middle of {id}")));
        }
        let mut newline = [0u8; 1];
        out.read_exact(&mut newline).map_err(pipe)?;
        contents.push(merkle_store::Hash(*hasher.finalize().as_bytes()));
    }
    writer
        .join()
        .map_err(|_| git("writing to git cat-file panicked"))?
        .map_err(pipe)?;
    child.wait().map_err(pipe)?;
    Ok(contents)
}
