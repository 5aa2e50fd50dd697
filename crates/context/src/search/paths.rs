//! The tree's paths, looked up by what a query says of them: a path or a traceback frame, a
//! dotted module, a file name.
use super::*;

/// The tree's paths, looked up by what a query may say of them. What only some queries ask
/// for is made when first asked: at a million files, path signals were a tenth of a search
/// beside a watch; a module path is made only when one is looked up.
pub(super) struct PathLookup<'a> {
    facts: &'a TreeFacts,
    /// file name without extension, lowercase -> paths, for the names asked for (a dunder
    /// such as `__init__` names no file)
    pub(super) stems: HashMap<String, Vec<&'a str>>,
    /// (path without extension (and without a trailing `/__init__`, `/mod`, `/index`), path)
    modules: std::cell::OnceCell<Vec<(&'a str, &'a str)>>,
}

impl<'a> PathLookup<'a> {
    /// The lookup of `facts`' paths, with the file names among `names` (lowercase).
    pub(super) fn new(
        facts: &'a TreeFacts,
        names: &std::collections::HashSet<String>,
    ) -> PathLookup<'a> {
        let mut stems: HashMap<String, Vec<&str>> = HashMap::new();
        // A stem of another length is none of the names (an ASCII stem keeps its length in
        // lowercase; any other is lowercased to be sure).
        let lengths: std::collections::HashSet<usize> = names.iter().map(String::len).collect();
        let mut lower = String::new();
        for f in facts.files.iter().filter(|f| f.language.is_some()) {
            let p = f.path.as_str();
            let name = p.rsplit('/').next().unwrap_or(p);
            let stem = name.split('.').next().unwrap_or(name);
            // A dunder (`__init__`) a task writes is a method of every class; `__init__.py`
            // and `__main__.py` are named by their package (dev: sphinx-10451's
            // `typehints.py` no longer behind autodoc's `__init__.py` for a task that pastes
            // an `__init__`: any@10 +1).
            let dunder = stem.len() > 4 && stem.starts_with("__") && stem.ends_with("__");
            if dunder || (stem.is_ascii() && !lengths.contains(&stem.len())) {
                continue;
            }
            lower.clear();
            lower.extend(stem.chars().flat_map(char::to_lowercase));
            if names.contains(&lower) {
                stems.entry(lower.clone()).or_default().push(p);
            }
        }
        PathLookup {
            facts,
            stems,
            modules: std::cell::OnceCell::new(),
        }
    }

    /// The module path of every file with a language, made when first asked for.
    fn modules(&self) -> &[(&'a str, &'a str)] {
        self.modules.get_or_init(|| {
            self.facts
                .files
                .iter()
                .filter(|f| f.language.is_some())
                .map(|f| {
                    let p = f.path.as_str();
                    let no_ext = match p.rfind('.') {
                        Some(i) if i > p.rfind('/').map_or(0, |j| j + 1) => &p[..i],
                        _ => p,
                    };
                    let module = ["/__init__", "/mod", "/index"]
                        .iter()
                        .find_map(|s| no_ext.strip_suffix(s))
                        .unwrap_or(no_ext);
                    (module, p)
                })
                .collect()
        })
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
        for p in self.facts.files.iter().map(|f| f.path.as_str()) {
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
            .modules()
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
            let mut found = self.by_module_exact(frag);
            if !found.is_empty() {
                found.extend(self.namesakes(&found));
                return found;
            }
            match frag.rsplit_once('/') {
                Some((head, _)) if head.contains('/') => frag = head,
                _ => break,
            }
        }
        Vec::new()
    }

    /// The module of each package among `found` (an `__init__.py`, a `mod.rs`, an
    /// `index.ts`) that bears the package's name (`pretty/pretty.py`, `wcs/wcs.py`): where
    /// a package keeps its code when its own file only gathers what it exports. A dotted
    /// name's weight is shared among all the files it names. On the dev set: line recall at
    /// 8k tokens 73.3 -> 74.1% (sympy-20639's "in printing.pretty"), every other figure the
    /// same; no held-out or Multi-SWE-bench task names a package so.
    fn namesakes(&self, found: &[&'a str]) -> Vec<&'a str> {
        let is_package = |p: &str| {
            let name = p.rsplit('/').next().unwrap_or(p);
            ["__init__", "mod", "index"].contains(&name.split('.').next().unwrap_or(name))
        };
        let wanted: Vec<String> = self
            .modules()
            .iter()
            .filter(|(_, p)| is_package(p) && found.contains(p))
            .map(|(m, _)| format!("{m}/{}", m.rsplit('/').next().unwrap_or(m)))
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        self.modules()
            .iter()
            .filter(|(m, p)| wanted.iter().any(|w| w == m) && !found.contains(p))
            .map(|(_, p)| *p)
            .collect()
    }
}

/// The path signals: the files the query points at by path or traceback frame, by dotted
/// module, by a snake_case name spelling a module path, by a code identifier or a word naming
/// the file.
pub(super) fn path_signals<'f>(
    facts: &'f TreeFacts,
    q: &TaskQuery,
    idents: &[(String, usize)],
    words: &[(String, f32)],
    scores: &mut Scores<'f>,
) {
    // The file names worth looking up: code identifiers of three letters or more and words of
    // four or more (see below).
    let names: std::collections::HashSet<String> = idents
        .iter()
        .map(|(id, _)| id.to_lowercase())
        .filter(|id| id.len() >= 3)
        .chain(
            words
                .iter()
                .filter(|(w, _)| w.len() >= 4)
                .map(|(w, _)| w.clone()),
        )
        .collect();
    let lookup = PathLookup::new(facts, &names);
    // A path with a line is a traceback frame or a compiler's message: the later ones are
    // nearer where the error was raised. A bare file name says less than a path.
    let framed = q.paths.iter().filter(|r| r.line.is_some()).count();
    let mut frame = 0;
    for r in &q.paths {
        let found = lookup.by_suffix(&r.path);
        let mut w = W_PATH / found.len().max(1) as f64;
        if r.line.is_some() {
            frame += 1;
            w *= 1.0 - 0.5 * (1.0 - frame as f64 / framed as f64);
        }
        let bare = !r.path.contains('/');
        if bare {
            w *= 0.5;
        }
        for p in &found {
            let Some(s) = scores.of(p) else { continue };
            if bare {
                s.bare = s.bare.max(w);
            } else {
                s.path = s.path.max(w);
            }
            s.named_by.push(r.path.clone());
            s.framed.extend(r.line);
        }
    }
    for m in &q.modules {
        let found = lookup.by_module(m);
        for p in &found {
            let Some(s) = scores.of(p) else { continue };
            s.path = s.path.max(W_MODULE / found.len() as f64);
            s.named_by.push(m.replace('/', "."));
        }
    }
    // A snake_case name whose words spell a module path (`autodoc_typehints`, a setting of
    // `ext/autodoc/typehints.py`) names that module, as a dotted name would.
    for (id, _) in idents {
        let parts: Vec<&str> = id.split('_').filter(|p| !p.is_empty()).collect();
        if parts.len() < 2 || id.contains('.') {
            continue;
        }
        let found = lookup.by_module_exact(&parts.join("/").to_lowercase());
        for p in &found {
            let Some(s) = scores.of(p) else { continue };
            s.path = s.path.max(W_MODULE / found.len() as f64);
            s.named_by.push(id.clone());
        }
    }
    for (id, _) in idents {
        let lower = id.to_lowercase();
        if lower.len() < 3 {
            continue;
        }
        if let Some(paths) = lookup.stems.get(lower.as_str()) {
            for p in paths {
                let Some(s) = scores.of(p) else { continue };
                s.stem = W_STEM;
            }
        }
    }
    // A word of the query that is a file's name: a topic (`pretty printing`, `formatting`),
    // counted by its weight in the query and shared among the files of that name.
    {
        let top_w = words
            .iter()
            .map(|(_, w)| *w)
            .fold(0.0f32, f32::max)
            .max(1.0);
        for (w, qw) in words {
            if w.len() < 4 {
                continue;
            }
            if let Some(paths) = lookup.stems.get(w.as_str()) {
                let share = W_WORD_STEM * f64::from(*qw / top_w) / (paths.len() as f64).sqrt();
                for p in paths {
                    let Some(s) = scores.of(p) else { continue };
                    s.stem = s.stem.max(share);
                }
            }
        }
    }
}
