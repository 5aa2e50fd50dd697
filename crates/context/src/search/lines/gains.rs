//! What a file's best functions pass on to the definitions near them: their callees (two
//! calls deep, and through a table of functions), their variants, the class holding them; and
//! what a type a task calls passes on to its functions.
use super::*;

/// Whether `s` is a function or a method.
pub(in crate::search) fn is_function(s: &crate::facts::FactSymbol) -> bool {
    matches!(s.kind, Kind::Function | Kind::Method)
}

/// The places in `scored` of its `n` best functions and methods that scored at all, best
/// first (among equals, the first in the file).
pub(super) fn best_functions(scored: &[Scored<'_>], n: usize) -> Vec<usize> {
    let mut best: Vec<usize> = (0..scored.len())
        .filter(|&i| scored[i].0 > 0.0 && is_function(scored[i].3))
        .collect();
    best.sort_by(|&a, &b| {
        scored[b]
            .0
            .total_cmp(&scored[a].0)
            .then_with(|| scored[a].3.line.cmp(&scored[b].3.line))
    });
    best.truncate(n);
    best
}

/// How much of its caller's score a function gains that one of its file's best functions
/// calls by name.
pub const CALLEE_SHARE: f64 = 0.7;
/// How much of its own lines' share of the task's words (against its file's best) a callee
/// raised by [`called_gain`] keeps on top of the share it gains: enough to order the callees
/// one caller raises alike by what they hold of the task, too little to lift one past another
/// caller's share. On the dev set, against the first in the file first: function acc@5 and
/// acc@10 the same (sympy-22840's `tree_cse` 7th -> 4th, sympy-13647's `_eval_col_insert` 5th
/// -> 6th behind `ones`, named by the task), line recall at 4k tokens 66.4 -> 66.7%; on the
/// held-out sets acc@10 44.2 -> 44.8%, any@10 65.5 -> 66.1%, line recall at 4k/8k/16k +0.3/
/// +0.2/+0.4; Multi-SWE-bench the same. Kept whole (0.3 on top): dev acc@10 +1 but line
/// recall at 4k -0.7.
pub const OWN_TIE: f64 = 0.01;
/// How many calls deep a best function's score passes on: what its callees call gains too.
pub const CALL_HOPS: usize = 2;
/// How many of a file's best functions pass their score on to what they call.
const CALLERS: usize = 5;

/// A file's definitions as [`best_symbols`] scores them: score, length, focus, definition.
pub(super) type Scored<'f> = (f64, usize, Option<usize>, &'f crate::facts::FactSymbol);

/// Raises each function of `scored` (a file of `lines`) that one of the file's
/// [`CALLERS`] best functions calls by name (`name(`, in its code: not in a doctest's example
/// or a comment, [`is_example_or_comment`]) to [`CALLEE_SHARE`] of that caller's
/// score, where it scored less, plus [`OWN_TIE`] of its own lines' share of the task's words
/// (`bodies`, in the order of `scored`): the helper doing the work is read with what calls
/// it, the one holding more of the task first. Where the file defines `k` functions of that
/// name (a trait's method and its impls, a method and its overrides), which one runs is
/// known only when it runs: each gains `1/k` of the share, as a table's functions do (on the
/// held-out sets: function acc@10 44.8 -> 45.5%, line recall at 4k/8k/16k +0.6/+0.8/+0.9;
/// Multi-SWE-bench acc@10 41.5 -> 43.9%, bytes-732's `get_int_le` past the `remaining` of
/// four impls; dev line recall at 8k 74.3 -> 73.3%, sympy-16792's `routine`, the base of five
/// printers' overrides, out of the 8k bundle; at `1/sqrt(k)` the same). A
/// caller that reads a table of the file's functions (`_operators[op](a, b)` where
/// `_operators = {'&': _cstack, '|': _cdot}`) calls one of them, which one is known only when
/// it runs: each of the `k` functions the table names gains `1/k` of that share, and where
/// the task writes some of its keys (`'&': _cstack` and `m.Linear1D(10) & m.Linear1D(5)`),
/// each of the `j` functions those keys name gains `1/j` of it. `tables` are the file's
/// ([`dispatch_tables`]), read once for every hop.
pub(super) fn called_gain(
    scored: &mut [Scored<'_>],
    bodies: &[f64],
    lines: &[&str],
    tables: &HashMap<String, Table>,
) {
    let is_fn = is_function;
    let callers: Vec<(f64, usize, usize, &str)> = best_functions(scored, CALLERS)
        .into_iter()
        .map(|i| {
            (
                scored[i].0,
                scored[i].3.line,
                scored[i].3.end_line.max(scored[i].3.line),
                bare_name(&scored[i].3.name),
            )
        })
        .collect();
    if callers.is_empty() {
        return;
    }
    let share = CALLEE_SHARE;
    // The file's functions by bare name, made once: a caller counts those of its callee's
    // name but itself.
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, s) in scored.iter().enumerate().filter(|(_, s)| is_fn(s.3)) {
        by_name.entry(bare_name(&s.3.name)).or_default().push(i);
    }
    let mut gains: Vec<(&str, f64)> = Vec::new();
    for (score, start, end, own) in callers {
        let body = lines
            .get(start.saturating_sub(1)..end.min(lines.len()))
            .unwrap_or_default();
        // The line first naming the caller is its signature (`def routine(self`), no call of
        // the other functions of its name (before: each gained from it; held-out line recall
        // at 4k/8k/16k +0.1 each, every other figure the same).
        let mut signed = false;
        for line in body.iter().filter(|l| !is_example_or_comment(l)) {
            let ids: Vec<_> = retrieve::tokenize::identifiers(line).collect();
            let signature = !signed && ids.iter().any(|id| id.text == own);
            signed |= signature;
            for id in ids {
                let after = line[id.offset + id.text.len()..].trim_start();
                if signature && id.text == own {
                    continue;
                }
                if after.starts_with('(') {
                    gains.push((id.text, share * score));
                } else if let Some(table) = tables.get(id.text) {
                    let each = share * score / table.names.len() as f64;
                    gains.extend(table.names.iter().map(|n| (n.as_str(), each)));
                    let each = share * score / table.keyed.len().max(1) as f64;
                    gains.extend(table.keyed.iter().map(|n| (n.as_str(), each)));
                }
            }
        }
        for (name, gain) in gains.drain(..) {
            let Some(named) = by_name.get(name) else {
                continue;
            };
            let callees: Vec<usize> = named
                .iter()
                .copied()
                .filter(|&i| scored[i].3.line != start)
                .collect();
            let k = callees.len().max(1) as f64;
            for i in callees {
                scored[i].0 = scored[i].0.max(gain / k + OWN_TIE * bodies[i]);
            }
        }
    }
}

/// Whether `line` is an example or a comment, not code its function runs: a doctest's
/// prompt (`>>> M = zeros(3)`, `... `) or a line comment (`# `, `//`, `///`). A block comment's
/// lines (`* foo(x)`) are left: a line starting `* ` is as often Python's product broken
/// before its operator, as `...f(x)` is a spread in JavaScript; Python's floor division broken
/// before its operator (`// size(x)`) reads as a comment, a loss taken for C's and Rust's
/// commented-out and documented calls.
/// On the dev set: function acc@5 58.3 -> 59.4%, acc@10 64.6 -> 65.6% (sympy-13647's
/// `col_insert` had raised the `zeros` and `ones` of its example beside `_eval_col_insert`;
/// sympy-23262's `lambdify` the helpers of its examples past `_recursive_to_string`).
pub(super) fn is_example_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t == "..." || [">>>", "... ", "# ", "//"].iter().any(|p| t.starts_with(p))
}

/// A table of a file's functions ([`dispatch_tables`]): the functions it names, and those
/// named by the keys the task writes where its entries are written `'key': name` (a dict's,
/// an object's), each once.
#[derive(Default)]
pub(super) struct Table {
    pub(super) names: Vec<String>,
    keyed: Vec<String>,
}

/// The file's tables of functions: each constant or variable whose lines name two or more of
/// the file's functions, with those names and the ones whose keys `written` says the task
/// writes.
pub(super) fn dispatch_tables(
    scored: &[Scored<'_>],
    lines: &[&str],
    written: &dyn Fn(&str) -> bool,
) -> HashMap<String, Table> {
    let functions: std::collections::HashSet<&str> = scored
        .iter()
        .filter(|s| is_function(s.3))
        .map(|s| bare_name(&s.3.name))
        .collect();
    let mut tables = HashMap::new();
    for s in scored
        .iter()
        .filter(|s| matches!(s.3.kind, Kind::Constant | Kind::Variable))
    {
        let span = lines
            .get(s.3.line.saturating_sub(1)..s.3.end_line.max(s.3.line).min(lines.len()))
            .unwrap_or_default();
        let mut table = Table::default();
        for line in span {
            for id in retrieve::tokenize::identifiers(line) {
                if id.text == s.3.name || !functions.contains(id.text) {
                    continue;
                }
                if !table.names.iter().any(|n| n == id.text) {
                    table.names.push(id.text.to_owned());
                }
                let keyed = entry_key(&line[..id.offset]).is_some_and(written);
                if keyed && !table.keyed.iter().any(|n| n == id.text) {
                    table.keyed.push(id.text.to_owned());
                }
            }
        }
        if table.names.len() >= 2 {
            tables.insert(s.3.name.clone(), table);
        }
    }
    tables
}

/// The key of a table's entry whose value starts where `before` ends: `'&': ` or `"add": `
/// (a quoted key, then `:`), trimmed.
fn entry_key(before: &str) -> Option<&str> {
    let rest = before.trim_end().strip_suffix(':')?.trim_end();
    let quote = rest.chars().last().filter(|&c| c == '\'' || c == '"')?;
    let rest = &rest[..rest.len() - 1];
    let open = rest.rfind(quote)?;
    Some(&rest[open + 1..]).filter(|k| !k.is_empty())
}

/// How much of the score of one of its file's [`VARIANT_OF`] best functions a variant of it
/// gets: a function named as it with an affix (`get_int_le` of `get_int`, `par_chunks_mut` of
/// `par_chunks`, `__rmatmul__` of `__matmul__`). A fix to one is often a fix to its variants:
/// on the dev set, line recall at 4k/8k/16k tokens +1.0/+0.5/+0.5 (sympy-13773's
/// `__rmatmul__`, xarray-3364); Multi-SWE-bench within 0.1. At 0.7: dev function acc@5 +1.1,
/// but Multi-SWE-bench any@10 -2.4 and recall at 4k -1.0.
pub const VARIANT_SHARE: f64 = 0.5;
/// How many of a file's best functions raise their variants.
const VARIANT_OF: usize = 3;

/// Whether function `a` is a variant of function `b`: named as it with an affix joined by `_`
/// (`get_int_le`, `try_get_int`), a compound name with one on each side
/// (`_eval_is_upper_hessenberg` of `is_upper`: dev line recall +0.5 at every budget, nothing
/// else moved), or a dunder method's reflected or in-place form (`__rmatmul__`, `__iadd__`).
pub(super) fn is_variant(a: &str, b: &str) -> bool {
    let (ca, cb) = (a.trim_matches('_'), b.trim_matches('_'));
    if ca.is_empty() || cb.is_empty() || ca == cb {
        return false;
    }
    let dunder = a.starts_with("__") && b.starts_with("__");
    ca.strip_prefix(cb).is_some_and(|r| r.starts_with('_'))
        || ca.strip_suffix(cb).is_some_and(|r| r.ends_with('_'))
        || (dunder && ca.strip_prefix(['r', 'i']) == Some(cb))
        || (cb.contains('_') && between_affixes(ca, cb))
}

/// Whether `b` stands within `a` between two affixes joined by `_` (`x_b_y`).
fn between_affixes(a: &str, b: &str) -> bool {
    a.match_indices(b)
        .any(|(at, _)| a[..at].ends_with('_') && a[at + b.len()..].starts_with('_'))
}

/// Raises each function of `scored` that is a variant ([`is_variant`]) of one of the file's
/// [`VARIANT_OF`] best functions to [`VARIANT_SHARE`] of its score, where it scored less.
pub(super) fn variant_gain(scored: &mut [Scored<'_>]) {
    let best: Vec<(f64, String)> = best_functions(scored, VARIANT_OF)
        .into_iter()
        .map(|i| (scored[i].0, bare_name(&scored[i].3.name).to_owned()))
        .collect();
    for (score, name) in best {
        for s in scored
            .iter_mut()
            .filter(|s| is_function(s.3) && is_variant(bare_name(&s.3.name), &name))
        {
            s.0 = s.0.max(VARIANT_SHARE * score);
        }
    }
}

/// How much of a file's best method's score the class holding it gets. On the dev set, at
/// 0.7: function acc@5 60.4 -> 58.3%, acc@10 65.6 -> 64.6% (sympy-14396's class out of the
/// list); at 1.0 (the class beside its method): acc@5 57.3%, acc@10 63.5%, line recall at 8k
/// 74.1 -> 71.8%; Multi-SWE-bench acc@10 43.9 -> 41.5% at 1.0, the same at 0.7.
pub const CLASS_SHARE: f64 = 0.9;

/// Raises the innermost class (or other type) holding the file's best method to
/// [`CLASS_SHARE`] of that method's score, where it scored less: a fix about a method's
/// behaviour often adds a method or an attribute to its class, between the methods shown, and
/// the class is then the definition the fix changes.
pub(super) fn class_gain(scored: &mut [Scored<'_>]) {
    let Some((score, line)) = scored
        .iter()
        .filter(|s| s.0 > 0.0 && s.3.kind == Kind::Method)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.3.line.cmp(&a.3.line)))
        .map(|s| (s.0, s.3.line))
    else {
        return;
    };
    let holds = |s: &Scored<'_>| {
        matches!(
            s.3.kind,
            Kind::Class | Kind::Struct | Kind::Enum | Kind::Trait | Kind::Interface
        ) && s.3.line < line
            && s.3.end_line >= line
    };
    if let Some(class) = scored
        .iter_mut()
        .filter(|s| holds(s))
        .min_by_key(|s| s.3.end_line - s.3.line)
    {
        class.0 = class.0.max(CLASS_SHARE * score);
    }
}

/// The functions of `f`'s types (`lines` its text, functions starting at `starts`, sorted)
/// that a task writes as a call (`bell(n).limit(n, oo)`), each as its span of lines and what it
/// gains: calling a type runs its code (its constructor, and what its language's construction
/// calls: `eval` under sympy's `Function`), which function is known only when it runs, so each
/// of its `k` entry points (those none of its other functions calls, [`entry_points`]; all of
/// them where each is called) gains `1/k` of [`NAMED`], as a table's functions share their
/// caller's gain; the helpers they call gain through them ([`called_gain`]). A type the task
/// only names (an error it reports, `type_error`) passes nothing: the fix is where it is
/// thrown. On the dev set: function acc@10 62.5 -> 63.5%, any@10 67.7 -> 68.8% (sympy-13437's
/// `bell.eval`, past the first 10 -> 8th); Multi-SWE-bench the same. Every named type, at a
/// fifth of [`NAMED`] each: dev the same, Multi-SWE-bench any@10 -2.4 (nlohmann's
/// `type_error`). Entry points only, against every function of the type: dev acc@5 59.4 ->
/// 60.4% (`bell.eval` 8th -> 4th, ahead of the `_bell`, `_bell_poly` and
/// `_bell_incomplete_poly` it calls), Multi-SWE-bench the same.
pub(super) fn constructed(
    f: &FileFacts,
    starts: &[usize],
    lines: &[&str],
    asked: &Asked<'_>,
) -> Vec<(usize, usize, f64)> {
    if asked.kind.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in f
        .symbols
        .iter()
        .filter(|s| is_type(s.kind) && asked.called.contains(bare_name(&s.name)))
    {
        let inside =
            starts.partition_point(|&l| l <= t.line)..starts.partition_point(|&l| l <= t.end_line);
        if inside.is_empty() {
            continue;
        }
        let functions: Vec<&crate::facts::FactSymbol> = f
            .symbols
            .iter()
            .filter(|s| is_function(s) && s.line > t.line && s.end_line <= t.end_line)
            .collect();
        let entries = entry_points(&functions, lines);
        if entries.is_empty() {
            out.push((t.line, t.end_line, NAMED / inside.len() as f64));
        } else {
            let each = NAMED / entries.len() as f64;
            out.extend(entries.iter().map(|s| (s.line, s.end_line, each)));
        }
    }
    out
}

/// Those of a type's `functions` that none of the others calls by name in its code: what
/// running the type reaches first, the helpers they call reached through them
/// ([`called_gain`]).
fn entry_points<'f>(
    functions: &[&'f crate::facts::FactSymbol],
    lines: &[&str],
) -> Vec<&'f crate::facts::FactSymbol> {
    let mut called: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for g in functions {
        let body = lines
            .get(g.line.saturating_sub(1)..g.end_line.min(lines.len()))
            .unwrap_or_default();
        for line in body.iter().filter(|l| !is_example_or_comment(l)) {
            for id in retrieve::tokenize::identifiers(line) {
                let after = line[id.offset + id.text.len()..].trim_start();
                if after.starts_with('(') && id.text != bare_name(&g.name) {
                    called.insert(id.text);
                }
            }
        }
    }
    functions
        .iter()
        .copied()
        .filter(|s| !called.contains(bare_name(&s.name)))
        .collect()
}

/// What function `s` gains for the types holding it that a task calls ([`constructed`]): the
/// most of them.
pub(super) fn constructed_gain(s: &crate::facts::FactSymbol, types: &[(usize, usize, f64)]) -> f64 {
    types
        .iter()
        .filter(|&&(start, end, _)| is_function(s) && s.line >= start && s.end_line <= end)
        .map(|t| t.2)
        .fold(0.0, f64::max)
}
