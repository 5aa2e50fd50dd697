//! The on-disk full-text index: one tantivy document per file, kept in step with a tree by a
//! key per file (its content hash, or whatever the caller derives from what it indexes).
//!
//! # Fields
//! - `path`: the file's path, cut into words by the identifier tokenizer;
//! - `names`: its definitions' names, whole and in parts;
//! - `text`: its text (signatures and doc comments are in it), identifiers whole and in parts;
//! - `defs`: tokens the caller makes of its definitions, each kept as written (looked up
//!   exactly by [`TextIndex::holding`]: which files define a name, without reading them);
//! - `slot`: a number that names the document in the manifest (fast and indexed, so hits are
//!   mapped to paths without reading stored documents, and a document is deleted by it);
//! - `len_path`, `len_names`, `len_text`: how many tokens each field holds (fast), so that
//!   BM25's statistics leave out a replaced or removed document before tantivy merges it away:
//!   a ranking is the same whether the index was built at once or updated edit by edit.
//!
//! # Staying in step, and crashes
//! The manifest (path -> key, slot) says what the index holds. It is written to a file named by
//! its own hash *before* the tantivy commit that makes it true, and that commit's payload names
//! the hash; the previous manifest is removed after. A crash anywhere leaves the last commit and
//! the manifest it names. An index whose payload, schema or manifest does not check out is
//! deleted and built again: it is a cache of the tree, never the only copy of anything.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::directory::MmapDirectory;
use tantivy::query::{Bm25StatisticsProvider, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{
    DocId, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Score, SegmentOrdinal,
    SegmentReader, TERMINATED, TantivyDocument, Term,
};

use crate::error::{Error, Result};
use crate::tokenize::IdentTokenizer;

/// The memory each of the writer's threads fills before it writes a segment out: 20 MB
/// rather than 40 keeps a million files' index build within 1 GiB (its segments' flushes
/// were the peaks), for more, smaller segments that tantivy merges.
const WRITER_BYTES_PER_THREAD: usize = 20_000_000;

/// The name the identifier tokenizer is registered under.
pub const IDENT: &str = "merkle_ident";

/// What an index was built by; a commit naming another version is rebuilt.
pub const VERSION: &str = "retrieve:v3";

/// The file that says which tree the index was last found to hold ([`TextIndex::mark_in_step`]).
const IN_STEP: &str = "in-step";

/// A document's key: whatever identifies what was indexed (a content hash).
pub type Key = [u8; 32];

/// A file to index.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    pub path: String,
    pub key: Key,
    /// Its definitions' names, separated by spaces.
    pub names: String,
    /// Its text (empty for a binary or an oversized file).
    pub text: String,
    /// Exact tokens to find it by ([`TextIndex::holding`]), each kept whole.
    pub defs: Vec<String>,
}

/// Which of a document's fields a term is looked for in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field3 {
    Path,
    Names,
    Text,
}

/// A term of a query: a token as the identifier tokenizer makes them, the field it is looked
/// for in, and its weight (a multiplier of its BM25 score).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedTerm {
    pub field: Field3,
    pub token: String,
    pub weight: f32,
}

/// A matching file and its score.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub path: String,
    pub score: f32,
}

/// What an update must do to bring the index to a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Paths indexed that the tree no longer has.
    pub removed: Vec<String>,
    /// Indexes into the tree of the files to (re)index.
    pub added: Vec<usize>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.added.is_empty()
    }
}

#[derive(Clone, Copy, Debug)]
struct Fields {
    slot: Field,
    len_path: Field,
    len_names: Field,
    len_text: Field,
    path: Field,
    names: Field,
    text: Field,
    defs: Field,
}

/// The fast fields holding how many tokens a document's path, names and text hold.
const LENGTHS: [&str; 3] = ["len_path", "len_names", "len_text"];

impl Fields {
    /// The fast field holding how many tokens text field `field` holds in a document.
    fn lengths_of(&self, field: Field) -> &'static str {
        if field == self.path {
            LENGTHS[0]
        } else if field == self.names {
            LENGTHS[1]
        } else {
            LENGTHS[2]
        }
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(IDENT)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        slot: b.add_u64_field("slot", INDEXED | FAST),
        len_path: b.add_u64_field(LENGTHS[0], FAST),
        len_names: b.add_u64_field(LENGTHS[1], FAST),
        len_text: b.add_u64_field(LENGTHS[2], FAST),
        path: b.add_text_field("path", words.clone()),
        names: b.add_text_field("names", words.clone()),
        text: b.add_text_field("text", words),
        defs: b.add_text_field(
            "defs",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_index_option(IndexRecordOption::Basic),
            ),
        ),
    };
    (b.build(), fields)
}

mod manifest;
use self::manifest::Manifest;

/// The hash of the manifest a commit's payload names (`VERSION HASH`); `None` for a payload of
/// another version.
fn manifest_named(payload: &str) -> Option<&str> {
    payload.strip_prefix(VERSION)?.strip_prefix(' ')
}

fn manifest_file(dir: &Path, hash: &str) -> PathBuf {
    dir.join(format!("manifest-{hash}.bin"))
}

/// A workspace's full-text index, open for searching and updating.
pub struct TextIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    manifest: Manifest,
    /// The manifest's hash, as the last commit names it.
    manifest_hash: Option<String>,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextIndex")
            .field("dir", &self.dir)
            .field("docs", &self.manifest.entries.len())
            .finish()
    }
}

fn tantivy_err(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::Index {
        dir: dir.to_owned(),
        message: e.to_string(),
    }
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_owned(),
        source: e,
    }
}

impl TextIndex {
    /// Opens the index in `dir`, creating it (and `dir`) when there is none, and building it
    /// anew (empty) when what is there does not check out.
    pub fn open(dir: &Path) -> Result<TextIndex> {
        fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        match TextIndex::try_open(dir) {
            Ok(Some(index)) => Ok(index),
            Ok(None) | Err(_) => {
                clear(dir)?;
                TextIndex::try_open(dir)?.ok_or_else(|| Error::Index {
                    dir: dir.to_owned(),
                    message: "a new index does not open".into(),
                })
            }
        }
    }

    /// The index in `dir`, or `None` when it must be built anew.
    fn try_open(dir: &Path) -> Result<Option<TextIndex>> {
        let (schema, fields) = schema();
        let directory = MmapDirectory::open(dir).map_err(|e| tantivy_err(dir, e))?;
        let index = Index::open_or_create(directory, schema).map_err(|e| tantivy_err(dir, e))?;
        index.tokenizers().register(
            IDENT,
            tantivy::tokenizer::TextAnalyzer::from(IdentTokenizer),
        );
        let meta = index.load_metas().map_err(|e| tantivy_err(dir, e))?;
        let (manifest, manifest_hash) = match meta.payload.as_deref() {
            None if meta.segments.is_empty() => (Manifest::default(), None),
            None => return Ok(None),
            Some(payload) => {
                let Some(hash) = manifest_named(payload) else {
                    return Ok(None);
                };
                let Ok(bytes) = fs::read(manifest_file(dir, hash)) else {
                    return Ok(None);
                };
                if blake3::hash(&bytes).to_hex().as_str() != hash {
                    return Ok(None);
                }
                match Manifest::decode(&bytes) {
                    Some(m) => (m, Some(hash.to_owned())),
                    None => return Ok(None),
                }
            }
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err(dir, e))?;
        Ok(Some(TextIndex {
            dir: dir.to_owned(),
            index,
            reader,
            fields,
            manifest,
            manifest_hash,
        }))
    }

    /// Whether the index on disk is still the one this handle opened: no commit, of this
    /// process or another, has landed since (one opened ahead of its use is checked so).
    pub fn is_current(&self) -> bool {
        let Ok(meta) = self.index.load_metas() else {
            return false;
        };
        match (self.manifest_hash.as_deref(), meta.payload.as_deref()) {
            (None, None) => meta.segments.is_empty(),
            (Some(hash), Some(payload)) => manifest_named(payload) == Some(hash),
            _ => false,
        }
    }

    /// How many files the index holds.
    pub fn len(&self) -> usize {
        self.manifest.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.manifest.entries.is_empty()
    }

    /// What must change for the index to hold exactly `tree`, (path, key) pairs.
    pub fn changes(&self, tree: &[(&str, Key)]) -> Changes {
        let mut changes = Changes::default();
        let mut present = 0;
        for (i, (path, key)) in tree.iter().enumerate() {
            match self.manifest.get(path) {
                Some(e) => {
                    present += 1;
                    if e.key != *key {
                        changes.added.push(i);
                    }
                }
                None => changes.added.push(i),
            }
        }
        if present < self.manifest.entries.len() {
            // Some indexed paths are gone; only then are the tree's paths gathered.
            let paths: std::collections::HashSet<&str> = tree.iter().map(|(p, _)| *p).collect();
            changes.removed = self
                .manifest
                .entries
                .iter()
                .map(|e| self.manifest.path(e))
                .filter(|p| !paths.contains(p))
                .map(str::to_owned)
                .collect();
        }
        changes
    }

    /// Whether the index was found to hold exactly the tree `tree` names (a key the caller
    /// derives from the tree and from how it makes documents), by [`TextIndex::mark_in_step`]:
    /// a search of an unchanged tree need not compare every file's key.
    pub fn in_step_with(&self, tree: &Key) -> bool {
        fs::read(self.dir.join(IN_STEP)).is_ok_and(|b| b == self.in_step_line(tree).as_bytes())
    }

    /// Records that the index holds exactly the tree `tree` names (as [`TextIndex::changes`]
    /// found it). Only a hint: a crash or a failed write leaves the next search to compare.
    pub fn mark_in_step(&self, tree: &Key) -> Result<()> {
        // Not synced: a mark lost in a crash only costs a search the comparison.
        write_renamed(
            &self.dir.join(IN_STEP),
            self.in_step_line(tree).as_bytes(),
            false,
        )
    }

    fn in_step_line(&self, tree: &Key) -> String {
        format!(
            "{VERSION} {} {}\n",
            self.manifest_hash.as_deref().unwrap_or("-"),
            blake3::Hash::from_bytes(*tree).to_hex()
        )
    }

    /// Removes `removed` and (re)indexes `added` in one commit. Waits up to ten seconds for
    /// another process's update to finish.
    pub fn update(&mut self, removed: &[String], added: Vec<Doc>) -> Result<()> {
        if removed.is_empty() && added.is_empty() {
            return Ok(());
        }
        self.update_chunks(removed, std::iter::once(Ok::<_, Error>(added)))
    }

    /// [`TextIndex::update`] with the documents made a chunk at a time as the index takes them
    /// (so that a whole tree's texts are never in memory at once), still in one commit: an
    /// error of a chunk leaves the index as it was.
    pub fn update_chunks<E: From<Error>>(
        &mut self,
        removed: &[String],
        chunks: impl Iterator<Item = std::result::Result<Vec<Doc>, E>>,
    ) -> std::result::Result<(), E> {
        let dir = self.dir.clone();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4);
        let mut writer = self.writer(threads)?;
        let mut entries = self.manifest.to_map();
        let mut next_slot = self.manifest.next_slot;
        let f = self.fields;
        for path in removed {
            if let Some((_, slot)) = entries.remove(path) {
                writer.delete_term(Term::from_field_u64(f.slot, slot));
            }
        }
        for doc in chunks.flat_map(|chunk| match chunk {
            Ok(docs) => docs.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }) {
            let doc = doc?;
            if let Some((_, slot)) = entries.get(&doc.path) {
                writer.delete_term(Term::from_field_u64(f.slot, *slot));
            }
            let slot = next_slot;
            next_slot += 1;
            let mut d = TantivyDocument::default();
            d.add_u64(f.slot, slot);
            d.add_u64(f.len_path, token_count(&doc.path));
            d.add_u64(f.len_names, token_count(&doc.names));
            d.add_u64(f.len_text, token_count(&doc.text));
            d.add_text(f.path, &doc.path);
            d.add_text(f.names, &doc.names);
            d.add_text(f.text, &doc.text);
            for t in &doc.defs {
                d.add_text(f.defs, t);
            }
            writer.add_document(d).map_err(|e| tantivy_err(&dir, e))?;
            entries.insert(doc.path, (doc.key, slot));
        }
        let manifest = Manifest::new(
            next_slot,
            entries
                .into_iter()
                .map(|(path, (key, slot))| (path, key, slot))
                .collect(),
        );
        // Hashed, then written, as it is encoded (its file is named by its hash).
        let mut hasher = blake3::Hasher::new();
        manifest
            .write_to(&mut hasher)
            .map_err(|e| io_err(&dir, e))?;
        let hash = hasher.finalize().to_hex().to_string();
        let file = manifest_file(&dir, &hash);
        write_renamed_with(&file, true, |w| manifest.write_to(w))?;
        let mut prepared = writer.prepare_commit().map_err(|e| tantivy_err(&dir, e))?;
        prepared.set_payload(&format!("{VERSION} {hash}"));
        prepared.commit().map_err(|e| tantivy_err(&dir, e))?;
        writer
            .wait_merging_threads()
            .map_err(|e| tantivy_err(&dir, e))?;
        if let Some(old) = self.manifest_hash.replace(hash.clone())
            && old != hash
        {
            // A leftover is harmless: the commit names the manifest it holds.
            let _ = fs::remove_file(manifest_file(&dir, &old));
        }
        self.reader.reload().map_err(|e| tantivy_err(&dir, e))?;
        self.manifest = manifest;
        Ok(())
    }

    /// How many segments the index in `dir` is in, read from its commit alone (nothing is
    /// opened or cleared); `None` where `dir` holds no index that reads.
    pub fn segments_in(dir: &Path) -> Option<usize> {
        let directory = MmapDirectory::open(dir).ok()?;
        let index = Index::open(directory).ok()?;
        Some(index.searchable_segment_metas().ok()?.len())
    }

    /// How many segments the index is in.
    pub fn segments(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    /// Merges the index's segments into one (`merkle gc`): each segment keeps a term
    /// dictionary of its own, so a tree's words were stored once per segment, and a removed
    /// or replaced file's document stays until its segment is merged. The commit's payload
    /// (the manifest it names) is kept, so what the index holds does not change, nor does
    /// [`TextIndex::is_current`] of a handle opened before. Waits up to ten seconds for
    /// another process's update to finish. Returns the segments before and after (none after
    /// where every document was deleted).
    pub fn merge_segments(&mut self) -> Result<(usize, usize)> {
        let dir = self.dir.clone();
        let err = |e| tantivy_err(&dir, e);
        // The segments read under the writer's lock: another process's commit may merge.
        let mut writer = self.writer(1)?;
        // This handle's manifest must be the commit's, which the merge keeps.
        if !self.is_current() {
            let message = "the index changed since this handle opened it: open it again".into();
            return Err(Error::Index { dir, message });
        }
        let metas = self.index.searchable_segment_metas().map_err(err)?;
        let ids: Vec<_> = metas.iter().map(|m| m.id()).collect();
        // One segment is merged (rewritten) only to drop documents deleted in it.
        let merge = ids.len() >= 2 || metas.iter().any(|m| m.has_deletes());
        // Tantivy keeps the files of every segment some object of this handle's index still
        // describes: these, the merge's own until its thread ends, and the reader's.
        drop(metas);
        if merge {
            writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
            writer.merge(&ids).wait().map_err(err)?;
            writer.wait_merging_threads().map_err(err)?;
            self.reader.reload().map_err(err)?;
            writer = self.writer(1)?;
        }
        // Files of no segment of the commit go (also those an earlier merge left).
        writer.garbage_collect_files().wait().map_err(err)?;
        writer.wait_merging_threads().map_err(err)?;
        Ok((ids.len(), self.segments()))
    }

    /// The writer, with [`WRITER_BYTES_PER_THREAD`] of memory per indexing thread.
    fn writer(&self, threads: usize) -> Result<IndexWriter> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self
                .index
                .writer_with_num_threads(threads, WRITER_BYTES_PER_THREAD * threads)
            {
                Ok(w) => return Ok(w),
                Err(tantivy::TantivyError::LockFailure(..)) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(tantivy::TantivyError::LockFailure(..)) => {
                    return Err(Error::Busy {
                        dir: self.dir.clone(),
                    });
                }
                Err(e) => return Err(tantivy_err(&self.dir, e)),
            }
        }
    }

    /// How many documents hold `token` in `field`, and how many documents there are (neither
    /// counting a replaced or removed document tantivy has not merged away yet).
    pub fn doc_freq(&self, field: Field3, token: &str) -> Result<(u64, u64)> {
        let searcher = self.reader.searcher();
        let term = Term::from_field_text(self.field(field), token);
        let df = alive_doc_freq(&searcher, &term).map_err(|e| tantivy_err(&self.dir, e))?;
        Ok((df, searcher.num_docs()))
    }

    /// The files holding each of `tokens` in their `defs`, exactly as written, in no
    /// particular order: read from the postings, no document is.
    pub fn holding(&self, tokens: &[String]) -> Result<Vec<Vec<String>>> {
        let searcher = self.reader.searcher();
        let mut out = vec![Vec::new(); tokens.len()];
        for segment in searcher.segment_readers() {
            let inverted = segment
                .inverted_index(self.fields.defs)
                .map_err(|e| tantivy_err(&self.dir, e))?;
            let slots = segment
                .fast_fields()
                .u64("slot")
                .map_err(|e| tantivy_err(&self.dir, e))?;
            let alive = segment.alive_bitset();
            for (token, paths) in tokens.iter().zip(out.iter_mut()) {
                let term = Term::from_field_text(self.fields.defs, token);
                let Some(mut postings) = inverted
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|e| tantivy_err(&self.dir, e))?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc))
                        && let Some(path) =
                            slots.first(doc).and_then(|s| self.manifest.path_of_slot(s))
                    {
                        paths.push(path.to_owned());
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(out)
    }

    fn field(&self, f: Field3) -> Field {
        match f {
            Field3::Path => self.fields.path,
            Field3::Names => self.fields.names,
            Field3::Text => self.fields.text,
        }
    }

    /// Every file that matches any of `terms`, with its score: the sum over the terms it holds
    /// of the term's BM25 score in its field (k1 = 1.2, b = 0.75, each field its own lengths
    /// and frequencies) times the term's weight. In no particular order.
    pub fn search(&self, terms: &[WeightedTerm]) -> Result<Vec<Scored>> {
        self.search_scaled(terms, 1.0)
    }

    /// The files whose text holds every one of `tokens` (as the identifier tokenizer makes
    /// them), at most `limit`, those whose text holds them most first.
    pub fn holding_all(&self, tokens: &[String], limit: usize) -> Result<Vec<String>> {
        if tokens.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = tokens
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.fields.text, t);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Must, q)
            })
            .collect();
        let searcher = self.reader.searcher();
        let mut found = searcher
            .search(&BooleanQuery::new(clauses), &AllScores)
            .map_err(|e| tantivy_err(&self.dir, e))?;
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(found
            .into_iter()
            .filter_map(|(slot, _)| self.manifest.path_of_slot(slot).map(str::to_owned))
            .take(limit)
            .collect())
    }

    /// As [`TextIndex::search`], with each field's average length taken as `length_scale`
    /// times what it is: above 1, a long file is held less against its matches (BM25's
    /// length normalisation softened; a fix is more often in a big file than BM25 assumes).
    pub fn search_scaled(&self, terms: &[WeightedTerm], length_scale: f64) -> Result<Vec<Scored>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.field(t.field), &t.token);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (
                    Occur::Should,
                    Box::new(BoostQuery::new(q, t.weight)) as Box<dyn Query>,
                )
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let stats = ScaledLengths {
            searcher: &searcher,
            fields: self.fields,
            scale: length_scale,
        };
        let found = searcher
            .search_with_statistics_provider(&query, &AllScores, &stats)
            .map_err(|e| tantivy_err(&self.dir, e))?;
        Ok(found
            .into_iter()
            .filter_map(|(slot, score)| {
                self.manifest.path_of_slot(slot).map(|p| Scored {
                    path: p.to_owned(),
                    score,
                })
            })
            .collect())
    }
}

/// Writes `bytes` to `path` through a temporary file of this process's own, renamed into place
/// (a reader sees the old content or the new, whoever else writes it), synced first if `sync`.
fn write_renamed(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    use std::io::Write;
    write_renamed_with(path, sync, |w| w.write_all(bytes))
}

/// [`write_renamed`] of what `write` writes, through a buffer.
fn write_renamed_with(
    path: &Path,
    sync: bool,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let f = fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    let mut w = std::io::BufWriter::new(f);
    write(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| io_err(&tmp, e))?;
    let f = w.into_inner().map_err(|e| io_err(&tmp, e.into_error()))?;
    if sync {
        f.sync_all().map_err(|e| io_err(&tmp, e))?;
    }
    fs::rename(&tmp, path).map_err(|e| io_err(path, e))?;
    Ok(())
}

/// Removes what an index keeps in `dir` (the folder stays).
fn clear(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| io_err(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_err(dir, e))?;
        let path = entry.path();
        let r = if entry.file_type().map_err(|e| io_err(&path, e))?.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        r.map_err(|e| io_err(&path, e))?;
    }
    Ok(())
}

/// The searcher's statistics, with every field's token count scaled.
/// BM25's statistics over the documents alive (tantivy's own count a replaced or removed
/// document until its segment is merged), the average lengths scaled.
struct ScaledLengths<'a> {
    searcher: &'a tantivy::Searcher,
    fields: Fields,
    scale: f64,
}

impl Bm25StatisticsProvider for ScaledLengths<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let lengths = self.fields.lengths_of(field);
        let mut n = 0u64;
        for segment in self.searcher.segment_readers() {
            n += segment.inverted_index(field)?.total_num_tokens();
            if let Some(alive) = segment.alive_bitset() {
                // Less what the deleted documents held: their own token counts.
                let column = segment.fast_fields().u64(lengths)?;
                for doc in 0..segment.max_doc() {
                    if !alive.is_alive(doc) {
                        n = n.saturating_sub(column.first(doc).unwrap_or(0));
                    }
                }
            }
        }
        Ok((n as f64 * self.scale).round() as u64)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        alive_doc_freq(self.searcher, term)
    }
}

/// How many documents alive hold `term`: a segment without deletions answers from its term
/// dictionary, one with them by its postings.
fn alive_doc_freq(searcher: &tantivy::Searcher, term: &Term) -> tantivy::Result<u64> {
    let mut n = 0u64;
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(term.field())?;
        let Some(alive) = segment.alive_bitset() else {
            n += u64::from(inverted.doc_freq(term)?);
            continue;
        };
        let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
            continue;
        };
        let mut doc = postings.doc();
        while doc != TERMINATED {
            if alive.is_alive(doc) {
                n += 1;
            }
            doc = postings.advance();
        }
    }
    Ok(n)
}

/// How many tokens the identifier tokenizer makes of `text`: what tantivy counts of a field.
fn token_count(text: &str) -> u64 {
    let mut n = 0u64;
    crate::tokenize::tokens(text, |_, _, _, _| n += 1);
    n
}

/// Every matching document's slot and score.
struct AllScores;

struct SegmentScores {
    slots: tantivy::columnar::Column<u64>,
    out: Vec<(u64, Score)>,
}

impl Collector for AllScores {
    type Fruit = Vec<(u64, Score)>;
    type Child = SegmentScores;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<SegmentScores> {
        Ok(SegmentScores {
            slots: segment.fast_fields().u64("slot")?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u64, Score)>>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentScores {
    type Fruit = Vec<(u64, Score)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(slot) = self.slots.first(doc) {
            self.out.push((slot, score));
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.out
    }
}

#[cfg(test)]
mod tests;
