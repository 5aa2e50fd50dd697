//! The parts of a Cargo manifest that tidy checks: package name, dependencies and features.
//!
//! Dependencies come from `[dependencies]`, `[dev-dependencies]` and `[build-dependencies]` in
//! all their spellings: inline (`foo = { ... }`), dotted (`foo.workspace = true`), table form
//! (`[dependencies.foo]`) and target-specific (`[target.'cfg(unix)'.dependencies]`).

use std::collections::BTreeMap;

use anyhow::Result;

use crate::toml_lite::{self, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DepKind {
    Normal,
    Dev,
    Build,
}

impl DepKind {
    fn from_table(name: &str) -> Option<DepKind> {
        match name {
            "dependencies" => Some(DepKind::Normal),
            "dev-dependencies" | "dev_dependencies" => Some(DepKind::Dev),
            "build-dependencies" | "build_dependencies" => Some(DepKind::Build),
            _ => None,
        }
    }

    /// The table name as it appears in a manifest, for messages.
    pub fn table(self) -> &'static str {
        match self {
            DepKind::Normal => "[dependencies]",
            DepKind::Dev => "[dev-dependencies]",
            DepKind::Build => "[build-dependencies]",
        }
    }
}

/// One dependency as written; `package` is only set when the manifest renames it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dep {
    pub key: String,
    pub package: Option<String>,
    pub workspace: bool,
    pub features: Vec<String>,
    /// The line where the dependency is first named.
    pub line: usize,
}

#[derive(Debug, Default)]
pub struct Manifest {
    pub package: Option<String>,
    /// Keyed by kind, then by the dependency key, so output order is stable.
    pub deps: BTreeMap<(DepKind, String), Dep>,
    /// `[workspace.dependencies]` of a root manifest, by key.
    pub workspace_deps: BTreeMap<String, Dep>,
    /// `[features]`: feature name, what it enables, and its line.
    pub features: Vec<(String, Vec<String>, usize)>,
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest> {
        let mut m = Manifest::default();
        for e in toml_lite::parse(text)? {
            let table: Vec<&str> = e.table.iter().map(String::as_str).collect();
            let key: Vec<&str> = e.key.iter().map(String::as_str).collect();
            match (table.as_slice(), key.as_slice()) {
                (["package"], ["name"]) => m.package = e.value.as_str().map(str::to_owned),
                (["features"], [name]) => {
                    let enables = match &e.value {
                        Value::Array(items) => items
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => Vec::new(),
                    };
                    m.features.push(((*name).to_owned(), enables, e.line));
                }
                _ => {
                    // A dependency table, with the dependency named either by the header
                    // (`[dependencies.foo]`) or by the first key part (`foo.workspace = true`).
                    let rest = match table.as_slice() {
                        ["target", _, rest @ ..] => rest,
                        rest => rest,
                    };
                    let (slot, name, attr) = match (rest, key.as_slice()) {
                        (["workspace", "dependencies"], [name, attr @ ..]) => (None, *name, attr),
                        (["workspace", "dependencies", name], attr) => (None, *name, attr),
                        ([kind], [name, attr @ ..]) => match DepKind::from_table(kind) {
                            Some(kind) => (Some(kind), *name, attr),
                            None => continue,
                        },
                        ([kind, name], attr) => match DepKind::from_table(kind) {
                            Some(kind) => (Some(kind), *name, attr),
                            None => continue,
                        },
                        _ => continue,
                    };
                    let dep = match slot {
                        Some(kind) => m.deps.entry((kind, name.to_owned())).or_default(),
                        None => m.workspace_deps.entry(name.to_owned()).or_default(),
                    };
                    if dep.key.is_empty() {
                        dep.key = name.to_owned();
                        dep.line = e.line;
                    }
                    match (attr, &e.value) {
                        ([], Value::Table(pairs)) => {
                            for (k, v) in pairs {
                                apply(dep, k, v);
                            }
                        }
                        ([k], v) => apply(dep, k, v),
                        _ => {}
                    }
                }
            }
        }
        Ok(m)
    }
}

fn apply(dep: &mut Dep, attr: &str, value: &Value) {
    match (attr, value) {
        ("package", Value::Str(p)) => dep.package = Some(p.clone()),
        ("workspace", Value::Bool(w)) => dep.workspace = *w,
        ("features", Value::Array(items)) => dep
            .features
            .extend(items.iter().filter_map(Value::as_str).map(str::to_owned)),
        _ => {}
    }
}
