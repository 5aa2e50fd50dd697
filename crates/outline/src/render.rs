//! An outline as text within a byte budget: shallow symbols first, and a count of what did not
//! fit in each scope.
use std::fmt::Write as _;

use crate::{Kind, Outline, Symbol};

/// How to render an outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderConfig {
    /// The most bytes the text may take. The first line (language, size, line count) is always
    /// written, whatever the budget.
    pub max_bytes: usize,
}

impl Default for RenderConfig {
    fn default() -> RenderConfig {
        RenderConfig { max_bytes: 4096 }
    }
}

/// One symbol of the flattened tree.
struct Entry<'a> {
    symbol: &'a Symbol,
    depth: usize,
    /// The scope it is in: an entry's index, or `None` for the file.
    parent: Option<usize>,
    children: Vec<usize>,
    line: String,
    /// The line without signature and doc (`LINE: kind name`), for when the full one does
    /// not fit.
    short_line: String,
}

/// Symbols left out of one scope, by kind, in the order the kinds first appear there.
#[derive(Default)]
struct Omitted {
    by_kind: Vec<(Kind, usize)>,
    /// Count them all as definitions, for a budget too small for one part per kind.
    compact: bool,
}

impl Omitted {
    fn note(&self, indent: usize, scope: Option<&Symbol>) -> String {
        if self.compact {
            let n: usize = self.by_kind.iter().map(|(_, n)| n).sum();
            return match n {
                0 => String::new(),
                1 => format!("{:indent$}+ 1 more definition\n", ""),
                n => format!("{:indent$}+ {n} more definitions\n", ""),
            };
        }
        let parts: Vec<String> = self
            .by_kind
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{n} more {}", k.nouns(*n)))
            .collect();
        if parts.is_empty() {
            return String::new();
        }
        let mut note = format!("{:indent$}+ {}", "", parts.join(", "));
        if let Some(s) = scope {
            let noun = match s.kind {
                Kind::Heading => "section",
                k => k.noun(),
            };
            let _ = write!(note, " in {noun} {}", s.name);
        }
        note.push('\n');
        note
    }

    fn add(&mut self, kind: Kind, n: isize) {
        match self.by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count = count.saturating_add_signed(n),
            None => self.by_kind.push((kind, n.max(0).unsigned_abs())),
        }
    }
}

/// The outline as text: its first line (language, bytes, lines), the file's doc, then one line
/// per symbol (`LINE: signature — doc`, indented two spaces per scope) in source order.
/// The first line, and a note when anything is left out, are written whatever the budget (the
/// note then counts "definitions" when one part per kind does not fit).
/// Symbols are admitted shallowest first (macros after all the rest), in source order within
/// a depth, while they fit in
/// `config.max_bytes` (as `LINE: kind name` when the full line does not); each scope with symbols left out ends with a note counting them by kind
/// (`+ 37 more methods in impl Store`), the file's own at the end (`+ 3 more functions`).
pub fn render(outline: &Outline, config: &RenderConfig) -> String {
    let mut entries: Vec<Entry<'_>> = Vec::new();
    let mut top = Vec::new();
    flatten(&outline.symbols, None, 0, &mut entries, &mut top);

    let mut out = format!(
        "{}, {} bytes, {} lines\n",
        outline.language.name(),
        outline.bytes,
        outline.lines
    );
    let budget = config.max_bytes as isize;
    let mut used = out.len() as isize;

    // Every symbol starts out omitted; scope `entries.len()` is the file.
    let file = entries.len();
    let mut omitted: Vec<Omitted> = (0..=file).map(|_| Omitted::default()).collect();
    for e in &entries {
        omitted[e.parent.unwrap_or(file)].add(e.symbol.kind, 1);
    }
    let note_len = |omitted: &[Omitted], scope: usize| -> isize {
        let (indent, sym) = match entries.get(scope) {
            Some(e) => (2 * (e.depth + 1), Some(e.symbol)),
            None => (0, None),
        };
        omitted[scope].note(indent, sym).len() as isize
    };
    if used + note_len(&omitted, file) > budget {
        omitted[file].compact = true;
    }
    used += note_len(&omitted, file);
    if let Some(doc) = outline
        .doc
        .as_ref()
        .filter(|d| used + (d.len() as isize) < budget)
    {
        out.push_str(doc);
        out.push('\n');
        used += doc.len() as isize + 1;
    }

    // Shallowest first, macros after everything else, so that a header's configuration
    // macros never crowd its types and functions out of the budget (they are still counted).
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| (entries[i].symbol.kind == Kind::Macro, entries[i].depth));
    let mut included = vec![false; entries.len()];
    let mut short = vec![false; entries.len()];
    for i in order {
        let scope = entries[i].parent.unwrap_or(file);
        if scope != file && !included[scope] {
            continue;
        }
        let kind = entries[i].symbol.kind;
        let before = note_len(&omitted, scope);
        omitted[scope].add(kind, -1);
        let mut cost = note_len(&omitted, scope) - before;
        if !entries[i].children.is_empty() {
            cost += note_len(&omitted, i);
        }
        // The full line if it fits, else the name alone: a name is worth more than a count.
        let full = entries[i].line.len() as isize;
        let brief = entries[i].short_line.len() as isize;
        if used + cost + full <= budget {
            used += cost + full;
        } else if used + cost + brief <= budget {
            used += cost + brief;
            short[i] = true;
        } else {
            omitted[scope].add(kind, 1);
            break;
        }
        included[i] = true;
    }

    let mut emit = Emit {
        entries: &entries,
        included: &included,
        short: &short,
        omitted: &omitted,
        out,
    };
    emit.scope(&top, file);
    emit.out
}

struct Emit<'e, 'a> {
    entries: &'e [Entry<'a>],
    included: &'e [bool],
    short: &'e [bool],
    omitted: &'e [Omitted],
    out: String,
}

impl Emit<'_, '_> {
    fn scope(&mut self, members: &[usize], scope: usize) {
        for &i in members {
            if !self.included[i] {
                continue;
            }
            let e = &self.entries[i];
            self.out.push_str(if self.short[i] {
                &e.short_line
            } else {
                &e.line
            });
            self.scope(&self.entries[i].children, i);
        }
        let (indent, sym) = match self.entries.get(scope) {
            Some(e) => (2 * (e.depth + 1), Some(e.symbol)),
            None => (0, None),
        };
        self.out.push_str(&self.omitted[scope].note(indent, sym));
    }
}

fn flatten<'a>(
    symbols: &'a [Symbol],
    parent: Option<usize>,
    depth: usize,
    entries: &mut Vec<Entry<'a>>,
    members: &mut Vec<usize>,
) {
    let mut shown = String::new();
    for s in symbols {
        let i = entries.len();
        members.push(i);
        let mut line = format!(
            "{:indent$}{}: {}",
            "",
            s.line,
            s.signature,
            indent = 2 * depth
        );
        if let Some(doc) = &s.doc {
            let _ = write!(line, " — {doc}");
        }
        line.push('\n');
        let mut short_line = format!(
            "{:indent$}{}: {} {}\n",
            "",
            s.line,
            s.kind.noun(),
            s.name,
            indent = 2 * depth
        );
        // Names declared together (`int a, b;`) share a line: it is written once.
        if line == shown {
            line.clear();
            short_line.clear();
        } else {
            shown.clone_from(&line);
        }
        entries.push(Entry {
            symbol: s,
            depth,
            parent,
            children: Vec::new(),
            line,
            short_line,
        });
        let mut children = Vec::new();
        flatten(&s.children, Some(i), depth + 1, entries, &mut children);
        entries[i].children = children;
    }
}
