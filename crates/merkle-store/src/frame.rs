//! Frames: immutable, attributed pieces of context attached to nodes.
use std::collections::BTreeMap;

use crate::codec::{Reader, Writer};
use crate::error::{Error, Result};
use crate::hash::{FrameId, Hash, NodeId};

/// Facts about a frame that are not part of its identity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameMetadata {
    /// Milliseconds since the Unix epoch when the frame was first put.
    pub created_at_ms: u64,
    /// The LLM provider that produced the content, if any.
    pub provider: Option<String>,
    /// The model that produced the content, if any.
    pub model: Option<String>,
    /// Free key/values.
    pub extra: BTreeMap<String, String>,
}

/// A stored frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// blake3 over (basis, content, frame type, agent).
    pub frame_id: FrameId,
    /// The node the frame is attached to.
    pub node_id: NodeId,
    /// What kind of context this is (`summary`, `notes`, ...).
    pub frame_type: String,
    /// The agent that put it.
    pub agent_id: String,
    /// The hash of what the frame was derived from.
    pub basis: Hash,
    /// UTF-8 text or bytes.
    pub content: Vec<u8>,
    /// Facts not part of the identity.
    pub metadata: FrameMetadata,
    /// The frame's position in the store's append order.
    pub seq: u64,
}

impl Frame {
    /// The FrameID re-derived from the frame's fields.
    pub fn derive_id(&self) -> FrameId {
        crate::hash::frame_id(&self.basis, &self.content, &self.frame_type, &self.agent_id)
    }

    /// The content as text, if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.content).ok()
    }

    /// The frame's record: its fields, with its content in place or, where `body` names it,
    /// held apart in the bodies table (see `store/bodies.rs`). Lengths and integers take the
    /// bytes they need.
    pub(crate) fn encode(&self, body: Option<&Hash>) -> Vec<u8> {
        let mut w = Writer::with_capacity(128 + body.map_or(self.content.len(), |_| 0));
        let own_basis = self.basis == self.node_id;
        // Each value's hash where it spells one; values are tagged only where one does.
        let hashes: Vec<Option<Hash>> = self.metadata.extra.values().map(|v| hex_hash(v)).collect();
        let tagged = hashes.iter().any(Option::is_some);
        let flags = (u8::from(body.is_some()) * APART)
            | (u8::from(own_basis) * OWN_BASIS)
            | (u8::from(tagged) * TAGGED_EXTRA)
            | WORDS;
        w.u64(RECORD_V2).u8(flags).var(self.seq).hash(&self.node_id);
        word(&mut w, &self.frame_type);
        word(&mut w, &self.agent_id);
        if !own_basis {
            w.hash(&self.basis);
        }
        match body {
            Some(hash) => w.hash(hash),
            None => w.var_bytes(&self.content),
        };
        let m = &self.metadata;
        w.var(m.created_at_ms)
            .var_opt_str(m.provider.as_deref())
            .var_opt_str(m.model.as_deref())
            .var(m.extra.len() as u64);
        for ((k, v), hash) in m.extra.iter().zip(hashes) {
            word(&mut w, k);
            // A hash in hex (a producer's input) as its 32 bytes: a third of a frame's record.
            match hash {
                Some(hash) => w.u8(HEX_HASH).hash(&hash),
                None if tagged => w.u8(TEXT).var_str(v),
                None => w.var_str(v),
            };
        }
        w.0
    }

    /// Decodes a record: the frame, and the hash of its body where its content is held apart
    /// (the frame's content is then empty, for the store to read).
    pub(crate) fn decode(frame_id: FrameId, bytes: &[u8]) -> Result<(Frame, Option<Hash>)> {
        let mut r = Reader::new(bytes);
        let decoded = match r.u64() {
            Some(RECORD_V2) => decode_v2(frame_id, &mut r),
            // A record written before bodies: its sequence first, every field in place.
            Some(seq) => decode_v1(frame_id, seq, &mut r),
            None => None,
        };
        decoded.filter(|_| r.is_empty()).ok_or_else(|| {
            Error::corrupt("frames", &frame_id.0, "truncated or malformed frame record")
        })
    }
}

/// A frame record's first eight bytes since contents may be held apart: a record written
/// before starts with its sequence number, which never reaches this.
const RECORD_V2: u64 = u64::MAX;
/// A record's flags: its content is held apart (the record names its body), and its basis is
/// its node (the record does not repeat it).
const APART: u8 = 1;
const OWN_BASIS: u8 = 2;
/// Each metadata value is tagged: [`TEXT`] and its text, or [`HEX_HASH`] and the 32 bytes of a
/// value that is 64 lowercase hex digits; a record without the flag has every value as text.
const TAGGED_EXTRA: u8 = 4;
const TEXT: u8 = 0;
const HEX_HASH: u8 = 1;

/// The record's type, agent and metadata keys are words ([`word`]).
const WORDS: u8 = 8;

/// The strings nearly every frame's record holds (its type, its agent, the metadata keys of a
/// generation), each written as its place here: at 100k files 35 bytes of a record's ~180.
/// Only ever added to, at the end: a record names a word by its place.
const WORD_LIST: [&str; 4] = ["summary", "merkle", "producer", "producer.input"];

/// Writes `s` as a word: its place in [`WORD_LIST`] plus one, or 0 and the string.
fn word(w: &mut Writer, s: &str) {
    match WORD_LIST.iter().position(|x| *x == s) {
        Some(i) => w.var(i as u64 + 1),
        None => w.var(0).var_str(s),
    };
}

/// Reads what [`word`] wrote, or a plain string where the record's strings are not words.
fn read_word(r: &mut Reader<'_>, words: bool) -> Option<String> {
    if !words {
        return r.var_str().map(str::to_owned);
    }
    match r.var()? {
        0 => r.var_str().map(str::to_owned),
        n => WORD_LIST
            .get(usize::try_from(n - 1).ok()?)
            .map(|s| (*s).to_owned()),
    }
}

/// The hash a value spells as 64 lowercase hex digits (as [`Hash::to_hex`] writes it).
fn hex_hash(v: &str) -> Option<Hash> {
    let lower = v.len() == 64 && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    lower.then(|| Hash::from_hex(v)).flatten()
}

fn decode_v2(frame_id: FrameId, r: &mut Reader<'_>) -> Option<(Frame, Option<Hash>)> {
    let flags = r
        .u8()
        .filter(|f| f & !(APART | OWN_BASIS | TAGGED_EXTRA | WORDS) == 0)?;
    let words = flags & WORDS != 0;
    let seq = r.var()?;
    let node_id = r.hash()?;
    let frame_type = read_word(r, words)?;
    let agent_id = read_word(r, words)?;
    let basis = if flags & OWN_BASIS != 0 {
        node_id
    } else {
        r.hash()?
    };
    let (content, body) = if flags & APART != 0 {
        (Vec::new(), Some(r.hash()?))
    } else {
        (r.var_bytes()?.to_vec(), None)
    };
    let created_at_ms = r.var()?;
    let provider = r.var_opt_str()?.map(str::to_owned);
    let model = r.var_opt_str()?.map(str::to_owned);
    let mut extra = BTreeMap::new();
    for _ in 0..r.var()? {
        let k = read_word(r, words)?;
        let v = if flags & TAGGED_EXTRA == 0 {
            r.var_str()?.to_owned()
        } else {
            match r.u8()? {
                TEXT => r.var_str()?.to_owned(),
                HEX_HASH => r.hash()?.to_hex(),
                _ => return None,
            }
        };
        extra.insert(k, v);
    }
    let metadata = FrameMetadata {
        created_at_ms,
        provider,
        model,
        extra,
    };
    let frame = Frame {
        frame_id,
        node_id,
        frame_type,
        agent_id,
        basis,
        content,
        metadata,
        seq,
    };
    Some((frame, body))
}

fn decode_v1(frame_id: FrameId, seq: u64, r: &mut Reader<'_>) -> Option<(Frame, Option<Hash>)> {
    let node_id = r.hash()?;
    let frame_type = r.str()?.to_owned();
    let agent_id = r.str()?.to_owned();
    let basis = r.hash()?;
    let content = r.bytes()?.to_vec();
    let metadata = decode_metadata(r)?;
    let frame = Frame {
        frame_id,
        node_id,
        frame_type,
        agent_id,
        basis,
        content,
        metadata,
        seq,
    };
    Some((frame, None))
}

fn decode_metadata(r: &mut Reader<'_>) -> Option<FrameMetadata> {
    let created_at_ms = r.u64()?;
    let provider = r.opt_str()?.map(str::to_owned);
    let model = r.opt_str()?.map(str::to_owned);
    let n = r.u64()?;
    let mut extra = BTreeMap::new();
    for _ in 0..n {
        let k = r.str()?.to_owned();
        let v = r.str()?.to_owned();
        extra.insert(k, v);
    }
    Some(FrameMetadata {
        created_at_ms,
        provider,
        model,
        extra,
    })
}

/// A frame to put: everything but the ids the store derives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFrame {
    /// The node to attach it to.
    pub node_id: NodeId,
    /// Its type.
    pub frame_type: String,
    /// The writing agent; it must be registered with a role that may write.
    pub agent_id: String,
    /// What it was derived from; `None` means the node itself (its NodeID).
    pub basis: Option<Hash>,
    /// Its content.
    pub content: Vec<u8>,
    /// Facts not part of the identity.
    pub metadata: FrameMetadata,
}

impl NewFrame {
    /// A frame on `node_id` whose basis is the node itself, created now.
    pub fn new(node_id: NodeId, frame_type: &str, agent_id: &str, content: Vec<u8>) -> NewFrame {
        NewFrame {
            node_id,
            frame_type: frame_type.to_owned(),
            agent_id: agent_id.to_owned(),
            basis: None,
            content,
            metadata: FrameMetadata {
                created_at_ms: now_ms(),
                ..FrameMetadata::default()
            },
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The outcome of a put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PutOutcome {
    /// The frame's id.
    pub frame_id: FrameId,
    /// False when an identical frame was already stored (the put changed nothing).
    pub created: bool,
}

/// Checks a name used as a frame type or an agent id: 1 to 128 characters of
/// `[A-Za-z0-9_.:@-]`, so that it is safe in keys, paths and shells.
pub fn check_name(what: &'static str, value: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '@' | '-');
    let reason = if value.is_empty() {
        "must not be empty"
    } else if value.len() > 128 {
        "must be at most 128 characters"
    } else if !value.chars().all(ok_char) {
        "may contain only letters, digits and _ . : @ -"
    } else {
        return Ok(());
    };
    Err(Error::Invalid {
        what,
        value: value.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(basis: Hash, content: &[u8]) -> Frame {
        let node_id = Hash([7; 32]);
        let mut extra = BTreeMap::new();
        extra.insert("k".to_owned(), "v".to_owned());
        extra.insert("input".to_owned(), Hash([0xab; 32]).to_hex());
        extra.insert("upper".to_owned(), Hash([0xab; 32]).to_hex().to_uppercase());
        Frame {
            frame_id: crate::hash::frame_id(&basis, content, "summary", "merkle"),
            node_id,
            frame_type: "summary".to_owned(),
            agent_id: "merkle".to_owned(),
            basis,
            content: content.to_vec(),
            metadata: FrameMetadata {
                created_at_ms: 42,
                provider: Some("sim".to_owned()),
                model: None,
                extra,
            },
            seq: 9,
        }
    }

    #[test]
    fn a_record_reads_back_with_its_content_in_place_or_named() {
        for basis in [Hash([7; 32]), Hash([8; 32])] {
            let f = frame(basis, b"pub fn main()");
            let (back, body) = Frame::decode(f.frame_id, &f.encode(None)).expect("decode");
            assert_eq!((back, body), (f.clone(), None));
            let named = Hash([3; 32]);
            let (back, body) = Frame::decode(f.frame_id, &f.encode(Some(&named))).expect("decode");
            assert_eq!(body, Some(named));
            assert_eq!(back.content, b"");
            assert_eq!(
                Frame {
                    content: f.content.clone(),
                    ..back
                },
                f
            );
        }
        // A hash in hex is its 32 bytes; one in capitals stays text, to read back as written.
        let hex = frame(Hash([8; 32]), b"x");
        let mut text = hex.clone();
        text.metadata
            .extra
            .insert("input".to_owned(), "z".repeat(64));
        // The input as 64 digits and a length (65) rather than a tag and 32 bytes (33); the
        // two other values without their tags.
        assert_eq!(hex.encode(None).len() + 32 - 2, text.encode(None).len());
        let back = Frame::decode(text.frame_id, &text.encode(None)).expect("decode");
        assert_eq!(back, (text, None), "untagged where no value is a hash");
        // A v2 record without tagged values has each as text.
        let mut f = frame(Hash([7; 32]), b"y");
        f.metadata.extra.retain(|k, _| k == "input");
        let mut w = Writer::default();
        w.u64(RECORD_V2).u8(OWN_BASIS).var(f.seq).hash(&f.node_id);
        w.var_str(&f.frame_type)
            .var_str(&f.agent_id)
            .var_bytes(&f.content);
        w.var(42).u8(1).var_str("sim").u8(0).var(1);
        w.var_str("input").var_str(&Hash([0xab; 32]).to_hex());
        assert_eq!(Frame::decode(f.frame_id, &w.0).expect("decode"), (f, None));
        // A basis that is the node is not repeated.
        let own = frame(Hash([7; 32]), b"x").encode(None);
        assert_eq!(
            own.len() + 32,
            frame(Hash([8; 32]), b"x").encode(None).len()
        );
    }

    #[test]
    fn a_record_written_before_bodies_is_read_as_it_is() {
        let f = frame(Hash([8; 32]), b"def f(): pass");
        let mut w = Writer::default();
        w.u64(f.seq)
            .hash(&f.node_id)
            .str(&f.frame_type)
            .str(&f.agent_id);
        w.hash(&f.basis)
            .bytes(&f.content)
            .u64(f.metadata.created_at_ms);
        w.u8(1)
            .str("sim")
            .u8(0)
            .u64(3)
            .str("input")
            .str(&Hash([0xab; 32]).to_hex());
        w.str("k")
            .str("v")
            .str("upper")
            .str(&Hash([0xab; 32]).to_hex().to_uppercase());
        assert_eq!(
            Frame::decode(f.frame_id, &w.0).expect("decode"),
            (f.clone(), None)
        );
        let mut bad = f.encode(None);
        bad[8] = 0x80;
        assert!(Frame::decode(f.frame_id, &bad).is_err(), "unknown flags");
        bad.truncate(20);
        assert!(Frame::decode(f.frame_id, &bad).is_err(), "a short record");
    }

    /// The strings of a generation's frames are words: a place in the list, not the string.
    #[test]
    fn a_records_common_strings_are_words() {
        let mut f = frame(Hash([7; 32]), b"x");
        f.metadata.extra.clear();
        f.metadata
            .extra
            .insert("producer".to_owned(), "outline:v7".to_owned());
        f.metadata
            .extra
            .insert("producer.input".to_owned(), Hash([1; 32]).to_hex());
        // The same record with strings of the same lengths no word spells.
        let mut plain = f.clone();
        plain.frame_type = "summarz".to_owned();
        plain.agent_id = "merklz".to_owned();
        plain.metadata.extra = f
            .metadata
            .extra
            .iter()
            .map(|(k, v)| (k.replace('p', "q"), v.clone()))
            .collect();
        for g in [&f, &plain] {
            assert_eq!(
                Frame::decode(g.frame_id, &g.encode(None))
                    .expect("decode")
                    .0,
                *g
            );
        }
        // Each word one byte; each other string a 0 before its length and bytes.
        let strings = "summary merkle producer producer.input".len() - 3;
        assert_eq!(
            f.encode(None).len() + strings + 4 + 4 - 4,
            plain.encode(None).len()
        );
        // Each word's place is fixed: records name words by it.
        for (place, word) in WORD_LIST.iter().enumerate() {
            let mut w = Writer::default();
            super::word(&mut w, word);
            assert_eq!(w.0, [place as u8 + 1]);
        }
        assert_eq!(
            WORD_LIST,
            ["summary", "merkle", "producer", "producer.input"]
        );
        // A place past the list's end does not read.
        let mut bad = f.encode(None);
        let at = 8 + 1 + 1 + 32;
        assert_eq!(bad[at], 1, "the type's word");
        bad[at] = 99;
        assert!(Frame::decode(f.frame_id, &bad).is_err());
    }
}
