//! The parts of a Cargo manifest that tidy checks: package name, dependencies and features.
//!
//! Dependencies come from `[dependencies]`, `[dev-dependencies]` and `[build-dependencies]` in
//! all their spellings: inline (`foo = { ... }`), dotted (`foo.workspace = true`), table form
//! (`[dependencies.foo]`) and target-specific (`[target.'cfg(unix)'.dependencies]`).

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

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
        let root = DeTable::parse(text).map_err(|e| {
            let line = e.span().map_or(0, |span| line_of(text, span.start));
            anyhow!("line {line}: {}", e.message())
        })?;
        let root = root.get_ref();
        let line = |span: std::ops::Range<usize>| line_of(text, span.start);
        let mut m = Manifest::default();
        if let Some(DeValue::String(name)) = table(root, "package").and_then(|p| value(p, "name")) {
            m.package = Some(name.to_string());
        }
        for (name, enables) in table(root, "features").into_iter().flatten() {
            let list = match enables.get_ref() {
                DeValue::Array(items) => items.iter().filter_map(|v| string(v.get_ref())).collect(),
                _ => Vec::new(),
            };
            m.features
                .push((name.get_ref().to_string(), list, line(name.span())));
        }
        // Dependency tables: top-level, and under each `[target.'cfg(..)']`.
        let mut tables: Vec<&DeTable<'_>> = vec![root];
        tables.extend(
            table(root, "target")
                .into_iter()
                .flatten()
                .filter_map(|(_, t)| match t.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                }),
        );
        for t in tables {
            for (key, deps) in t {
                let Some(kind) = DepKind::from_table(key.get_ref()) else {
                    continue;
                };
                if let DeValue::Table(deps) = deps.get_ref() {
                    for (name, spec) in deps {
                        let dep = m
                            .deps
                            .entry((kind, name.get_ref().to_string()))
                            .or_default();
                        fill(dep, name, spec, line(name.span()));
                    }
                }
            }
        }
        let workspace_deps = table(root, "workspace").and_then(|w| table(w, "dependencies"));
        for (name, spec) in workspace_deps.into_iter().flatten() {
            let dep = m
                .workspace_deps
                .entry(name.get_ref().to_string())
                .or_default();
            fill(dep, name, spec, line(name.span()));
        }
        Ok(m)
    }
}

/// The 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn value<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a DeValue<'i>> {
    t.iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .map(|(_, v)| v.get_ref())
}

fn table<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a DeTable<'i>> {
    match value(t, key) {
        Some(DeValue::Table(t)) => Some(t),
        _ => None,
    }
}

fn string(v: &DeValue<'_>) -> Option<String> {
    match v {
        DeValue::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// Records one dependency as written: a version string, or a table of its attributes.
fn fill(
    dep: &mut Dep,
    name: &Spanned<std::borrow::Cow<'_, str>>,
    spec: &Spanned<DeValue<'_>>,
    line: usize,
) {
    if dep.key.is_empty() {
        dep.key = name.get_ref().to_string();
        dep.line = line;
    }
    let DeValue::Table(attrs) = spec.get_ref() else {
        return;
    };
    if let Some(p) = value(attrs, "package").and_then(string) {
        dep.package = Some(p);
    }
    if let Some(DeValue::Boolean(w)) = value(attrs, "workspace") {
        dep.workspace = *w;
    }
    if let Some(DeValue::Array(items)) = value(attrs, "features") {
        dep.features
            .extend(items.iter().filter_map(|v| string(v.get_ref())));
    }
}
