//! The tree table kept in two halves, each in records of 4,096 entries ([`Table::Kept`]):
//! every entry of the last scan's tree in path order, each written short ([`Part::push`]),
//! under the state of the table it was read from ([`META_TREE_KEPT_OF`]). A read of the whole
//! tree ([`Store::tree_files`], [`Store::unchanged_on_disk`]) takes them where they are of the
//! table as it is now, each read where the engine holds it (no copy), instead of walking the
//! table's pages entry by entry: on a 15,000-file tree, most of a search's listing. They are a
//! table's only values, megabytes each: among the meta table's small values they were read
//! with each of those. A writable handle that had to walk the table keeps them; a scan that
//! writes the tree moves the table to a new state ([`META_TREE_GEN`]), so the kept ones are no
//! longer read. A cache: one of another state, or one that does not read, is not used.
use super::Store;
use crate::codec::{Reader, Writer};
use crate::engine::{Batch, Table};
use crate::error::Result;
use crate::hash::Hash;
use crate::keys::*;
use crate::node::TreeEntry;

/// The records' format; one of another is not read. 3: each half in parts; 4: of 4,096
/// entries; 5: each entry written short ([`Part::push`]).
const FORMAT: u8 = 5;

/// The entries a part of a half holds. A part is committed as it fills, so that keeping a tree
/// of a million files holds a part at a time, not the whole tree twice over (its records and
/// the engine's pages of them): at 1M files that was ~560 MB above what the walk held.
/// Changing it changes what the parts of one state hold, which no reader counts on (no record
/// names a state's parts until they are all there). 65,536 ->
/// 4,096: a part (about 600 KB unpacked then, 340 KB as format 5 writes it) is read into
/// memory freed by the part before, where
/// one of 65,536 was read into megabytes touched for the first time: at 100k files, a search's
/// peak RSS 127-146 -> 100-106 MB, and 160 -> 148 ms (the median of 15) without a watch.
#[cfg(not(test))]
const PART_ENTRIES: usize = 4096;
/// Parts of a few entries, so that a small tree's halves have several.
#[cfg(test)]
const PART_ENTRIES: usize = 3;

/// A part is cut once its bytes reach this, short of [`PART_ENTRIES`]: the engine gives a value
/// of more than a page a run of pages a power of two long, so a part of 4,096 entries (about
/// 340 KB at 100k files) took 512 KiB; at 100k files 5.5 MB of the kept table's 16 MB were the
/// ends of such runs. Cut at 248 KiB, a part and its entry's overhead in the engine stay within
/// 256 KiB unless its last entry is over 8 KiB (a path that long: then it only takes more
/// room). A reader reads what a part holds, however many entries that is.
const PART_FILL: usize = 248 * 1024;

/// Full parts committed together: the entries a commit holds (at most 65,536) are those a part held
/// before it was cut to 4,096, so keeping a tree takes as many commits as then (20 at a
/// million files) and holds no more at once.
#[cfg(not(test))]
const PARTS_A_COMMIT: u32 = 16;
/// A few parts a commit, so that a small tree's keeping commits some before its last.
#[cfg(test)]
const PARTS_A_COMMIT: u32 = 2;

/// The key of part `part` of half `half` (0 or 1) in [`Table::Kept`]: each half's parts
/// records of their own, so that each of a listing's two threads reads its own half (the stat
/// check's two take every part in turn, [`Kept::part_list`]).
fn part_key(half: usize, part: u32) -> Vec<u8> {
    let mut key = format!("tree:{half}:").into_bytes();
    key.extend_from_slice(&part.to_be_bytes());
    key
}

/// The parts of each half a kept tree's record ([`META_TREE_KEPT_OF`]: its state, then the
/// counts) names; 0 where it names none.
fn kept_parts(of: &[u8]) -> [u32; 2] {
    let count = |at: usize| {
        of.get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, u32::from_le_bytes)
    };
    [count(32), count(36)]
}

/// Where a store of an earlier version kept each half in one record.
const HALVES_BEFORE: [&[u8]; 2] = [b"tree:0", b"tree:1"];

/// The state of the table the kept tree is of, where it is of the table as it is now, and how
/// many parts each half has: its halves may be read ([`Store::visit_kept_half`]), or part by
/// part ([`Store::visit_kept_part`]).
#[derive(Clone, Copy)]
pub(super) struct Kept {
    state: Hash,
    parts: [u32; 2],
}

impl Kept {
    /// Every part, as (half, part), in path order.
    pub(super) fn part_list(self) -> Vec<(usize, u32)> {
        (0..2)
            .flat_map(|half| (0..self.parts[half]).map(move |part| (half, part)))
            .collect()
    }
}

/// One part of a half of the kept tree's records: its header, then entries of the table in
/// path order, each written against the one before it in this part ([`Part::push`]), so that
/// a part reads from its own start.
struct Part {
    w: Writer,
    entries: usize,
    /// The entry before's path and mtime, which the next is written against.
    last: (String, i64),
}

impl Part {
    fn of(state: Hash) -> Part {
        let mut w = Writer::default();
        w.u8(FORMAT).hash(&state);
        Part {
            w,
            entries: 0,
            last: (String::new(), 0),
        }
    }

    /// Appends an entry as [`Entries`] reads it: its path as the bytes it shares with the
    /// path before (cut where a character starts) and the rest, its kind and hashes, and its
    /// stat in LEB128 numbers, the mtime as its difference from the one before and the ctime
    /// from the mtime (both zigzagged). The hashes are most of it, which lz4 does not shrink
    /// by the eighth the engine packs for, so a part is as a rule stored as written and read
    /// where the engine holds it: no copy, nothing unpacked (at 100k files, lz4 unpacked the 12 MB kept tree into 20 MB, twice a search).
    fn push(&mut self, path: &str, e: &TreeEntry) {
        let (last, last_mtime) = &mut self.last;
        let mut shared = common_prefix(last, path);
        while !path.is_char_boundary(shared) {
            shared -= 1;
        }
        let stat = &e.stat;
        self.w
            .var(shared as u64)
            .var_str(&path[shared..])
            .u8(e.kind.code())
            .hash(&e.node_id)
            .hash(&e.content_hash)
            .var(stat.size)
            .var(zigzag(stat.mtime_ns.wrapping_sub(*last_mtime)))
            .var(zigzag(stat.ctime_ns.wrapping_sub(stat.mtime_ns)))
            .var(stat.ino)
            .var(u64::from(stat.mode));
        last.truncate(shared);
        last.push_str(&path[shared..]);
        *last_mtime = stat.mtime_ns;
        self.entries += 1;
    }
}

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// A signed number as an unsigned one that is small where its magnitude is.
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The entries of one part, as [`Part::push`] wrote them, after its header.
struct Entries<'a> {
    r: Reader<'a>,
    path: String,
    mtime: i64,
}

impl Entries<'_> {
    /// The next entry's path and entry; `None` at the end, `Some(None)` where the part does
    /// not read.
    fn next(&mut self) -> Option<Option<(&str, TreeEntry)>> {
        if self.r.is_empty() {
            return None;
        }
        Some(self.read())
    }

    fn read(&mut self) -> Option<(&str, TreeEntry)> {
        let r = &mut self.r;
        let shared = usize::try_from(r.var()?).ok()?;
        let rest = r.var_str()?;
        if !self.path.is_char_boundary(shared) {
            return None;
        }
        self.path.truncate(shared);
        self.path.push_str(rest);
        let kind = r.u8().and_then(crate::node::NodeKind::from_code)?;
        let (node_id, content_hash) = (r.hash()?, r.hash()?);
        let size = r.var()?;
        let mtime_ns = self.mtime.wrapping_add(unzigzag(r.var()?));
        let ctime_ns = mtime_ns.wrapping_add(unzigzag(r.var()?));
        let stat = crate::node::Stat {
            size,
            mtime_ns,
            ctime_ns,
            ino: r.var()?,
            mode: u32::try_from(r.var()?).ok()?,
        };
        self.mtime = mtime_ns;
        let entry = TreeEntry {
            kind,
            node_id,
            content_hash,
            stat,
        };
        Some((&self.path, entry))
    }
}

/// One half of the tree being kept as it is read ([`Store::keep_tree`] finishes it): each part
/// committed as it fills, while the table is still in the state it is the tree of.
pub(super) struct Records {
    state: Hash,
    half: usize,
    part: Part,
    /// Full parts, in order: those since the last commit wait in `batch`.
    done: u32,
    batch: Batch,
    /// Whether every part so far was kept.
    kept: bool,
}

impl Records {
    /// Half `half` (0 or 1) of the kept tree of the table in `state`, no entry yet.
    pub(super) fn of(state: Hash, half: usize) -> Records {
        Records {
            state,
            half,
            part: Part::of(state),
            done: 0,
            batch: Batch::default(),
            kept: true,
        }
    }

    /// The next entry of the half, in path order; a full part goes to the store now.
    pub(super) fn push(&mut self, store: &Store, path: &str, entry: &TreeEntry) {
        if !self.kept {
            // A part was refused (the tree changed): the rest would be thrown away.
            return;
        }
        self.part.push(path, entry);
        if self.part.entries < PART_ENTRIES && self.part.w.0.len() < PART_FILL {
            return;
        }
        let full = std::mem::replace(&mut self.part, Part::of(self.state));
        self.batch
            .put(Table::Kept, part_key(self.half, self.done), full.w.0);
        self.done += 1;
        if self.done.is_multiple_of(PARTS_A_COMMIT) {
            let mut batch = std::mem::take(&mut self.batch);
            // No record names these parts until they are all there: one of this state naming
            // parts laid out otherwise would read some of them as the whole half.
            batch.delete(Table::Meta, META_TREE_KEPT_OF.to_vec());
            self.kept = store.commit_if_tree_is(self.state, batch);
        }
    }
}

impl Store {
    /// The state of the tree table: its root, stamp (and racy record), counts and the number of
    /// commits that wrote it, hashed. Every commit that writes the table changes it.
    pub(super) fn tree_state(&self) -> Result<Hash> {
        let mut h = blake3::Hasher::new();
        for key in [META_ROOT, META_STAMP, META_COUNTS, META_TREE_GEN] {
            match self.engine.get(Table::Meta, key)? {
                Some(v) => {
                    h.update(&[1]);
                    h.update(&(v.len() as u64).to_le_bytes());
                    h.update(&v);
                }
                None => {
                    h.update(&[0]);
                }
            }
        }
        Ok(Hash(*h.finalize().as_bytes()))
    }

    /// Counts a commit that writes the tree table into `batch`, which writes it.
    pub(super) fn count_tree_write(&self, batch: &mut Batch) -> Result<()> {
        let count = self
            .engine
            .get(Table::Meta, META_TREE_GEN)?
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map_or(0, u64::from_le_bytes);
        batch.put(
            Table::Meta,
            META_TREE_GEN.to_vec(),
            count.wrapping_add(1).to_le_bytes().to_vec(),
        );
        Ok(())
    }

    /// Whether the tree table is kept as it is now: a whole-tree read of this handle then
    /// takes the kept tree instead of walking the table.
    pub fn tree_kept(&self) -> Result<bool> {
        Ok(self.kept()?.is_some())
    }

    /// The kept tree, where it is of the table as it is now.
    pub(super) fn kept(&self) -> Result<Option<Kept>> {
        let state = self.tree_state()?;
        let of = self.engine.get(Table::Meta, META_TREE_KEPT_OF)?;
        // Its state, then each half's number of parts, then their format: parts of another
        // (an older version's, of other sizes) are not counted as these counts say.
        // A count of 0 is never written: a damaged record, not an empty half.
        Ok(of
            .filter(|of| {
                of.get(..32) == Some(&state.0[..]) && of.len() == 41 && of.get(40) == Some(&FORMAT)
            })
            .map(|of| kept_parts(&of))
            .filter(|parts| parts.iter().all(|&n| n > 0))
            .map(|parts| Kept { state, parts }))
    }

    /// The entries of half `half` (0 or 1) of the kept tree, in path order, while `visit`
    /// returns true, read part by part where the engine holds them. `None` when a part is
    /// missing, of another state or does not read (a damaged record).
    pub(super) fn visit_kept_half(
        &self,
        kept: Kept,
        half: usize,
        mut visit: impl FnMut(&str, TreeEntry) -> bool,
    ) -> Result<Option<()>> {
        for part in 0..kept.parts.get(half).copied().unwrap_or_default() {
            match self.visit_kept_part(kept, half, part, &mut visit)? {
                None => return Ok(None),
                Some(false) => return Ok(Some(())),
                Some(true) => {}
            }
        }
        Ok(Some(()))
    }

    /// The entries of part `part` of half `half` of the kept tree, in path order, while
    /// `visit` returns true: `Some(true)` where it read them all, `Some(false)` where `visit`
    /// stopped it, `None` where the part is missing, of another state or does not read.
    pub(super) fn visit_kept_part(
        &self,
        kept: Kept,
        half: usize,
        part: u32,
        visit: &mut impl FnMut(&str, TreeEntry) -> bool,
    ) -> Result<Option<bool>> {
        let mut read = None;
        self.engine
            .visit_value(Table::Kept, &part_key(half, part), &mut |bytes| {
                let Some(bytes) = bytes else { return };
                let mut r = Reader::new(bytes);
                read = (|| {
                    (r.u8()? == FORMAT && r.hash()? == kept.state).then_some(())?;
                    let mut entries = Entries {
                        r,
                        path: String::new(),
                        mtime: 0,
                    };
                    while let Some(next) = entries.next() {
                        let (path, entry) = next?;
                        if !visit(path, entry) {
                            return Some(false);
                        }
                    }
                    Some(true)
                })();
            })?;
        Ok(read)
    }

    /// Commits `batch` where the tree table is still in `state`, under the write lock (no
    /// commit of this handle lands between the check and the commit); whether it did.
    fn commit_if_tree_is(&self, state: Hash, batch: Batch) -> bool {
        let _guard = self.lock();
        matches!(self.tree_state(), Ok(now) if now == state) && self.engine.commit(batch).is_ok()
    }

    /// Keeps `halves` (every entry of the table, in path order, in one or two halves, their
    /// full parts already committed) as the kept tree of the table in their state, where it is
    /// still in that state and this handle can write. A cache: a failure to keep it is not an
    /// error.
    pub(super) fn keep_tree(&self, halves: Vec<Records>) {
        if self.is_read_only() || halves.iter().any(|h| !h.kept) {
            return;
        }
        let Some(state) = halves.first().map(|h| h.state) else {
            return;
        };
        let mut batch = Batch::default();
        let mut parts = [0u32; 2];
        for h in halves {
            if let Some(n) = parts.get_mut(h.half) {
                *n = h.done + 1;
            }
            // The full parts not yet committed, then the last.
            batch.ops.extend(h.batch.ops);
            batch.put(Table::Kept, part_key(h.half, h.done), h.part.w.0);
        }
        // A half the table was not split into: one empty part.
        for (half, n) in parts.iter_mut().enumerate() {
            if *n == 0 {
                *n = 1;
                batch.put(Table::Kept, part_key(half, 0), Part::of(state).w.0);
            }
        }
        let mut of = state.0.to_vec();
        of.extend_from_slice(&parts[0].to_le_bytes());
        of.extend_from_slice(&parts[1].to_le_bytes());
        of.push(FORMAT);
        batch.put(Table::Meta, META_TREE_KEPT_OF.to_vec(), of);
        // Where a store of an earlier version kept it.
        for key in META_TREE_KEPT_BEFORE {
            batch.delete(Table::Meta, key.to_vec());
        }
        for key in HALVES_BEFORE {
            batch.delete(Table::Kept, key.to_vec());
        }
        // Parts past the new counts: an earlier, larger tree's, or those of a keeping that a
        // change of the tree or a crash cut short.
        for (half, &now) in parts.iter().enumerate() {
            let prefix = format!("tree:{half}:").into_bytes();
            let _ = self
                .engine
                .scan(Table::Kept, &part_key(half, now), &mut |k, _| {
                    if !k.starts_with(&prefix) {
                        return false;
                    }
                    batch.delete(Table::Kept, k.to_vec());
                    true
                });
        }
        self.commit_if_tree_is(state, batch);
    }
}

#[cfg(test)]
mod tests {
    use crate::{OpenOptions, ScanOptions, Store};

    /// A part's entries read back as they were pushed: paths sharing part of a character with
    /// the path before, the stat's extremes, mtimes going back and forth, a ctime before its
    /// mtime; and a part cut short, or with a path said to share more than the one before
    /// holds, does not read.
    #[test]
    fn a_parts_entries_read_back_as_written_and_damage_does_not_read() {
        use super::{Entries, Part};
        use crate::hash::Hash;
        use crate::node::{NodeKind, Stat, TreeEntry};
        let entry = |n: u8, mtime_ns: i64, ctime_ns: i64, ino: u64| TreeEntry {
            kind: if n.is_multiple_of(2) {
                NodeKind::File
            } else {
                NodeKind::Dir
            },
            node_id: Hash([n; 32]),
            content_hash: Hash([n.wrapping_add(1); 32]),
            stat: Stat {
                size: u64::from(n) << 40,
                mtime_ns,
                ctime_ns,
                ino,
                mode: 0o100_644,
            },
        };
        let written = [
            (
                "a/caf\u{e9}.rs",
                entry(0, 1_700_000_000_123_456_789, 1_700_000_000_123_456_789, 7),
            ),
            ("a/caf\u{e8}.rs", entry(1, i64::MIN, i64::MAX, u64::MAX)),
            ("a/caf\u{e8}/x", entry(2, i64::MAX, i64::MIN, 0)),
            ("b", entry(3, -5, 3, 1)),
            ("b/\u{1F600}", entry(4, 0, -1, 2)),
        ];
        let mut part = Part::of(Hash([9; 32]));
        for (path, e) in &written {
            part.push(path, e);
        }
        let bytes = part.w.0;
        let header = 1 + 32;
        let read = |bytes: &[u8]| -> Option<Vec<(String, TreeEntry)>> {
            let mut entries = Entries {
                r: crate::codec::Reader::new(bytes),
                path: String::new(),
                mtime: 0,
            };
            let mut out = Vec::new();
            while let Some(next) = entries.next() {
                let (path, e) = next?;
                out.push((path.to_owned(), e));
            }
            Some(out)
        };
        let back = read(&bytes[header..]).expect("reads");
        let want: Vec<(String, TreeEntry)> =
            written.iter().map(|(p, e)| ((*p).to_owned(), *e)).collect();
        assert_eq!(back, want);
        assert_eq!(read(&bytes[header..bytes.len() - 1]), None);
        // The first entry said to share a byte with an empty path before it.
        let mut bad = bytes[header..].to_vec();
        bad[0] = 1;
        assert_eq!(read(&bad), None);
        // An entry said to share the path before it up to the middle of its `é`.
        let mut part = Part::of(Hash([9; 32]));
        part.push(written[0].0, &written[0].1);
        let e = &written[1].1;
        let mid = "a/caf".len() + 1;
        part.w.var(mid as u64).var_str("x").u8(e.kind.code());
        part.w.hash(&e.node_id).hash(&e.content_hash);
        part.w.var(0).var(0).var(0).var(0).var(0);
        assert_eq!(read(&part.w.0[header..]), None);
    }

    /// A store of `files` files spread over `folders` folders, scanned.
    fn scanned(files: usize, folders: usize) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..files {
            let at = dir.path().join(format!("d{}/f{i:02}.txt", i % folders));
            std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&at, format!("{i}\n")).expect("write");
        }
        let store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
        store.scan(&ScanOptions::default()).expect("scan");
        (dir, store)
    }

    /// A tree kept in many parts reads back whole from them, half by half, with no walk of the
    /// table to fall back on.
    #[test]
    fn a_tree_kept_in_parts_reads_back_from_them() {
        let (dir, store) = scanned(40, 4);
        let walked = store.tree_files().expect("tree files");
        assert_eq!(walked.len(), 40);
        let kept = store.kept().expect("read").expect("kept");
        assert!(kept.parts.iter().sum::<u32>() > 4, "{:?}", kept.parts);
        let mut read = Vec::new();
        for half in 0..2 {
            let whole = store.visit_kept_half(kept, half, |path, e| {
                if e.kind.is_leaf() {
                    read.push(path.to_owned());
                }
                true
            });
            assert_eq!(whole.expect("read"), Some(()), "half {half}");
        }
        let paths: Vec<String> = walked.into_iter().map(|f| f.path).collect();
        assert_eq!(read, paths);

        // A smaller tree kept: the larger one's parts past its counts go.
        std::fs::remove_dir_all(dir.path().join("d1")).expect("rm");
        std::fs::remove_dir_all(dir.path().join("d2")).expect("rm");
        store.scan(&ScanOptions::default()).expect("rescan");
        assert_eq!(store.tree_files().expect("tree files").len(), 20);
        let smaller = store.kept().expect("read").expect("kept");
        assert!(smaller.parts.iter().sum::<u32>() < kept.parts.iter().sum::<u32>());
        let parts = store
            .space()
            .expect("space")
            .into_iter()
            .find(|s| s.kind == "kept")
            .map_or(0, |s| s.entries);
        assert_eq!(parts, u64::from(smaller.parts.iter().sum::<u32>()));
    }

    /// Returns once the clock has passed every stat under `root`, so that a scan's stamp is
    /// later than them and they vouch for what they describe (as `tests/common`'s `settle`).
    #[cfg(unix)]
    fn settle(root: &std::path::Path) {
        use std::os::unix::fs::MetadataExt;
        let ns = |m: &std::fs::Metadata| {
            let at = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
            at(m.mtime(), m.mtime_nsec()).max(at(m.ctime(), m.ctime_nsec()))
        };
        let mut newest = 0;
        let mut todo = vec![root.to_path_buf()];
        while let Some(path) = todo.pop() {
            let m = std::fs::symlink_metadata(&path).expect("stat");
            newest = newest.max(ns(&m));
            if m.is_dir() {
                for e in std::fs::read_dir(&path).expect("read dir") {
                    todo.push(e.expect("entry").path());
                }
            }
        }
        let parent = root.parent().expect("a parent");
        let probe = tempfile::NamedTempFile::new_in(parent).expect("probe");
        loop {
            std::fs::write(probe.path(), "tick").expect("write probe");
            if ns(&std::fs::metadata(probe.path()).expect("stat probe")) > newest {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// The stat check reads every part of a kept tree, its two threads taking them in turn (so
    /// a thread's parts are not next to each other): a tree that holds is vouched for, and an
    /// edit in the first part, a middle one or the last, or a file added to a folder in the
    /// middle, is seen.
    #[cfg(unix)]
    #[test]
    fn the_stat_check_reads_every_part_taking_them_in_turn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        };
        for i in 0..60 {
            write(&format!("d{}/f{i:02}.txt", i / 10), &format!("{i}\n"));
        }
        let store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
        let vouched = |store: &Store| {
            settle(dir.path());
            store.scan(&ScanOptions::default()).expect("scan");
            store.tree_files().expect("tree files");
            let kept = store.kept().expect("read").expect("kept");
            assert!(kept.parts.iter().sum::<u32>() > 10, "{:?}", kept.parts);
            let root = store.root().expect("root");
            assert!(root.is_some());
            assert_eq!(store.unchanged_on_disk().expect("check"), root);
        };
        vouched(&store);
        for rel in ["d0/f00.txt", "d3/f35.txt", "d5/f59.txt"] {
            write(rel, "edited, longer\n");
            assert_eq!(store.unchanged_on_disk().expect("check"), None, "{rel}");
            vouched(&store);
        }
        write("d2/new.txt", "new\n");
        assert_eq!(
            store.unchanged_on_disk().expect("check"),
            None,
            "an added file"
        );
    }

    /// A record of the parts that does not name their format (as one before format 4 was
    /// written, of parts 16 times as large: one part a half) names no kept tree, though parts
    /// of this state are there: the tree is read whole from the table, not cut at the record's
    /// counts, and a writable handle's read keeps it again, with its format.
    #[test]
    fn a_kept_tree_of_another_format_is_not_read_as_this_one() {
        use crate::engine::{Batch, Table};
        use crate::keys::META_TREE_KEPT_OF;
        let (_dir, store) = scanned(30, 3);
        let walked = store.tree_files().expect("tree files");
        assert!(store.tree_kept().expect("read"));
        let of = store
            .engine
            .get(Table::Meta, META_TREE_KEPT_OF)
            .expect("read")
            .expect("a record");
        assert_eq!(of.len(), 41);
        let mut before = of[..32].to_vec();
        before.extend_from_slice(&1u32.to_le_bytes());
        before.extend_from_slice(&1u32.to_le_bytes());
        let mut batch = Batch::default();
        batch.put(Table::Meta, META_TREE_KEPT_OF.to_vec(), before);
        store.engine.commit(batch).expect("commit");
        assert!(!store.tree_kept().expect("read"));
        assert_eq!(store.tree_files().expect("tree files"), walked);
        assert!(store.tree_kept().expect("read"));
        assert_eq!(store.tree_files().expect("tree files"), walked);
    }
}
