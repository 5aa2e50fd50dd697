//! What the localisation bench scores against, from an instance's gold patch: the pre-image
//! lines it changes, the definitions those lines fall in (the gold functions), where a
//! search's definition ranking places them, and which of the lines a bundle of context (or
//! files pasted whole) shows. Pure functions over text and JSON; the bench reads the files.
//!
//! A patch's sites, in its pre-image (the tree at the base commit): each line it removes or
//! changes, and for lines it only inserts, the line they follow. A file the patch creates has
//! no pre-image and no sites. For line recall, an insertion is shown where the nearest
//! non-blank line before it or after it is (its place is seen where a neighbour is; a blank
//! line has no text to show). For the gold functions, a changed line maps to the
//! innermost definition spanning it ([`crate::bench_localize_defs`]), and an insertion to the
//! innermost definition spanning both the line it follows and the next (in Python, or its
//! last line where the inserted text is indented deeper than the definition), so a function
//! added after another is its container's, not the other function's; a line outside every
//! definition maps to none.
use std::collections::HashMap;

use serde_json::Value as Json;

use crate::bench_localize_defs::Definition;

/// A place in a file's pre-image that a patch changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// A line removed or changed (1-based).
    Line(usize),
    /// Lines inserted after this line (0: at the top), the first non-blank of them given.
    Insert { after: usize, text: String },
}

impl Site {
    /// The pre-image line the site is at: an insertion's the line it follows (the first for
    /// one at the top).
    pub fn line(&self) -> usize {
        match self {
            Site::Line(n) => *n,
            Site::Insert { after, .. } => (*after).max(1),
        }
    }
}

/// A file a patch changes: its path before the change, and the sites in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    pub path: String,
    pub sites: Vec<Site>,
    /// Its hunks in order, each with the sites it gave (the next `sites` of [`Self::sites`]).
    pub hunks: Vec<Hunk>,
}

/// One hunk of a patch, as its header states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Its first pre-image line, as stated.
    pub start: usize,
    /// Its pre-image lines: context and removed.
    pub old: Vec<String>,
    /// How many sites it gave.
    pub sites: usize,
}

impl PatchFile {
    /// Moves each hunk's sites to where its pre-image lines are in `text` (the file at the
    /// base commit), as `git apply` places a hunk whose lines have moved since the patch was
    /// made: at the stated line where they are there, else at the nearest line where they
    /// are; where they are nowhere, at the stated line.
    pub fn place(&mut self, text: &str) {
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let mut at = 0;
        for h in &self.hunks {
            let offset = hunk_offset(&lines, h);
            for site in &mut self.sites[at..at + h.sites] {
                match site {
                    Site::Line(n) => *n = n.saturating_add_signed(offset),
                    Site::Insert { after, .. } => *after = after.saturating_add_signed(offset),
                }
            }
            at += h.sites;
        }
    }
}

/// How far from its stated line hunk `h` lies in `lines` (the nearest place its pre-image
/// lines are, trailing space aside; 0 where they are nowhere, or it has none).
fn hunk_offset(lines: &[&str], h: &Hunk) -> isize {
    let old: Vec<&str> = h.old.iter().map(|l| l.trim_end()).collect();
    if old.is_empty() || old.len() > lines.len() {
        return 0;
    }
    let stated = h.start.max(1) - 1;
    let fits = |from: usize| lines[from..].starts_with(&old);
    let last = lines.len() - old.len();
    (0..=last.max(stated))
        .flat_map(|d| [stated.checked_sub(d), stated.checked_add(d)])
        .flatten()
        .find(|&from| from <= last && fits(from))
        .map_or(0, |from| from as isize - stated as isize)
}

/// The old line count and start of a hunk header (`@@ -START[,COUNT] +... @@`).
fn hunk_old(header: &str) -> Option<(usize, usize, usize)> {
    let mut parts = header.split_whitespace().skip(1);
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, c)) => Some((s.parse().ok()?, c.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(parts.next()?.strip_prefix('-')?)?;
    let (_, new_count) = range(parts.next()?.strip_prefix('+')?)?;
    Some((old_start, old_count, new_count))
}

/// A run of removed and inserted lines between context lines, being read.
#[derive(Default)]
struct Change {
    removed: bool,
    /// Where an insertion follows, and its first non-blank line so far.
    insert: Option<(usize, String)>,
}

impl Change {
    /// The run's insertion site, unless it removed lines (then it changed them).
    fn finish(&mut self, sites: &mut Vec<Site>) {
        let run = std::mem::take(self);
        if let (false, Some((after, text))) = (run.removed, run.insert) {
            sites.push(Site::Insert { after, text });
        }
    }
}

/// The sites of one hunk, whose lines follow `header` in `lines`, and its pre-image lines
/// into `pre`; advances past them.
fn read_hunk<'a>(
    header: &str,
    lines: &mut impl Iterator<Item = &'a str>,
    sites: &mut Vec<Site>,
    pre: &mut Vec<String>,
) -> Option<usize> {
    let (start, mut old, mut new) = hunk_old(header)?;
    // `-S,0`: the lines are inserted after line S.
    let mut next = if old == 0 { start + 1 } else { start };
    let mut run = Change::default();
    while old > 0 || new > 0 {
        let line = lines.next()?;
        let mark = line.chars().next();
        let rest = mark.map_or("", |c| &line[c.len_utf8()..]);
        match mark {
            Some('-') => {
                pre.push(rest.to_owned());
                sites.push(Site::Line(next));
                run.removed = true;
                next += 1;
                old = old.saturating_sub(1);
            }
            Some('+') => {
                let after = next - 1;
                let first = run.insert.get_or_insert_with(|| (after, String::new()));
                if first.1.trim().is_empty() {
                    first.1 = rest.to_owned();
                }
                new = new.saturating_sub(1);
            }
            Some('\\') => {}
            // A context line (one emptied of its trailing space too).
            _ => {
                pre.push(rest.to_owned());
                run.finish(sites);
                next += 1;
                old = old.saturating_sub(1);
                new = new.saturating_sub(1);
            }
        }
    }
    run.finish(sites);
    Some(start)
}

/// The files a unified diff changes, with their sites (files it creates left out).
pub fn parse_patch(patch: &str) -> Vec<PatchFile> {
    let mut out: Vec<PatchFile> = Vec::new();
    let mut lines = patch.lines();
    let mut current: Option<usize> = None;
    while let Some(line) = lines.next() {
        if let Some(old) = line.strip_prefix("--- ") {
            let old = old.split('\t').next().unwrap_or(old).trim_end();
            current = old.strip_prefix("a/").map(|path| {
                out.push(PatchFile {
                    path: path.to_owned(),
                    sites: Vec::new(),
                    hunks: Vec::new(),
                });
                out.len() - 1
            });
        } else if line.starts_with("@@ ") {
            let (mut sites, mut old) = (Vec::new(), Vec::new());
            // A hunk cut short (the patch's end) keeps the sites read before it, where stated.
            let start = read_hunk(line, &mut lines, &mut sites, &mut old);
            if let Some(i) = current {
                let start = start.unwrap_or(0);
                let old = if start == 0 { Vec::new() } else { old };
                let sites_n = sites.len();
                out[i].hunks.push(Hunk {
                    start,
                    old,
                    sites: sites_n,
                });
                out[i].sites.extend(sites);
            }
        }
    }
    out
}

/// The leading whitespace of `line` in columns (a tab to the next multiple of 8).
fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .fold(
            0,
            |col, c| if c == '\t' { col / 8 * 8 + 8 } else { col + 1 },
        )
}

/// The innermost of `defs` a site falls in (see the module documentation); an index.
pub fn enclosing(defs: &[Definition], site: &Site) -> Option<usize> {
    let inside = |d: &Definition| match site {
        Site::Line(n) => d.line <= *n && *n <= d.end,
        Site::Insert { after, text } => {
            let deeper = d.indent.is_some_and(|i| indent_of(text) > i);
            *after >= 1 && d.line <= *after && (*after < d.end || (*after == d.end && deeper))
        }
    };
    defs.iter()
        .enumerate()
        .filter(|(_, d)| inside(d))
        .max_by_key(|(i, d)| (d.line, *i))
        .map(|(i, _)| i)
}

/// A definition as a search ranks it, or as the gold patch changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDefinition {
    pub path: String,
    pub name: String,
    pub line: usize,
    pub end: usize,
}

/// The definitions a search's hits list, in order (each hit's `symbols`, hit after hit).
pub fn ranked_definitions(hits: &Json) -> Vec<FileDefinition> {
    let mut out = Vec::new();
    for hit in hits.as_array().into_iter().flatten() {
        let path = hit.get("path").and_then(Json::as_str).unwrap_or_default();
        for s in hit
            .get("symbols")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let num = |k: &str| s.get(k).and_then(Json::as_u64).unwrap_or(0) as usize;
            out.push(FileDefinition {
                path: path.to_owned(),
                name: s
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                line: num("line_start"),
                end: num("line_end"),
            });
        }
    }
    out
}

/// The definitions `merkle --json search --functions` lists, in order.
pub fn listed_functions(found: &Json) -> Vec<FileDefinition> {
    let text = |f: &Json, k: &str| {
        f.get(k)
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let num = |f: &Json, k: &str| f.get(k).and_then(Json::as_u64).unwrap_or(0) as usize;
    found
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| FileDefinition {
            path: text(f, "path"),
            name: text(f, "name"),
            line: num(f, "line_start"),
            end: num(f, "line_end"),
        })
        .collect()
}

/// Whether two names are one definition's: equal, or one the other qualified (`A::f`, `A.f`)
/// or with a word before it (merkle's `json_pointer operator/` for a C++ friend operator).
fn same_name(a: &str, b: &str) -> bool {
    let qualified = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|q| q.ends_with("::") || q.ends_with('.') || q.ends_with(' '))
    };
    a == b || qualified(a, b) || qualified(b, a)
}

/// The 0-based rank in `ranked` of each of `gold` (same file, same name, overlapping lines).
pub fn ranks(ranked: &[FileDefinition], gold: &[FileDefinition]) -> Vec<Option<usize>> {
    gold.iter()
        .map(|g| {
            ranked.iter().position(|r| {
                r.path == g.path
                    && same_name(&r.name, &g.name)
                    && r.line <= g.end
                    && g.line <= r.end.max(r.line)
            })
        })
        .collect()
}

/// The source lines a piece of context shows, by file: each shown run's first line and text.
#[derive(Debug, Default, Clone)]
pub struct Shown {
    runs: HashMap<String, Vec<(usize, Vec<String>)>>,
}

impl Shown {
    /// What a bundle (`merkle --json context`) shows: each section's lines from its
    /// `line_start`, as many as its text has up to its `line_end` (a definition cut short
    /// shows its first lines only); an outline shows none (its text is not the file's).
    pub fn of_bundle(bundle: &Json) -> Shown {
        let mut shown = Shown::default();
        for file in bundle
            .get("files")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let path = file.get("path").and_then(Json::as_str).unwrap_or_default();
            for s in file
                .get("sections")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter(|s| s.get("kind").and_then(Json::as_str) != Some("outline"))
            {
                let num = |k: &str| s.get(k).and_then(Json::as_u64).unwrap_or(0) as usize;
                let (start, end) = (num("line_start").max(1), num("line_end"));
                let text = s.get("text").and_then(Json::as_str).unwrap_or_default();
                let lines = text
                    .lines()
                    .take((end + 1).saturating_sub(start))
                    .map(str::to_owned)
                    .collect();
                shown.add(path, start, lines);
            }
        }
        shown
    }

    /// Files pasted whole from their first line, in order, until `budget` tokens (four bytes
    /// each) are spent: each under a `## path` heading in a fence, as a bundle's Markdown
    /// wraps a section; the last one cut after the last line that fits (a file none of
    /// whose lines fits is not pasted). Its tokens too.
    pub fn pasted(files: &[(&str, &str)], budget: usize) -> (Shown, usize) {
        let mut shown = Shown::default();
        let mut bytes = 0;
        let fits = |bytes: usize| bytes.div_ceil(4) <= budget;
        for (path, text) in files {
            let mut used = bytes + format!("\n## {path}\n\n```\n").len() + "\n```\n".len();
            let mut lines = Vec::new();
            let mut cut = false;
            for line in text.lines() {
                if !fits(used + line.len() + 1) {
                    cut = true;
                    break;
                }
                used += line.len() + 1;
                lines.push(line.to_owned());
            }
            if !lines.is_empty() {
                bytes = used;
                shown.add(path, 1, lines);
            }
            if cut {
                break;
            }
        }
        (shown, bytes.div_ceil(4))
    }

    fn add(&mut self, path: &str, start: usize, lines: Vec<String>) {
        if !lines.is_empty() {
            self.runs
                .entry(path.to_owned())
                .or_default()
                .push((start, lines));
        }
    }

    /// Whether line `n` of `path`, whose text in the pre-image is `text`, is shown: by its
    /// number and its text both.
    pub fn shows(&self, path: &str, n: usize, text: &str) -> bool {
        self.runs
            .get(path)
            .into_iter()
            .flatten()
            .any(|(start, lines)| {
                n >= *start
                    && lines
                        .get(n - start)
                        .is_some_and(|l| l.trim_end() == text.trim_end())
            })
    }
}
