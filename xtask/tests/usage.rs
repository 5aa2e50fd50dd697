//! `cargo xtask` answers `--help` wherever it is given, and a mistake with the usage text.
use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("running the xtask binary")
}

#[test]
fn help_after_a_task_prints_the_usage_and_succeeds() {
    for args in [
        &["--help"][..],
        &["bench", "scan", "--help"],
        &["bench", "scan", "--repo", "x", "-h"],
        &["bench", "context", "--help"],
        &["tidy", "--help"],
    ] {
        let out = xtask(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("bench scan [options]"), "{args:?}: {text}");
    }
}

#[test]
fn an_unknown_option_is_a_usage_error() {
    let out = xtask(&["bench", "scan", "--nope"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("unknown option `--nope` for bench scan"),
        "{text}"
    );
    assert!(text.contains("usage: cargo xtask"), "{text}");
}
