//! The manifest of an index: what it holds, each path's key and slot.
use std::collections::HashMap;

use super::Key;

/// What the index holds: each path's key and slot, sorted by path, the paths in one buffer, so
/// that opening an index costs no allocation per file (a no-op search opens one of 15k files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Manifest {
    pub(super) next_slot: u64,
    /// Every path, one after another.
    paths: String,
    /// Sorted by path.
    pub(super) entries: Vec<Entry>,
    /// (slot, index into `entries`), sorted by slot: the way back from a hit.
    by_slot: Vec<(u64, u32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    /// Where its path is in [`Manifest::paths`].
    start: u32,
    end: u32,
    pub(super) key: Key,
    pub(super) slot: u64,
}

impl Manifest {
    /// From (path, key, slot) in any order.
    pub(super) fn new(next_slot: u64, mut all: Vec<(String, Key, u64)>) -> Manifest {
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut m = Manifest {
            next_slot,
            paths: String::with_capacity(all.iter().map(|e| e.0.len()).sum()),
            entries: Vec::with_capacity(all.len()),
            by_slot: Vec::new(),
        };
        for (path, key, slot) in all {
            m.push(&path, key, slot);
        }
        m.index_slots();
        m
    }

    pub(super) fn push(&mut self, path: &str, key: Key, slot: u64) {
        let start = self.paths.len() as u32;
        self.paths.push_str(path);
        self.entries.push(Entry {
            start,
            end: self.paths.len() as u32,
            key,
            slot,
        });
    }

    fn index_slots(&mut self) {
        self.by_slot = (0u32..)
            .zip(&self.entries)
            .map(|(i, e)| (e.slot, i))
            .collect();
        self.by_slot.sort_unstable();
    }

    pub(super) fn path(&self, e: &Entry) -> &str {
        &self.paths[e.start as usize..e.end as usize]
    }

    pub(super) fn get(&self, path: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| self.path(e).cmp(path))
            .ok()
            .map(|i| &self.entries[i])
    }

    pub(super) fn path_of_slot(&self, slot: u64) -> Option<&str> {
        let i = self.by_slot.binary_search_by_key(&slot, |s| s.0).ok()?;
        Some(self.path(&self.entries[self.by_slot[i].1 as usize]))
    }

    /// Every (path, key, slot), for an update to change.
    pub(super) fn to_map(&self) -> HashMap<String, (Key, u64)> {
        self.entries
            .iter()
            .map(|e| (self.path(e).to_owned(), (e.key, e.slot)))
            .collect()
    }

    #[cfg(test)]
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.entries.len() * 96);
        self.write_to(&mut out).expect("a Vec takes every write");
        out
    }

    /// What [`Manifest::decode`] reads, written to `out` as it is made: a million files'
    /// manifest is never a second time in memory (once to hash it, once to write it).
    pub(super) fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.next_slot.to_le_bytes())?;
        out.write_all(&(self.entries.len() as u64).to_le_bytes())?;
        for e in &self.entries {
            let p = self.path(e);
            out.write_all(&(p.len() as u32).to_le_bytes())?;
            out.write_all(p.as_bytes())?;
            out.write_all(&e.key)?;
            out.write_all(&e.slot.to_le_bytes())?;
        }
        Ok(())
    }

    /// The manifest [`Manifest::encode`] wrote; `None` for anything else (its paths out of
    /// order included).
    pub(super) fn decode(mut b: &[u8]) -> Option<Manifest> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (head, rest) = b.split_at_checked(n)?;
            *b = rest;
            Some(head)
        }
        let u64_of = |b: &mut &[u8]| -> Option<u64> {
            Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?))
        };
        let next_slot = u64_of(&mut b)?;
        let n = u64_of(&mut b)?;
        // Each entry takes at least 44 bytes: a larger count is damage.
        if n > (b.len() / 44) as u64 || b.len() > u32::MAX as usize {
            return None;
        }
        let mut m = Manifest {
            next_slot,
            paths: String::with_capacity(b.len() - n as usize * 44),
            entries: Vec::with_capacity(n as usize),
            by_slot: Vec::new(),
        };
        let mut last: Option<Entry> = None;
        for _ in 0..n {
            let len = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
            let path = std::str::from_utf8(take(&mut b, len)?).ok()?;
            if last.is_some_and(|l| m.path(&l) >= path) {
                return None;
            }
            let key: Key = take(&mut b, 32)?.try_into().ok()?;
            let slot = u64_of(&mut b)?;
            m.push(path, key, slot);
            last = m.entries.last().copied();
        }
        if !b.is_empty() {
            return None;
        }
        m.index_slots();
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> Key {
        [b; 32]
    }

    #[test]
    fn a_manifest_reads_back_what_it_wrote_and_nothing_out_of_order() {
        let m = Manifest::new(
            9,
            vec![
                ("src/z.rs".to_owned(), key(1), 4),
                ("a.md".to_owned(), key(2), 8),
                ("src/a b.rs".to_owned(), key(3), 0),
            ],
        );
        let back = Manifest::decode(&m.encode()).expect("decodes");
        assert_eq!(back, m);
        let paths: Vec<&str> = back.entries.iter().map(|e| back.path(e)).collect();
        assert_eq!(paths, ["a.md", "src/a b.rs", "src/z.rs"]);
        assert_eq!(
            back.get("src/z.rs").map(|e| (e.key, e.slot)),
            Some((key(1), 4))
        );
        assert_eq!(back.get("src"), None);
        assert_eq!(back.path_of_slot(8), Some("a.md"));
        assert_eq!(back.path_of_slot(5), None);
        assert_eq!(back.to_map().len(), 3);

        // The same entries written in another order are damage, as is a byte too many.
        let mut swapped = Manifest::default();
        swapped.push("b", key(1), 0);
        swapped.push("a", key(2), 1);
        assert_eq!(Manifest::decode(&swapped.encode()), None);
        let mut longer = m.encode();
        longer.push(0);
        assert_eq!(Manifest::decode(&longer), None);
        assert_eq!(Manifest::decode(&[]), None);
    }
}
