//! Ignore rules: the rules in force in a directory, .gitignore files compiled and chained, and
//! the ignore sources from outside the tree (ancestors' .gitignore, .git/info/exclude,
//! core.excludesFile), read as git reads them.
//!
//! Each ignore file's matcher is built with "." as its root and given paths relative to its own
//! folder (the `ignore` crate's own prefix stripping compares paths component by component, per
//! entry and file), so a matcher depends on the file's content alone and files of the same
//! content share one within a walk.
use super::*;

/// The ignore rules in force in a directory, as far as reusing and recording listings goes.
#[derive(Clone, Copy)]
pub(super) struct Rules {
    /// Every .gitignore above (not in) this directory is the one the last scan walked under:
    /// the last listing of this directory may be reused if its stat vouches for it.
    pub(super) same: bool,
    /// Every .gitignore above this directory is a file of the tree, whose stat tells when it
    /// changes: a listing made here may be recorded as reusable.
    pub(super) recordable: bool,
}

impl Rules {
    pub(super) const FULL: Rules = Rules {
        same: true,
        recordable: true,
    };
}

/// The .gitignore matchers in force in a directory: its own, then its ancestors'.
pub(super) struct IgnoreChain {
    pub(super) here: Matcher,
    /// How many leading bytes of a workspace path make the folder of the file and its slash
    /// (0 at the root): what is left is the path relative to that folder.
    pub(super) strip: usize,
    pub(super) parent: Option<Arc<IgnoreChain>>,
}

/// A .gitignore file's matcher, built when first needed: a walk that reuses the listings of
/// every directory matches nothing and need not read a single .gitignore.
pub(super) struct Matcher {
    pub(super) file: PathBuf,
    pub(super) built: std::sync::OnceLock<Arc<Gitignore>>,
}

impl Matcher {
    pub(super) fn new(file: PathBuf) -> Matcher {
        Matcher {
            file,
            built: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn get(&self, ctx: &WalkCtx<'_>) -> &Gitignore {
        self.built.get_or_init(|| ctx.gitignore(&self.file))
    }
}

/// A matcher rooted at "." for the content of an ignore file, read as the ignore crate reads a
/// file: line by line (`\n` or `\r\n`), a leading byte-order mark dropped, up to the first
/// line that is not UTF-8.
///
/// Rooted at "." rather than at its folder, to be given paths relative to the folder: with its
/// folder as the root, the ignore crate strips that prefix from every path it is given,
/// comparing paths component by component, and on a tree with many .gitignore files that cost
/// more than the matching itself. And a matcher rooted at "." depends on the file's content
/// alone, so files with the same content (a vendored tree has dozens) share one.
pub(super) fn gitignore_from(content: &[u8]) -> Gitignore {
    let mut b = GitignoreBuilder::new(".");
    for (i, line) in content.split(|&c| c == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(mut line) = std::str::from_utf8(line) else {
            break;
        };
        if i == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        // A bad line is skipped; the others still count.
        let _ = b.add_line(None, line);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The ignore files that apply below the root before any .gitignore inside it, lowest
/// precedence last: the .gitignore files of the root's ancestors inside its repository, then
/// .git/info/exclude, then core.excludesFile. Read, not compiled: a walk that reuses every
/// listing compiles none of them, and compares their content with the last scan's.
pub(crate) struct IgnoreSources {
    /// Each file's content, with the root's path relative to the file's folder ("" when it is
    /// the root).
    pub(super) files: Vec<(Vec<u8>, String)>,
    /// blake3 of all of it.
    pub(crate) fingerprint: Hash,
}

impl IgnoreSources {
    pub(crate) fn read(root: &Path) -> IgnoreSources {
        // The root's path relative to `dir`, one of its ancestors.
        let below = |dir: &Path| {
            root.strip_prefix(dir)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut files = Vec::new();
        // A root below a repository's top still honours the .gitignore files above it.
        let mut repo_top = None;
        for dir in root.ancestors() {
            if dir != root
                && let Ok(content) = std::fs::read(dir.join(".gitignore"))
            {
                files.push((content, below(dir)));
            }
            if dir.join(".git").exists() {
                repo_top = Some(dir.to_path_buf());
                break;
            }
        }
        if repo_top.is_none() {
            // Not in a repository: only the root's own .gitignore files count.
            files.clear();
        }
        let top = repo_top.unwrap_or_else(|| root.to_path_buf());
        let exclude = top.join(".git").join("info").join("exclude");
        if let Ok(content) = std::fs::read(&exclude) {
            files.push((content, below(&top)));
        }
        if let Some(global) = global_excludes_file()
            && let Ok(content) = std::fs::read(&global)
        {
            files.push((content, below(&top)));
        }
        let mut h = blake3::Hasher::new();
        for (content, below) in &files {
            h.update(&(below.len() as u64).to_le_bytes())
                .update(below.as_bytes())
                .update(&(content.len() as u64).to_le_bytes())
                .update(content);
        }
        IgnoreSources {
            files,
            fingerprint: Hash(*h.finalize().as_bytes()),
        }
    }
}

/// The file `core.excludesFile` names, where git looks for it: the config `GIT_CONFIG_GLOBAL`
/// names, else `~/.gitconfig`, else `$XDG_CONFIG_HOME/git/config` (`~/.config/git/config`),
/// else the system's (`GIT_CONFIG_SYSTEM`, `/etc/gitconfig`); without one, git's default,
/// `$XDG_CONFIG_HOME/git/ignore`. Read with [`excludes_file_in`] rather than the `ignore`
/// crate's own lookup, which compiles a regular expression for it in every process (a
/// twentieth of a no-op status of a small checkout).
fn global_excludes_file() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = std::env::home_dir();
    let xdg = set("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let named_in = |config: Option<PathBuf>| {
        let content = std::fs::read(config?).ok()?;
        excludes_file_in(&content, home.as_deref())
    };
    named_in(set("GIT_CONFIG_GLOBAL"))
        .or_else(|| named_in(home.as_ref().map(|h| h.join(".gitconfig"))))
        .or_else(|| named_in(xdg.as_ref().map(|x| x.join("git").join("config"))))
        .or_else(|| {
            named_in(Some(
                set("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")),
            ))
        })
        .or_else(|| xdg.map(|x| x.join("git").join("ignore")))
}

/// The path a git config sets `core.excludesFile` to, read as git reads it: in the `[core]`
/// section only, the key in any case, the last value winning; the value in quotes or not
/// (quoted, it may hold spaces), with a leading `~/` taken from `home`. `None` when the file
/// sets none, or its last value is not one path.
pub(super) fn excludes_file_in(config: &[u8], home: Option<&Path>) -> Option<PathBuf> {
    pub(super) const KEY: &[u8] = b"excludesfile";
    let mut in_core = false;
    let mut found = None;
    for line in config.split(|&b| b == b'\n') {
        let mut line = line.trim_ascii();
        if line.first() == Some(&b'[') {
            let Some(end) = line.iter().position(|&b| b == b']') else {
                in_core = false;
                continue;
            };
            in_core = line[1..end].trim_ascii().eq_ignore_ascii_case(b"core");
            // git takes a key on the header's line too: `[core] excludesfile = x`.
            line = line[end + 1..].trim_ascii();
        }
        if !in_core
            || !line
                .get(..KEY.len())
                .is_some_and(|k| k.eq_ignore_ascii_case(KEY))
        {
            continue;
        }
        let Some(value) = line[KEY.len()..].trim_ascii_start().strip_prefix(b"=") else {
            continue;
        };
        found = config_path(value.trim_ascii(), home);
    }
    found
}

/// A config value as one path: quoted (spaces allowed), or one word.
fn config_path(value: &[u8], home: Option<&Path>) -> Option<PathBuf> {
    let value = match value.strip_prefix(b"\"") {
        Some(quoted) => quoted.strip_suffix(b"\"")?,
        None if value.iter().any(u8::is_ascii_whitespace) => return None,
        None => value,
    };
    if value.is_empty() {
        return None;
    }
    let value = std::str::from_utf8(value).ok()?;
    Some(match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(value),
    })
}

/// The matchers of the [`IgnoreSources`], built when first needed.
pub(super) struct Base<'a> {
    pub(super) sources: &'a IgnoreSources,
    pub(super) built: std::sync::OnceLock<Vec<(Gitignore, String)>>,
}

impl<'a> Base<'a> {
    pub(super) fn new(sources: &'a IgnoreSources) -> Base<'a> {
        Base {
            sources,
            built: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.sources.files.is_empty()
    }

    pub(super) fn get(&self) -> &[(Gitignore, String)] {
        self.built.get_or_init(|| {
            self.sources
                .files
                .iter()
                .map(|(content, below)| (gitignore_from(content), below.clone()))
                .filter(|(gi, _)| !gi.is_empty())
                .collect()
        })
    }
}

/// Whether `path` (a workspace path) is ignored: the deepest .gitignore with an opinion
/// decides, then the base matchers in order. `buf` is the caller's, for the base matchers'
/// paths.
pub(super) fn ignored(
    ctx: &WalkCtx<'_>,
    chain: Option<&Arc<IgnoreChain>>,
    path: &str,
    is_dir: bool,
    buf: &mut String,
) -> bool {
    if chain.is_none() && ctx.base.is_empty() {
        return false;
    }
    let mut link = chain;
    while let Some(c) = link {
        match c.here.get(ctx).matched(&path[c.strip..], is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => link = c.parent.as_ref(),
        }
    }
    for (gi, below) in ctx.base.get() {
        let relative = if below.is_empty() {
            path
        } else {
            buf.clear();
            buf.push_str(below);
            buf.push('/');
            buf.push_str(path);
            buf.as_str()
        };
        match gi.matched(relative, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}
