//! References without a language server: where a definition is, which definitions name it
//! (its callers) and which definitions it calls (its callees), read from tree-sitter's
//! identifiers ([`outline::Parsed::references`]) and resolved by name through the workspace's
//! definitions (the index's `defs`) and the file's imports. What `merkle refs`, the MCP `refs`
//! tool and the agent's `refs` tool answer.
//!
//! A name defined in several files is resolved, for a caller, to the definitions in its own
//! file, else to those in files it imports, else to all (not for a bare Python or Go name,
//! which reaches only its module's or package's and its imports': [`Scope`]; nor, for a call
//! through `.`, to a method a library type's may as well be: [`dotted_targets`]); each caller
//! and callee says among how many definitions it was resolved (`candidates`, 1: certain). What it cannot see: calls
//! through dynamic dispatch (a trait object, a callback, `getattr`), names a macro builds,
//! reflection, and files over 1 MiB (indexed by path and names only).
use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use merkle_store::Store;
use outline::Kind;
use retrieve::TextIndex;

use crate::error::{Error, Result};
use crate::facts::{FactSymbol, FileEntry, FileFacts, TreeFacts};
use crate::graph::{Graph, Relation};
use crate::search::{files_defining, index_dir, read_text, sync_index};

/// A definition, or a definition where a name is used, with the lines that use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub path: String,
    /// The definition's name; `None` for a file's module level (an import, a top-level call).
    pub name: Option<String>,
    pub kind: Option<Kind>,
    /// Its 1-based lines (a module-level site: the lines that use the name).
    pub line_start: usize,
    pub line_end: usize,
    /// The lines where it names the target (callers) or its callee (callees); empty for a
    /// definition.
    pub lines: Vec<usize>,
    /// Among how many definitions of the name this one was resolved (1: certain).
    pub candidates: usize,
}

impl Site {
    /// `{path, name, kind, line_start, line_end, lines, candidates}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "name": self.name,
            "kind": self.kind.map(|k| k.noun()),
            "line_start": self.line_start,
            "line_end": self.line_end,
            "lines": self.lines,
            "candidates": self.candidates,
        })
    }
}

/// A definition's references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refs {
    /// The name looked up.
    pub name: String,
    /// Its definitions in the workspace (the one at `PATH:LINE` when asked so).
    pub definitions: Vec<Site>,
    /// The definitions (or module levels) naming it, by path and line.
    pub callers: Vec<Site>,
    /// The definitions its definitions call, by first use.
    pub callees: Vec<Site>,
}

impl Refs {
    /// `{name, definitions, callers, callees}`, each a list of [`Site::json`].
    pub fn json(&self) -> serde_json::Value {
        let list = |s: &[Site]| s.iter().map(Site::json).collect::<Vec<_>>();
        serde_json::json!({
            "name": self.name,
            "definitions": list(&self.definitions),
            "callers": list(&self.callers),
            "callees": list(&self.callees),
        })
    }
}

/// The references of `target` (a name, `Type::name`, `Class.name`, or `PATH:LINE` for the
/// definition spanning that line) in the tree `facts` describes, the index beside the store
/// brought in step first.
pub fn refs(store: &Store, facts: &TreeFacts, target: &str) -> Result<Refs> {
    let (index, _) = sync_index(store, facts, &index_dir(store))?;
    refs_in(store, facts, &index, target)
}

/// [`refs`] with `index` already in step with `facts`.
pub fn refs_in(store: &Store, facts: &TreeFacts, index: &TextIndex, target: &str) -> Result<Refs> {
    let (name, definitions) = match at_line(store, facts, target)? {
        Some((name, site)) => (name, vec![site]),
        None => {
            let name = target
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(target)
                .trim_end_matches("()")
                .to_owned();
            let defs = definitions_of(store, facts, index, &name)?;
            (name, defs)
        }
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    {
        return Err(Error::NotASymbol {
            target: target.to_owned(),
        });
    }
    let all = definitions_of(store, facts, index, &name)?;
    let graph = Graph::of_tree(store, facts)?;
    let callers = callers(store, facts, index, &name, &definitions, &all, &graph)?;
    let callees = callees(store, facts, index, &definitions, &graph)?;
    Ok(Refs {
        name,
        definitions,
        callers,
        callees,
    })
}

/// `PATH:LINE` read as the innermost definition of the file at `PATH` spanning `LINE`: its
/// name and site; `None` when `target` is not of that form or names no file.
fn at_line(store: &Store, facts: &TreeFacts, target: &str) -> Result<Option<(String, Site)>> {
    let Some((path, line)) = target.rsplit_once(':') else {
        return Ok(None);
    };
    // A workspace path in any spelling (`./src/x.rs`, `src//x.rs`), as every front end names
    // a node.
    let path = &merkle_store::normalize_path(path);
    let (Some(entry), Ok(line)) = (facts.file(path), line.parse::<usize>()) else {
        return Ok(None);
    };
    let ff = facts_one(store, facts, entry)?;
    let Some(s) = innermost(&ff.symbols, line) else {
        return Err(Error::NoDefinitionAt {
            path: path.to_owned(),
            line,
        });
    };
    Ok(Some((s.name.clone(), site_of(path, s, 1))))
}

fn facts_one(store: &Store, facts: &TreeFacts, entry: &FileEntry) -> Result<FileFacts> {
    Ok(facts
        .facts_of(store, &[entry])?
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// The innermost definition of `symbols` spanning `line` (no field or impl block).
fn innermost(symbols: &[FactSymbol], line: usize) -> Option<&FactSymbol> {
    symbols
        .iter()
        .filter(|s| !matches!(s.kind, Kind::Key | Kind::Impl))
        .filter(|s| s.line <= line && line <= s.end_line.max(s.line))
        .min_by_key(|s| (s.end_line.max(s.line) - s.line, std::cmp::Reverse(s.line)))
}

fn site_of(path: &str, s: &FactSymbol, candidates: usize) -> Site {
    Site {
        path: path.to_owned(),
        name: Some(s.name.clone()),
        kind: Some(s.kind),
        line_start: s.line,
        line_end: s.end_line.max(s.line),
        lines: Vec::new(),
        candidates,
    }
}

/// Every definition of `name` in the workspace, by path and line.
fn definitions_of(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    name: &str,
) -> Result<Vec<Site>> {
    let mut out = Vec::new();
    for path in files_defining(index, name)? {
        let Some(entry) = facts.file(&path) else {
            continue;
        };
        for s in facts_one(store, facts, entry)?.symbols.iter() {
            if s.name == name && !matches!(s.kind, Kind::Impl) {
                out.push(site_of(&path, s, 1));
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.line_start).cmp(&(&b.path, b.line_start)));
    Ok(out)
}

/// Where a use of a name looks for its definitions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Its file, else the files it imports, else the whole workspace.
    Workspace,
    /// Its file, else the files it imports, never further: a bare Python name (a module's
    /// names are its own, its imports' and the builtins'; `load(f)`, with `load` a parameter,
    /// calls no `load` of a module the file does not import).
    Module,
    /// Its file's folder, else the files it imports, never further: a bare Go name (a
    /// package is its folder's files; another package's names are written `pkg.Name`).
    Package,
}

/// Where a bare name (not `a.name`) of `language` looks for its definitions.
fn bare_scope(language: outline::Language) -> Scope {
    match language {
        outline::Language::Python => Scope::Module,
        outline::Language::Go => Scope::Package,
        _ => Scope::Workspace,
    }
}

/// Of `all` (the definitions of a name), those a use in `path` resolves to within `scope`.
fn resolve<'a>(path: &str, all: &'a [Site], graph: &Graph, scope: Scope) -> Vec<&'a Site> {
    let folder = |p: &str| p.rsplit_once('/').map_or(0, |(d, _)| d.len());
    let here = &path[..folder(path)];
    let own: Vec<&Site> = all
        .iter()
        .filter(|d| match scope {
            Scope::Package => d.path[..folder(&d.path)] == *here,
            _ => d.path == path,
        })
        .collect();
    if !own.is_empty() {
        return own;
    }
    let anywhere = scope == Scope::Workspace;
    if all.len() <= 1 && anywhere {
        return all.iter().collect();
    }
    let imported: Vec<String> = graph
        .related(path)
        .into_iter()
        .filter(|r| r.relation == Relation::Imports)
        .map(|r| r.path)
        .collect();
    let via: Vec<&Site> = all.iter().filter(|d| imported.contains(&d.path)).collect();
    if via.is_empty() && anywhere {
        all.iter().collect()
    } else {
        via
    }
}

/// The definitions (or module levels) of the workspace naming `name`, where that use resolves
/// to one of `targets`.
fn callers(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    name: &str,
    targets: &[Site],
    all: &[Site],
    graph: &Graph,
) -> Result<Vec<Site>> {
    let token = name.to_lowercase();
    let mut files = index.holding_all(&[token], usize::MAX)?;
    files.sort_unstable();
    // The files whose uses can resolve to a target, with how many definitions they resolve to.
    let mut aimed: Vec<(&FileEntry, outline::Language, usize, bool)> = Vec::new();
    for path in &files {
        let Some(entry) = facts.file(path) else {
            continue;
        };
        let Some(language) = entry.language else {
            continue;
        };
        let aims = |r: &[&Site]| targets.is_empty() || r.iter().any(|d| targets.contains(d));
        let resolved = resolve(path, all, graph, Scope::Workspace);
        if aims(&resolved) {
            // A bare use in a Python or Go file reaches only its own scope and its imports'.
            let scope = bare_scope(language);
            let members_only =
                scope != Scope::Workspace && !aims(&resolve(path, all, graph, scope));
            aimed.push((entry, language, resolved.len(), members_only));
        }
    }
    let entries: Vec<&FileEntry> = aimed.iter().map(|a| a.0).collect();
    let their = facts.facts_of(store, &entries)?;
    // Each file read and parsed on the pool, its sites in line order; files in path order.
    let sites: Vec<Result<Vec<Site>>> = aimed
        .par_iter()
        .zip(their.par_iter())
        .map_init(
            outline::Parser::new,
            |parser, (&(entry, language, n, members_only), ff)| {
                let reach = Reach {
                    candidates: n,
                    members_only,
                };
                uses_in(store, parser, entry, language, ff, name, all, reach)
            },
        )
        .collect();
    let mut out = Vec::new();
    for s in sites {
        out.extend(s?);
    }
    Ok(out)
}

/// How a file's uses of a name reach its definitions: among how many they resolve, and
/// whether only its uses through `.` do (a bare use in a Python or Go file that neither
/// defines nor imports a definition reaches none: [`Scope`]).
#[derive(Clone, Copy)]
struct Reach {
    candidates: usize,
    members_only: bool,
}

/// The uses of `name` in the file `entry` (of `language`, with facts `ff`), each mapped to its
/// innermost definition or to the module level, whose uses resolve to `reach.candidates`
/// definitions; a definition's own name (`all` holds them) is no use of it.
#[allow(clippy::too_many_arguments)]
fn uses_in(
    store: &Store,
    parser: &mut outline::Parser,
    entry: &FileEntry,
    language: outline::Language,
    ff: &FileFacts,
    name: &str,
    all: &[Site],
    reach: Reach,
) -> Result<Vec<Site>> {
    let path = &entry.path;
    let candidates = reach.candidates;
    let Some(text) = read_text(store, entry)? else {
        return Ok(Vec::new());
    };
    let Ok(parsed) = parser.parse(language, &text) else {
        return Ok(Vec::new());
    };
    let declared: Vec<usize> = all
        .iter()
        .filter(|d| d.path == *path)
        .map(|d| d.line_start)
        .collect();
    let mut by_site: BTreeMap<(usize, usize), Site> = BTreeMap::new();
    for r in parsed.references(&[name]) {
        if declared.contains(&r.line) || (reach.members_only && !r.member) {
            continue;
        }
        let site = match innermost(&ff.symbols, r.line) {
            Some(s) => site_of(path, s, candidates),
            None => Site {
                path: path.clone(),
                name: None,
                kind: None,
                line_start: r.line,
                line_end: r.line,
                lines: Vec::new(),
                candidates,
            },
        };
        let key = (site.line_start, site.line_end);
        let e = by_site.entry(key).or_insert(site);
        if !e.lines.contains(&r.line) {
            e.lines.push(r.line);
        }
    }
    Ok(by_site.into_values().collect())
}

/// The definitions `defs` call: each call in their lines resolved by name through the
/// workspace's definitions, in order of first use (a name defined nowhere, a local or a
/// library's, is left out).
fn callees(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    defs: &[Site],
    graph: &Graph,
) -> Result<Vec<Site>> {
    let mut parser = outline::Parser::new();
    let mut out: Vec<Site> = Vec::new();
    // Whether the workspace defines a trait, by name, as asked once.
    let mut traits: HashMap<String, bool> = HashMap::new();
    for d in defs {
        let Some(entry) = facts.file(&d.path) else {
            continue;
        };
        let (Some(language), Some(text)) = (entry.language, read_text(store, entry)?) else {
            continue;
        };
        let Ok(parsed) = parser.parse(language, &text) else {
            continue;
        };
        // A call through `.` in these languages calls a method.
        let methods_only = matches!(
            language,
            outline::Language::Rust | outline::Language::Java | outline::Language::Cpp
        );
        // A bare call in these never calls a method, which needs its receiver (`self.f()`,
        // `this.f()`): `str(x)` in Python is the builtin, not a class's `str` method.
        let bare_not_method = matches!(
            language,
            outline::Language::Python
                | outline::Language::JavaScript
                | outline::Language::TypeScript
                | outline::Language::Tsx
                | outline::Language::Go
        );
        let mut uses: Vec<(String, usize, Aim)> = Vec::new();
        for r in parsed.calls() {
            if r.line >= d.line_start && r.line <= d.line_end {
                let aim = if r.member && methods_only {
                    Aim::Method
                } else if !r.member && bare_not_method {
                    Aim::NotMethod
                } else {
                    Aim::Any
                };
                uses.push((r.name, r.line, aim));
            }
        }
        for (name, line, aim) in uses {
            if d.name.as_deref() == Some(name.as_str()) && line == d.line_start {
                continue;
            }
            if let Some(known) = out
                .iter_mut()
                .find(|s| s.name.as_deref() == Some(name.as_str()))
            {
                if !known.lines.contains(&line) {
                    known.lines.push(line);
                }
                continue;
            }
            let mut all = definitions_of(store, facts, index, &name)?;
            all.retain(|s| s.kind.is_some_and(|k| callable(k) && aim.reaches(k)));
            if matches!(aim, Aim::Method) {
                all = dotted_targets(store, facts, index, language, &d.path, all, &mut traits)?;
            }
            let scope = match aim {
                Aim::NotMethod => bare_scope(language),
                _ => Scope::Workspace,
            };
            let resolved = resolve(&d.path, &all, graph, scope);
            let n = resolved.len();
            for s in resolved {
                let mut s = s.clone();
                s.lines = vec![line];
                s.candidates = n;
                out.push(s);
            }
        }
    }
    // The certain first, then by first use.
    out.sort_by_key(|s| (s.candidates, s.lines.first().copied()));
    Ok(out)
}

/// Of `all` (the workspace's methods of a name that a call through `.` in a file of
/// `language` at `caller` names), those it may call where the receiver's type is not known:
/// not a Rust method implementing a trait the workspace does not define, and in Java not
/// another file's private method, nor any where every one left overrides ([`java_marks`]):
/// such a call is as likely a library type's method. `traits` remembers which trait names the
/// workspace defines.
fn dotted_targets(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    language: outline::Language,
    caller: &str,
    all: Vec<Site>,
    traits: &mut HashMap<String, bool>,
) -> Result<Vec<Site>> {
    let mut kept = Vec::with_capacity(all.len());
    match language {
        outline::Language::Rust => {
            for s in all {
                if !implements_foreign_trait(store, facts, index, &s, traits)? {
                    kept.push(s);
                }
            }
        }
        outline::Language::Java => {
            let mut overriding = true;
            for s in all {
                let (overrides, private) = java_marks(store, facts, &s)?;
                // A private method is its class's own: no other file calls it.
                if !private || s.path == caller {
                    overriding &= overrides;
                    kept.push(s);
                }
            }
            if overriding {
                kept.clear();
            }
        }
        _ => kept = all,
    }
    Ok(kept)
}

/// Whether `site`, a method of a Rust file, implements a trait the workspace does not define
/// (`clone` of `impl Clone for Lookups`, `cmp` of `impl Ord for Candidate`): a call through
/// `.` of its name (`paths.clone()`) reaches every library type's as well, and only the
/// receiver's type, which a compiler knows, tells which.
fn implements_foreign_trait(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    site: &Site,
    traits: &mut HashMap<String, bool>,
) -> Result<bool> {
    let Some(entry) = facts.file(&site.path) else {
        return Ok(false);
    };
    let ff = facts_one(store, facts, entry)?;
    let within = |s: &&FactSymbol| {
        s.kind == Kind::Impl && s.line <= site.line_start && site.line_start <= s.end_line
    };
    let Some(head) = ff
        .symbols
        .iter()
        .filter(within)
        .min_by_key(|s| s.end_line - s.line)
    else {
        return Ok(false);
    };
    let Some(name) = crate::search::impl_trait(&head.signature) else {
        return Ok(false);
    };
    let ours = match traits.get(name) {
        Some(&ours) => ours,
        None => {
            let ours = definitions_of(store, facts, index, name)?
                .iter()
                .any(|d| d.kind == Some(Kind::Trait));
            traits.insert(name.to_owned(), ours);
            ours
        }
    };
    Ok(!ours)
}

/// Whether `site`, a Java method, is marked `@Override`, and whether it is `private`. Where
/// every definition of a name another file can call overrides, the method they override is
/// declared outside the workspace (`Object.toString`, `Runnable.run`): a call through `.` of
/// the name (`parameters.toString()` on a `StringBuilder`) is as likely a library type's, and
/// only the receiver's type tells.
fn java_marks(store: &Store, facts: &TreeFacts, site: &Site) -> Result<(bool, bool)> {
    let Some(entry) = facts.file(&site.path) else {
        return Ok((false, false));
    };
    let Some(text) = read_text(store, entry)? else {
        return Ok((false, false));
    };
    let lines: Vec<&str> = text.lines().collect();
    let at = site.line_start.clamp(1, lines.len().max(1)) - 1;
    let own = lines.get(at).copied().unwrap_or("");
    // Its own line, and the annotations right above it.
    let above: Vec<&str> = lines[..at.min(lines.len())]
        .iter()
        .rev()
        .take_while(|l| l.trim_start().starts_with('@'))
        .copied()
        .collect();
    let has = |l: &str, word: &str| l.split_whitespace().any(|w| w == word);
    let overrides = has(own, "@Override") || above.iter().any(|l| has(l, "@Override"));
    Ok((overrides, has(own, "private")))
}

/// What kinds of definition a call can reach, by how it is written.
#[derive(Clone, Copy)]
enum Aim {
    /// A call through `.` where that calls a method (Rust, Java, C++).
    Method,
    /// A bare call where that never calls a method (Python, JavaScript, TypeScript, Go).
    NotMethod,
    Any,
}

impl Aim {
    fn reaches(self, kind: Kind) -> bool {
        match self {
            Aim::Method => kind == Kind::Method,
            Aim::NotMethod => kind != Kind::Method,
            Aim::Any => true,
        }
    }
}

/// Whether a call can call a definition of this kind: a function, a method, a macro, or a
/// class or struct (a constructor: `Foo(...)`, `new Foo()`).
fn callable(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Function | Kind::Method | Kind::Macro | Kind::Class | Kind::Struct
    )
}
