//! [`NodeKind`]: what a node is on disk, the tag each kind hashes into its NodeID, and the
//! one-byte code the store's records keep.

/// What a node is on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link, recorded by its target and never followed.
    Symlink,
}

impl NodeKind {
    /// The kind as the CLI's JSON spells it, which is also the kind tag hashed into NodeIDs.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Dir => "dir",
            NodeKind::Symlink => "symlink",
        }
    }

    /// The one-byte code the store's records keep.
    pub fn code(self) -> u8 {
        match self {
            NodeKind::File => 1,
            NodeKind::Dir => 2,
            NodeKind::Symlink => 3,
        }
    }

    /// The kind of a record's code; `None` for a code no kind has.
    pub fn from_code(c: u8) -> Option<NodeKind> {
        match c {
            1 => Some(NodeKind::File),
            2 => Some(NodeKind::Dir),
            3 => Some(NodeKind::Symlink),
            _ => None,
        }
    }

    /// Whether the node is a leaf (a file or a symlink).
    pub fn is_leaf(self) -> bool {
        self != NodeKind::Dir
    }
}
