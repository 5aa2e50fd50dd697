//! Helpers shared by the store's integration tests.
#![allow(dead_code)]

use std::path::Path;

/// Waits until the filesystem's clock has passed the last change of every folder below `root`,
/// so that the next scan's stamp is later than all of them and their stats can vouch for their
/// listings. A folder changed in the same clock tick as a scan starts is never trusted: it is
/// read again and its stat recorded by a later scan, a write that depends on the clock. It
/// polls the clock through a file in `root`'s parent (on the same filesystem); no sleep.
#[cfg(unix)]
pub fn settle(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let mut newest = 0i128;
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let m = std::fs::symlink_metadata(&dir).expect("stat");
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        newest = newest.max(ns(m.mtime(), m.mtime_nsec()).max(ns(m.ctime(), m.ctime_nsec())));
        for e in std::fs::read_dir(&dir).expect("read dir") {
            let e = e.expect("entry");
            if e.file_type().expect("type").is_dir() {
                todo.push(e.path());
            }
        }
    }
    let probe = tempfile::NamedTempFile::new_in(root.parent().expect("parent")).expect("probe");
    loop {
        std::fs::write(probe.path(), "tick").expect("write probe");
        let m = std::fs::metadata(probe.path()).expect("stat probe");
        if i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()) > newest {
            return;
        }
        std::thread::yield_now();
    }
}

/// Elsewhere folders have no ctime and their stats vouch for nothing: nothing to wait for.
#[cfg(not(unix))]
pub fn settle(_root: &Path) {}
