//! `tidy`'s module rule: the top-level modules of a crate import one another along a DAG, with
//! no circle (`a` uses `b`, which uses `a`), so each can be read, tested and moved knowing only
//! what is below it.
//!
//! Read from the source alone, as a reader would: a module's edges are the `crate::NAME` paths
//! in its code (comments and `#[cfg(test)]` parts left out), where NAME is another top-level
//! module, or an item the crate root re-exports from one (`pub use store::{Store, ...}`), and
//! the names of `use crate::{...}` groups. A module's children count as the module.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

/// The modules of the crate whose sources are in `src`, each with the modules it imports and
/// the line of its first import of each (relative file path and line).
pub fn edges(src: &Path) -> Result<Vec<(String, String, String, usize)>> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.is_file());
    let Some(root) = root else {
        return Ok(Vec::new());
    };
    let root_text =
        fs::read_to_string(&root).with_context(|| format!("reading {}", root.display()))?;
    let mut files = Vec::new();
    collect(src, src, &mut files)?;
    let modules: BTreeSet<String> = files.iter().map(|(top, _, _)| top.clone()).collect();
    let reexports = reexports(&root_text, &modules);
    let mut out = Vec::new();
    for (top, rel, text) in &files {
        let mut seen = BTreeSet::new();
        for (number, line) in code_lines(text) {
            for name in crate_names(line) {
                let target = if modules.contains(&name) {
                    Some(name)
                } else {
                    reexports.get(&name).cloned()
                };
                if let Some(target) = target
                    && target != *top
                    && seen.insert(target.clone())
                {
                    out.push((top.clone(), target, rel.clone(), number));
                }
            }
        }
    }
    Ok(out)
}

/// Every `.rs` file below `dir` but the crate root, as (top-level module, path relative to
/// `src`, text).
fn collect(src: &Path, dir: &Path, out: &mut Vec<(String, String, String)>) -> Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(src, &path, out)?;
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel: Vec<String> = path
            .strip_prefix(src)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if rel.len() == 1 && (rel[0] == "lib.rs" || rel[0] == "main.rs") {
            continue;
        }
        let top = rel[0].trim_end_matches(".rs").to_owned();
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        out.push((top, rel.join("/"), text));
    }
    Ok(())
}

/// The lines of `text` that are code, numbered from 1: comments left out, and everything from
/// the first `#[cfg(test)]` on (tests may reach anywhere).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, line)| !line.trim_start().starts_with("#[cfg(test)]"))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(i, line)| (i + 1, line))
}

/// The first names after each `crate::` on a line, and the names of a `crate::{...}` group that
/// opens on it (the first name of each entry).
fn crate_names(line: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or_default();
            names.extend(inner.split(',').filter_map(|entry| ident(entry.trim())));
        } else if let Some(name) = ident(rest) {
            names.push(name);
        }
    }
    names
}

/// The identifier `s` starts with.
fn ident(s: &str) -> Option<String> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| s[..end].to_owned())
}

/// The items the crate root re-exports from its modules: `pub use module::{A, b::C}` and
/// `pub use module::A;`, each name to its module.
fn reexports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = root;
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + "pub use ".len()..];
        let statement = rest.split(';').next().unwrap_or_default();
        let Some(module) = ident(
            statement
                .trim_start_matches("self::")
                .trim_start_matches("crate::"),
        ) else {
            continue;
        };
        if !modules.contains(&module) {
            continue;
        }
        // The last name of every path the statement brings in.
        for part in statement.split([',', '{', '}']) {
            let part = part.trim();
            let name = match part.rsplit_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => part.rsplit("::").next().unwrap_or(part),
            };
            if let Some(name) = ident(name)
                && name != module
            {
                out.insert(name, module.clone());
            }
        }
    }
    out
}
