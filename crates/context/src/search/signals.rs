//! The evidence a search gathers for each file ([`Signals`]), kept by the file's position in
//! the tree's listing ([`Scores`]).
use super::*;

/// The evidence for one file.
#[derive(Clone, Debug, Default)]
pub(super) struct Signals {
    pub(super) text: f64,
    /// The text signal of the query's title alone ([`W_TITLE`]).
    pub(super) title: f64,
    pub(super) defs: f64,
    pub(super) defined: Vec<String>,
    pub(super) path: f64,
    pub(super) named_by: Vec<String>,
    /// The lines of it the query points at (a traceback frame, `path:line`).
    pub(super) framed: Vec<usize>,
    pub(super) stem: f64,
    /// A bare file name the query names (no folder): counted like a path, but the prior holds.
    pub(super) bare: f64,
    pub(super) graph: f64,
    pub(super) near: Option<String>,
    /// [`W_PROXIMITY`] times the file's share of the query in one definition.
    pub(super) proximity: f64,
    /// That definition, where it holds two of the query's words or more.
    pub(super) together: Option<String>,
    /// [`W_MESSAGE`], shared by the files that hold a message the query quotes, as written.
    pub(super) says: f64,
    /// Those messages.
    pub(super) said: Vec<String>,
    /// [`W_HISTORY`] times the file's share of the task's most similar past commits.
    pub(super) history: f64,
    /// The subject of the most similar past commit that changed the file.
    pub(super) fixed_before: Option<String>,
}

impl Signals {
    pub(super) fn base(&self) -> f64 {
        W_TEXT * self.text
            + W_TITLE * self.title
            + W_DEFS * self.defs
            + self.path
            + self.bare
            + self.stem
            + self.says
            + self.history
    }

    pub(super) fn total(&self) -> f64 {
        self.base() + self.graph + self.proximity
    }

    /// The file's score under `prior`. For a lookup (a short query: a name or two), a
    /// definition of the name decides and the prior does not hold it back: the one file that
    /// defines `DIR_MANIFEST_CACHE` is the answer even when it is a test helper or a bundle.
    pub(super) fn score(&self, prior: f64, lookup: bool) -> f64 {
        if lookup {
            (self.total() - W_DEFS * self.defs) * prior + W_LOOKUP_DEFS * self.defs
        } else {
            self.total() * prior
        }
    }

    pub(super) fn why(&self, words: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        if !self.named_by.is_empty() {
            out.push(format!("path: {}", self.named_by.join(", ")));
        }
        if !self.defined.is_empty() {
            out.push(format!("defines: {}", self.defined.join(", ")));
        }
        if !self.said.is_empty() {
            out.push(format!("says: {}", self.said.join(" | ")));
        }
        if self.stem > 0.0 {
            out.push("file name".to_owned());
        }
        if !words.is_empty() {
            out.push(format!("words: {}", words.join(", ")));
        }
        if let Some(subject) = &self.fixed_before {
            out.push(format!("fixed before: {subject}"));
        }
        if let Some(n) = &self.together {
            out.push(format!("together in: {n}"));
        }
        if let Some(n) = &self.near {
            out.push(format!("near: {n}"));
        }
        out
    }
}

/// The evidence for each file a signal found, by the file's position in the listing: a common
/// word finds thousands of files and each signal adds to them, so a file is one index away
/// (no hash of its path per signal, no table grown and moved while they come).
pub(super) struct Scores<'f> {
    facts: &'f TreeFacts,
    /// Per file of the listing, its place in `found` ([`NONE`]: not found yet).
    slot: Vec<usize>,
    found: Vec<(&'f FileEntry, Signals)>,
}

/// A file no signal has found.
const NONE: usize = usize::MAX;

impl<'f> Scores<'f> {
    pub(super) fn new(facts: &'f TreeFacts) -> Self {
        Scores {
            facts,
            slot: vec![NONE; facts.files.len()],
            found: Vec::new(),
        }
    }

    /// Room for `n` more files.
    pub(super) fn reserve(&mut self, n: usize) {
        self.found.reserve(n);
    }

    /// The evidence for the file at `position` in the listing, empty the first time; `None`
    /// for a position past its end.
    pub(super) fn at(&mut self, position: usize) -> Option<&mut Signals> {
        let slot = self.slot.get_mut(position)?;
        if *slot == NONE {
            *slot = self.found.len();
            // `slot` has one place per file of the listing, so `position` is one of its files.
            self.found
                .push((&self.facts.files[position], Signals::default()));
        }
        Some(&mut self.found[*slot].1)
    }

    /// The evidence for the file at `path`, empty the first time; `None` when the tree has no
    /// such file.
    pub(super) fn of(&mut self, path: &str) -> Option<&mut Signals> {
        let position = self.facts.position(path)?;
        self.at(position)
    }

    /// The evidence for the file at `path`, if a signal found it.
    pub(super) fn get_mut(&mut self, path: &str) -> Option<&mut Signals> {
        let slot = *self.slot.get(self.facts.position(path)?)?;
        self.found.get_mut(slot).map(|(_, s)| s)
    }

    /// The files found, with their evidence, in the order they were found.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&'f FileEntry, &Signals)> {
        self.found.iter().map(|(f, s)| (*f, s))
    }
}
