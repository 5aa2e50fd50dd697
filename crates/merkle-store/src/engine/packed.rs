//! Large values packed (issue #46: a compact store): every engine is opened behind [`Packed`],
//! which stores the values of the tables holding text ([`Table::packed`]: frames, derived
//! facts, kept caches, bodies) as lz4 blocks where that saves space, and hands every reader the
//! bytes as they were written. Nothing above the engine sees packing: validation, exchange and
//! the views read the values they wrote.
//!
//! A packed value is a tag byte and its payload: [`RAW`] and the bytes, or [`LZ4`] and an lz4
//! block with its length before it. A store says in its meta table ([`MARK`]) that its values
//! carry tags; a store written before packing has no mark and its values are read as they are,
//! and written so, until `merkle gc` rewrites it ([`Engine::pack_all`]). A new store is marked
//! with its first commit.
use super::{Batch, Engine, Table};
use crate::error::{Error, Result};

/// The meta key saying a store's values carry tags, and its value.
pub(crate) const MARK: &[u8] = b"values";
const MARK_VALUE: &[u8] = b"lz4";
/// Tags: the bytes as they are, or an lz4 block (`lz4_flex`'s size-prepended format).
const RAW: u8 = 0;
const LZ4: u8 = 1;
/// Values shorter than this are kept raw: lz4 saves nothing on them.
const PACK_MIN: usize = 96;

impl Table {
    /// Whether the table's values are packed: those holding text (a frame's content, a parse's
    /// symbols, a body), where lz4 halves them; hashes and counters would not
    /// shrink.
    pub(crate) fn packed(self) -> bool {
        matches!(
            self,
            Table::Frames | Table::Derived | Table::Kept | Table::Bodies
        )
    }
}

/// The value stored for `value`: tagged, packed where that is smaller.
pub(crate) fn pack(value: &[u8]) -> Vec<u8> {
    if value.len() >= PACK_MIN {
        let block = lz4_flex::block::compress_prepend_size(value);
        // Kept packed only where it saves at least an eighth.
        if block.len() + block.len() / 8 < value.len() {
            let mut out = Vec::with_capacity(block.len() + 1);
            out.push(LZ4);
            out.extend_from_slice(&block);
            return out;
        }
    }
    let mut out = Vec::with_capacity(value.len() + 1);
    out.push(RAW);
    out.extend_from_slice(value);
    out
}

/// A stored value's bytes, or why they cannot be read.
fn unpack(stored: &[u8]) -> std::result::Result<std::borrow::Cow<'_, [u8]>, &'static str> {
    match stored.split_first() {
        Some((&RAW, rest)) => Ok(std::borrow::Cow::Borrowed(rest)),
        Some((&LZ4, rest)) => lz4_flex::block::decompress_size_prepended(rest)
            .map(std::borrow::Cow::Owned)
            .map_err(|_| "a packed value that does not unpack"),
        Some(_) => Err("a value with an unknown packing tag"),
        None => Err("an empty value where a packing tag belongs"),
    }
}

/// An engine whose values of [`Table::packed`] tables are stored packed (see the module
/// documentation).
pub(crate) struct Packed {
    inner: Box<dyn Engine>,
    /// Whether the store's values carry tags: its mark is there, or it was empty when opened
    /// for writing (it is marked with its first commit).
    tagged: std::sync::atomic::AtomicBool,
    /// Whether the next commit writes the mark.
    unmarked: std::sync::atomic::AtomicBool,
}

impl Packed {
    pub(crate) fn open(inner: Box<dyn Engine>, writable: bool) -> Result<Packed> {
        let (marked, empty) = super::marked_or_empty(&*inner, MARK, writable)?;
        Ok(Packed {
            inner,
            tagged: (marked || empty).into(),
            unmarked: empty.into(),
        })
    }

    fn tagged(&self, table: Table) -> bool {
        table.packed() && self.tagged.load(std::sync::atomic::Ordering::Acquire)
    }

    /// An entry the inner engine found, its value unpacked where the table's are packed.
    fn unpacked(
        &self,
        table: Table,
        found: Option<(Vec<u8>, Vec<u8>)>,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match found {
            Some((k, v)) if self.tagged(table) => match unpack(&v) {
                Ok(bytes) => Ok(Some((k, bytes.into_owned()))),
                Err(why) => Err(Error::corrupt(table.name(), &k, why)),
            },
            found => Ok(found),
        }
    }
}

impl Engine for Packed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn visit_value(
        &self,
        table: Table,
        key: &[u8],
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        if !self.tagged(table) {
            return self.inner.visit_value(table, key, visit);
        }
        let mut bad = None;
        self.inner
            .visit_value(table, key, &mut |v| match v.map(unpack) {
                None => visit(None),
                Some(Ok(bytes)) => visit(Some(&bytes)),
                Some(Err(why)) => bad = Some(why),
            })?;
        bad.map_or(Ok(()), |why| Err(Error::corrupt(table.name(), key, why)))
    }

    fn contains(&self, table: Table, key: &[u8]) -> Result<bool> {
        self.inner.contains(table, key)
    }

    fn last_under(&self, table: Table, prefix: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let found = self.inner.last_under(table, prefix)?;
        self.unpacked(table, found)
    }

    fn floor(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let found = self.inner.floor(table, key)?;
        self.unpacked(table, found)
    }

    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if !self.tagged(table) {
            return self.inner.scan(table, start, visit);
        }
        let mut bad = None;
        self.inner.scan(table, start, &mut |k, v| match unpack(v) {
            Ok(bytes) => visit(k, &bytes),
            Err(why) => {
                bad = Some((k.to_vec(), why));
                false
            }
        })?;
        bad.map_or(Ok(()), |(k, why)| {
            Err(Error::corrupt(table.name(), &k, why))
        })
    }

    fn scan_stored(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.inner.scan_stored(table, start, visit)
    }

    fn block_all(&self) -> Result<u64> {
        self.inner.block_all()
    }

    fn commit(&self, mut batch: Batch) -> Result<()> {
        if self.tagged.load(std::sync::atomic::Ordering::Acquire) {
            for (table, _, value) in &mut batch.ops {
                if let Some(v) = value.as_mut().filter(|_| table.packed()) {
                    *v = pack(v);
                }
            }
            if self.unmarked.load(std::sync::atomic::Ordering::Acquire) {
                batch.put(Table::Meta, MARK.to_vec(), MARK_VALUE.to_vec());
            }
        }
        self.inner.commit(batch)?;
        self.unmarked
            .store(false, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    fn count(&self, table: Table) -> Result<u64> {
        self.inner.count(table)
    }

    fn refresh(&self) {
        self.inner.refresh();
        // A reader that opened a store before its writer's first commit learns its mark now.
        if !self.tagged.load(std::sync::atomic::Ordering::Acquire)
            && matches!(self.inner.get(Table::Meta, MARK), Ok(Some(_)))
        {
            self.tagged
                .store(true, std::sync::atomic::Ordering::Release);
        }
    }

    fn compact(&mut self) -> Result<bool> {
        self.inner.compact()
    }

    /// Rewrites every value of the packed tables of a store written before packing, packed,
    /// and marks it, in one commit; nothing for a marked store. The values rewritten.
    fn pack_all(&self) -> Result<u64> {
        if self.tagged.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(0);
        }
        let mut batch = Batch::default();
        for table in Table::ALL.into_iter().filter(|t| t.packed()) {
            self.inner.scan(table, b"", &mut |k, v| {
                batch.put(table, k.to_vec(), pack(v));
                true
            })?;
        }
        let n = batch.len() as u64;
        batch.put(Table::Meta, MARK.to_vec(), MARK_VALUE.to_vec());
        self.inner.commit(batch)?;
        self.tagged
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_as_written_packed_or_not() {
        let text = "def resolve_redirects(self, resp, req):\n    pass\n".repeat(20);
        for value in [&b""[..], b"short", text.as_bytes(), &[7u8; 4096][..]] {
            let stored = pack(value);
            assert_eq!(&*unpack(&stored).expect("unpack"), value);
        }
        assert_eq!(pack(text.as_bytes())[0], LZ4, "repeated text is packed");
        assert!(pack(text.as_bytes()).len() < text.len() / 4);
        assert_eq!(pack(b"short")[0], RAW);
        let noise: Vec<u8> = (0..16u32)
            .flat_map(|i| *blake3::hash(&i.to_le_bytes()).as_bytes())
            .collect();
        assert_eq!(pack(&noise)[0], RAW, "bytes lz4 cannot shrink stay raw");
    }

    fn redb(dir: &std::path::Path) -> Box<dyn Engine> {
        let file = dir.join("store.redb");
        Box::new(super::super::redb::RedbEngine::open(dir, &file, true).expect("open redb"))
    }

    fn stored(engine: &dyn Engine, table: Table, key: &[u8]) -> Vec<u8> {
        let mut out = None;
        engine
            .scan(table, key, &mut |_, v| {
                out = Some(v.to_vec());
                false
            })
            .expect("scan");
        out.expect("a stored value")
    }

    #[test]
    fn a_new_store_is_marked_and_packs_its_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "fn outline() -> String { String::new() }\n".repeat(30);
        let engine = Packed::open(redb(dir.path()), true).expect("open");
        let mut batch = Batch::default();
        batch.put(Table::Frames, b"f".to_vec(), text.as_bytes().to_vec());
        batch.put(Table::Nodes, b"n".to_vec(), text.as_bytes().to_vec());
        engine.commit(batch).expect("commit");
        assert_eq!(
            engine
                .get(Table::Frames, b"f")
                .expect("read")
                .expect("a value"),
            text.as_bytes()
        );
        drop(engine);
        let inner = redb(dir.path());
        assert_eq!(
            inner.get(Table::Meta, MARK).expect("read").as_deref(),
            Some(MARK_VALUE)
        );
        assert_eq!(stored(&*inner, Table::Frames, b"f")[0], LZ4);
        assert!(stored(&*inner, Table::Frames, b"f").len() < text.len() / 4);
        assert_eq!(
            stored(&*inner, Table::Nodes, b"n"),
            text.as_bytes(),
            "a table of hashes is not packed"
        );
    }

    #[test]
    fn a_store_written_before_packing_reads_as_it_is_until_packed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "def handler(request):\n    return request\n".repeat(30);
        let inner = redb(dir.path());
        let mut batch = Batch::default();
        batch.put(Table::Frames, b"f".to_vec(), text.as_bytes().to_vec());
        batch.put(Table::Derived, b"facts\0k".to_vec(), b"raw".to_vec());
        inner.commit(batch).expect("commit");
        let engine = Packed::open(inner, true).expect("open");
        assert_eq!(
            engine
                .get(Table::Frames, b"f")
                .expect("read")
                .expect("a value"),
            text.as_bytes()
        );
        // Written raw too, until packed.
        let mut batch = Batch::default();
        batch.put(Table::Frames, b"g".to_vec(), text.as_bytes().to_vec());
        engine.commit(batch).expect("commit");
        assert_eq!(engine.pack_all().expect("pack"), 3);
        assert_eq!(
            engine.pack_all().expect("again"),
            0,
            "a marked store is packed"
        );
        for key in [&b"f"[..], b"g"] {
            assert_eq!(
                engine
                    .get(Table::Frames, key)
                    .expect("read")
                    .expect("a value"),
                text.as_bytes()
            );
        }
        assert_eq!(
            engine
                .get(Table::Derived, b"facts\0k")
                .expect("read")
                .expect("a value"),
            b"raw"
        );
        drop(engine);
        let inner = redb(dir.path());
        assert_eq!(stored(&*inner, Table::Frames, b"g")[0], LZ4);
        assert_eq!(stored(&*inner, Table::Derived, b"facts\0k"), b"\0raw");
        let engine = Packed::open(inner, false).expect("reopen");
        assert_eq!(
            engine
                .get(Table::Frames, b"g")
                .expect("read")
                .expect("a value"),
            text.as_bytes()
        );
    }

    #[test]
    fn a_damaged_value_is_named_not_unpacked() {
        assert!(unpack(&[LZ4, 200, 0, 0, 0, 1, 2]).is_err());
        assert!(unpack(&[9, 1]).is_err());
        assert!(unpack(&[]).is_err());
    }
}
