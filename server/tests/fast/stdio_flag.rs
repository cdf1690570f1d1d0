//! Editors' clients (vscode-languageclient, some Neovim configs) append `--stdio` to the
//! server's command line; the server must start with it, as `pivot-lsp serve --stdio` and as
//! `pivot-lsp --stdio`, and speak LSP over stdio exactly as without it.

use crate::support;

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

/// The server's own log goes to stderr (stdout is the protocol): with `PIVOT_LOG=debug`
/// every request has a span naming its method; a filter that does not parse is said once and
/// the default used.
#[test]
fn pivot_log_writes_a_line_per_request_on_stderr() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let root = tempfile::tempdir().unwrap();
    let run = |log: &str| -> (String, String) {
        let mut child = Command::new(EXE)
            .arg("serve")
            .current_dir(root.path())
            .env("PIVOT_LOG", log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = Vec::new();
        for m in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": null, "capabilities": {}}}),
            json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            json!({"jsonrpc": "2.0", "method": "exit"}),
        ] {
            pivot_lsp::lsp::transport::write_framed(&mut input, m.to_string().as_bytes()).unwrap();
        }
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (out, err) = run("debug");
    assert!(out.contains("\"id\":2"), "the shutdown is answered: {out}");
    assert!(
        err.contains("request{method=initialize") && err.contains("request{method=shutdown"),
        "{err}"
    );
    assert!(
        !err.contains("Content-Length"),
        "no protocol on stderr: {err}"
    );
    let (_, quiet) = run("");
    assert!(
        !quiet.contains("request{"),
        "the default level is quiet: {quiet}"
    );
    let (_, bad) = run("pivot=[");
    assert!(
        bad.contains("PIVOT_LOG") && bad.contains("not a log filter"),
        "{bad}"
    );
}
