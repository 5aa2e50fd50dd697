//! Import resolution per language against a path set: one table of (importer, import,
//! expected files).
use context::resolve::{PathSet, go_module_path, resolve};
use outline::{Import, ImportKind};
use pretty_assertions::assert_eq;

const TREE: &[&str] = &[
    "Cargo.toml",
    "src/lib.rs",
    "src/store.rs",
    "src/store/rescan.rs",
    "src/engine/mod.rs",
    "src/engine/redb.rs",
    "pkg/__init__.py",
    "pkg/a.py",
    "pkg/sub/__init__.py",
    "pkg/sub/b.py",
    "src/app/main.py",
    "web/src/index.ts",
    "web/src/util.ts",
    "web/src/comp/Button.tsx",
    "web/src/comp/index.js",
    "web/src/esm.ts",
    "web/lib/legacy.js",
    "go/go.mod",
    "go/cmd/main.go",
    "go/pkg/x/x.go",
    "go/pkg/x/y.go",
    "go/pkg/x/x_test.go",
    "c/src/main.c",
    "c/src/util.h",
    "c/include/lib/api.h",
    "java/src/com/acme/Store.java",
];

fn check(from: &str, kind: ImportKind, spec: &str, name: Option<&str>, expected: &[&str]) {
    let mut set = PathSet::new(TREE.iter().copied());
    set.add_go_module("go", "example.com/m");
    check_in(&set, from, kind, spec, name, expected);
}

/// [`check`] against `set`.
fn check_in(
    set: &PathSet,
    from: &str,
    kind: ImportKind,
    spec: &str,
    name: Option<&str>,
    expected: &[&str],
) {
    let import = Import {
        kind,
        spec: spec.to_owned(),
        name: name.map(str::to_owned),
        line: 1,
    };
    assert_eq!(
        resolve(set, from, &import),
        expected.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "{from}: {kind:?} {spec} {name:?}"
    );
}

#[test]
fn rust() {
    use ImportKind::{RustMod, RustUse};
    check("src/lib.rs", RustMod, "store", None, &["src/store.rs"]);
    check(
        "src/lib.rs",
        RustMod,
        "engine",
        None,
        &["src/engine/mod.rs"],
    );
    check(
        "src/store.rs",
        RustMod,
        "rescan",
        None,
        &["src/store/rescan.rs"],
    );
    check(
        "src/engine/mod.rs",
        RustMod,
        "redb",
        None,
        &["src/engine/redb.rs"],
    );
    check("src/lib.rs", RustMod, "missing", None, &[]);
    check(
        "src/store/rescan.rs",
        RustUse,
        "crate::engine::redb::Thing",
        None,
        &["src/engine/redb.rs"],
    );
    check(
        "src/store/rescan.rs",
        RustUse,
        "crate::engine::Table",
        None,
        &["src/engine/mod.rs"],
    );
    check(
        "src/store/rescan.rs",
        RustUse,
        "crate::Item",
        None,
        &["src/lib.rs"],
    );
    check(
        "src/store/rescan.rs",
        RustUse,
        "super::Store",
        None,
        &["src/store.rs"],
    );
    check(
        "src/engine/redb.rs",
        RustUse,
        "super::super::store",
        None,
        &["src/store.rs"],
    );
    check(
        "src/store.rs",
        RustUse,
        "self::rescan::scan",
        None,
        &["src/store/rescan.rs"],
    );
    check("src/lib.rs", RustUse, "std::fmt", None, &[]);
}

#[test]
fn python() {
    use ImportKind::{Python, PythonFrom};
    check("pkg/sub/b.py", PythonFrom, ".", Some("b"), &[]);
    check("pkg/sub/b.py", PythonFrom, "..", Some("a"), &["pkg/a.py"]);
    check(
        "pkg/sub/b.py",
        PythonFrom,
        "..a",
        Some("name"),
        &["pkg/a.py"],
    );
    check("pkg/a.py", PythonFrom, ".sub", Some("b"), &["pkg/sub/b.py"]);
    check(
        "pkg/a.py",
        PythonFrom,
        ".sub",
        Some("thing"),
        &["pkg/sub/__init__.py"],
    );
    check(
        "src/app/main.py",
        Python,
        "pkg.sub.b",
        None,
        &["pkg/sub/b.py"],
    );
    check(
        "src/app/main.py",
        PythonFrom,
        "pkg",
        Some("a"),
        &["pkg/a.py"],
    );
    check("pkg/a.py", Python, "os", None, &[]);
}

/// A tree shaped like flask's: a package under `src/` whose modules share names with the
/// standard library's (`typing.py`, `json/`, `logging.py`), its tests, and a scripts folder.
const FLASK: &[&str] = &[
    "src/flask/__init__.py",
    "src/flask/app.py",
    "src/flask/typing.py",
    "src/flask/logging.py",
    "src/flask/json/__init__.py",
    "src/flask/json/provider.py",
    "tests/test_basic.py",
    "scripts/release.py",
    "scripts/helpers.py",
];

/// Python 3 resolves an absolute import from `sys.path`'s roots, never from the importing
/// file's package: inside `src/flask/`, `import typing` is the standard library's.
#[test]
fn python_absolute_imports_never_resolve_inside_a_package() {
    use ImportKind::{Python, PythonFrom};
    let set = PathSet::new(FLASK.iter().copied());
    let check = |from: &str, kind, spec: &str, name: Option<&str>, want: &[&str]| {
        check_in(&set, from, kind, spec, name, want);
    };
    for stdlib in ["typing", "json", "logging", "json.decoder"] {
        check("src/flask/app.py", Python, stdlib, None, &[]);
        check("src/flask/json/provider.py", Python, stdlib, None, &[]);
    }
    check("src/flask/app.py", PythonFrom, "typing", Some("Any"), &[]);
    // Into the package: relative, or by the package's own name.
    check(
        "src/flask/app.py",
        PythonFrom,
        ".",
        Some("typing"),
        &["src/flask/typing.py"],
    );
    check(
        "src/flask/app.py",
        PythonFrom,
        ".json",
        Some("provider"),
        &["src/flask/json/provider.py"],
    );
    check(
        "src/flask/app.py",
        PythonFrom,
        "flask",
        Some("json"),
        &["src/flask/json/__init__.py"],
    );
    check(
        "src/flask/app.py",
        Python,
        "flask.logging",
        None,
        &["src/flask/logging.py"],
    );
    check(
        "tests/test_basic.py",
        Python,
        "flask",
        None,
        &["src/flask/__init__.py"],
    );
    // A script's own folder is on its path.
    check(
        "scripts/release.py",
        Python,
        "helpers",
        None,
        &["scripts/helpers.py"],
    );
}

#[test]
fn scripts() {
    use ImportKind::Script;
    check(
        "web/src/index.ts",
        Script,
        "./util",
        None,
        &["web/src/util.ts"],
    );
    check(
        "web/src/index.ts",
        Script,
        "./comp/Button",
        None,
        &["web/src/comp/Button.tsx"],
    );
    check(
        "web/src/index.ts",
        Script,
        "./comp",
        None,
        &["web/src/comp/index.js"],
    );
    check(
        "web/src/esm.ts",
        Script,
        "./util.js",
        None,
        &["web/src/util.ts"],
    );
    check(
        "web/src/index.ts",
        Script,
        "../lib/legacy.js",
        None,
        &["web/lib/legacy.js"],
    );
    check("web/src/index.ts", Script, "react", None, &[]);
    check("web/src/index.ts", Script, "../../../../outside", None, &[]);
}

#[test]
fn go_c_and_java() {
    use ImportKind::{Go, Include, Java};
    check(
        "go/cmd/main.go",
        Go,
        "example.com/m/pkg/x",
        None,
        &["go/pkg/x/x.go", "go/pkg/x/y.go"],
    );
    check("go/cmd/main.go", Go, "fmt", None, &[]);
    check("c/src/main.c", Include, "util.h", None, &["c/src/util.h"]);
    check(
        "c/src/main.c",
        Include,
        "lib/api.h",
        None,
        &["c/include/lib/api.h"],
    );
    check("c/src/main.c", Include, "nope.h", None, &[]);
    check(
        "java/src/com/acme/Store.java",
        Java,
        "com.acme.Store",
        None,
        &[],
    );
    check(
        "web/src/index.ts",
        Java,
        "com.acme.Store",
        None,
        &["java/src/com/acme/Store.java"],
    );
    check(
        "web/src/index.ts",
        Java,
        "com.acme.Store.open",
        None,
        &["java/src/com/acme/Store.java"],
    );
    assert_eq!(
        go_module_path("// c\nmodule example.com/m\n\ngo 1.22\n"),
        Some("example.com/m")
    );
    assert_eq!(go_module_path("go 1.22\n"), None);
}

/// A crate's name and root from its manifest, as `cargo` reads them: a `#` inside a quoted
/// value is part of it, one after the value is a comment, and a dash in a package name is `_`.
#[test]
fn rust_crates_by_name_from_their_manifests() {
    let mut set = PathSet::new([
        "core/Cargo.toml",
        "core/core.rs",
        "core/ops.rs",
        "web/Cargo.toml",
        "web/lib.rs",
        "web/server.rs",
        "app/src/main.rs",
    ]);
    set.add_rust_crate(
        "core/Cargo.toml",
        "[package]\nname = \"my-core\" # the core\n[lib]\npath = \"core.rs\"\n",
    );
    set.add_rust_crate("web/Cargo.toml", "[package]\nname = 'web#1'\n");
    let import = |spec: &str| Import {
        kind: ImportKind::RustUse,
        spec: spec.to_owned(),
        name: None,
        line: 1,
    };
    assert_eq!(
        resolve(&set, "app/src/main.rs", &import("my_core::ops::op")),
        ["core/ops.rs"]
    );
    assert_eq!(
        resolve(&set, "app/src/main.rs", &import("my_core::Thing")),
        ["core/core.rs"]
    );
    // `web#1` is no Rust name, so nothing resolves to it; the crate's own `crate::` does.
    assert_eq!(
        resolve(&set, "app/src/main.rs", &import("web::server")),
        Vec::<String>::new()
    );
    assert_eq!(
        resolve(&set, "web/server.rs", &import("crate::Thing")),
        ["web/lib.rs"]
    );
    assert_eq!(
        resolve(&set, "app/src/main.rs", &import("serde::Serialize")),
        Vec::<String>::new()
    );
}

#[test]
fn bare_script_specifiers_through_import_maps_and_tsconfig_paths() {
    let tree = [
        "import_map.json",
        "std/assert/mod.ts",
        "std/assert/equals.ts",
        "app/deno.jsonc",
        "app/main.ts",
        "app/lib/db.ts",
        "web/tsconfig.json",
        "web/src/index.ts",
        "web/src/components/Button.tsx",
        "web/src/utils/index.ts",
        "web/legacy/tsconfig.json",
        "web/legacy/old.ts",
        "web/legacy/shared/format.js",
    ];
    let mut set = PathSet::new(tree.iter().copied());
    set.add_script_aliases(
        "import_map.json",
        r#"{"imports": {"@std/assert": "./std/assert/mod.ts", "@std/assert/": "./std/assert/",
            "npm-thing": "npm:thing@1", "https://x/": "https://y/"}}"#,
    );
    // JSON with comments and trailing commas, as deno.jsonc and tsconfig.json allow.
    set.add_script_aliases(
        "app/deno.jsonc",
        "{\n  // the app's own names\n  \"imports\": { \"$db\": \"./lib/db.ts\", /* more */ },\n}\n",
    );
    set.add_script_aliases(
        "web/tsconfig.json",
        r#"{"compilerOptions": {"baseUrl": "src", "paths": {"@/*": ["./*"], "~ui/*": ["components/*"]},}}"#,
    );
    set.add_script_aliases(
        "web/legacy/tsconfig.json",
        r#"{"compilerOptions": {"baseUrl": "."}}"#,
    );
    set.add_script_aliases("broken/tsconfig.json", "{ not json");
    let script = |from: &str, spec: &str| {
        resolve(
            &set,
            from,
            &Import {
                kind: ImportKind::Script,
                spec: spec.to_owned(),
                name: None,
                line: 1,
            },
        )
    };
    // An import map: an exact key, a prefix key, and entries outside the workspace ignored.
    assert_eq!(script("app/main.ts", "$db"), ["app/lib/db.ts"]);
    assert_eq!(
        script("std/assert/equals.ts", "@std/assert"),
        ["std/assert/mod.ts"]
    );
    // The nearest folder whose aliases match decides (its `baseUrl` matches anything), even
    // when what it names is no file; a folder with no match leaves it to the folders above.
    assert_eq!(
        script("web/legacy/old.ts", "@std/assert/equals.ts"),
        Vec::<String>::new()
    );
    assert_eq!(
        script("app/lib/db.ts", "@std/assert"),
        ["std/assert/mod.ts"]
    );
    assert_eq!(
        script("std/assert/mod.ts", "@std/assert/equals.ts"),
        ["std/assert/equals.ts"]
    );
    assert_eq!(
        script("std/assert/mod.ts", "npm-thing"),
        Vec::<String>::new()
    );
    // tsconfig: `paths` (relative to `baseUrl`) with one `*`, extensions and index files as
    // for relative specifiers, then `baseUrl` for any bare specifier.
    assert_eq!(
        script("web/src/index.ts", "@/utils"),
        ["web/src/utils/index.ts"]
    );
    assert_eq!(
        script("web/src/index.ts", "~ui/Button"),
        ["web/src/components/Button.tsx"]
    );
    assert_eq!(
        script("web/src/index.ts", "utils"),
        ["web/src/utils/index.ts"]
    );
    assert_eq!(script("web/src/index.ts", "react"), Vec::<String>::new());
    assert_eq!(
        script("web/legacy/old.ts", "shared/format"),
        ["web/legacy/shared/format.js"]
    );
}
