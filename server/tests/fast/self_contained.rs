//! The binary on its own, as `pip install` leaves it: run from an empty folder, it scores the
//! MemoryCode demo built into it, serves the model-server's built-in HumanEval demo, names
//! its version and commit, and prints shell completions and manual pages.
//! (tests/packaging/test.sh runs the same from the installed wheel.)

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use support::cli::{pivot, repo, text, EXE};

#[test]
fn score_memorycode_without_paths_is_the_fixture_folders_from_any_folder() {
    let empty = tempfile::tempdir().unwrap();
    let built_in = pivot(empty.path(), &["score", "memorycode", "--format", "json"]);
    assert!(built_in.status.success(), "{}", text(&built_in.stderr));
    let fixtures = repo().join("fixtures/memorycode");
    let from_folders = pivot(
        empty.path(),
        &[
            "score",
            "memorycode",
            "--format",
            "json",
            "--dataset",
            fixtures.join("dataset").to_str().unwrap(),
            "--outputs",
            fixtures.join("outputs/demo-model").to_str().unwrap(),
        ],
    );
    assert!(from_folders.status.success());
    assert_eq!(text(&built_in.stdout), text(&from_folders.stdout));
    let json: serde_json::Value = serde_json::from_slice(&built_in.stdout).unwrap();
    assert_eq!(json["model"], "demo-model", "{json}");
    // Nothing is left behind: not in the working folder.
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}

#[test]
fn model_server_without_a_script_serves_the_built_in_humaneval_demo() {
    let empty = tempfile::tempdir().unwrap();
    let mut child = Command::new(EXE)
        .args(["model-server", "--port", "0", "--quiet"])
        .current_dir(empty.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_string();
    let addr = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/v1"))
        .unwrap_or_else(|| panic!("a base URL: {url:?}"));
    // One chat request for HumanEval/0's prompt: the demo's answer is code for it.
    let body = serde_json::json!({
        "model": "demo",
        "messages": [{"role": "user", "content": "def has_close_elements(numbers: List[float], threshold: float) -> bool:"}],
    })
    .to_string();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    child.kill().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("choices"), "{reply}");
    assert!(
        err.contains("rules from the bundled HumanEval demo"),
        "{err}"
    );
    assert!(err.contains("#1 "), "the request is logged: {err}");
}

#[test]
fn version_names_the_commit_when_built_from_a_git_checkout() {
    let out = pivot(&repo(), &["--version"]);
    assert!(out.status.success());
    let v = text(&out.stdout);
    let plain = format!("pivot-lsp {}", env!("CARGO_PKG_VERSION"));
    let head = Command::new("git")
        .args([
            "-C",
            repo().to_str().unwrap(),
            "rev-parse",
            "--short=12",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    match head {
        // build.rs watches HEAD: the binary cargo built for this test names HEAD's commit.
        Some(hash) => assert!(v.starts_with(&format!("{plain} ({hash} ")), "{v}"),
        None => assert_eq!(v.trim(), plain),
    }
}

#[test]
fn completions_for_each_shell_and_the_manual_pages() {
    let empty = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef pivot-lsp"),
        ("fish", "complete -c pivot-lsp"),
    ] {
        let out = pivot(empty.path(), &["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        // Every command is offered.
        for command in ["score", "check", "model-server", "completions", "man"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    let bad = pivot(empty.path(), &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("possible values: bash"),
        "{}",
        text(&bad.stderr)
    );

    let page = pivot(empty.path(), &["man"]);
    assert!(page.status.success());
    let roff = text(&page.stdout);
    assert!(roff.contains(".TH pivot-lsp 1"), "{roff}");
    assert!(roff.contains("pivot\\-lsp\\-check(1)"), "{roff}");
    let dir = empty.path().join("man1");
    let out = pivot(empty.path(), &["man", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for name in [
        "pivot-lsp.1",
        "pivot-lsp-check.1",
        "pivot-lsp-score-memorycode.1",
    ] {
        let p = dir.join(name);
        let roff = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(roff.starts_with(".ie") || roff.contains(".TH"), "{name}");
    }
    // --help of check is in its page.
    let check = std::fs::read_to_string(dir.join("pivot-lsp-check.1")).unwrap();
    assert!(check.contains("\\-\\-format"), "{check}");
}
