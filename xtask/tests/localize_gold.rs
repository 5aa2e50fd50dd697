//! The localisation bench's reading of gold patches: the sites a unified diff changes, the
//! definitions of a source file by language, which definition a site falls in, where a
//! ranking places the gold functions, and which gold lines a bundle or a paste shows.

use pretty_assertions::assert_eq;
use serde_json::json;
use xtask::bench_localize_defs::{Definition, definitions};
use xtask::bench_localize_figures::{gold_functions, gold_lines};
use xtask::bench_localize_gold::{
    FileDefinition, PatchFile, Shown, Site, enclosing, parse_patch, ranked_definitions, ranks,
};

fn line(n: usize) -> Site {
    Site::Line(n)
}

fn insert(after: usize, text: &str) -> Site {
    Site::Insert {
        after,
        text: text.to_owned(),
    }
}

fn check_patch(patch: &str, expected: &[(&str, Vec<Site>)]) {
    let expected: Vec<(String, Vec<Site>)> = expected
        .iter()
        .map(|(path, sites)| ((*path).to_owned(), sites.clone()))
        .collect();
    let read: Vec<(String, Vec<Site>)> = parse_patch(patch)
        .into_iter()
        .map(|f| (f.path, f.sites))
        .collect();
    assert_eq!(read, expected);
}

#[test]
fn a_hunk_whose_lines_moved_is_placed_where_they_are() {
    // Made against a file four lines shorter above the change, as some of SWE-bench's
    // patches are against their base commit: `git apply` finds its lines four further down.
    let patch = "--- a/m.py\n+++ b/m.py\n@@ -2,3 +2,3 @@ def f():\n     a = 1\n-    b = 2\n+    b = 3\n     c = 3\n@@ -9,2 +9,3 @@\n nowhere\n+x\n else\n";
    let text = "import os\nimport sys\n\n\ndef f():\n    a = 1\n    b = 2\n    c = 3\n";
    let mut files = parse_patch(patch);
    assert_eq!(files[0].sites, vec![line(3), insert(9, "x")]);
    files[0].place(text);
    // The second hunk's lines are nowhere in the text: it stays where stated.
    assert_eq!(files[0].sites, vec![line(7), insert(9, "x")]);
    // At the stated line, a hunk stays even where its lines occur again further on.
    let twice = "    a = 1\n    b = 2\n    c = 3\n    a = 1\n    b = 2\n    c = 3\n";
    let mut files = parse_patch(
        "--- a/m.py\n@@ -4,3 +4,3 @@\n     a = 1\n-    b = 2\n+    b = 3\n     c = 3\n",
    );
    files[0].place(twice);
    assert_eq!(files[0].sites, vec![line(5)]);
}

#[test]
fn a_patch_changes_lines_and_inserts_after_them() {
    check_patch(
        "diff --git a/requests/sessions.py b/requests/sessions.py
--- a/requests/sessions.py
+++ b/requests/sessions.py
@@ -168,8 +168,11 @@ def resolve_redirects(self, resp, req, stream=False, timeout=None,
             if new_auth is not None:
                 prepared_request.prepare_auth(new_auth)
 
+            # Override the original request.
+            req = prepared_request
+
             resp = self.send(
-                prepared_request,
+                req,
                 stream=stream,
                 timeout=timeout,
                 verify=verify,
",
        &[(
            "requests/sessions.py",
            vec![
                insert(170, "            # Override the original request."),
                line(172),
            ],
        )],
    );
}

#[test]
fn patch_files_created_removed_and_cut_are_read_as_their_pre_image() {
    check_patch(
        "diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+x = 1
+y = 2
diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -0,0 +1 @@
+import os
@@ -10,0 +12,2 @@ def f():
+
+    g()
@@ -20,2 +22 @@ class A:
--- the removed line that looks like a header
-    y = 2
+    z = 3
\\ No newline at end of file
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
",
        &[
            (
                "a.py",
                vec![
                    insert(0, "import os"),
                    insert(10, "    g()"),
                    line(20),
                    line(21),
                ],
            ),
            ("gone.py", vec![line(1), line(2)]),
        ],
    );
    // A site counts for line recall as its line, an insertion at the top as the first.
    assert_eq!(insert(0, "x").line(), 1);
    assert_eq!(insert(7, "x").line(), 7);
    assert_eq!(line(3).line(), 3);
}

fn check_defs(path: &str, text: &str, expected: &[(&str, usize, usize)]) {
    let got: Vec<(String, usize, usize)> = definitions(path, text)
        .into_iter()
        .map(|d| (d.name, d.line, d.end))
        .collect();
    let expected: Vec<(String, usize, usize)> = expected
        .iter()
        .map(|&(n, a, b)| (n.to_owned(), a, b))
        .collect();
    assert_eq!(got, expected, "{path}");
}

#[test]
fn python_definitions_follow_indentation_over_logical_lines() {
    check_defs(
        "m.py",
        r#"import os

X = """
def not_a_function():
"""

@decorator
class A(Base):
    """Doc.

not a dedent
"""
    x = 1

    def f(self, a,
b=2):
        def inner():
            class Hidden:
                pass
        return (1 +
2)
    # a comment at the class's level

    async def g(self): return '#'  # trailing
s = 'a \
class Nope:'

def top():
    pass
# the end
"#,
        &[("A", 8, 24), ("f", 15, 21), ("g", 24, 24), ("top", 28, 29)],
    );
    check_defs(
        "tabs.py",
        "class T:\n\tdef m(self):\n\t\treturn 1\n",
        &[("T", 1, 3), ("m", 2, 3)],
    );
    check_defs("README.md", "def f():\n    pass\n", &[]);
}

#[test]
fn rust_definitions_skip_bodies_strings_and_attributes() {
    check_defs(
        "lib.rs",
        r##"//! doc { not a block
use std::fmt;

#[derive(Debug, Clone)]
pub(crate) struct S<'a> {
    x: &'a str,
}

impl<'a, F: Fn(u8)> Tr for S<'a> where F: Copy {
    fn new() -> S<'static> {
        let c = '}';
        let s = r#"} {"#;
        S { x: "}" }
    }

    #[inline]
    pub async fn g<T>(&self, t: T)
        -> u32
    {
        'outer: loop { break 'outer; }
        0
    }

    fn declared(&self);
}

mod tests {
    fn helper() {}
}

macro_rules! m {
    () => {};
}
"##,
        &[
            ("S", 5, 7),
            ("new", 10, 14),
            ("g", 17, 22),
            ("declared", 24, 24),
            ("helper", 28, 28),
            ("m", 31, 33),
        ],
    );
}

#[test]
fn java_and_typescript_definitions_by_their_headers() {
    check_defs(
        "B.java",
        r#"package p;

@SuppressWarnings("x")
public class B extends A implements I {
    private int x = f(1);

    @Override
    public String toString() {
        return "}" + '{';
    }

    static class Inner {
        void f() { new Object() { void g() {} }; }
    }

    abstract int count();

    public enum Feature implements FormatFeature
    {
        WRITE_XML_DECLARATION(false),
        WRITE_XML_1_1(false);

        Feature(boolean d) { }
    }
}
"#,
        &[
            ("B", 4, 25),
            ("toString", 8, 10),
            ("Inner", 12, 14),
            ("f", 13, 13),
            ("count", 16, 16),
            ("Feature", 18, 24),
            ("Feature", 23, 23),
        ],
    );
    check_defs(
        "x.ts",
        "export function parse(s: string): number {\n  const o = { a: `}${s}` };\n  return 1;\n}\nconst f = () => {\n  return 2;\n};\nexport class C<T> extends D {\n  async run(x: T): Promise<void> {\n    if (x) { }\n  }\n}\n",
        &[("parse", 1, 4), ("C", 8, 12), ("run", 9, 11)],
    );
}

/// Go ends a statement at a line break outside brackets: the package clause, an import group
/// and a variable never join the next function's header (no function named `import`), and
/// an interface's method is declared as a Java one is.
#[test]
fn go_definitions_end_their_statements_at_line_breaks() {
    check_defs(
        "code.go",
        "package codespace\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\ntype browser interface {\n\tBrowse(string) error\n}\n\nvar opened = map[string]bool{}\n\nfunc newCodeCmd(app *App) *cobra.Command {\n\treturn nil\n}\n\nfunc (a *App) VSCode(\n\tctx context.Context,\n) error {\n\ts := `}`\n\treturn nil\n}\n",
        &[
            ("browser", 8, 10),
            ("Browse", 9, 9),
            ("newCodeCmd", 14, 16),
            ("VSCode", 18, 23),
        ],
    );
}

#[test]
fn cpp_definitions_through_namespaces_and_preprocessor_lines() {
    check_defs(
        "json.hpp",
        r#"#include <x>
#define OPEN {
namespace n {
namespace detail {
template<class T, typename U = int>
class C : public Base<T> {
  public:
    explicit C(int a) : a_(a), b_(a) {
    }
    int g() const;
    ~C() {}
    bool operator==(const C& o) const
    {
#if X
        return a_ == o.a_;
#endif
    }
};
template<class T>
inline T h(T t) { return t; }
JSON_HEDLEY_NON_NULL(1) static int parse(const char* s) { return 0; }
}  // namespace detail
}  // namespace n
"#,
        &[
            ("C", 6, 18),
            ("C", 8, 9),
            ("g", 10, 10),
            ("~C", 11, 11),
            ("operator==", 12, 17),
            ("h", 20, 20),
            ("parse", 21, 21),
        ],
    );
    check_defs(
        "raw.cc",
        "int main()\n{\n    auto t = R\"x(\n    { \"a\": 1\n)x\";\n    return 0;\n}\nvoid after() {}\n",
        &[("main", 1, 7), ("after", 8, 8)],
    );
    // A group's other branches are read as a compiler with the first branch taken reads them:
    // not at all (both heads' braces counted ran `f` on over `g`).
    check_defs(
        "branches.h",
        "bool f(int p) {\n#if A\n  if (p < 1) {\n#elif B\n#if C\n  if (p) {\n#endif\n#else\n  if (p < 2) {\n#endif\n    return true;\n  }\n  return false;\n}\nvoid g() {}\n",
        &[("f", 1, 14), ("g", 15, 15)],
    );
    // A directive in a skipped branch's comment is prose: it opens no group.
    check_defs(
        "prose.h",
        "bool f(int p) {\n#if A\n  if (p) {\n#else\n  /* use\n#if B when */ if (p < 2) {\n#endif\n    return true;\n  }\n  return false;\n}\nvoid g() {}\n",
        &[("f", 1, 11), ("g", 12, 12)],
    );
}

fn def(name: &str, line: usize, end: usize, indent: Option<usize>) -> Definition {
    Definition {
        name: name.to_owned(),
        line,
        end,
        indent,
    }
}

#[test]
fn a_site_falls_in_the_innermost_definition_holding_it() {
    // class A: lines 1-9, its method f 2-4 and g 6-9.
    let defs = [
        def("A", 1, 9, Some(0)),
        def("f", 2, 4, Some(4)),
        def("g", 6, 9, Some(4)),
    ];
    let check = |site: Site, expected: Option<&str>| {
        assert_eq!(
            enclosing(&defs, &site).map(|i| defs[i].name.as_str()),
            expected,
            "{site:?}"
        );
    };
    check(line(3), Some("f"));
    check(line(5), Some("A"));
    check(line(10), None);
    // Inserted into f's body, after its first line.
    check(insert(2, "        x = 1"), Some("f"));
    // After f's last line: a method added to A, or a statement added to f's end.
    check(insert(4, "    def h(self):"), Some("A"));
    check(insert(4, "        return x"), Some("f"));
    check(insert(9, "def top():"), None);
    check(insert(0, "import os"), None);
    // A brace language's definitions end on their closing brace: after it is outside.
    let braces = [def("C", 1, 9, None), def("m", 2, 4, None)];
    assert_eq!(enclosing(&braces, &insert(3, "  x();")), Some(1));
    assert_eq!(enclosing(&braces, &insert(4, "  void n() {}")), Some(0));
}

#[test]
fn gold_functions_and_lines_come_from_the_pre_image() {
    let text =
        "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n\nX = 1\n";
    let files = [
        PatchFile {
            path: "a.py".to_owned(),
            sites: vec![
                line(3),
                line(8),
                insert(3, "        y = 2"),
                line(6),
                line(3),
            ],
            hunks: Vec::new(),
        },
        PatchFile {
            path: "b.txt".to_owned(),
            sites: vec![line(1)],
            hunks: Vec::new(),
        },
    ];
    let (gold, outside) = gold_functions(&files, |p| if p == "a.py" { text } else { "x\n" });
    let fd = |name: &str, line, end| FileDefinition {
        path: "a.py".to_owned(),
        name: name.to_owned(),
        line,
        end,
    };
    assert_eq!(gold, vec![fd("f", 2, 3), fd("g", 5, 6)]);
    assert_eq!(outside, 2);
    // An insertion is seen at the non-blank lines around it.
    assert_eq!(
        gold_lines(&files, |p| if p == "a.py" { text } else { "x\n" }),
        vec![
            ("a.py", 3, 3),
            ("a.py", 8, 8),
            ("a.py", 3, 5),
            ("a.py", 6, 6),
            ("b.txt", 1, 1)
        ]
    );
}

#[test]
fn ranks_are_places_in_the_hits_definitions_hit_after_hit() {
    let hits = json!([
        {"path": "a.py", "symbols": [
            {"name": "f", "line_start": 10, "line_end": 20},
            {"name": "g", "line_start": 30, "line_end": 40},
        ]},
        {"path": "b.rs", "symbols": []},
        {"path": "c.cc", "symbols": [
            {"name": "C::run", "line_start": 5, "line_end": 9},
            {"name": "json_pointer operator/", "line_start": 12, "line_end": 14},
        ]},
    ]);
    let ranked = ranked_definitions(&hits);
    assert_eq!(ranked.len(), 4);
    let gold = |path: &str, name: &str, line, end| FileDefinition {
        path: path.to_owned(),
        name: name.to_owned(),
        line,
        end,
    };
    assert_eq!(
        ranks(
            &ranked,
            &[
                gold("a.py", "g", 30, 40),
                gold("c.cc", "run", 5, 9),
                gold("c.cc", "operator/", 12, 14),
                // Same name elsewhere in the file, and in another file: not found.
                gold("a.py", "f", 50, 60),
                gold("b.rs", "f", 10, 20),
            ]
        ),
        vec![Some(1), Some(2), Some(3), None, None]
    );
}

#[test]
fn a_bundle_shows_its_sections_lines_by_number_and_text() {
    let bundle = json!({"tokens": 50, "files": [
        {"path": "a.py", "sections": [
            {"kind": "definition", "name": "f", "line_start": 2, "line_end": 9,
             "text": "def f():\n    x = 1\n… 6 more lines"},
            {"kind": "definition", "name": "g", "line_start": 12, "line_end": 13,
             "text": "def g():\n    pass"},
        ]},
        {"path": "b.py", "sections": [
            {"kind": "outline", "name": null, "line_start": 1, "line_end": 40,
             "text": "Python, 10 bytes, 40 lines\n3: def h()"},
        ]},
    ]});
    let shown = Shown::of_bundle(&bundle);
    assert!(shown.shows("a.py", 2, "def f():"));
    assert!(shown.shows("a.py", 3, "    x = 1  "));
    // Past what a cut definition shows, or the text differs: not shown.
    assert!(!shown.shows("a.py", 4, "    y = 2"));
    assert!(!shown.shows("a.py", 3, "    x = 2"));
    assert!(shown.shows("a.py", 13, "    pass"));
    assert!(!shown.shows("a.py", 1, "import os"));
    // An outline shows none of the file's lines, whatever its text.
    assert!(!shown.shows("b.py", 2, "3: def h()"));
    assert!(!shown.shows("c.py", 1, "x"));
}

#[test]
fn files_are_pasted_from_their_start_into_the_budget() {
    // Each file costs its frame, `\n## PATH\n\n```\n` and `\n```\n` (14 + 5 bytes for a
    // four-byte path), then its lines with their newlines.
    let a = "aaaaaaa\n".repeat(10);
    let files = [("a.py", a.as_str()), ("b.py", "bbb\nccc\n")];
    let (shown, tokens) = Shown::pasted(&files, 1000);
    assert_eq!(tokens, (19 + 80 + 19 + 8_usize).div_ceil(4));
    assert!(shown.shows("a.py", 10, "aaaaaaa"));
    assert!(shown.shows("b.py", 2, "ccc"));
    // 30 tokens, 120 bytes: all of a.py (99 bytes), but not b.py's frame and first line.
    let (shown, tokens) = Shown::pasted(&files, 30);
    assert!(shown.shows("a.py", 10, "aaaaaaa"));
    assert!(!shown.shows("b.py", 1, "bbb"));
    assert_eq!(tokens, 25);
    let (shown, tokens) = Shown::pasted(&files, 10);
    assert!(shown.shows("a.py", 2, "aaaaaaa"));
    assert!(!shown.shows("a.py", 3, "aaaaaaa"));
    assert_eq!(tokens, 9);
}
