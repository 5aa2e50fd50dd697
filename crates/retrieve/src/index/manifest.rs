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
    /// manifest is never a second time in memory (once to hash it, once to write it). Each
    /// path is written as the bytes it shares with the path before (sorted paths share most)
    /// and the rest, numbers as LEB128: half the bytes of whole paths and fixed-width numbers.
    pub(super) fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&FRONT_CODED.to_le_bytes());
        leb128(&mut buf, self.next_slot);
        leb128(&mut buf, self.entries.len() as u64);
        let mut last = "";
        for e in &self.entries {
            let p = self.path(e);
            let shared = common_prefix(last, p);
            leb128(&mut buf, shared as u64);
            leb128(&mut buf, (p.len() - shared) as u64);
            buf.extend_from_slice(&p.as_bytes()[shared..]);
            buf.extend_from_slice(&e.key);
            leb128(&mut buf, e.slot);
            last = p;
            if buf.len() >= 1 << 16 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)
    }

    /// The manifest [`Manifest::write_to`] wrote, or one of the earlier format (whole paths,
    /// fixed-width numbers); `None` for anything else (its paths out of order included).
    pub(super) fn decode(b: &[u8]) -> Option<Manifest> {
        match b.split_first_chunk::<8>() {
            Some((head, rest)) if u64::from_le_bytes(*head) == FRONT_CODED => {
                Manifest::decode_front_coded(rest)
            }
            _ => Manifest::decode_whole(b),
        }
    }

    fn decode_front_coded(mut b: &[u8]) -> Option<Manifest> {
        let next_slot = read_leb128(&mut b)?;
        let n = read_leb128(&mut b)?;
        // Each entry takes at least 35 bytes: a larger count is damage.
        if n > (b.len() / 35) as u64 || b.len() > u32::MAX as usize {
            return None;
        }
        let mut m = Manifest {
            next_slot,
            paths: {
                let mut paths = String::new();
                paths.try_reserve_exact(front_coded_bytes(b, n)?).ok()?;
                paths
            },
            entries: Vec::with_capacity(n as usize),
            by_slot: Vec::new(),
        };
        let mut path = Vec::new();
        for _ in 0..n {
            let shared = usize::try_from(read_leb128(&mut b)?).ok()?;
            let rest = usize::try_from(read_leb128(&mut b)?).ok()?;
            if shared > path.len() {
                return None;
            }
            path.truncate(shared);
            path.extend_from_slice(take(&mut b, rest)?);
            // Paths are found by u32 offsets into one buffer.
            if m.paths.len() + path.len() > u32::MAX as usize {
                return None;
            }
            let p = std::str::from_utf8(&path).ok()?;
            let key: Key = take(&mut b, 32)?.try_into().ok()?;
            let slot = read_leb128(&mut b)?;
            m.push_after_last(p, key, slot)?;
        }
        m.finished(b)
    }

    /// The earlier format: whole paths, each after its length (u32), and fixed-width numbers.
    fn decode_whole(mut b: &[u8]) -> Option<Manifest> {
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
        for _ in 0..n {
            let len = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
            let path = std::str::from_utf8(take(&mut b, len)?).ok()?;
            let key: Key = take(&mut b, 32)?.try_into().ok()?;
            let slot = u64_of(&mut b)?;
            m.push_after_last(path, key, slot)?;
        }
        m.finished(b)
    }

    /// [`Manifest::push`] of a path after the last one pushed; `None` (damage) for one out of
    /// order.
    fn push_after_last(&mut self, path: &str, key: Key, slot: u64) -> Option<()> {
        if self.entries.last().is_some_and(|l| self.path(l) >= path) {
            return None;
        }
        self.push(path, key, slot);
        Some(())
    }

    /// The manifest decoded, where nothing is left of its bytes.
    fn finished(mut self, rest: &[u8]) -> Option<Manifest> {
        if !rest.is_empty() {
            return None;
        }
        self.index_slots();
        Some(self)
    }
}

/// The bytes of the `n` paths front-coded in `b` (after its counts), written whole: the
/// room one buffer of them needs, read ahead so that it never grows (at 100k files, a
/// manifest of 5.1 MB holds 5.6 MB of paths: the buffer made as large as the manifest grew
/// once, copying what it held). `None` for what cannot be a manifest: a path sharing more
/// than the one before holds, or more bytes than its `u32` offsets reach.
fn front_coded_bytes(mut b: &[u8], n: u64) -> Option<usize> {
    let (mut total, mut last) = (0usize, 0usize);
    for _ in 0..n {
        let shared = usize::try_from(read_leb128(&mut b)?).ok()?;
        let rest = usize::try_from(read_leb128(&mut b)?).ok()?;
        if shared > last {
            return None;
        }
        take(&mut b, rest.checked_add(32)?)?;
        read_leb128(&mut b)?;
        last = shared + rest;
        total = total.checked_add(last)?;
        if total > u32::MAX as usize {
            return None;
        }
    }
    Some(total)
}

/// A front-coded manifest's first eight bytes: an earlier manifest starts with its next slot,
/// which never reaches this.
const FRONT_CODED: u64 = u64::MAX;

/// The first `n` bytes of `b`, which moves past them.
fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (head, rest) = b.split_at_checked(n)?;
    *b = rest;
    Some(head)
}

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A LEB128 number; `None` past the end, or for one that does not fit 64 bits.
fn read_leb128(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        // The tenth byte holds the 64th bit alone.
        if shift == 63 && byte > 1 {
            return None;
        }
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
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
        // A path said to share more than the path before it has is damage.
        let mut bad = FRONT_CODED.to_le_bytes().to_vec();
        bad.extend_from_slice(&[1, 1, 3, 1, b'a']);
        bad.extend_from_slice(&key(1));
        bad.push(0);
        assert_eq!(Manifest::decode(&bad), None);
    }

    #[test]
    fn the_room_for_a_manifests_paths_is_theirs_written_whole_and_damage_reserves_none() {
        let m = Manifest::new(
            3,
            vec![
                ("src/lib.rs".to_owned(), key(1), 0),
                ("src/main.rs".to_owned(), key(2), 1),
                ("src/main.rs.bak".to_owned(), key(3), 2),
            ],
        );
        let encoded = m.encode();
        let mut counts = &encoded[8..];
        let (_, n) = (read_leb128(&mut counts), read_leb128(&mut counts));
        let whole = "src/lib.rs".len() + "src/main.rs".len() + "src/main.rs.bak".len();
        assert_eq!(front_coded_bytes(counts, n.expect("n")), Some(whole));
        // A first path said to share 2^40 bytes: no room is asked for it.
        let mut huge = Vec::new();
        leb128(&mut huge, 1 << 40);
        huge.extend_from_slice(&[1, b'a']);
        huge.extend_from_slice(&key(1));
        huge.push(0);
        assert_eq!(front_coded_bytes(&huge, 1), None);
        let mut bad = FRONT_CODED.to_le_bytes().to_vec();
        bad.extend_from_slice(&[1, 1]);
        bad.extend_from_slice(&huge);
        assert_eq!(Manifest::decode(&bad), None);
    }

    #[test]
    fn a_front_coded_manifest_keeps_paths_that_share_part_of_a_character_and_large_numbers() {
        // "aé" and "aè" share the first byte of their last character.
        let m = Manifest::new(
            u64::MAX,
            vec![
                ("aé".to_owned(), key(1), u64::MAX - 1),
                ("aè".to_owned(), key(2), 1 << 63),
            ],
        );
        assert_eq!(Manifest::decode(&m.encode()), Some(m));
        // A number past 64 bits is damage.
        let mut b: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(read_leb128(&mut b), None);
        let mut b: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(read_leb128(&mut b), Some(u64::MAX));
    }

    /// The bytes of a manifest as indexes wrote it before paths were front-coded.
    fn whole(next_slot: u64, entries: &[(&str, Key, u64)]) -> Vec<u8> {
        let mut out = next_slot.to_le_bytes().to_vec();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (path, key, slot) in entries {
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path.as_bytes());
            out.extend_from_slice(key);
            out.extend_from_slice(&slot.to_le_bytes());
        }
        out
    }

    #[test]
    fn a_manifest_of_the_earlier_format_reads_as_it_did_and_is_written_in_fewer_bytes() {
        let entries: Vec<(String, Key, u64)> = (0..200u64)
            .map(|i| {
                (
                    format!("src/module_{:03}/file_{i}.rs", i / 10),
                    key(i as u8),
                    i * 3,
                )
            })
            .collect();
        let borrowed: Vec<(&str, Key, u64)> = entries
            .iter()
            .map(|(p, k, s)| (p.as_str(), *k, *s))
            .collect();
        let old = whole(600, &borrowed);
        let m = Manifest::decode(&old).expect("the earlier format decodes");
        assert_eq!(m, Manifest::new(600, entries));
        assert_eq!(
            m.get("src/module_007/file_75.rs").map(|e| e.slot),
            Some(225)
        );
        let new = m.encode();
        assert_eq!(Manifest::decode(&new), Some(m));
        // Each path shares its folder with the one before, and its numbers are short.
        assert!(
            new.len() + 200 * 25 < old.len(),
            "{} against {}",
            new.len(),
            old.len()
        );
        // Out of order in the earlier format is damage too.
        let swapped = whole(2, &[("b", key(1), 0), ("a", key(2), 1)]);
        assert_eq!(Manifest::decode(&swapped), None);
    }
}
