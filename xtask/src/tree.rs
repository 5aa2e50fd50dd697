//! A deterministic synthetic source tree for benchmarks.
//!
//! The same `(files, seed)` gives the same paths and bytes on every machine, so figures from
//! different runs measure the same work. The shape imitates a source checkout: folders nested 3
//! to 5 deep that share prefixes, 20 to 100 files per folder visit, sizes mostly 1 to 16 KiB
//! (log-uniform), a few percent up to 128 KiB and a handful of binaries of 1 to 4 MiB. Most files
//! are text made of words, so tools that compress (git) see realistic input; the rest are random
//! bytes. The generator is a hand-written SplitMix64: statistical quality beyond "looks random"
//! does not matter here, reproducibility does.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::thread;

use anyhow::{Context, Result, anyhow};

/// SplitMix64 (Steele, Lea and Flood): one add and three mix steps per 64-bit output.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `lo..=hi`. The modulo bias is irrelevant at these ranges.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// A float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A size in `lo..hi` whose logarithm is uniform, as file sizes roughly are.
    fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        (lo as f64 * (hi as f64 / lo as f64).powf(self.unit())) as u64
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeSpec {
    pub files: usize,
    pub seed: u64,
}

/// One planned file: where it goes, how big it is, and what its bytes look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// Relative to the tree's root, with `/` separators.
    pub path: String,
    pub size: u64,
    pub binary: bool,
    /// Seeds this file's content, so files can be written in any order or in parallel.
    pub content_seed: u64,
}

/// The full plan of a tree, computed before anything touches the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub files: Vec<PlannedFile>,
    /// Every folder below the root, parents before children.
    pub dirs: Vec<String>,
}

const DIR_WORDS: &[&str] = &[
    "src", "lib", "core", "util", "api", "net", "io", "tests", "docs", "model", "view", "parse",
    "store", "cache", "config", "server", "client", "proto", "gen", "internal", "cmd", "assets",
];
const FILE_WORDS: &[&str] = &[
    "main", "mod", "types", "error", "handler", "reader", "writer", "index", "node", "tree",
    "hash", "walk", "frame", "agent", "options", "helpers", "schema", "table", "codec", "state",
];
const TEXT_EXTS: &[&str] = &[
    "rs", "rs", "rs", "c", "h", "py", "md", "json", "toml", "txt",
];
const BINARY_EXTS: &[&str] = &["bin", "png", "dat"];
const TEXT_WORDS: &[&str] = &[
    "fn", "let", "mut", "self", "return", "if", "else", "match", "impl", "struct", "pub", "use",
    "for", "in", "while", "node", "hash", "path", "value", "result", "error", "Some", "None", "Ok",
    "Err", "=>", "=", "{", "}", "(", ")", ";", "::", "&", "0", "1", "len", "iter", "map",
    "collect", "the", "a", "of", "to", "and", "is", "this", "that", "with", "from",
];

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

impl Tree {
    /// Plans a tree of exactly `spec.files` files.
    pub fn plan(spec: TreeSpec) -> Tree {
        let mut rng = Rng::new(spec.seed);
        let mut files = Vec::with_capacity(spec.files);
        let mut dirs = BTreeSet::new();
        let mut prev: Vec<String> = Vec::new();
        let mut dir_count = 0u64;
        while files.len() < spec.files {
            // Share a prefix with the previous folder, usually a long one, so the tree has
            // siblings and cousins rather than one chain per folder; landing on an ancestor of
            // the previous folder puts files in intermediate folders too.
            let depth = rng.range(3, 5) as usize;
            let mut keep = prev.len().min(depth);
            while keep > 0 && rng.unit() < 0.5 {
                keep -= 1;
            }
            if keep == depth && prev.len() == depth {
                keep -= 1;
            }
            let mut dir = prev[..keep].to_vec();
            while dir.len() < depth {
                dir.push(format!("{}_{dir_count}", rng.pick(DIR_WORDS)));
                dir_count += 1;
            }
            for i in 1..=dir.len() {
                dirs.insert(dir[..i].join("/"));
            }
            let count = (rng.range(20, 100) as usize).min(spec.files - files.len());
            for _ in 0..count {
                let n = files.len();
                let class = rng.next_u64() % 10_000;
                let (size, binary) = if class < 6 {
                    (rng.log_uniform(MIB, 4 * MIB), true)
                } else if class < 250 {
                    (rng.log_uniform(16 * KIB, 128 * KIB), rng.unit() < 0.5)
                } else {
                    (rng.log_uniform(KIB, 16 * KIB), rng.unit() < 0.05)
                };
                let ext = rng.pick(if binary { BINARY_EXTS } else { TEXT_EXTS });
                let word = rng.pick(FILE_WORDS);
                files.push(PlannedFile {
                    path: format!("{}/{word}_{n}.{ext}", dir.join("/")),
                    size,
                    binary,
                    content_seed: rng.next_u64(),
                });
            }
            prev = dir;
        }
        // BTreeSet order puts every parent before its children ("a" < "a/b").
        Tree {
            files,
            dirs: dirs.into_iter().collect(),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Writes the tree under `root`, which must exist; files are written on every core.
    pub fn write(&self, root: &Path) -> Result<()> {
        for dir in &self.dirs {
            let path = root.join(dir);
            fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        }
        let threads = thread::available_parallelism().map_or(2, |n| n.get());
        thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || -> Result<()> {
                        let mut buf = Vec::new();
                        for file in self.files.iter().skip(t).step_by(threads) {
                            content(file, &mut buf);
                            let path = root.join(&file.path);
                            fs::write(&path, &buf)
                                .with_context(|| format!("writing {}", path.display()))?;
                        }
                        Ok(())
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .map_err(|_| anyhow!("a tree-writing thread panicked"))?
            })
        })
    }
}

/// Fills `buf` with the file's bytes: random for binaries, lines of words for text.
pub fn content(file: &PlannedFile, buf: &mut Vec<u8>) {
    let mut rng = Rng::new(file.content_seed);
    let size = file.size as usize;
    buf.clear();
    buf.reserve(size + 8);
    if file.binary {
        while buf.len() < size {
            buf.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
    } else {
        while buf.len() < size {
            let indent = 4 * rng.range(0, 3) as usize;
            buf.extend(std::iter::repeat_n(b' ', indent));
            let width = rng.range(10, 90) as usize;
            let start = buf.len();
            while buf.len() - start < width {
                buf.extend_from_slice(rng.pick(TEXT_WORDS).as_bytes());
                buf.push(b' ');
            }
            buf.pop();
            buf.push(b'\n');
        }
    }
    buf.truncate(size);
}
