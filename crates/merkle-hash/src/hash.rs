//! Hashes and the one domain-separated, length-prefixed encoding ([`Encoder`]) that every
//! identity of the workspace hashes: the store's NodeIDs and FrameIDs, and the keys other crates
//! derive (memo keys, a frame's basis, what a producer read, the search index's keys).
//!
//! Each encoding starts with a domain tag and a kind tag, and every variable-length field is
//! prefixed with its length as a little-endian u64, so that no two different inputs can encode
//! to the same bytes: these functions are the contract that makes a hash the same on every
//! machine and OS.
use std::fmt;

/// A 32-byte blake3 hash: a NodeID, a FrameID, a content hash or a basis.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash(pub [u8; 32]);

/// The identity of a node in the Merkle tree.
pub type NodeId = Hash;
/// The identity of a frame.
pub type FrameId = Hash;

impl Hash {
    /// The hash as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// Parses exactly 64 hex digits.
    pub fn from_hex(s: &str) -> Option<Hash> {
        if s.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks(2).enumerate() {
            out[i] = (hex_val(pair[0])? << 4) | hex_val(pair[1])?;
        }
        Some(Hash(out))
    }

    /// A hash from exactly 32 bytes; `None` for any other length.
    pub fn from_slice(bytes: &[u8]) -> Option<Hash> {
        <[u8; 32]>::try_from(bytes).ok().map(Hash)
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", &self.to_hex()[..16])
    }
}

/// Lowercase hex of any bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The value of one hex digit.
pub fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The domain tag that starts every encoding; bump it to change every identity at once.
const DOMAIN: &[u8] = b"merkle/v1";

/// Builds one domain-separated, length-prefixed encoding and hashes it: the workspace's one
/// framing of an identity. It starts with the domain tag (`merkle/v1`) and `kind`, each
/// length-prefixed; [`Encoder::bytes`] adds a length-prefixed field, [`Encoder::hash`] and
/// [`Encoder::count`] fixed-width ones, so no two different inputs encode to the same bytes.
/// The store's NodeIDs and FrameIDs are made with it, and so are the identities other crates
/// derive (a synthesized frame's basis, what its policy read).
pub struct Encoder(blake3::Hasher);

impl Encoder {
    /// An encoding of `kind` (`dir`, `frame`, `synthesis`, ...).
    pub fn new(kind: &str) -> Encoder {
        let mut e = Encoder(blake3::Hasher::new());
        e.bytes(DOMAIN);
        e.bytes(kind.as_bytes());
        e
    }

    /// A variable-length field: its length (little-endian u64), then its bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Encoder {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// A hash, 32 bytes as they are.
    pub fn hash(&mut self, h: &Hash) -> &mut Encoder {
        self.0.update(&h.0);
        self
    }

    /// A count (little-endian u64), as a list's length before its items.
    pub fn count(&mut self, n: usize) -> &mut Encoder {
        self.0.update(&(n as u64).to_le_bytes());
        self
    }

    /// The blake3 hash of the encoding so far.
    pub fn finish(&self) -> Hash {
        Hash(*self.0.finalize().as_bytes())
    }
}

/// The content hash of a leaf: blake3 of the bytes alone, no domain tag, so that it equals what
/// `b3sum` prints for the same file.
pub fn content_hash(content: &[u8]) -> Hash {
    Hash(*blake3::hash(content).as_bytes())
}
