//! Where a bundle has room left after everything its search ranked: the signatures of the
//! definitions that call its first definitions and of those they call ([`add_neighbours`]),
//! as `merkle refs` resolves them, the certain ones only.
use merkle_store::Store;
use retrieve::TextIndex;

use super::{Bundle, BundleFile, Section, TokenCounter, file_heading, section_markdown};
use crate::error::{Error, Result};
use crate::facts::TreeFacts;
use crate::refs::Site;

/// How many of a bundle's first definitions have their callers and callees shown.
pub const NEIGHBOUR_SOURCES: usize = 3;
/// The most callers, and the most callees, shown of each.
pub const NEIGHBOURS_EACH: usize = 5;
/// The least room (in tokens) a bundle must have left for its neighbours to be looked up: a
/// few signature lines. Looking them up reads the index and parses the callers' files (about
/// 50 ms on sympy), which a bundle that filled its budget must not pay.
pub const NEIGHBOUR_ROOM: usize = 50;

/// A definition a bundle shows: its path, name and first line.
pub(super) type Source = (String, String, usize);

/// Adds to `bundle`, while they fit in `budget` (counted by `tokens`), the first line of each
/// caller and callee of its first definitions (`sources`, in the order taken, at most
/// [`NEIGHBOUR_SOURCES`]) that `merkle refs` resolves with certainty and the bundle does not
/// show yet: at most [`NEIGHBOURS_EACH`] of each, callers first (an outline of its file does
/// not count: it does not say whom it calls). Its file says whom it calls or is called by; a file new to
/// the bundle comes last. Nothing is looked up with less than [`NEIGHBOUR_ROOM`] left.
pub(super) fn add_neighbours(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    bundle: &mut Bundle,
    sources: &[Source],
    budget: usize,
    tokens: &TokenCounter<'_>,
) -> Result<()> {
    // Each file's text, read once: several sites are often in one file.
    let mut texts: std::collections::HashMap<String, Option<String>> = Default::default();
    for (path, name, line) in sources {
        if budget.saturating_sub(bundle.tokens) < NEIGHBOUR_ROOM {
            break;
        }
        let refs = match crate::refs::refs_in(store, facts, index, &format!("{path}:{line}")) {
            Ok(refs) => refs,
            // A definition whose name is no symbol (an operator, a quoted key) has none.
            Err(Error::NotASymbol { .. }) => continue,
            Err(e) => return Err(e),
        };
        let certain = |s: &&Site| s.candidates == 1 && s.name.is_some();
        let callers = refs.callers.iter().filter(certain).take(NEIGHBOURS_EACH);
        let callees = refs.callees.iter().filter(certain).take(NEIGHBOURS_EACH);
        let sites = callers
            .map(|s| ("caller", format!("calls {name}"), s))
            .chain(callees.map(|s| ("callee", format!("called by {name}"), s)));
        for (kind, why, site) in sites {
            if shows(bundle, &site.path, site.line_start) {
                continue;
            }
            let Some(text) = line_of(store, facts, &mut texts, &site.path, site.line_start)? else {
                continue;
            };
            let section = Section {
                kind,
                name: site.name.clone(),
                line_start: site.line_start,
                line_end: site.line_start,
                text,
            };
            let known = bundle.files.iter().position(|f| f.path == site.path);
            // A new file's heading, or what saying why costs in a known one's.
            let heading = match known {
                Some(_) => tokens.count(&format!("; {why}")),
                None => tokens.count(&file_heading(&site.path, std::slice::from_ref(&why))),
            };
            let cost = tokens.count(&section_markdown(&site.path, &section)) + heading;
            if bundle.tokens + cost > budget {
                continue;
            }
            bundle.tokens += cost;
            match known {
                Some(i) => {
                    let f = &mut bundle.files[i];
                    f.sections.push(section);
                    f.sections.sort_by_key(|s| s.line_start);
                    if !f.why.contains(&why) {
                        f.why.push(why);
                    }
                }
                None => {
                    bundle.omitted.retain(|p| *p != site.path);
                    bundle.files.push(BundleFile {
                        path: site.path.clone(),
                        score: 0.0,
                        why: vec![why],
                        sections: vec![section],
                    });
                }
            }
        }
    }
    Ok(())
}

/// Whether `bundle` shows line `line` of `path`.
fn shows(bundle: &Bundle, path: &str, line: usize) -> bool {
    bundle.files.iter().any(|f| {
        f.path == path
            && f.sections
                .iter()
                .any(|s| s.kind != "outline" && s.line_start <= line && line <= s.line_end)
    })
}

/// Line `n` (1-based) of the file at `path`, trimmed at its end; its text read once into
/// `texts`.
fn line_of(
    store: &Store,
    facts: &TreeFacts,
    texts: &mut std::collections::HashMap<String, Option<String>>,
    path: &str,
    n: usize,
) -> Result<Option<String>> {
    let Some(entry) = facts.file(path) else {
        return Ok(None);
    };
    if !texts.contains_key(path) {
        texts.insert(path.to_owned(), crate::search::read_text(store, entry)?);
    }
    Ok(texts[path].as_deref().and_then(|t| {
        t.lines()
            .nth(n.saturating_sub(1))
            .map(|l| l.trim_end().to_owned())
    }))
}
