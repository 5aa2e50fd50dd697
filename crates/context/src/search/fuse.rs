//! The phases of a ranked search ([`super::search`]), each a function: the query read once
//! ([`Asking`]), the signals gathered beside the kept graph and the history ([`gather`]), the
//! history and the graph's shares given ([`give_history`], [`spread_graph`]), the files
//! ordered under the prior ([`rank`]), and the hits read with their best definitions
//! ([`hits_of`]).
use super::*;

/// What a ranked search reads of its query, once.
pub(super) struct Asking {
    pub q: TaskQuery,
    /// Identifiers to look for whole, with how often the query names each.
    pub idents: Vec<(String, usize)>,
    /// The query's words with their weights, their other forms added ([`add_word_forms`]).
    pub words: Vec<(String, f32)>,
    /// Lines of code the query quotes, trimmed ([`quoted_code`]).
    pub code: std::collections::HashSet<String>,
    /// The trait implementations the query names as Rust writes their heads, (trait, type)
    /// ([`super::impls::impls_named`]).
    pub impls: std::collections::HashSet<(String, String)>,
}

impl Asking {
    /// A lookup ([`QueryKind::Lookup`]): a name or two.
    pub fn short(&self) -> bool {
        self.q.kind == QueryKind::Lookup
    }

    pub fn read(query: &str) -> Asking {
        let q = TaskQuery::parse(query);
        let short = q.kind == QueryKind::Lookup;
        // A short query is a name or two: every identifier in it is one to look for whole.
        let mut idents: Vec<(String, usize)> = q.idents.clone();
        if short {
            // As written too (`$display`, `std::fs`), trimmed of call and list punctuation.
            for term in query.split_whitespace() {
                let t = term.trim_matches(|c: char| "()[]{},;:\"'`".contains(c));
                if !t.is_empty() && !idents.iter().any(|(i, _)| i == t) {
                    idents.push((t.to_owned(), 1));
                }
            }
            for id in retrieve::tokenize::identifiers(query) {
                if !idents.iter().any(|(i, _)| i == id.text) {
                    idents.push((id.text.to_owned(), 1));
                }
            }
        }
        let mut words = q.words.clone();
        if short {
            // A short query's words are all meant, stop words or not (`is`, `get`).
            for t in retrieve::tokenize::token_strings(query) {
                if !words.iter().any(|(w, _)| *w == t) {
                    words.push((t, 2.0));
                }
            }
        }
        add_word_forms(&mut words);
        let code = quoted_code(query);
        Asking {
            q,
            idents,
            words,
            code,
            impls: super::impls::impls_named(query),
        }
    }
}

/// The shortest line of a query, trimmed, that counts as quoted code: long enough that a
/// file holding it verbatim holds what the task pasted, not a common idiom.
pub(super) const CODE_LINE_MIN: usize = 20;

/// The lines of `query` that look like pasted code, whole or in backticks within a line of
/// prose (trimmed, at least [`CODE_LINE_MIN`] bytes, with a call, an assignment, an index or
/// an attribute in them): an issue often quotes the lines it finds wrong, and the definition
/// holding them is the one to change.
fn quoted_code(query: &str) -> std::collections::HashSet<String> {
    query
        .lines()
        .flat_map(|l| {
            // `a = f(x)` in a sentence: the pieces between a line's backticks, every other one.
            let ticked = l.split('`').skip(1).step_by(2);
            std::iter::once(l).chain(ticked.take(l.matches('`').count() / 2))
        })
        .map(str::trim)
        .filter(|l| l.len() >= CODE_LINE_MIN && l.contains(['(', '=', '[', '.']))
        // A traceback's frame names a file and a line; it is read as such elsewhere.
        .filter(|l| !l.starts_with("File \""))
        .map(str::to_owned)
        .collect()
}

/// The past fixes like a task, by path, or why the history could not be read.
pub(super) type Past = std::result::Result<HashMap<String, history::PastFix>, history::Unread>;

/// The signals read from the index and the tree (text, title, definitions, paths, quoted
/// messages), read beside the kept import graph's record and, for a task, the past commits
/// on the same thread (matched against the workspace's history).
pub(super) fn gather<'f>(
    store: &Store,
    facts: &'f TreeFacts,
    index: &TextIndex,
    asking: &Asking,
    terms: &[WeightedTerm],
    in_scope: &(impl Fn(&FileEntry) -> bool + Sync),
) -> Result<(Scores<'f>, Option<crate::graph::KeptEdges>, Past)> {
    let ((kept, past), scores) = crate::beside(
        || {
            let kept = Graph::kept_edges(store, facts);
            let past = if asking.q.kind == QueryKind::Task {
                history::past_fixes(store, &asking.words)
            } else {
                Ok(HashMap::new())
            };
            (kept, past)
        },
        || direct_signals(store, facts, index, asking, terms, in_scope),
    );
    Ok((scores?, kept, past))
}

/// The signals of each file read from the index and the tree alone: text, title,
/// definitions, paths and quoted messages.
fn direct_signals<'f>(
    store: &Store,
    facts: &'f TreeFacts,
    index: &TextIndex,
    asking: &Asking,
    terms: &[WeightedTerm],
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Result<Scores<'f>> {
    let mut scores = Scores::new(facts);
    let text = text_signal(index, facts, terms)?;
    scores.reserve(text.len());
    for (at, x) in text {
        if let Some(s) = scores.at(at) {
            s.text = x;
        }
    }
    // The title: a task's first line, when more follow, says what the rest is about (an
    // issue's title, a commit's subject); its words are matched again on their own.
    if !asking.short()
        && let Some(title) = &asking.q.title
    {
        let (title_terms, _) = select_terms(index, &TaskQuery::parse(title).words)?;
        for (at, x) in text_signal(index, facts, &title_terms)? {
            if let Some(s) = scores.at(at) {
                s.title = x;
            }
        }
    }
    // Definitions: each identifier of the query by how rare a definition of that name is, the
    // files defining it read from the index (its `defs`), by the weight of the kind.
    definition_signals(index, facts, &asking.idents, in_scope, &mut scores)?;
    // Paths the query points at.
    path_signals(facts, &asking.q, &asking.idents, &asking.words, &mut scores);
    blamed_signals(store, facts, index, &asking.q.blamed, in_scope, &mut scores)?;
    // Messages the task quotes (an error as a program printed it), found as written: the file
    // that prints it.
    if !asking.short() {
        for (message, found) in quoted_messages(store, facts, index, &asking.q.messages, in_scope)?
        {
            for p in &found {
                let Some(s) = scores.of(p) else { continue };
                s.says = s.says.max(W_MESSAGE / found.len() as f64);
                s.said.push(message.clone());
            }
        }
    }
    Ok(scores)
}

/// The path signal of the files defining a method an error message names by its type
/// (`TypeError: RST.__init__() got an unexpected keyword argument`, [`TaskQuery::blamed`]):
/// the call the deepest traceback frame made, weighed as that frame is ([`W_PATH`]), shared by
/// the files defining such a type holding such a method. On the dev set: line recall at 4k/8k
/// tokens 66.7/74.1 -> 67.3/74.6%, any@10 70.8 -> 71.9% (astropy-14182's `rst.py`, 5th ->
/// 3rd, past the files of the frames above); Multi-SWE-bench the same.
fn blamed_signals<'f>(
    store: &Store,
    facts: &'f TreeFacts,
    index: &TextIndex,
    blamed: &[(String, String)],
    in_scope: &impl Fn(&FileEntry) -> bool,
    scores: &mut Scores<'f>,
) -> Result<()> {
    for (ty, method) in blamed {
        let defining = files_defining(index, ty)?;
        let files: Vec<&FileEntry> = defining
            .iter()
            .filter_map(|p| facts.file(p))
            .filter(|f| in_scope(f))
            .collect();
        let their = facts.facts_of(store, &files)?;
        let found: Vec<&FileEntry> = files
            .into_iter()
            .zip(&their)
            .filter(|(_, ff)| holds_method(ff, ty, method))
            .map(|(f, _)| f)
            .collect();
        for f in &found {
            let Some(s) = scores.of(&f.path) else {
                continue;
            };
            s.path = s.path.max(W_PATH / found.len() as f64);
            s.named_by.push(format!("{ty}.{method}()"));
        }
    }
    Ok(())
}

/// Whether `ff` defines a type named `ty` holding a function named `method`.
fn holds_method(ff: &FileFacts, ty: &str, method: &str) -> bool {
    ff.symbols
        .iter()
        .filter(|t| lines::is_type(t.kind) && bare_name(&t.name) == ty)
        .any(|t| {
            ff.symbols.iter().any(|s| {
                lines::is_function(s)
                    && bare_name(&s.name) == method
                    && s.line > t.line
                    && s.end_line <= t.end_line
            })
        })
}

/// Gives each file in scope that past fixes like the task changed its history signal; why
/// the history is missing, where it could not be read.
pub(super) fn give_history(
    facts: &TreeFacts,
    scores: &mut Scores<'_>,
    past: Past,
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Option<String> {
    let (past, history_missing) = match past {
        Ok(past) => (past, None),
        Err(history::Unread(why)) => (HashMap::new(), Some(why)),
    };
    let mut past: Vec<(String, history::PastFix)> = past.into_iter().collect();
    past.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (path, fix) in past {
        if facts.file(&path).is_some_and(in_scope)
            && let Some(s) = scores.of(&path)
        {
            s.history = W_HISTORY * fix.share;
            s.fixed_before = Some(fix.subject);
        }
    }
    history_missing
}

/// The graph signal: a share of the evidence of the [`GRAPH_SEEDS`] strongest files, given
/// to the files they import and that import them (read from the kept graph where it is, else
/// from one built, and kept where it can be).
pub(super) fn spread_graph(
    store: &Store,
    facts: &TreeFacts,
    scores: &mut Scores<'_>,
    kept: Option<crate::graph::KeptEdges>,
) -> Result<()> {
    let mut strong: Vec<(&str, f64)> = scores
        .iter()
        .map(|(f, s)| (f.path.as_str(), s.base()))
        .collect();
    first_of(&mut strong, GRAPH_SEEDS, |a, b| {
        b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
    });
    let seeds: Vec<&str> = strong.iter().map(|s| s.0).collect();
    let near = match kept.and_then(|k| k.neighbours(&seeds)) {
        Some(near) => near,
        None => Graph::of_tree(store, facts)?.neighbours(&seeds),
    };
    let gains: Vec<(String, f64, &str)> = strong
        .into_iter()
        .zip(near)
        .flat_map(|((p, b), near)| near.into_iter().map(move |r| (r, b, p)))
        .collect();
    for (r, b, p) in gains {
        if let Some(s) = scores.of(&r)
            && b * W_GRAPH > s.graph
        {
            s.graph = b * W_GRAPH;
            s.near = Some(p.to_owned());
        }
    }
    Ok(())
}

/// A file ranked: its score, the file and its signals.
pub(super) type Ranked<'s> = (f64, &'s FileEntry, &'s Signals);

/// The first `req.limit` files in scope by evidence under the prior, best first (ties by
/// path). Ordered by evidence, then the prior applied: a prior is at most 1, so once the
/// evidence left is below the `limit`-th score, nothing further can enter (the result is the
/// one a prior on every file gives, without a size lookup per file).
pub(super) fn rank<'s>(
    store: &Store,
    facts: &TreeFacts,
    scores: &'s Scores<'_>,
    req: &SearchRequest<'_>,
    asking: &Asking,
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Result<Vec<Ranked<'s>>> {
    let short = asking.short();
    let mut candidates: Vec<Ranked<'s>> = scores
        .iter()
        .map(|(f, s)| (s.score(1.0, short), f, s))
        .filter(|(upper, f, _)| *upper > 0.0 && in_scope(f))
        .collect();
    if let Some(Filter::Kind(k)) = req.filter {
        let files: Vec<&FileEntry> = candidates.iter().map(|c| c.1).collect();
        let their = facts.facts_of(store, &files)?;
        let mut keep = their.iter().map(|ff| has_kind_match(ff, k, &asking.words));
        candidates.retain(|_| keep.next().unwrap_or(false));
    }
    // A heap: of thousands of files (a common word), a few dozen are taken.
    let mut candidates: std::collections::BinaryHeap<Candidate> =
        candidates.into_iter().map(Candidate).collect();
    let mut ranked: Vec<Ranked<'s>> = Vec::new();
    while let Some(Candidate((upper, f, s))) = candidates.pop() {
        if ranked.len() >= req.limit && upper < ranked[req.limit - 1].0 {
            break;
        }
        let prior = if s.path > 0.0 {
            1.0
        } else {
            let node = store.node(&f.node_id).ok().flatten();
            let size = size_of(node.as_ref());
            let by_path = if asking.q.kind == QueryKind::Question {
                prior_asked(&f.path, &asking.words, f.language, size)
            } else {
                prior(&f.path, f.language, size)
            };
            by_path.min(generated_prior(store, f, node.as_ref()))
        };
        let entry = (s.score(prior, short), f, s);
        let at = ranked.partition_point(|r| {
            r.0.total_cmp(&entry.0)
                .reverse()
                .then_with(|| r.1.path.cmp(&entry.1.path))
                .is_lt()
        });
        ranked.insert(at, entry);
    }
    ranked.truncate(req.limit);
    Ok(ranked)
}

/// The hits of `ranked`, each with its best definitions and why it matched; the files
/// proximity has not read already (`read`) read here. A filter by kind keeps only files that
/// show a definition of that kind.
#[allow(clippy::too_many_arguments)]
pub(super) fn hits_of<'r>(
    store: &Store,
    facts: &TreeFacts,
    ranked: Vec<Ranked<'r>>,
    mut read: ReadFiles<'r>,
    req: &SearchRequest<'_>,
    asking: &Asking,
    terms: &[WeightedTerm],
    history_missing: Option<String>,
) -> Result<Vec<Hit>> {
    let ident_set: HashMap<&str, usize> = asking
        .idents
        .iter()
        .map(|(i, n)| (i.as_str(), *n))
        .collect();
    let term_weights: HashMap<&str, f32> = terms
        .iter()
        .filter(|t| t.field == Field3::Text)
        .map(|t| (t.token.as_str(), t.weight))
        .collect();
    // A lookup names what it asks for, called or not.
    let called: std::collections::HashSet<&str> = if asking.short() {
        Default::default()
    } else {
        asking.q.called.iter().map(String::as_str).collect()
    };
    let kind = match req.filter {
        Some(Filter::Kind(k)) => Some(k),
        _ => None,
    };
    let unread: Vec<&FileEntry> = ranked
        .iter()
        .map(|r| r.1)
        .filter(|f| !read.contains_key(f.path.as_str()))
        .collect();
    let their = facts.facts_of(store, &unread)?;
    for (f, ff) in unread.into_iter().zip(their) {
        read.insert(f.path.as_str(), (ff, read_text(store, f)?));
    }
    let hits: Vec<_> = ranked
        .into_iter()
        .map(|(score, f, s)| {
            let (ff, content) = read
                .remove(f.path.as_str())
                .expect("every hit was read above");
            (score, f, s, ff, content)
        })
        .collect();
    let hit =
        |(score, f, s, ff, content): &(f64, &FileEntry, &Signals, FileFacts, Option<String>)| {
            let asked = Asked {
                idents: &ident_set,
                weights: &term_weights,
                said: &s.said,
                framed: &s.framed,
                code: &asking.code,
                kind,
                called: &called,
                impls: &asking.impls,
            };
            let (symbols, matched) = best_symbols(ff, content.as_deref(), &asked, req.symbols);
            Hit {
                path: f.path.clone(),
                score: round(*score),
                symbols,
                why: s.why(&matched),
                history_missing: history_missing.clone(),
            }
        };
    let mut hits = on_two_threads(&hits, hit);
    if kind.is_some() {
        hits.retain(|h| !h.symbols.is_empty());
    }
    Ok(hits)
}
