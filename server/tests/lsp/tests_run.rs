//! A HumanEval task's tests run from the editor (`pivot.tests.run`): failures on the
//! document's lines, the result on a code lens, kept until the next run.

use super::{TRUNCATE_RIGHT, TRUNCATE_WRONG};
use crate::support::lsp::{error_of, with_progress, Client, Doc};
use pivot_test_support::host::human_eval;
use serde_json::{json, Value};

pub fn tests_diags(diags: &[Value]) -> Vec<(u64, u64, u64, String)> {
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
pub fn line_of(text: &str, needle: &str) -> (u64, u64, u64) {
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap();
    let indent = line.len() - line.trim_start().len();
    (n as u64, indent as u64, line.len() as u64)
}

pub fn lenses(c: &mut Client, uri: &str) -> Value {
    c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    )
    .unwrap()
}

/// (line, title, arguments) of each code lens.
pub fn lens_list(v: &Value) -> Vec<(u64, String, Value)> {
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
    if !human_eval("test runs from the editor not checked") {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
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
