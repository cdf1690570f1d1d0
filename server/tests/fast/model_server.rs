//! `pivot-lsp model-server`: the binary serves the bundled demo script over real HTTP on
//! loopback, answers both endpoints from its rules, logs each request, and refuses a bad
//! script with a message naming the file.

use crate::support;

use std::process::Command;
use support::cli::{repo, EXE};
use support::model_server::DemoServer;

fn post(url: &str, body: serde_json::Value) -> serde_json::Value {
    reqwest::blocking::Client::new()
        .post(url)
        .json(&body)
        .send()
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .unwrap()
}

#[test]
fn demo_script_answers_both_endpoints_and_logs_each_request() {
    let script = repo().join("fixtures/model-server/humaneval-demo.json");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let server = DemoServer::start_verbose(&script, Some(&log));

    // A refinement prompt quoting the turn-0 code of HumanEval/1: the "fix" rule answers
    // with a DSPy-style `Code:` block holding the fixed version.
    let prompt = "Reasoning: Let's think step by step in order to ${produce the generated_code}.\n\
                  Previous Code:\ndef separate_paren_groups(s):\n    # demo: paren-v0\n    return []\n";
    let chat = post(
        &format!("{}/chat/completions", server.url),
        serde_json::json!({"model": "demo", "messages": [{"role": "user", "content": prompt}]}),
    );
    let content = chat["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(content.contains("Code: ```python"), "{content}");
    assert!(content.contains("# demo: paren-ok"), "{content}");

    // The same script over /v1/completions; an unknown prompt gets the default answer.
    let comp = post(
        &format!("{}/completions", server.url),
        serde_json::json!({"model": "demo", "prompt": "something no rule knows"}),
    );
    let text = comp["choices"][0]["text"].as_str().unwrap();
    assert!(text.contains("no rule of the script matched"), "{text}");

    // Each request is in the JSON-lines log with the rule that answered ...
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["rule"], "fix-separate_paren_groups");
    assert_eq!(lines[0]["endpoint"], "chat");
    assert_eq!(lines[1]["rule"], serde_json::Value::Null);
    assert_eq!(lines[1]["endpoint"], "completions");

    // ... and on stderr, one line per request.
    let err = server.stop();
    assert!(
        err.contains("#1 chat 200 rule=fix-separate_paren_groups"),
        "{err}"
    );
    assert!(err.contains("#2 completions 200 rule=(default)"), "{err}");
}

#[test]
fn a_bad_script_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("rules.json");
    std::fs::write(&bad, r#"{"rules": [{"contains": "not a list"}]}"#).unwrap();
    let out = Command::new(EXE)
        .args(["model-server", "--port", "0", "--script"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rules.json"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "nothing may listen: {:?}",
        out.stdout
    );
}
