//! How much a file counts before the evidence for it ([`prior`]), how much a definition's kind
//! says, and a file's text as search reads it.
use super::*;

/// Files larger than this are huge (bundles, generated tables): the prior counts them less.
const HUGE_BYTES: usize = 256 << 10;
/// Code files smaller than this count for a little less (see [`prior`]).
const SMALL_BYTES: usize = 5000;

/// The size of a file's node as the store records it (0 where it has none).
pub(super) fn size_of(node: Option<&merkle_store::NodeRecord>) -> usize {
    node.map_or(0, |n| usize::try_from(n.size).unwrap_or(usize::MAX))
}

/// How much a definition of a name says a file is about it, by the class of its kind
/// ([`kind_class`]): a type's or a function's more than a method's of the same name, a
/// method's more than a variable's.
pub(super) const KIND_WEIGHTS: [f64; 4] = [1.0, 0.9, 0.6, 0.3];

/// The class of a kind, an index into [`KIND_WEIGHTS`].
pub(super) fn kind_class(kind: Kind) -> usize {
    match kind {
        Kind::Struct
        | Kind::Enum
        | Kind::Union
        | Kind::Type
        | Kind::Trait
        | Kind::Interface
        | Kind::Class
        | Kind::Module
        | Kind::Namespace
        | Kind::Macro => 0,
        Kind::Function => 1,
        Kind::Method => 2,
        _ => 3,
    }
}

/// [`prior`] for a question ([`retrieve::QueryKind::Question`]) of `words`: a folder the question names
/// by a word (`test` in `test runner reporter`) is what it asks about, not held against the
/// file (`cli/tools/test/reporters/pretty.rs` counts as `cli/tools/reporters/pretty.rs`).
pub(super) fn prior_asked(
    path: &str,
    words: &[(String, f32)],
    language: Option<Language>,
    size: usize,
) -> f64 {
    let (folders, name) = path.rsplit_once('/').unwrap_or(("", path));
    let asked = |d: &str| words.iter().any(|(w, _)| w.eq_ignore_ascii_case(d));
    if !folders.split('/').any(asked) {
        return prior(path, language, size);
    }
    let mut kept: Vec<&str> = folders.split('/').filter(|d| !asked(d)).collect();
    kept.push(name);
    prior(&kept.join("/"), language, size)
}

/// How much a file counts before the evidence for it: a file a fix is likely to touch is
/// source code of the project itself. Tests, fixtures, docs, examples, benchmarks, vendored
/// and generated files, files that are not code and huge files count for less.
pub fn prior(path: &str, language: Option<Language>, size: usize) -> f64 {
    let lower = path.to_ascii_lowercase();
    let mut folders: Vec<&str> = lower.split('/').collect();
    let name = folders.pop().unwrap_or("");
    let stem = name.split('.').next().unwrap_or(name);
    let in_folder = |set: &[&str]| folders.iter().any(|d| set.contains(d));
    let mut p: f64 = 1.0;
    let test_name = stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem == "conftest"
        || stem == "tests"
        || name.contains(".test.")
        || name.contains(".spec.")
        || (name.ends_with(".java") && (stem.ends_with("test") || stem.ends_with("tests")));
    if test_name
        || in_folder(&[
            "test",
            "tests",
            "testing",
            "__tests__",
            "spec",
            "specs",
            "e2e",
            "testdata",
            "test_data",
            "fixtures",
            "fixture",
            "__snapshots__",
            "snapshots",
        ])
    {
        p = p.min(0.3);
    }
    if in_folder(&[
        "doc",
        "docs",
        "documentation",
        "example",
        "examples",
        "sample",
        "samples",
        "demo",
        "demos",
        "bench",
        "benches",
        "benchmarks",
        "asv_bench",
        "tutorial",
        "tutorials",
    ]) {
        p = p.min(0.4);
    }
    if in_folder(&[
        "vendor",
        "vendored",
        "_vendor",
        "third_party",
        "thirdparty",
        "third-party",
        "external",
        "extern",
        "node_modules",
    ]) || name.ends_with(".min.js")
        || stem.ends_with("_pb2")
        || name.ends_with(".pb.go")
        || name.ends_with(".lock")
        || name == "package-lock.json"
    {
        p = p.min(0.3);
    }
    let code = language.is_some_and(|l| {
        !matches!(
            l,
            Language::Markdown | Language::Json | Language::Toml | Language::Yaml
        )
    });
    if !code {
        p = p.min(0.5);
    }
    if size > HUGE_BYTES {
        p = p.min(0.5);
    }
    // A small file is less often where a change lands than a file of substance (and BM25's
    // length normalisation favours it): below SMALL_BYTES, code counts by a root of its size.
    if code && size < SMALL_BYTES {
        p *= (size.max(1) as f64 / SMALL_BYTES as f64).powf(0.2);
    }
    p
}

/// How much a file whose first lines say it is generated counts at most (an amalgamated
/// header, a parser's tables, protobuf's output): a fix changes what generates it.
const GENERATED: f64 = 0.3;
/// What a generated file's first lines say, in lowercase.
const GENERATED_MARKS: &[&str] = &[
    "auto-generated",
    "autogenerated",
    "@generated",
    "do not edit",
    "code generated by",
];

/// [`GENERATED`] where the first three lines of `f` (its `node`; its first 512 bytes, read from the
/// workspace) say it is generated (`/* auto-generated on ... Do not edit! */`, Go's `// Code
/// generated by ... DO NOT EDIT.`); 1 otherwise, for a symlink (its target is read as a file
/// of its own, or not at all, as [`read_text`] reads it), and where it cannot be read.
pub(super) fn generated_prior(
    store: &Store,
    f: &FileEntry,
    node: Option<&merkle_store::NodeRecord>,
) -> f64 {
    use std::io::Read;
    if node.is_none_or(|n| n.kind != NodeKind::File) {
        return 1.0;
    }
    let Ok(file) = std::fs::File::open(store.workspace().join(&f.path)) else {
        return 1.0;
    };
    let mut head = Vec::with_capacity(512);
    if file.take(512).read_to_end(&mut head).is_err() {
        return 1.0;
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let says = head
        .lines()
        .take(3)
        .any(|l| GENERATED_MARKS.iter().any(|m| l.contains(m)));
    if says { GENERATED } else { 1.0 }
}

/// The text of a file as the store has it: none for a symlink, a binary (a NUL in its first
/// 8 KiB), a file over [`MAX_TEXT_BYTES`], or one whose content changed or vanished since the
/// scan. Only a damaged store is an error.
pub(crate) fn read_text(store: &Store, f: &FileEntry) -> Result<Option<String>> {
    let Some(node) = store.node(&f.node_id)? else {
        return Ok(None);
    };
    if node.kind != NodeKind::File || node.size > MAX_TEXT_BYTES {
        return Ok(None);
    }
    let Ok(bytes) = store.read_content(&node) else {
        return Ok(None);
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
