//! Editors' clients (vscode-languageclient, some Neovim configs) append `--stdio` to the
//! server's command line; the server must start with it, as `pivot-lsp serve --stdio` and as
//! `pivot-lsp --stdio`, and speak LSP over stdio exactly as without it.

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use serde_json::{json, Value};
use support::cli::EXE;
use support::lsp::Client;

fn serves_with(argv: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start_argv(
        root.path(),
        argv,
        json!({"window": {"workDoneProgress": true}}),
        Value::Null,
    );
    // start_argv already checked the initialize reply; one command round-trips too.
    c.expect("pivot/sessionChanged");
    let info = c
        .command("pivot.conversation.info", Value::Null)
        .unwrap_or_else(|e| panic!("{argv:?}: pivot.conversation.info failed: {e}"));
    assert!(info.get("count").is_some(), "{argv:?}: {info}");
    c.shutdown();
}

#[test]
fn serve_accepts_and_ignores_stdio() {
    serves_with(&["serve", "--stdio"]);
}

#[test]
fn no_subcommand_accepts_and_ignores_stdio() {
    serves_with(&["--stdio"]);
}

#[test]
fn stdio_is_not_a_catch_all_for_unknown_arguments() {
    let out = std::process::Command::new(EXE)
        .args(["serve", "--socket=9000"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown flag is still an error"
    );
}
