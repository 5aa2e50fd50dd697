//! Import specifiers per language: one `check(language, source, expected)` table, each
//! expected line `kind spec[ name] @line`.
#![cfg(all(
    feature = "rust",
    feature = "python",
    feature = "javascript",
    feature = "typescript",
    feature = "go",
    feature = "java",
    feature = "c",
    feature = "cpp"
))]
use outline::{Language, Parser};
use pretty_assertions::assert_eq;

fn check(language: Language, source: &str, expected: &[&str]) {
    let mut parser = Parser::new();
    let parsed = parser.parse(language, source).expect("parses");
    let got: Vec<String> = parsed
        .imports()
        .iter()
        .map(|i| match &i.name {
            Some(n) => format!("{} {} {n} @{}", i.kind.as_str(), i.spec, i.line),
            None => format!("{} {} @{}", i.kind.as_str(), i.spec, i.line),
        })
        .collect();
    assert_eq!(got, expected, "{language} source:\n{source}");
}

#[test]
fn rust_mods_and_crate_relative_uses() {
    check(
        Language::Rust,
        "mod a;\npub mod b;\nuse std::fmt;\nuse crate::x::{y, z::{self, W}};\n\
         use super::up as other;\nuse self::a::*;\nmod inline {\n    mod deep;\n    \
         use super::b::Thing;\n    use super::super::Far;\n}\nfn f() { use crate::hidden; }\n",
        &[
            "rust-mod a @1",
            "rust-mod b @2",
            "rust-use crate::x::y @4",
            "rust-use crate::x::z @4",
            "rust-use crate::x::z::W @4",
            "rust-use super::up @5",
            "rust-use self::a @6",
            "rust-mod inline::deep @8",
            "rust-use self::b::Thing @9",
            "rust-use super::Far @10",
        ],
    );
}

#[test]
fn python_imports_and_relative_from_imports() {
    check(
        Language::Python,
        "import os, a.b as ab\nfrom . import sibling\nfrom ..pkg.mod import name as n, other\n\
         from x import *\ndef f():\n    import lazy\n",
        &[
            "python os @1",
            "python a.b @1",
            "python-from . sibling @2",
            "python-from ..pkg.mod name @3",
            "python-from ..pkg.mod other @3",
            "python-from x @4",
            "python lazy @6",
        ],
    );
}

#[test]
fn script_imports_exports_and_requires() {
    let source = "import a from './a';\nimport './side.css';\nexport { b } from \"../b\";\n\
                  export * from './c/index.js';\nconst d = require('./d');\n\
                  async function f() { await import('./e'); }\nexport const g = 1;\n";
    let expected = [
        "script ./a @1",
        "script ./side.css @2",
        "script ../b @3",
        "script ./c/index.js @4",
        "script ./d @5",
        "script ./e @6",
    ];
    check(Language::JavaScript, source, &expected);
    check(Language::TypeScript, source, &expected);
    check(
        Language::TypeScript,
        "import type { T } from './types';\nimport fs = require('./fs');\n",
        &["script ./types @1", "script ./fs @2"],
    );
    check(
        Language::Tsx,
        "import { Button } from './Button';\nexport const App = () => <Button />;\n",
        &["script ./Button @1"],
    );
}

#[test]
fn go_c_cpp_and_java() {
    check(
        Language::Go,
        "package main\n\nimport \"fmt\"\nimport (\n\tx \"example.com/m/pkg/x\"\n)\n",
        &["go fmt @3", "go example.com/m/pkg/x @5"],
    );
    check(
        Language::C,
        "#include <stdio.h>\n#include \"util.h\"\n#ifdef X\n#include \"sub/x.h\"\n#endif\n",
        &["include util.h @2", "include sub/x.h @4"],
    );
    check(
        Language::Cpp,
        "#include \"a.hpp\"\nnamespace n {\n#include \"inner.h\"\n}\n",
        &["include a.hpp @1", "include inner.h @3"],
    );
    check(
        Language::Java,
        "package p;\nimport a.b.C;\nimport static a.b.D.f;\nimport a.e.*;\nclass K {}\n",
        &["java a.b.C @2", "java a.b.D.f @3", "java a.e.* @4"],
    );
}

#[test]
fn languages_read_by_hand_have_no_imports() {
    check(Language::Markdown, "# Title\n\nimport x\n", &[]);
}
