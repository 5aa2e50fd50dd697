//! `cargo xtask tidy`: repository rules the compiler cannot see, checked from the files alone.
//!
//! Five rules, each reported as a [`Problem`] naming the file and line at fault:
//!
//! - **Layering.** Every dependency edge between workspace crates (normal, dev and build) must be
//!   listed in the fenced code block with info string `layering` in `ARCHITECTURE.md`, one
//!   `from -> to` per line, `#` starting a comment; `from -> to (dev)` allows the edge in
//!   `[dev-dependencies]` only. The listed edges must name crates under
//!   `crates/` and form a DAG, so the document cannot drift from the code in either direction.
//!   A crate is named by its folder, as ARCHITECTURE.md's codemap names it: `crates/cli` is
//!   `cli` although its package is `merkle` (so that `cargo install` and `cargo uninstall` use
//!   the command's name).
//! - **One owner per heavy dependency.** reqwest only in llm-core, redb and sled only in
//!   merkle-store, clap, tracing-subscriber and indicatif only in cli, rmcp and jsonwebtoken
//!   only in mcp, tree-sitter only in outline, tokio's multi-threaded runtime only in cli, and
//!   no tokio at all in merkle-store, llm-types or governance. Dev-dependencies are exempt: a test
//!   may build a runtime or a client without the library carrying it to its users. xtask is not a
//!   library and may use what it likes.
//! - **No import circles between the top-level modules of a crate** ([`crate::modules`]),
//!   xtask's included.
//! - **Every `.rs` file under `crates/` and `xtask/` starts with a `//!` line** saying what it is
//!   for, and one outside a `tests` folder (libraries and binaries alike) has at most
//!   [`MAX_FILE_LINES`] lines.
//! - **No function outside the tests over [`MAX_FUNCTION_LINES`] lines** ([`crate::functions`]):
//!   files in a `tests` folder, `#[cfg(test)]` items and `#[test]` functions are exempt.
//!
//! Folders named `target`, `fixtures` or starting with `.` are skipped: they hold build output
//! and test data, not code.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::manifest::{Dep, DepKind, Manifest};

/// Heavy dependencies and the only crates that may use them outside dev-dependencies.
const OWNERS: &[(&str, &[&str])] = &[
    ("reqwest", &["llm-core"]),
    ("redb", &["merkle-store"]),
    ("sled", &["merkle-store"]),
    ("clap", &["cli"]),
    ("tracing-subscriber", &["cli"]),
    ("indicatif", &["cli"]),
    ("rmcp", &["mcp"]),
    ("jsonwebtoken", &["mcp"]),
    ("tokio-postgres", &["remote"]),
    ("tree-sitter", &["outline"]),
    ("tantivy", &["retrieve"]),
    ("notify", &["watch"]),
];

/// tokio features that build the multi-threaded runtime, which only the binary may start.
const TOKIO_RUNTIME_FEATURES: &[&str] = &["rt-multi-thread", "full"];
const RUNTIME_OWNER: &str = "cli";

/// Crates that must not reach another through their normal dependencies, directly or not,
/// and what building without it means: the simulator would otherwise build the store, redb
/// and blake3 for a date, and governance for a role; the MCP server would build reqwest and
/// tiktoken for the one document it fetches, which its caller fetches for it.
const UNREACHABLE: &[(&[&str], &str, &str)] = &[
    (
        &[
            "llm-sim",
            "llm-core",
            "llm-types",
            "merkle-hash",
            "governance",
        ],
        "merkle-store",
        "the store (what it needs of it belongs in merkle-hash)",
    ),
    (
        &["mcp"],
        "llm-core",
        "an HTTP client (its caller passes in what it fetches with)",
    ),
];

/// Crates that must not depend on tokio at all: storage, the conversation types and the
/// governance rules know nothing of async.
const NO_ASYNC: &[&str] = &["merkle-store", "llm-types", "governance"];

const ARCHITECTURE: &str = "ARCHITECTURE.md";

/// The most lines a Rust file outside the tests may have: past that it holds more than one
/// job, and a reader can no longer keep it in mind.
pub const MAX_FILE_LINES: usize = 800;

/// The most lines a function outside the tests may have ([`crate::functions`]): past that it
/// does several jobs, which named phases of their own would say.
pub const MAX_FUNCTION_LINES: usize = 120;

/// One broken rule. `file` is relative to the checked root, with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Runs every tidy rule on the workspace at `root` and returns the broken ones, sorted by file.
///
/// An `Err` means the check itself could not run (an unreadable file, a manifest that is not
/// TOML); a broken rule is a [`Problem`], never an `Err`.
pub fn check(root: &Path) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    let workspace = read_manifest(root, "Cargo.toml")?;
    let crates = read_crates(root, &mut problems)?;
    let names: BTreeSet<&str> = crates.iter().map(|c| c.name.as_str()).collect();
    let folders: BTreeMap<&str, &str> = crates
        .iter()
        .map(|c| (c.package.as_str(), c.name.as_str()))
        .collect();

    let allowed = read_layering(root, &names, &mut problems)?;
    for krate in &crates {
        check_crate(krate, &workspace, &folders, &allowed, &mut problems);
    }
    check_unreachable(&crates, &workspace, &folders, &mut problems);
    for krate in &crates {
        check_module_circles(root, &format!("crates/{}", krate.name), &mut problems)?;
    }
    check_module_circles(root, "xtask", &mut problems)?;
    for dir in ["crates", "xtask"] {
        check_rust_files(root, &root.join(dir), &mut problems)?;
    }
    problems.sort();
    Ok(problems)
}

struct Crate {
    /// The folder's name under `crates/`: what the layering block and the owners name.
    name: String,
    /// The package name, what other manifests depend on.
    package: String,
    /// The manifest's path relative to the root, for messages.
    file: String,
    manifest: Manifest,
}

fn read_manifest(root: &Path, rel: &str) -> Result<Manifest> {
    let path = root.join(rel);
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Manifest::parse(&text).with_context(|| format!("parsing {}", path.display()))
}

fn read_crates(root: &Path, problems: &mut Vec<Problem>) -> Result<Vec<Crate>> {
    let dir = root.join("crates");
    let mut crates = Vec::new();
    for entry in sorted_dir(&dir)? {
        if !entry.join("Cargo.toml").is_file() {
            continue;
        }
        let file = format!("{}/Cargo.toml", rel(root, &entry));
        let manifest = read_manifest(root, &file)?;
        let Some(package) = manifest.package.clone() else {
            problems.push(Problem {
                file,
                line: None,
                message: "no `[package]` name".to_owned(),
            });
            continue;
        };
        let name = entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crates.push(Crate {
            name,
            package,
            file,
            manifest,
        });
    }
    Ok(crates)
}

/// The allowed edges `(from, to)`, each with whether it is allowed in dev-dependencies only.
type Allowed = BTreeMap<(String, String), bool>;

/// Reads the allowed edges from ARCHITECTURE.md; problems in the block itself are reported
/// against ARCHITECTURE.md so the fix is made there.
fn read_layering(
    root: &Path,
    names: &BTreeSet<&str>,
    problems: &mut Vec<Problem>,
) -> Result<Allowed> {
    let mut problem = |line, message: String| {
        problems.push(Problem {
            file: ARCHITECTURE.to_owned(),
            line,
            message,
        })
    };
    let text = match fs::read_to_string(root.join(ARCHITECTURE)) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            problem(
                None,
                "missing: it must hold the `layering` block".to_owned(),
            );
            return Ok(Allowed::new());
        }
        Err(e) => return Err(e).context(format!("reading {ARCHITECTURE}")),
    };

    let mut edges: Vec<(String, String, usize)> = Vec::new();
    let mut allowed = Allowed::new();
    let mut blocks = 0;
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            if trimmed.trim_end() == f {
                fence = None;
                continue;
            }
            let body = trimmed.split('#').next().unwrap_or_default().trim();
            if body.is_empty() {
                continue;
            }
            let (body, dev) = match body.strip_suffix("(dev)") {
                Some(edge) => (edge.trim_end(), true),
                None => (body, false),
            };
            match body.split_once("->").map(|(a, b)| (a.trim(), b.trim())) {
                Some((from, to)) if is_name(from) && is_name(to) => {
                    for name in [from, to] {
                        if !names.contains(name) {
                            problem(Some(n), format!("`{name}` is not a crate under crates/"));
                        }
                    }
                    allowed.insert((from.to_owned(), to.to_owned()), dev);
                    edges.push((from.to_owned(), to.to_owned(), n));
                }
                _ => problem(
                    Some(n),
                    format!("expected one edge `from -> to` per line, found `{body}`"),
                ),
            }
            continue;
        }
        for f in ["```", "~~~"] {
            if let Some(info) = trimmed.strip_prefix(f)
                && info.split_whitespace().next() == Some("layering")
            {
                blocks += 1;
                if blocks > 1 {
                    problem(Some(n), "more than one `layering` block".to_owned());
                }
                fence = Some(f);
            }
        }
    }
    if fence.is_some() {
        problem(None, "the `layering` block is not closed".to_owned());
    }
    if blocks == 0 {
        problem(
            None,
            "no ```layering block: list the allowed dependency edges there, one `from -> to` per line"
                .to_owned(),
        );
    }
    if let Some((cycle, line)) = find_cycle(&edges) {
        problem(
            Some(line),
            format!(
                "the allowed edges form a cycle: {}; layering must point down",
                cycle.join(" -> ")
            ),
        );
    }
    Ok(allowed)
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Returns one cycle among the edges, as the crate names along it, with the line of the edge
/// that closes it.
fn find_cycle(edges: &[(String, String, usize)]) -> Option<(Vec<String>, usize)> {
    let mut graph: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
    for (from, to, line) in edges {
        graph.entry(from).or_default().push((to, *line));
    }
    // Depth-first search with an explicit path; a node on the path reached again closes a cycle.
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, Vec<(&'a str, usize)>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<(Vec<String>, usize)> {
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for &(next, line) in graph.get(node).map(Vec::as_slice).unwrap_or_default() {
            if let Some(start) = path.iter().position(|&p| p == next) {
                let mut cycle: Vec<String> =
                    path[start..].iter().map(|s| (*s).to_owned()).collect();
                cycle.push(next.to_owned());
                return Some((cycle, line));
            }
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, &graph, &mut Vec::new(), &mut done))
}

/// The package a dependency resolves to and the features it is built with, following
/// `workspace = true` to the root's `[workspace.dependencies]`.
fn resolve(dep: &Dep, workspace: &Manifest) -> (String, Vec<String>) {
    let inherited = dep
        .workspace
        .then(|| workspace.workspace_deps.get(&dep.key))
        .flatten();
    let package = dep
        .package
        .clone()
        .or_else(|| inherited.and_then(|w| w.package.clone()))
        .unwrap_or_else(|| dep.key.clone());
    let mut features = inherited.map(|w| w.features.clone()).unwrap_or_default();
    features.extend(dep.features.iter().cloned());
    (package, features)
}

fn check_crate(
    krate: &Crate,
    workspace: &Manifest,
    folders: &BTreeMap<&str, &str>,
    allowed: &Allowed,
    problems: &mut Vec<Problem>,
) {
    let name = krate.name.as_str();
    let mut problem = |line, message: String| {
        problems.push(Problem {
            file: krate.file.clone(),
            line: Some(line),
            message,
        })
    };
    // Dependency keys (possibly renamed) to packages, for reading `[features]` entries.
    let mut shipped: BTreeMap<&str, String> = BTreeMap::new();
    for ((kind, key), dep) in &krate.manifest.deps {
        let (package, features) = resolve(dep, workspace);
        let table = kind.table();
        if let Some(&to) = folders.get(package.as_str())
            && to != name
        {
            match allowed.get(&(name.to_owned(), to.to_owned())) {
                None => problem(
                    dep.line,
                    format!(
                        "dependency edge `{name} -> {to}` in {table} is not allowed by the \
                         `layering` block in {ARCHITECTURE}"
                    ),
                ),
                Some(true) if *kind != DepKind::Dev => problem(
                    dep.line,
                    format!(
                        "dependency edge `{name} -> {to}` in {table} is allowed only in \
                         [dev-dependencies] by the `layering` block in {ARCHITECTURE}"
                    ),
                ),
                Some(_) => {}
            }
        }
        if *kind == DepKind::Dev {
            continue;
        }
        shipped.insert(key, package.clone());
        if let Some((_, owners)) = OWNERS.iter().find(|(heavy, _)| *heavy == package)
            && !owners.contains(&name)
        {
            problem(
                dep.line,
                format!(
                    "`{name}` depends on `{package}` in {table}; only {} may (one owner per \
                     heavy dependency)",
                    owners.join(", ")
                ),
            );
        }
        if package == "tokio" {
            if NO_ASYNC.contains(&name) {
                problem(
                    dep.line,
                    format!("`{name}` depends on `tokio` in {table}; it must stay free of async"),
                );
            } else if name != RUNTIME_OWNER
                && let Some(f) = features
                    .iter()
                    .find(|f| TOKIO_RUNTIME_FEATURES.contains(&f.as_str()))
            {
                problem(
                    dep.line,
                    format!(
                        "`{name}` enables tokio's `{f}` feature in {table}; only \
                         {RUNTIME_OWNER} builds the runtime"
                    ),
                );
            }
        }
    }
    if name == RUNTIME_OWNER {
        return;
    }
    for (feature, enables, line) in &krate.manifest.features {
        for item in enables {
            let Some((key, f)) = item.split_once('/') else {
                continue;
            };
            let key = key.trim_end_matches('?');
            if shipped.get(key).map(String::as_str) == Some("tokio")
                && TOKIO_RUNTIME_FEATURES.contains(&f)
            {
                problem(
                    *line,
                    format!(
                        "feature `{feature}` of `{name}` enables tokio's `{f}`; only \
                         {RUNTIME_OWNER} builds the runtime"
                    ),
                );
            }
        }
    }
}

/// The [`UNREACHABLE`] rule: none of those crates reaches the crate it must build without
/// through normal dependencies.
fn check_unreachable(
    crates: &[Crate],
    workspace: &Manifest,
    folders: &BTreeMap<&str, &str>,
    problems: &mut Vec<Problem>,
) {
    let normal_deps = |krate: &Crate| -> Vec<String> {
        krate
            .manifest
            .deps
            .iter()
            .filter(|((kind, _), _)| *kind != DepKind::Dev)
            .filter_map(|(_, dep)| folders.get(resolve(dep, workspace).0.as_str()))
            .map(|to| (*to).to_owned())
            .collect()
    };
    let edges: BTreeMap<&str, Vec<String>> = crates
        .iter()
        .map(|c| (c.name.as_str(), normal_deps(c)))
        .collect();
    let reached = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut next = vec![from.to_owned()];
        while let Some(at) = next.pop() {
            if seen.insert(at.clone()) {
                next.extend(edges.get(at.as_str()).into_iter().flatten().cloned());
            }
        }
        seen
    };
    for krate in crates {
        let reach = reached(&krate.name);
        for (from, to, without) in UNREACHABLE {
            if from.contains(&krate.name.as_str()) && reach.contains(*to) {
                problems.push(Problem {
                    file: krate.file.clone(),
                    line: None,
                    message: format!(
                        "`{}` reaches `{to}` through its dependencies; it must build without {without}",
                        krate.name
                    ),
                });
            }
        }
    }
}

/// The module rule ([`crate::modules`]): no circle among the top-level modules of the crate in
/// folder `dir` (relative to `root`).
fn check_module_circles(root: &Path, dir: &str, problems: &mut Vec<Problem>) -> Result<()> {
    let src = root.join(dir).join("src");
    let name = dir.rsplit('/').next().unwrap_or(dir);
    if !src.is_dir() {
        return Ok(());
    }
    let edges = crate::modules::edges(&src)?;
    let files: BTreeMap<(&str, &str), (&str, usize)> = edges
        .iter()
        .map(|(from, to, file, line)| ((from.as_str(), to.as_str()), (file.as_str(), *line)))
        .collect();
    let graph: Vec<(String, String, usize)> = edges
        .iter()
        .map(|(from, to, _, line)| (from.clone(), to.clone(), *line))
        .collect();
    if let Some((cycle, line)) = find_cycle(&graph) {
        let n = cycle.len();
        let (file, _) = files[&(cycle[n - 2].as_str(), cycle[n - 1].as_str())];
        problems.push(Problem {
            file: format!("{dir}/src/{file}"),
            line: Some(line),
            message: format!(
                "the modules of `{name}` import each other in a circle: {}; move what they share \
                 into a module below both",
                cycle.join(" -> ")
            ),
        });
    }
    Ok(())
}

/// The `//!` rule and, outside `tests` folders, the file length rule.
fn check_rust_files(root: &Path, dir: &Path, problems: &mut Vec<Problem>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for path in sorted_dir(dir)? {
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !(file_name.starts_with('.') || file_name == "target" || file_name == "fixtures") {
                check_rust_files(root, &path, problems)?;
            }
        } else if file_name.ends_with(".rs") {
            let text = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            if !text.starts_with(b"//!") {
                problems.push(Problem {
                    file: rel(root, &path),
                    line: Some(1),
                    message: "a Rust file must start with a `//!` line saying what it is for"
                        .to_owned(),
                });
            }
            let lines = text.split(|&b| b == b'\n').count() - usize::from(text.ends_with(b"\n"));
            let in_tests = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .any(|c| c.as_os_str() == "tests");
            if lines > MAX_FILE_LINES && !in_tests {
                problems.push(Problem {
                    file: rel(root, &path),
                    line: Some(MAX_FILE_LINES + 1),
                    message: format!(
                        "{lines} lines, over the limit of {MAX_FILE_LINES}: split the file by job"
                    ),
                });
            }
            if !in_tests {
                check_functions(&rel(root, &path), &String::from_utf8_lossy(&text), problems);
            }
        }
    }
    Ok(())
}

/// The function rule: no function of the file `file` (holding `text`) outside its test code
/// longer than [`MAX_FUNCTION_LINES`].
fn check_functions(file: &str, text: &str, problems: &mut Vec<Problem>) {
    for f in crate::functions::functions(text) {
        if f.lines > MAX_FUNCTION_LINES {
            problems.push(Problem {
                file: file.to_owned(),
                line: Some(f.line),
                message: format!(
                    "function `{}` has {} lines, over the limit of {MAX_FUNCTION_LINES}: split it \
                     into named phases",
                    f.name, f.lines
                ),
            });
        }
    }
}

fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut entries = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<Vec<_>>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    entries.sort();
    Ok(entries)
}

fn rel(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
