//! A task's context within a token budget: the definitions a search finds for the task, the
//! best one of each of the first files first ([`BUNDLE_BREADTH`]), then ranked across files
//! by function score ([`crate::search::functions_at_depth`], deeper into the best files than a
//! function list: [`BUNDLE_DEPTH`]), each with its doc comment and attributes above it and
//! the blank lines after it (a Python docstring past its first paragraph weighed apart, less:
//! `docstring.rs`), each file's module-level lines (its imports and constants, past its
//! licence or docstring; a small file's every line: `module_lines.rs`) after its best
//! definition, and an outline for a found file with no definition that matched;
//! taken best first while they fit; then, where room is left, the first line of the callers
//! and callees of its first definitions (`neighbours.rs`). What `merkle context`, the MCP
//! `context` tool and the agent's `task_context` tool give, ready to paste into a prompt.
//!
//! Tokens are estimated at four bytes each, as the LLM producers count them; the budget bounds
//! the estimate of the Markdown of the files and their sections (headings and fences
//! included; the bundle's first line and its list of files left out are not counted). Nothing
//! is cut mid-line: a definition longer than [`MAX_SECTION_LINES`] shows its first lines and a
//! window around the lines holding most of the task's words first, the rest of it at
//! [`REST_SHARE`] of its score; a definition scoring below
//! [`RELATIVE_CUT`] of the best is never shown, a piece that does not fit what is left of the
//! budget is left out, or a definition cut to the lines around its focus that fit (at least
//! [`MIN_CUT_LINES`]; its file is named in [`Bundle::omitted`] if nothing of it fitted), and a
//! line is shown once. The same tree and task give the same bytes.
use merkle_store::{NodeKind, Store};
use retrieve::TextIndex;

mod cut;
mod docstring;
mod lead;
mod module_lines;
mod neighbours;

pub use cut::MIN_CUT_LINES;
pub use module_lines::SMALL_FILE_LINES;
pub use neighbours::{NEIGHBOUR_ROOM, NEIGHBOUR_SOURCES, NEIGHBOURS_EACH};

use self::cut::{rest_of, shrunk_to_fit, spans_of};
use self::lead::{LEAD_LINES, lead_markers, leads_definition};
use crate::error::Result;
use crate::facts::TreeFacts;
use crate::regenerate::{FrameProducer, Outline};
use crate::search::{
    FUNCTION_SYMBOLS, Hit, Ranking, SearchRequest, functions_at_depth, index_dir, search,
    sync_index,
};

/// The most lines of one definition a bundle shows: a longer one shows its first
/// [`HEAD_LINES`] and a window of the rest around the lines that match.
pub const MAX_SECTION_LINES: usize = 150;
/// The first lines of a long definition a bundle shows (its signature and opening).
pub const HEAD_LINES: usize = 12;
/// A long definition's lines outside its head and window (a type's outside its head) weigh
/// this share of it: shown once the budget has room for them, after the definitions scoring
/// above that share (the lines a fix changes lie there as often as in the window:
/// `patch_inplace`'s 267 lines, the task's words in a branch 60 lines below the one
/// changed). Against never: line recall at 16k tokens on the held-out sets 69.9 -> 71.9%,
/// Multi-SWE-bench 59.5 -> 62.3%, dev the same (at 4k/8k: held-out +0.3/+0.7, the others the
/// same); at 0.8, dev at 4k/8k -3.0/-1.2; at 0.35, dev the same, Multi-SWE-bench at 16k -0.3.
pub const REST_SHARE: f64 = 0.5;
/// How a definition's share of its file's best weighs in a bundle (see
/// [`crate::search::functions_at_depth`]): lower than a function list's
/// ([`crate::search::FUNCTION_DEPTH`]), so a bundle shows more of its best files before the
/// next files' best definitions. The file ranking is surer than the function ranking within a
/// file (the fixed file is first for about 6 issues in 10), and a reader of the bundle reads
/// the file's other definitions beside its best. On the dev set: line recall at 8k tokens
/// +1.9 points, on Multi-SWE-bench +0.9 (at 4k: +1.5 and -0.9). At 0.35 (the fifty-fifth
/// session): dev at 4k/8k -3.0/-1.9, Multi-SWE-bench +0.1/+0.2.
pub const BUNDLE_DEPTH: f64 = 0.25;
/// How many of the best files a bundle shows the best definition of before it reads deeper
/// into any: the fixed file is first for about 6 issues in 10, among the first three for about
/// 8. On the dev set: line recall at 4k and 8k tokens +1.5 and +1.0 points (2: the same; 5: +0.6
/// at 8k; 10: -3.0); on Multi-SWE-bench +1.8 at 4k.
pub const BUNDLE_BREADTH: usize = 3;
/// A definition scoring below this share of the best one is never shown.
pub const RELATIVE_CUT: f64 = 0.05;
/// A file's module-level lines (imports, constants) weigh this share of its best definition:
/// they come before its definitions scoring under two fifths of its best (at the bundle's
/// depth). About one changed line in thirteen on the dev set lies outside every definition, most
/// of them imports; on Multi-SWE-bench a third. Dev line recall at 8k tokens +1.0 point and
/// Multi-SWE-bench +1.0 against 0.5, 4k -0.4 on both; 1.0: dev 8k unchanged (again in the
/// fifty-sixth session, with Java's imports and small files shown: dev 8k -0.8, Multi-SWE-bench
/// 4k/8k +0.5/-0.4).
pub const MODULE_SHARE: f64 = 0.8;
/// The head of the type holding a definition (its attributes, fields) weighs this share of the
/// definition. Line recall at 4k/8k tokens, against 0.5: at 0.3, dev +0.1/-0.3 and
/// Multi-SWE-bench -0.3/-0.4; at 0.7, dev 0/-0.7 and Multi-SWE-bench +0.1/-0.4.
pub const HEAD_SHARE: f64 = 0.5;
/// The most module-level lines of one file a bundle shows: the first and the last half of
/// those before its first definition (`module_lines.rs`).
pub const MODULE_LINES: usize = 40;

/// What to bundle.
#[derive(Clone, Copy, Debug)]
pub struct BundleRequest<'a> {
    /// The task: an issue, a traceback, a question, a symbol name.
    pub task: &'a str,
    /// The most tokens the bundle may hold, as `tokens` counts them.
    pub budget: usize,
    /// The most files to look at, best first.
    pub files: usize,
    pub tokens: TokenCounter<'a>,
}

/// How a bundle counts its tokens: four bytes a token ([`estimate_tokens`]) unless the caller
/// counts in a model's tokens (its tokenizer, or a calibrated estimate: context has none of
/// its own).
#[derive(Clone, Copy, Default)]
pub struct TokenCounter<'a>(Option<&'a (dyn Fn(&str) -> usize + Sync)>);

impl<'a> TokenCounter<'a> {
    pub fn new(count: &'a (dyn Fn(&str) -> usize + Sync)) -> Self {
        Self(Some(count))
    }

    /// `text`'s tokens.
    pub fn count(&self, text: &str) -> usize {
        match self.0 {
            Some(count) => count(text),
            None => estimate_tokens(text),
        }
    }
}

impl std::fmt::Debug for TokenCounter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "TokenCounter(the caller's)"
        } else {
            "TokenCounter(4 bytes a token)"
        })
    }
}

/// A piece of a file in a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// `definition` (a matched definition's source, or a run of it), `module` (the file's
    /// module-level lines before its first definition), `file` (the rest of a small file,
    /// [`SMALL_FILE_LINES`]), `outline` (the file's outline), or
    /// `caller` / `callee` (the first line of a definition calling, or called by, one of the
    /// bundle's first definitions).
    pub kind: &'static str,
    /// The definition's name; `None` for an outline.
    pub name: Option<String>,
    /// The 1-based lines it shows (an outline covers the whole file).
    pub line_start: usize,
    pub line_end: usize,
    /// Its text: the source lines as they are, or the outline.
    pub text: String,
}

/// A file in a bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleFile {
    pub path: String,
    /// Its search score.
    pub score: f64,
    /// Why the search found it.
    pub why: Vec<String>,
    pub sections: Vec<Section>,
}

/// A task's context.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// The files, best first, each with what fitted of it.
    pub files: Vec<BundleFile>,
    /// The estimated tokens of the sections (what [`BundleRequest::budget`] bounds).
    pub tokens: usize,
    /// Files the search found that nothing of fitted, best first.
    pub omitted: Vec<String>,
}

impl Bundle {
    /// The bundle as every front end answers it: `{budget, tokens, files: [{path, score,
    /// why, sections: [{kind, name, line_start, line_end, text}]}], omitted}`.
    pub fn json(&self, budget: usize) -> serde_json::Value {
        serde_json::json!({
            "budget": budget,
            "tokens": self.tokens,
            // How `tokens` was counted; a front end that counts in a model's tokens says so.
            "counted": {"model": null, "source": "bytes"},
            "files": self.files.iter().map(|f| serde_json::json!({
                "path": f.path,
                "score": f.score,
                "why": f.why,
                "sections": f.sections.iter().map(|s| serde_json::json!({
                    "kind": s.kind,
                    "name": s.name,
                    "line_start": s.line_start,
                    "line_end": s.line_end,
                    "text": s.text,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "omitted": self.omitted,
        })
    }

    /// The bundle as Markdown to paste into a prompt: per file a heading and why it was found,
    /// then each section under its name and line span, in a fenced block tagged with the
    /// file's language; last, the files over the budget.
    pub fn markdown(&self, budget: usize) -> String {
        let files = match self.files.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        let mut out = format!(
            "# Context: {files} (about {} of {budget} tokens)\n",
            self.tokens
        );
        for f in &self.files {
            out.push_str(&file_heading(&f.path, &f.why));
            for s in &f.sections {
                out.push_str(&section_markdown(&f.path, s));
            }
        }
        if !self.omitted.is_empty() {
            out.push_str(&format!(
                "\nalso found, over the budget: {}\n",
                self.omitted.join(", ")
            ));
        }
        out.trim_end().to_owned()
    }
}

/// A file's heading in the Markdown: its path, and why the search found it.
fn file_heading(path: &str, why: &[String]) -> String {
    let mut out = format!("\n## {path}\n");
    if !why.is_empty() {
        out.push_str(&format!("why: {}\n", why.join("; ")));
    }
    out
}

/// A section in the Markdown: its name and lines, then its text in a fence longer than any run
/// of backticks in it (a Markdown file's own fences, a doc comment's example).
fn section_markdown(path: &str, s: &Section) -> String {
    let lang = || crate::language(path).to_ascii_lowercase();
    let (label, tag) = match (&s.name, s.kind) {
        (Some(name), _) => (
            format!("{name}, lines {}-{}:", s.line_start, s.line_end),
            lang(),
        ),
        (None, "module") => (
            format!("module level, lines {}-{}:", s.line_start, s.line_end),
            lang(),
        ),
        (None, "file") => (format!("lines {}-{}:", s.line_start, s.line_end), lang()),
        (None, _) => ("outline:".to_owned(), "text".to_owned()),
    };
    let longest = s.text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("\n{label}\n{fence}{tag}\n{}\n{fence}\n", s.text)
}

/// The tokens `text` is estimated to cost: four bytes each, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The context of `req.task` in the tree `facts` describes (see the module documentation),
/// with the index beside the store brought in step first.
pub fn bundle(store: &Store, facts: &TreeFacts, req: &BundleRequest<'_>) -> Result<Bundle> {
    let (index, _) = sync_index(store, facts, &index_dir(store))?;
    bundle_in(store, facts, &index, req)
}

/// [`bundle`] with `index` already in step with `facts` (by the caller, who may share it).
pub fn bundle_in(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    req: &BundleRequest<'_>,
) -> Result<Bundle> {
    let hits = search(
        store,
        facts,
        index,
        &SearchRequest {
            query: req.task,
            limit: req.files,
            filter: None,
            ranking: Ranking::Fused,
            symbols: FUNCTION_SYMBOLS,
        },
    )?;
    let mut files: Vec<Filling> = Vec::with_capacity(hits.len());
    for hit in &hits {
        files.push(Filling::read(store, facts, hit)?);
    }
    let mut out = Bundle {
        files: Vec::new(),
        tokens: 0,
        omitted: Vec::new(),
    };
    let mut taken = 0;
    let mut sources: Vec<neighbours::Source> = Vec::new();
    for piece in pieces(&hits, &files, docstring::doc_share(req.task)) {
        let before = taken;
        let file = &mut files[piece.file];
        if piece.doc {
            file.doc_spans.extend(&piece.spans);
        }
        for s in file.uncovered(&piece) {
            // What the file's heading costs in the Markdown, charged with its first section.
            let count = |text: &str| req.tokens.count(text);
            let heading = if file.sections.is_empty() {
                count(&file_heading(&hits[piece.file].path, &hits[piece.file].why))
            } else {
                0
            };
            let path = &hits[piece.file].path;
            let cost = count(&section_markdown(path, &s));
            let room = req.budget.saturating_sub(out.tokens + heading);
            let (s, cost) = if cost <= room {
                (s, cost)
            } else if let Some(cut) =
                shrunk_to_fit(path, &s, piece.focus.or(Some(piece.line)), room, &count)
            {
                cut
            } else {
                continue;
            };
            out.tokens += cost + heading;
            file.take(s, taken);
            taken += 1;
        }
        // The definitions shown first, whose callers and callees may follow.
        if taken > before
            && piece.kind == "definition"
            && let Some(name) = &piece.name
            && sources.len() < NEIGHBOUR_SOURCES
        {
            let source = (hits[piece.file].path.clone(), name.clone(), piece.line);
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
    }
    // Files in the order of their best piece taken; within a file, sections by line.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| (files[i].first.unwrap_or(usize::MAX), i));
    for i in order {
        let hit = &hits[i];
        let mut sections = std::mem::take(&mut files[i].sections);
        if sections.is_empty() {
            out.omitted.push(hit.path.clone());
            continue;
        }
        sections.sort_by_key(|s| s.line_start);
        let sections = module_lines::rejoined(docstring::joined(sections, &files[i].doc_spans));
        out.files.push(BundleFile {
            path: hit.path.clone(),
            score: hit.score,
            why: hit.why.clone(),
            sections,
        });
    }
    neighbours::add_neighbours(
        store,
        facts,
        index,
        &mut out,
        &sources,
        req.budget,
        &req.tokens,
    )?;
    Ok(out)
}

/// Something a bundle may show of a file: a definition (the lines of its span, cut around its
/// focus where long), the file's module-level lines, or its outline.
#[derive(Clone, Debug)]
struct Piece {
    /// Its file's place in the hits.
    file: usize,
    score: f64,
    kind: &'static str,
    name: Option<String>,
    /// The 1-based lines it would show (one span, or a head and a window for a long
    /// definition), in order.
    spans: Vec<(usize, usize)>,
    /// The line a reader should see first, if any (a definition's).
    focus: Option<usize>,
    /// Where the definition starts (its doc comment and attributes left out): what `refs`
    /// is asked about.
    line: usize,
    /// Whether it is the rest of a definition's docstring (`docstring.rs`), which joins the
    /// definition's code where both are taken.
    doc: bool,
}

/// What a bundle may show, best first: the hits' definitions by function score across files
/// (none far below the best: [`RELATIVE_CUT`]); each file's module-level lines just after its
/// best definition, weighed at [`MODULE_SHARE`] of it; an outline for a file with no
/// definition that matched, last.
fn pieces(hits: &[Hit], files: &[Filling], doc_share: f64) -> Vec<Piece> {
    let mut ranked = functions_at_depth(hits, usize::MAX, BUNDLE_DEPTH);
    let best = ranked.first().map_or(0.0, |f| f.score);
    // The best definition of each of the first files comes first, in the files' order
    // (stable: they tie at the best score, in the ranking's order).
    for hit in hits.iter().take(BUNDLE_BREADTH) {
        if let Some(f) = ranked.iter_mut().find(|f| f.path == hit.path) {
            f.score = best;
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut out = Vec::new();
    let mut module_taken = vec![false; hits.len()];
    for f in ranked {
        if f.score < best * RELATIVE_CUT {
            break;
        }
        let Some(i) = hits.iter().position(|h| h.path == f.path) else {
            continue;
        };
        let s = &f.symbol;
        // A type holding definitions shows its head (its attributes); its functions rank on
        // their own. A head already taken with one of its functions, as it is weighed there,
        // is not taken again.
        let (spans, focus, doc) = match files[i].head_of(s.line_start).map(|h| files[i].led(h)) {
            Some(head) if out.iter().any(|p: &Piece| p.file == i && p.spans == [head]) => {
                continue;
            }
            Some(head) => (vec![head], s.focus, None),
            None => files[i].definition_spans(s),
        };
        // A long definition's lines outside its head and window, weighed apart; for a type
        // shown by its head, the rest of its body: its fields, constants and the lines
        // between its functions, which still rank on their own (a line is shown once).
        // Against a function's rest only: held-out line recall 56.9/65.5/71.2 ->
        // 57.5/65.9/71.9%, Multi-SWE-bench at 16k 60.8 -> 62.3%, dev the same.
        let rest = rest_of(s.line_start, s.line_end, &spans, doc.as_deref());
        for (score, spans, focus, doc) in std::iter::once((f.score, spans, focus, false))
            .chain(doc.map(|d| (f.score * doc_share, d, None, true)))
            .chain((!rest.is_empty()).then_some((f.score * REST_SHARE, rest, None, true)))
        {
            out.push(Piece {
                file: i,
                score,
                kind: "definition",
                name: Some(s.name.clone()),
                spans,
                focus,
                line: s.line_start,
                doc,
            });
        }
        // The head of the type holding it (its attributes, fields), once.
        if let Some((name, own, span)) = files[i]
            .head_of_container(s.line_start)
            .map(|(name, h)| (name, h.0, files[i].led(h)))
            && !out
                .iter()
                .any(|p: &Piece| p.file == i && p.kind == "definition" && p.spans == [span])
        {
            out.push(Piece {
                file: i,
                score: f.score * HEAD_SHARE,
                kind: "definition",
                name: Some(name),
                spans: vec![span],
                focus: None,
                line: own,
                doc: false,
            });
        }
        if !std::mem::replace(&mut module_taken[i], true) && !files[i].module.is_empty() {
            out.push(Piece {
                file: i,
                score: f.score * MODULE_SHARE,
                kind: if files[i].whole { "file" } else { "module" },
                name: None,
                spans: files[i].module.clone(),
                focus: None,
                line: 1,
                doc: false,
            });
        }
    }
    for (i, (hit, file)) in hits.iter().zip(files).enumerate() {
        if hit.symbols.is_empty() && file.lines > 0 {
            out.push(Piece {
                file: i,
                score: 0.0,
                kind: "outline",
                name: None,
                spans: vec![(1, file.lines)],
                focus: None,
                line: 1,
                doc: false,
            });
        }
    }
    // Stable: the function ranking's order holds among equal scores.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// A container's head: from its first line to before its first inner definition, at most
/// [`HEAD_LINES`] + 8 lines.
fn head_span(start: usize, inner: usize) -> (usize, usize) {
    let end = (inner - 1).min(start + HEAD_LINES + 7);
    (start, end.max(start))
}

/// Of `symbols`, those holding another (not a field or a key): name, first and last line, and
/// the first line of the first one they hold.
fn containers(symbols: &[crate::facts::FactSymbol]) -> Vec<(String, usize, usize, usize)> {
    use outline::Kind;
    let inner =
        |s: &crate::facts::FactSymbol| !matches!(s.kind, Kind::Field | Kind::Key | Kind::Variant);
    // Where the inner definitions start, sorted: each symbol's first inner one is looked up,
    // not searched for among all of them.
    let mut starts: Vec<usize> = symbols
        .iter()
        .filter(|s| inner(s))
        .map(|s| s.line)
        .collect();
    starts.sort_unstable();
    symbols
        .iter()
        .filter_map(|c| {
            let first = *starts.get(starts.partition_point(|&l| l <= c.line))?;
            (first <= c.end_line).then(|| (c.name.clone(), c.line, c.end_line, first))
        })
        .collect()
}

/// The most blank lines after a definition its section shows (see [`Filling::through_blanks`]).
const TRAILING_BLANKS: usize = 2;

/// 1-based line spans, inclusive, in order.
type Spans = Vec<(usize, usize)>;

/// A hit's file as a bundle fills it: its lines, its module-level span, what is taken.
struct Filling {
    text: Option<String>,
    /// Its language, by its name: which lines may lead a definition ([`lead_markers`]).
    language: Option<outline::Language>,
    /// Its line count.
    lines: usize,
    /// Its outline (produced only for a file with no matched definition).
    outline: Option<String>,
    /// The module-level lines before its first definition it shows, if any, or all its lines
    /// past its preamble where it is small ([`module_lines::shown`]).
    module: Vec<(usize, usize)>,
    /// Whether `module` is the whole file past its preamble.
    whole: bool,
    /// Its definitions that hold others (classes, structs, impls), with where their first
    /// inner definition starts.
    containers: Vec<(String, usize, usize, usize)>,
    /// Where each of its lines is in its text (byte ranges, as [`str::lines`] cuts them).
    line_spans: Vec<(usize, usize)>,
    /// Lines shown already, 1-based (index 0 unused).
    covered: Vec<bool>,
    sections: Vec<Section>,
    /// The spans of the docstrings weighed apart from their definitions' code, where a
    /// section of one joins the code's ([`docstring::joined`]).
    doc_spans: Spans,
    /// The place of the first piece taken of it, among all pieces taken.
    first: Option<usize>,
}

impl Filling {
    fn read(store: &Store, facts: &TreeFacts, hit: &Hit) -> Result<Filling> {
        let mut out = Filling {
            text: None,
            language: outline::Language::from_path(&hit.path),
            lines: 0,
            outline: None,
            module: Vec::new(),
            whole: false,
            containers: Vec::new(),
            line_spans: Vec::new(),
            covered: Vec::new(),
            sections: Vec::new(),
            doc_spans: Vec::new(),
            first: None,
        };
        let Some(node) = store.node_at(&hit.path)? else {
            return Ok(out);
        };
        if node.kind != NodeKind::File {
            return Ok(out);
        }
        // A file that changed or vanished since the scan is left out, not an error.
        let Ok(content) = store.read_content(&node) else {
            return Ok(out);
        };
        let Ok(text) = String::from_utf8(content.to_vec()) else {
            return Ok(out);
        };
        out.line_spans = text
            .lines()
            .map(|l| {
                let at = l.as_ptr() as usize - text.as_ptr() as usize;
                (at, at + l.len())
            })
            .collect();
        out.lines = out.line_spans.len();
        out.covered = vec![false; out.lines + 1];
        if hit.symbols.is_empty() {
            let outline = Outline::default()
                .produce(&node, &content)
                .unwrap_or_default();
            out.outline = Some(String::from_utf8_lossy(&outline).trim_end().to_owned());
        } else if let Some(entry) = facts.file(&hit.path) {
            let first = facts.facts_of(store, &[entry])?.into_iter().next();
            let symbols: &[crate::facts::FactSymbol] = first.as_ref().map_or(&[], |f| &f.symbols);
            out.containers = containers(symbols);
            // A package clause (Go's, Java's) is a line of the module's, its imports after it.
            let first_def = first
                .iter()
                .flat_map(|f| &f.symbols)
                .filter(|s| s.kind != outline::Kind::Package)
                .map(|s| s.line)
                .min();
            let lines: Vec<&str> = text.lines().collect();
            (out.module, out.whole) = module_lines::shown(&lines, first_def, out.language);
        }
        out.text = Some(text);
        Ok(out)
    }

    /// The head of the innermost definition holding the one starting at `line` (a class's name
    /// and attributes, up to its first inner definition, at most [`HEAD_LINES`] + 8 lines).
    fn head_of_container(&self, line: usize) -> Option<(String, (usize, usize))> {
        self.containers
            .iter()
            .filter(|(_, start, end, _)| *start < line && line <= *end)
            .max_by_key(|(_, start, _, _)| *start)
            .map(|(name, start, _, inner)| (name.clone(), head_span(*start, *inner)))
    }

    /// The head of the definition starting at `line` where it holds others, as
    /// [`Filling::head_of_container`] gives it.
    fn head_of(&self, line: usize) -> Option<(usize, usize)> {
        self.containers
            .iter()
            .find(|(_, start, _, _)| *start == line)
            .map(|(_, start, _, inner)| head_span(*start, *inner))
    }

    /// The span `(start, end)` of a definition, or of a type's head, with the lines that lead
    /// it ([`Filling::through_lead`]), no more of them than it has (at least 2, at most
    /// [`LEAD_LINES`]).
    fn led(&self, (start, end): (usize, usize)) -> (usize, usize) {
        let most = (end + 1).saturating_sub(start).clamp(2, LEAD_LINES);
        (self.through_lead(start, most), end)
    }

    /// `start`, or the first of the lines right above it that lead a definition: its doc
    /// comment, attributes, decorators and annotations ([`leads_definition`]; at most `most`).
    fn through_lead(&self, start: usize, most: usize) -> usize {
        let (Some(text), Some(lang)) = (&self.text, self.language) else {
            return start;
        };
        let line = |n: usize| self.line_spans.get(n - 1).map(|&(a, b)| &text[a..b]);
        let Some(def) = line(start) else {
            return start;
        };
        let indent = def.len() - def.trim_start().len();
        let mut first = start;
        while first > 1 && start - first < most {
            match line(first - 1) {
                Some(l) if leads_definition(l, indent, lead_markers(lang)) => first -= 1,
                _ => break,
            }
        }
        first
    }

    /// The spans a definition `s` shows (see [`spans_of`]), with its doc comment and attributes
    /// above it and the blank lines after it (where a fix adds a definition after this one, it
    /// inserts there); the line a reader should see first; and the rest of its docstring,
    /// apart (weighed less: prose, not code), with a long definition's window put on its code.
    fn definition_spans(
        &self,
        s: &crate::search::SymbolHit,
    ) -> (Spans, Option<usize>, Option<Spans>) {
        let cut = self.docstring_rest(s.line_start, s.line_end);
        let focus = match (s.focus, cut) {
            (Some(f), Some((a, b))) if (a..=b).contains(&f) => Some((b + 1).min(s.line_end)),
            (focus, _) => focus,
        };
        let mut spans = spans_of(s.line_start, s.line_end, focus);
        if let Some(first) = spans.first_mut() {
            first.0 = self.led((s.line_start, s.line_end)).0;
        }
        if let Some(last) = spans.last_mut().filter(|l| l.1 == s.line_end) {
            last.1 = self.through_blanks(last.1);
        }
        match cut {
            Some(cut) => {
                let doc = Some(docstring::within(&spans, cut)).filter(|d| !d.is_empty());
                (docstring::without(&spans, cut), focus, doc)
            }
            None => (spans, focus, None),
        }
    }

    /// The lines of the docstring of the Python definition spanning `start..=end` that a
    /// bundle weighs apart ([`docstring::docstring_rest`]).
    fn docstring_rest(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let text = self.text.as_ref()?;
        if self.language != Some(outline::Language::Python) {
            return None;
        }
        let line = |n: usize| {
            let &(a, b) = self.line_spans.get(n.checked_sub(1)?)?;
            Some(&text[a..b])
        };
        docstring::docstring_rest(&line, start, end.min(self.lines))
    }

    /// `end`, or the last of the blank lines right after it (at most [`TRAILING_BLANKS`]).
    fn through_blanks(&self, end: usize) -> usize {
        let Some(text) = &self.text else {
            return end;
        };
        let blank = |n: usize| {
            let (a, b) = self.line_spans[n - 1];
            text[a..b].trim().is_empty()
        };
        let mut last = end;
        while last < self.lines && last - end < TRAILING_BLANKS && blank(last + 1) {
            last += 1;
        }
        last
    }

    /// The sections `piece` would add: its spans less the lines shown already, as runs.
    fn uncovered(&self, piece: &Piece) -> Vec<Section> {
        let Some(text) = &self.text else {
            return Vec::new();
        };
        if piece.kind == "outline" {
            return vec![Section {
                kind: "outline",
                name: None,
                line_start: 1,
                line_end: self.lines.max(1),
                text: self.outline.clone().unwrap_or_default(),
            }];
        }
        let line = |n: usize| {
            let (a, b) = self.line_spans[n - 1];
            &text[a..b]
        };
        let mut out = Vec::new();
        for &(a, b) in &piece.spans {
            let b = b.min(self.lines);
            let mut at = a;
            while at <= b {
                if self.covered[at] {
                    at += 1;
                    continue;
                }
                let from = at;
                while at <= b && !self.covered[at] {
                    at += 1;
                }
                // A run of blank lines shows nothing.
                if (from..at).all(|n| line(n).trim().is_empty()) {
                    continue;
                }
                out.push(Section {
                    kind: piece.kind,
                    name: piece.name.clone(),
                    line_start: from,
                    line_end: at - 1,
                    text: (from..at).map(line).collect::<Vec<_>>().join("\n"),
                });
            }
        }
        out
    }

    /// Takes `s` into the bundle, as the `order`-th section taken of any file.
    fn take(&mut self, s: Section, order: usize) {
        if s.kind != "outline" {
            for l in s.line_start..=s.line_end.min(self.lines) {
                self.covered[l] = true;
            }
        }
        self.first.get_or_insert(order);
        self.sections.push(s);
    }
}
