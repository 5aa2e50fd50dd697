//! The full-text index beside a store: where it lives, and keeping it in step with the tree's
//! files ([`sync_index`]).
use super::*;

/// How many files' documents are made at a time while the index takes them.
const INDEX_CHUNK: usize = 2048;

/// The folder of the index beside a store.
pub fn index_dir(store: &Store) -> std::path::PathBuf {
    store.dir().join("index")
}

/// A file's key in the index: what its document is derived from (its content, and the facts'
/// version, whose names it holds).
fn doc_key(f: &FileEntry) -> Key {
    merkle_store::Encoder::new("retrieve-doc")
        .bytes(FACTS_VERSION.as_bytes())
        .hash(&f.content_hash)
        .finish()
        .0
}

/// What an index holding exactly the tree at `root` was found to hold, as
/// [`TextIndex::mark_in_step`] records it: the tree, and how its documents are made
/// ([`doc_key`]'s own key).
fn in_step_key(root: &merkle_store::NodeId) -> Key {
    merkle_store::Encoder::new("retrieve-tree")
        .bytes(FACTS_VERSION.as_bytes())
        .hash(root)
        .finish()
        .0
}

/// The index in `dir`, brought in step with the tree `facts` describes: the files whose
/// content changed since it was last brought in step are indexed again, in one commit.
/// Returns the index and how many files were (re)indexed.
pub fn sync_index(store: &Store, facts: &TreeFacts, dir: &Path) -> Result<(TextIndex, usize)> {
    sync_opened(store, facts, TextIndex::open(dir)?)
}

/// [`sync_index`] of an index already opened (beside the listing of `facts`, say).
pub(crate) fn sync_opened(
    store: &Store,
    facts: &TreeFacts,
    mut index: TextIndex,
) -> Result<(TextIndex, usize)> {
    // A tree the index was found to hold needs no comparison of every file's key.
    let in_step = facts.root.map(|root| in_step_key(&root));
    if in_step.is_some_and(|k| index.in_step_with(&k)) {
        return Ok((index, 0));
    }
    // Borrowed paths: a no-op search compares 15k keys, and needs no copy of a path.
    let tree: Vec<(&str, Key)> = facts
        .files
        .iter()
        .map(|f| (f.path.as_str(), doc_key(f)))
        .collect();
    let changes = index.changes(&tree);
    if changes.is_empty() {
        if let Some(k) = in_step {
            // A hint for the next search; one not kept (a read-only folder) costs it the
            // comparison above, nothing else.
            let _ = index.mark_in_step(&k);
        }
        return Ok((index, 0));
    }
    // A chunk of files at a time, their facts read and their texts made as the index takes
    // them: a whole tree's texts are never in memory at once.
    let chunks = changes.added.chunks(INDEX_CHUNK).map(|chunk| {
        let files: Vec<&FileEntry> = chunk.iter().map(|&i| &facts.files[i]).collect();
        let chunk_facts = facts.facts_of(store, &files)?;
        chunk
            .par_iter()
            .zip(chunk_facts.par_iter())
            .map(|(&i, ff)| file_doc(store, &facts.files[i], ff, tree[i].1))
            .collect::<Result<Vec<Doc>>>()
    });
    let n = changes.added.len();
    index.update_chunks(&changes.removed, chunks)?;
    if let Some(k) = in_step {
        let _ = index.mark_in_step(&k);
    }
    Ok((index, n))
}

/// A file's document: its path, its definitions' names (and [`def_token`]s) and its text
/// (none for a symlink, a binary, a file over [`MAX_TEXT_BYTES`], or one that changed or
/// vanished since the scan: the next rescan indexes it again).
fn file_doc(store: &Store, f: &FileEntry, facts: &FileFacts, key: Key) -> Result<Doc> {
    let mut names = String::new();
    let mut defs: Vec<String> = Vec::new();
    for s in &facts.symbols {
        if matches!(s.kind, Kind::Heading | Kind::Key) {
            continue;
        }
        if s.kind != Kind::Impl {
            names.push_str(&s.name);
            names.push(' ');
        }
        defs.push(def_token(kind_class(s.kind), &s.name));
        // A qualified or specialized C++ name is found by its bare name too, as a task writes it.
        let bare = super::bare_name(&s.name);
        if bare != s.name && s.kind != Kind::Impl && !bare.is_empty() {
            defs.push(def_token(kind_class(s.kind), bare));
        }
    }
    defs.sort_unstable();
    defs.dedup();
    Ok(Doc {
        path: f.path.clone(),
        key,
        names,
        text: read_text(store, f)?.unwrap_or_default(),
        defs,
    })
}
