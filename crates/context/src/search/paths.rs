//! The tree's paths, looked up by what a query says of them: a path or a traceback frame, a
//! dotted module, a file name.
use super::*;

/// The tree's paths, looked up by what a query may say of them.
pub(super) struct PathLookup<'a> {
    paths: Vec<&'a str>,
    /// file name without extension, lowercase -> paths, for the names asked for
    pub(super) stems: HashMap<String, Vec<&'a str>>,
    /// (path without extension (and without a trailing `/__init__`, `/mod`, `/index`), path)
    modules: Vec<(&'a str, &'a str)>,
}

impl<'a> PathLookup<'a> {
    /// The lookup of `facts`' paths, with the file names among `names` (lowercase).
    pub(super) fn new(
        facts: &'a TreeFacts,
        names: &std::collections::HashSet<String>,
    ) -> PathLookup<'a> {
        let mut stems: HashMap<String, Vec<&str>> = HashMap::new();
        let mut modules = Vec::new();
        let mut paths = Vec::with_capacity(facts.files.len());
        let mut lower = String::new();
        for f in &facts.files {
            let p = f.path.as_str();
            paths.push(p);
            if f.language.is_none() {
                continue;
            }
            let name = p.rsplit('/').next().unwrap_or(p);
            let stem = name.split('.').next().unwrap_or(name);
            lower.clear();
            lower.extend(stem.chars().flat_map(char::to_lowercase));
            if names.contains(&lower) {
                stems.entry(lower.clone()).or_default().push(p);
            }
            let no_ext = match p.rfind('.') {
                Some(i) if i > p.rfind('/').map_or(0, |j| j + 1) => &p[..i],
                _ => p,
            };
            let module = ["/__init__", "/mod", "/index"]
                .iter()
                .find_map(|s| no_ext.strip_suffix(s))
                .unwrap_or(no_ext);
            modules.push((module, p));
        }
        PathLookup {
            paths,
            stems,
            modules,
        }
    }

    /// The tree's files that a path from the query names: the tree path is a suffix of it
    /// at a `/` (an absolute path from someone's machine), or it is a suffix of the tree path
    /// (a path given from a folder down); the longest such match wins.
    pub(super) fn by_suffix(&self, path: &str) -> Vec<&'a str> {
        let path = path.trim_start_matches('/');
        let ends_at_slash = |long: &str, short: &str| {
            long.ends_with(short)
                && (long.len() == short.len()
                    || long.as_bytes()[long.len() - short.len() - 1] == b'/')
        };
        let mut best: Vec<&str> = Vec::new();
        let mut best_len = 0;
        for &p in &self.paths {
            let len = if ends_at_slash(path, p) {
                p.len()
            } else if ends_at_slash(p, path) {
                path.len()
            } else {
                continue;
            };
            if len > best_len {
                best_len = len;
                best.clear();
            }
            if len == best_len {
                best.push(p);
            }
        }
        best
    }

    /// The files whose module path ends with `frag` at a folder boundary (nothing dropped).
    pub(super) fn by_module_exact(&self, frag: &str) -> Vec<&'a str> {
        let mut found: Vec<&str> = self
            .modules
            .iter()
            .filter(|(m, _)| {
                m.ends_with(frag)
                    && (m.len() == frag.len() || m.as_bytes()[m.len() - frag.len() - 1] == b'/')
            })
            .map(|(_, p)| *p)
            .collect();
        found.sort_unstable();
        found
    }

    /// The files a dotted module names (as a path fragment): the module itself, or the module
    /// that holds the name after its last dot.
    pub(super) fn by_module(&self, fragment: &str) -> Vec<&'a str> {
        let mut frag = fragment;
        for _ in 0..2 {
            let found = self.by_module_exact(frag);
            if !found.is_empty() {
                return found;
            }
            match frag.rsplit_once('/') {
                Some((head, _)) if head.contains('/') => frag = head,
                _ => break,
            }
        }
        Vec::new()
    }
}
