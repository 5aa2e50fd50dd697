//! Import specifiers resolved to workspace files, per language, against the tree's path set:
//! pure functions, no IO (a Go module's path comes from its `go.mod`, which the caller reads).
//!
//! What resolves, and how:
//! - **Rust**: `mod x;` to `x.rs` or `x/mod.rs` beside or below the file's module; `use
//!   crate::`/`self::`/`super::` paths to the deepest module file they name. The crate is the
//!   nearest folder with a `Cargo.toml`; its root file is the manifest's `[lib] path`, else
//!   `src/lib.rs`, `lib.rs`, `src/main.rs` or `main.rs`, and its modules live beside that file.
//!   `use other_crate::x` resolves in the workspace crate of that name (its `[lib] name`, else
//!   its package name with `-` as `_`). `self::*` (as `use super::*` in an inline `mod tests`
//!   reads) is the file itself.
//! - **Python**: relative imports from the file's package; absolute ones from `sys.path`-like
//!   roots only: the workspace root, `src/`, and each folder above the file that is not itself
//!   a package (no `__init__.py`: the folder holding a top-level package, or a script's own
//!   folder), the first that holds the module. Never from inside a package: in `src/flask/`,
//!   `import typing` is the standard library's, not `src/flask/typing.py`.
//! - **JavaScript/TypeScript**: relative specifiers (`./`, `../`), with the extensions and
//!   `index` files the resolvers try, and a `.js` written for a `.ts` source; bare ones
//!   through the aliases of the nearest folder above with one that matches: an import map's
//!   `imports` (`deno.json`, `deno.jsonc`, `import_map.json`; a key ending in `/` is a
//!   prefix) and `tsconfig.json`'s (or `jsconfig.json`'s) `compilerOptions.paths` (one `*`
//!   each) and `baseUrl`.
//! - **Go**: import paths inside a module of the workspace, to every non-test `.go` file of
//!   the package's folder.
//! - **C/C++**: `#include "x"` beside the file, else from a folder above it, else the one file
//!   whose path ends in `/x`.
//! - **Java**: `import a.b.C` to the one file whose path ends in `a/b/C.java`.
//!
//! Anything else (packages, the standard library, system headers) names no workspace file and
//! resolves to nothing.
use std::collections::{HashMap, HashSet};

use outline::{Import, ImportKind};

/// The workspace's files, indexed for resolution.
#[derive(Clone, Debug, Default)]
pub struct PathSet<'a> {
    /// The paths it was made of, borrowed: a tree of a million files has them once.
    files: HashSet<&'a str>,
    by_name: HashMap<&'a str, Vec<&'a str>>,
    by_dir: HashMap<&'a str, Vec<&'a str>>,
    /// The name of every folder that holds a file.
    folder_names: HashSet<&'a str>,
    /// (folder of a `go.mod`, its module path), longest module path first.
    go_modules: Vec<(String, String)>,
    /// Rust crates by the folder of their `Cargo.toml`: (name, root file).
    rust_crates: HashMap<String, (Option<String>, String)>,
    /// Rust crates' folders by the name `use` writes.
    rust_crate_names: HashMap<String, String>,
    /// Script aliases by the folder that declares them.
    script_aliases: HashMap<String, Vec<Alias>>,
}

/// A bare specifier's rewrite: `pattern` (exact, a prefix ending in `/`, or with one `*`) to
/// workspace paths, `*` (or the rest after a prefix) carried over.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Alias {
    pattern: String,
    targets: Vec<String>,
}

impl Alias {
    /// What `spec` becomes, and how specific the match was (the longer, the better).
    fn apply(&self, spec: &str) -> Option<(usize, Vec<String>)> {
        let p = self.pattern.as_str();
        if let Some((head, tail)) = p.split_once('*') {
            let mid = spec.strip_prefix(head)?.strip_suffix(tail)?;
            let out = self
                .targets
                .iter()
                .map(|t| t.replacen('*', mid, 1))
                .collect();
            return Some((head.len() + tail.len(), out));
        }
        if spec == p {
            return Some((p.len() + 1, self.targets.clone()));
        }
        if p.ends_with('/') {
            let rest = spec.strip_prefix(p)?;
            let out = self.targets.iter().map(|t| format!("{t}{rest}")).collect();
            return Some((p.len(), out));
        }
        None
    }
}

impl<'a> PathSet<'a> {
    /// The set of `paths` (workspace paths with `/`).
    pub fn new(paths: impl IntoIterator<Item = &'a str>) -> PathSet<'a> {
        let mut set = PathSet::default();
        for p in paths {
            set.files.insert(p);
            set.by_name.entry(name(p)).or_default().push(p);
            set.by_dir.entry(dir(p)).or_default().push(p);
            set.folder_names
                .extend(dir(p).split('/').filter(|f| !f.is_empty()));
        }
        for v in set.by_dir.values_mut().chain(set.by_name.values_mut()) {
            v.sort();
        }
        set
    }

    /// Declares a Go module: the folder holding its `go.mod` and the path it declares.
    pub fn add_go_module(&mut self, folder: &str, module: &str) {
        self.go_modules.push((folder.to_owned(), module.to_owned()));
        self.go_modules
            .sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.cmp(b)));
    }

    /// Declares the Rust crate whose manifest is the `Cargo.toml` at workspace path
    /// `manifest`, with text `text`. A manifest with no root file in the tree (a virtual
    /// workspace manifest, say) declares nothing.
    pub fn add_rust_crate(&mut self, manifest: &str, text: &str) {
        let folder = dir(manifest);
        let fields = cargo_fields(text);
        let root = fields
            .lib_path
            .as_deref()
            .and_then(|p| normalize(folder, p))
            .filter(|p| self.contains(p))
            .or_else(|| {
                self.first([
                    join(folder, "src/lib.rs"),
                    join(folder, "lib.rs"),
                    join(folder, "src/main.rs"),
                    join(folder, "main.rs"),
                ])
            });
        let Some(root) = root else {
            return;
        };
        let name = fields
            .lib_name
            .or(fields.package_name)
            .map(|n| n.replace('-', "_"));
        if let Some(n) = &name {
            self.rust_crate_names
                .entry(n.clone())
                .or_insert_with(|| folder.to_owned());
        }
        self.rust_crates.insert(folder.to_owned(), (name, root));
    }

    /// Declares the script aliases of the file at workspace path `manifest` (an import map,
    /// `deno.json`, `tsconfig.json`, ...), with text `text`, for the files below its folder.
    /// Text that does not parse declares nothing.
    pub fn add_script_aliases(&mut self, manifest: &str, text: &str) {
        let folder = dir(manifest);
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&strip_jsonc(text)) else {
            return;
        };
        let mut aliases = Vec::new();
        if let Some(imports) = json.get("imports").and_then(|v| v.as_object()) {
            for (key, value) in imports {
                let Some(v) = value.as_str() else { continue };
                // Only what points into the workspace from the map's folder: `./x`, `../x`.
                if !(v.starts_with("./") || v.starts_with("../")) {
                    continue;
                }
                if let Some(t) = normalize(folder, v) {
                    let t = if v.ends_with('/') { format!("{t}/") } else { t };
                    aliases.push(Alias {
                        pattern: key.clone(),
                        targets: vec![t],
                    });
                }
            }
        }
        if let Some(options) = json.get("compilerOptions") {
            let base_url = options.get("baseUrl").and_then(|v| v.as_str());
            let base = match base_url {
                Some(b) => normalize(folder, b),
                None => Some(folder.to_owned()),
            };
            if let (Some(base), Some(paths)) = (
                base.as_deref(),
                options.get("paths").and_then(|v| v.as_object()),
            ) {
                for (pattern, targets) in paths {
                    let targets: Vec<String> = targets
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|t| t.as_str())
                        .filter_map(|t| normalize(base, t))
                        .collect();
                    if !targets.is_empty() {
                        aliases.push(Alias {
                            pattern: pattern.clone(),
                            targets,
                        });
                    }
                }
            }
            // With a `baseUrl`, a bare specifier is also looked for below it.
            if let (Some(_), Some(base)) = (base_url, base) {
                aliases.push(Alias {
                    pattern: "*".to_owned(),
                    targets: vec![join(&base, "*")],
                });
            }
        }
        if !aliases.is_empty() {
            self.script_aliases
                .entry(folder.to_owned())
                .or_default()
                .extend(aliases);
        }
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Whether a Python module whose top-level name is `top` may be a workspace file: a folder
    /// of that name holds a file, or a file is named `top.py`. The standard library and
    /// installed packages mostly are not, and are ruled out without trying every root.
    fn may_hold_python_module(&self, top: &str) -> bool {
        self.folder_names.contains(top) || self.by_name.contains_key(format!("{top}.py").as_str())
    }

    fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<String> {
        candidates
            .into_iter()
            .find(|c| self.files.contains(c.as_str()))
    }

    /// The one file whose path is `suffix` or ends in `/suffix`.
    fn unique_suffix(&self, suffix: &str) -> Option<String> {
        let hits: Vec<&str> = self
            .by_name
            .get(name(suffix))?
            .iter()
            .copied()
            .filter(|p| *p == suffix || p.ends_with(&format!("/{suffix}")))
            .collect();
        match hits.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
        }
    }
}

/// The module path a `go.mod` declares.
pub fn go_module_path(go_mod: &str) -> Option<&str> {
    go_mod.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with(char::is_whitespace)).then_some(m)
    })
}

/// The workspace files `import`, written in the file at `from`, names (none, one, or a Go
/// package's files), in path order; never `from` itself.
pub fn resolve(set: &PathSet<'_>, from: &str, import: &Import) -> Vec<String> {
    let mut out = match import.kind {
        ImportKind::RustMod => rust_mod(set, from, &import.spec).into_iter().collect(),
        ImportKind::RustUse => rust_use(set, from, &import.spec).into_iter().collect(),
        ImportKind::Python => python(set, from, &import.spec, None).into_iter().collect(),
        ImportKind::PythonFrom => python(set, from, &import.spec, import.name.as_deref())
            .into_iter()
            .collect(),
        ImportKind::Script => script(set, from, &import.spec).into_iter().collect(),
        ImportKind::Go => go(set, &import.spec),
        ImportKind::Include => include(set, from, &import.spec).into_iter().collect(),
        ImportKind::Java => java(set, &import.spec).into_iter().collect(),
        _ => Vec::new(),
    };
    out.retain(|p| p != from);
    out.sort();
    out.dedup();
    out
}

fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else if rest.is_empty() {
        dir.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `base` joined with a relative path, `.` and `..` resolved; `None` when it climbs above the
/// workspace.
fn normalize(base: &str, rel: &str) -> Option<String> {
    let path = merkle_store::lexical_path(&join(base, rel));
    let path = path.trim_start_matches('/');
    (path != ".." && !path.starts_with("../")).then(|| path.to_owned())
}

/// The folder holding the modules declared by the Rust file at `from`: its own folder for
/// `lib.rs`, `main.rs` and `mod.rs` (and any file of `src/bin` or a crate's top folder), else
/// the folder named after it.
fn rust_module_dir(from: &str) -> String {
    let file = name(from);
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    if matches!(file, "lib.rs" | "main.rs" | "mod.rs") {
        dir(from).to_owned()
    } else {
        join(dir(from), stem)
    }
}

/// The file of the module whose declarations live in folder `m`.
fn rust_module_file(set: &PathSet<'_>, m: &str) -> Option<String> {
    set.first([
        join(m, "mod.rs"),
        format!("{m}.rs"),
        join(m, "lib.rs"),
        join(m, "main.rs"),
    ])
}

fn rust_mod(set: &PathSet<'_>, from: &str, spec: &str) -> Option<String> {
    let rel = spec.replace("::", "/");
    let base = join(&rust_module_dir(from), &rel);
    set.first([format!("{base}.rs"), join(&base, "mod.rs")])
}

fn rust_use(set: &PathSet<'_>, from: &str, spec: &str) -> Option<String> {
    let mut segs: Vec<&str> = spec.split("::").collect();
    // Where the path's modules live, and the file a path naming no module below means.
    let (start, fallback) = match segs.first().copied() {
        Some("crate") => {
            segs.remove(0);
            // The nearest folder above with a Cargo.toml is the crate.
            let mut d = dir(from);
            loop {
                if set.contains(&join(d, "Cargo.toml")) {
                    break match set.rust_crates.get(d) {
                        Some((_, root)) => (dir(root).to_owned(), Some(root.clone())),
                        None => {
                            let src = join(d, "src");
                            let file = rust_module_file(set, &src);
                            (src, file)
                        }
                    };
                }
                if d.is_empty() {
                    return None;
                }
                d = dir(d);
            }
        }
        Some("self") => {
            segs.remove(0);
            // The file's own module: `self::*` names the file itself.
            (rust_module_dir(from), None)
        }
        Some("super") => {
            let mut m = rust_module_dir(from);
            while segs.first() == Some(&"super") {
                segs.remove(0);
                if m.is_empty() {
                    return None;
                }
                m = dir(&m).to_owned();
            }
            let file = rust_module_file(set, &m);
            (m, file)
        }
        Some(name) => {
            // Another crate of the workspace, by the name `use` writes.
            let folder = set.rust_crate_names.get(name)?;
            let (_, root) = set.rust_crates.get(folder)?;
            segs.remove(0);
            (dir(root).to_owned(), Some(root.clone()))
        }
        None => return None,
    };
    // The deepest module the path names; an item of the module that holds it otherwise.
    for k in (1..=segs.len()).rev() {
        let base = join(&start, &segs[..k].join("/"));
        if let Some(f) = set.first([format!("{base}.rs"), join(&base, "mod.rs")]) {
            return Some(f);
        }
    }
    fallback
}

/// What a `Cargo.toml` says of its crate's name and root: `[package] name`, `[lib] name` and
/// `[lib] path`. Read line by line (tables and `key = "string"`), which is all these keys use.
#[derive(Default)]
struct CargoFields {
    package_name: Option<String>,
    lib_name: Option<String>,
    lib_path: Option<String>,
}

fn cargo_fields(text: &str) -> CargoFields {
    let mut out = CargoFields::default();
    let mut table = "";
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header.split(']').next().unwrap_or_default().trim();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        // A quoted string (a `#` inside it is no comment), then at most a comment.
        let value = value.trim();
        let Some(value) = ['"', '\''].iter().find_map(|q| {
            let rest = value.strip_prefix(*q)?;
            let end = rest.find(*q)?;
            let after = rest[end + 1..].trim();
            (after.is_empty() || after.starts_with('#')).then(|| &rest[..end])
        }) else {
            continue;
        };
        let slot = match (table, key.trim()) {
            ("package", "name") => &mut out.package_name,
            ("lib", "name") => &mut out.lib_name,
            ("lib", "path") => &mut out.lib_path,
            _ => continue,
        };
        *slot = Some(value.to_owned());
    }
    out
}

fn python(set: &PathSet<'_>, from: &str, spec: &str, name_: Option<&str>) -> Option<String> {
    let dots = spec.len() - spec.trim_start_matches('.').len();
    let module = spec[dots..].replace('.', "/");
    let module_files = |base: &str| [format!("{base}.py"), join(base, "__init__.py")];
    let within = |root: &str| -> Option<String> {
        let base = join(root, &module);
        if let Some(n) = name_
            && let Some(f) = set.first(module_files(&join(&base, n)))
        {
            return Some(f);
        }
        if module.is_empty() {
            return set.first([join(root, "__init__.py")]);
        }
        set.first(module_files(&base))
    };
    if dots > 0 {
        let mut root = dir(from).to_owned();
        for _ in 1..dots {
            if root.is_empty() {
                return None;
            }
            root = dir(&root).to_owned();
        }
        return within(&root);
    }
    let top = module.split('/').next().unwrap_or_default();
    if !set.may_hold_python_module(top) {
        return None;
    }
    let mut roots = vec![String::new(), "src".to_owned()];
    let mut d = dir(from);
    while !d.is_empty() {
        // A package's folder is never on sys.path (Python 3 has no implicit relative import).
        if !set.contains(&join(d, "__init__.py")) {
            roots.push(d.to_owned());
        }
        d = dir(d);
    }
    roots.iter().find_map(|r| within(r))
}

const SCRIPT_EXTENSIONS: [&str; 10] = [
    ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json",
];

/// Whether `path` names a file that declares script aliases ([`PathSet::add_script_aliases`]).
pub fn declares_script_aliases(path: &str) -> bool {
    matches!(
        name(path),
        "deno.json" | "deno.jsonc" | "import_map.json" | "tsconfig.json" | "jsconfig.json"
    )
}

fn script(set: &PathSet<'_>, from: &str, spec: &str) -> Option<String> {
    let spec = spec.split(['?', '#']).next().unwrap_or(spec);
    if !(spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..") {
        return script_alias(set, from, spec);
    }
    script_file(set, &normalize(dir(from), spec)?)
}

/// A bare specifier through the aliases of the nearest folder above `from` with one that
/// matches: its most specific match, the first of its targets that is a file.
fn script_alias(set: &PathSet<'_>, from: &str, spec: &str) -> Option<String> {
    if set.script_aliases.is_empty() || spec.contains("..") {
        return None;
    }
    let mut d = dir(from);
    loop {
        if let Some(aliases) = set.script_aliases.get(d) {
            let best = aliases
                .iter()
                .filter_map(|a| a.apply(spec))
                .max_by_key(|(specific, _)| *specific);
            if let Some((_, targets)) = best {
                return targets.iter().find_map(|t| script_file(set, t));
            }
        }
        if d.is_empty() {
            return None;
        }
        d = dir(d);
    }
}

/// The file a script specifier resolved to `base` names: itself, with an extension, its
/// TypeScript source, or its folder's `index`.
fn script_file(set: &PathSet<'_>, base: &str) -> Option<String> {
    let base = base.trim_end_matches('/').to_owned();
    if base.is_empty() {
        return None;
    }
    let mut candidates = vec![base.clone()];
    candidates.extend(SCRIPT_EXTENSIONS.iter().map(|e| format!("{base}{e}")));
    // TypeScript's ESM style names the emitted `.js` of a `.ts` source.
    for (js, ts) in [
        (".js", [".ts", ".tsx", ".d.ts"]),
        (".jsx", [".tsx", ".ts", ".d.ts"]),
        (".mjs", [".mts", ".d.mts", ".ts"]),
        (".cjs", [".cts", ".d.cts", ".ts"]),
    ] {
        if let Some(stem) = base.strip_suffix(js) {
            candidates.extend(ts.iter().map(|e| format!("{stem}{e}")));
        }
    }
    candidates.extend(
        SCRIPT_EXTENSIONS
            .iter()
            .map(|e| format!("{}{e}", join(&base, "index"))),
    );
    set.first(candidates)
}

fn go(set: &PathSet<'_>, spec: &str) -> Vec<String> {
    for (folder, module) in &set.go_modules {
        let rest = if spec == module {
            ""
        } else if let Some(r) = spec
            .strip_prefix(module.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            r
        } else {
            continue;
        };
        let pkg = join(folder, rest);
        return set
            .by_dir
            .get(pkg.as_str())
            .map(|files| {
                files
                    .iter()
                    .filter(|f| f.ends_with(".go") && !f.ends_with("_test.go"))
                    .map(|f| (*f).to_owned())
                    .collect()
            })
            .unwrap_or_default();
    }
    Vec::new()
}

fn include(set: &PathSet<'_>, from: &str, spec: &str) -> Option<String> {
    let mut d = dir(from);
    loop {
        if let Some(p) = normalize(d, spec)
            && set.contains(&p)
        {
            return Some(p);
        }
        if d.is_empty() {
            break;
        }
        d = dir(d);
    }
    let spec = spec.trim_start_matches("./");
    if spec.contains("..") {
        return None;
    }
    set.unique_suffix(spec)
}

fn java(set: &PathSet<'_>, spec: &str) -> Option<String> {
    let spec = spec.trim_end_matches(".*");
    let segs: Vec<&str> = spec.split('.').collect();
    // A static import names a member of the class one segment up.
    for k in (1..=segs.len()).rev() {
        if let Some(f) = set.unique_suffix(&format!("{}.java", segs[..k].join("/"))) {
            return Some(f);
        }
        if k < segs.len() {
            break;
        }
    }
    None
}

/// JSON with comments (`//`, `/* */`) and trailing commas, as `tsconfig.json` and
/// `deno.jsonc` allow, made plain JSON.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            (']' | '}', _) => {
                // A comma before the closing bracket, whitespace between, goes.
                let kept = out.trim_end().len();
                if out[..kept].ends_with(',') {
                    out.truncate(kept - 1);
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
