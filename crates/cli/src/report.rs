//! `merkle report`: the state of the context for CI, and what changed since a root hash or a git
//! revision, as Markdown (for a pull request comment) or JSON.
//!
//! A root hash names any tree a scan recorded (node records are never deleted). A git revision
//! is hashed here from git's objects (`git ls-tree` and `git cat-file --batch`) with merkle's
//! own NodeID functions, so it needs no scan and no checkout; it holds git's tracked files only,
//! so untracked files of the workspace show as added.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use clap::Args;
use merkle_store::{NodeKind, PathTree, Store, TreeNode, diff_trees};
use serde_json::{Value, json};

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Compare with this tree: a root hash (or a unique prefix of 8+ hex digits) from an earlier
    /// scan, or a git revision (HEAD~1, main, a commit)
    #[arg(long, value_name = "REV_OR_ROOT_HASH")]
    since: Option<String>,
    /// Markdown for people and pull requests, or JSON (as --json)
    #[arg(long, value_parser = ["md", "json"], default_value = "md")]
    format: String,
}

/// Lines of each list the Markdown shows; JSON has them all.
const MD_LIMIT: usize = 100;

pub(crate) fn report(store: &Store, root: &Path, args: &ReportArgs, json_flag: bool) -> Result<()> {
    let root_id = store.root()?.ok_or(merkle_store::Error::NotScanned)?;
    let current = store.tree_at(&root_id)?;
    let files = current.values().filter(|n| n.kind.is_leaf()).count();
    let dirs = current.len() - files;
    let (_, frames) = store.counts()?;
    let stale = context::stale_frames(store)?;
    let mut document = json!({
        "root": root_id.to_hex(),
        "files": files,
        "dirs": dirs,
        "frames": frames,
    });
    if let (Some(doc), Value::Object(stale)) =
        (document.as_object_mut(), context::ops::stale_json(&stale))
    {
        doc.extend(stale);
    }
    if let Some(since) = &args.since {
        let (old_root, old) = since_tree(store, root, since)?;
        let diff = diff_trees(&old, &current);
        let mut frames_added = Vec::new();
        for n in diff.added.iter().chain(diff.changed.iter().map(|(_, n)| n)) {
            for f in store.heads(&n.node_id)? {
                frames_added.push(json!({
                    "path": n.path, "frame_type": f.frame_type, "agent_id": f.agent_id,
                    "frame_id": f.frame_id.to_hex(),
                }));
            }
        }
        let paths = |nodes: &mut dyn Iterator<Item = &TreeNode>| -> Vec<Value> {
            nodes
                .map(|n| json!({"path": n.path, "kind": n.kind.as_str()}))
                .collect()
        };
        document["since"] = json!({
            "given": since,
            "root": old_root,
            "added": paths(&mut diff.added.iter()),
            "removed": paths(&mut diff.removed.iter()),
            "changed": paths(&mut diff.changed.iter().map(|(_, n)| n)),
            "frames_added": frames_added,
        });
    }
    let mut stdout = std::io::stdout().lock();
    if json_flag || args.format == "json" {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&document).context("printing the report")?
        )?;
    } else {
        write!(stdout, "{}", markdown(&document))?;
    }
    Ok(())
}

/// The tree `since` names, and its root hash.
fn since_tree(store: &Store, root: &Path, since: &str) -> Result<(String, PathTree)> {
    if merkle_store::is_id_prefix(since)
        && let Ok(node) = store.resolve_prefix(since)
        && node.path.is_empty()
    {
        return Ok((node.node_id.to_hex(), store.tree_at(&node.node_id)?));
    }
    let tree = git_tree(root, since)?;
    let root_id = tree
        .get("")
        .map(|n| n.node_id.to_hex())
        .context("the revision's tree has no root")?;
    Ok((root_id, tree))
}

/// The tree of git revision `rev` below the workspace root, hashed as a scan would hash it.
fn git_tree(root: &Path, rev: &str) -> Result<PathTree> {
    let listed = Command::new("git")
        .args(["ls-tree", "-r", "-z", rev])
        .current_dir(root)
        .output()
        .context("running git ls-tree (is git installed?)")?;
    if !listed.status.success() {
        bail!(
            "{rev:?} is neither a root hash of this store nor a git revision: {}",
            String::from_utf8_lossy(&listed.stderr).trim()
        );
    }
    // "<mode> SP <type> SP <object> TAB <path>" NUL-terminated; submodules (commits) are skipped.
    let mut leaves: Vec<(String, NodeKind, String)> = Vec::new();
    for entry in listed.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = std::str::from_utf8(entry).context("git printed a non-UTF-8 path")?;
        let (meta, path) = entry
            .split_once('\t')
            .context("unexpected git ls-tree line")?;
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
    let hashes = blob_hashes(root, leaves.iter().map(|(_, _, id)| id.as_str()))?;
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
    root: &Path,
    ids: impl Iterator<Item = &'a str>,
) -> Result<Vec<merkle_store::Hash>> {
    let ids: Vec<&str> = ids.collect();
    let mut child = Command::new("git")
        .args(["cat-file", "--batch"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running git cat-file")?;
    let mut stdin = child.stdin.take().context("git's stdin")?;
    let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // Written from another thread: git answers as it reads, and both pipes must keep moving.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().context("git's stdout")?);
    let mut contents = Vec::with_capacity(ids.len());
    for id in &ids {
        let mut header = String::new();
        out.read_line(&mut header)?;
        let size: usize = header
            .split(' ')
            .nth(2)
            .and_then(|s| s.trim().parse().ok())
            .with_context(|| format!("git cat-file could not read {id}: {}", header.trim()))?;
        let mut hasher = blake3::Hasher::new();
        let copied = std::io::copy(&mut (&mut out).take(size as u64), &mut hasher)?;
        if copied != size as u64 {
            bail!("git cat-file ended in the middle of {id}");
        }
        let mut newline = [0u8; 1];
        out.read_exact(&mut newline)?;
        contents.push(merkle_store::Hash(*hasher.finalize().as_bytes()));
    }
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writing to git cat-file panicked"))??;
    child.wait()?;
    Ok(contents)
}

fn markdown(d: &Value) -> String {
    let mut md = String::from("# merkle report\n\n");
    md.push_str(&format!(
        "- root: `{}`\n- files: {}, directories: {}, frames: {}\n",
        d["root"].as_str().unwrap_or_default(),
        d["files"],
        d["dirs"],
        d["frames"]
    ));
    let stale = d["stale"].as_object().cloned().unwrap_or_default();
    if stale.is_empty() {
        md.push_str("- stale frames: none\n");
    } else {
        md.push_str("\n## Stale frames\n\n| type | stale |\n|---|---|\n");
        for (ty, n) in &stale {
            md.push_str(&format!("| {ty} | {n} |\n"));
        }
    }
    if let Some(since) = d.get("since") {
        md.push_str(&format!(
            "\n## Since {} (`{}`)\n",
            since["given"].as_str().unwrap_or_default(),
            since["root"].as_str().unwrap_or_default()
        ));
        for key in ["added", "removed", "changed"] {
            let items = since[key].as_array().cloned().unwrap_or_default();
            md.push_str(&format!("\n### {} ({})\n\n", capitalize(key), items.len()));
            if items.is_empty() {
                md.push_str("none\n");
            }
            for item in items.iter().take(MD_LIMIT) {
                let slash = if item["kind"] == "dir" { "/" } else { "" };
                let path = item["path"].as_str().unwrap_or_default();
                md.push_str(&format!(
                    "- `{}{slash}`\n",
                    if path.is_empty() { "." } else { path }
                ));
            }
            if items.len() > MD_LIMIT {
                md.push_str(&format!("- ... and {} more\n", items.len() - MD_LIMIT));
            }
        }
        let frames = since["frames_added"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        md.push_str(&format!(
            "\n### Frames on added or changed nodes ({})\n\n",
            frames.len()
        ));
        if frames.is_empty() {
            md.push_str("none\n");
        } else {
            md.push_str("| path | type | agent | frame |\n|---|---|---|---|\n");
            for f in frames.iter().take(MD_LIMIT) {
                let field = |key: &str| f[key].as_str().unwrap_or_default();
                let id = field("frame_id");
                md.push_str(&format!(
                    "| `{}` | {} | {} | `{}` |\n",
                    field("path"),
                    field("frame_type"),
                    field("agent_id"),
                    &id[..id.len().min(12)]
                ));
            }
            if frames.len() > MD_LIMIT {
                md.push_str(&format!("\n... and {} more\n", frames.len() - MD_LIMIT));
            }
        }
    }
    md
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
