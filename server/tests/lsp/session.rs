//! The server's session: the state kept across restarts (and a corrupt state file set
//! aside), clear errors on malformed input with the server still serving, and commands sent
//! back to back applied in order.

use super::dialogue_1;
use crate::support::lsp::{error_of, fixture, Client};
use serde_json::{json, Value};

#[test]
fn state_survives_a_restart_and_a_corrupt_state_file_is_set_aside() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    c.command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    assert_eq!(c.session_changed(), (0, 3));
    c.command("pivot.session.goto", json!({"index": 2}))
        .unwrap();
    assert_eq!(c.session_changed(), (2, 3));
    c.command(
        "pivot.pivots.add",
        json!({"id": "mine", "kind": "class", "rule": "^[A-Z]", "session": 1}),
    )
    .unwrap();
    c.shutdown();
    let state = root.path().join(".pivot/state.json");
    assert!(state.is_file());

    // Restarted: same conversation, session and user pivot.
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (2, 3));
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    assert_eq!(info["source"], dialogue_1().as_str());
    let active = c.command("pivot.pivots.active", Value::Null).unwrap();
    let ids: Vec<&str> = active["pivots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mc-100", "mc-101", "mc-102", "mine"]);
    assert_eq!(
        active["pivots"][0]["rule"], ".*_x$",
        "the update at session 2"
    );
    c.shutdown();

    // A half-written file: reported, moved aside, and the server starts fresh.
    let full = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, &full[..full.len() / 2]).unwrap();
    let mut c = Client::in_memory(root.path());
    let shown = c.expect("window/showMessage");
    let msg = shown["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("not a valid state file") && msg.contains("moved it to"),
        "{msg}"
    );
    assert_eq!(shown["params"]["type"], 2, "a warning");
    assert_eq!(c.session_changed(), (0, 1));
    let aside: Vec<String> = std::fs::read_dir(root.path().join(".pivot"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    let kept = std::fs::read_to_string(root.path().join(".pivot").join(&aside[0])).unwrap();
    assert_eq!(
        kept,
        &full[..full.len() / 2],
        "the bad file is kept as it was"
    );
    c.shutdown();
}

#[test]
fn malformed_input_gives_clear_errors_and_the_server_keeps_serving() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    c.command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    assert_eq!(c.session_changed(), (0, 3));

    let bad = |name: &str| {
        fixture(&format!("fixtures/lsp/malformed/{name}"))
            .display()
            .to_string()
    };
    let cases = [
        ("truncated.json", "EOF while parsing"),
        ("unknown_kind.json", "sessions[0].session_regex[0]"),
        ("bad_regex.json", "invalid regular expression"),
        ("not_a_dialogue.json", "expected struct Dialogue"),
    ];
    for (file, problem) in cases {
        let (code, msg) =
            error_of(c.command("pivot.conversation.open", json!({"path": bad(file)})));
        assert_eq!(code, -32803, "{msg}");
        assert!(msg.contains(file) && msg.contains(problem), "{file}: {msg}");
    }
    let (code, msg) = error_of(c.command(
        "pivot.conversation.open",
        json!({"path": "no/such/dialogue_9.json"}),
    ));
    assert_eq!(code, -32803);
    assert!(
        msg.contains("no/such/dialogue_9.json") && msg.contains("cannot read"),
        "{msg}"
    );

    // Bad arguments name the command, the argument and the expected shape.
    let (code, msg) = error_of(c.command("pivot.session.goto", json!({"index": -1})));
    assert_eq!(code, -32602);
    assert!(
        msg.contains("pivot.session.goto") && msg.contains("`index`"),
        "{msg}"
    );
    let (_, msg) = error_of(c.command("pivot.session.goto", json!({"index": 3})));
    assert!(
        msg.contains("out of range") && msg.contains("0 to 2"),
        "{msg}"
    );
    let (_, msg) = error_of(c.command("pivot.conversation.open", json!(["x"])));
    assert!(msg.contains("must be a JSON object"), "{msg}");
    let (_, msg) = error_of(c.command(
        "pivot.pivots.add",
        json!({"id": "x", "kind": "functions", "rule": true}),
    ));
    assert!(msg.contains("unknown object kind \"functions\""), "{msg}");
    let (_, msg) = error_of(c.command(
        "pivot.pivots.add",
        json!({"id": "x", "kind": "function", "rule": "("}),
    ));
    assert!(msg.contains("invalid regular expression"), "{msg}");
    let (_, msg) = error_of(c.command("pivot.nope", Value::Null));
    assert!(msg.contains("unknown command `pivot.nope`"), "{msg}");
    let (code, _) = error_of(c.request("textDocument/hover", json!({"textDocument": 3})));
    assert_eq!(code, -32602);

    // Still serving, with the conversation that was open before.
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    assert_eq!(info["source"], dialogue_1().as_str());
    assert_eq!(info["count"], 3);
    c.shutdown();
}

/// Commands sent without waiting for each other's replies apply in the order sent
/// (the server runs requests concurrently; session commands take a first-come lock).
#[test]
fn commands_sent_back_to_back_apply_in_order() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    let burst = [
        ("pivot.conversation.open", json!([{"path": dialogue_1()}])),
        ("pivot.session.next", json!([])),
        ("pivot.session.next", json!([])),
        ("pivot.conversation.info", json!([])),
    ];
    let ids: Vec<i64> = burst
        .into_iter()
        .enumerate()
        .map(|(i, (command, arguments))| {
            let id = 9000 + i as i64;
            c.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
                           "params": {"command": command, "arguments": arguments}}),
            );
            id
        })
        .collect();
    let results: Vec<Value> = ids.iter().map(|id| c.response(*id).unwrap()).collect();
    assert_eq!(results[0]["index"], 0, "{results:?}");
    assert_eq!(results[1]["index"], 1, "{results:?}");
    assert_eq!(results[2]["index"], 2, "{results:?}");
    assert_eq!(results[3]["index"], 2, "{results:?}");
    for want in [(0, 3), (1, 3), (2, 3)] {
        assert_eq!(c.session_changed(), want);
    }
    c.shutdown();
}

#[test]
fn a_panicking_handler_is_an_error_reply_and_the_server_goes_on() {
    use crate::support::lsp::Doc;
    let root = tempfile::tempdir().unwrap();
    // The test hook makes the hover handler panic while it holds the workspace lock.
    let mut c = Client::start_env(
        root.path(),
        &[],
        &[
            ("PIVOT_TEST_PANIC", "textDocument/hover"),
            ("PIVOT_LOG", "info"),
        ],
        json!({"window": {"workDoneProgress": true}}),
        Value::Null,
    );
    assert_eq!(c.session_changed(), (0, 1));
    c.command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    assert_eq!(c.session_changed(), (0, 3));
    let mut doc = Doc::open(&mut c, "a.py", "def cube_x(n):\n    return n ** 3\n");
    let before = c.diagnostics(&doc.uri);
    assert!(!before.is_empty());
    for _ in 0..2 {
        let e = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": doc.uri}, "position": doc.at("cube_x")}),
            )
            .expect_err("the panic is an error reply");
        assert_eq!(e["code"], -32603, "an internal error: {e}");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains("textDocument/hover") && msg.contains("the server goes on"),
            "{msg}"
        );
    }
    // The server lives: commands are answered, and an edit is analysed and published under
    // the lock the panicking handler held.
    let info = c.command("pivot.conversation.info", json!({})).unwrap();
    assert_eq!(info["count"], 3);
    doc.edit(
        &mut c,
        &[json!({"range": doc.range_of("cube_x"), "newText": "f_cube"})],
    );
    let after = c.diagnostics(&doc.uri);
    assert_ne!(after, before, "the edit was analysed");
    assert!(c.is_running());
    c.shutdown();
}
