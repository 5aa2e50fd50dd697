//! The tests of what a file's lines hold of a query: its definitions' scores and what they pass on.
use super::*;

/// The facts of a file of definitions, each `(name, kind, line, end_line)`.
fn facts_of(defs: &[(&str, Kind, usize, usize)]) -> FileFacts {
    let symbols = defs
        .iter()
        .map(|&(name, kind, line, end_line)| crate::facts::FactSymbol {
            name: name.to_owned(),
            kind,
            line,
            end_line,
            signature: String::new(),
        })
        .collect();
    FileFacts {
        symbols,
        imports: Vec::new(),
    }
}

/// A task naming `named` (as a call where `called`) and `also`, with `weights` for its words,
/// quoting the messages `said` and the lines of code `code`.
#[derive(Default)]
struct Task<'a> {
    named: &'a str,
    /// Other names it writes (not as calls).
    also: &'a [&'a str],
    called: bool,
    weights: &'a [(&'a str, f32)],
    said: &'a [String],
    code: &'a [&'a str],
}

/// What `best_symbols` lists of `facts` (a file holding `text`) for `task`: each definition's
/// name and score against the best (1 for it), the best first.
fn listed(facts: &FileFacts, text: &str, task: &Task<'_>) -> Vec<(String, f64)> {
    let mut idents: HashMap<&str, usize> = [(task.named, 1)].into();
    idents.extend(task.also.iter().map(|n| (*n, 1)));
    let calls: std::collections::HashSet<&str> = if task.called {
        [task.named].into()
    } else {
        Default::default()
    };
    let weights: HashMap<&str, f32> = task.weights.iter().copied().collect();
    let code = task.code.iter().map(|l| (*l).to_owned()).collect();
    let asked = Asked {
        idents: &idents,
        called: &calls,
        weights: &weights,
        said: task.said,
        framed: &[],
        code: &code,
        kind: None,
        impls: &Default::default(),
    };
    let (hits, _) = best_symbols(facts, Some(text), &asked, 10);
    hits.into_iter().map(|h| (h.name, h.score)).collect()
}

/// The names of what [`listed`] lists, in its order.
fn names_of(hits: &[(String, f64)]) -> Vec<&str> {
    hits.iter().map(|h| h.0.as_str()).collect()
}

/// `render`, and `_layout`, which holds the task's words; the scores `best_symbols` gives
/// them (the best first, 1 for it) when the task names `render` as it is and as a call.
fn render_and_layout(called: bool) -> Vec<(String, f64)> {
    let text = "def render(page):\n    return draw(page)\n\n\ndef _layout(page):\n    margin = page.margin\n    return overflow(margin)\n";
    let facts = facts_of(&[
        ("render", Kind::Function, 1, 2),
        ("_layout", Kind::Function, 5, 7),
    ]);
    let weights = [("margin", 1.0), ("overflow", 1.0), ("layout", 1.0)];
    let task = Task {
        named: "render",
        called,
        weights: &weights,
        ..Task::default()
    };
    listed(&facts, text, &task)
}

#[test]
fn a_function_a_task_calls_weighs_less_than_one_it_names() {
    // Named, `render` is far ahead of the function holding the words (2 against 1.5).
    let named = render_and_layout(false);
    assert_eq!(named[0], ("render".to_owned(), 1.0), "{named:?}");
    assert_eq!(named[1], ("_layout".to_owned(), 0.75), "{named:?}");
    // Called (`render(page)`), it weighs `NAMED_CALLED`: level with `_layout`.
    let called = render_and_layout(true);
    let score = |name: &str| called.iter().find(|h| h.0 == name).map(|h| h.1);
    assert_eq!(score("render"), Some(1.0), "{called:?}");
    assert_eq!(score("_layout"), Some(1.0), "{called:?}");
}

#[test]
fn a_function_holding_what_a_task_quotes_outranks_one_it_names() {
    let text = "def collect(self):\n    return self.collect(only=True)\n\n\ndef add_options(parser):\n    parser.add(\"--collect-only\")\n";
    let facts = facts_of(&[
        ("collect", Kind::Function, 1, 2),
        ("add_options", Kind::Function, 5, 6),
    ]);
    let said = ["collect-only".to_owned()];
    let task = Task {
        named: "collect",
        weights: &[("collect", 1.0), ("only", 1.0)],
        said: &said,
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    let names = names_of(&hits);
    assert_eq!(names, ["add_options", "collect"], "{hits:?}");
    assert!(hits[1].1 < hits[0].1, "{hits:?}");
}

/// The scores against the best of class `bell`'s methods and of `limit`, which holds the
/// task's word, where the task names `bell` and, if `called`, writes it as a call; `eval`
/// returns `eval_returns`.
fn class_scores(called: bool, eval_returns: &str) -> HashMap<String, f64> {
    let text = format!(
        "class bell(Function):\n    def _bell(n):\n        return n\n\n    def eval(cls, n):\n        return {eval_returns}\n\n\ndef limit(e, z):\n    return e.oo\n"
    );
    let facts = facts_of(&[
        ("bell", Kind::Class, 1, 6),
        ("_bell", Kind::Method, 2, 3),
        ("eval", Kind::Method, 5, 6),
        ("limit", Kind::Function, 9, 10),
    ]);
    let task = Task {
        named: "bell",
        called,
        weights: &[("oo", 1.0)],
        ..Task::default()
    };
    listed(&facts, &text, &task).into_iter().collect()
}

#[test]
fn a_class_a_task_calls_shares_its_naming_among_its_methods() {
    // `bell(n)`: each of its two methods gains half of `NAMED`, as much as `limit` holds.
    let called = class_scores(true, "n + 1");
    assert_eq!(called.get("bell"), Some(&1.0), "{called:?}");
    assert_eq!(called.get("eval"), Some(&0.5), "{called:?}");
    assert_eq!(called.get("_bell"), Some(&0.5), "{called:?}");
    assert_eq!(called.get("limit"), Some(&0.5), "{called:?}");
    // Only named (an error type a task reports), it passes nothing on.
    let named = class_scores(false, "n + 1");
    assert_eq!(named.get("eval"), None, "{named:?}");
    assert_eq!(named.get("limit"), Some(&0.5), "{named:?}");
}

/// A called class's naming goes to the functions none of its others calls (what running it
/// reaches first); the helpers they call gain through them.
#[test]
fn a_class_a_task_calls_passes_its_naming_to_its_entry_points() {
    let scores = class_scores(true, "cls._bell(n) + 1");
    assert_eq!(scores.get("eval"), Some(&1.0), "{scores:?}");
    let helper = scores.get("_bell").copied().unwrap_or_default();
    assert!(helper > 0.5 && helper < 1.0, "{scores:?}");
}

/// A function's signature (`def sqf_list(f):`) calls no other function of its name: a
/// method `sqf_list` gains nothing from the free function that holds the task's words.
#[test]
fn a_signature_calls_nothing() {
    let text = "class Poly:\n    def sqf_list(self):\n        return self\n\n\ndef sqf_list(f):\n    return f.oo\n";
    let facts = facts_of(&[
        ("Poly", Kind::Class, 1, 3),
        ("sqf_list", Kind::Method, 2, 3),
        ("sqf_list", Kind::Function, 6, 7),
    ]);
    let task = Task {
        named: "factor",
        weights: &[("oo", 1.0)],
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    assert_eq!(names_of(&hits), ["sqf_list"], "{hits:?}");
}

/// The scores against the best of `run` (named), which calls `_apply`, which calls one of
/// `_OPS`'s functions by the operator, and the rest, for a task quoting `code`.
fn table_scores(code: &[&str]) -> HashMap<String, f64> {
    let text = "def run(expr):\n    return _apply(expr)\n\ndef _apply(expr):\n    return _OPS[expr.op](expr.left, expr.right)\n\ndef _stack(a, b):\n    return a\n\ndef _dot(a, b):\n    return b\n\ndef unrelated(a):\n    return a\n\n_OPS = {'&': _stack, '|': _dot, '+': _dot}\n";
    let facts = facts_of(&[
        ("run", Kind::Function, 1, 2),
        ("_apply", Kind::Function, 4, 5),
        ("_stack", Kind::Function, 7, 8),
        ("_dot", Kind::Function, 10, 11),
        ("unrelated", Kind::Function, 13, 14),
        ("_OPS", Kind::Variable, 16, 16),
    ]);
    let task = Task {
        named: "run",
        weights: &[("run", 1.0)],
        code,
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    let best = hits.iter().find(|h| h.0 == "run").expect("run is listed").1;
    hits.into_iter()
        .map(|(name, score)| (name, score / best))
        .collect()
}

#[test]
fn a_named_function_passes_its_score_two_calls_deep_and_through_a_table_of_functions() {
    // Each of the table's two functions gains a half of what a direct callee gains.
    let scores = table_scores(&[]);
    assert!((scores["_apply"] - CALLEE_SHARE).abs() < 1e-3, "{scores:?}");
    let each = CALLEE_SHARE * CALLEE_SHARE / 2.0;
    for name in ["_stack", "_dot"] {
        assert!((scores[name] - each).abs() < 1e-3, "{name}: {scores:?}");
    }
    assert_eq!(scores.get("unrelated"), None, "{scores:?}");
    // A task writing `&` in its code reaches `_stack`, the function of that key, whole;
    // `&&` writes no `&`.
    let keyed = table_scores(&["x = run(Expr(a) & Expr(b))"]);
    let whole = CALLEE_SHARE * CALLEE_SHARE;
    assert!((keyed["_stack"] - whole).abs() < 1e-3, "{keyed:?}");
    assert!((keyed["_dot"] - each).abs() < 1e-3, "{keyed:?}");
    let logic = table_scores(&["ok = run(Expr(a)) && run(b)"]);
    assert!((logic["_stack"] - each).abs() < 1e-3, "{logic:?}");
}

/// Two helpers a named function calls gain the same share of it: the one holding the task's
/// words comes first though it comes last in the file, and by no more than a tie-break.
#[test]
fn callees_raised_alike_come_in_the_order_of_what_they_hold() {
    let text = "def run(job):\n    _prepare(job)\n    return _retry(job)\n\n\ndef _prepare(job):\n    return job\n\n\ndef _retry(job):\n    return backoff(timeout)\n";
    let facts = facts_of(&[
        ("run", Kind::Function, 1, 3),
        ("_prepare", Kind::Function, 6, 7),
        ("_retry", Kind::Function, 10, 11),
    ]);
    let task = Task {
        named: "run",
        weights: &[("backoff", 1.0), ("timeout", 1.0)],
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    let names = names_of(&hits);
    assert_eq!(names, ["run", "_retry", "_prepare"], "{hits:?}");
    // Scores are against the best (1 for it): the tie-break is under `OWN_TIE` of it.
    let gap = hits[1].1 - hits[2].1;
    assert!(gap > 0.0 && gap <= OWN_TIE, "{hits:?}");
}

/// A named function calling `size(` where the file defines two `size` (a base and its
/// override) and one `_check`: each `size` gains half of what `_check`, the only one of its
/// name, gains.
#[test]
fn a_call_to_a_name_defined_twice_shares_its_gain_between_them() {
    let text = "def run(job):\n    _check(job)\n    return job.size()\n\nclass Base:\n    def size(self):\n        return 0\n\nclass Sized(Base):\n    def size(self):\n        return 1\n\ndef _check(job):\n    return job\n";
    let facts = facts_of(&[
        ("run", Kind::Function, 1, 3),
        ("Base", Kind::Class, 5, 7),
        ("size", Kind::Method, 6, 7),
        ("Sized", Kind::Class, 9, 11),
        ("size", Kind::Method, 10, 11),
        ("_check", Kind::Function, 13, 14),
    ]);
    let task = Task {
        named: "run",
        weights: &[("run", 1.0)],
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    let score = |name: &str| {
        hits.iter()
            .filter(|h| h.0 == name)
            .map(|h| h.1)
            .collect::<Vec<_>>()
    };
    assert!((score("_check")[0] - CALLEE_SHARE).abs() < 1e-3, "{hits:?}");
    let sizes = score("size");
    assert_eq!(sizes.len(), 2, "{hits:?}");
    for s in sizes {
        assert!((s - CALLEE_SHARE / 2.0).abs() < 1e-3, "{hits:?}");
    }
}

/// A task that writes `__init__` alone names no class's constructor: the function holding its
/// words comes first; with the class named too (`Circle.__init__`), the constructor is named.
#[test]
fn a_constructor_is_named_with_its_class_not_alone() {
    let text = "class Circle:\n    def __init__(self, radius):\n        self.radius = radius\n\n\ndef resize(shape, factor):\n    return shape.radius * factor\n";
    let facts = facts_of(&[
        ("Circle", Kind::Class, 1, 3),
        ("__init__", Kind::Method, 2, 3),
        ("resize", Kind::Function, 6, 7),
    ]);
    let weights = [("factor", 1.0), ("resize", 1.0)];
    let first = |also: &[&str]| {
        let task = Task {
            named: "__init__",
            also,
            weights: &weights,
            ..Task::default()
        };
        listed(&facts, text, &task)[0].0.clone()
    };
    assert_eq!(first(&[]), "resize");
    assert_eq!(first(&["Circle"]), "__init__");
    // Holding a message the task quotes, a bare `__init__` is pointed at all the same.
    let said = ["radius must be positive".to_owned()];
    let text = text.replace(
        "self.radius = radius",
        "raise ValueError(\"radius must be positive\")",
    );
    let task = Task {
        named: "__init__",
        weights: &weights,
        said: &said,
        ..Task::default()
    };
    assert_eq!(listed(&facts, &text, &task)[0].0, "__init__");
}

/// What a named function's docstring shows as an example (`>>> M = zeros(3)`) or a comment
/// mentions is not what it calls: only the helper its code calls gains with it.
#[test]
fn a_doctest_or_a_comment_calls_nothing() {
    let text = "def insert(m, v):\n    \"\"\"\n    >>> m = zeros(3)\n    \"\"\"\n    # like stack(m, v)\n    return _insert(m, v)\n\n\ndef zeros(n):\n    return n\n\n\ndef stack(m, v):\n    return m\n\n\ndef _insert(m, v):\n    return v\n";
    let facts = facts_of(&[
        ("insert", Kind::Function, 1, 6),
        ("zeros", Kind::Function, 9, 10),
        ("stack", Kind::Function, 13, 14),
        ("_insert", Kind::Function, 17, 18),
    ]);
    let task = Task {
        named: "insert",
        weights: &[("insert", 1.0)],
        ..Task::default()
    };
    let hits = listed(&facts, text, &task);
    let names = names_of(&hits);
    assert_eq!(names, ["insert", "_insert"], "{hits:?}");
}

/// Doctest prompts and line comments are not code; a spread, a product broken before its
/// operator and a line ending in a comment are.
#[test]
fn examples_and_comments_are_told_from_code() {
    for line in [
        "    >>> m = zeros(3)",
        "    ...     f(x)",
        "...",
        "  # f(x)",
        "// f(x)",
        "/// f(x)",
    ] {
        assert!(is_example_or_comment(line), "{line}");
    }
    // A JavaScript spread, a Python product broken before its operator, a trailing comment.
    for line in [
        "    ...collect(a),",
        "    * compute(b))",
        "    return f(x)  # why",
    ] {
        assert!(!is_example_or_comment(line), "{line}");
    }
}

#[test]
fn a_variant_is_named_as_its_function_with_an_affix() {
    for (a, b) in [
        ("get_int_le", "get_int"),
        ("try_get_int", "get_int"),
        ("par_chunks_mut", "par_chunks"),
        ("__rmatmul__", "__matmul__"),
        ("__iadd__", "__add__"),
        ("_print_Poly_ring", "_print_Poly"),
        ("_eval_is_upper_hessenberg", "is_upper"),
    ] {
        assert!(is_variant(a, b), "{a} of {b}");
    }
    for (a, b) in [
        ("get_integer", "get_int"),
        ("get_int", "get_int"),
        ("get_int", "get_int_le"),
        ("rmatmul", "matmul"),
        ("__init__", "_"),
        ("set_get_int", "get"),
        ("_eval_is_uppercase_x", "is_upper"),
    ] {
        assert!(!is_variant(a, b), "{a} of {b}");
    }
}

#[test]
fn line_terms_finds_what_tokenizing_every_line_finds() {
    let text = "fn resolveRedirects() {\n  // nothing here\r\n  let \u{212A}elvin = HTTPServer::new();\n\n  redirects(kelvin); // naïve redirects\n}";
    let words = ["redirects", "kelvin", "server", "http", "resolveredirects"];
    let ids: HashMap<&str, usize> = words.iter().enumerate().map(|(i, w)| (*w, i)).collect();
    let every: Vec<Vec<usize>> = text
        .lines()
        .map(|line| {
            let mut found = Vec::new();
            retrieve::tokenize::tokens(line, |t, _, _, _| {
                if let Some(&i) = ids.get(t) {
                    found.push(i);
                }
            });
            found
        })
        .collect();
    assert_eq!(line_terms(text, &ids), every);
    assert_eq!(every[2], vec![1, 3, 2], "the Kelvin sign lowercases to k");
    assert_eq!(every[4], vec![0, 1, 0]);
}
