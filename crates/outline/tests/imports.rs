//! Import specifiers per language: one `check(language, source, expected)` table, each
//! expected line `kind spec[ name] @line`, checked on a whole parse and on a skimmed one
//! (function bodies not parsed, the imports in them read by hand).
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
    let lines = |parsed: outline::Parsed<'_>| -> Vec<String> {
        parsed
            .imports()
            .iter()
            .map(|i| match &i.name {
                Some(n) => format!("{} {} {n} @{}", i.kind.as_str(), i.spec, i.line),
                None => format!("{} {} @{}", i.kind.as_str(), i.spec, i.line),
            })
            .collect()
    };
    let whole = lines(parser.parse(language, source).expect("parses"));
    assert_eq!(whole, expected, "{language} source:\n{source}");
    let skimmed = lines(parser.skim(language, source).expect("parses"));
    assert_eq!(skimmed, expected, "{language} source, skimmed:\n{source}");
}

#[test]
fn rust_mods_crate_relative_uses_and_other_crates() {
    check(
        Language::Rust,
        "mod a;\npub mod b;\nuse std::fmt;\nuse crate::x::{y, z::{self, W}};\n\
         use super::up as other;\nuse self::a::*;\nmod inline {\n    mod deep;\n    \
         use super::b::Thing;\n    use super::super::Far;\n}\nfn f() { use crate::hidden; }\n\
         use deno_core::{op2, v8::Local};\nuse core::mem;\n",
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
            "rust-use deno_core::op2 @13",
            "rust-use deno_core::v8::Local @13",
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

#[test]
fn python_imports_inside_skipped_function_bodies() {
    check(
        Language::Python,
        "import top\n\
         def f():\n\
         \x20   \"\"\"A docstring, then a body long enough to be skipped.\"\"\"\n\
         \x20   value = compute(1, 2, 3)\n\
         \x20   import json, os.path as p\n\
         \x20   from ..models import (\n\
         \x20       Model,  # the base\n\
         \x20       Field as F,\n\
         \x20   )\n\
         \x20   if value:\n\
         \x20       from . import sibling; import other\n\
         \x20   try: from .fast import speed\n\
         \x20   except ImportError: speed = None\n\
         \x20   text = \"import not_this\"  # import nor_this\n\
         \x20   from x import *\n\
         \x20   from __future__ import annotations\n\
         \x20   importlib.import_module(name)\n\
         \x20   return value\n\
         class K:\n\
         \x20   def m(self):\n\
         \x20       self.ready = True and False or None\n\
         \x20       from .k import helper\n\
         \x20       return helper\n",
        &[
            "python top @1",
            "python json @5",
            "python os.path @5",
            "python-from ..models Model @6",
            "python-from ..models Field @6",
            "python-from . sibling @11",
            "python other @11",
            "python-from .fast speed @12",
            "python-from x @15",
            "python-from .k helper @22",
        ],
    );
}

#[test]
fn script_requires_and_dynamic_imports_inside_skipped_bodies() {
    let source = "const a = require('./a');\n\
                  function load(name) {\n\
                  \x20 const table = { name, when: Date.now(), size: 1 };\n\
                  \x20 const b = require(\"./b\");\n\
                  \x20 // const c = require('./not-a-comment');\n\
                  \x20 const s = \"require('./not-a-string')\";\n\
                  \x20 const t = `${require('./t')} and require('./not-template-text')`;\n\
                  \x20 module.require('./not-a-member');\n\
                  \x20 require(name + './not-a-string-alone');\n\
                  \x20 return import('./d').then((m) => m.default, require('./e', 1));\n\
                  }\n\
                  export const routes = [\n\
                  \x20 { path: '/', component: () => import('./views/Home') },\n\
                  \x20 { path: '/about', component: () => import('./views/About') },\n\
                  ];\n\
                  const short = () => require('./short');\n\
                  const later = `${require('./top-template')}`;\n";
    let expected = [
        "script ./a @1",
        "script ./b @4",
        "script ./t @7",
        "script ./d @10",
        "script ./e @10",
        "script ./views/Home @13",
        "script ./views/About @14",
        "script ./short @16",
        "script ./top-template @17",
    ];
    check(Language::JavaScript, source, &expected);
    check(Language::TypeScript, source, &expected);
    check(Language::Tsx, source, &expected);
}

/// A script's imports are found from the words `import`, `export` and `require`: calls nested
/// in calls each count once, a word inside a longer name or a statement already taken is
/// not another import, and the order is the source's.
#[test]
fn script_imports_found_by_their_words() {
    let source = "wrap(require('./a'), require('./b'));\n\
                  const x = required('./not-required') + $require('./not-dollar');\n\
                  export { exported } from './export-from';\n\
                  import imported, { requireAll } from './import-from';\n\
                  export default function exportDefault() { return import('./lazy'); }\n\
                  exports.reexport = require('./commonjs');\n\
                  require('./outer', require('./inner'));\n";
    let expected = [
        "script ./a @1",
        "script ./b @1",
        "script ./export-from @3",
        "script ./import-from @4",
        "script ./lazy @5",
        "script ./commonjs @6",
        "script ./outer @7",
        "script ./inner @7",
    ];
    check(Language::JavaScript, source, &expected);
    check(Language::TypeScript, source, &expected);
}

/// On every fixture, a skimmed parse finds the imports a whole parse does.
#[test]
fn skimmed_imports_are_the_whole_parses_on_the_fixtures() {
    let mut parser = Parser::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for dir in ["fixtures", "skim"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("fixtures are readable") {
            let path = entry.expect("an entry").path();
            let name = path.to_string_lossy().into_owned();
            let Some(language) = Language::from_path(&name) else {
                continue;
            };
            let source = std::fs::read_to_string(&path).expect("fixtures are text");
            let whole = parser.parse(language, &source).expect("parses").imports();
            let skimmed = parser.skim(language, &source).expect("parses").imports();
            assert_eq!(whole, skimmed, "{name}");
        }
    }
}
