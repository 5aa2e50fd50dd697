//! Outlines of one small fixture per language (insta snapshots of the rendered text), the
//! byte budget and its omission notes, and language detection.
use std::path::Path;

#[cfg(all(feature = "rust", feature = "python", feature = "go"))]
use outline::Parser;
use outline::{Kind, Language, RenderConfig, Symbol, render};
use pretty_assertions::assert_eq;

/// The rendered outline of `tests/fixtures/NAME` with the default budget.
fn rendered(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let source = std::fs::read_to_string(&path).expect("fixtures are readable UTF-8");
    let language = Language::from_path(name).expect("every fixture's language is built");
    let outline = outline::outline(language, &source).expect("fixtures parse");
    render(&outline, &RenderConfig::default())
}

macro_rules! fixture {
    ($test:ident, $file:literal $(, $feature:literal)?) => {
        #[test]
        $(#[cfg(feature = $feature)])?
        fn $test() {
            insta::assert_snapshot!(stringify!($test), rendered($file));
        }
    };
}

fixture!(rust, "store.rs", "rust");
fixture!(python, "store.py", "python");
fixture!(javascript, "store.js", "javascript");
fixture!(typescript, "store.ts", "typescript");
fixture!(tsx, "store.tsx", "typescript");
fixture!(go, "store.go", "go");
fixture!(java, "Store.java", "java");
fixture!(c, "store.c", "c");
fixture!(cpp, "store.cpp", "cpp");
fixture!(markdown, "guide.md");
fixture!(json, "package.json");
fixture!(toml, "store.toml");
fixture!(yaml, "config.yaml");

/// A comma before a closing bracket is kept: `("serializer",)` is a tuple in Python and
/// `("serializer")` a string.
#[test]
#[cfg(feature = "python")]
fn an_outline_keeps_a_comma_before_a_closing_bracket() {
    let source = "class Tagged:\n    __slots__ = (\"serializer\",)\n\n    \
                  def wrap(\n        self,\n        value,\n    ):\n        return value\n";
    let outline = outline::outline(Language::Python, source).expect("parses");
    let text = render(&outline, &RenderConfig::default());
    assert!(text.contains("__slots__ = (\"serializer\",)"), "{text}");
    assert!(text.contains("def wrap(self, value,)"), "{text}");
}

fn symbol(kind: Kind, name: &str, line: usize, children: Vec<Symbol>) -> Symbol {
    Symbol {
        kind,
        name: name.to_owned(),
        signature: format!("{} {name}", kind.noun()),
        doc: None,
        line,
        end_line: line,
        children,
    }
}

/// A file with more than fits: every top-level symbol before any member, and the rest counted
/// by kind in the scope it was left out of.
#[test]
fn budget_keeps_top_level_first_and_counts_what_it_leaves_out() {
    let methods = (0..40)
        .map(|i| symbol(Kind::Method, &format!("method_{i}"), 10 + i, vec![]))
        .collect();
    let outline = outline::Outline {
        language: Language::Rust,
        bytes: 5000,
        lines: 300,
        doc: Some("What the file is for.".to_owned()),
        symbols: vec![
            symbol(Kind::Impl, "Store", 9, methods),
            symbol(Kind::Function, "open", 100, vec![]),
            symbol(Kind::Constant, "MAX", 101, vec![]),
        ],
    };
    let text = render(&outline, &RenderConfig { max_bytes: 300 });
    assert!(text.len() <= 300, "{} bytes:\n{text}", text.len());
    insta::assert_snapshot!("budget", text);

    // A budget with room for nothing but the first line still says what is missing.
    let tiny = render(&outline, &RenderConfig { max_bytes: 10 });
    assert_eq!(tiny, "Rust, 5000 bytes, 300 lines\n+ 3 more definitions\n");
    let small = render(&outline, &RenderConfig { max_bytes: 100 });
    assert_eq!(
        small,
        "Rust, 5000 bytes, 300 lines\nWhat the file is for.\n+ 1 more impl, 1 more function, 1 more constant\n"
    );
}

/// Rendering is bounded for any budget large enough for the first line, and the whole outline
/// fits when the budget allows.
#[test]
#[cfg(feature = "rust")]
fn budget_bounds_every_render_of_a_real_file() {
    let source = include_str!("fixtures/store.rs");
    let outline = outline::outline(Language::Rust, source).expect("parses");
    let full = render(&outline, &RenderConfig { max_bytes: 1 << 20 });
    assert!(!full.contains("+ "), "{full}");
    let first = full.lines().next().expect("a first line").len() + 1;
    // The first line and a note saying what was left out are always written.
    let least = first + "+ 10 more definitions\n".len();
    for max_bytes in least..full.len() + 10 {
        let text = render(&outline, &RenderConfig { max_bytes });
        assert!(
            text.len() <= max_bytes,
            "budget {max_bytes}: {} bytes\n{text}",
            text.len()
        );
        if max_bytes >= full.len() {
            assert_eq!(text, full);
        } else {
            // Less room: names without signatures, or a count of what was left out.
            let named = outline.symbols.iter().all(|s| text.contains(&s.name));
            assert!(
                named || text.contains("more"),
                "budget {max_bytes} dropped silently:\n{text}"
            );
        }
    }
}

/// One parser serves files of several languages in turn, and the tree stays available.
#[test]
#[cfg(all(feature = "rust", feature = "python", feature = "go"))]
fn a_parser_is_reused_across_languages() {
    let mut parser = Parser::new();
    for (lang, src, name) in [
        (Language::Rust, "fn alpha() {}", "alpha"),
        (Language::Python, "def beta():\n    pass\n", "beta"),
        (Language::Rust, "struct Gamma;", "Gamma"),
        (Language::Go, "package delta\n", "delta"),
    ] {
        let parsed = parser.parse(lang, src).expect("parses");
        assert!(parsed.tree().is_some());
        let names: Vec<String> = parsed
            .outline()
            .symbols
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, vec![name.to_owned()]);
    }
}

#[test]
#[cfg(all(
    feature = "rust",
    feature = "python",
    feature = "javascript",
    feature = "typescript",
    feature = "c",
    feature = "cpp"
))]
fn languages_come_from_file_names() {
    let cases = [
        ("src/lib.rs", Some(Language::Rust)),
        ("a/b.pyi", Some(Language::Python)),
        ("x.mjs", Some(Language::JavaScript)),
        ("x.d.ts", Some(Language::TypeScript)),
        ("App.tsx", Some(Language::Tsx)),
        ("include/x.h", Some(Language::Cpp)),
        ("x.c", Some(Language::C)),
        ("README.md", Some(Language::Markdown)),
        ("Cargo.toml", Some(Language::Toml)),
        (".github/ci.yml", Some(Language::Yaml)),
        ("Makefile", None),
        ("notes.txt", None),
        ("rs", None),
    ];
    for (path, want) in cases {
        assert_eq!(Language::from_path(path), want, "{path}");
    }
}

/// Broken source still outlines what parses, and never panics.
#[test]
#[cfg(feature = "rust")]
fn broken_source_keeps_what_parses() {
    let outline = outline::outline(Language::Rust, "fn ok() {}\nfn broken( {\nstruct Fine;\n")
        .expect("a tree even for broken source");
    let names: Vec<&str> = outline.symbols.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"ok"), "{names:?}");
}

/// A language with a grammar is named only where its grammar is built (a lean build reads none
/// of them), and the languages read without one are named in every build.
#[test]
fn a_language_is_named_only_where_its_grammar_is_built() {
    let built = [
        ("src/lib.rs", cfg!(feature = "rust")),
        ("a.py", cfg!(feature = "python")),
        ("a.js", cfg!(feature = "javascript")),
        ("a.ts", cfg!(feature = "typescript")),
        ("a.go", cfg!(feature = "go")),
        ("A.java", cfg!(feature = "java")),
        ("a.c", cfg!(feature = "c")),
        ("a.cpp", cfg!(feature = "cpp")),
    ];
    for (path, grammar) in built {
        assert_eq!(Language::from_path(path).is_some(), grammar, "{path}");
    }
    assert_eq!(Language::from_path("README.md"), Some(Language::Markdown));
    assert_eq!(Language::from_path("Cargo.toml"), Some(Language::Toml));
}

/// Skimming (the parser given everything but function bodies) never changes an outline: on
/// sources written to trip its lexer (braces in strings, chars, raw strings, template literals
/// and regexes; lifetimes; nested comments; Python bodies after a docstring, with strings and
/// brackets over several lines), `Parser::outline` gives what the whole file's parse gives.
#[test]
#[cfg(all(
    feature = "rust",
    feature = "python",
    feature = "javascript",
    feature = "typescript",
    feature = "java",
    feature = "go"
))]
fn skimming_outlines_what_a_whole_parse_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skim");
    let cases: &[(&str, &[&str])] = &[
        (
            "tricky.rs",
            &[
                "a", "twice", "TABLE", "S", "b", "fmt", "c", "d", "e", "tests", "t",
            ],
        ),
        ("tricky.py", &["A", "f", "g", "h", "i", "top", "CONSTANT"]),
        (
            "tricky.ts",
            &[
                "A", "m", "n", "f", "g", "I", "p", "q", "N", "inner", "table",
            ],
        ),
        (
            "Tricky.java",
            &[
                "Tricky", "BRACE", "run", "Color", "v", "Shape", "area", "Point",
            ],
        ),
        ("tricky.go", &["Store", "Open", "Name", "table", "Limit"]),
        (
            "bundle.js",
            &[
                "ts",
                "__defProp",
                "comparePaths",
                "fixId",
                "Emitter",
                "emit",
                "inner",
            ],
        ),
    ];
    let mut parser = Parser::new();
    for (name, names) in cases {
        let source = std::fs::read_to_string(dir.join(name)).expect("fixtures are readable");
        let language = Language::from_path(name).expect("built");
        let whole = parser.parse(language, &source).expect("parses").outline();
        let skimmed = parser.outline(language, &source).expect("parses");
        assert_eq!(whole, skimmed, "{name}");
        let mut found = Vec::new();
        fn collect<'a>(symbols: &'a [Symbol], out: &mut Vec<&'a str>) {
            for s in symbols {
                out.push(&s.name);
                collect(&s.children, out);
            }
        }
        collect(&skimmed.symbols, &mut found);
        for n in *names {
            assert!(found.contains(n), "{name}: {n} not in {found:?}");
        }
        assert!(skimmed.doc.is_some(), "{name}: no module doc");
    }
}

/// A file's description is prose: a Markdown link keeps its text, a row of badges and a link
/// reference are no description, and a tool's directive or a byline never is one.
#[test]
fn descriptions_keep_link_text_and_skip_directives_and_bylines() {
    let doc = |lang: Language, src: &str| {
        outline::Parser::new()
            .outline(lang, src)
            .expect("outlines")
            .doc
    };
    assert_eq!(
        doc(
            Language::Markdown,
            "# lsp\n\n[![ci](https://x/badge.svg)](https://x)\n\nProvides a server implementation of the\n[Language Server Protocol](https://lsp.dev) which editors use.\n\n[lsp]: https://lsp.dev\n"
        )
        .as_deref(),
        Some(
            "Provides a server implementation of the Language Server Protocol which editors use."
        )
    );
    assert_eq!(
        doc(
            Language::Markdown,
            "See ![logo](x.png)[the guide][g] first.\n"
        )
        .as_deref(),
        Some("See the guide first.")
    );
    #[cfg(feature = "typescript")]
    assert_eq!(
        doc(
            Language::TypeScript,
            "// Copyright 2018-2025 the Deno authors. MIT license.\n// deno-lint-ignore-file no-console\n\n// @ts-check\n/** Author: Jane Doe\n * Formats markdown in place.\n */\nexport function fmt() {}\n"
        )
        .as_deref(),
        Some("Formats markdown in place.")
    );
    #[cfg(feature = "javascript")]
    assert_eq!(
        doc(
            Language::JavaScript,
            "/* eslint-disable no-var */\n// prettier-ignore\nvar x = 1;\n"
        ),
        None
    );
    // A row of links is navigation, not a description.
    assert_eq!(
        doc(
            Language::Markdown,
            "# x\n\n[Docs](https://d) · [Discord](https://c)\n\nThe real description.\n"
        )
        .as_deref(),
        Some("The real description.")
    );
    // A licence written as line comments is one comment, and no description; prose that
    // starts like a directive in another case is prose.
    #[cfg(feature = "c")]
    assert_eq!(
        doc(
            Language::C,
            "// Licensed under the Apache License, Version 2.0 (the \"License\");\n// you may not use this file except in compliance with the License.\n\n// Global state for the allocator.\nint x;\n"
        )
        .as_deref(),
        Some("Global state for the allocator.")
    );
}

/// A C++ header the grammar cannot follow (braces opened in the branches of an `#if`, as fmt
/// opens its namespaces, leave one ERROR node from the top to the end) still outlines the
/// definitions inside; a macro defined in each branch of an `#if` is one entry, an include
/// guard none, and macros never crowd types and functions out of the budget.
#[test]
#[cfg(feature = "cpp")]
fn a_header_the_grammar_cannot_follow_still_outlines_its_definitions() {
    let mut src = String::from(
        "// Formatting library.\n#ifndef FMT_FORMAT_H_\n#define FMT_FORMAT_H_\n#ifdef _WIN32\n\
         # define FMT_API __declspec(dllexport)\n#else\n# define FMT_API\n#endif\n",
    );
    for i in 0..200 {
        src.push_str(&format!("#define FMT_OPTION_{i} {i}\n"));
    }
    src.push_str(
        "#if defined(FMT_MODULE)\nnamespace fmt {\n#else\nnamespace fmt {\n#endif\n\
         inline auto count_digits(uint32_t n) -> int { return 0; }\n\
         template <typename Char> class basic_memory_buffer {\n public:\n  int size;\n};\n}\n\
         #endif\n",
    );
    let outline = outline::Parser::new()
        .outline(Language::Cpp, &src)
        .expect("outlines");
    let names: Vec<&str> = every_symbol(&outline).iter().map(|s| s.0).collect();
    assert!(names.contains(&"basic_memory_buffer"), "{names:?}");
    assert!(names.contains(&"count_digits"), "{names:?}");
    assert_eq!(
        names.iter().filter(|n| **n == "FMT_API").count(),
        1,
        "{names:?}"
    );
    assert!(!names.contains(&"FMT_FORMAT_H_"), "{names:?}");
    let text = render(&outline, &RenderConfig::default());
    assert!(
        text.contains("class basic_memory_buffer") && text.contains("count_digits("),
        "{text}"
    );
    assert!(text.contains("more macros"), "{text}");
}

/// A line that only invokes a macro (fmt's `FMT_BEGIN_EXPORT` before a template) is read by
/// the grammar as a function, with no parameter list, whose body is what follows: no function
/// of that name is outlined; the definitions after it are, and functions named in capitals
/// with parameters still are.
#[test]
#[cfg(feature = "cpp")]
fn a_macro_invoked_before_a_definition_is_not_a_function() {
    let src = "FMT_BEGIN_NAMESPACE\nFMT_BEGIN_EXPORT\n\n\
               template <typename T> struct printf_formatter {\n  printf_formatter() = delete;\n};\n\n\
               template <typename Char> class basic_printf_context {\n public:\n  void advance_to(int) {}\n};\n\
               FMT_END_EXPORT\nFMT_END_NAMESPACE\n\
               int FMT_CDECL main(int argc, char** argv) { return 0; }\n\
               void RESET(void) {}\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let names = every_symbol(&outline);
    let has = |n: &str| names.iter().any(|s| s.0 == n);
    assert!(
        !has("FMT_BEGIN_EXPORT") && !has("FMT_BEGIN_NAMESPACE"),
        "{names:?}"
    );
    assert!(
        has("basic_printf_context") && has("advance_to"),
        "{names:?}"
    );
    assert!(has("RESET") && has("main"), "{names:?}");
}

/// An attribute macro alone on the line before a type (nlohmann/json's
/// `NLOHMANN_BASIC_JSON_TPL_DECLARATION` + `class basic_json`) hides neither the type nor its
/// members, in a whole parse and a skimmed one; lines stay the file's.
#[test]
#[cfg(feature = "cpp")]
fn an_attribute_macro_before_a_class_leaves_the_class_readable() {
    let src = "namespace nlohmann {\nNLOHMANN_BASIC_JSON_TPL_DECLARATION\nclass basic_json\n{\n  public:\n    basic_json(const value_t v)\n        : m_type(v)\n    {\n        assert_invariant();\n    }\n    size_type size() const noexcept\n    {\n        return 0;\n    }\n};\n}\n";
    let mut parser = outline::Parser::new();
    for outline in [
        parser.outline(Language::Cpp, src).expect("outlines"),
        parser.parse(Language::Cpp, src).expect("parses").outline(),
    ] {
        let mut found = every_symbol(&outline);
        found.sort();
        let class = found.iter().find(|s| s.0 == "basic_json" && s.2 == 3);
        assert!(class.is_some(), "{found:?}");
        assert!(
            found
                .iter()
                .any(|s| s.0 == "basic_json" && s.1 == Kind::Method && s.2 == 6),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|s| s.0 == "size" && s.1 == Kind::Method && s.2 == 11),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|s| s.0.starts_with("NLOHMANN")),
            "{found:?}"
        );
    }
}

/// An attribute macro before a function's return type (`FMT_API uint128_fallback
/// get_cached_power(int)`, `explicit FMT_CONSTEXPR precision_checker(...)`) is read by the
/// grammar as the type, and the real type with the name as one qualified name missing its
/// `::`: the function is named by its own name, as a call names it; out-of-line methods keep
/// their class (`element::at_pointer`), a macro after the name is not it (`localtime_r
/// FMT_NOMACRO(...)`), and a specialization's name is left as written.
#[test]
#[cfg(feature = "cpp")]
fn an_attribute_macro_before_a_return_type_is_not_in_the_name() {
    let src = "FMT_API uint128_fallback get_cached_power(int k) { return 1; }\n\
               template <typename Char>\n\
               FMT_CONSTEXPR ansi_color_escape<Char> make_emphasis(int em) noexcept { return x; }\n\
               FMT_API std::system_error vwindows_error(int code) { return x; }\n\
               inline null<> localtime_r FMT_NOMACRO(...) { return null<>(); }\n\
               simdjson_inline simdjson_result<element> element::at_pointer(int p) const noexcept { return x; }\n\
               template <typename E> class precision_checker {\n public:\n\
               \x20 explicit FMT_CONSTEXPR precision_checker(E& eh) : handler_(eh) {}\n\
               \x20 FMT_CONSTEXPR auto operator()(int value) -> unsigned { return 0; }\n};\n\
               template <typename T> struct formatter<std::vector<T>, char> {\n  int x;\n};\n\
               int Foo::bar(int a) { return a; }\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let names = by_line(&outline);
    let found: Vec<(&str, usize)> = names.iter().map(|s| (s.0, s.2)).collect();
    assert_eq!(
        found,
        [
            ("get_cached_power", 1),
            ("make_emphasis", 3),
            ("vwindows_error", 4),
            ("localtime_r", 5),
            ("element::at_pointer", 6),
            ("precision_checker", 7),
            ("precision_checker", 9),
            ("operator()", 10),
            ("formatter<std::vector<T>, char>", 12),
            ("Foo::bar", 15),
        ]
    );
}

/// What JavaScript binds as a function by assignment (Express's `app.render = function
/// render(...)`, `exports.parse = ...`, a prototype's method) or as an object's property is a
/// definition, in a whole parse and a skimmed one alike.
#[test]
#[cfg(feature = "javascript")]
fn script_assignments_and_object_properties_holding_functions_are_definitions() {
    let source = "var app = exports = module.exports = {};\n\n/** Renders. */\napp.render = function render(name, callback) {\n  return callback(name);\n};\n\nexports.parse = (s) => s.trim();\n\nRouter.prototype.route = function route(path) {\n  return path;\n};\n\nmodule.exports.helpers = {\n  escape(s) { return s; },\n  quote: function (s) { return s; },\n  size: 3,\n};\n";
    let mut parser = outline::Parser::new();
    let whole = parser
        .parse(Language::JavaScript, source)
        .expect("parses")
        .outline();
    let skimmed = parser
        .outline(Language::JavaScript, source)
        .expect("parses");
    assert_eq!(whole, skimmed);
    let found: Vec<(Kind, &str, usize, usize)> = skimmed
        .symbols
        .iter()
        .map(|s| (s.kind, s.name.as_str(), s.line, s.end_line))
        .collect();
    assert_eq!(
        found,
        [
            (Kind::Variable, "app", 1, 1),
            (Kind::Function, "render", 4, 6),
            (Kind::Function, "parse", 8, 8),
            (Kind::Method, "route", 10, 12),
            (Kind::Method, "escape", 15, 15),
            (Kind::Method, "quote", 16, 16),
        ]
    );
    assert_eq!(skimmed.symbols[1].doc.as_deref(), Some("Renders."));
}

/// A whole parse's references: identifiers, never a declaration's own name, a comment or a
/// string; a call's callee marked as one.
#[test]
#[cfg(feature = "rust")]
fn references_are_identifiers_outside_comments_and_strings() {
    let source = "fn helper() {}\n// helper in a comment\nfn main() {\n    let s = \"helper\";\n    helper();\n    crate::helper();\n    let f = helper;\n    x.helper();\n    println!(\"{}\", helper());\n}\n";
    let mut parser = outline::Parser::new();
    let parsed = parser.parse(Language::Rust, source).expect("parses");
    let found: Vec<(usize, bool)> = parsed
        .references(&["helper"])
        .iter()
        .map(|r| (r.line, r.call))
        .collect();
    assert_eq!(
        found,
        [(5, true), (6, true), (7, false), (8, true), (9, true)]
    );
    let calls: Vec<String> = parsed.calls().into_iter().map(|r| r.name).collect();
    assert_eq!(calls, ["helper", "helper", "helper", "println", "helper"]);
    // Only `x.helper()` is a member's call: a method, never the free function.
    let members: Vec<usize> = parsed
        .references(&["helper"])
        .iter()
        .filter(|r| r.member)
        .map(|r| r.line)
        .collect();
    assert_eq!(members, [8]);
}

/// Rust functions inside a macro's block (tokio's `cfg_rt! { pub fn spawn() {...} }`) are
/// definitions, read from its tokens, in a whole parse and a skimmed one alike; a macro's
/// definition (`macro_rules!`) holds none.
#[test]
#[cfg(feature = "rust")]
fn rust_functions_inside_a_macro_block_are_definitions() {
    let source = "cfg_rt! {\n    /// Spawns.\n    pub fn spawn<T>(t: T) -> u32 {\n        let x = { 1 };\n        x\n    }\n\n    pub(crate) async fn other() {}\n}\n\nmacro_rules! make {\n    ($n:ident) => { fn $n() {} };\n}\n\nimpl Runtime {\n    cfg_fs! {\n        fn open(&self) {}\n    }\n}\n";
    let mut parser = outline::Parser::new();
    let whole = parser
        .parse(Language::Rust, source)
        .expect("parses")
        .outline();
    let skimmed = parser.outline(Language::Rust, source).expect("parses");
    assert_eq!(whole, skimmed);
    let mut found = Vec::new();
    fn collect(symbols: &[Symbol], out: &mut Vec<(Kind, String, usize, usize)>) {
        for s in symbols {
            out.push((s.kind, s.name.clone(), s.line, s.end_line));
            collect(&s.children, out);
        }
    }
    collect(&skimmed.symbols, &mut found);
    let found: Vec<(Kind, &str, usize, usize)> = found
        .iter()
        .map(|(k, n, a, b)| (*k, n.as_str(), *a, *b))
        .collect();
    assert_eq!(
        found,
        [
            (Kind::Function, "spawn", 3, 6),
            (Kind::Function, "other", 8, 8),
            (Kind::Macro, "make", 11, 13),
            (Kind::Impl, "Runtime", 15, 19),
            (Kind::Method, "open", 17, 17),
        ]
    );
    assert_eq!(skimmed.symbols[0].signature, "pub fn spawn<T>(t: T) -> u32");
}

/// A Java package is named by its name, not by the annotations before it, as
/// `package-info.java` writes them.
#[test]
#[cfg(feature = "java")]
fn an_annotated_java_package_is_named_by_its_name() {
    let src = "/** Docs. */\n@com.google.errorprone.annotations.CheckReturnValue\npackage com.google.gson;\n";
    let outline = outline::Parser::new()
        .outline(Language::Java, src)
        .expect("outlines");
    let names: Vec<(&str, Kind)> = outline
        .symbols
        .iter()
        .map(|s| (s.name.as_str(), s.kind))
        .collect();
    assert_eq!(names, [("com.google.gson", Kind::Package)]);
}

/// Attribute macros inside a declaration's line (fmt's `FMT_CONSTEXPR20 void deallocate()`,
/// `FMT_NO_UNIQUE_ADDRESS Allocator alloc_;`) and one alone before a type under a comment
/// (`FMT_BEGIN_EXPORT`, a comment, `enum {...}`) leave the class and its members readable,
/// a friend defined in it among them: before, the grammar's recovery lost fmt's
/// `basic_memory_buffer` and outlined its methods as free functions.
#[test]
#[cfg(feature = "cpp")]
fn attribute_macros_within_declarations_leave_the_class_readable() {
    let src = "FMT_BEGIN_EXPORT\n\n// How many to keep inline.\nenum { inline_buffer_size = 500 };\n\n\
               template <typename T, size_t SIZE = inline_buffer_size,\n\
               \x20         typename Allocator = detail::allocator<T>>\n\
               class basic_memory_buffer : public detail::buffer<T> {\n private:\n  T store_[SIZE];\n\
               \x20 FMT_NO_UNIQUE_ADDRESS Allocator alloc_;\n\
               \x20 FMT_CONSTEXPR20 void deallocate() {\n    T* data = this->data();\n  }\n\
               \x20 FMT_CONSTEXPR20 void move(basic_memory_buffer& other) {\n    alloc_ = other.alloc_;\n  }\n\n public:\n\
               \x20 FMT_CONSTEXPR20 ~basic_memory_buffer() { deallocate(); }\n\
               \x20 auto get_allocator() const -> Allocator { return alloc_; }\n\
               \x20 FMT_CONSTEXPR friend auto operator==(basic_memory_buffer a, basic_memory_buffer b) -> bool {\n\
               \x20   return a.size() == b.size();\n  }\n};\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let class = outline
        .symbols
        .iter()
        .find(|s| s.name == "basic_memory_buffer")
        .unwrap_or_else(|| panic!("{:?}", outline.symbols));
    assert_eq!(
        (class.kind, class.line, class.end_line),
        (Kind::Class, 8, 25)
    );
    let members: Vec<(&str, usize)> = class
        .children
        .iter()
        .map(|s| (s.name.as_str(), s.line))
        .collect();
    assert_eq!(
        members,
        [
            ("deallocate", 12),
            ("move", 15),
            ("~basic_memory_buffer", 20),
            ("get_allocator", 21),
            ("operator==", 22)
        ]
    );
    assert!(
        !outline.symbols.iter().any(|s| s.name == "enum"),
        "{:?}",
        outline.symbols
    );
}

/// Export macros between `class` and its name, lower-case attribute macros (simdjson's
/// `simdjson_inline`), conversion operators, and `#if` groups the grammar cannot read as they
/// stand (alternative heads of one `if`, a specifier between a template's head and its
/// function): before, each lost the class or the functions after it.
#[test]
#[cfg(feature = "cpp")]
fn export_macros_lower_case_macros_conversions_and_conditional_heads_are_read() {
    let src = "class GTEST_API_ Test {\n public:\n  virtual ~Test();\n  void Run() {}\n};\n\
               struct JSON_API Value final : public Base {\n  operator bool() const { return b; }\n\
               \x20 explicit operator const char*() const { return s; }\n};\n\
               inline Value::operator bool() const { return b; }\n\
               simdjson_unused simdjson_inline bool compute_nan_inf(double& d) noexcept {\n  return false;\n}\n\
               simdjson_inline error_code parse_digits(const char *p) {\n  return SUCCESS;\n}\n\
               bool compute_float(int power) {\n#if A\n  if (0 <= power)\n#else\n  if (-10 <= power)\n#endif\n\
               \x20 {\n    return true;\n  }\n  return false;\n}\n\
               template <typename T>\n#if defined(CPP14)\nconstexpr\n#endif\nauto get() const { return 1; }\n\
               struct stat st;\nvec_type operator+(vec_type a, vec_type b) { return a; }\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let found = by_line(&outline);
    assert_eq!(
        found,
        [
            ("Test", Kind::Class, 1),
            ("~Test", Kind::Method, 3),
            ("Run", Kind::Method, 4),
            ("Value", Kind::Struct, 6),
            ("operator bool", Kind::Method, 7),
            ("operator const char*", Kind::Method, 8),
            ("Value::operator bool", Kind::Function, 10),
            ("compute_nan_inf", Kind::Function, 11),
            ("parse_digits", Kind::Function, 14),
            ("compute_float", Kind::Function, 17),
            ("get", Kind::Function, 32),
            ("st", Kind::Variable, 33),
            ("operator+", Kind::Function, 34),
        ]
    );
    // A lower-case type before its operator stays the operator's return type.
    let plus = outline.symbols.iter().find(|s| s.name == "operator+");
    assert!(
        plus.is_some_and(|s| s.signature.starts_with("vec_type operator+")),
        "{plus:?}"
    );
}

/// Every definition of `outline`, nested ones too (a stack's order): name, kind, line.
/// [`every_symbol`] in the order of their lines.
fn by_line(outline: &outline::Outline) -> Vec<(&str, Kind, usize)> {
    let mut found = every_symbol(outline);
    found.sort_by_key(|s| s.2);
    found
}

fn every_symbol(outline: &outline::Outline) -> Vec<(&str, Kind, usize)> {
    let mut found = Vec::new();
    let mut stack: Vec<&Symbol> = outline.symbols.iter().collect();
    while let Some(s) = stack.pop() {
        found.push((s.name.as_str(), s.kind, s.line));
        stack.extend(s.children.iter());
    }
    found
}

/// C/C++ definitions the grammar lost to a block opened in one `#if` group and closed in
/// another, to an export macro whose class's base list is on the next line, and to member
/// macros with a comment after them.
#[test]
#[cfg(feature = "cpp")]
fn groups_opening_blocks_next_line_bases_and_commented_member_macros_are_read() {
    let src = "#ifdef NO_EXC\ninline bool parse_range(const char *s) {\n#else\n\
               inline bool parse_range(const char *s) try {\n#endif\n  return s != 0;\n\
               #ifdef NO_EXC\n}\n#else\n} catch (...) { return false; }\n#endif\n\
               void listen() {\n#ifndef _WIN32\n  if (idle) {\n#endif\n    poll();\n\
               #ifndef _WIN32\n  }\n#endif\n}\n\
               class GTEST_API_ AssertionException\n    : public Failure {\n public:\n  void Throw() {}\n};\n\
               struct Lhs {\n  MAKE_COMPARISON(==, \" == \", EQ) // comment\n\
               \x20 MAKE_COMPARISON(!=, \" != \", NE) // comment\n  bool ok() const { return true; }\n};\n\
               int after() { return 0; }\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let found = by_line(&outline);
    assert_eq!(
        found,
        [
            ("parse_range", Kind::Function, 2),
            ("listen", Kind::Function, 12),
            ("AssertionException", Kind::Class, 21),
            ("Throw", Kind::Method, 24),
            ("Lhs", Kind::Struct, 26),
            ("ok", Kind::Method, 29),
            ("after", Kind::Function, 31),
        ]
    );
    let range = outline.symbols.iter().find(|s| s.name == "parse_range");
    assert_eq!(range.map(|s| s.end_line), Some(8), "{range:?}");
}

/// Macros invoked as statements of their own with types for arguments (gmock's
/// `GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(unsigned char, '\\0');`) and explicit
/// instantiations' declarations (`extern template`) lose no definition after them.
#[test]
#[cfg(feature = "cpp")]
fn macro_statements_and_extern_templates_lose_nothing_after_them() {
    let src = "namespace internal {\n#define DEFINE_RETURN(type, value) \\\n  template <> struct R<type> {};\n\
               DEFINE_RETURN(void, );  // NOLINT\nDEFINE_RETURN(::std::string, \"\");\n\
               DEFINE_RETURN(unsigned char, '\\0');\nDEFINE_RETURN(signed char, '\\0');\n\
               #ifndef HEADER_ONLY\nextern template FMT_API auto sep<char>(int) -> R<char>;\n\
               extern template FMT_API auto sep(int) -> char;\n#endif\n\
               template <typename T>\nclass DefaultValue {\n public:\n  static T Get() { return T(); }\n};\n\
               inline auto equal2(const char* a) -> bool { return a; }\n}\n";
    let outline = outline::Parser::new()
        .outline(Language::Cpp, src)
        .expect("outlines");
    let found = by_line(&outline);
    assert_eq!(
        found,
        [
            ("internal", Kind::Namespace, 1),
            ("DEFINE_RETURN", Kind::Macro, 2),
            ("DefaultValue", Kind::Class, 13),
            ("Get", Kind::Method, 15),
            ("equal2", Kind::Function, 17),
        ]
    );
}

/// A macro called with expressions as a statement of its own (`EXPECT_EQ(validate(x), 1);`)
/// is read as the grammar reads it: what it calls stays called.
#[test]
#[cfg(feature = "cpp")]
fn macro_calls_of_expressions_keep_their_calls() {
    let src = "void test_it() {\n  int x = 1;\n  EXPECT_EQ(validate(x), 1);\n  CHECK_OK(validate(2));\n}\n";
    let mut parser = outline::Parser::new();
    let parsed = parser.parse(Language::Cpp, src).expect("parses");
    let called: Vec<(String, usize)> = parsed
        .calls()
        .into_iter()
        .filter(|c| c.name == "validate")
        .map(|c| (c.name, c.line))
        .collect();
    assert_eq!(
        called,
        [("validate".to_owned(), 3), ("validate".to_owned(), 4)]
    );
}
