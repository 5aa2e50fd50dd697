//! Output formatting: the readable reports and the stable JSON documents of every command.
//!
//! JSON field names are a contract scripts rely on (see the README): `root`, `files`, `dirs`,
//! `changed` for scan; `root`, `nodes`, `frames`, `changed_on_disk` for status; `path`, `kind`,
//! `node_id`, `content_hash`, `children` for nodes; `frame_id`, `node_id`, `frame_type`,
//! `agent_id`, `basis`, `content`, `metadata` for frames; `ok`, `problems` for validate.
use std::io::Write;

use merkle_store::{Frame, NodeRecord, Problem, ScanReport, TreeNode};
use serde_json::{Value, json};

use crate::{Global, display_path};

/// `n` and the noun, plural unless `n` is 1: `1 file`, `2 files`; nouns ending in `y` after a
/// consonant take `ies` (`1 directory`, `2 directories`).
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{n} {stem}ies"),
        _ if noun.ends_with('s') => format!("{n} {noun}es"),
        _ => format!("{n} {noun}s"),
    }
}

/// Where a command's result goes: JSON or text on stdout.
pub(crate) struct Out {
    json: bool,
    /// `-v`: text output shows internals too (a frame's basis and metadata).
    pub(crate) verbose: bool,
}

impl Out {
    pub(crate) fn new(json: bool) -> Out {
        Out {
            json,
            verbose: false,
        }
    }

    /// Prints `json` with `--json`, else `text` (nothing when empty).
    pub(crate) fn value(&mut self, json: Value, text: String) {
        let mut stdout = std::io::stdout().lock();
        let s = if self.json {
            serde_json::to_string_pretty(&json).expect("a serde_json::Value always serializes")
        } else {
            text
        };
        if !s.is_empty() {
            let _ = writeln!(stdout, "{s}");
        }
    }
}

/// A progress style from `template`, whose `{rate}` is whole items per second over the whole
/// run ("1,779/s", never "1,779.2121/s") and whose `{left}` is the time left at that rate
/// ("2m 10s"), so the estimate does not leap with each burst the way `{eta}`'s recent-rate
/// estimate does. `{left}` is blank until the run has gone a second.
pub(crate) fn steady_style(template: &str) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template)
        .expect("the template is valid")
        .with_key(
            "rate",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}/s", grouped(rate(s.pos(), s.elapsed())));
            },
        )
        .with_key(
            "left",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&time_left(s.pos(), s.len(), s.elapsed()));
            },
        )
}

/// Items per second over `elapsed`, rounded.
fn rate(done: u64, elapsed: std::time::Duration) -> u64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        0
    } else {
        (done as f64 / secs).round() as u64
    }
}

/// `n` with thousands separators: 1779 -> "1,779".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The time left for `len - done` items at the average rate so far: "45s", "2m 10s",
/// "1h 5m"; "" before a second has passed or while nothing is done.
fn time_left(done: u64, len: Option<u64>, elapsed: std::time::Duration) -> String {
    let Some(len) = len else {
        return String::new();
    };
    if done == 0 || elapsed.as_secs_f64() < 1.0 {
        return String::new();
    }
    let left = (len.saturating_sub(done) as f64 * elapsed.as_secs_f64() / done as f64).round();
    let secs = left as u64;
    let text = match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
    };
    format!("{text} left")
}

pub(crate) fn scan_progress() -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(steady_style("{spinner} scanning: {pos} entries ({rate})"));
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Before a search of `query`, the history read it needs ([`context::ops::history_before_search`]),
/// shown: a spinner of the commits read so far on a terminal, and
/// with `-v` how many were kept and how long it took. A history git cannot read is left to the
/// search, which says why.
pub(crate) fn read_history(
    g: &Global,
    store: &merkle_store::Store,
    query: &str,
    ranking: context::search::Ranking,
) {
    let bar = std::cell::OnceCell::new();
    let start = std::time::Instant::now();
    let read = context::ops::history_before_search(store, query, ranking, &|n| {
        if g.quiet || g.json {
            return;
        }
        let bar = bar.get_or_init(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            bar.set_style(steady_style(
                "{spinner} reading git history: {msg} commits ({rate})",
            ));
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        bar.set_position(n as u64);
        bar.set_message(grouped(n as u64));
    });
    if let Some(bar) = bar.get() {
        bar.finish_and_clear();
    }
    if g.verbose
        && let Some(Ok(Some(n))) = read
    {
        eprintln!(
            "git history: {} commits kept, read in {:.1} s",
            grouped(n as u64),
            start.elapsed().as_secs_f64()
        );
    }
}

/// Moves the scan's progress display: a spinner while walking, a bar while hashing.
pub(crate) fn scan_tick(bar: &indicatif::ProgressBar, p: merkle_store::Progress) {
    match p {
        merkle_store::Progress::Walked(n) => bar.set_position(n),
        merkle_store::Progress::Hashed { done, total } => {
            if bar.length() != Some(total) {
                bar.set_style(
                    steady_style("hashing [{bar:30}] {pos}/{len} files ({rate}) {left}")
                        .progress_chars("=> "),
                );
                bar.set_length(total);
                bar.reset_eta();
            }
            bar.set_position(done);
        }
    }
}

fn warnings(g: &Global, list: &[String]) {
    if g.quiet || g.json || list.is_empty() {
        return;
    }
    let shown = if g.verbose {
        list.len()
    } else {
        list.len().min(10)
    };
    for w in &list[..shown] {
        eprintln!("warning: {w}");
    }
    if shown < list.len() {
        eprintln!(
            "warning: ... and {} more (-v shows all)",
            list.len() - shown
        );
    }
}

pub(crate) fn scan(out: &mut Out, g: &Global, r: &ScanReport) {
    warnings(g, &r.warnings);
    let mut text = format!(
        "root {}\n{}, {}, {} changed",
        r.root,
        count(r.files, "file"),
        count(r.dirs, "dir"),
        r.changed()
    );
    if g.verbose {
        text.push_str(&format!(
            "\nread {}, hashed {} ({}), recomputed {}, {}",
            count(r.dirs_read, "dir"),
            count(r.hashed, "file"),
            count(r.hashed_bytes, "byte"),
            count(r.dirs_recomputed, "dir"),
            count(r.writes, "store write")
        ));
    }
    out.value(
        json!({
            "root": r.root.to_hex(),
            "files": r.files,
            "dirs": r.dirs,
            "changed": r.changed(),
            "hashed": r.hashed,
            "hashed_bytes": r.hashed_bytes,
            "dirs_recomputed": r.dirs_recomputed,
            "dirs_read": r.dirs_read,
            "writes": r.writes,
            "warnings": r.warnings,
        }),
        text,
    );
}

/// What takes the space in a store: the tables' records, the store folder's files, and the commits of
/// the history file (how many, whether cut at its most).
pub(crate) type StoreSpace = (
    Vec<merkle_store::Space>,
    Vec<(String, u64)>,
    Option<(usize, bool)>,
);

/// The bytes of each entry of the store folder `dir`, largest first
/// ([`context::ops::folder_sizes`]).
pub(crate) fn folder_sizes(dir: &std::path::Path) -> anyhow::Result<Vec<(String, u64)>> {
    anyhow::Context::with_context(context::ops::folder_sizes(dir), || {
        format!("listing {}", dir.display())
    })
}

pub(crate) fn status(
    out: &mut Out,
    g: &Global,
    status: &context::ops::Status,
    stale_text: String,
    space: Option<&StoreSpace>,
) {
    let r = &status.report;
    warnings(g, &r.warnings);
    let mut text = format!(
        "root {}\n{}, {}",
        r.root,
        count(r.nodes, "node"),
        count(r.frames, "frame")
    );
    if r.changed_on_disk.is_empty() {
        text.push_str("\nno changes on disk since the last scan");
    } else {
        text.push_str(&format!(
            "\n{} changed on disk since the last scan (run `merkle scan`):",
            r.changed_on_disk.len()
        ));
        for (path, change) in &r.changed_on_disk {
            let mark = match change {
                merkle_store::Change::Added => "A",
                merkle_store::Change::Modified => "M",
                merkle_store::Change::Deleted => "D",
            };
            text.push_str(&format!("\n  {mark} {path}"));
        }
    }
    if !stale_text.is_empty() {
        text.push('\n');
        text.push_str(&stale_text);
    }
    for remote in &status.remotes {
        let (name, n) = (&remote.name, remote.unpushed);
        text.push_str(&if n == 0 {
            format!("\nremote {name}: everything pushed")
        } else {
            format!(
                "\nremote {name}: {} not pushed (`merkle push {name}`)",
                count(n, "frame")
            )
        });
    }
    let mut json = status.json();
    if let Some((tables, files, history)) = space {
        text.push_str("\nspace, by kind of record (entries; key and value bytes):");
        for s in tables.iter().filter(|s| s.entries > 0) {
            text.push_str(&format!(
                "\n  {:<28} {:>10}  {:>14}",
                s.kind,
                s.entries,
                bytes_text(s.key_bytes + s.value_bytes)
            ));
        }
        text.push_str("\nthe store folder on disk:");
        for (name, n) in files {
            text.push_str(&format!("\n  {name:<28} {:>14}", bytes_text(*n)));
        }
        if let Some((n, cut)) = history {
            text.push_str(&format!(
                "\npast fixes: {} of the git history read{}",
                count(*n as u64, "commit"),
                if *cut {
                    format!(
                        " (cut at the newest {}: older fixes are not weighed)",
                        grouped(context::search::history::MAX_COMMITS as u64)
                    )
                } else {
                    String::new()
                }
            ));
        }
        json["space"] = serde_json::json!({
            "records": tables.iter().map(|s| serde_json::json!({
                "kind": s.kind,
                "entries": s.entries,
                "key_bytes": s.key_bytes,
                "value_bytes": s.value_bytes,
            })).collect::<Vec<_>>(),
            "files": files.iter().map(|(name, n)| serde_json::json!({"name": name, "bytes": n}))
                .collect::<Vec<_>>(),
            "history": history.map(|(n, cut)| serde_json::json!({"commits": n, "cut": cut})),
        });
    }
    out.value(json, text);
}

/// Bytes with thousands separated (`12,345,678 bytes`).
fn bytes_text(n: u64) -> String {
    format!("{} bytes", grouped(n))
}

/// `gc`'s answer: nodes and derived records kept and removed, with why, then the folder's
/// bytes before and after.
pub(crate) fn gc(out: &mut Out, g: &context::ops::Garbage) {
    let c = &g.collected;
    let verb = if g.dry_run { "would remove" } else { "removed" };
    let mut text = format!(
        "nodes: kept {} (the current tree's, those with frames and what they hold), {verb} {}",
        grouped(c.nodes_kept),
        grouped(c.nodes_removed)
    );
    for (namespace, kept, removed) in &c.derived {
        text.push_str(&format!(
            "
{namespace}: kept {}, {verb} {} ({})",
            grouped(*kept),
            grouped(*removed),
            context::ops::why_kept(namespace)
        ));
    }
    text.push_str(&format!(
        "
bodies: kept {} (contents a frame or derived record holds), {verb} {}",
        grouped(c.bodies_kept),
        grouped(c.bodies_removed)
    ));
    if c.heads_implied > 0 {
        text.push_str(&format!(
            "
heads: {verb} {} entries that name their history's latest frame (it implies them)",
            grouped(c.heads_implied)
        ));
    }
    if c.path_heads_implied > 0 {
        text.push_str(&format!(
            "
path heads: {verb} {} entries that name the head of the node at their path (the tree implies them)",
            grouped(c.path_heads_implied)
        ));
    }
    if c.packed > 0 {
        text.push_str(&format!(
            "
packed {} values of a store written before packing",
            grouped(c.packed)
        ));
    }
    if c.tree_copy_removed > 0 {
        text.push_str(&format!(
            "
tree: {verb} the {} records of the copy of the tree an earlier version kept",
            grouped(c.tree_copy_removed)
        ));
    }
    if c.tree_blocked > 0 {
        text.push_str(&format!(
            "
tree: wrote its {} entries in blocks anew (a store written before blocks, or blocks half empty)",
            grouped(c.tree_blocked)
        ));
    }
    if let Some(e) = &g.index_error {
        text.push_str(&format!(
            "
the search index: not merged ({e})"
        ));
    } else if let Some((before, after)) = g.index_segments {
        text.push_str(&match (g.dry_run, before > after) {
            (true, _) if before > 1 => format!(
                "
the search index: {before} segments, which gc merges into one"
            ),
            (false, true) => format!(
                "
the search index: {before} segments merged into {after}"
            ),
            _ => format!(
                "
the search index: {after} segment{}",
                if after == 1 { "" } else { "s" }
            ),
        });
    }
    text.push_str(&format!(
        "
the store folder: {} before, {} after{}",
        bytes_text(g.bytes_before),
        bytes_text(g.bytes_after),
        match (c.compacted, g.dry_run) {
            (true, _) => " (compacted)",
            (false, true) => "",
            (false, false) => {
                " (not compacted: another process was reading the store, or nothing was free)"
            }
        }
    ));
    out.value(g.json(), text);
}

pub(crate) fn validate(out: &mut Out, problems: &[Problem]) {
    let text = if problems.is_empty() {
        "ok: the store is consistent".to_owned()
    } else {
        let mut t = format!("{}:", count(problems.len() as u64, "problem"));
        for p in problems {
            match &p.path {
                Some(path) => t.push_str(&format!("\n  {}: {}", display_path(path), p.message)),
                None => t.push_str(&format!("\n  {}", p.message)),
            }
        }
        t
    };
    out.value(
        json!({
            "ok": problems.is_empty(),
            "problems": problems.iter().map(|p| json!({"path": p.path, "message": p.message})).collect::<Vec<_>>(),
        }),
        text,
    );
}

pub(crate) use context::ops::frame_json;

/// A frame as text. Its basis and metadata (synthesis inputs, policy ids) are internals that
/// only `verbose` (`-v`) shows; `--json` always has them.
pub(crate) fn frame_text(f: &Frame, verbose: bool) -> String {
    let mut t = format!(
        "frame {}\ntype {}  agent {}  created {}",
        f.frame_id,
        f.frame_type,
        f.agent_id,
        rfc3339(f.metadata.created_at_ms),
    );
    if verbose {
        t.push_str(&format!("\nbasis {}", f.basis));
    }
    if let Some(p) = &f.metadata.provider {
        t.push_str(&format!("\nprovider {p}"));
    }
    if let Some(m) = &f.metadata.model {
        t.push_str(&format!("\nmodel {m}"));
    }
    if verbose {
        for (k, v) in &f.metadata.extra {
            t.push_str(&format!("\n{k} = {v}"));
        }
    }
    match f.text() {
        Some(text) => {
            t.push('\n');
            for line in text.lines() {
                t.push_str(&format!("\n    {line}"));
            }
        }
        None => t.push_str(&format!(
            "\n\n    ({} of binary content)",
            count(f.content.len() as u64, "byte")
        )),
    }
    t
}

/// A node record as text: path, kind, ids and children.
pub(crate) fn node_text(n: &NodeRecord) -> String {
    let mut t = format!(
        "path {}\nkind {}\nnode_id {}\ncontent_hash {}",
        display_path(&n.path),
        n.kind.as_str(),
        n.node_id,
        n.content_hash
    );
    if !n.children.is_empty() {
        t.push_str(&format!("\nchildren ({}):", n.children.len()));
        for c in &n.children {
            let slash = if c.kind == merkle_store::NodeKind::Dir {
                "/"
            } else {
                ""
            };
            t.push_str(&format!(
                "\n  {}  {}{slash}",
                &c.node_id.to_hex()[..16],
                c.name
            ));
        }
    }
    t
}

pub(crate) fn frames(out: &mut Out, frames: &[Frame]) {
    let text = frames
        .iter()
        .map(|f| frame_text(f, out.verbose))
        .collect::<Vec<_>>()
        .join("\n\n");
    out.value(
        Value::Array(frames.iter().map(frame_json).collect()),
        if frames.is_empty() {
            "no frames".to_owned()
        } else {
            text
        },
    );
}

pub(crate) fn tree_nodes(out: &mut Out, nodes: &[TreeNode]) {
    let text = nodes
        .iter()
        .map(|n| format!("{:<7} {}  {}", n.kind.as_str(), n.node_id, n.path))
        .collect::<Vec<_>>()
        .join("\n");
    out.value(
        Value::Array(
            nodes
                .iter()
                .map(|n| json!({"path": n.path, "kind": n.kind.as_str(), "node_id": n.node_id.to_hex()}))
                .collect(),
        ),
        text,
    );
}

/// RFC 3339 UTC time with milliseconds, from milliseconds since the Unix epoch.
pub(crate) use merkle_store::time::rfc3339_millis as rfc3339;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rates_are_whole_and_grouped_and_time_left_follows_the_average() {
        assert_eq!(grouped(rate(17_792, Duration::from_secs(10))), "1,779");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
        // Half done in 65 s: 65 s left; nothing before a second has passed.
        assert_eq!(
            time_left(50, Some(100), Duration::from_secs(65)),
            "1m 5s left"
        );
        assert_eq!(time_left(50, Some(100), Duration::from_millis(500)), "");
        assert_eq!(
            time_left(1, Some(10_000), Duration::from_secs(2)),
            "5h 33m left"
        );
    }
}
