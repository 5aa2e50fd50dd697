//! The system prompt: identity files with markers, caps and hashes, byte-stable assembly.
use std::fs;
use std::path::Path;
use std::sync::Arc;

use agent_loop::{
    IdentityContent, PromptLimits, RuntimeInfo, ToolConfig, ToolRegistry, Workspace,
    build_system_prompt, load_identity_files,
};
use llm_core::Tool;
use pretty_assertions::assert_eq;
use serde_json::json;

fn runtime(time: &str) -> RuntimeInfo {
    RuntimeInfo {
        workspace: "/home/dev/project".to_owned(),
        current_time: time.to_owned(),
    }
}

fn small_tools() -> Vec<Tool> {
    vec![Tool {
        name: "get_time".to_owned(),
        description: "Tell the time.".to_owned(),
        input_schema: json!({"type": "object"}),
    }]
}

/// A home with every kind of identity file: plain, missing, over the per-file cap, empty,
/// and one that the total cap cuts.
fn home(dir: &Path) {
    fs::write(dir.join("SOUL.md"), "You are careful and kind.\n").expect("soul");
    fs::write(
        dir.join("USER.md"),
        "The user is Ada. She prefers short answers and Rust.\n",
    )
    .expect("user");
    fs::write(dir.join("MEMORY.md"), "").expect("memory");
    fs::write(dir.join("AGENTS.md"), "Run the tests before you finish.\n").expect("agents");
    fs::write(
        dir.join("TOOLS.md"),
        "Prefer edit_file over write_file for small changes.\n",
    )
    .expect("tools");
}

const LIMITS: PromptLimits = PromptLimits {
    per_file_bytes: 40,
    total_bytes: 120,
};

#[test]
fn the_prompt_shows_files_markers_and_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    home(dir.path());
    let identity = load_identity_files(dir.path(), &LIMITS);
    let workspace = Arc::new(Workspace::open(dir.path()).expect("workspace"));
    let tools = ToolRegistry::with_builtins(&workspace, &ToolConfig::default()).export();
    let prompt = build_system_prompt(&identity, &tools, &runtime("2026-02-05"));
    insta::assert_snapshot!("system_prompt", prompt);

    let home = dir.path().display().to_string();
    let warnings: Vec<String> = identity
        .warnings
        .iter()
        .map(|w| w.replace(&home, "<home>"))
        .collect();
    assert_eq!(
        warnings,
        [
            "<home>/USER.md is 53 bytes, over the 40-byte limit for one identity file; the \
             prompt shows its first 40 bytes",
            "<home>/TOOLS.md is 52 bytes, over what remained of the 120-byte limit for all \
             identity files; the prompt shows its first 21 bytes",
        ]
    );
}

#[test]
fn hashes_cover_whole_files_that_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    home(dir.path());
    let identity = load_identity_files(dir.path(), &LIMITS);
    let hash = |name: &str| {
        blake3::hash(&fs::read(dir.path().join(name)).expect("read"))
            .to_hex()
            .to_string()
    };
    let expected: Vec<(String, String)> =
        ["AGENTS.md", "MEMORY.md", "SOUL.md", "TOOLS.md", "USER.md"]
            .into_iter()
            .map(|name| (name.to_owned(), hash(name)))
            .collect();
    assert_eq!(identity.hashes().into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn the_prompt_is_byte_stable_and_the_time_goes_last() {
    let dir = tempfile::tempdir().expect("tempdir");
    home(dir.path());
    let build = |time: &str| {
        let identity = load_identity_files(dir.path(), &PromptLimits::default());
        build_system_prompt(&identity, &small_tools(), &runtime(time))
    };
    let first = build("2026-02-05T14:30:00Z");
    assert_eq!(build("2026-02-05T14:30:00Z"), first);

    let later = build("2026-02-05T14:31:00Z");
    let (stable, volatile) = first.split_once("# Current time").expect("time section");
    assert!(later.starts_with(stable));
    assert_eq!(volatile, "\n\n2026-02-05T14:30:00Z\n");
}

#[test]
fn missing_home_and_unreadable_files_are_marked() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir(dir.path().join("SOUL.md")).expect("a folder where a file belongs");
    fs::write(dir.path().join("USER.md"), b"caf\xe9\n").expect("latin-1");
    let identity = load_identity_files(dir.path(), &PromptLimits::default());
    assert!(matches!(
        identity.files[0].content,
        IdentityContent::Unreadable(_)
    ));
    assert!(matches!(
        identity.files[1].content,
        IdentityContent::Missing
    ));
    let IdentityContent::Present { text, .. } = &identity.files[2].content else {
        panic!("USER.md is present");
    };
    assert_eq!(text, "caf\u{fffd}\n");
    assert_eq!(identity.warnings.len(), 2, "{:?}", identity.warnings);

    let prompt = build_system_prompt(&identity, &[], &runtime("today"));
    assert!(prompt.starts_with("# SOUL.md\n\n[SOUL.md could not be read: "));
    assert!(
        prompt.contains("# IDENTITY.md\n\n[IDENTITY.md is missing from the agent's home folder]\n")
    );

    let nowhere = load_identity_files(&dir.path().join("absent"), &PromptLimits::default());
    assert!(nowhere.warnings.is_empty());
    assert!(
        nowhere
            .files
            .iter()
            .all(|f| f.content == IdentityContent::Missing)
    );
}
