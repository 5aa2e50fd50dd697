//! The offline directory map: a directory's frame as a map of its children, ranked by
//! importance, that names what each one is and holds, within a byte budget.
//!
//! It reads the frames the offline producer writes (file outlines: a header line, the file's
//! doc, then `LINE: signature — doc` per definition) and its own frames on subdirectories, and
//! writes, per child in rank order:
//!
//! ```text
//! - synthesis.rs: Branch synthesis: a directory's frame of a type, derived from its children's
//!   pub trait SynthesisPolicy, pub struct Summary, pub fn synthesize (+ 12 more)
//! - tests/: 2 directories, 14 files, 210,114 bytes
//!   it/: Integration tests of the context crate
//! ```
//!
//! A file gets its first doc line and its most important top-level definitions (public or
//! exported types first, then functions, then the rest; impl blocks are not definitions of a
//! name); a directory its own first line and its first components, which its own map already
//! ranked, so the root's map names the main components of a repository and where they live.
//!
//! **Ranking**: READMEs, then entry points (`lib.rs`, `main.*`, `mod.rs`, `index.*`,
//! `__init__.py`, `__main__.py`), then code, Markdown and source directories, then the rest
//! (data and text files, and the folders of tests, fixtures, docs, examples, benchmarks and
//! vendored code); within a group by [`ChildWeights`] when given, then by size (bytes of source
//! below it), then by name. Every ordering is total, so the map is deterministic. The weights
//! `generate` gives the offline map ([`Ranking::Imports`]) are the import graph's
//! ([`ImportWeights`]): how many files of the workspace import a child (a folder: the files
//! below it), computed once the files' frames are made, from the facts the outline producer
//! cached as it parsed them.
//!
//! **Bounded, never silently**: what does not fit in [`Map::max_bytes`] is named on a last
//! line (`+ 7 more: a.rs, b/, ...`); a line too long for its share ends in `…`.
//!
//! A frame this policy did not write (a model's, a hand-written note) is read for its first line
//! alone.
use std::collections::HashMap;
use std::sync::Arc;

use merkle_store::{NodeKind, Store};

use crate::error::Result;
use crate::facts::TreeFacts;
use crate::graph::Graph;
use crate::synthesis::{ChildFrame, MAX_LINE_BYTES, SynthesisInput, SynthesisPolicy};

/// Per-child weights that rank children above their size: how often a child's definitions are
/// referenced from elsewhere in the workspace, say ([`ImportWeights`]); without any, children
/// of a group rank by size.
pub trait ChildWeights: Send + Sync {
    /// Names the weights in the policy's id. A directory's frame is memoized by its policy id
    /// and its children's frames, not by anything outside them, so this id must change
    /// whenever any weight does (name a hash of the graph, say).
    fn id(&self) -> String;
    /// The weight of the child at workspace path `path`, if it has one; heavier ranks first,
    /// and a child without one ranks as 0.
    fn weight(&self, path: &str) -> Option<u64>;
}

/// How a map ranks the children of a group before their size.
#[derive(Clone, Default)]
pub enum Ranking {
    /// By size alone.
    #[default]
    Size,
    /// By how many files import them, from the import graph of the tree as a generation
    /// reaches its directories: [`SynthesisPolicy::with_tree`] gives this map ranked by the
    /// [`ImportWeights`] of that tree (`generate` and `regenerate` ask it before they
    /// synthesize; a map asked nothing ranks by size).
    Imports,
    /// By these weights.
    Weights(Arc<dyn ChildWeights>),
}

impl std::fmt::Debug for Ranking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ranking::Size => f.write_str("Size"),
            Ranking::Imports => f.write_str("Imports"),
            Ranking::Weights(w) => f.debug_tuple("Weights").field(&w.id()).finish(),
        }
    }
}

/// The offline directory map policy (`map:v3:BYTES`, ranked by weights
/// `map:v3:BYTES:WEIGHTS`).
#[derive(Clone, Debug)]
pub struct Map {
    /// The most bytes of a directory's frame.
    pub max_bytes: usize,
    /// How children rank within a group before their size.
    pub ranking: Ranking,
}

impl Default for Map {
    fn default() -> Map {
        Map {
            max_bytes: 4096,
            ranking: Ranking::Size,
        }
    }
}

impl Map {
    /// The map `generate` makes offline: ranked by the import graph ([`Ranking::Imports`]).
    pub fn by_imports() -> Map {
        Map {
            ranking: Ranking::Imports,
            ..Map::default()
        }
    }
}

/// The import graph's counts as a map's child weights: a file weighs as many files as import
/// it, a directory the sum over the files below it. Named by a hash of every count, so the
/// policy id, and with it every directory's frame, changes exactly when a count does.
pub struct ImportWeights {
    id: String,
    by_path: HashMap<String, u64>,
}

impl ImportWeights {
    /// The weights of the store's current tree, from its import graph (a listing's imports
    /// read a run of files at a time, cached by content, so after the outline producer's run
    /// nothing is parsed).
    pub fn of(store: &Store) -> Result<ImportWeights> {
        let facts = TreeFacts::listing(store)?;
        let graph = Graph::of_tree(store, &facts)?;
        Ok(ImportWeights::from_counts(graph.importer_counts()))
    }

    /// The weights of these importer counts, by file path.
    pub fn from_counts<'a>(counts: impl IntoIterator<Item = (&'a str, usize)>) -> ImportWeights {
        let mut by_path: HashMap<String, u64> = HashMap::new();
        for (path, importers) in counts {
            let n = importers as u64;
            let mut at = path;
            loop {
                *by_path.entry(at.to_owned()).or_default() += n;
                match at.rsplit_once('/') {
                    Some((parent, _)) => at = parent,
                    None => break,
                }
            }
        }
        let mut sorted: Vec<(&String, &u64)> = by_path.iter().collect();
        sorted.sort_unstable();
        let mut weights = merkle_store::Encoder::new("import-weights");
        weights.count(sorted.len());
        for (path, n) in sorted {
            weights.bytes(path.as_bytes()).bytes(&n.to_le_bytes());
        }
        let id = format!("imports:{}", &weights.finish().to_hex()[..16]);
        ImportWeights { id, by_path }
    }
}

impl ChildWeights for ImportWeights {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn weight(&self, path: &str) -> Option<u64> {
        self.by_path.get(path).copied()
    }
}

/// The policy id's prefix: the version of what a map writes for given children. Bump it when
/// that changes.
pub const MAP_VERSION: &str = "map:v3";

/// Component lines shown under a directory's entry.
const COMPONENTS: usize = 6;
/// The most bytes of an entry's line of definitions.
const SYMBOLS_LINE_BYTES: usize = 160;
/// The most bytes of a component's line under a directory's entry.
const COMPONENT_LINE_BYTES: usize = 110;
/// The most bytes of a child's first line in its entry.
const DESCRIPTION_BYTES: usize = 140;

/// `line` cut to at most `max` bytes on a char boundary, ending in `…` when cut: a map's lines
/// are read whole, so a cut one ends short rather than with a byte count.
fn cut_line(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    let keep = line.floor_char_boundary(max.saturating_sub('…'.len_utf8()));
    format!("{}…", line[..keep].trim_end())
}

/// A doc line's first sentence, when it has more than one.
fn first_sentence(line: &str) -> &str {
    match line.find(". ") {
        Some(i) if i >= 20 => &line[..=i],
        _ => line,
    }
}

impl SynthesisPolicy for Map {
    fn computes(&self) -> bool {
        true
    }

    fn reads_sizes(&self) -> bool {
        true
    }

    fn id(&self) -> String {
        match &self.ranking {
            Ranking::Size => format!("{MAP_VERSION}:{}", self.max_bytes),
            Ranking::Imports => format!("{MAP_VERSION}:{}:imports", self.max_bytes),
            Ranking::Weights(w) => format!("{MAP_VERSION}:{}:{}", self.max_bytes, w.id()),
        }
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        let weights = match &self.ranking {
            Ranking::Weights(w) => Some(w),
            Ranking::Size | Ranking::Imports => None,
        };
        let mut children: Vec<Child> = input
            .children
            .iter()
            .map(|c| Child::read(c, weights.and_then(|w| w.weight(&c.path))))
            .collect();
        children.sort_by(|a, b| {
            (
                a.group,
                std::cmp::Reverse(a.weight),
                std::cmp::Reverse(a.bytes),
            )
                .cmp(&(
                    b.group,
                    std::cmp::Reverse(b.weight),
                    std::cmp::Reverse(b.bytes),
                ))
                .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
        });
        // Several frames of one child (a synthesis of every type) count once.
        children.dedup_by(|a, b| a.name == b.name);
        Ok(self.render(&children).into_bytes())
    }

    /// The offline default it replaced (`summary:L:B`) and earlier maps (other weights too).
    fn supersedes(&self, id: &str) -> bool {
        (id.starts_with("summary:") || id.starts_with("map:")) && id != self.id()
    }

    /// Ranked by imports: this map with the weights of the tree's import graph.
    fn with_tree(&self, store: &Store) -> Result<Option<Arc<dyn SynthesisPolicy>>> {
        Ok(match self.ranking {
            Ranking::Imports => Some(Arc::new(Map {
                max_bytes: self.max_bytes,
                ranking: Ranking::Weights(Arc::new(ImportWeights::of(store)?)),
            })),
            Ranking::Size | Ranking::Weights(_) => None,
        })
    }
}

impl Map {
    fn render(&self, children: &[Child]) -> String {
        let stats = Stats::sum(children);
        let description = describe(children);
        let mut out = String::new();
        match &description {
            Some(d) => {
                out.push_str(&cut_line(d, MAX_LINE_BYTES));
                out.push('\n');
                out.push_str(&stats.line());
            }
            None => out.push_str(&stats.line()),
        }
        out.push('\n');
        for (i, child) in children.iter().enumerate() {
            let rest = &children[i + 1..];
            // Room for the line that names what is left out, should anything be.
            let reserve = if rest.is_empty() { 0 } else { 64 };
            let full = child.entry(true);
            let part = if out.len() + full.len() + reserve <= self.max_bytes {
                full
            } else {
                child.entry(false)
            };
            if out.len() + part.len() + reserve > self.max_bytes {
                out.push_str(&left_out(
                    &children[i..],
                    self.max_bytes.saturating_sub(out.len()),
                ));
                break;
            }
            out.push_str(&part);
        }
        out
    }
}

/// `+ N more: a.rs, b/, ...` within `room` bytes (the names cut with a marker).
fn left_out(children: &[Child], room: usize) -> String {
    let names: Vec<&str> = children.iter().map(|c| c.name.as_str()).collect();
    let head = format!("+ {} more: ", children.len());
    let names = cut_line(&names.join(", "), room.saturating_sub(head.len() + 1));
    let line = format!("{head}{names}\n");
    if line.len() <= room {
        line
    } else {
        format!("+ {} more\n", children.len())
    }
}

/// The description of a file no grammar outlines, from its first lines: prose in a README
/// (not a title, its underline, markup or a directive), else the leading comment's prose.
/// Never code, a shebang, or a directive to a tool: a description is a sentence or nothing.
fn fallback_description(lines: &[&str], readme: bool) -> Option<String> {
    let prose = |text: &str| {
        let text = text.trim();
        let words = text
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic));
        (words.count() >= 3 && !outline::is_directive(text)).then(|| text.to_owned())
    };
    if readme {
        const MARKUP: [&str; 9] = ["..", "=", "-", "#!", "[!", "<", ":", "|", "*"];
        return lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !MARKUP.iter().any(|m| l.starts_with(m)))
            .find_map(|l| prose(l.trim_start_matches('#')));
    }
    // The comment at the top of the file, up to its first line of code.
    const COMMENTS: [&str; 5] = ["#", "//", "--", ";", "rem "];
    lines
        .iter()
        .map(|l| l.trim())
        .take_while(|l| COMMENTS.iter().any(|c| l.starts_with(c)))
        .filter(|l| !l.starts_with("#!"))
        .find_map(|l| {
            prose(
                l.trim_start_matches(['#', '/', '-', ';'])
                    .trim_start_matches("rem "),
            )
        })
}

/// Which group a child ranks in: READMEs, entry points, code and directories, the rest.
fn group(name: &str, kind: NodeKind, language: &str) -> u8 {
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or_default();
    if kind == NodeKind::Dir {
        return 2;
    }
    if stem == "readme" {
        0
    } else if matches!(stem, "main" | "index")
        || matches!(
            lower.as_str(),
            "lib.rs" | "mod.rs" | "__init__.py" | "__main__.py"
        )
    {
        1
    } else if is_code(language) || language == "Markdown" {
        2
    } else {
        3
    }
}

/// Whether a folder holds what sits beside the source rather than the source itself: tests,
/// fixtures, docs, examples, benchmarks, vendored code. Such folders rank after the code and
/// the source folders, whatever their size or import counts (deno's `tests/`, 12,502 files,
/// would otherwise come first).
fn is_aside(folder: &str) -> bool {
    matches!(
        folder.to_ascii_lowercase().as_str(),
        "test"
            | "tests"
            | "__tests__"
            | "testing"
            | "testdata"
            | "test_data"
            | "spec"
            | "specs"
            | "fixture"
            | "fixtures"
            | "doc"
            | "docs"
            | "documentation"
            | "example"
            | "examples"
            | "bench"
            | "benches"
            | "benchmark"
            | "benchmarks"
            | "vendor"
            | "third_party"
            | "thirdparty"
            | "node_modules"
    )
}

fn is_code(language: &str) -> bool {
    matches!(
        language,
        "Rust" | "Python" | "JavaScript" | "TypeScript" | "TSX" | "Go" | "Java" | "C" | "C++"
    )
}

/// A directory's own first line: its README's doc, else an entry point's, else that of a
/// `src` or `lib` folder in it.
fn describe(children: &[Child]) -> Option<String> {
    let find = |f: &dyn Fn(&Child) -> bool| {
        children
            .iter()
            .filter(|c| f(c))
            .find_map(|c| c.description.clone())
    };
    find(&|c| c.group == 0)
        .or_else(|| find(&|c| c.group == 1))
        .or_else(|| find(&|c| matches!(c.name.as_str(), "src/" | "lib/")))
}

/// Counts of what lies below a directory.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Stats {
    files: u64,
    dirs: u64,
    bytes: u64,
}

impl Stats {
    fn sum(children: &[Child]) -> Stats {
        let mut s = Stats::default();
        for c in children {
            s.files += c.stats.files;
            s.dirs += c.stats.dirs;
            s.bytes += c.stats.bytes;
        }
        s
    }

    /// `2 directories, 14 files, 210,114 bytes` (what [`Stats::parse`] reads back).
    fn line(&self) -> String {
        let plural = |n: u64, one: &str, many: &str| {
            format!("{} {}", grouped(n), if n == 1 { one } else { many })
        };
        let mut parts = Vec::new();
        if self.dirs > 0 {
            parts.push(plural(self.dirs, "directory", "directories"));
        }
        parts.push(plural(self.files, "file", "files"));
        parts.push(plural(self.bytes, "byte", "bytes"));
        parts.join(", ")
    }

    fn parse(line: &str) -> Option<Stats> {
        let mut s = Stats::default();
        let mut seen_bytes = false;
        for part in line.split(", ") {
            let (n, noun) = part.split_once(' ')?;
            let n: u64 = n.replace(',', "").parse().ok()?;
            match noun {
                "directory" | "directories" => s.dirs = n,
                "file" | "files" => s.files = n,
                "byte" | "bytes" => {
                    s.bytes = n;
                    seen_bytes = true;
                }
                _ => return None,
            }
        }
        seen_bytes.then_some(s)
    }
}

/// `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One child as the map sees it.
struct Child {
    /// Its name, with `/` after a directory's.
    name: String,
    group: u8,
    weight: u64,
    /// Bytes of source: the file's size, or the sum below a directory.
    bytes: u64,
    stats: Stats,
    /// Its first doc line (a directory's own first line).
    description: Option<String>,
    /// A file's top definitions, best first, and how many it has in all.
    symbols: Vec<String>,
    symbol_count: usize,
    /// A directory's components as its map lists them (`name: first line`), best first.
    components: Vec<String>,
}

impl Child {
    fn read(c: &ChildFrame, weight: Option<u64>) -> Child {
        let base = c.path.rsplit('/').next().unwrap_or(&c.path);
        let name = if c.kind == NodeKind::Dir {
            format!("{base}/")
        } else {
            base.to_owned()
        };
        let text = String::from_utf8_lossy(c.body());
        let mut child = Child {
            name,
            group: 3,
            weight: weight.unwrap_or(0),
            bytes: 0,
            stats: Stats::default(),
            description: None,
            symbols: Vec::new(),
            symbol_count: 0,
            components: Vec::new(),
        };
        if c.kind == NodeKind::Dir {
            child.read_dir(&text);
        } else {
            child.read_file(&text, base, c.kind, c.size);
        }
        child
    }

    /// A map frame: its first line (a description, or its stats), its stats, its entries.
    fn read_dir(&mut self, text: &str) {
        self.group = if is_aside(self.name.trim_end_matches('/')) {
            3
        } else {
            2
        };
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default().trim();
        match Stats::parse(first) {
            Some(stats) => self.stats = stats,
            None => {
                if !first.is_empty() {
                    self.description = Some(first.to_owned());
                }
                if let Some(stats) = text.lines().nth(1).and_then(Stats::parse) {
                    self.stats = stats;
                }
            }
        }
        self.stats.dirs += 1;
        self.bytes = self.stats.bytes;
        self.components = text
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(str::to_owned)
            .collect();
    }

    /// An outline: `LANGUAGE, N bytes, M lines`, the doc, then definitions; or the fallback's
    /// first lines, indented.
    fn read_file(&mut self, text: &str, name: &str, kind: NodeKind, size: Option<u64>) {
        self.stats.files = 1;
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default();
        let language = header.split(", ").next().unwrap_or_default();
        self.bytes = header
            .split(", ")
            .nth(1)
            .and_then(|b| b.strip_suffix(" bytes").or_else(|| b.strip_suffix(" byte")))
            .and_then(|n| n.parse().ok())
            // A frame that states no size (a model's summary): the file's size in the tree.
            .or(size)
            .unwrap_or(0);
        self.stats.bytes = self.bytes;
        self.group = group(name, kind, language);
        let mut symbols = Vec::new();
        let mut fallback = Vec::new();
        for (i, line) in lines.enumerate() {
            if let Some(sig) = top_level_signature(line) {
                symbols.push((rank(language, sig), symbols.len(), label(sig)));
            } else if let Some(first) = line.strip_prefix("  ") {
                // The fallback's lines of a file no grammar outlines, indented.
                fallback.push(first);
            } else if i == 0 && !line.trim().is_empty() && !line.starts_with("+ ") {
                // The doc line: the outline took it from a docstring or a doc comment.
                self.description = Some(line.trim().to_owned());
            }
        }
        if self.description.is_none() {
            self.description = fallback_description(&fallback, self.group == 0);
        }
        symbols.retain(|(rank, _, label)| *rank < SKIP && !label.is_empty());
        self.symbol_count = symbols.len();
        symbols.sort();
        self.symbols = symbols.into_iter().map(|(_, _, l)| l).collect();
    }

    /// Its lines in the map; `details` adds its definitions or components.
    fn entry(&self, details: bool) -> String {
        let first = match &self.description {
            Some(d) => cut_line(first_sentence(d), DESCRIPTION_BYTES),
            None => self.stats_or_size(),
        };
        let mut out = cut_line(&format!("- {}: {first}", self.name), MAX_LINE_BYTES);
        out.push('\n');
        if !details {
            return out;
        }
        if !self.symbols.is_empty() {
            let mut line = String::from(" ");
            let mut shown = 0;
            for s in &self.symbols {
                let left = self.symbol_count - shown - 1;
                let more = if left > 0 {
                    format!(" (+ {left} more)")
                } else {
                    String::new()
                };
                if line.len() + 1 + s.len() + more.len() > SYMBOLS_LINE_BYTES && shown > 0 {
                    break;
                }
                line.push(' ');
                line.push_str(&cut_line(s, SYMBOLS_LINE_BYTES / 2));
                line.push(',');
                shown += 1;
            }
            line.pop();
            if shown < self.symbol_count {
                line.push_str(&format!(" (+ {} more)", self.symbol_count - shown));
            }
            out.push_str(&line);
            out.push('\n');
        }
        for c in self.components.iter().take(COMPONENTS) {
            out.push_str("  ");
            out.push_str(&cut_line(c, COMPONENT_LINE_BYTES));
            out.push('\n');
        }
        if self.components.len() > COMPONENTS {
            let names: Vec<&str> = self.components[COMPONENTS..]
                .iter()
                .map(|c| c.split_once(": ").map_or(c.as_str(), |(n, _)| n))
                .collect();
            let line = format!("  + {} more: {}", names.len(), names.join(", "));
            out.push_str(&cut_line(&line, COMPONENT_LINE_BYTES));
            out.push('\n');
        }
        out
    }

    fn stats_or_size(&self) -> String {
        if self.name.ends_with('/') {
            let mut s = self.stats;
            s.dirs = s.dirs.saturating_sub(1);
            s.line()
        } else {
            format!("{} bytes", grouped(self.bytes))
        }
    }
}

/// The signature of a top-level definition line of an outline (`12: pub fn open() — doc`).
fn top_level_signature(line: &str) -> Option<&str> {
    let (n, rest) = line.split_once(": ")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(rest.split(" — ").next().unwrap_or(rest))
}

/// A rank that leaves a definition out of the map.
const SKIP: u8 = 9;

/// How important a top-level definition is, lower first: public or exported types, then
/// functions, then other public definitions, then the same for private ones. Impl blocks and
/// package clauses name nothing new and are left out.
fn rank(language: &str, sig: &str) -> u8 {
    let words: Vec<&str> = sig
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.first().copied().unwrap_or_default();
    let package = first == "package" && matches!(language, "Go" | "Java");
    if (matches!(first, "impl" | "unsafe") && words.contains(&"impl")) || package {
        return SKIP;
    }
    let has = |set: &[&str]| words.iter().take(6).any(|w| set.contains(w));
    let kind = if has(&[
        "struct",
        "enum",
        "trait",
        "class",
        "interface",
        "type",
        "union",
        "record",
    ]) {
        0
    } else if has(&["fn", "def", "function", "func"]) || (language == "Java" && sig.contains('(')) {
        1
    } else {
        2
    };
    let name = label(sig).rsplit(' ').next().unwrap_or_default().to_owned();
    let public = match language {
        // `pub(crate)` and its like are not the crate's interface.
        "Rust" => sig.starts_with("pub "),
        "JavaScript" | "TypeScript" | "TSX" => first == "export",
        "Java" => words.contains(&"public"),
        "Go" => name.starts_with(|c: char| c.is_ascii_uppercase()),
        "Python" => !name.starts_with('_'),
        "C" | "C++" => first != "static",
        _ => true,
    };
    if public { kind } else { 3 + kind }
}

/// A definition's signature up to its name: `pub fn open(path: &Path)` is `pub fn open`.
fn label(sig: &str) -> String {
    let sig = sig.trim();
    // `pub(crate)` keeps its parentheses.
    let (vis, rest) = match sig.strip_prefix("pub(") {
        Some(r) => match r.split_once(')') {
            Some((inner, rest)) => (format!("pub({inner})"), rest),
            None => (String::new(), sig),
        },
        None => (String::new(), sig),
    };
    let mut end = rest.len();
    let bytes = rest.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let stop = match b {
            b'(' | b'<' | b'{' | b'=' | b'[' => i > 0,
            b':' => i > 0 && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':'),
            _ => false,
        };
        if stop {
            end = i;
            break;
        }
    }
    let cut = rest[..end].trim();
    let label = if vis.is_empty() {
        cut.to_owned()
    } else {
        format!("{vis} {cut}")
    };
    if label.is_empty() {
        cut_line(sig, 60)
    } else {
        label
    }
}
