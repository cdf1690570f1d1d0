//! MemoryCode through the server: model outputs checked against a conversation and the
//! evaluation command, both equal to the CLI's scorer (on the fixtures and on ../shared),
//! and an evaluation cancelled through its progress token.

use super::dialogue_1;
use crate::support::cli::EXE;
use crate::support::lsp::{error_of, fixture, Client};
use pivot_test_support::host::shared;
use serde_json::{json, Value};
use std::path::Path;

/// The CLI's JSON report of `dataset` against `outputs`.
fn cli_score(dataset: &Path, outputs: &Path) -> Value {
    let out = std::process::Command::new(EXE)
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
    let mut c = Client::in_memory(root.path());
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

    let mut c = Client::in_memory(tmp.path());
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
    let Some(shared) = shared(
        "memorycode",
        "the real dialogues not checked through the server against the scorer",
    ) else {
        return;
    };
    let shared = shared.canonicalize().unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    c.session_changed();
    let outputs = shared.join("outputs/gpt-4o");
    // A short-history and a long-history dialogue.
    for id in [1, 300] {
        check_dialogue_against_cli(&mut c, &shared.join("dataset"), &outputs, id);
    }
    c.shutdown();
}

/// `pivot/memorycode/answers`, the request `score memorycode --via-lsp` sends per session:
/// each text is checked at the session the server is at, against the pairs of its kind; a
/// text that does not parse is a syntax error; a bad kind or a missing conversation fails
/// the whole request with a message that says which.
#[test]
fn headless_answers_are_checked_at_the_current_session() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    let answers = |items: Value| json!({"answers": items});
    let one = json!([{"text": "def f_a():\n    pass\n", "kind": "session", "answer": 0}]);
    let (_, msg) = error_of(c.request("pivot/memorycode/answers", answers(one)));
    assert!(msg.contains("no MemoryCode conversation is open"), "{msg}");

    c.request(
        "pivot/headless/setup",
        json!({"conversation": dialogue_1(), "session": 0}),
    )
    .expect("setup");
    // Session 0 of dialogue_1 asks for `^f_.*` function names and function docstrings.
    let r = c
        .request(
            "pivot/memorycode/answers",
            answers(json!([
                {"text": "def f_a():\n    \"\"\"Doc.\"\"\"\n", "kind": "session", "answer": 0},
                {"text": "def g():\n    pass\n", "kind": "instruction", "answer": 0},
                {"text": "def f_(:\n", "kind": "session", "answer": 0},
                {"text": "", "kind": "history", "answer": 0},
            ])),
        )
        .expect("answers");
    assert_eq!(r["session"], 0, "{r}");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{r}");
    assert_eq!(
        results[0]["verdicts"],
        json!([[0, "pass"], [1, "pass"]]),
        "{r}"
    );
    assert_eq!(results[1]["verdicts"], json!([[0, "fail"]]), "{r}");
    assert!(results[2]["syntax_error"].is_string(), "{r}");
    assert!(results[0]["syntax_error"].is_null(), "{r}");
    // Session 0 has no history pairs.
    assert_eq!(results[3]["verdicts"], json!([]), "{r}");

    let bad = json!([
        {"text": "x = 1\n", "kind": "session", "answer": 0},
        {"text": "x = 1\n", "kind": "nope", "answer": 0},
    ]);
    let (_, msg) = error_of(c.request("pivot/memorycode/answers", answers(bad)));
    assert!(msg.contains("got \"nope\""), "{msg}");
    let (_, msg) = error_of(c.request("pivot/memorycode/answers", json!({"texts": []})));
    assert!(msg.contains("texts"), "an unknown field is named: {msg}");
    // What the setup announced (the session, the pivots' diagnostics of no document).
    c.drain();
    c.shutdown();
}
