//! What a file's lines hold of a query: the proximity signal (one definition holding much of
//! a task's words) and the definitions a hit lists.
use super::*;
use crate::search::{bare_name, is_structor};

mod gains;
pub(super) use gains::is_function;
use gains::*;

/// The facts and text of files a search has read, by path: read once for proximity and the hits.
pub(super) type ReadFiles<'a> = HashMap<&'a str, (FileFacts, Option<String>)>;

/// The proximity signal ([`W_PROXIMITY`]) of the [`PROXIMITY_FILES`] best files so far (by
/// every other signal, before the prior), read from their text: for each, the function or
/// method holding the most of `telling` (distinct words, each by its weight), over its length
/// in lines to the power [`PROXIMITY_LENGTH`]; divided by the best file's.
pub(super) fn proximity<'a>(
    store: &Store,
    facts: &'a TreeFacts,
    scores: &mut Scores<'a>,
    telling: &[(String, f64)],
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Result<ReadFiles<'a>> {
    let mut best: Vec<(f64, &FileEntry)> = scores
        .iter()
        .map(|(f, s)| (s.total(), f))
        .filter(|(x, f)| *x > 0.0 && in_scope(f))
        .collect();
    first_of(&mut best, PROXIMITY_FILES, |a, b| {
        b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path))
    });
    let files: Vec<&FileEntry> = best.into_iter().map(|b| b.1).collect();
    let their = facts.facts_of(store, &files)?;
    let ids: HashMap<&str, usize> = telling
        .iter()
        .enumerate()
        .map(|(i, (w, _))| (w.as_str(), i))
        .collect();
    // Each file read and weighed on one of two threads of their own (the pool may be busy with
    // a rescan running beside); a watch vouching for the tree leaves the second core idle here.
    let pairs: Vec<(&FileEntry, &FileFacts)> = files.iter().copied().zip(&their).collect();
    let weighed = on_two_threads(&pairs, |(f, ff)| -> Result<_> {
        let text = read_text(store, f)?;
        let held = text
            .as_deref()
            .map_or((0.0, None), |text| most_held(ff, text, &ids, telling));
        Ok((text, held))
    });
    let mut texts = Vec::with_capacity(files.len());
    let mut held = Vec::with_capacity(files.len());
    for w in weighed {
        let (text, h) = w?;
        texts.push(text);
        held.push(h);
    }
    let top = held.iter().map(|h| h.0).fold(0.0, f64::max);
    if top > 0.0 {
        for (f, (h, name)) in files.iter().zip(held) {
            if let Some(s) = scores.get_mut(&f.path) {
                s.proximity = W_PROXIMITY * h / top;
                s.together = name;
            }
        }
    }
    Ok(files
        .into_iter()
        .map(|f| f.path.as_str())
        .zip(their.into_iter().zip(texts))
        .collect())
}

/// Of the functions and methods of `ff` (a file holding `text`), the most of the words of
/// `telling` (their ids in `ids`) that one holds, each by its weight, over its length in lines
/// to the power [`PROXIMITY_LENGTH`]; with its name where it holds two words or more.
fn most_held(
    ff: &FileFacts,
    text: &str,
    ids: &HashMap<&str, usize>,
    telling: &[(String, f64)],
) -> (f64, Option<String>) {
    let lines = line_terms(text, ids);
    let mut seen = vec![false; telling.len()];
    let mut most: (f64, Option<&str>) = (0.0, None);
    for s in &ff.symbols {
        if !matches!(s.kind, Kind::Function | Kind::Method) {
            continue;
        }
        let start = s.line.max(1) - 1;
        let end = s.end_line.max(s.line).min(lines.len());
        if end <= start {
            continue;
        }
        seen.fill(false);
        let (mut sum, mut distinct) = (0.0, 0);
        for &i in lines[start..end].iter().flatten() {
            if !std::mem::replace(&mut seen[i], true) {
                sum += telling[i].1;
                distinct += 1;
            }
        }
        let share = sum / ((end - start) as f64).powf(PROXIMITY_LENGTH);
        if share > most.0 {
            // Named in `why` where it holds two words or more.
            most = (share, (distinct > 1).then_some(s.name.as_str()));
        }
    }
    (most.0, most.1.map(str::to_owned))
}

/// For each line of `text` (as [`str::lines`] cuts them), the ids (in `ids`) of the words its
/// tokens are, one per occurrence. A token of an ASCII line is a piece of that line in
/// lowercase, so such a line is tokenized only where some word occurs in it that way.
fn line_terms(text: &str, ids: &HashMap<&str, usize>) -> Vec<Vec<usize>> {
    let lower = text.to_ascii_lowercase();
    let mut at: Vec<usize> = ids
        .keys()
        .flat_map(|w| memchr::memmem::find_iter(lower.as_bytes(), w.as_bytes()))
        .collect();
    at.sort_unstable();
    let mut next = 0;
    text.lines()
        .map(|line| {
            let start = line.as_ptr() as usize - text.as_ptr() as usize;
            while next < at.len() && at[next] < start {
                next += 1;
            }
            let mut found = Vec::new();
            if (next < at.len() && at[next] < start + line.len()) || !line.is_ascii() {
                retrieve::tokenize::tokens(line, |t, _, _, _| {
                    if let Some(&i) = ids.get(t) {
                        found.push(i);
                    }
                });
            }
            found
        })
        .collect()
}

/// What a definition's lines hold of a query, for ranking it against its file's others.
pub(super) struct Asked<'q> {
    /// Identifiers the query names, as written.
    pub idents: &'q HashMap<&'q str, usize>,
    /// Those of them a task writes as a call (`latex(expr)`): none for a lookup.
    pub called: &'q std::collections::HashSet<&'q str>,
    /// The query's words with their weights.
    pub weights: &'q HashMap<&'q str, f32>,
    /// Messages the query quotes that this file holds, as written.
    pub said: &'q [String],
    /// Lines of this file the query points at (traceback frames, `path:line`).
    pub framed: &'q [usize],
    /// Lines of code the query quotes, trimmed.
    pub code: &'q std::collections::HashSet<String>,
    /// Only definitions of this kind.
    pub kind: Option<Kind>,
    /// The trait implementations the query names by their heads, (trait, type): their
    /// functions count as named.
    pub impls: &'q std::collections::HashSet<(String, String)>,
}

/// How much more a definition the query names counts than the best match by words alone.
pub const NAMED: f64 = 2.0;
/// How much more a definition holding what the query quotes counts (a message it prints, an
/// option it declares, a line of code the task pastes, a line a traceback frame points at):
/// more than one named by the task with its name made of the task's words ([`NAMED`] +
/// [`NAME_WORDS`]), since a quoted string is surer than a name (`--collect-only` in
/// `pytest_addoption` against a method named `collect`). On the dev set, against [`NAMED`]:
/// function acc@5 57.3 -> 58.3% (the same at 2.5), Multi-SWE-bench line recall at 4k +0.3,
/// the held-out sets the same.
pub const POINTED: f64 = 3.0;
/// [`NAMED`] for a function a task writes as a call (`latex(expr)` in the session it pastes):
/// that is how the user reached the bug, and the fix is as often in what it calls
/// (`_print_Function`). On the dev set, against [`NAMED`]: function acc@5 +1.1 points, any@10
/// -1.1, line recall at 4k tokens +1.0 (1.0: acc@5 +3.1, but Multi-SWE-bench recall at 8k and
/// 16k -0.7 and -1.1).
pub const NAMED_CALLED: f64 = 1.5;
/// How much a definition's name made of the query's words counts, against the best match of
/// its lines.
pub const NAME_WORDS: f64 = 0.5;
/// BM25's saturation of a word's repeats in a definition and the weight of its length
/// (in lines, against [`TYPICAL_LINES`]).
const K1: f64 = 1.2;
const B: f64 = 0.75;
const TYPICAL_LINES: f64 = 25.0;

/// A file's definitions that best match the query, and the query words its text holds (the
/// heaviest first, at most eight). Each definition is weighed by what it holds: its lines'
/// query words (each distinct word by its weight, its repeats saturating, long definitions
/// weighed down, as BM25 does), against the file's best; the query's words in its name
/// ([`NAME_WORDS`]); and [`NAMED`] more where the query names it ([`NAMED_CALLED`] where a
/// task writes it as a call; a constructor, named as its type or as a bare `__init__`, is not
/// named by it), where it holds a message
/// the query quotes, a line of code it quotes or a line a traceback frame of the query points
/// at. A container (a class, a module) holding functions is weighed by its own lines (its
/// attributes), not its functions' (they are the lines to read), and as the class of the
/// file's best method ([`CLASS_SHARE`]). What a best function calls ([`CALLEE_SHARE`]) and its
/// variants ([`VARIANT_SHARE`]) gain with it; the functions of a type the task writes as a
/// call share its naming ([`constructed`]).
pub(super) fn best_symbols(
    f: &FileFacts,
    content: Option<&str>,
    asked: &Asked<'_>,
    max: usize,
) -> (Vec<SymbolHit>, Vec<String>) {
    let words: Vec<(&str, f32)> = asked.weights.iter().map(|(w, x)| (*w, *x)).collect();
    let ids: HashMap<&str, usize> = words.iter().enumerate().map(|(i, w)| (w.0, i)).collect();
    let lines = content.map_or_else(Vec::new, |text| line_terms(text, &ids));
    let mut matched = vec![false; words.len()];
    for &i in lines.iter().flatten() {
        matched[i] = true;
    }
    let line_weight: Vec<f64> = lines
        .iter()
        .map(|l| l.iter().map(|&i| f64::from(words[i].1)).sum())
        .collect();
    let says = content.map_or_else(Vec::new, |text| lines_saying(text, asked.said));
    let text_lines: Vec<&str> = content.map_or_else(Vec::new, |t| t.lines().collect());
    let quoted = quoted_lines(&text_lines, asked.code);
    let pointed_lines = [says.as_slice(), quoted.as_slice(), asked.framed];
    let (starts, in_function) = function_lines(f, lines.len());
    let holds_a_function = |line: usize, end: usize| {
        let i = starts.partition_point(|&l| l <= line);
        starts.get(i).is_some_and(|&l| l <= end)
    };
    let types = type_names(f);
    let called_types = constructed(f, &starts, &text_lines, asked);
    let named_impls = super::impls::spans_named(f, asked.impls);
    let mut tf = vec![0u32; words.len()];
    let weighed: Vec<(f64, f64, f64, Option<usize>, &crate::facts::FactSymbol)> = f
        .symbols
        .iter()
        .filter(|s| weighed(s, asked))
        .map(|s| {
            let start = s.line.clamp(1, lines.len().max(1)) - 1;
            let end = s.end_line.max(s.line).min(lines.len());
            // Its doc comment, above it, says what it does in words.
            let doc = doc_start(&text_lines, start);
            let body = body_weight(&lines[doc..end.max(start)], &words, &mut tf);
            // Asked for a kind (`--type class`), a container is what was asked for.
            let container = asked.kind.is_none() && holds_a_function(s.line, s.end_line);
            let at = focus(&pointed_lines, &line_weight, start, end.max(start));
            if container {
                // Its own lines (attributes, fields), not its functions'; named only by name.
                let own: Vec<Vec<usize>> = (start..end.max(start))
                    .filter(|&i| !in_function[i])
                    .map(|i| lines[i].clone())
                    .collect();
                let body = body_weight(&own, &words, &mut tf);
                let named = asked.idents.contains_key(bare_name(&s.name));
                return (body, 0.0, if named { NAMED } else { 0.0 }, at, s);
            }
            let spans = |l: &usize| *l >= s.line && *l <= s.end_line.max(s.line);
            let pointed = says.iter().any(spans)
                || quoted.iter().any(spans)
                || asked.framed.iter().any(spans)
                || named_impls.iter().any(|&(a, b)| s.line >= a && s.line <= b);
            let named =
                named_weight(f, s, asked, pointed, &types) + constructed_gain(s, &called_types);
            let kind = kind_share(s.kind);
            (
                body * kind,
                name_weight(&s.name, asked.weights) * kind,
                named,
                at,
                s,
            )
        })
        .collect();
    let best_body = weighed.iter().map(|w| w.0).fold(0.0, f64::max);
    let best_name = weighed.iter().map(|w| w.1).fold(0.0, f64::max);
    let bodies: Vec<f64> = weighed
        .iter()
        .map(|w| {
            if best_body > 0.0 {
                w.0 / best_body
            } else {
                0.0
            }
        })
        .collect();
    let mut scored: Vec<Scored<'_>> = weighed
        .into_iter()
        .map(|(body, name, named, at, s)| {
            let len = s.end_line.max(s.line) - s.line + 1;
            let score = if best_body > 0.0 {
                body / best_body
            } else {
                0.0
            } + if best_name > 0.0 {
                NAME_WORDS * name / best_name
            } else {
                0.0
            } + named;
            (score, len, at, s)
        })
        .collect();
    let tables = dispatch_tables(&scored, &text_lines, &|key| writes_key(asked, key));
    for _ in 0..CALL_HOPS {
        called_gain(&mut scored, &bodies, &text_lines, &tables);
    }
    variant_gain(&mut scored);
    class_gain(&mut scored);
    scored.retain(|s| s.0 > 0.0);
    (
        first_symbols(scored, max),
        heaviest_matched(words, &matched),
    )
}

/// The 1-based line of `start..end` (0-based) a reader should see first: the first of
/// `pointed` (lines that print a message the query quotes, lines of code it quotes, lines a
/// traceback frame points at, in that order) that lies there, else the one holding the most
/// query weight (the first such); `None` where none holds any.
fn focus(pointed: &[&[usize]], line_weight: &[f64], start: usize, end: usize) -> Option<usize> {
    let within = |l: &&usize| **l > start && **l <= end;
    if let Some(&l) = pointed.iter().find_map(|lines| lines.iter().find(within)) {
        return Some(l);
    }
    (start..end)
        .filter(|&i| line_weight[i] > 0.0)
        .fold(None, |best: Option<usize>, i| match best {
            Some(b) if line_weight[b] >= line_weight[i] => Some(b),
            _ => Some(i),
        })
        .map(|i| i + 1)
}

/// Whether the task writes `key`, a key of a table of functions: a name it names, or an
/// operator standing alone in a line of code it quotes (`&` in `a & b`, not in `&&`).
fn writes_key(asked: &Asked<'_>, key: &str) -> bool {
    let operator = |c: char| "!%&*+-/<=>^|~@.".contains(c);
    if !key.chars().all(operator) {
        return asked.idents.contains_key(key);
    }
    asked.code.iter().any(|line| {
        line.match_indices(key).any(|(at, _)| {
            !line[..at].ends_with(operator) && !line[at + key.len()..].starts_with(operator)
        })
    })
}

/// The names of the types `f` defines.
fn type_names(f: &FileFacts) -> std::collections::HashSet<&str> {
    f.symbols
        .iter()
        .filter(|s| is_type(s.kind))
        .map(|s| bare_name(&s.name))
        .collect()
}

/// How much more than its words the definition `s` (not a container) counts for being named:
/// [`NAMED`] where it holds a message the query quotes, a line of code it quotes or a line a
/// traceback frame points at, or is a method of an implementation the task names by its head
/// (`Drop for Drain`, `impls.rs`) (`pointed`); else, where the query names it, [`NAMED_CALLED`] if a
/// task writes it as a call and [`NAMED`] if not; never for a function named as a type of its
/// file (`types`), a constructor (C++, Java): a task naming the type does not name it, nor a
/// Python `__init__` of `f` the task names without its class ([`is_bare_constructor`]). A
/// function it does not name may be a dispatch on a type it writes ([`dispatched`]).
fn named_weight(
    f: &FileFacts,
    s: &crate::facts::FactSymbol,
    asked: &Asked<'_>,
    pointed: bool,
    types: &std::collections::HashSet<&str>,
) -> f64 {
    let name = bare_name(&s.name);
    if pointed {
        POINTED
    } else if !asked.idents.contains_key(name)
        || types.contains(name)
        || is_structor(&s.name)
        || is_bare_constructor(f, s, asked)
    {
        dispatched(name, asked)
    } else if asked.called.contains(name) {
        NAMED_CALLED
    } else {
        NAMED
    }
}

/// Whether `s` is a Python constructor (`__init__`) the task names without its class: every
/// class has one, and a task that writes `__init__` alone (a traceback's frame, the class of
/// its own code it pastes) names none of the tree's, where `RST.__init__` names `RST`'s (its
/// class named too). On the dev set: function acc@10 63.5 -> 64.6% (sphinx-10451: autodoc's
/// `__init__` methods no longer ahead of `typehints.py`'s functions). Every dunder method so
/// (`__call__`, `__matmul__`): dev line recall at 4k/8k 67.3/74.6 -> 66.3/74.1%, any@10 -1.1
/// (sympy-13773's `__matmul__`, named bare with `@`, out of the first 10).
fn is_bare_constructor(f: &FileFacts, s: &crate::facts::FactSymbol, asked: &Asked<'_>) -> bool {
    if bare_name(&s.name) != "__init__" || s.kind != Kind::Method {
        return false;
    }
    let class = f
        .symbols
        .iter()
        .filter(|c| is_type(c.kind) && c.line < s.line && c.end_line >= s.line)
        .min_by_key(|c| c.end_line - c.line);
    !class.is_some_and(|c| asked.idents.contains_key(bare_name(&c.name)))
}

/// How much more than its words a function counts that is named as a dispatch on a type the
/// task writes (`_print_Poly`, `visit_Call`: a prefix, `_`, then the type's name as the task
/// writes it, capitalized): the task's call reached the bug through it, so it weighs as a
/// function the task writes as a call ([`NAMED_CALLED`]). On the dev set: function acc@5 49.0
/// -> 51.0% (sympy's printers' `_print_Poly`, 8th -> 1st); a type written in lowercase (`sin`
/// for `_eval_rewrite_as_sin`) also counted: acc@10 -2.1.
fn dispatched(name: &str, asked: &Asked<'_>) -> f64 {
    let Some((prefix, last)) = name.rsplit_once('_') else {
        return 0.0;
    };
    let typed = last.len() >= 2 && last.starts_with(|c: char| c.is_ascii_uppercase());
    if typed && !prefix.trim_matches('_').is_empty() && asked.idents.contains_key(last) {
        NAMED_CALLED
    } else {
        0.0
    }
}

/// Where the functions and methods of `f` (a file of `n` lines) start, sorted, and for each
/// 0-based line whether one spans it: a container's own lines are the rest.
fn function_lines(f: &FileFacts, n: usize) -> (Vec<usize>, Vec<bool>) {
    let functions = || {
        f.symbols
            .iter()
            .filter(|s| matches!(s.kind, Kind::Function | Kind::Method))
    };
    let mut starts: Vec<usize> = functions().map(|s| s.line).collect();
    starts.sort_unstable();
    let mut inside = vec![false; n];
    for s in functions() {
        let end = s.end_line.max(s.line).min(n);
        for l in &mut inside[s.line.clamp(1, end.max(1)) - 1..end] {
            *l = true;
        }
    }
    (starts, inside)
}

/// The first `max` of `scored`, best first (the innermost, the shortest, first among equals,
/// then by line), each scored against the best.
fn first_symbols(mut scored: Vec<Scored<'_>>, max: usize) -> Vec<SymbolHit> {
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| a.3.line.cmp(&b.3.line))
    });
    let best = scored.first().map_or(1.0, |s| s.0);
    scored
        .into_iter()
        .take(max)
        .map(|(score, _, at, s)| SymbolHit {
            name: s.name.clone(),
            kind: s.kind,
            line_start: s.line,
            line_end: s.end_line.max(s.line),
            signature: s.signature.clone(),
            score: score / best,
            focus: at,
        })
        .collect()
}

/// Whether `s` is a definition [`best_symbols`] weighs: of the kind asked for, if any; never
/// a key or an impl block; a scope (a namespace, a module, a package) only when asked for by
/// kind, as it is passed through as an impl block is (its definitions rank on their own, and
/// its name is in most of a library's issues); a field or a variant where the query names it
/// or asked for by kind (otherwise its type's head shows it).
fn weighed(s: &crate::facts::FactSymbol, asked: &Asked<'_>) -> bool {
    let by_kind = asked.kind.is_some();
    asked.kind.is_none_or(|k| s.kind == k)
        && !matches!(s.kind, Kind::Key | Kind::Impl)
        && (by_kind || !is_scope(s.kind))
        && (!matches!(s.kind, Kind::Field | Kind::Variant)
            || by_kind
            || asked.idents.contains_key(bare_name(&s.name)))
}

/// Whether `kind` is a scope holding definitions, not one itself: a namespace, a module, a
/// package. A fix changes what it holds, never the scope.
fn is_scope(kind: Kind) -> bool {
    matches!(kind, Kind::Namespace | Kind::Module | Kind::Package)
}

/// How much a definition of `kind` holding the query's words counts against a function
/// holding as many: the lines to change are most often a function's; a type's or a
/// constant's words are often its documentation's.
fn kind_share(kind: Kind) -> f64 {
    match kind {
        Kind::Function | Kind::Method => 1.0,
        k if is_type(k) => 0.8,
        _ => 0.6,
    }
}

/// Whether `kind` is a type that may hold functions: a class, a struct, an enum, a union, a
/// trait or an interface (not a type alias).
pub(super) fn is_type(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Class | Kind::Struct | Kind::Enum | Kind::Union | Kind::Trait | Kind::Interface
    )
}

/// The first (0-based) of the comment, attribute and decorator lines right above line `at`
/// (0-based) of `lines`: a definition's doc comment (`///`, `/** */`, `#`), its attributes and
/// decorators; `at` where there are none.
fn doc_start(lines: &[&str], at: usize) -> usize {
    let mut start = at.min(lines.len());
    while start > 0 {
        let l = lines[start - 1].trim_start();
        let above = ["//", "/*", "*", "#", "@"].iter().any(|p| l.starts_with(p));
        if !above || l.is_empty() {
            break;
        }
        start -= 1;
    }
    start
}

/// The weight of the query words `lines` hold (per line, the ids of `words` in it): each
/// distinct word by its weight, its repeats saturating and the whole weighed down by length,
/// as BM25 weighs a document. `tf` is scratch space of one count per word.
fn body_weight(lines: &[Vec<usize>], words: &[(&str, f32)], tf: &mut [u32]) -> f64 {
    tf.fill(0);
    for &i in lines.iter().flatten() {
        tf[i] += 1;
    }
    let norm = K1 * (1.0 - B + B * lines.len() as f64 / TYPICAL_LINES);
    tf.iter()
        .zip(words)
        .filter(|(n, _)| **n > 0)
        .map(|(&n, w)| f64::from(w.1) * f64::from(n) * (K1 + 1.0) / (f64::from(n) + norm))
        .sum()
}

/// The weight of the query words a definition's name is made of (`_print_MatrixSymbol`:
/// `print`, `matrix`, `symbol`, and `matrixsymbol` as the query writes it whole), each once.
fn name_weight(name: &str, weights: &HashMap<&str, f32>) -> f64 {
    let mut seen: Vec<String> = Vec::new();
    let mut sum = 0.0;
    let mut add = |t: &str| {
        if !seen.iter().any(|s| s == t) {
            sum += weights.get(t).map_or(0.0, |w| f64::from(*w));
            seen.push(t.to_owned());
        }
    };
    retrieve::tokenize::tokens(name, |t, _, _, _| add(t));
    for chunk in name.split('_').filter(|c| c.len() > 1) {
        add(&chunk.to_lowercase());
    }
    sum
}

/// The 1-based lines of `lines` that are, trimmed, one of the query's quoted lines of `code`,
/// each only where it occurs once in the file (a line repeated across definitions tells none
/// of them apart).
fn quoted_lines(lines: &[&str], code: &std::collections::HashSet<String>) -> Vec<usize> {
    if code.is_empty() {
        return Vec::new();
    }
    let mut seen: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.len() >= super::fuse::CODE_LINE_MIN && code.contains(t) {
            seen.entry(t).or_default().push(i + 1);
        }
    }
    let mut out: Vec<usize> = seen
        .into_values()
        .filter(|at| at.len() == 1)
        .flatten()
        .collect();
    out.sort_unstable();
    out
}

/// The 1-based lines of `text` on which one of `messages` begins.
fn lines_saying(text: &str, messages: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for m in messages.iter().filter(|m| !m.is_empty()) {
        for at in memchr::memmem::find_iter(text.as_bytes(), m.as_bytes()) {
            out.push(1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count());
        }
    }
    out
}

/// The words of `words` that `matched` marks, heaviest first, at most eight.
fn heaviest_matched(words: Vec<(&str, f32)>, matched: &[bool]) -> Vec<String> {
    let mut words: Vec<(&str, f32)> = words
        .into_iter()
        .zip(matched)
        .filter_map(|(w, m)| m.then_some(w))
        .collect();
    words.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    words
        .into_iter()
        .take(8)
        .map(|(w, _)| w.to_owned())
        .collect()
}

#[cfg(test)]
mod tests;
