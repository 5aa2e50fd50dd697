//! Nodes of the Merkle tree: their kinds, their stored records, and the per-path entries of the
//! last scan that make rescans incremental.
use crate::codec::{Reader, Writer, unzigzag, zigzag};
use crate::error::{Error, Result};
use crate::hash::{self, Hash, NodeId};
pub use crate::kind::NodeKind;

/// One child of a directory, as the directory's record lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Child {
    /// The child's file name.
    pub name: String,
    /// The child's kind.
    pub kind: NodeKind,
    /// The child's NodeID.
    pub node_id: NodeId,
}

/// A stored node: everything its NodeID was derived from, plus its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRecord {
    /// The node's identity.
    pub node_id: NodeId,
    /// Workspace-relative path with `/` separators; the root is the empty string.
    pub path: String,
    /// What the node is.
    pub kind: NodeKind,
    /// blake3 of a leaf's content (a symlink's target); for a directory, the hash of its
    /// children's names, kinds and content hashes, independent of the directory's path.
    pub content_hash: Hash,
    /// Bytes of content for a leaf, number of children for a directory.
    pub size: u64,
    /// A directory's children, sorted by name bytes; empty for a leaf.
    pub children: Vec<Child>,
}

impl NodeRecord {
    /// The NodeID re-derived from the record's fields.
    pub fn derive_id(&self) -> NodeId {
        match self.kind {
            NodeKind::Dir => hash::dir_node_id(
                &self.path,
                self.children.iter().map(|c| (c.name.as_str(), &c.node_id)),
            ),
            kind => hash::leaf_node_id(kind, &self.path, &self.content_hash),
        }
    }

    /// The path of a child of this directory.
    pub fn child_path(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The record in its fixed-width encoding (everything but the NodeID, which it keys): what
    /// a remote keeps, so that a pull re-derives the NodeID from exactly what was stored.
    /// [`NodeRecord::decode`] reads it and the nodes table's own ([`encode_record`]).
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(false)
    }

    /// The record as the nodes table keeps it ([`encode_record`]).
    pub(crate) fn encode_stored(&self) -> Vec<u8> {
        self.encode_as(true)
    }

    fn encode_as(&self, short: bool) -> Vec<u8> {
        encode_record_as(
            short,
            self.kind,
            &self.path,
            &self.content_hash,
            self.size,
            self.children
                .iter()
                .map(|c| (c.name.as_str(), c.kind, &c.node_id)),
        )
    }

    /// Reads what [`NodeRecord::encode`] or [`encode_record`] wrote, for `node_id`; a damaged
    /// record is an error. It does not check the id: [`NodeRecord::derive_id`] does.
    pub fn decode(node_id: NodeId, bytes: &[u8]) -> Result<NodeRecord> {
        let bad = || Error::corrupt("nodes", &node_id.0, "truncated or malformed node record");
        let mut r = Reader::new(bytes);
        let first = r.u8().ok_or_else(bad)?;
        let short = first & SHORT != 0;
        let kind = NodeKind::from_code(first & !SHORT).ok_or_else(bad)?;
        fn string<'a>(r: &mut Reader<'a>, short: bool) -> Option<&'a str> {
            if short { r.var_str() } else { r.str() }
        }
        let number = |r: &mut Reader<'_>| if short { r.var() } else { r.u64() };
        let path = string(&mut r, short).ok_or_else(bad)?.to_owned();
        let content_hash = r.hash().ok_or_else(bad)?;
        let size = number(&mut r).ok_or_else(bad)?;
        let n = number(&mut r).ok_or_else(bad)?;
        let mut children = Vec::with_capacity(usize::try_from(n.min(1 << 20)).unwrap_or(0));
        for _ in 0..n {
            let name = string(&mut r, short).ok_or_else(bad)?.to_owned();
            let kind = r.u8().and_then(NodeKind::from_code).ok_or_else(bad)?;
            let node_id = r.hash().ok_or_else(bad)?;
            children.push(Child {
                name,
                kind,
                node_id,
            });
        }
        if !r.is_empty() {
            return Err(bad());
        }
        Ok(NodeRecord {
            node_id,
            path,
            kind,
            content_hash,
            size,
            children,
        })
    }
}

/// Joins a directory path and a name; the root's children have no leading `/`.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The parent directory path and the file name of a non-root path.
pub(crate) fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// The nodes table's record from a node's parts, so that a scan encodes the records it makes
/// without building each one first: `children` are (name, kind, NodeID), sorted by name. The
/// kind's code with [`SHORT`], then the path, the content hash, the size and the children,
/// lengths and numbers in LEB128: at 100k files 19 bytes a record and 7 a child fewer than
/// [`NodeRecord::encode`]'s fixed widths.
pub(crate) fn encode_record<'a>(
    kind: NodeKind,
    path: &str,
    content_hash: &Hash,
    size: u64,
    children: impl ExactSizeIterator<Item = (&'a str, NodeKind, &'a NodeId)> + Clone,
) -> Vec<u8> {
    encode_record_as(true, kind, path, content_hash, size, children)
}

/// A node record from its parts, short ([`encode_record`]) or fixed-width
/// ([`NodeRecord::encode`]).
fn encode_record_as<'a>(
    short: bool,
    kind: NodeKind,
    path: &str,
    content_hash: &Hash,
    size: u64,
    children: impl ExactSizeIterator<Item = (&'a str, NodeKind, &'a NodeId)> + Clone,
) -> Vec<u8> {
    let width = if short { 2 } else { 8 };
    let names: usize = children
        .clone()
        .map(|(name, _, _)| width + name.len() + 1 + 32)
        .sum();
    let mut w = Writer::with_capacity(1 + width + path.len() + 32 + 2 * width + names);
    let string = |w: &mut Writer, s: &str| {
        if short {
            w.var_str(s)
        } else {
            w.str(s)
        };
    };
    let number = |w: &mut Writer, n: u64| {
        if short {
            w.var(n)
        } else {
            w.u64(n)
        };
    };
    w.u8(if short { SHORT } else { 0 } | kind.code());
    string(&mut w, path);
    w.hash(content_hash);
    number(&mut w, size);
    number(&mut w, children.len() as u64);
    for (name, kind, node_id) in children {
        string(&mut w, name);
        w.u8(kind.code()).hash(node_id);
    }
    w.0
}

/// A map keyed by workspace path. Scans and status build maps of every path in the tree, so
/// they use a fast non-cryptographic hash: the keys come from the local disk, not an adversary.
pub(crate) type PathMap<V> = std::collections::HashMap<String, V, rustc_hash::FxBuildHasher>;
/// A set of workspace paths, hashed as [`PathMap`] is.
pub(crate) type PathSet = std::collections::HashSet<String, rustc_hash::FxBuildHasher>;

/// The stat fields that decide whether a file may have changed since it was last hashed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) ino: u64,
    pub(crate) mode: u32,
}

impl Stat {
    #[cfg(unix)]
    pub(crate) fn of(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: m.size(),
            mtime_ns: m
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(m.mtime_nsec()),
            ctime_ns: m
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(m.ctime_nsec()),
            ino: m.ino(),
            mode: m.mode(),
        }
    }

    /// The same fields from a raw `stat`, as [`Stat::of`] reads them from std's metadata.
    #[cfg(unix)]
    // The raw fields' types differ between targets; on some the casts are no-ops.
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    pub(crate) fn of_raw(st: &rustix::fs::Stat) -> Stat {
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Stat {
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime_ns: ns(st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime_ns: ns(st.st_ctime as i64, st.st_ctime_nsec as i64),
            ino: st.st_ino as u64,
            mode: st.st_mode as u32,
        }
    }

    /// A directory's stat as its tree entry keeps it: what tells whether its list of entries
    /// may have changed (an entry added, removed or renamed changes its mtime and ctime), with
    /// `size` its number of children. All zero (see [`Stat::is_recorded`]) when it vouches for
    /// nothing.
    pub(crate) fn dir_record(self, children: u64) -> Stat {
        Stat {
            size: children,
            ..self
        }
    }

    /// Whether a directory's recorded stat vouches for its list of entries: a real directory's
    /// mode is never zero, and a stat that vouches for nothing is all zero.
    pub(crate) fn is_recorded(&self) -> bool {
        self.mode != 0
    }

    /// Whether a directory with this stat now has the entries it had when `recorded` was taken:
    /// `recorded` vouches for them, and no change to the directory's entries has happened since.
    pub(crate) fn same_dir(&self, recorded: &Stat) -> bool {
        recorded.is_recorded()
            && self.mtime_ns == recorded.mtime_ns
            && self.ctime_ns == recorded.ctime_ns
            && self.ino == recorded.ino
            && self.mode == recorded.mode
    }

    #[cfg(not(unix))]
    pub(crate) fn of(m: &std::fs::Metadata) -> Stat {
        Stat {
            size: m.len(),
            mtime_ns: m.modified().map(system_time_ns).unwrap_or(0),
            ctime_ns: 0,
            ino: 0,
            mode: u32::from(m.permissions().readonly()),
        }
    }
}

/// Nanoseconds since the Unix epoch (negative before it).
#[cfg(not(unix))]
pub(crate) fn system_time_ns(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// The flag on the first byte of a tree entry or a node record in its short form
/// ([`TreeEntry::encode`], [`encode_record`]): the fixed-width form starts with the kind's
/// code, which never has it.
const SHORT: u8 = 0x80;

/// The last scan's entry for one path: its node and, for leaves, the stat it was hashed at.
/// For a directory, `stat.size` holds its number of children and the other fields the stat it
/// had before it was read (see [`Stat::dir_record`]), which lets a later walk skip reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub(crate) kind: NodeKind,
    pub(crate) node_id: NodeId,
    pub(crate) content_hash: Hash,
    pub(crate) stat: Stat,
}

impl TreeEntry {
    /// The tree table's value for the entry: [`SHORT`] with its kind, its hashes, then its
    /// stat in LEB128 numbers, the ctime as its difference from the mtime (zigzagged): under 90
    /// bytes as a rule, where the fixed-width form [`TreeEntry::read`] also reads took 105.
    pub fn encode(&self) -> Vec<u8> {
        let stat = &self.stat;
        let mut w = Writer::with_capacity(1 + 32 + 32 + 24);
        w.u8(SHORT | self.kind.code())
            .hash(&self.node_id)
            .hash(&self.content_hash)
            .var(stat.size)
            .var(zigzag(stat.mtime_ns))
            .var(zigzag(stat.ctime_ns.wrapping_sub(stat.mtime_ns)))
            .var(stat.ino)
            .var(u64::from(stat.mode));
        w.0
    }

    /// The fixed-width form: what the tree table held before [`TreeEntry::encode`]'s.
    #[cfg(test)]
    pub(crate) fn encode_fixed(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(1 + 32 + 32 + 5 * 8);
        self.write(&mut w);
        w.0
    }

    /// Appends the fixed-width form's bytes to `w`.
    #[cfg(test)]
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u8(self.kind.code())
            .hash(&self.node_id)
            .hash(&self.content_hash)
            .u64(self.stat.size)
            .i64(self.stat.mtime_ns)
            .i64(self.stat.ctime_ns)
            .u64(self.stat.ino)
            .u64(u64::from(self.stat.mode));
    }

    /// Reads a tree table value in either form.
    pub(crate) fn decode(path: &[u8], bytes: &[u8]) -> Result<TreeEntry> {
        let mut r = Reader::new(bytes);
        let entry = match bytes.first() {
            Some(b) if b & SHORT != 0 => TreeEntry::read_short(&mut r),
            _ => TreeEntry::read(&mut r),
        };
        match entry {
            Some(e) if r.is_empty() => Ok(e),
            _ => Err(Error::corrupt(
                "tree",
                path,
                "truncated or malformed tree entry",
            )),
        }
    }

    /// Reads what [`TreeEntry::encode`] wrote; `None` if it is malformed.
    fn read_short(r: &mut Reader<'_>) -> Option<TreeEntry> {
        let kind = r.u8().and_then(|b| NodeKind::from_code(b & !SHORT))?;
        let (node_id, content_hash) = (r.hash()?, r.hash()?);
        let size = r.var()?;
        let mtime_ns = unzigzag(r.var()?);
        Some(TreeEntry {
            kind,
            node_id,
            content_hash,
            stat: Stat {
                size,
                mtime_ns,
                ctime_ns: mtime_ns.wrapping_add(unzigzag(r.var()?)),
                ino: r.var()?,
                mode: r.var().and_then(|m| u32::try_from(m).ok())?,
            },
        })
    }

    /// Reads the fixed-width form; `None` if it is malformed.
    pub(crate) fn read(r: &mut Reader<'_>) -> Option<TreeEntry> {
        Some(TreeEntry {
            kind: r.u8().and_then(NodeKind::from_code)?,
            node_id: r.hash()?,
            content_hash: r.hash()?,
            stat: Stat {
                size: r.u64()?,
                mtime_ns: r.i64()?,
                ctime_ns: r.i64()?,
                ino: r.u64()?,
                mode: r.u64().and_then(|m| u32::try_from(m).ok())?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: NodeKind, mtime_ns: i64, ctime_ns: i64) -> TreeEntry {
        TreeEntry {
            kind,
            node_id: hash::content_hash(b"node"),
            content_hash: hash::content_hash(b"content"),
            stat: Stat {
                size: 4096,
                mtime_ns,
                ctime_ns,
                ino: 1 << 40,
                mode: 0o100644,
            },
        }
    }

    #[test]
    fn a_tree_entry_reads_back_in_either_form() {
        let now = 1_764_000_000_123_456_789;
        for e in [
            entry(NodeKind::File, now, now),
            entry(NodeKind::Dir, now, now - 5),
            entry(NodeKind::Symlink, -1, i64::MAX),
            entry(NodeKind::File, i64::MIN, i64::MAX),
        ] {
            let short = e.encode();
            assert_eq!(TreeEntry::decode(b"p", &short).expect("short"), e);
            let fixed = e.encode_fixed();
            assert_eq!(fixed.len(), 105);
            assert_eq!(TreeEntry::decode(b"p", &fixed).expect("fixed"), e);
        }
        assert_eq!(entry(NodeKind::File, now, now).encode().len(), 86);
        for bad in [&b""[..], &[0x81][..], &[0x84; 90][..]] {
            assert!(TreeEntry::decode(b"p", bad).is_err(), "{bad:?}");
        }
        let mut long = entry(NodeKind::File, now, now).encode();
        long.push(0);
        assert!(TreeEntry::decode(b"p", &long).is_err(), "a byte left over");
    }

    #[test]
    fn a_node_record_reads_back_in_either_form() {
        let file = NodeRecord {
            node_id: hash::content_hash(b"file"),
            path: "src/caf\u{e9}.rs".to_owned(),
            kind: NodeKind::File,
            content_hash: hash::content_hash(b"content"),
            size: 1 << 40,
            children: Vec::new(),
        };
        let dir = NodeRecord {
            node_id: hash::content_hash(b"dir"),
            path: "src".to_owned(),
            kind: NodeKind::Dir,
            content_hash: hash::content_hash(b"children"),
            size: 2,
            children: vec![
                Child {
                    name: "caf\u{e9}.rs".to_owned(),
                    kind: NodeKind::File,
                    node_id: file.node_id,
                },
                Child {
                    name: "link".to_owned(),
                    kind: NodeKind::Symlink,
                    node_id: hash::content_hash(b"link"),
                },
            ],
        };
        for record in [&file, &dir] {
            let (fixed, stored) = (record.encode(), record.encode_stored());
            assert_eq!(
                NodeRecord::decode(record.node_id, &fixed).expect("fixed"),
                *record
            );
            assert_eq!(
                NodeRecord::decode(record.node_id, &stored).expect("stored"),
                *record
            );
            // The path's length, the size (6 of 8 bytes for 2^40, 1 for 2), the count of
            // children, and each child's name's length, each in fewer bytes.
            let fewer = if record.children.is_empty() {
                7 + 2 + 7
            } else {
                7 + 7 + 7 + 2 * 7
            };
            assert_eq!(fixed.len() - stored.len(), fewer, "{}", record.path);
            let mut long = stored.clone();
            long.push(0);
            assert!(NodeRecord::decode(record.node_id, &long).is_err());
            assert!(NodeRecord::decode(record.node_id, &stored[..stored.len() - 1]).is_err());
        }
        assert!(
            NodeRecord::decode(file.node_id, &[0x84]).is_err(),
            "no such kind"
        );
    }
}
