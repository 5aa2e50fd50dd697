//! Facts about the current tree's files: each source file's symbols and import specifiers,
//! derived from one parse and cached in the store by content, so that the related-files graph
//! ([`crate::graph`]) and search ([`crate::search`]) are rebuilt from the cache and a rescan
//! parses only the files whose content changed.
//!
//! A file's facts are a function of its bytes and its language, so they are keyed by a hash of
//! ([`FACTS_VERSION`], the language, the content hash) in the store's derived table
//! ([`merkle_store::Store::derived`]): a renamed or reverted file costs nothing, and bumping
//! the version (whenever what is extracted changes) makes every file's facts be derived again.
//! A record that does not decode is derived again and replaced: it is a cache, never the only
//! copy of anything.
//!
//! Facts come from the skimmed parse an outline is made from ([`outline::Parser::skim`]), by
//! one rule (`file_facts`) wherever they are derived: here, for files the cache lacks, and in
//! the offline outline producer, which hands the facts of each file it parses to a
//! [`FactsSink`] that `generate` empties into the cache. After a first offline generation,
//! [`TreeFacts::load`] parses nothing.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use merkle_store::{Hash, NodeKind, Store};
use outline::{Import, ImportKind, Kind, Language};
use rayon::prelude::*;

use crate::error::Result;

/// The version of what facts hold; bump it when the extraction or the encoding changes.
/// `facts:v19`: the braces of a C/C++ `#if` group's first branch counted outside literals
/// and comments alone (a URL's `//` in a string, `1'024`). `facts:v18`: macro statements blanked only where their arguments are no expressions, so
/// that what `EXPECT_EQ(f(x), 1);` calls stays called. `facts:v17`: the search index holds a qualified or specialized C++ definition's bare name
/// too (`element::at_pointer` as `at_pointer`). `facts:v16`: C/C++ macros invoked as statements of their own (`NAME(unsigned char, '\\0');`)
/// and `extern template` read so that the definitions after them stay. `facts:v15`: C/C++ `#if` groups whose first branch opens or closes a block another group
/// holds (`f() {` / `#else` / `f() try {`) read through it, a class head's export macro seen
/// with its base list on the next line, and whole-line member macros with a comment after
/// them blanked. `facts:v14`: C/C++ lower-case attribute macros (`simdjson_inline`), export macros between
/// `class` and its name (`class GTEST_API_ Test {`), conversion operators (`operator bool`),
/// and `#if` groups of alternative heads or within a declaration read through their first
/// branch. `facts:v13`: C/C++ capitals words left as types where they may be (a return type alone above
/// its function, east const, before a calling convention, in comment prose). `facts:v12`: C/C++
/// macros standing for an access specifier (`JSON_PRIVATE_UNLESS_TESTED:`),
/// `try` or `catch` (`JSON_TRY`, `JSON_CATCH(...)`) read as those, so that nlohmann/json's
/// `basic_json` parses as one class. `facts:v11`: C/C++ attribute macros within a declaration's line (`FMT_CONSTEXPR20 void
/// f()`) and alone on a line before any declaration are blanked, so that fmt's classes parse;
/// a friend defined in its class is a definition. `facts:v9`: a C/C++ function behind an
/// attribute macro before its return type (`FMT_API uint128_fallback get_cached_power(int)`)
/// is named by its own name, not the type's with it; an annotated Java package by its name.
/// `facts:v8`: a C/C++ attribute macro alone on the line before a type or a template
/// (`NLOHMANN_BASIC_JSON_TPL_DECLARATION` + `class basic_json`) no longer hides the type.
/// `facts:v7`: JavaScript's and TypeScript's functions bound by assignment (`app.render =
/// function ...`) and held by object properties; Rust functions inside a macro's block. `facts:v6`: a C/C++ macro invocation the grammar reads as a function without parameters is
/// no function. `facts:v4`: each symbol's last line too (`facts:v3` had its first line only),
/// so a search names the lines of a definition. `facts:v3`: from the skimmed parse, with the
/// imports inside skipped bodies read by hand, and with enum variants and type fields among
/// the symbols.
pub const FACTS_VERSION: &str = "facts:v19";

/// The store namespace facts are kept under.
const NAMESPACE: &str = "facts";

/// Files larger than this are not parsed for facts: they are found by path only. A bundle of
/// several MiB (`typescript.js`, `lib.dom.d.ts`) still is: the offline outline parses it anyway
/// (skimmed, its function bodies skipped), and its definitions are what a search for one of
/// them should land on.
pub const MAX_PARSE_BYTES: u64 = 16 << 20;

/// One definition, flattened out of its outline's nesting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactSymbol {
    pub name: String,
    pub kind: Kind,
    /// 1-based line of its name.
    pub line: usize,
    /// 1-based line it ends on.
    pub end_line: usize,
    /// Its declaration on one line.
    pub signature: String,
}

/// What one file's content says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileFacts {
    pub symbols: Vec<FactSymbol>,
    pub imports: Vec<Import>,
}

/// A file of the current tree and its facts (empty for a file without a parsed language).
#[derive(Clone, Debug)]
pub struct FileEntry {
    pub path: String,
    pub node_id: merkle_store::NodeId,
    pub language: Option<Language>,
    pub content_hash: Hash,
    pub facts: FileFacts,
}

/// The facts of every file of the current tree, in path order; or, from
/// [`TreeFacts::listing`], the files alone, each one's facts read when asked for
/// ([`TreeFacts::facts_of`]).
#[derive(Clone, Debug, Default)]
pub struct TreeFacts {
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    /// How many files were parsed now, their facts missing from the cache.
    pub derived: usize,
    /// The root of the scan these are the facts of, when every file's facts were had (none
    /// changed on disk since) and no scan landed while they were read: what data derived
    /// from all of them may be kept under ([`crate::Graph::of_tree`]). For a listing, the
    /// root it was listed from when no scan landed meanwhile.
    pub root: Option<merkle_store::NodeId>,
    /// What of each file's facts `files` holds.
    part: Part,
    /// Whether facts derived now are kept in the store's cache.
    keep: bool,
    /// Each path's position in `files`, by the path's hash, made once the lookups have been
    /// many ([`Lookups`]): a search looks up every file an index hit names (thousands for a
    /// common word), and a binary search compares long shared prefixes at each of its steps. A
    /// position is taken only when the file there has the path asked for; anything else is
    /// searched for, so the table is never the authority.
    by_path: std::sync::OnceLock<HashMap<u64, u32, rustc_hash::FxBuildHasher>>,
    /// The lookups made by binary search so far.
    lookups: Lookups,
}

/// How many lookups [`TreeFacts::position`] has made by binary search. A table of every path
/// costs about one hash a file, a binary search about 20 comparisons of long paths: the table
/// is made once the lookups reach a thirty-second of the files (at a million files, hashing
/// every path was a tenth of a search that looked up a few thousand).
#[derive(Debug, Default)]
struct Lookups(std::sync::atomic::AtomicUsize);

impl Clone for Lookups {
    fn clone(&self) -> Lookups {
        Lookups(std::sync::atomic::AtomicUsize::new(
            self.0.load(std::sync::atomic::Ordering::Relaxed),
        ))
    }
}

/// The hash [`TreeFacts`] finds a path's position by.
fn path_hash(path: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(path)
}

impl TreeFacts {
    /// The facts of every file of the store's current tree: read from the cache, derived (in
    /// parallel) and cached for the files whose content has none. Files that changed on disk
    /// since the scan are left without facts (a rescan first avoids that).
    pub fn load(store: &Store) -> Result<TreeFacts> {
        TreeFacts::build(store, true, Part::All)
    }

    /// As [`TreeFacts::load`], for a store opened read-only: facts missing from the cache are
    /// derived for this call and not kept.
    pub fn read(store: &Store) -> Result<TreeFacts> {
        TreeFacts::build(store, false, Part::All)
    }

    /// The files of the store's current tree with their facts left empty, for a reader that
    /// needs the facts of a few of them ([`TreeFacts::facts_of`]): on a 15k-file tree, reading
    /// every file's record is most of a search's time.
    pub fn listing(store: &Store) -> Result<TreeFacts> {
        TreeFacts::build(store, true, Part::None)
    }

    /// Whether each file's facts are empty until asked for ([`TreeFacts::listing`]).
    pub fn is_listing(&self) -> bool {
        self.part == Part::None
    }

    fn build(store: &Store, keep: bool, part: Part) -> Result<TreeFacts> {
        // A read-only handle cannot keep what it derives.
        let keep = keep && !store.is_read_only();
        // The root the listing is of: read around it, so a scan landing in between leaves none.
        let before = store.root()?;
        // Each file made into its entry as it is read: a million files' entries are held once.
        let mut files: Vec<FileEntry> = store.tree_files_as(|f| FileEntry {
            language: (f.kind == NodeKind::File)
                .then(|| Language::from_path(&f.path))
                .flatten()
                .filter(|l| parsed(*l)),
            path: f.path,
            node_id: f.node_id,
            content_hash: f.content_hash,
            facts: FileFacts::default(),
        })?;
        let root = before.filter(|r| store.root().ok().flatten() == Some(*r));
        let mut derived = 0;
        let mut complete = true;
        if part != Part::None {
            let all: Vec<&FileEntry> = files.iter().collect();
            let read = read_facts(store, &all, part, keep)?;
            derived = read.derived;
            for (f, facts) in files.iter_mut().zip(read.facts) {
                match facts {
                    Some(facts) => f.facts = facts,
                    None => complete = false,
                }
            }
        }
        // The store lists its tree in path order; `file` looks paths up in that order.
        if !files.is_sorted_by(|a, b| a.path <= b.path) {
            files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        }
        Ok(TreeFacts {
            files,
            derived,
            root: root.filter(|_| complete),
            part,
            keep,
            by_path: std::sync::OnceLock::new(),
            lookups: Lookups::default(),
        })
    }

    /// The facts of `files`, entries of this tree: as held, or for a listing read from the
    /// cache and derived (in parallel, kept in one commit) where the cache has none. A file
    /// that changed on disk since the scan has none.
    pub fn facts_of(&self, store: &Store, files: &[&FileEntry]) -> Result<Vec<FileFacts>> {
        if self.part == Part::All {
            return Ok(files.iter().map(|f| f.facts.clone()).collect());
        }
        let read = read_facts(store, files, Part::All, self.keep)?;
        Ok(read
            .facts
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect())
    }

    /// The imports of `files` (their symbols left empty), entries of this tree, read from the
    /// cache and derived where it has none, as [`TreeFacts::facts_of`] reads a listing's;
    /// `None` for a file that changed on disk since the scan. What the import graph reads of
    /// a listing, a bounded run of files at a time.
    pub(crate) fn imports_of(
        &self,
        store: &Store,
        files: &[FileEntry],
    ) -> Result<Vec<Option<FileFacts>>> {
        let files: Vec<&FileEntry> = files.iter().collect();
        Ok(read_facts(store, &files, Part::Imports, self.keep)?.facts)
    }

    /// The position in `files` of the file at `path`.
    pub fn position(&self, path: &str) -> Option<usize> {
        let searched = || {
            self.files
                .binary_search_by(|f| f.path.as_str().cmp(path))
                .ok()
        };
        if self.by_path.get().is_none() {
            let made = self
                .lookups
                .0
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if made < self.files.len() / 32 {
                return searched();
            }
        }
        if let Some(&i) = self.path_table().get(&path_hash(path))
            && self.files.get(i as usize).is_some_and(|f| f.path == path)
        {
            return Some(i as usize);
        }
        searched()
    }

    /// Each path's position by its hash, made on first use ([`TreeFacts::position`] makes
    /// it once its lookups are many; a process that keeps the listing for many searches makes
    /// it ahead of them).
    pub fn path_table(&self) -> &HashMap<u64, u32, rustc_hash::FxBuildHasher> {
        self.by_path.get_or_init(|| {
            let mut table = HashMap::with_capacity_and_hasher(self.files.len(), Default::default());
            for (i, f) in self.files.iter().enumerate() {
                if let Ok(i) = u32::try_from(i) {
                    table.entry(path_hash(&f.path)).or_insert(i);
                }
            }
            table
        })
    }

    /// The entry of the file at `path`.
    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.position(path).map(|i| &self.files[i])
    }

    /// Whether the tree has a file at `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.position(path).is_some()
    }
}

/// What [`read_facts`] found.
struct Read {
    /// Each file's facts, `None` where it changed on disk since the scan.
    facts: Vec<Option<FileFacts>>,
    /// How many were derived now.
    derived: usize,
}

/// The facts (`part` of them) of `files`: each one's cached record read and decoded on the
/// pool, and those missing or damaged derived (in parallel) and, with `keep`, cached in one
/// commit.
fn read_facts(store: &Store, files: &[&FileEntry], part: Part, keep: bool) -> Result<Read> {
    let cached = |f: &&FileEntry| -> Result<Option<FileFacts>> {
        Ok(match f.language {
            Some(lang) => store
                .derived(NAMESPACE, &facts_key(lang, &f.content_hash))?
                .and_then(|bytes| decode(&bytes, part)),
            None => Some(FileFacts::default()),
        })
    };
    // A few records are read here: the pool may be busy with a rescan running beside.
    let mut facts: Vec<Option<FileFacts>> = if files.len() < 256 {
        files.iter().map(cached).collect::<Result<_>>()?
    } else {
        files.par_iter().map(cached).collect::<Result<_>>()?
    };
    let missing: Vec<usize> = (0..files.len()).filter(|&i| facts[i].is_none()).collect();
    let derived: Vec<(usize, Option<FileFacts>)> = missing
        .par_iter()
        .map_init(outline::Parser::new, |parser, &i| {
            let f = files[i];
            let lang = f
                .language
                .expect("only files with a language are missing facts");
            (i, derive(store, parser, &f.node_id, lang))
        })
        .collect();
    let mut records = Vec::new();
    let count = derived.len();
    for (i, found) in derived {
        let f = files[i];
        if let (Some(mut found), Some(lang)) = (found, f.language) {
            records.push((facts_key(lang, &f.content_hash), encode(&found)));
            if part == Part::Imports {
                found.symbols = Vec::new();
            }
            facts[i] = Some(found);
        }
    }
    if keep && !records.is_empty() {
        store.put_derived_shared(NAMESPACE, &records)?;
    }
    Ok(Read {
        facts,
        derived: count,
    })
}

/// Facts derived beside another reading of the same files (the offline outline producer's
/// parse), waiting to be kept in the store's cache under the key [`TreeFacts::load`] looks
/// up. Clones share what is recorded.
#[derive(Clone, Debug, Default)]
pub struct FactsSink {
    /// (key, encoded facts) records.
    records: Arc<Mutex<Vec<Record>>>,
}

type Record = (Hash, Vec<u8>);

impl FactsSink {
    /// Records the facts of content `content` read as `language`, when facts are kept for
    /// that language.
    pub(crate) fn record(&self, language: Language, content: &Hash, facts: &FileFacts) {
        if !parsed(language) {
            return;
        }
        let record = (facts_key(language, content), encode(facts));
        // A thread that panicked holding the lock loses the records, which are a cache.
        if let Ok(mut records) = self.records.lock() {
            records.push(record);
        }
    }

    /// Puts what was recorded since the last call into the store's cache, in one commit;
    /// returns how many files' facts that was.
    pub fn keep(&self, store: &Store) -> Result<usize> {
        let records = match self.records.lock() {
            Ok(mut records) => std::mem::take(&mut *records),
            Err(_) => return Ok(0),
        };
        store.put_derived_shared(NAMESPACE, &records)?;
        Ok(records.len())
    }
}

/// What a file says about itself, from the skimmed parse of its `size` bytes (`None` where
/// the content is not text or did not parse) and the outline of that parse: the one rule for
/// facts, whoever parses. A file over [`MAX_PARSE_BYTES`] has none.
pub(crate) fn file_facts(
    size: usize,
    parsed: Option<(&outline::Parsed<'_>, &outline::Outline)>,
) -> FileFacts {
    match parsed {
        Some((parsed, outline)) if size as u64 <= MAX_PARSE_BYTES => {
            let mut symbols = Vec::new();
            flatten(&outline.symbols, &mut symbols);
            // What the outline leaves out but a search should find: variants and fields.
            flatten(&parsed.members(), &mut symbols);
            FileFacts {
                symbols,
                imports: parsed.imports(),
            }
        }
        _ => FileFacts::default(),
    }
}

/// Whether facts are derived for files of `language`: source languages and Markdown (its
/// headings are searchable), not the keys of data files.
pub(crate) fn parsed(language: Language) -> bool {
    !matches!(language, Language::Json | Language::Toml | Language::Yaml)
}

/// The keys of the facts of the current tree's parsed files: the facts records a collection
/// keeps (`merkle gc`); every other is of content no file has now, or of an older format.
pub(crate) fn current_keys(store: &Store) -> Result<std::collections::HashSet<Hash>> {
    Ok(store
        .tree_files()?
        .into_iter()
        .filter(|f| f.kind == NodeKind::File)
        .filter_map(|f| {
            let language = Language::from_path(&f.path).filter(|l| parsed(*l))?;
            Some(facts_key(language, &f.content_hash))
        })
        .collect())
}

/// Whether `namespace` is the one facts are kept under.
pub(crate) fn is_facts(namespace: &str) -> bool {
    namespace == NAMESPACE
}

fn facts_key(language: Language, content: &Hash) -> Hash {
    let mut input = Vec::with_capacity(64);
    input.extend_from_slice(FACTS_VERSION.as_bytes());
    input.push(0);
    input.extend_from_slice(language.name().as_bytes());
    input.push(0);
    input.extend_from_slice(&content.0);
    merkle_store::hash::content_hash(&input)
}

/// A file's facts from its content, or `None` when it could not be read as scanned.
fn derive(
    store: &Store,
    parser: &mut outline::Parser,
    node_id: &merkle_store::NodeId,
    lang: Language,
) -> Option<FileFacts> {
    let node = store.node(node_id).ok()??;
    if node.size > MAX_PARSE_BYTES {
        return Some(FileFacts::default());
    }
    let bytes = store.read_content(&node).ok()?;
    let Ok(source) = std::str::from_utf8(&bytes) else {
        return Some(FileFacts::default());
    };
    let Ok(parsed) = parser.skim(lang, source) else {
        return Some(FileFacts::default());
    };
    Some(file_facts(bytes.len(), Some((&parsed, &parsed.outline()))))
}

fn flatten(symbols: &[outline::Symbol], out: &mut Vec<FactSymbol>) {
    for s in symbols {
        out.push(FactSymbol {
            name: s.name.clone(),
            kind: s.kind,
            line: s.line,
            end_line: s.end_line.max(s.line),
            signature: s.signature.clone(),
        });
        flatten(&s.children, out);
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The record: counts and length-prefixed strings, little-endian u32s.
fn encode(f: &FileFacts) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(f.symbols.len() as u32).to_le_bytes());
    for s in &f.symbols {
        put_str(&mut out, &s.name);
        put_str(&mut out, s.kind.noun());
        out.extend_from_slice(&(s.line as u32).to_le_bytes());
        out.extend_from_slice(&(s.end_line as u32).to_le_bytes());
        put_str(&mut out, &s.signature);
    }
    out.extend_from_slice(&(f.imports.len() as u32).to_le_bytes());
    for i in &f.imports {
        put_str(&mut out, i.kind.as_str());
        put_str(&mut out, &i.spec);
        put_str(&mut out, i.name.as_deref().unwrap_or(""));
        out.extend_from_slice(&(i.line as u32).to_le_bytes());
    }
    out
}

/// A bounds-checked reader of [`encode`]'s records.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_at_checked(4)?;
        self.0 = rest;
        Some(u32::from_le_bytes(head.try_into().ok()?))
    }
    fn str(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.u32()?).ok()?;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        std::str::from_utf8(head).ok()
    }
    fn count(&mut self) -> Option<usize> {
        // Each item takes at least 4 bytes: a count beyond that is damage, not a big file.
        let n = usize::try_from(self.u32()?).ok()?;
        (n <= self.0.len() / 4).then_some(n)
    }
}

/// What of a file's facts is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Part {
    #[default]
    All,
    /// The imports; the symbols are checked and skipped.
    Imports,
    /// Nothing: a listing.
    None,
}

fn decode(bytes: &[u8], part: Part) -> Option<FileFacts> {
    let mut r = Reader(bytes);
    let n = r.count()?;
    let mut symbols = Vec::with_capacity(if part == Part::All { n } else { 0 });
    for _ in 0..n {
        let name = r.str()?;
        let kind = Kind::from_noun(r.str()?)?;
        let line = r.u32()? as usize;
        let end_line = r.u32()? as usize;
        let signature = r.str()?;
        if part == Part::All {
            symbols.push(FactSymbol {
                name: name.to_owned(),
                kind,
                line,
                end_line,
                signature: signature.to_owned(),
            });
        }
    }
    let n = r.count()?;
    let mut imports = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = ImportKind::parse(r.str()?)?;
        let spec = r.str()?.to_owned();
        let name = r.str()?;
        let line = r.u32()? as usize;
        imports.push(Import {
            kind,
            spec,
            name: (!name.is_empty()).then(|| name.to_owned()),
            line,
        });
    }
    r.0.is_empty().then_some(FileFacts { symbols, imports })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_found_by_search_and_then_by_table_alike() {
        let entry = |path: String| FileEntry {
            node_id: merkle_store::hash::content_hash(path.as_bytes()),
            content_hash: merkle_store::hash::content_hash(b""),
            path,
            language: None,
            facts: FileFacts::default(),
        };
        let files: Vec<FileEntry> = (0..100).map(|i| entry(format!("src/m{i:03}.rs"))).collect();
        let facts = TreeFacts {
            files,
            ..TreeFacts::default()
        };
        // 100 files: the first three lookups search, the table is made at the fourth.
        for round in 0..2 {
            for i in 0..100 {
                let path = format!("src/m{i:03}.rs");
                assert_eq!(facts.position(&path), Some(i), "{path}, round {round}");
            }
            assert_eq!(facts.position("src/m100.rs"), None);
            assert_eq!(facts.position(""), None);
        }
        assert!(facts.by_path.get().is_some());
    }

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let f = FileFacts {
            symbols: vec![FactSymbol {
                name: "Store".into(),
                kind: Kind::Struct,
                line: 3,
                end_line: 5,
                signature: "pub struct Store".into(),
            }],
            imports: vec![Import {
                kind: ImportKind::PythonFrom,
                spec: "..x".into(),
                name: Some("y".into()),
                line: 1,
            }],
        };
        let bytes = encode(&f);
        assert_eq!(decode(&bytes, Part::All), Some(f.clone()));
        let imports = FileFacts {
            symbols: Vec::new(),
            imports: f.imports,
        };
        assert_eq!(decode(&bytes, Part::Imports), Some(imports));
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut], Part::All), None, "cut at {cut}");
            assert_eq!(decode(&bytes[..cut], Part::Imports), None, "cut at {cut}");
        }
    }
}
