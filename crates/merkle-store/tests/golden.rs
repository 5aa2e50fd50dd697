//! Published test vectors: the NodeIDs of a small fixture tree and of the encodings themselves.
//! These values are the contract that the same tree hashes the same on every machine and OS;
//! a change to them is a change to every stored identity (see docs/node-identity.md).
use std::fmt::Write;

use merkle_store::{NodeKind, OpenOptions, ScanOptions, Store, hash};

/// A fixture with no symlinks, so that it is the same tree on every OS.
const TREE: &[(&str, &str)] = &[
    ("README.md", "# golden\n"),
    ("a.txt", "hello\n"),
    ("dir/b.txt", "world\n"),
    ("dir/nested/c.rs", "fn main() {}\n"),
    ("dir/nested/empty.txt", ""),
    ("z/\u{e9}t\u{e9}.md", "unicode name\n"),
];

#[test]
fn fixture_tree_node_ids() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in TREE {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }
    let store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
    let report = store.scan(&ScanOptions::default()).expect("scan");
    let mut out = format!("root {}\n", report.root);
    let mut nodes = store.list_nodes("", true).expect("list");
    nodes.insert(0, {
        let r = store.resolve("").expect("root");
        merkle_store::TreeNode {
            path: r.path,
            kind: r.kind,
            node_id: r.node_id,
        }
    });
    for n in nodes {
        let rec = store.node(&n.node_id).expect("node").expect("present");
        writeln!(
            out,
            "{:<7} {:<22} node {} content {}",
            n.kind.as_str(),
            if n.path.is_empty() { "(root)" } else { &n.path },
            n.node_id,
            rec.content_hash
        )
        .expect("write to string");
    }
    insta::assert_snapshot!(out);
}

#[test]
fn encoding_vectors() {
    let content = hash::content_hash(b"hello\n");
    let file = hash::leaf_node_id(NodeKind::File, "a.txt", &content);
    let link = hash::leaf_node_id(NodeKind::Symlink, "link", &hash::content_hash(b"a.txt"));
    let dir = hash::dir_node_id("", [("a.txt", &file), ("link", &link)].into_iter());
    let frame = hash::frame_id(&file, b"a summary", "summary", "alice");
    let out = format!(
        "content_hash(\"hello\\n\")                     {content}\n\
         leaf_node_id(file, \"a.txt\", ^)               {file}\n\
         leaf_node_id(symlink, \"link\", hash(\"a.txt\")) {link}\n\
         dir_node_id(\"\", [a.txt, link])               {dir}\n\
         frame_id(file, \"a summary\", summary, alice)  {frame}\n"
    );
    insta::assert_snapshot!(out);
    // The content hash is plain blake3, what b3sum prints.
    assert_eq!(content.to_hex(), blake3::hash(b"hello\n").to_hex().as_str());
}
