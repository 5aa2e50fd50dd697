//! Produced frames are bounded by bytes, not only by lines: a one-line 10 MB file, or a
//! minified bundle beside small files, gives frames of a bounded size that say what they cut,
//! and does not push its siblings out of its parent's frame.
use context::synthesis::{CONCAT_MAX_BYTES, MAX_LINE_BYTES, cut_to_bytes};
use context::{
    Concat, FrameProducer, GenerateRequest, Outline, Summary, SynthesisPolicy, generate,
};
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, SYNTH, T0};

fn generate_all(fx: &Fixture, policy: &dyn SynthesisPolicy) {
    let producer = Outline::default();
    let report = generate(
        &fx.store,
        &fx.node(""),
        &GenerateRequest {
            frame_type: "summary",
            agent: SYNTH,
            producer: &producer,
            policy,
            recursive: true,
            now_ms: T0,
            progress: None,
            replace_other_producers: false,
            threads: None,
        },
    )
    .expect("generate");
    assert_eq!(report.failed, Vec::<String>::new());
}

fn head(fx: &Fixture, path: &str) -> String {
    let frame = fx
        .store
        .path_head(path, "summary")
        .expect("head")
        .unwrap_or_else(|| panic!("no frame on {path}"));
    String::from_utf8(frame.content).expect("text")
}

#[test]
fn cuts_are_on_char_boundaries_and_say_how_much_was_cut() {
    assert_eq!(cut_to_bytes("short", 10), "short");
    // 12,345 two-byte chars, cut to 40 bytes: the marker counts against the bound.
    let long = "é".repeat(12_345);
    let cut = cut_to_bytes(&long, 40);
    assert_eq!(cut, format!("{}[... 24,674 more bytes]", "é".repeat(8)));
    assert!(cut.len() <= 40);
}

#[test]
fn a_one_line_ten_megabyte_file_gets_a_bounded_outline() {
    let fx = Fixture::new();
    let line = "aé".repeat(10 * 1024 * 1024 / 3);
    fx.edit("src/bundle.js", &line);
    let node = fx.node("src/bundle.js");
    let outline = Outline::default()
        .produce(&node, line.as_bytes())
        .expect("outline");
    let outline = String::from_utf8(outline).expect("utf-8: cut on a char boundary");
    assert!(outline.len() <= 2048, "{} bytes", outline.len());
    let kept = outline.lines().nth(1).expect("the first line, cut");
    assert!(
        kept.len() <= MAX_LINE_BYTES + 2 && kept.ends_with(" more bytes]"),
        "{kept}"
    );
}

#[test]
fn a_minified_bundle_does_not_push_its_siblings_out_of_the_summary() {
    let fx = Fixture::new();
    // 200 KB over a few long lines, as a minified bundle.
    fx.edit(
        "src/app.min.js",
        &format!("{}\n", "x=1;".repeat(50_000)).repeat(4),
    );
    generate_all(&fx, &Summary::default());
    let bundle = head(&fx, "src/app.min.js");
    assert!(bundle.len() <= 2048, "{} bytes", bundle.len());
    let src = head(&fx, "src");
    for sibling in ["lib.rs", "main.rs", "util/"] {
        assert!(
            src.contains(&format!("## src/{sibling} ")),
            "{sibling}:\n{src}"
        );
    }
    assert!(!src.contains("more children cut"), "{src}");
}

#[test]
fn a_concatenation_gives_every_child_a_share() {
    let fx = Fixture::new();
    fx.edit("src/huge.txt", &"y".repeat(200 * 1024));
    generate_all(&fx, &Concat);
    let src = head(&fx, "src");
    assert!(src.len() <= CONCAT_MAX_BYTES, "{} bytes", src.len());
    for sibling in ["lib.rs", "main.rs", "util/"] {
        assert!(src.contains(&format!("## src/{sibling} ")), "{sibling}");
    }
}
