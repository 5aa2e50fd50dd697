//! The binary encoding of stored records: fixed-width little-endian integers and
//! length-prefixed byte strings, read back with bounds checks so a damaged record is an error,
//! never a panic.
//!
//! Every stored record is read back through [`decode`] (or a record type's own decoder built on
//! [`Reader`]): a record that is short, long or malformed is a [`Error::Corrupt`] naming its
//! table and key, never a default. A counter read as 0 because its bytes were damaged would
//! let new history keys overwrite old ones.
use crate::error::{Error, Result};
use crate::hash::Hash;

/// Reads a whole record with `read`, which must consume every byte: anything else is a
/// [`Error::Corrupt`] naming `table`, `key` and `what` the record should have been.
pub(crate) fn decode<'a, T>(
    table: &'static str,
    key: &[u8],
    bytes: &'a [u8],
    what: &str,
    read: impl FnOnce(&mut Reader<'a>) -> Option<T>,
) -> Result<T> {
    let mut r = Reader::new(bytes);
    match read(&mut r) {
        Some(v) if r.is_empty() => Ok(v),
        _ => Err(Error::corrupt(
            table,
            key,
            format!(
                "expected {what}, found {} bytes that are not one",
                bytes.len()
            ),
        )),
    }
}

/// A signed number as an unsigned one that is small where its magnitude is (for LEB128).
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The number [`zigzag`] was given.
pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    /// A writer for a record of about `n` bytes: the records of a scan are written tens of
    /// thousands at a time, and growing each one's buffer field by field is most of their cost.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Writer(Vec::with_capacity(n))
    }

    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
        self
    }
    pub(crate) fn str(&mut self, v: &str) -> &mut Self {
        self.bytes(v.as_bytes())
    }
    pub(crate) fn hash(&mut self, v: &Hash) -> &mut Self {
        self.0.extend_from_slice(&v.0);
        self
    }
    /// An integer in as few bytes as it needs (LEB128: seven bits a byte, low first), for the
    /// records a store holds a million of, where most lengths fit one byte.
    pub(crate) fn var(&mut self, mut v: u64) -> &mut Self {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    pub(crate) fn var_bytes(&mut self, v: &[u8]) -> &mut Self {
        self.var(v.len() as u64);
        self.0.extend_from_slice(v);
        self
    }
    pub(crate) fn var_str(&mut self, v: &str) -> &mut Self {
        self.var_bytes(v.as_bytes())
    }
    pub(crate) fn var_opt_str(&mut self, v: Option<&str>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(s) => self.u8(1).var_str(s),
        }
    }
}

/// Reads a record; every accessor returns `None` past the end or on invalid UTF-8.
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader(bytes)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        self.take(8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(i64::from_le_bytes)
    }
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    pub(crate) fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    pub(crate) fn hash(&mut self) -> Option<Hash> {
        self.take(32).and_then(Hash::from_slice)
    }
    pub(crate) fn opt_str(&mut self) -> Option<Option<&'a str>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.str()?)),
            _ => None,
        }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// What [`Writer::var`] wrote; `None` past ten bytes or past 64 bits.
    pub(crate) fn var(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return None;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    pub(crate) fn var_bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.var()?).ok()?;
        self.take(n)
    }
    pub(crate) fn var_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.var_bytes()?).ok()
    }
    pub(crate) fn var_opt_str(&mut self) -> Option<Option<&'a str>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.var_str()?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_var_reads_back_in_as_few_bytes_as_it_needs() {
        for (v, len) in [
            (0, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (1 << 40, 6),
            (u64::MAX, 10),
        ] {
            let mut w = Writer::default();
            w.var(v);
            assert_eq!(w.0.len(), len, "{v}");
            let mut r = Reader::new(&w.0);
            assert_eq!((r.var(), r.is_empty()), (Some(v), true), "{v}");
        }
        assert_eq!(Reader::new(&[0x80, 0x80]).var(), None, "cut short");
        assert_eq!(Reader::new(&[0xff; 10]).var(), None, "past 64 bits");
    }
}
