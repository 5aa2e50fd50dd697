//! The tree and frame commands: `scan`, `status`, `validate`, `gc`, `put-frame`, `get-node`,
//! `list-frames`, `get-head` and `list-nodes`; each parses, calls the store or
//! `context::ops`, and renders.
use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Args;
use merkle_store::{NewFrame, ScanOptions};

use crate::output::{self, Out, frame_json};
use crate::{
    Global, Usage, context_cmds, display_path, open, parse_hash, parse_key_value, read_or_warn,
    resolve, workspace, workspace_path,
};

#[derive(Args, Debug)]
pub(crate) struct ScanArgs {
    /// Only these files and folders (a folder with everything below it), and the folders
    /// above them; the rest of the tree is taken from the last scan. For editor hooks and
    /// scripts that know what they wrote [default: the whole workspace]
    paths: Vec<String>,
    /// Hash every file again, ignoring the stat cache
    #[arg(long)]
    force: bool,
}

#[derive(Args, Debug)]
pub(crate) struct PutFrameArgs {
    /// The node: a workspace path or a NodeID (a unique hex prefix of 8+ digits)
    node: String,
    /// The file holding the frame's content, or - for standard input
    file: String,
    /// The frame type (e.g. summary, notes)
    #[arg(long = "type", value_name = "TYPE")]
    frame_type: String,
    /// The writing agent (registered with `merkle agent add`)
    #[arg(long)]
    agent: String,
    /// What the frame was derived from, as 64 hex digits [default: the node's NodeID]
    #[arg(long, value_name = "HASH", value_parser = parse_hash)]
    basis: Option<merkle_store::Hash>,
    /// The provider that produced the content
    #[arg(long)]
    provider: Option<String>,
    /// The model that produced the content
    #[arg(long)]
    model: Option<String>,
    /// A free metadata key=value (repeatable); not part of the FrameID
    #[arg(long = "meta", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    meta: Vec<(String, String)>,
}

#[derive(Args, Debug)]
pub(crate) struct GetNodeArgs {
    /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
    node: String,
    #[command(flatten)]
    view: context_cmds::ViewArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ListFramesArgs {
    /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
    node: String,
    /// Only frames of this type
    #[arg(long = "type", value_name = "TYPE")]
    frame_type: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct GetHeadArgs {
    /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
    node: String,
    /// The frame type
    #[arg(long = "type", value_name = "TYPE")]
    frame_type: String,
}

#[derive(Args, Debug)]
pub(crate) struct ListNodesArgs {
    /// A workspace path [default: the root]
    path: Option<String>,
    /// List every descendant, not just the children
    #[arg(short, long)]
    recursive: bool,
}

pub(crate) fn scan(g: &Global, root: &Path, args: &ScanArgs, out: &mut Out) -> Result<()> {
    let paths = args
        .paths
        .iter()
        .map(|p| workspace_path(root, p))
        .collect::<Result<Vec<String>>>()?;
    if !paths.is_empty() {
        check_scan_paths(g, root, &args.paths, &paths)?;
    }
    let bar = (!g.quiet && !g.json).then(output::scan_progress);
    let tick = |p: merkle_store::Progress| {
        if let Some(b) = &bar {
            output::scan_tick(b, p);
        }
    };
    let opts = ScanOptions {
        force: args.force,
        progress: Some(&tick),
    };
    let report = if !paths.is_empty() {
        open(g, root, false)?.scan_paths(&paths, &opts)?
    } else if args.force {
        open(g, root, false)?.scan(&opts)?
    } else {
        workspace(g, root).scan(&opts)?
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    output::scan(out, g, &report);
    Ok(())
}

/// A path given to `scan` must be on disk, or in the last scan's tree (a file a hook saw
/// deleted): anything else is a typo, and scanning it would silently do nothing.
fn check_scan_paths(g: &Global, root: &Path, given: &[String], paths: &[String]) -> Result<()> {
    let ws = workspace(g, root);
    let store = if ws.store_dir()?.exists() {
        Some(ws.reader()?)
    } else {
        None
    };
    for (arg, path) in given.iter().zip(paths) {
        if std::fs::symlink_metadata(root.join(path)).is_ok() {
            continue;
        }
        let known = match &store {
            Some(store) => store.node_at(path)?.is_some(),
            None => false,
        };
        if !known {
            return Err(anyhow::Error::new(Usage(format!(
                "{arg:?} does not exist, on disk or in the last scan"
            ))));
        }
    }
    Ok(())
}

pub(crate) fn status(g: &Global, root: &Path, out: &mut Out) -> Result<()> {
    let ws = workspace(g, root);
    let status = ws.status()?;
    let stale = context_cmds::stale_text(&status.stale);
    // `-v`: what takes the space, a walk of every table (issue #46).
    let space = match out.verbose {
        true => Some((
            ws.reader()?.space()?,
            output::folder_sizes(&ws.store_dir()?)?,
            context::search::history::kept_commits(&ws.store_dir()?),
        )),
        false => None,
    };
    output::status(out, g, &status, stale, space.as_ref());
    Ok(())
}

#[derive(Args, Debug)]
pub(crate) struct GcArgs {
    /// Count what would be removed, by kind, and change nothing
    #[arg(long)]
    dry_run: bool,
}

/// `gc`: removes what no tree, history or memo needs, packs a store written before packing
/// and compacts its file ([`context::ops::collect_garbage`]).
pub(crate) fn gc(g: &Global, root: &Path, args: &GcArgs, out: &mut Out) -> Result<()> {
    let garbage = workspace(g, root).collect_garbage(args.dry_run)?;
    output::gc(out, &garbage);
    Ok(())
}

/// Exits 1 when the store has problems.
pub(crate) fn validate(g: &Global, root: &Path, out: &mut Out) -> Result<bool> {
    let store = open(g, root, true)?;
    let problems = store.validate()?;
    output::validate(out, &problems);
    Ok(problems.is_empty())
}

pub(crate) fn put_frame(g: &Global, root: &Path, args: &PutFrameArgs, out: &mut Out) -> Result<()> {
    let file = &args.file;
    let content = if file == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .context("reading the frame's content from standard input")?;
        buf
    } else {
        std::fs::read(file).with_context(|| format!("reading frame content from {file}"))?
    };
    let store = open(g, root, false)?;
    // The frame attaches to the file as it is now, as from MCP and the agent's tools.
    if store.root()?.is_some() {
        store.scan(&ScanOptions::default())?;
    }
    let target = resolve(&store, root, &args.node)?;
    let mut frame = NewFrame::new(target.node_id, &args.frame_type, &args.agent, content);
    frame.basis = args.basis;
    frame.metadata.provider = args.provider.clone();
    frame.metadata.model = args.model.clone();
    frame.metadata.extra.extend(args.meta.iter().cloned());
    let put = context::ops::put_frame(&store, &target, frame)?;
    out.value(put.json(), put.frame_id.to_hex());
    Ok(())
}

pub(crate) fn get_node(g: &Global, root: &Path, args: &GetNodeArgs, out: &mut Out) -> Result<()> {
    let request = args.view.request();
    // A path: what the view reads of the tree is checked on disk, not the whole tree.
    let scope = workspace_path(root, &args.node)
        .ok()
        .and_then(|path| request.reach(root, &path));
    workspace(g, root).read_at(scope.as_deref(), |store, stale| {
        let rec = resolve(store, root, &args.node)?;
        let view = context_cmds::view(store, root, &request)?;
        let composed = context::get_node(store, &rec, &view)?;
        context_cmds::print_node_context(out, &composed, store.root()?, stale);
        Ok(())
    })
}

pub(crate) fn list_frames(
    g: &Global,
    root: &Path,
    args: &ListFramesArgs,
    out: &mut Out,
) -> Result<()> {
    let scope = workspace_path(root, &args.node).ok();
    read_or_warn(g, root, scope.as_deref(), |store| {
        let rec = resolve(store, root, &args.node)?;
        let frames = store.frames_of(&rec.node_id, args.frame_type.as_deref())?;
        output::frames(out, &frames);
        Ok(())
    })
}

pub(crate) fn get_head(g: &Global, root: &Path, args: &GetHeadArgs, out: &mut Out) -> Result<()> {
    let scope = workspace_path(root, &args.node).ok();
    read_or_warn(g, root, scope.as_deref(), |store| {
        let rec = resolve(store, root, &args.node)?;
        let Some(head) = store.head(&rec.node_id, &args.frame_type)? else {
            bail!(
                "no frame of type {:?} on {:?}",
                args.frame_type,
                display_path(&rec.path)
            );
        };
        let text = output::frame_text(&head, out.verbose);
        out.value(frame_json(&head), text);
        Ok(())
    })
}

pub(crate) fn list_nodes(
    g: &Global,
    root: &Path,
    args: &ListNodesArgs,
    out: &mut Out,
) -> Result<()> {
    let path = match &args.path {
        Some(p) => workspace_path(root, p)?,
        None => String::new(),
    };
    read_or_warn(g, root, Some(&path), |store| {
        let nodes = store.list_nodes(&path, args.recursive)?;
        output::tree_nodes(out, &nodes);
        Ok(())
    })
}
