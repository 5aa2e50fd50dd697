//! The related-files graph: every file's resolved imports and, inverted, its importers, built
//! from the tree's cached facts ([`TreeFacts`]) by [`crate::resolve`].
//!
//! [`Graph::build`] resolves it from the facts (a few hash lookups per specifier, tens of
//! milliseconds for a 15k-file tree); [`Graph::of_tree`] keeps the last one built in the
//! store's derived table beside the tree root it was built for, and builds again only when the
//! root (or the facts' or the graph's format) is not that one: one record, replaced, never a
//! record per tree. A read brings it to a new tree with [`Graph::keep_for_tree`]: where only
//! contents changed, from the kept record with the changed files' imports resolved again.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use merkle_store::Store;
use rayon::prelude::*;

use crate::error::Result;
use crate::facts::{FileEntry, FileFacts, TreeFacts};
use crate::resolve::{self, PathSet};
use outline::Import;

/// How a related file is related.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Relation {
    /// The file imports it.
    Imports,
    /// It imports the file.
    ImportedBy,
}

impl Relation {
    /// Its name in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Imports => "imports",
            Relation::ImportedBy => "imported_by",
        }
    }
}

/// A file related to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub path: String,
    pub relation: Relation,
    /// The line of the import, in the importing file.
    pub line: usize,
    /// The specifier as written there.
    pub specifier: String,
}

impl Related {
    /// The related file as every front end answers it: `{path, relation, line, specifier}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "relation": self.relation.as_str(),
            "line": self.line,
            "specifier": self.specifier,
        })
    }
}

/// The derived-table namespace of the cached graph: bump its version when resolution changes
/// (the facts' version is part of it too); a kept graph is carried from tree to tree by its
/// changed files ([`Graph::updated`]), so without a bump its other edges would keep the old
/// rules.
/// `graph:v2`: script aliases (import maps, `tsconfig.json` paths) resolve.
/// `graph:v3`: the root the graph is of is kept under a key of its own.
/// `graph:v4`: Python's absolute imports never resolve from inside a package.
pub(crate) fn graph_cache() -> String {
    format!("graph:v4:{}", crate::facts::FACTS_VERSION)
}

/// The one key the kept graph is under (its record names its root).
fn cache_key() -> merkle_store::Hash {
    merkle_store::Encoder::new("graph").finish()
}

/// The key of the root the kept graph is of (written with it): told without reading the graph.
fn root_key() -> merkle_store::Hash {
    merkle_store::Encoder::new("graph-root").finish()
}

/// One resolved import: the importer's line and specifier. Paths and specifiers are shared
/// (an edge is in both maps, a path in many edges): a kept graph of a large tree is decoded on
/// every read, and a copy of each would be most of that.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    path: Arc<str>,
    line: usize,
    specifier: Arc<str>,
}

/// Imports and importers of every file of a tree.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    imports: BTreeMap<Arc<str>, Vec<Edge>>,
    imported_by: BTreeMap<Arc<str>, Vec<Edge>>,
}

impl Graph {
    /// The graph of the tree `facts` describes; `go.mod` files are read from `store` for
    /// their module paths, `Cargo.toml` files for their crates' names and roots.
    pub fn build(store: &Store, facts: &TreeFacts) -> Result<Graph> {
        Ok(Graph::resolve(store, facts)?.0)
    }

    /// [`Graph::build`], and whether it is whole: every manifest (`Cargo.toml`, `go.mod`) read
    /// and, for a listing, every file's imports had. A listing's imports are read a bounded
    /// run of files at a time ([`RESOLVE_CHUNK`]), so a large tree's are never all held.
    fn resolve(store: &Store, facts: &TreeFacts) -> Result<(Graph, bool)> {
        Graph::resolve_as(store, facts, true)
    }

    /// [`Graph::resolve`], with `imported_by` left empty unless `both` (what is kept, and
    /// encoded, is `imports` alone: at a million files, the other half of the graph's memory).
    fn resolve_as(store: &Store, facts: &TreeFacts, both: bool) -> Result<(Graph, bool)> {
        let (set, mut whole) = path_set(store, facts)?;
        let mut graph = Graph::default();
        // Each path once, shared by every edge that names it (a file is imported by many).
        let mut interned: HashSet<Arc<str>> = HashSet::new();
        for chunk in facts.files.chunks(RESOLVE_CHUNK) {
            let read = match facts.is_listing() {
                true => Some(facts.imports_of(store, chunk)?),
                false => None,
            };
            let imports = |i: usize| match &read {
                Some(read) => read[i].as_ref().map(|f| f.imports.as_slice()),
                None => Some(chunk[i].facts.imports.as_slice()),
            };
            whole &= (0..chunk.len()).all(|i| imports(i).is_some());
            // Resolution is a few lookups per specifier, but a tree has many: files in parallel.
            let resolved: Vec<(&str, Vec<Resolved>)> = (0..chunk.len())
                .into_par_iter()
                .filter_map(|i| {
                    let f = &chunk[i];
                    let out = resolve_file(&set, &f.path, imports(i)?);
                    (!out.is_empty()).then_some((f.path.as_str(), out))
                })
                .collect();
            for (path, edges) in resolved {
                let path = intern(&mut interned, path);
                for (target, line, specifier) in edges {
                    let target = intern(&mut interned, &target);
                    if both {
                        graph
                            .imported_by
                            .entry(target.clone())
                            .or_default()
                            .push(Edge {
                                path: path.clone(),
                                line,
                                specifier: specifier.clone(),
                            });
                    }
                    graph.imports.entry(path.clone()).or_default().push(Edge {
                        path: target,
                        line,
                        specifier,
                    });
                }
            }
        }
        for edges in graph
            .imports
            .values_mut()
            .chain(graph.imported_by.values_mut())
        {
            one_per_file(edges);
        }
        Ok((graph, whole))
    }

    /// The graph of the current tree (`facts` are its facts): read from the store when the
    /// last one built was for this tree, else built and kept (see the module documentation).
    /// A store opened read-only builds it and keeps nothing.
    pub fn of_tree(store: &Store, facts: &TreeFacts) -> Result<Graph> {
        // Facts of no one scan (a file changed on disk, a scan meanwhile) are not cached.
        let Some(root) = facts.root else {
            return Graph::build(store, facts);
        };
        let key = cache_key();
        // A record that does not read is a miss: it is a cache.
        if let Some(bytes) = store.derived(&graph_cache(), &key).ok().flatten()
            && let Some(rest) = bytes.strip_prefix(root.0.as_slice())
            && let Some(graph) = Graph::decode(rest)
        {
            return Ok(graph);
        }
        let (graph, whole) = Graph::resolve(store, facts)?;
        if whole {
            graph.keep(store, root);
        }
        Ok(graph)
    }

    /// Keeps the graph of the tree of `facts` in the store where it is not kept yet (what a
    /// read of facts brings in step before it reads), building only what is kept: from the
    /// graph kept for the tree before where it can ([`Graph::updated`]), else from every file.
    pub fn keep_for_tree(store: &Store, facts: &TreeFacts) -> Result<Kept> {
        let Some(root) = facts.root else {
            return Ok(Kept::Not);
        };
        let kept = Graph::kept_for(store);
        if kept == Some(root) {
            return Ok(Kept::Already);
        }
        if let Some(old) = kept
            && let Some((record, files)) = Graph::updated(store, facts, old)?
        {
            keep_record(store, root, record);
            return Ok(Kept::Updated { files });
        }
        let (graph, whole) = Graph::resolve_as(store, facts, false)?;
        if !whole {
            return Ok(Kept::Not);
        }
        graph.keep(store, root);
        Ok(Kept::Built)
    }

    /// The graph kept for the tree at `old` brought to the tree of `facts` by resolving again
    /// only the files whose content changed (their imports, as [`Graph::resolve_as`] keeps
    /// them): where both trees hold the same paths and no changed file says how others
    /// resolve (a `Cargo.toml`, a `go.mod`, an import map, a `tsconfig.json`), every other
    /// file's imports resolve as they did. At a million files this is the edit's own cost
    /// and a decode of the record, not every file's imports read and resolved again. `None`
    /// where it cannot be (more than a [`UPDATE_SHARE`]th of the files changed, a path added or
    /// removed, a record that does not read): the caller resolves the whole tree.
    fn updated(
        store: &Store,
        facts: &TreeFacts,
        old: merkle_store::NodeId,
    ) -> Result<Option<(Vec<u8>, usize)>> {
        let Some(root) = facts.root else {
            return Ok(None);
        };
        let limit = (facts.files.len() / UPDATE_SHARE).max(UPDATE_SHARE);
        let Ok(Some(changed)) = store.modified_since(&old, &root, limit) else {
            return Ok(None);
        };
        if changed.iter().any(|p| declares_resolution(p)) {
            return Ok(None);
        }
        let Some(files) = changed
            .iter()
            .map(|p| facts.file(p).cloned())
            .collect::<Option<Vec<FileEntry>>>()
        else {
            return Ok(None);
        };
        let read = match facts.is_listing() {
            true => facts.imports_of(store, &files)?,
            false => files.iter().map(|f| Some(f.facts.clone())).collect(),
        };
        let (set, whole) = path_set(store, facts)?;
        if !whole || read.iter().any(Option::is_none) {
            return Ok(None);
        }
        let read: Vec<FileFacts> = read.into_iter().flatten().collect();
        let resolved: Vec<Vec<Resolved>> = files
            .par_iter()
            .zip(&read)
            .map(|(f, facts)| resolve_file(&set, &f.path, &facts.imports))
            .collect();
        drop(set);
        let lists: Vec<(&str, Vec<Edge>)> = files
            .iter()
            .zip(resolved)
            .map(|(f, edges)| {
                let mut list: Vec<Edge> = edges
                    .into_iter()
                    .map(|(target, line, specifier)| Edge {
                        path: Arc::from(target),
                        line,
                        specifier,
                    })
                    .collect();
                one_per_file(&mut list);
                (f.path.as_str(), list)
            })
            .collect();
        // The record patched as bytes: decoded whole, a large tree's graph was held beside
        // them (at a million files, over the 1 GiB line in a watch).
        let Some(bytes) = store.derived(&graph_cache(), &cache_key()).ok().flatten() else {
            return Ok(None);
        };
        let Some(body) = bytes.strip_prefix(old.0.as_slice()) else {
            return Ok(None);
        };
        let mut record = root.0.to_vec();
        if patch_record(body, &lists, &mut record).is_none() {
            return Ok(None);
        }
        Ok(Some((record, files.len())))
    }

    /// Keeps this graph's record for the tree at `root`; a store that cannot take it
    /// (read-only) builds the graph again next time.
    fn keep(&self, store: &Store, root: merkle_store::NodeId) {
        let mut record = root.0.to_vec();
        self.encode(&mut record);
        keep_record(store, root, record);
    }

    /// The kept graph's record, where it is kept for the tree of `facts`: a reader that asks
    /// of a few files reads their edges from it ([`KeptEdges::neighbours`]) rather than
    /// decoding the whole graph (thousands of paths and edges). `None` where none is kept for
    /// that tree.
    pub fn kept_edges(store: &Store, facts: &TreeFacts) -> Option<KeptEdges> {
        let root = facts.root?;
        let bytes = store.derived(&graph_cache(), &cache_key()).ok()??;
        bytes
            .starts_with(root.0.as_slice())
            .then_some(KeptEdges { bytes })
    }

    /// The tree root the kept graph was built for, if one is kept.
    pub fn kept_for(store: &Store) -> Option<merkle_store::NodeId> {
        let bytes = store.derived(&graph_cache(), &root_key()).ok()??;
        merkle_store::Hash::from_slice(&bytes)
    }

    /// The imports as bytes: the paths once, then (importer, imported, line, specifier) by
    /// path index, little-endian u32 counts and lengths.
    fn encode(&self, out: &mut Vec<u8>) {
        let mut index: BTreeMap<&str, u32> = BTreeMap::new();
        for (from, edges) in &self.imports {
            index.insert(from, 0);
            for e in edges {
                index.insert(&e.path, 0);
            }
        }
        for (i, v) in index.values_mut().enumerate() {
            *v = i as u32;
        }
        put_u32(out, index.len());
        for p in index.keys() {
            put_u32(out, p.len());
            out.extend_from_slice(p.as_bytes());
        }
        let edges: usize = self.imports.values().map(Vec::len).sum();
        put_u32(out, edges);
        for (from, list) in &self.imports {
            for e in list {
                let (from, to) = (index[&**from] as usize, index[&*e.path] as usize);
                put_edge(out, (from, to, e.line, e.specifier.as_bytes()));
            }
        }
    }

    /// What [`Graph::encode`] wrote; `None` for bytes it did not write.
    fn decode(mut bytes: &[u8]) -> Option<Graph> {
        let str_of = |bytes: &mut &[u8]| -> Option<Arc<str>> {
            std::str::from_utf8(bytes_of(bytes)?).ok().map(Arc::from)
        };
        let n = u32_of(&mut bytes)?;
        let paths: Vec<Arc<str>> = (0..n).map(|_| str_of(&mut bytes)).collect::<Option<_>>()?;
        let edges = u32_of(&mut bytes)?;
        let mut graph = Graph::default();
        for _ in 0..edges {
            let (from, to, line, specifier) = edge_of(&mut bytes)?;
            let (from, to) = (paths.get(from)?, paths.get(to)?);
            let specifier: Arc<str> = Arc::from(std::str::from_utf8(specifier).ok()?);
            graph.imported_by.entry(to.clone()).or_default().push(Edge {
                path: from.clone(),
                line,
                specifier: specifier.clone(),
            });
            graph.imports.entry(from.clone()).or_default().push(Edge {
                path: to.clone(),
                line,
                specifier,
            });
        }
        if !bytes.is_empty() {
            return None;
        }
        for edges in graph.imported_by.values_mut() {
            edges.sort();
        }
        Some(graph)
    }

    /// For each of `paths`, the files it imports and those that import it, each by path (a
    /// neighbour [`Graph::related`] lists once per edge, in no order). One file's
    /// neighbours, all of them read once from the record.
    pub fn neighbours(&self, paths: &[&str]) -> Vec<Vec<String>> {
        paths
            .iter()
            .map(|p| self.related(p).into_iter().map(|r| r.path).collect())
            .collect()
    }

    /// The files `path` imports, then the files that import it, each by path.
    pub fn related(&self, path: &str) -> Vec<Related> {
        let out = |relation, edges: Option<&Vec<Edge>>| {
            edges
                .into_iter()
                .flatten()
                .map(move |e| Related {
                    path: e.path.to_string(),
                    relation,
                    line: e.line,
                    specifier: e.specifier.to_string(),
                })
                .collect::<Vec<_>>()
        };
        let mut r = out(Relation::Imports, self.imports.get(path));
        r.extend(out(Relation::ImportedBy, self.imported_by.get(path)));
        r
    }

    /// How many files import each file that any file imports.
    pub fn importer_counts(&self) -> BTreeMap<&str, usize> {
        self.imported_by
            .iter()
            .map(|(p, e)| (&**p, e.len()))
            .collect()
    }
}

/// How [`Graph::keep_for_tree`] kept the graph of a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// It was kept already.
    Already,
    /// From the graph kept for the tree before, these files' imports resolved again.
    Updated { files: usize },
    /// From every file's imports.
    Built,
    /// Not kept: facts of no one scan, or a manifest or a file's imports that could not be
    /// read (a change on disk since the scan).
    Not,
}

/// The kept graph's record ([`Graph::kept_edges`]): its root, then its paths and edges as
/// [`Graph::encode`] wrote them.
pub struct KeptEdges {
    bytes: Vec<u8>,
}

impl KeptEdges {
    /// [`Graph::neighbours`] of the graph the record holds, read from it in one pass: the
    /// paths found by position, the edges run through, nothing built. `None` when it does not
    /// read (a cache: the caller builds the graph).
    pub fn neighbours(&self, paths: &[&str]) -> Option<Vec<Vec<String>>> {
        let mut bytes = self.bytes.get(32..)?;
        let asked: HashMap<&[u8], usize> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_bytes(), i))
            .collect();
        // Each path of the record, and which of `paths` it is.
        let n = u32_of(&mut bytes)?;
        let mut names: Vec<(&[u8], Option<usize>)> = Vec::with_capacity(n.min(bytes.len() / 4));
        for _ in 0..n {
            let name = bytes_of(&mut bytes)?;
            names.push((name, asked.get(name).copied()));
        }
        let mut out = vec![Vec::new(); paths.len()];
        let text = |name: &[u8]| std::str::from_utf8(name).ok().map(str::to_owned);
        for _ in 0..u32_of(&mut bytes)? {
            let (from, to, _line, _specifier) = edge_of(&mut bytes)?;
            let (from, to) = (names.get(from)?, names.get(to)?);
            if let Some(i) = from.1 {
                out[i].push(text(to.0)?);
            }
            if let Some(i) = to.1 {
                out[i].push(text(from.0)?);
            }
        }
        bytes.is_empty().then_some(out)
    }
}

/// A kept graph is brought to a new tree by resolving its changed files again
/// ([`Graph::updated`]) while they are at most this fraction (one in so many) of its files,
/// or at most this many.
const UPDATE_SHARE: usize = 8;

/// Whether the file at `path` says how other files' imports resolve ([`path_set`] reads it).
fn declares_resolution(path: &str) -> bool {
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    name == "Cargo.toml" || name == "go.mod" || resolve::declares_script_aliases(path)
}

/// How many files' imports [`Graph::resolve`] reads and resolves at a time.
const RESOLVE_CHUNK: usize = 65_536;

/// One import resolved: the file it names, the importer's line, the specifier as written.
type Resolved = (String, usize, Arc<str>);

/// The tree's paths indexed for resolution, with the manifests `store` holds declared
/// (`Cargo.toml` crates, `go.mod` modules, script aliases), and whether every one was read.
fn path_set<'a>(store: &Store, facts: &'a TreeFacts) -> Result<(PathSet<'a>, bool)> {
    let mut whole = true;
    let mut set = PathSet::new(facts.files.iter().map(|f| f.path.as_str()));
    for f in &facts.files {
        if !declares_resolution(&f.path) {
            continue;
        }
        let name = f.path.rsplit_once('/').map_or(f.path.as_str(), |(_, n)| n);
        let Some(node) = store.node_at(&f.path)? else {
            continue;
        };
        // A manifest that changed since the scan is read at the next rescan; the graph
        // built without it is not kept.
        let Ok(bytes) = store.read_content(&node) else {
            whole = false;
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        match name {
            "Cargo.toml" => set.add_rust_crate(&f.path, &text),
            "go.mod" => {
                if let Some(module) = resolve::go_module_path(&text) {
                    let folder = f.path.strip_suffix("go.mod").unwrap_or("");
                    set.add_go_module(folder.trim_end_matches('/'), module);
                }
            }
            _ => set.add_script_aliases(&f.path, &text),
        }
    }
    Ok((set, whole))
}

/// The imports of the file at `from`, resolved: one per file it imports, at its first line
/// (a Python file names a module's names one import each).
fn resolve_file(set: &PathSet<'_>, from: &str, imports: &[Import]) -> Vec<Resolved> {
    let mut out: Vec<Resolved> = Vec::new();
    for import in imports {
        let targets = resolve::resolve(set, from, import);
        if targets.is_empty() {
            continue;
        }
        let spec: Arc<str> = match &import.name {
            Some(n) => format!("{} import {n}", import.spec).into(),
            None => import.spec.as_str().into(),
        };
        out.extend(targets.into_iter().map(|t| (t, import.line, spec.clone())));
    }
    out.sort();
    out.dedup_by(|b, a| a.0 == b.0);
    out
}

/// The one shared copy of `path`.
fn intern(interned: &mut HashSet<Arc<str>>, path: &str) -> Arc<str> {
    if let Some(shared) = interned.get(path) {
        return shared.clone();
    }
    let shared: Arc<str> = Arc::from(path);
    interned.insert(shared.clone());
    shared
}

/// Keeps `record` (the root, then what [`Graph::encode`] writes) as the graph of the tree at
/// `root`; a store that cannot take it (read-only) builds the graph again next time.
fn keep_record(store: &Store, root: merkle_store::NodeId, record: Vec<u8>) {
    let _ = store.put_derived(
        &graph_cache(),
        &[(cache_key(), record), (root_key(), root.0.to_vec())],
    );
}

/// Appends to `out` the record [`Graph::encode`] would write for the graph of `body` (what it
/// wrote, without the root) with each of `lists`' files' imports (sorted by path, each list as
/// the graph holds it) in place of its own: its paths table without the paths no edge names any
/// more and with the new ones, each in order; its edges in order of importer. Streamed, nothing
/// decoded; `None` for bytes it did not write.
fn patch_record(mut body: &[u8], lists: &[(&str, Vec<Edge>)], out: &mut Vec<u8>) -> Option<()> {
    let n = u32_of(&mut body)?;
    let mut table: Vec<&[u8]> = Vec::with_capacity(n.min(body.len() / 4));
    for _ in 0..n {
        table.push(bytes_of(&mut body)?);
    }
    let edges = body;
    let changed: HashSet<usize> = lists
        .iter()
        .filter_map(|(p, _)| table.binary_search(&p.as_bytes()).ok())
        .collect();
    // Which old paths an edge kept still names, and how many edges are kept.
    let mut named = vec![false; table.len()];
    let mut kept = 0;
    let mut rest = edges;
    let count = u32_of(&mut rest)?;
    for _ in 0..count {
        let (from, to, _, _) = edge_of(&mut rest)?;
        if !changed.contains(&from) {
            *named.get_mut(from)? = true;
            *named.get_mut(to)? = true;
            kept += 1;
        }
    }
    if !rest.is_empty() {
        return None;
    }
    let mut added: BTreeMap<&[u8], u32> = BTreeMap::new();
    for (from, list) in lists.iter().filter(|(_, l)| !l.is_empty()) {
        added.insert(from.as_bytes(), 0);
        for e in list {
            added.insert(e.path.as_bytes(), 0);
        }
    }
    // The new table, the old paths still named merged in order with the added ones.
    let mut index: Vec<u32> = vec![u32::MAX; table.len()];
    let mut paths: Vec<&[u8]> = Vec::with_capacity(table.len());
    let mut more = added.keys().copied().peekable();
    for (i, p) in table.iter().enumerate() {
        while let Some(a) = more.next_if(|a| a < p) {
            paths.push(a);
        }
        if more.next_if(|a| a == p).is_some() || named[i] {
            index[i] = u32::try_from(paths.len()).ok()?;
            paths.push(p);
        }
    }
    paths.extend(more);
    for (i, p) in paths.iter().enumerate() {
        if let Some(slot) = added.get_mut(p) {
            *slot = u32::try_from(i).ok()?;
        }
    }
    put_u32(out, paths.len());
    for p in &paths {
        put_u32(out, p.len());
        out.extend_from_slice(p);
    }
    let new: usize = lists.iter().map(|(_, l)| l.len()).sum();
    put_u32(out, kept + new);
    // The old edges by importer, each changed file's new ones put in its place.
    let write_list = |out: &mut Vec<u8>, from: &str, list: &[Edge]| {
        for e in list {
            let (from, to) = (added[from.as_bytes()], added[e.path.as_bytes()]);
            put_edge(
                out,
                (from as usize, to as usize, e.line, e.specifier.as_bytes()),
            );
        }
    };
    let mut next = lists.iter().peekable();
    let mut rest = edges;
    u32_of(&mut rest)?;
    for _ in 0..count {
        let (from, to, line, specifier) = edge_of(&mut rest)?;
        while let Some((p, list)) = next.next_if(|(p, _)| p.as_bytes() < table[from]) {
            write_list(out, p, list);
        }
        if changed.contains(&from) {
            continue;
        }
        put_edge(
            out,
            (index[from] as usize, index[to] as usize, line, specifier),
        );
    }
    for (p, list) in next {
        write_list(out, p, list);
    }
    Some(())
}

/// A file's edges as a graph holds them: sorted, one per file (its first import line).
fn one_per_file(edges: &mut Vec<Edge>) {
    edges.sort();
    edges.dedup_by(|b, a| a.path == b.path);
}

/// Appends `n` to a record as [`u32_of`] reads it.
fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

/// Appends an edge to a record as [`edge_of`] reads it: (importer, imported, line, specifier),
/// the paths by their place in the record's table.
fn put_edge(out: &mut Vec<u8>, (from, to, line, specifier): (usize, usize, usize, &[u8])) {
    put_u32(out, from);
    put_u32(out, to);
    put_u32(out, line);
    put_u32(out, specifier.len());
    out.extend_from_slice(specifier);
}

/// An edge of [`Graph::encode`]'s record, read off the front of `bytes`.
fn edge_of<'a>(bytes: &mut &'a [u8]) -> Option<(usize, usize, usize, &'a [u8])> {
    Some((
        u32_of(bytes)?,
        u32_of(bytes)?,
        u32_of(bytes)?,
        bytes_of(bytes)?,
    ))
}

/// A little-endian u32 of [`Graph::encode`]'s record, read off the front of `bytes`.
fn u32_of(bytes: &mut &[u8]) -> Option<usize> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    *bytes = rest;
    Some(u32::from_le_bytes(*head) as usize)
}

/// A length-prefixed run of [`Graph::encode`]'s record (a path, a specifier), read off the
/// front of `bytes`.
fn bytes_of<'a>(bytes: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = u32_of(bytes)?;
    let (head, rest) = bytes.split_at_checked(n)?;
    *bytes = rest;
    Some(head)
}
