//! The walk's and the hashing's own tests: ignore files as git reads them, listings reused,
//! racy stats.
use super::hashing::*;
use super::ignores::*;
use super::*;

#[test]
fn a_git_configs_excludes_file_is_read_as_git_writes_it() {
    let home = Path::new("/home/u");
    let read = |config: &str| excludes_file_in(config.as_bytes(), Some(home));
    assert_eq!(
        read("[core]\n\texcludesFile = ~/.gitignore_global\n"),
        Some(home.join(".gitignore_global"))
    );
    assert_eq!(
        read("[user]\n  name = x\r\n[core]\r\n  EXCLUDESFILE=\"/etc/ignore\"\r\n"),
        Some(PathBuf::from("/etc/ignore"))
    );
    // The last one wins, as `git config core.excludesFile` answers; only in [core].
    assert_eq!(
        read("[core]\nexcludesfile = /a\n[user]\n\tname = x\n[Core]\nexcludesfile = /b\n"),
        Some(PathBuf::from("/b"))
    );
    assert_eq!(read("[alias]\n  excludesfile = /a\n"), None);
    assert_eq!(read("excludesfile = /a\n"), None);
    assert_eq!(
        read("[core] excludesfile = /on-the-header\n"),
        Some(PathBuf::from("/on-the-header"))
    );
    // A key that only starts alike is none; a value of two words only in quotes.
    assert_eq!(read("[core]\n  excludesFiles = /a\n"), None);
    assert_eq!(read("[core]\n  excludeFile = /a\n"), None);
    assert_eq!(read("[core]\n  excludesfile = /my ignore\n"), None);
    assert_eq!(
        read("[core]\n  excludesfile = \"/my ignore\"\n"),
        Some(PathBuf::from("/my ignore"))
    );
    assert_eq!(read("[core]\n  excludesfile =\n"), None);
    // Only a leading `~/` is the home folder.
    assert_eq!(
        read("[core]\nexcludesfile = a~/b"),
        Some(PathBuf::from("a~/b"))
    );
    assert_eq!(
        excludes_file_in(b"[core]\nexcludesfile = ~/x", None),
        Some(PathBuf::from("~/x"))
    );
}

fn leaf(path: &str, kind: NodeKind, mtime_ns: i64) -> Leaf {
    Leaf {
        path: path.to_owned(),
        kind,
        content_hash: Hash([0; 32]),
        stat: Stat {
            mtime_ns,
            ..Stat::default()
        },
        reused: false,
        hashed: false,
    }
}

#[test]
fn racy_paths_keep_what_a_scan_did_not_see_and_settle_what_it_did() {
    let earlier: PathSet = ["a", "b", "c"].into_iter().map(str::to_owned).collect();
    let seen = [
        // Seen again, older than the scan: settled.
        leaf("b", NodeKind::File, 5),
        // Written as the scan started: racy now.
        leaf("d", NodeKind::File, 10),
        // A symlink is never rewritten in place.
        leaf("e", NodeKind::Symlink, 30),
        // An old mtime put back after a write: the ctime tells.
        Leaf {
            stat: Stat {
                mtime_ns: 1,
                ctime_ns: 12,
                ..Stat::default()
            },
            ..leaf("f", NodeKind::File, 1)
        },
    ];
    let after = racy_after(&earlier, &seen, |p| p == "c", 10);
    let mut after: Vec<String> = after.into_iter().collect();
    after.sort();
    // a: not seen, still racy; c: gone.
    assert_eq!(after, ["a", "d", "f"]);
}

#[test]
fn a_file_hashes_to_the_blake3_of_all_its_bytes_whatever_the_size_the_walk_saw() {
    let dir = std::env::temp_dir().join(format!("merkle-hash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut buf = Vec::new();
    for len in [
        0,
        1,
        READ_PIECE - 1,
        READ_PIECE,
        READ_PIECE + 1,
        3 * READ_PIECE + 7,
        RAYON_MIN as usize + 5,
    ] {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let path = dir.join(format!("f{len}"));
        std::fs::write(&path, &bytes).expect("write");
        let want = Hash(*blake3::hash(&bytes).as_bytes());
        let size = len as u64;
        // The size the walk saw, then a file that grew or shrank since.
        for seen in [size, size / 2, size + 100] {
            assert_eq!(
                hash_file_with(&path, seen, &mut buf).expect("hash"),
                want,
                "{len} bytes, {seen} seen"
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A leaf that cannot be hashed after the walk is dropped from it, and the folder it was
/// in must then vouch for nothing: a later walk reusing that listing would never look for
/// the leaf again, even once it can be read.
#[test]
fn a_leaf_that_cannot_be_hashed_unrecords_its_folder() {
    let root = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(root.path().join("d")).expect("mkdir");
    std::fs::write(root.path().join("d/kept.txt"), "kept").expect("write");
    let recorded = Stat {
        mtime_ns: 5,
        ctime_ns: 5,
        ino: 7,
        mode: 0o40755,
        size: 0,
    };
    let gone = |path: &str| Leaf {
        stat: Stat {
            size: 3,
            ..Stat::default()
        },
        ..leaf(path, NodeKind::File, 1)
    };
    let mut walked = Walked {
        // Not on disk: opening them fails.
        leaves: vec![
            gone("d/gone.txt"),
            gone("top.txt"),
            leaf("d/kept.txt", NodeKind::File, 1),
        ],
        dirs: vec![
            WalkedDir {
                path: "d".to_owned(),
                stat: recorded,
            },
            WalkedDir {
                path: "e".to_owned(),
                stat: recorded,
            },
        ],
        top: recorded,
        ..Walked::default()
    };
    let prev = PathMap::default();
    hash_leaves(
        &mut walked,
        &HashConfig {
            root: root.path(),
            prev: &prev,
            racy: Racy::Since(None),
            force: false,
            progress: None,
        },
    );
    let dirs: Vec<(&str, bool)> = walked
        .dirs
        .iter()
        .map(|d| (d.path.as_str(), d.stat.is_recorded()))
        .collect();
    assert_eq!(
        (dirs, walked.top.is_recorded(), walked.unrecorded.clone()),
        (
            vec![("d", false), ("e", true)],
            false,
            vec![String::new(), "d".to_owned()]
        )
    );
    let leaves: Vec<&str> = walked.leaves.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(leaves, ["d/kept.txt"]);
}

/// A folder's stat vouches for its listing only when older than the scan, by two seconds
/// when its times are whole milliseconds (a coarse file system's clock, not the stamp's).
#[test]
fn coarse_folder_times_need_a_margin_to_vouch() {
    let at = |mtime_ns: i64, ctime_ns: i64| Stat {
        mtime_ns,
        ctime_ns,
        mode: 0o40755,
        ..Stat::default()
    };
    let s = 1_000_000_000;
    let fine = at(10 * s + 123_456_789, 10 * s + 123_456_789);
    let coarse = at(10 * s, 10 * s);
    let cases = [
        stat_vouches(&fine, 10 * s + 123_456_789),
        stat_vouches(&fine, 10 * s + 123_456_790),
        stat_vouches(&coarse, 11 * s),
        stat_vouches(&coarse, 12 * s + 1),
    ];
    assert_eq!(cases, [false, cfg!(unix), false, cfg!(unix)]);
}
