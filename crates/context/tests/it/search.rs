//! Search: the index beside the store kept in step by content, and the fused ranking's
//! promises (definitions, paths, priors, limits) through context's public API.
use context::search::{Ranking, SearchRequest, index_dir, search, sync_index};
use context::{Hit, TreeFacts};
use pretty_assertions::assert_eq;

use crate::fixture::Fixture;

fn run(fx: &Fixture, query: &str, limit: usize, ranking: Ranking) -> Vec<Hit> {
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let (index, _) = sync_index(&fx.store, &facts, &index_dir(&fx.store)).expect("index");
    let req = SearchRequest {
        query,
        limit,
        filter: None,
        ranking,
        symbols: context::search::MAX_SYMBOLS,
    };
    search(&fx.store, &facts, &index, &req).expect("search")
}

fn paths(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}

#[test]
fn the_index_is_built_once_and_a_one_file_edit_indexes_one_document() {
    let fx = Fixture::new();
    let dir = index_dir(&fx.store);
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let (index, built) = sync_index(&fx.store, &facts, &dir).expect("index");
    assert_eq!(built, facts.files.len());
    assert_eq!(index.len(), facts.files.len());
    drop(index);
    // Read, not rebuilt.
    let (_, again) = sync_index(&fx.store, &facts, &dir).expect("index");
    assert_eq!(again, 0);
    fx.edit(
        "src/util/strings.rs",
        "pub fn whisper() { /* quietly */ }\n",
    );
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let (_, edited) = sync_index(&fx.store, &facts, &dir).expect("index");
    assert_eq!(edited, 1);
    // The edit is searchable by its text, and the old text is gone.
    assert_eq!(
        run(&fx, "quietly", 5, Ranking::Fused)[0].path,
        "src/util/strings.rs"
    );
    assert_eq!(
        paths(&run(&fx, "uppercase", 5, Ranking::Plain)),
        Vec::<&str>::new()
    );
    // A removed file leaves the index.
    std::fs::remove_file(fx.dir.path().join("docs/guide.md")).expect("remove");
    fx.rescan();
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let (index, _) = sync_index(&fx.store, &facts, &dir).expect("index");
    assert_eq!(index.len(), facts.files.len());
}

#[test]
fn a_damaged_index_is_built_again() {
    let fx = Fixture::new();
    let dir = index_dir(&fx.store);
    let facts = TreeFacts::load(&fx.store).expect("facts");
    drop(sync_index(&fx.store, &facts, &dir).expect("index"));
    // The manifest the last commit names is gone: the index cannot be trusted.
    for entry in std::fs::read_dir(&dir).expect("index dir") {
        let path = entry.expect("entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("manifest-"))
        {
            std::fs::write(&path, b"garbage").expect("damage");
        }
    }
    let (index, built) = sync_index(&fx.store, &facts, &dir).expect("index");
    assert_eq!(built, facts.files.len());
    assert_eq!(index.len(), facts.files.len());
    assert_eq!(
        paths(&run(&fx, "shout", 1, Ranking::Fused)),
        ["src/util/strings.rs"]
    );
}

#[test]
fn definitions_lines_and_why_come_with_each_hit() {
    let fx = Fixture::new();
    let hits = run(
        &fx,
        "why does `shout()` not uppercase the string?",
        3,
        Ranking::Fused,
    );
    assert_eq!(hits[0].path, "src/util/strings.rs");
    let s = &hits[0].symbols[0];
    assert_eq!((s.name.as_str(), s.line_start, s.line_end), ("shout", 1, 3));
    assert!(
        hits[0].why.iter().any(|w| w == "defines: shout"),
        "{:?}",
        hits[0].why
    );
    assert!(
        hits[0].why.iter().any(|w| w.starts_with("words: ")),
        "{:?}",
        hits[0].why
    );
}

#[test]
fn a_traceback_path_wins_and_the_limit_only_cuts_the_order() {
    let fx = Fixture::new();
    let query = "Traceback (most recent call last):\n  File \"/home/u/fixture/src/util/mod.rs\", line 4, in one\nValueError: answer is wrong";
    let all = run(&fx, query, 100, Ranking::Fused);
    assert_eq!(all[0].path, "src/util/mod.rs");
    for limit in 1..all.len() {
        assert_eq!(run(&fx, query, limit, Ranking::Fused), all[..limit]);
    }
}

#[test]
fn queries_with_nothing_to_look_for_find_nothing() {
    let fx = Fixture::new();
    assert_eq!(run(&fx, "", 5, Ranking::Fused), []);
    assert_eq!(
        run(&fx, "and so it was that the one", 5, Ranking::Fused),
        []
    );
    let binary = String::from_utf8_lossy(&[0xff, 0xfe, 0, 1, 2, 0x80]).into_owned();
    assert_eq!(run(&fx, &binary, 5, Ranking::Fused), []);
    assert_eq!(run(&fx, "shout", 0, Ranking::Fused), []);
}

#[test]
fn a_listing_answers_as_the_loaded_facts_do_and_the_current_tree_sees_an_unscanned_edit() {
    let fx = Fixture::new();
    let full = TreeFacts::load(&fx.store).expect("facts");
    let listing = TreeFacts::listing(&fx.store).expect("listing");
    assert!(listing.is_listing() && !full.is_listing());
    assert!(listing.files.iter().all(|f| f.facts == Default::default()));
    // Each file's facts, asked for, are the loaded ones.
    let files: Vec<_> = listing.files.iter().collect();
    let asked = listing.facts_of(&fx.store, &files).expect("facts of");
    let loaded: Vec<_> = full.files.iter().map(|f| f.facts.clone()).collect();
    assert_eq!(asked, loaded);
    // And a search over either is the same search.
    let (index, _) = sync_index(&fx.store, &full, &index_dir(&fx.store)).expect("index");
    for (query, filter) in [
        ("shout", None),
        ("answer uppercase strings", None),
        ("File \"src/util/strings.rs\", line 2, in shout", None),
        ("shout", context::search::Filter::parse("function")),
    ] {
        let req = SearchRequest {
            query,
            limit: 10,
            filter,
            ranking: Ranking::Fused,
            symbols: context::search::MAX_SYMBOLS,
        };
        let a = search(&fx.store, &full, &index, &req).expect("search");
        let b = search(&fx.store, &listing, &index, &req).expect("search");
        assert!(!a.is_empty(), "{query:?} finds something");
        assert_eq!(a, b, "{query:?}");
    }
}

#[test]
fn a_snake_case_name_that_spells_a_module_path_names_that_module() {
    let fx = Fixture::new();
    let hits = run(
        &fx,
        "the util_strings setting gives the wrong answer",
        3,
        Ranking::Fused,
    );
    assert_eq!(hits[0].path, "src/util/strings.rs", "{hits:#?}");
    assert!(
        hits[0].why.iter().any(|w| w == "path: util_strings"),
        "{:?}",
        hits[0].why
    );
}

/// A dunder a task names (`__init__`) is a method of every class, not a package's
/// `__init__.py`: it names no file, as `shapes` names `shapes.py`.
#[test]
fn a_dunder_names_no_package_file() {
    let fx = Fixture::new();
    fx.edit("src/util/__init__.py", "from .shapes import Circle\n");
    fx.edit(
        "src/util/shapes.py",
        "class Circle:\n    def __init__(self, radius):\n        self.radius = radius\n",
    );
    let query = "`Circle.__init__` forgets the radius when `shapes` are copied:\n\
                 ```\nc = Circle(2)\n```";
    let hits = run(&fx, query, 10, Ranking::Fused);
    let named = |p: &str| {
        hits.iter()
            .find(|h| h.path == p)
            .is_some_and(|h| h.why.iter().any(|w| w == "file name"))
    };
    assert!(
        hits.iter().any(|h| h.path == "src/util/__init__.py"),
        "{hits:#?}"
    );
    assert!(named("src/util/shapes.py"), "{hits:#?}");
    assert!(!named("src/util/__init__.py"), "{hits:#?}");
}

/// A dotted name for a package (`printing.pretty`) names its `__init__.py` and the module
/// bearing its name (`pretty/pretty.py`), where such a package keeps its code.
#[test]
fn a_dotted_package_names_the_module_of_its_name_too() {
    let fx = Fixture::new();
    fx.edit(
        "src/printing/pretty/__init__.py",
        "from .pretty import pretty_print\n",
    );
    fx.edit(
        "src/printing/pretty/pretty.py",
        "def pretty_print(expr):\n    return str(expr)\n",
    );
    fx.edit(
        "src/printing/pretty/symbols.py",
        "def glyph(name):\n    return name\n",
    );
    let query = "a root renders wrong; I did not see this among others in printing.pretty";
    let hits = run(&fx, query, 10, Ranking::Fused);
    let named = |p: &str| {
        hits.iter()
            .find(|h| h.path == p)
            .is_some_and(|h| h.why.iter().any(|w| w == "path: printing.pretty"))
    };
    assert!(named("src/printing/pretty/__init__.py"), "{hits:#?}");
    assert!(named("src/printing/pretty/pretty.py"), "{hits:#?}");
    assert!(!named("src/printing/pretty/symbols.py"), "{hits:#?}");
}

#[test]
fn an_error_naming_a_method_by_its_type_points_at_the_file_defining_both() {
    let fx = Fixture::new();
    fx.edit(
        "src/ascii/rst.py",
        "class RST(FixedWidth):\n    def __init__(self):\n        super().__init__()\n",
    );
    // Defines a type of that name, but not the method.
    fx.edit(
        "src/ascii/other.py",
        "class RST:\n    pass\n\ndef __init__():\n    pass\n",
    );
    fx.edit(
        "src/ascii/core.py",
        "def get_writer(Writer, **kwargs):\n    return Writer(**kwargs)\n",
    );
    let query = "Writing fails\n\nTraceback (most recent call last):\n  \
                 File \"/usr/lib/python3/ascii/core.py\", line 2, in get_writer\n    \
                 return Writer(**kwargs)\n\
                 TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'\n";
    let hits = run(&fx, query, 10, Ranking::Fused);
    let blamed = |p: &str| {
        hits.iter()
            .find(|h| h.path == p)
            .is_some_and(|h| h.why.iter().any(|w| w.contains("RST.__init__()")))
    };
    assert!(blamed("src/ascii/rst.py"), "{hits:#?}");
    assert!(!blamed("src/ascii/other.py"), "{hits:#?}");
}

#[test]
fn a_task_s_words_met_in_one_function_outrank_the_same_words_spread_over_a_file() {
    let fx = Fixture::new();
    let body = |words: [&str; 4]| {
        ["alpha", "beta", "gamma", "delta"]
            .iter()
            .zip(words)
            .map(|(name, text)| format!("pub fn {name}() -> &'static str {{\n    \"{text}\"\n}}\n"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The same words and names, but `spread.rs` is a byte larger (which the prior
    // for small files favours, and the tie would go to it by path too).
    fx.edit(
        "src/spread.rs",
        &body(["ledger ", "reconcile ", "balance ", "drift "]),
    );
    fx.edit(
        "src/together.rs",
        &body(["ledger reconcile balance drift", "", "", ""]),
    );
    let query = "the ledger does not reconcile: the balance shows a drift after a day";
    let hits = run(&fx, query, 2, Ranking::Fused);
    assert_eq!(paths(&hits), ["src/together.rs", "src/spread.rs"]);
    assert!(
        hits[0].why.iter().any(|w| w == "together in: alpha"),
        "{:?}",
        hits[0].why
    );
    assert!(
        !hits[1].why.iter().any(|w| w.starts_with("together in")),
        "one word a function: {:?}",
        hits[1].why
    );
    // Plain BM25 cannot tell them apart: a tie, by path.
    assert_eq!(
        paths(&run(&fx, query, 2, Ranking::Plain)),
        ["src/spread.rs", "src/together.rs"]
    );
}

/// An error message the task quotes is found as written: the file that prints it comes first
/// and says so, though other files hold the same words apart.
#[test]
fn a_quoted_error_message_finds_the_file_that_prints_it() {
    let fx = Fixture::new();
    fx.edit(
        "src/util/strings.rs",
        "pub fn shout(s: &str) -> String {\n    if s.is_empty() {\n        \
         panic!(\"cannot shout an empty string\");\n    }\n    s.to_uppercase()\n}\n",
    );
    fx.edit(
        "docs/guide.md",
        "# Guide\n\nAn empty string: we cannot shout it, and never an empty one.\n",
    );
    let query = "Running the tool crashes:\n```\nthread 'main' panicked at 'cannot shout an \
                 empty string'\n```\nwith no input at all.";
    let hits = run(&fx, query, 3, Ranking::Fused);
    assert_eq!(hits[0].path, "src/util/strings.rs", "{hits:?}");
    assert!(
        hits[0]
            .why
            .contains(&"says: cannot shout an empty string".to_owned()),
        "{:?}",
        hits[0].why
    );
    assert!(
        hits.iter()
            .filter(|h| h.path == "docs/guide.md")
            .all(|h| !h.why.iter().any(|w| w.starts_with("says:"))),
        "{hits:?}"
    );
}

/// A task's first line, when more follow, is its title (an issue's, a commit's subject): its
/// words count again on their own, so the file the title names outranks one that only more of
/// the body's words name; the same lines with the title last do not.
#[test]
fn a_task_s_title_counts_above_its_body() {
    let fx = Fixture::new();
    fx.edit(
        "src/evict.rs",
        "pub fn evict() -> &'static str {\n    \"eviction keeps stale entries\"\n}\n",
    );
    fx.edit(
        "src/render.rs",
        "pub fn render() -> &'static str {\n    \"table rows colour width\"\n}\n",
    );
    let title = "Eviction keeps stale entries";
    let body = "When the table is drawn, its rows lose their colour and their width.";
    let hits = run(&fx, &format!("{title}\n\n{body}"), 2, Ranking::Fused);
    assert_eq!(paths(&hits), ["src/evict.rs", "src/render.rs"]);
    let hits = run(&fx, &format!("{body}\n\n{title}"), 2, Ranking::Fused);
    assert_eq!(paths(&hits), ["src/render.rs", "src/evict.rs"]);
}

/// A word is looked for in its other forms too (`started`: `start`), and a folder a question
/// names by a word (`test`) is what it asks about: the prior does not hold it against a file.
#[test]
fn a_question_finds_other_word_forms_and_the_folder_it_names() {
    let fx = Fixture::new();
    fx.edit(
        "src/launch.rs",
        "pub fn launch() {\n    // start the daemon here\n}\n",
    );
    // The same words and size but `start`, and first by path in a tie.
    fx.edit(
        "src/halt.rs",
        "pub fn halted() {\n    // sleep the daemon here\n}\n",
    );
    let hits = run(&fx, "where is the daemon started", 2, Ranking::Fused);
    assert_eq!(paths(&hits), ["src/launch.rs", "src/halt.rs"]);
    assert!(
        hits[0].why.contains(&"words: daemon, start".to_owned()),
        "{:?}",
        hits[0].why
    );

    let text = "pub fn summary() -> &'static str {\n    \"the reporter prints a summary\"\n}\n";
    for dir in ["src/test", "src/report"] {
        std::fs::create_dir_all(fx.dir.path().join(dir)).expect("mkdir");
    }
    fx.edit("src/test/summary.rs", text);
    fx.edit("src/report/summary.rs", text);
    assert_eq!(
        paths(&run(&fx, "test reporter summary", 2, Ranking::Fused)),
        ["src/test/summary.rs", "src/report/summary.rs"]
    );
    // Not named, the test folder counts for less.
    assert_eq!(
        paths(&run(&fx, "reporter summary printed", 2, Ranking::Fused)),
        ["src/report/summary.rs", "src/test/summary.rs"]
    );
}

/// A class is not weighed by the words its methods hold: they are the lines to read. It comes
/// at nine tenths of its best method (a fix may add a method or an attribute to it), here
/// after both; named, first.
#[test]
fn a_class_s_methods_are_listed_for_the_words_they_hold_not_the_class() {
    let fx = Fixture::new();
    fx.edit(
        "src/ledger.py",
        "class Ledger:\n    def reconcile(self):\n        return \"reconcile the balance\"\n\n    \
         def close(self):\n        return \"close the books\"\n",
    );
    let names = |query: &str| -> Vec<String> {
        let hits = run(&fx, query, 5, Ranking::Fused);
        let hit = hits
            .iter()
            .find(|h| h.path == "src/ledger.py")
            .expect("the ledger is found");
        hit.symbols.iter().map(|s| s.name.clone()).collect()
    };
    assert_eq!(
        names("the balance does not reconcile and the books never close"),
        ["reconcile", "close", "Ledger"]
    );
    assert_eq!(
        names("`Ledger` does not reconcile the balance and the books never close")[0],
        "Ledger"
    );
}

/// A namespace, a module or a package is a scope, passed through as an impl block is: the
/// definitions it holds are listed, never the scope, even where the task names it (a library's
/// namespace is in most of its issues). Asked for by kind, it is listed.
#[test]
fn a_namespace_or_a_module_is_never_listed_as_a_definition() {
    let fx = Fixture::new();
    for dir in ["include", "src"] {
        std::fs::create_dir_all(fx.dir.path().join(dir)).expect("mkdir");
    }
    fx.edit(
        "include/ledger.hpp",
        "namespace ledger {\nusing balance_t = long;\nconst int reconcile_limit = 3;\n\
         int reconcile(int balance) { return balance; }\n}\n",
    );
    fx.edit(
        "src/books.rs",
        "mod ledger {\n    pub fn close_books() -> u32 {\n        1\n    }\n}\n",
    );
    let names = |query: &str, path: &str| -> Vec<String> {
        let hits = run(&fx, query, 5, Ranking::Fused);
        let hit = hits
            .iter()
            .find(|h| h.path == path)
            .expect("the file is found");
        hit.symbols.iter().map(|s| s.name.clone()).collect()
    };
    let cpp = names(
        "ledger::reconcile goes past the reconcile_limit",
        "include/ledger.hpp",
    );
    assert!(!cpp.contains(&"ledger".to_owned()), "{cpp:?}");
    assert!(cpp.contains(&"reconcile".to_owned()), "{cpp:?}");
    let rust = names("the ledger cannot close_books", "src/books.rs");
    assert_eq!(rust, ["close_books"]);
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let (index, _) = sync_index(&fx.store, &facts, &index_dir(&fx.store)).expect("index");
    let req = SearchRequest {
        query: "ledger",
        limit: 5,
        filter: Some(context::search::Filter::Kind(outline::Kind::Namespace)),
        ranking: Ranking::Fused,
        symbols: context::search::MAX_SYMBOLS,
    };
    let hits = search(&fx.store, &facts, &index, &req).expect("search");
    let kinds: Vec<&str> = hits
        .iter()
        .flat_map(|h| h.symbols.iter().map(|s| s.kind.noun()))
        .collect();
    assert_eq!(kinds, ["namespace"]);
}

/// Runs git in `dir` with a fixed author, and answers its output.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=merkle",
            "-c",
            "user.email=merkle@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fixed_before(hits: &[Hit]) -> Vec<(&str, &str)> {
    hits.iter()
        .flat_map(|h| {
            h.why
                .iter()
                .filter_map(|w| w.strip_prefix("fixed before: "))
                .map(|w| (h.path.as_str(), w))
        })
        .collect()
}

#[test]
fn a_task_like_a_past_fix_finds_the_files_that_fix_changed_and_only_heads_history_counts() {
    let fx = Fixture::new();
    let dir = fx.dir.path();
    let task = "Accented greeting comes out garbled\nThe loud greeting prints accented letters \
                garbled when it runs.";
    // Not a git checkout: no history, and no error.
    let plain = run(&fx, task, 10, Ranking::Fused);
    assert_eq!(fixed_before(&plain), Vec::<(&str, &str)>::new());

    git(dir, &["init", "-q"]);
    git(dir, &["add", "src", "docs"]);
    git(dir, &["commit", "-q", "-m", "Start the library"]);
    fx.edit(
        "src/main.rs",
        "fn main() {\n    println!(\"{}!\", fixture::answer());\n}\n",
    );
    git(
        dir,
        &[
            "commit",
            "-q",
            "-am",
            "Fix garbled accented letters in the loud greeting",
        ],
    );
    let with_history = run(&fx, task, 10, Ranking::Fused);
    assert_eq!(
        fixed_before(&with_history),
        vec![(
            "src/main.rs",
            "Fix garbled accented letters in the loud greeting"
        )]
    );
    assert_eq!(with_history[0].path, "src/main.rs");
    // Kept for this HEAD in the store folder, and read from there.
    let kept = std::fs::read_to_string(fx.store.dir().join("history")).expect("history kept");
    let head = git(dir, &["rev-parse", "HEAD"]);
    assert!(kept.starts_with(&format!("merkle-history v3 {}", head.trim())));
    assert_eq!(run(&fx, task, 10, Ranking::Fused), with_history);

    // A commit more: the kept file takes the commits since, and is what a whole read makes.
    fx.edit(
        "src/util/strings.rs",
        "pub fn shout(s: &str) -> String {\n    s.to_uppercase() + \"!\"\n}\n",
    );
    git(
        dir,
        &["commit", "-q", "-am", "Shout with an exclamation mark"],
    );
    let after = run(&fx, task, 10, Ranking::Fused);
    let added = std::fs::read_to_string(fx.store.dir().join("history")).expect("history kept");
    assert!(added.contains("\tShout with an exclamation mark\tsrc/util/strings.rs\n"));
    std::fs::remove_file(fx.store.dir().join("history")).expect("remove");
    assert_eq!(run(&fx, task, 10, Ranking::Fused), after);
    let whole = std::fs::read_to_string(fx.store.dir().join("history")).expect("history kept");
    assert_eq!(added, whole);

    // An older checkout never sees a later fix.
    git(dir, &["checkout", "-q", "HEAD~2"]);
    fx.rescan();
    let older = run(&fx, task, 10, Ranking::Fused);
    assert_eq!(fixed_before(&older), Vec::<(&str, &str)>::new());
    // A lookup (a name, not a task) never reads the history.
    assert_eq!(
        fixed_before(&run(&fx, "greeting", 10, Ranking::Fused)),
        Vec::<(&str, &str)>::new()
    );
}

/// Removes object `id` from the loose objects of the git checkout at `dir`, as a mirror without
/// its large files, or a partial clone, lacks it.
fn remove_object(dir: &std::path::Path, id: &str) {
    let (fan, rest) = id.trim().split_at(2);
    std::fs::remove_file(dir.join(".git/objects").join(fan).join(rest)).expect("a loose object");
}

/// Each hit's `history_missing`.
fn history_missing(hits: &[Hit]) -> Vec<Option<&str>> {
    hits.iter().map(|h| h.history_missing.as_deref()).collect()
}

/// A blob git cannot read loses no past fix: the history is read from commits and trees alone
/// (finding a rename would read the blobs of the files moved). A tree it cannot read leaves
/// the history out, and each hit says why (issue #44).
#[test]
fn past_fixes_are_read_without_a_blob_and_a_history_git_cannot_read_is_named() {
    let fx = Fixture::new();
    let dir = fx.dir.path();
    // The answer is in the files' text: a search without history finds them still.
    let task = "Accented greeting comes out garbled\nThe loud greeting prints the answer with \
                accented letters garbled.";
    fx.edit("docs/notes.md", "Notes on how the fixture is laid out.\n");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "src", "docs"]);
    git(dir, &["commit", "-q", "-m", "Start the library"]);
    let first_tree = git(dir, &["rev-parse", "HEAD^{tree}"]);
    // Moved and rewritten: a rename only the two blobs' contents could tell.
    let notes = git(dir, &["rev-parse", "HEAD:docs/notes.md"]);
    std::fs::remove_file(dir.join("docs/notes.md")).expect("remove");
    fx.edit("docs/layout.md", "The layout: one module a feature.\n");
    git(dir, &["add", "-A", "docs"]);
    git(
        dir,
        &["commit", "-q", "-m", "Move the notes to a layout page"],
    );
    fx.edit(
        "src/main.rs",
        "fn main() {\n    println!(\"{}!\", fixture::answer());\n}\n",
    );
    git(
        dir,
        &[
            "commit",
            "-q",
            "-am",
            "Fix garbled accented letters in the loud greeting",
        ],
    );
    remove_object(dir, &notes);
    let hits = run(&fx, task, 10, Ranking::Fused);
    assert_eq!(
        fixed_before(&hits),
        vec![(
            "src/main.rs",
            "Fix garbled accented letters in the loud greeting"
        )]
    );
    assert_eq!(history_missing(&hits), vec![None; hits.len()]);

    // A tree of the past gone too, and the history read again: none, and each hit says why.
    remove_object(dir, &first_tree);
    std::fs::remove_file(fx.store.dir().join("history")).expect("remove");
    let hits = run(&fx, task, 10, Ranking::Fused);
    assert_eq!(fixed_before(&hits), Vec::<(&str, &str)>::new());
    let why = hits[0].history_missing.clone().expect("history_missing");
    assert!(
        why.starts_with("git log failed: fatal: ") && why.contains(first_tree.trim()),
        "{why}"
    );
    assert_eq!(history_missing(&hits), vec![Some(why.as_str()); hits.len()]);
    // Not a task: the history is not read, and nothing is said of it.
    let lookup = run(&fx, "greeting", 10, Ranking::Fused);
    assert_eq!(history_missing(&lookup), vec![None; lookup.len()]);
}

/// A line of code the task quotes, found verbatim in one definition, names it: it comes first
/// and a bundle's window is cut around that line; a quoted line every definition holds tells
/// none apart.
#[test]
fn a_quoted_line_of_code_names_the_definition_holding_it() {
    let fx = Fixture::new();
    fx.edit(
        "src/totals.py",
        "def subtotal(items, discount):\n    total = sum(i.price for i in items)\n    \
         return total - discount\n\n\ndef tax(items, rate):\n    total = sum(i.price for i in items)\n    \
         if rate and items and items[0].price > 0:\n        return total * rate\n    return 0\n\n\n\
         def shipping(items, rate):\n    weight = len(items)\n    return weight * rate\n",
    );
    let names = |query: &str| -> Vec<String> {
        let hits = run(&fx, query, 5, Ranking::Fused);
        let hit = hits
            .iter()
            .find(|h| h.path == "src/totals.py")
            .expect("the file is found");
        hit.symbols.iter().map(|s| s.name.clone()).collect()
    };
    // `shipping` holds the most of the words (items, rate, weight); the quoted line is `tax`'s.
    let quoted = names(
        "shipping rate for items is wrong, the weight of items\n\n    if rate and items and \
         items[0].price > 0:\n\nskips free items",
    );
    assert_eq!(quoted[0], "tax", "{quoted:?}");
    // Quoted in backticks within a sentence, it names `tax` the same.
    let inline = names(
        "shipping rate for items is wrong, the weight of items\n\nChanging          `if rate and items and items[0].price > 0:` to `if rate:` fixes it",
    );
    assert_eq!(inline[0], "tax", "{inline:?}");
    // Both `subtotal` and `tax` hold this line: it names neither.
    let shared = names(
        "shipping rate for items is wrong, the weight of items\n\n    total = sum(i.price for \
         i in items)",
    );
    assert_eq!(shared[0], "shipping", "{shared:?}");
}
