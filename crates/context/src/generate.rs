//! `generate`: give every file in scope a frame of a type, then synthesize its directories
//! bottom-up — only where a frame is missing or stale.
//!
//! Files are independent, so they are produced in parallel, and put a chunk at a time (the
//! frames and their memos in one commit) while the next chunk is produced.
//! A file whose latest frame at its path is on its current node is up to date and costs nothing
//! (not even a read); one whose content equals what the previous frame was produced from (a
//! `touch`), or whose inputs match a memo anywhere in the store (a rename, a revert, a
//! duplicate: [`file_memo_key`]), reuses that content without running the producer.
//! Between files and directories, the producer keeps what it derived beside its frames
//! ([`FrameProducer::keep_derived`]: the outline's file facts) and the policy reads the tree
//! if it ranks by it ([`SynthesisPolicy::with_tree`]: the map's import weights, from those
//! facts). Directories then go through [`synthesize_each`]'s halves a level at a time (deepest first;
//! one commit per level), which reuses content the same two ways.
//!
//! A policy that ranks by the tree ([`SynthesisPolicy::with_tree`]) is asked between the files
//! and the directories, after `keep_derived`, so the map's facts are all cached; `regenerate`
//! asks it once per recorded policy id (`map:v3:B:imports:*` names the ranking, not the counts of
//! then). What it returns must depend on the tree alone: from a checkpoint with nothing changed
//! it is not asked, and when it comes out other than the policy the root's frame was made with,
//! every directory is looked at, not only those above a change (an edit in `app/` can reorder
//! `src/`).
//!
//! A whole-tree generation starts from a checkpoint (`Store::checkpoint`, named for the type,
//! agent, producer and policy, taken before it reads the tree), recorded only when every node
//! ended up to date and the store's frame sequence grew by exactly the frames it created. While
//! the sequence is unchanged no frame anywhere changed, so only the nodes that differ from the
//! checkpoint's root (`Store::changed_since`, which skips equal subtrees) can be out of date; a
//! frame created since (an invalidation, a hand-written frame) means a visit of every node.
use std::sync::Arc;

use merkle_store::{Hash, NodeKind, NodeRecord, Role, Store};
use rayon::prelude::*;

use crate::current::current_frame;
use crate::error::{Error, Result};
use crate::memo::{file_memo_key, memo_key, memoized};
use crate::regenerate::{
    DEFERRED, FrameProducer, META_PRODUCER_INPUT, produced_frame, producer_input, staleness,
};
use crate::synthesis::{
    InFlight as DirsInFlight, PreparedDirs, SynthesisPolicy, SynthesisRequest, prepare_each,
    put_prepared,
};

/// What to generate.
#[derive(Clone, Copy)]
pub struct GenerateRequest<'a> {
    /// The frame type written on files and directories.
    pub frame_type: &'a str,
    /// The agent writing; it needs the synthesis role (files and directories).
    pub agent: &'a str,
    /// Makes file frames.
    pub producer: &'a dyn FrameProducer,
    /// Makes directory frames.
    pub policy: &'a dyn SynthesisPolicy,
    /// The whole subtree; otherwise the node and its direct children.
    pub recursive: bool,
    /// `created_at` for new frames.
    pub now_ms: u64,
    /// Called with (files done, files in scope) as files finish.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// Redo frames made by another producer or policy (another model, prompt or the offline
    /// outline), not only missing and stale ones: set it when switching producers, e.g. from
    /// the offline outline to a model. Frames put by hand are left alone either way.
    pub replace_other_producers: bool,
    /// How many files are produced at once; `None`: one per core. Set it for a producer that
    /// waits rather than computes (a model call): files are then also put every
    /// `4 × threads` (at least 16) rather than every 512, so an interruption loses little work.
    pub threads: Option<usize>,
}

/// What a generation did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generated {
    /// Files whose producer ran.
    pub produced: usize,
    /// Files whose content was reused from their previous frame (same content).
    pub reused: usize,
    /// Files and directories already up to date.
    pub up_to_date: usize,
    /// Directories whose policy ran.
    pub synthesized: usize,
    /// Directories whose content was reused (inputs unchanged).
    pub synthesis_reused: usize,
    /// Files that could not be done, with why (e.g. changed on disk since the scan).
    pub failed: Vec<String>,
    /// Files and directories looked at: all in scope, or, from a checkpoint, those whose node
    /// changed since (the rest are counted up to date without a look).
    pub visited: usize,
    /// Frames appended (putting a frame the store already holds appends none).
    pub created: usize,
    /// Files and directories whose producer or policy handed the work to a batch
    /// ([`crate::DEFERRED`]); the directories above them were left for a later run.
    pub deferred: usize,
}

/// Whether `error` is a producer's or policy's [`DEFERRED`].
fn deferred(error: &Error) -> bool {
    matches!(error, Error::Producer { message, .. } | Error::Policy { message, .. } if message == DEFERRED)
}

/// Files put per commit by a generation without threads of its own, at most (offline; one with
/// a model commits `threads * 4` at a time, so an interruption loses few model calls); below
/// that, as many as [`CHUNK_BYTES`] holds. Fewer commits are fewer fsyncs, and fewer rewrites of
/// the pages of every table keyed by a hash (each commit of n frames rewrites about n random
/// pages of each while n is small against the table): an interruption loses at most a few
/// seconds of work. 512 -> 4096: `generate --recursive --offline` on 100k files of deno 24.0 ->
/// 20.2 s. 4096 -> by bytes (about 47,000 of deno's files): on a million files 137-139 ->
/// 108-113 s (the commits' time 41 -> 24 s, and the producers no longer wait on them), peak
/// RSS the same (793 MiB); on 100k files the same time, peak RSS 177 -> 314 MiB.
const PUT_CHUNK: usize = 65536;
/// How many directories of one level a generation synthesizes, and puts in one commit, at a
/// time: a level's directories are prepared (their children read, their frames made) before
/// any is put, so a level of a large tree (160,000 folders at depth 5 of a million files) at
/// once held them all. On 100k files of deno, 15,838 folders at once took 106 MB more; 4096 ->
/// 16384 on a million files: the directories' part about 35 -> 26 s, the same peak RSS.
const DIR_CHUNK: usize = 16384;
/// How many files' derived data (an outline's facts) a generation holds before it keeps them.
const KEEP_DERIVED_EVERY: usize = 4096;

/// What one file needs.
enum Planned {
    UpToDate,
    /// This frame, whether the producer ran (else its content was reused), and its memo key.
    Put(Box<merkle_store::NewFrame>, bool, Hash),
}

/// Generates frames of `req.frame_type` for the files and directories in scope.
///
/// Over the whole tree (the root, recursive) it starts from a checkpoint: when it finishes with
/// every node up to date and no other writer created a frame meanwhile, it records the root
/// and the store's frame sequence ([`Store::set_checkpoint`], named for the type, agent,
/// producer and policy). While no frame has been created since, a frame can only be out of
/// date on a node that differs from that root's, so the next generation looks at those alone
/// ([`Store::changed_since`]): a no-op costs a lookup, an edit its own path. Any frame created
/// since (an invalidation, a put by hand, another producer) means a look at every node again.
pub fn generate(store: &Store, node: &NodeRecord, req: &GenerateRequest<'_>) -> Result<Generated> {
    if node.path.is_empty() && req.recursive {
        return generate_tree(store, node, req);
    }
    let (files, dirs) = in_scope(store, node, req.recursive)?;
    generate_files_and_dirs(store, files, Dirs::These(dirs), req)
}

/// The files and directories below `node` (itself included).
fn in_scope(
    store: &Store,
    node: &NodeRecord,
    recursive: bool,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    if node.kind == NodeKind::Dir {
        for n in store.list_nodes(&node.path, recursive)? {
            match n.kind {
                NodeKind::Dir if recursive => dirs.push(n.path),
                NodeKind::Dir => {}
                _ => files.push(n.path),
            }
        }
        dirs.push(node.path.clone());
    } else {
        files.push(node.path.clone());
    }
    Ok((files, dirs))
}

/// The name of a whole-tree generation's checkpoint: what makes its frames (type, agent,
/// producer, policy, and whether other producers' frames are replaced).
fn checkpoint_name(req: &GenerateRequest<'_>) -> String {
    let replace = if req.replace_other_producers {
        "replace"
    } else {
        "keep"
    };
    let key = memo_key(
        b"generate checkpoint",
        &[
            req.frame_type,
            req.agent,
            &req.producer.id(),
            &req.policy.id(),
            replace,
        ],
    );
    format!("generate:{}", key.to_hex())
}

fn generate_tree(store: &Store, root: &NodeRecord, req: &GenerateRequest<'_>) -> Result<Generated> {
    let name = checkpoint_name(req);
    let seq = store.frame_seq()?;
    let report = match store.checkpoint(&name)? {
        Some((since, at)) if at == seq => {
            let changed = store.changed_since(&since, &root.node_id)?;
            let (files, dirs) = existing(store, &changed)?;
            let dirs = Dirs::Changed { dirs, root };
            let mut report = generate_files_and_dirs(store, files, dirs, req)?;
            let (nodes, _) = store.counts()?;
            report.up_to_date += usize::try_from(nodes)
                .unwrap_or(usize::MAX)
                .saturating_sub(report.visited);
            report
        }
        _ => {
            let (files, dirs) = in_scope(store, root, true)?;
            generate_files_and_dirs(store, files, Dirs::These(dirs), req)?
        }
    };
    // Every node up to date, and every frame created meanwhile this generation's own.
    let now = seq + report.created as u64;
    if report.failed.is_empty() && report.deferred == 0 && store.frame_seq()? == now {
        store.set_checkpoint(&name, &root.node_id, now)?;
    }
    Ok(report)
}

/// `paths` that the tree holds, as files and directories.
fn existing(store: &Store, paths: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for path in paths {
        match store.node_at(path)? {
            Some(n) if n.kind == NodeKind::Dir => dirs.push(n.path),
            Some(n) => files.push(n.path),
            None => {}
        }
    }
    Ok((files, dirs))
}

/// Generates frames for exactly `paths` of the current tree (`req.recursive` does not apply):
/// the files among them where missing or stale, then the directories among them, deepest
/// first. Paths no longer in the tree are skipped. Given what a scan changed
/// ([`merkle_store::ScanReport::changed_paths`]: every changed file and every directory above
/// one), this brings those nodes' frames up to date for the cost of the change alone, without
/// visiting the rest of the tree; [`generate`] over the whole tree does the same from its
/// checkpoint when it can prove nothing else needs work.
pub fn generate_paths(
    store: &Store,
    paths: &[String],
    req: &GenerateRequest<'_>,
) -> Result<Generated> {
    let (files, dirs) = existing(store, paths)?;
    generate_files_and_dirs(store, files, Dirs::These(dirs), req)
}

/// The directories a generation synthesizes where missing or stale.
enum Dirs<'a> {
    These(Vec<String>),
    /// Those that changed since the checkpoint of a generation over the tree of `root`, which
    /// left every directory up to date with its policy: enough while the policy is the same,
    /// but a policy that reads the tree ([`SynthesisPolicy::with_tree`]) may come out another
    /// (other import weights), and then every directory of the tree is looked at.
    Changed {
        dirs: Vec<String>,
        root: &'a NodeRecord,
    },
}

fn generate_files_and_dirs(
    store: &Store,
    files: Vec<String>,
    dirs: Dirs<'_>,
    req: &GenerateRequest<'_>,
) -> Result<Generated> {
    store.authorize(req.agent, "synthesize", Role::can_synthesize)?;
    match req.threads {
        None => generate_in(store, files, dirs, req, PUT_CHUNK),
        Some(threads) => {
            let threads = threads.max(1);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| Error::Threads {
                    message: e.to_string(),
                })?;
            pool.install(|| generate_in(store, files, dirs, req, (threads * 4).max(16)))
        }
    }
}

/// A generation of `files` then `dirs`: the files' frames produced in parallel and put in
/// chunks of `chunk_size`, then the directories level by level, deepest first.
fn generate_in(
    store: &Store,
    files: Vec<String>,
    dirs: Dirs<'_>,
    req: &GenerateRequest<'_>,
    chunk_size: usize,
) -> Result<Generated> {
    let mut report = Generated {
        visited: files.len(),
        ..Generated::default()
    };
    generate_files(store, &files, req, chunk_size, &mut report)?;
    // A million paths: not held while the directories read the tree.
    drop(files);
    req.producer.keep_derived(store)?;
    if report.deferred > 0 {
        // The directories would read children whose frames are still in a batch.
        return Ok(report);
    }
    let (policy, mut dirs) = directory_policy(store, dirs, req)?;
    let policy = policy.as_deref().unwrap_or(req.policy);
    report.visited += dirs.len();
    // Deepest first, so every directory sees its children's new frames.
    let depth = |p: &str| {
        if p.is_empty() {
            0
        } else {
            p.matches('/').count() + 1
        }
    };
    dirs.sort_by(|a, b| depth(b).cmp(&depth(a)).then(a.cmp(b)));
    // A level at a time: its directories are independent, so their frames go in one commit
    // per `DIR_CHUNK` of them.
    for level in dirs.chunk_by(|a, b| depth(a) == depth(b)) {
        synthesize_level(store, level, policy, req, (chunk_size, &mut report))?;
        if report.deferred > 0 {
            // The levels above would read this one's missing frames.
            break;
        }
    }
    Ok(report)
}

/// The files' frames, produced in parallel and put in chunks of `chunk_size`: one durable
/// commit per chunk rather than per file, so an interruption loses at most the chunks in
/// flight; each counted in `report`. A chunk is put while the next is produced: at a million
/// files the put (its reads, its B-tree writes, its fsync) took a third of the wall time, with
/// the producers idle. A file of the next chunk whose inputs match one in the chunk being put
/// reuses its content as it would once that chunk's memos are in ([`InFlight`]), so the counts
/// are those of a chunk at a time.
fn generate_files(
    store: &Store,
    files: &[String],
    req: &GenerateRequest<'_>,
    chunk_size: usize,
    report: &mut Generated,
) -> Result<()> {
    let total = files.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut since_kept = 0;
    let mut planned: Option<Vec<(String, Result<Planned>)>> = None;
    let mut rest = files;
    let mut take = chunk_size.min(FIRST_CHUNK);
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(take.min(rest.len()));
        rest = after;
        // What the producer derived (an outline's facts) goes to the store now and then, so
        // that a large tree's is never all in memory: beside a put, while producers go on.
        since_kept += chunk.len();
        let keep = since_kept >= KEEP_DERIVED_EVERY;
        if keep {
            since_kept = 0;
        }
        let putting = planned.take();
        let in_flight = InFlight::of(putting.as_deref());
        let (outcomes, put) = rayon::join(
            || {
                chunk
                    .par_iter()
                    .map(|path| {
                        let r = plan_file(store, path, req, &in_flight);
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if let Some(p) = req.progress {
                            p(n, total);
                        }
                        (path.clone(), r)
                    })
                    .collect::<Vec<_>>()
            },
            || {
                if keep {
                    req.producer.keep_derived(store)?;
                }
                putting.map_or(Ok(()), |p| put_planned(store, p, &mut *report))
            },
        );
        put?;
        take = next_chunk(&outcomes, chunk_size);
        planned = Some(outcomes);
    }
    match planned {
        Some(p) => put_planned(store, p, report),
        None => Ok(()),
    }
}

/// How many files the first chunk of a generation holds, before [`next_chunk`] knows how
/// much a file's frame takes.
const FIRST_CHUNK: usize = 4096;
/// About how many bytes of frames a chunk of files holds while it is produced and put: the
/// chunk after one is sized to it by that one's frames (see [`PUT_CHUNK`]).
const CHUNK_BYTES: usize = 64 << 20;
/// What a planned file holds besides its frame's content (its path, its frame's fields, its
/// derived facts until they are kept), in bytes.
const FILE_OVERHEAD: usize = 1024;

/// The size of the chunk after `planned`: as many files as [`CHUNK_BYTES`] holds at the
/// average size of its frames, between [`FIRST_CHUNK`] and `most`.
fn next_chunk(planned: &[(String, Result<Planned>)], most: usize) -> usize {
    let bytes: usize = planned
        .iter()
        .map(|(path, r)| {
            path.len()
                + FILE_OVERHEAD
                + match r {
                    Ok(Planned::Put(frame, ..)) => frame.content.len(),
                    _ => 0,
                }
        })
        .sum();
    let per_file = (bytes / planned.len().max(1)).max(1);
    (CHUNK_BYTES / per_file).clamp(FIRST_CHUNK.min(most), most)
}

/// The contents of a chunk being put, by memo key: what a file of the next chunk with the same
/// inputs reuses.
#[derive(Default)]
struct InFlight(std::collections::HashMap<Hash, Vec<u8>>);

impl InFlight {
    fn of(planned: Option<&[(String, Result<Planned>)]>) -> InFlight {
        let mut out = InFlight::default();
        for (_, r) in planned.unwrap_or_default() {
            if let Ok(Planned::Put(frame, _, key)) = r {
                out.0.entry(*key).or_insert_with(|| frame.content.clone());
            }
        }
        out
    }
}

/// Puts one chunk's planned frames, with their memos, in one commit, each counted in `report`.
fn put_planned(
    store: &Store,
    planned: Vec<(String, Result<Planned>)>,
    report: &mut Generated,
) -> Result<()> {
    let mut frames = Vec::new();
    let mut kinds = Vec::new();
    for (path, r) in planned {
        match r {
            Ok(Planned::UpToDate) => report.up_to_date += 1,
            Ok(Planned::Put(frame, produced, key)) => {
                frames.push((*frame, Some(key)));
                kinds.push((path, produced));
            }
            Err(e) if deferred(&e) => report.deferred += 1,
            Err(e) => report.failed.push(format!("{path}: {e}")),
        }
    }
    for (r, (path, produced)) in store.put_frames_memoized(frames).into_iter().zip(kinds) {
        match r {
            Ok(put) => {
                if produced {
                    report.produced += 1;
                } else {
                    report.reused += 1;
                }
                report.created += usize::from(put.created);
            }
            Err(e) => report.failed.push(format!("{path}: {e}")),
        }
    }
    Ok(())
}

/// Synthesizes the directories of one level (independent of each other) that are missing,
/// stale, another agent's or made by a policy `policy` supersedes; each counted in `report`.
/// `chunk_size` of them at a time (at most `DIR_CHUNK`), one chunk put while the next is looked
/// at and prepared (none is a child of another, so a put changes nothing the next reads; one
/// with the same inputs reuses the content in flight, as it would once its memo is in).
fn synthesize_level(
    store: &Store,
    level: &[String],
    policy: &dyn SynthesisPolicy,
    req: &GenerateRequest<'_>,
    (chunk_size, report): (usize, &mut Generated),
) -> Result<()> {
    let request = SynthesisRequest {
        frame_type: req.frame_type,
        agent: req.agent,
        policy,
        now_ms: req.now_ms,
    };
    let mut putting: Option<PreparedDirs> = None;
    // The frames created by the put that ran while `putting` was prepared.
    let mut own = 0;
    for chunk in level.chunks(chunk_size.min(DIR_CHUNK)) {
        // Read before the put below starts, so that it moved the sequence by its own frames.
        let seq = store.frame_seq()?;
        let in_flight = putting
            .as_ref()
            .map(PreparedDirs::in_flight)
            .unwrap_or_default();
        let last = putting.take();
        let (next, put) = rayon::join(
            || look_and_prepare(store, chunk, &request, req, (seq, &in_flight)),
            || {
                last.map_or(Ok(0), |p| {
                    put_counted(store, p, &request, own, &mut *report)
                })
            },
        );
        own = put?;
        let (up_to_date, next) = next?;
        report.up_to_date += up_to_date;
        putting = next;
    }
    if let Some(p) = putting {
        put_counted(store, p, &request, own, report)?;
    }
    Ok(())
}

/// Looks at each of `chunk`'s directories and prepares those to synthesize: how many are up
/// to date, and the prepared rest (`None` where there are none).
fn look_and_prepare(
    store: &Store,
    chunk: &[String],
    request: &SynthesisRequest<'_>,
    req: &GenerateRequest<'_>,
    (seq, in_flight): (u64, &DirsInFlight),
) -> Result<(usize, Option<PreparedDirs>)> {
    let policy = request.policy;
    let policy_id = policy.id();
    // Each directory looked at on its own, in parallel: `None` where it is gone; the first
    // error in the level's order is the one returned.
    let looked: Vec<Result<Option<(NodeRecord, bool)>>> = chunk
        .par_iter()
        .map(|path| {
            let Some(rec) = store.node_at(path)? else {
                return Ok(None);
            };
            let up_to_date = match current_frame(store, &rec.node_id, path, req.frame_type)? {
                Some(head) => {
                    head.agent_id == req.agent
                        && !head
                            .metadata
                            .extra
                            .get(crate::synthesis::META_POLICY)
                            .is_some_and(|p| {
                                (req.replace_other_producers && *p != policy_id)
                                    || policy.supersedes(p)
                            })
                        && staleness(store, &rec, &head)?.is_none()
                }
                None => false,
            };
            Ok(Some((rec, up_to_date)))
        })
        .collect();
    let mut todo = Vec::new();
    let mut up_to_date = 0;
    for looked in looked {
        let Some((rec, fresh)) = looked? else {
            continue;
        };
        if fresh {
            up_to_date += 1;
        } else {
            todo.push(rec);
        }
    }
    if todo.is_empty() {
        return Ok((up_to_date, None));
    }
    let prepared = prepare_each(store, todo, request, seq, in_flight)?;
    Ok((up_to_date, Some(prepared)))
}

/// Puts what [`look_and_prepare`] prepared, each directory counted in `report`; the frames it
/// created. `own`: as [`put_prepared`] takes it.
fn put_counted(
    store: &Store,
    prepared: PreparedDirs,
    request: &SynthesisRequest<'_>,
    own: u64,
    report: &mut Generated,
) -> Result<u64> {
    let mut created = 0;
    for s in put_prepared(store, prepared, request, own)? {
        let s = match s {
            Err(e) if deferred(&e) => {
                report.deferred += 1;
                continue;
            }
            s => s?,
        };
        if s.policy_ran {
            report.synthesized += 1;
        } else {
            report.synthesis_reused += 1;
        }
        report.created += usize::from(s.created);
        created += u64::from(s.created);
    }
    Ok(created)
}

/// A policy as it read the tree; `None`: the request's as it is.
type Resolved = Option<Arc<dyn SynthesisPolicy>>;

/// The policy directories are made with (`None`: `req.policy` as it is) and the directories to
/// look at. A policy that reads the tree is asked only when there is a directory to make: a
/// generation from a checkpoint with nothing changed asks nothing.
fn directory_policy(
    store: &Store,
    dirs: Dirs<'_>,
    req: &GenerateRequest<'_>,
) -> Result<(Resolved, Vec<String>)> {
    let (dirs, root) = match dirs {
        Dirs::These(dirs) => (dirs, None),
        Dirs::Changed { dirs, root } => (dirs, Some(root)),
    };
    if dirs.is_empty() {
        return Ok((None, dirs));
    }
    let policy = req.policy.with_tree(store)?;
    let Some(resolved) = &policy else {
        return Ok((policy, dirs));
    };
    // From a checkpoint, every directory was made with the policy the root's frame names.
    if let Some(root) = root {
        let made_with = current_frame(store, &root.node_id, &root.path, req.frame_type)?
            .filter(|f| f.agent_id == req.agent)
            .and_then(|f| f.metadata.extra.get(crate::synthesis::META_POLICY).cloned());
        if made_with != Some(resolved.id()) {
            let (_, every) = in_scope(store, root, true)?;
            return Ok((policy, every));
        }
    }
    Ok((policy, dirs))
}

/// The basis of a file frame that replaces head `head` with a frame written before it.
fn replacing_basis(
    rec: &merkle_store::NodeRecord,
    head: &merkle_store::FrameId,
) -> merkle_store::Hash {
    merkle_store::Encoder::new("replaced")
        .hash(&rec.node_id)
        .hash(head)
        .finish()
}

fn plan_file(
    store: &Store,
    path: &str,
    req: &GenerateRequest<'_>,
    in_flight: &InFlight,
) -> Result<Planned> {
    let rec = store
        .node_at(path)?
        .ok_or_else(|| merkle_store::Error::NoSuchPath {
            path: path.to_owned(),
        })?;
    let previous = current_frame(store, &rec.node_id, path, req.frame_type)?;
    if let Some(prev) = &previous
        && prev.agent_id == req.agent
        && !prev
            .metadata
            .extra
            .get(crate::regenerate::META_PRODUCER)
            .is_some_and(|p| {
                (req.replace_other_producers && *p != req.producer.id())
                    || req.producer.supersedes(p)
            })
        && staleness(store, &rec, prev)?.is_none()
    {
        return Ok(Planned::UpToDate);
    }
    let content = store.read_content(&rec)?;
    let input = producer_input(req.producer, &rec, &content);
    let key = file_memo_key(&input, req.frame_type, req.agent);
    // An invalidated frame must be produced again, not found again.
    let invalidation = match &previous {
        Some(p) => crate::invalidation::pending(store, path, p)?,
        None => None,
    };
    let invalidated = invalidation.is_some();
    // The head this run replaces, when it replaces another producer's frame of its own agent.
    let replaced = previous
        .as_ref()
        .filter(|p| req.replace_other_producers && p.agent_id == req.agent)
        .map(|p| p.frame_id);
    let reusable = previous.filter(|p| {
        !invalidated
            && p.agent_id == req.agent
            && p.metadata.extra.get(META_PRODUCER_INPUT) == Some(&input)
    });
    let reused = match reusable {
        Some(p) => Some(p.content),
        None if !invalidated => match in_flight.0.get(&key) {
            Some(content) => Some(content.clone()),
            None => memoized(store, &key, req.frame_type, req.agent)?.map(|f| f.content),
        },
        None => None,
    };
    let (body, produced) = match reused {
        Some(body) => (body, false),
        None => (
            req.producer
                .produce(&rec, &content)
                .map_err(|message| Error::Producer {
                    producer: req.producer.id(),
                    path: path.to_owned(),
                    message,
                })?,
            true,
        ),
    };
    let mut frame = produced_frame(
        &rec,
        req.frame_type,
        req.agent,
        body,
        req.producer,
        input,
        req.now_ms,
    );
    if let Some(inv) = &invalidation {
        frame.basis = Some(crate::regenerate::answering_basis(&rec, inv));
    } else if let Some(prev) = replaced {
        // The same frame as one written before the current head (an outline made again after
        // a model's frame replaced it): putting it again would change nothing, so it gets a
        // basis naming the head it replaces, and becomes the head.
        let id = merkle_store::hash::frame_id(
            &rec.node_id,
            &frame.content,
            &frame.frame_type,
            &frame.agent_id,
        );
        if id != prev && store.has_frame(&id)? {
            frame.basis = Some(replacing_basis(&rec, &prev));
        }
    }
    Ok(Planned::Put(Box::new(frame), produced, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(files: usize, content: usize) -> Vec<(String, Result<Planned>)> {
        (0..files)
            .map(|i| {
                let frame =
                    merkle_store::NewFrame::new(Hash([0; 32]), "t", "a", vec![b'x'; content]);
                let path = format!("src/f{i}.rs");
                (path, Ok(Planned::Put(Box::new(frame), true, Hash([1; 32]))))
            })
            .collect()
    }

    #[test]
    fn a_chunk_holds_about_the_same_bytes_of_frames_whatever_their_size() {
        // Small frames: as many files as allowed.
        assert_eq!(next_chunk(&planned(100, 10), 20_000), 20_000);
        // Frames of about 1 MiB: no fewer files than the first chunk.
        assert_eq!(next_chunk(&planned(4, 1 << 20), PUT_CHUNK), FIRST_CHUNK);
        // Between: the bytes of a chunk over a file's.
        let n = next_chunk(&planned(100, 3 * 1024), PUT_CHUNK);
        let per_file = 3 * 1024 + FILE_OVERHEAD + "src/f00.rs".len();
        assert!(n.abs_diff(CHUNK_BYTES / per_file) < 16, "{n}");
        // A generation with a model puts a few at a time, whatever their size.
        assert_eq!(next_chunk(&planned(8, 10), 16), 16);
        assert_eq!(next_chunk(&planned(8, 1 << 20), 16), 16);
        assert_eq!(next_chunk(&[], 16), 16);
    }
}
