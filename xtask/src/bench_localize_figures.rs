//! The localisation bench's figures from each instance's gold patch
//! ([`crate::bench_localize_gold`]): where a search's definition ranking places the gold
//! functions (acc@5 and acc@10: all of them within the first k definitions the hits list,
//! hit after hit, as SweRank and LocAgent count function-level accuracy; any@10: at least
//! one), and the line recall of `merkle context` bundles at several budgets against the top
//! plain-ranked files pasted whole into the same budget.
use std::fs;
use std::path::Path;

use serde_json::{Value as Json, json};

use crate::bench_localize_defs::definitions;
use crate::bench_localize_gold::{
    FileDefinition, PatchFile, Shown, Site, enclosing, listed_functions, parse_patch,
    ranked_definitions, ranks,
};

/// The budgets (estimated tokens) bundles are asked for and pasted files cut at.
pub const BUDGETS: [usize; 3] = [4000, 8000, 16000];

/// What one piece of context showed of the gold lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recall {
    pub budget: usize,
    /// Its estimated tokens.
    pub tokens: usize,
    /// Gold lines shown.
    pub shown: usize,
}

/// One instance's figures from its gold patch.
#[derive(Debug, Clone)]
pub struct GoldFigures {
    /// The gold functions, in patch order.
    pub functions: Vec<FileDefinition>,
    /// Each one's 0-based rank among the fused search's definitions (its hits' `symbols`,
    /// hit after hit), in `search --functions`, and in the plain BM25 over definitions.
    pub ranks: Vec<Option<usize>>,
    pub function_ranks: Vec<Option<usize>>,
    pub plain_ranks: Vec<Option<usize>>,
    /// Gold lines, and the sites mapped to no definition.
    pub lines: usize,
    pub outside: usize,
    /// By budget, as [`BUDGETS`].
    pub bundles: Vec<Recall>,
    pub pasted: Vec<Recall>,
}

/// What an instance's searches and bundles answered.
#[derive(Debug, Clone, Copy)]
pub struct Answers<'a> {
    pub fused: &'a Json,
    pub plain: &'a Json,
    /// `merkle --json search --functions`.
    pub functions: &'a Json,
    /// The plain function baseline ([`crate::bench_localize_plain`]).
    pub plain_functions: &'a [FileDefinition],
    /// `merkle --json context` at each of [`BUDGETS`].
    pub bundles: &'a [Json],
}

/// A file of `tree` as text (empty when it is missing or unreadable: nothing of it is shown).
fn read(tree: &Path, path: &str) -> String {
    fs::read(tree.join(path))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The gold functions of `files` (each file's text by `text`), and how many sites fall
/// outside every definition.
pub fn gold_functions<'a>(
    files: &[PatchFile],
    text: impl Fn(&str) -> &'a str,
) -> (Vec<FileDefinition>, usize) {
    let mut out: Vec<FileDefinition> = Vec::new();
    let mut outside = 0;
    for f in files {
        let defs = definitions(&f.path, text(&f.path));
        for site in &f.sites {
            let Some(d) = enclosing(&defs, site).map(|i| &defs[i]) else {
                outside += 1;
                continue;
            };
            let gold = FileDefinition {
                path: f.path.clone(),
                name: d.name.clone(),
                line: d.line,
                end: d.end,
            };
            if !out.contains(&gold) {
                out.push(gold);
            }
        }
    }
    (out, outside)
}

/// The distinct gold lines of `files` as (path, line, or line), in patch order, each shown
/// where either of its two lines is: a changed line is itself twice; an insertion is the
/// nearest non-blank line before it and the nearest after it (whose text `text_of` gives):
/// its place is seen where a neighbour is, and a blank line has no text to show.
pub fn gold_lines<'f, 't>(
    files: &'f [PatchFile],
    text_of: impl Fn(&str) -> &'t str,
) -> Vec<(&'f str, usize, usize)> {
    let mut out: Vec<(&str, usize, usize)> = Vec::new();
    for f in files {
        let lines: Vec<&str> = text_of(&f.path).lines().collect();
        let filled = |n: &usize| lines.get(n - 1).is_some_and(|l| !l.trim().is_empty());
        for site in &f.sites {
            let (a, b) = match site {
                Site::Line(n) => (*n, *n),
                Site::Insert { after, .. } => {
                    let before = (1..=*after).rev().find(filled);
                    let next = (after + 1..=lines.len()).find(filled);
                    match (before, next) {
                        (Some(a), Some(b)) => (a, b),
                        (Some(a), None) | (None, Some(a)) => (a, a),
                        (None, None) => (site.line(), site.line()),
                    }
                }
            };
            let gold = (f.path.as_str(), a, b);
            if !out.contains(&gold) {
                out.push(gold);
            }
        }
    }
    out
}

/// The figures of an instance whose tree (at the base commit) is `tree`, from what `patch`
/// changes in `gold_files` (a fix's changes to changelogs, lock files and documentation are
/// left out, as the instance's gold files leave them out).
pub fn evaluate(
    tree: &Path,
    patch: &str,
    gold_files: &[String],
    answers: &Answers<'_>,
) -> GoldFigures {
    let mut files = parse_patch(patch);
    files.retain(|f| gold_files.contains(&f.path));
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.path.clone(), read(tree, &f.path)))
        .collect();
    for (f, (_, text)) in files.iter_mut().zip(&texts) {
        f.place(text);
    }
    let text_of = |path: &str| {
        texts
            .iter()
            .find(|(p, _)| p == path)
            .map_or("", |(_, t)| t.as_str())
    };
    let (functions, outside) = gold_functions(&files, text_of);
    let lines = gold_lines(&files, text_of);
    let count = |shown: &Shown| {
        lines
            .iter()
            .filter(|&&(path, a, b)| {
                [a, b].into_iter().any(|n| {
                    let text = text_of(path).lines().nth(n - 1);
                    text.is_some_and(|t| shown.shows(path, n, t))
                })
            })
            .count()
    };
    let bundles = BUDGETS
        .iter()
        .zip(answers.bundles)
        .map(|(&budget, b)| Recall {
            budget,
            tokens: b.get("tokens").and_then(Json::as_u64).unwrap_or(0) as usize,
            shown: count(&Shown::of_bundle(b)),
        })
        .collect();
    let plain_files: Vec<(String, String)> = answers
        .plain
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("path").and_then(Json::as_str))
        .map(|p| (p.to_owned(), read(tree, p)))
        .collect();
    let plain_files: Vec<(&str, &str)> = plain_files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let pasted = BUDGETS
        .iter()
        .map(|&budget| {
            let (shown, tokens) = Shown::pasted(&plain_files, budget);
            Recall {
                budget,
                tokens,
                shown: count(&shown),
            }
        })
        .collect();
    GoldFigures {
        ranks: ranks(&ranked_definitions(answers.fused), &functions),
        function_ranks: ranks(&listed_functions(answers.functions), &functions),
        plain_ranks: ranks(answers.plain_functions, &functions),
        functions,
        lines: lines.len(),
        outside,
        bundles,
        pasted,
    }
}

impl GoldFigures {
    /// The instance's line in the bench's progress: the gold functions' fused ranks
    /// (1-based), and the lines each bundle and paste showed.
    pub fn progress(&self) -> String {
        let ranks: Vec<String> = self
            .function_ranks
            .iter()
            .map(|r| r.map_or("-".to_owned(), |k| (k + 1).to_string()))
            .collect();
        let shown = |r: &[Recall]| {
            r.iter()
                .map(|r| r.shown.to_string())
                .collect::<Vec<_>>()
                .join("/")
        };
        let ranks = if ranks.is_empty() {
            "none".to_owned()
        } else {
            ranks.join(",")
        };
        format!(
            "functions {ranks}, lines shown {} (pasted {}) of {}",
            shown(&self.bundles),
            shown(&self.pasted),
            self.lines
        )
    }

    /// The instance's figures in the bench's `--out` lines.
    pub fn json(&self) -> Json {
        let recall = |r: &[Recall]| -> Json {
            r.iter()
                .map(|r| json!({"budget": r.budget, "tokens": r.tokens, "lines_shown": r.shown}))
                .collect()
        };
        json!({
            "functions": self.functions.iter().zip(&self.ranks)
                .map(|(f, rank)| json!({
                    "path": f.path, "name": f.name, "line_start": f.line, "line_end": f.end,
                    "rank": rank.map(|k| k + 1),
                }))
                .collect::<Vec<_>>(),
            "function_ranks": self.function_ranks.iter().map(|r| r.map(|k| k + 1))
                .collect::<Vec<_>>(),
            "plain_function_ranks": self.plain_ranks.iter().map(|r| r.map(|k| k + 1))
                .collect::<Vec<_>>(),
            "lines": self.lines,
            "sites_outside_definitions": self.outside,
            "bundles": recall(&self.bundles),
            "pasted": recall(&self.pasted),
        })
    }
}

/// A ranking's function-level counts.
#[derive(Debug, Default, Clone)]
struct RankTally {
    at5: usize,
    at10: usize,
    any10: usize,
}

impl RankTally {
    fn add(&mut self, ranks: &[Option<usize>]) {
        let worst = ranks.iter().try_fold(0, |w, r| r.map(|r| w.max(r + 1)));
        self.at5 += usize::from(worst.is_some_and(|w| w <= 5));
        self.at10 += usize::from(worst.is_some_and(|w| w <= 10));
        self.any10 += usize::from(ranks.iter().flatten().any(|&r| r < 10));
    }
}

/// What a kind of context showed over the instances, at one budget.
#[derive(Debug, Default, Clone)]
struct RecallTally {
    share: f64,
    all: usize,
    tokens: Vec<usize>,
}

impl RecallTally {
    fn add(&mut self, r: &Recall, lines: usize) {
        self.share += r.shown as f64 / lines as f64;
        self.all += usize::from(r.shown == lines);
        self.tokens.push(r.tokens);
    }
}

/// The figures from the gold patches over a run.
#[derive(Debug, Default, Clone)]
pub struct GoldTally {
    /// Instances with a patch; of them, with a gold function; with a gold line.
    patched: usize,
    with_functions: usize,
    with_lines: usize,
    ranks: RankTally,
    function_ranks: RankTally,
    plain_ranks: RankTally,
    bundles: Vec<RecallTally>,
    pasted: Vec<RecallTally>,
}

impl GoldTally {
    pub fn add(&mut self, f: &GoldFigures) {
        self.patched += 1;
        if !f.functions.is_empty() {
            self.with_functions += 1;
            self.ranks.add(&f.ranks);
            self.function_ranks.add(&f.function_ranks);
            self.plain_ranks.add(&f.plain_ranks);
        }
        if f.lines > 0 {
            self.with_lines += 1;
            for (tally, recall) in [
                (&mut self.bundles, &f.bundles),
                (&mut self.pasted, &f.pasted),
            ] {
                tally.resize(recall.len().max(tally.len()), RecallTally::default());
                for (t, r) in tally.iter_mut().zip(recall) {
                    t.add(r, f.lines);
                }
            }
        }
    }

    /// The figures as Markdown: a sentence and a table for each.
    pub fn report(&self) -> String {
        let pct = |k: usize, n: usize| format!("{:.1}%", 100.0 * k as f64 / n.max(1) as f64);
        let n = self.with_functions;
        let mut out = format!(
            "\nFunction level from the gold patch ({n} of {} instances with a patch change a \
             line inside a definition; the rest only lines outside every one): all gold \
             functions among the first k of a ranking (acc@k), at least one among the first 10 \
             (any@10)\n\n\
             | ranking | n | acc@5 | acc@10 | any@10 |\n|---|---|---|---|---|\n",
            self.patched,
        );
        for (name, t) in [
            ("`merkle search --functions`", &self.function_ranks),
            ("`merkle search` hits' symbols, hit after hit", &self.ranks),
            ("plain BM25 over definitions", &self.plain_ranks),
        ] {
            out.push_str(&format!(
                "| {name} | {n} | {} | {} | {} |\n",
                pct(t.at5, n),
                pct(t.at10, n),
                pct(t.any10, n)
            ));
        }
        let m = self.with_lines;
        out.push_str(&format!(
            "\nLine recall ({m} instances): the share of the lines the gold patch removes or \
             changes, and of its insertions (seen by the non-blank line before or after), that \
             the context shows (by number and text), mean over instances; \"all\": instances \
             shown every line\n\n\
             | budget | `merkle context` recall | all | tokens (median) | plain top files pasted \
             recall | all | tokens (median) |\n|---|---|---|---|---|---|---|\n"
        ));
        for (i, budget) in BUDGETS.iter().enumerate() {
            let cells = |t: Option<&RecallTally>| {
                let t = t.cloned().unwrap_or_default();
                format!(
                    "{:.1}% | {} | {}",
                    100.0 * t.share / m.max(1) as f64,
                    pct(t.all, m),
                    median(&t.tokens)
                )
            };
            out.push_str(&format!(
                "| {budget} | {} | {} |\n",
                cells(self.bundles.get(i)),
                cells(self.pasted.get(i))
            ));
        }
        out
    }
}

/// The median of `values` (the lower middle one for an even count; zero for none).
fn median(values: &[usize]) -> usize {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}
