//! Ten thousand random, truncated and misframed messages: the server keeps answering, and
//! its copy of the edited document stays exact.

use super::dialogue_1;
use crate::support::lsp::{fixture, lsp_pos, Client, Doc};
use pivot_test_support::edit_fuzz::Rng;
use serde_json::{json, Value};

const KEYS: [&str; 16] = [
    "textDocument",
    "uri",
    "position",
    "line",
    "character",
    "range",
    "start",
    "end",
    "text",
    "contentChanges",
    "version",
    "command",
    "arguments",
    "path",
    "index",
    "token",
];

/// A random JSON value, often shaped like LSP params.
fn random_json(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth == 0 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => rng
            .pick(&[
                json!(0),
                json!(-1),
                json!(4294967295u64),
                json!(1e300),
                json!(7),
                json!(0.5),
            ])
            .clone(),
        3 => json!(rng.pick(&[
            "",
            "file:///x.py",
            "😀名",
            "pivot.session.goto",
            "\u{0}",
            "../../etc"
        ])),
        4 => json!(rng.below(100)),
        5 | 6 => {
            let mut m = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                let k = rng.pick(&KEYS).to_string();
                m.insert(k, random_json(rng, depth - 1));
            }
            Value::Object(m)
        }
        _ => Value::Array(
            (0..rng.below(3))
                .map(|_| random_json(rng, depth - 1))
                .collect(),
        ),
    }
}

/// A random char-boundary byte offset of `text`.
fn boundary(rng: &mut Rng, text: &str) -> usize {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[test]
fn ten_thousand_random_and_truncated_messages_do_not_crash_the_server() {
    const METHODS: [&str; 14] = [
        "textDocument/hover",
        "textDocument/codeAction",
        "textDocument/didChange",
        "textDocument/didOpen",
        "textDocument/didClose",
        "textDocument/didSave",
        "workspace/executeCommand",
        "workspace/didChangeWatchedFiles",
        "initialize",
        "window/workDoneProgress/cancel",
        "$/cancelRequest",
        "textDocument/completion",
        "pivot/unknown",
        "initialized",
    ];
    const PIECES: [&str; 12] = [
        "",
        "a",
        "😀",
        "名前",
        "\n",
        "\r\n",
        "def f(x):\n    return x\n",
        "    ",
        "(",
        "'",
        "class C:\n  @timer\n  def m(self): pass\n",
        "é",
    ];
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    c.session_changed();
    c.command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    let text = std::fs::read_to_string(fixture("fixtures/lsp/session_demo.py")).unwrap();
    let mut model = Doc::open(&mut c, "model.py", &text);
    let other = Doc::open(&mut c, "other.py", "x = 1\n");
    let commands: Vec<&str> = pivot_commands();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut sent, mut edits) = (0, 0);
    let mut pool: Vec<String> = Vec::new();
    while sent < 10_000 {
        let msg: Option<Value> = match rng.below(9) {
            // A valid edit of the model document.
            0 | 1 => {
                let (a, b) = (
                    boundary(&mut rng, &model.text),
                    boundary(&mut rng, &model.text),
                );
                let (a, b) = (a.min(b), a.max(b));
                let range =
                    json!({"start": lsp_pos(&model.text, a), "end": lsp_pos(&model.text, b)});
                let edit = json!({"range": range, "newText": rng.pick(&PIECES)});
                model.edit(&mut c, &[edit]);
                edits += 1;
                sent += 1;
                None
            }
            // Edits of the other document at arbitrary (reversed, out of range) positions.
            2 => {
                let p = |rng: &mut Rng| json!({"line": rng.below(40), "character": rng.pick(&[0usize, 3, 80, 4294967295])});
                let range = json!({"start": p(&mut rng), "end": p(&mut rng)});
                Some(
                    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": other.uri, "version": sent},
                    "contentChanges": [{"range": range, "text": rng.pick(&PIECES)}]}}),
                )
            }
            3 => {
                let pos = json!({"line": rng.below(20), "character": rng.below(40)});
                let uri = if rng.below(2) == 0 {
                    &model.uri
                } else {
                    &other.uri
                };
                Some(if rng.below(2) == 0 {
                    json!({"jsonrpc": "2.0", "id": sent, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}, "position": pos}})
                } else {
                    json!({"jsonrpc": "2.0", "id": sent, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": uri}, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}}})
                })
            }
            4 => Some(
                json!({"jsonrpc": "2.0", "id": sent, "method": "workspace/executeCommand", "params": {
                "command": rng.pick(&commands), "arguments": [random_json(&mut rng, 2)]}}),
            ),
            5 => {
                let mut m = json!({"jsonrpc": "2.0", "method": rng.pick(&METHODS), "params": random_json(&mut rng, 3)});
                if rng.below(2) == 0 {
                    m["id"] = random_json(&mut rng, 0);
                }
                Some(m)
            }
            // A message cut short (the framing says how long the cut body is).
            6 if !pool.is_empty() => {
                let whole = rng.pick(&pool).clone();
                let cut = boundary(&mut rng, &whole);
                c.send_raw(&whole.as_bytes()[..cut]);
                sent += 1;
                None
            }
            // Broken framing: bytes outside any message, a bad length, a length shorter
            // than the body (its rest is garbage until the next header).
            7 => {
                let bytes: &[u8] = match rng.below(3) {
                    0 => b"\r\n}{ not a header\r\n",
                    1 => b"Content-Length: twelve\r\n\r\n{}",
                    _ => b"Content-Length: 5\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
                };
                c.send_unframed(bytes);
                sent += 1;
                None
            }
            // Bytes that are not JSON at all.
            _ => {
                let junk: String = (0..rng.below(30))
                    .map(|_| *rng.pick(&['{', '}', '"', 'a', '😀', '\\', ':', ',', '[', '\u{7f}']))
                    .collect();
                c.send_raw(junk.as_bytes());
                sent += 1;
                None
            }
        };
        if let Some(m) = msg {
            let s = m.to_string();
            c.send_raw(s.as_bytes());
            if pool.len() < 64 {
                pool.push(s);
            }
            sent += 1;
        }
        if sent % 1000 == 0 {
            // Still answering, and the reply stream is drained as we go.
            c.command("pivot.conversation.info", Value::Null).unwrap();
            c.drain();
        }
    }
    // The fuzzed server still answers, and its copy of the model document is exact.
    assert!(c.is_running(), "the server died");
    let seen = c
        .command("pivot.document.inspect", json!({"uri": model.uri}))
        .unwrap();
    assert_eq!(
        seen["text"],
        model.text.as_str(),
        "after {edits} random edits"
    );
    eprintln!("fuzz: {sent} messages sent ({edits} valid random edits); server alive and in sync");
    c.drain();
    c.shutdown_after_noise();
}

fn pivot_commands() -> Vec<&'static str> {
    vec![
        "pivot.conversation.open",
        "pivot.conversation.info",
        "pivot.session.next",
        "pivot.session.previous",
        "pivot.session.goto",
        "pivot.session.transcript",
        "pivot.pivots.active",
        "pivot.pivots.add",
        "pivot.pivots.remove",
        "pivot.outputs.check",
        "pivot.evaluate.memorycode",
        "pivot.document.inspect",
        "pivot.nope",
    ]
}
