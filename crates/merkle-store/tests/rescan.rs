//! `Store::scan_paths` against `Store::scan`: two stores over one workspace, one told only
//! which paths a change touched (as a file watcher reports them), the other scanning
//! everything. After every change of a long seeded sequence of creates, edits, deletes,
//! renames, new and removed directories, `.gitignore` edits and kind changes, both must hold
//! the same tree, report the same changes and counts, and validate.
use std::path::{Path, PathBuf};

use merkle_store::{OpenOptions, ScanOptions, ScanReport, Store};
use pretty_assertions::assert_eq;

/// SplitMix64: a seeded, dependency-free source of choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

struct Twins {
    dir: tempfile::TempDir,
    /// In the workspace's `.merkle`: told what changed.
    targeted: Store,
    /// Outside the workspace: scans everything.
    full: Store,
    made: u64,
}

impl Twins {
    fn new() -> Twins {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        for (path, content) in [
            ("README.md", "# twins\n"),
            (".gitignore", "*.log\n"),
            ("src/lib.rs", "pub mod a;\n"),
            ("src/a/mod.rs", "pub fn a() {}\n"),
            ("src/a/deep/x.txt", "x\n"),
            ("docs/guide.md", "guide\n"),
        ] {
            write(&ws.join(path), content);
        }
        let targeted = Store::open(&ws, &OpenOptions::default()).expect("store");
        let full = Store::open(
            &ws,
            &OpenOptions {
                store_dir: Some(dir.path().join("full-store")),
                ..OpenOptions::default()
            },
        )
        .expect("store");
        let twins = Twins {
            dir,
            targeted,
            full,
            made: 0,
        };
        let (a, b) = (
            twins.scan_full(&twins.targeted),
            twins.scan_full(&twins.full),
        );
        assert_eq!(a.root, b.root);
        twins
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn scan_full(&self, store: &Store) -> ScanReport {
        store.scan(&ScanOptions::default()).expect("scan")
    }

    /// Every regular file and directory of the workspace (not `.merkle`), relative, sorted.
    fn on_disk(&self) -> (Vec<String>, Vec<String>) {
        fn visit(root: &Path, dir: &Path, files: &mut Vec<String>, dirs: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).expect("read_dir") {
                let e = e.expect("entry");
                let path = e.path();
                let rel = path
                    .strip_prefix(root)
                    .expect("below the root")
                    .to_string_lossy()
                    .into_owned();
                if rel == ".merkle" {
                    continue;
                }
                let ft = e.file_type().expect("file type");
                if ft.is_dir() {
                    dirs.push(rel);
                    visit(root, &path, files, dirs);
                } else if ft.is_file() {
                    files.push(rel);
                }
            }
        }
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        visit(&self.ws(), &self.ws(), &mut files, &mut dirs);
        files.sort();
        dirs.sort();
        (files, dirs)
    }

    fn name(&mut self, prefix: &str) -> String {
        self.made += 1;
        format!("{prefix}{}", self.made)
    }

    /// One random change on disk; returns the paths a watcher would name.
    fn change(&mut self, rng: &mut Rng) -> (String, Vec<String>) {
        let ws = self.ws();
        let (files, dirs) = self.on_disk();
        let mut dirs_and_root = vec![String::new()];
        dirs_and_root.extend(dirs.iter().cloned());
        let join = |dir: &str, name: &str| {
            if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            }
        };
        match rng.below(11) {
            0 => {
                let dir = rng.pick(&dirs_and_root).expect("the root").clone();
                let path = join(&dir, &self.name("new"));
                let path = format!("{path}.rs");
                write(&ws.join(&path), "fn new() {}\n");
                ("create".into(), vec![path])
            }
            1 | 2 => match rng.pick(&files).cloned() {
                Some(path) if !path.ends_with(".gitignore") => {
                    append(&ws.join(&path), "// edited\n");
                    ("edit".into(), vec![path])
                }
                _ => ("nothing".into(), vec![]),
            },
            3 => match rng.pick(&files).cloned() {
                Some(path) => {
                    std::fs::remove_file(ws.join(&path)).expect("remove");
                    ("delete".into(), vec![path])
                }
                None => ("nothing".into(), vec![]),
            },
            4 => {
                // A directory with files inside, reported as the directory alone (a watcher
                // sees the files only once it watches the new directory).
                let parent = rng.pick(&dirs_and_root).expect("the root").clone();
                let top = join(&parent, &self.name("d"));
                write(&ws.join(&top).join("one.txt"), "one\n");
                write(&ws.join(&top).join("inner/two.md"), "two\n");
                write(&ws.join(&top).join("noise.log"), "ignored\n");
                ("mkdir".into(), vec![top])
            }
            5 => match rng.pick(&dirs).cloned() {
                Some(dir) => {
                    std::fs::remove_dir_all(ws.join(&dir)).expect("rm -rf");
                    ("rmdir".into(), vec![dir])
                }
                None => ("nothing".into(), vec![]),
            },
            6 => match rng.pick(&files).cloned() {
                Some(from) => {
                    let dir = rng.pick(&dirs_and_root).expect("the root").clone();
                    let to = join(&dir, &self.name("moved"));
                    std::fs::rename(ws.join(&from), ws.join(&to)).expect("rename");
                    ("rename".into(), vec![from, to])
                }
                None => ("nothing".into(), vec![]),
            },
            7 => match rng.pick(&dirs).cloned() {
                Some(from) => {
                    let to = self.name("renamed");
                    if std::fs::rename(ws.join(&from), ws.join(&to)).is_err() {
                        return ("nothing".into(), vec![]);
                    }
                    ("rename dir".into(), vec![from, to])
                }
                None => ("nothing".into(), vec![]),
            },
            8 => match rng.pick(&dirs).cloned() {
                Some(dir) => {
                    // Ignore one of the files or folders there, or stop ignoring them all.
                    let inside: Vec<String> = files
                        .iter()
                        .chain(&dirs)
                        .filter_map(|p| p.strip_prefix(&format!("{dir}/")))
                        .filter(|rest| !rest.contains('/') && *rest != ".gitignore")
                        .map(str::to_owned)
                        .collect();
                    let victim = rng
                        .pick(&inside)
                        .cloned()
                        .unwrap_or_else(|| "nothing".to_owned());
                    let rules = if rng.below(2) == 0 {
                        format!("{victim}\n")
                    } else {
                        "# nothing ignored\n".to_owned()
                    };
                    let path = join(&dir, ".gitignore");
                    write(&ws.join(&path), &rules);
                    ("gitignore".into(), vec![path])
                }
                None => ("nothing".into(), vec![]),
            },
            9 => {
                let dir = rng.pick(&dirs_and_root).expect("the root").clone();
                let path = join(&dir, &self.name("link"));
                std::os::unix::fs::symlink("../target", ws.join(&path)).expect("symlink");
                ("symlink".into(), vec![path])
            }
            _ => match rng.pick(&files).cloned() {
                // A file replaced by a directory of the same name.
                Some(path) => {
                    std::fs::remove_file(ws.join(&path)).expect("remove");
                    write(&ws.join(&path).join("inside.txt"), "inside\n");
                    ("file to dir".into(), vec![path])
                }
                None => ("nothing".into(), vec![]),
            },
        }
    }
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

fn append(path: &Path, content: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(content.as_bytes()).expect("append");
}

/// What two scans must agree on.
fn summary(r: &ScanReport) -> (String, u64, u64, Vec<String>) {
    (r.root.to_hex(), r.files, r.dirs, r.changed_paths.clone())
}

#[test]
fn a_targeted_rescan_builds_the_tree_a_full_scan_builds() {
    for seed in 1..=6 {
        let mut rng = Rng(seed);
        let mut twins = Twins::new();
        for step in 0..60 {
            let (what, touched) = twins.change(&mut rng);
            let targeted = twins
                .targeted
                .scan_paths(&touched, &ScanOptions::default())
                .expect("targeted scan");
            let full = twins.scan_full(&twins.full);
            assert_eq!(
                summary(&targeted),
                summary(&full),
                "seed {seed} step {step}: {what} {touched:?}"
            );
            assert_eq!(
                twins.targeted.list_nodes("", true).expect("nodes"),
                twins.full.list_nodes("", true).expect("nodes"),
                "seed {seed} step {step}: {what} {touched:?}"
            );
        }
        assert_eq!(twins.targeted.validate().expect("validate"), vec![]);
        // A full scan of the targeted store afterwards finds nothing left to change.
        let last = twins.scan_full(&twins.targeted);
        assert_eq!(last.changed_paths, Vec::<String>::new(), "seed {seed}");
    }
}

#[test]
fn a_targeted_rescan_reads_only_the_touched_directories() {
    let twins = Twins::new();
    append(&twins.ws().join("src/a/mod.rs"), "// edited\n");
    let r = twins
        .targeted
        .scan_paths(&["src/a/mod.rs".to_owned()], &ScanOptions::default())
        .expect("targeted scan");
    // The file, src/a, src and the root changed; one file hashed (the stat of src/a's other
    // entries matched); the counts are the whole tree's.
    assert_eq!(
        (r.changed_paths.clone(), r.hashed, r.files, r.dirs),
        (
            vec![
                String::new(),
                "src".to_owned(),
                "src/a".to_owned(),
                "src/a/mod.rs".to_owned()
            ],
            1,
            6,
            5
        )
    );
    // Paths the tree does not hold (the store, .git, ignored files) change nothing.
    let none = twins
        .targeted
        .scan_paths(
            &[".merkle/x".to_owned(), ".git/index".to_owned()],
            &ScanOptions::default(),
        )
        .expect("targeted scan");
    assert_eq!((none.changed_paths.len(), none.writes), (0, 0));
}

#[test]
fn a_subtree_rescan_finds_changes_anywhere_below_the_named_folder() {
    let twins = Twins::new();
    append(&twins.ws().join("src/a/deep/x.txt"), "more\n");
    write(&twins.ws().join("src/a/deep/new/y.txt"), "y\n");
    std::fs::remove_file(twins.ws().join("docs/guide.md")).expect("remove");
    // Named: src. docs changed too, and stays as the last scan saw it.
    let r = twins
        .targeted
        .scan_paths(&["src".to_owned()], &ScanOptions::default())
        .expect("subtree scan");
    assert_eq!(
        r.changed_paths,
        [
            "",
            "src",
            "src/a",
            "src/a/deep",
            "src/a/deep/new",
            "src/a/deep/new/y.txt",
            "src/a/deep/x.txt"
        ]
    );
    assert!(
        twins
            .targeted
            .node_at("docs/guide.md")
            .expect("lookup")
            .is_some()
    );
    assert_eq!(twins.targeted.validate().expect("validate"), vec![]);
}

/// Runs a targeted scan of `touched` and a full scan on the twins, and checks they agree.
fn agree(twins: &Twins, touched: &[&str]) -> ScanReport {
    let touched: Vec<String> = touched.iter().map(|p| (*p).to_owned()).collect();
    let targeted = twins
        .targeted
        .scan_paths(&touched, &ScanOptions::default())
        .expect("targeted scan");
    let full = twins.scan_full(&twins.full);
    assert_eq!(summary(&targeted), summary(&full), "{touched:?}");
    assert_eq!(
        twins.targeted.list_nodes("", true).expect("nodes"),
        twins.full.list_nodes("", true).expect("nodes")
    );
    assert_eq!(twins.targeted.validate().expect("validate"), vec![]);
    targeted
}

#[test]
fn folders_swapped_by_renames_are_read_whole() {
    let twins = Twins::new();
    let ws = twins.ws();
    write(&ws.join("v1/src/old.txt"), "old\n");
    write(&ws.join("v2/src/new.txt"), "new\n");
    agree(&twins, &["v1", "v2"]);
    // `mv v1 tmp && mv v2 v1 && mv tmp v2`: the events name the top folders only, and their
    // `src` folders keep their names.
    std::fs::rename(ws.join("v1"), ws.join("tmp")).expect("mv");
    std::fs::rename(ws.join("v2"), ws.join("v1")).expect("mv");
    std::fs::rename(ws.join("tmp"), ws.join("v2")).expect("mv");
    let r = agree(&twins, &["v1", "tmp", "v2"]);
    assert!(r.changed_paths.contains(&"v1/src/new.txt".to_owned()));
}

#[test]
fn a_folder_turned_into_a_symlink_is_not_read_through() {
    let twins = Twins::new();
    let ws = twins.ws();
    // `mv src/a src/a.real && ln -s a.real src/a`, then a path below the link is named.
    std::fs::rename(ws.join("src/a"), ws.join("src/a.real")).expect("mv");
    std::os::unix::fs::symlink("a.real", ws.join("src/a")).expect("ln -s");
    let r = agree(&twins, &["src/a/deep/x.txt"]);
    assert!(r.changed_paths.contains(&"src/a".to_owned()));
    agree(&twins, &["src/a.real"]);
}

#[test]
fn an_edit_of_git_exclude_rescans_everything() {
    let twins = Twins::new();
    let ws = twins.ws();
    write(&ws.join(".git/info/exclude"), "*.md\n");
    let r = agree(&twins, &[".git/info/exclude"]);
    // A repository now: its exclude file hides the Markdown files.
    assert!(
        r.changed_paths.contains(&"README.md".to_owned()),
        "{:?}",
        r.changed_paths
    );
}

#[test]
fn changed_since_follows_only_the_subtrees_that_differ() {
    let twins = Twins::new();
    let before = twins.targeted.root().expect("root").expect("scanned");
    append(&twins.ws().join("src/a/deep/x.txt"), "more\n");
    write(&twins.ws().join("docs/new.md"), "new\n");
    std::fs::remove_file(twins.ws().join("README.md")).expect("rm");
    let after = agree(&twins, &["src/a/deep/x.txt", "docs/new.md", "README.md"]).root;
    assert_eq!(
        twins
            .targeted
            .changed_since(&before, &after)
            .expect("changed since"),
        [
            "",
            "docs",
            "docs/new.md",
            "src",
            "src/a",
            "src/a/deep",
            "src/a/deep/x.txt"
        ]
    );
    assert_eq!(
        twins.targeted.changed_since(&after, &after).expect("same"),
        Vec::<String>::new()
    );
}
