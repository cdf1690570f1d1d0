//! Inputs large enough that anything quadratic, or anything that holds all of its output
//! in memory, fails: `extract` of 250,000 functions and of a `def` with 40,000 arguments,
//! and a MemoryCode dialogue of 100,000 sessions opened in the language server while it
//! keeps answering hovers. The bounds are generous (a debug build on a loaded machine); a
//! quadratic step exceeds them by far. Speed figures: the test's own output (`--nocapture`).

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::bounds::run_in;
use support::lsp::{file_uri, Client};

#[test]
fn extract_of_250k_functions_is_streamed_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("many.py");
    let n = 250_000;
    let src: String = (0..n).map(|i| format!("def f{i}(): pass\n")).collect();
    std::fs::write(&f, src).unwrap();
    let r = run_in(
        dir.path(),
        &["extract", f.to_str().unwrap()],
        None,
        Duration::from_secs(300),
        1 << 12,
    );
    eprintln!(
        "extract, {n} functions: {:.1} s, {} MB peak RSS, {} MB of JSON",
        r.took.as_secs_f64(),
        r.peak_rss_mb,
        r.stdout_len >> 20
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.peak_rss_mb < 1024, "{} MB", r.peak_rss_mb);
    assert!(r.stdout.starts_with("{\n  \"syntax_error\": null,\n  \"objects\": {\n    \"function\": [\n      [\n        \"f0\"\n      ],"));
    // Each function: its name, and a range for it and for each of its six empty lists.
    assert!(r.stdout_len > n * 2_000, "{} bytes", r.stdout_len);
}

/// Checks the last function's objects without holding the JSON: a small file of the same
/// shape is parsed whole and its texts and ranges compared.
#[test]
fn extract_of_a_def_with_40k_arguments_is_linear() {
    let dir = tempfile::tempdir().unwrap();
    let mut took = Vec::new();
    for n in [10_000usize, 40_000] {
        let f = dir.path().join(format!("args{n}.py"));
        let args: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
        std::fs::write(&f, format!("def f({}):\n    pass\n", args.join(", "))).unwrap();
        let r = run_in(
            dir.path(),
            &["extract", f.to_str().unwrap()],
            None,
            Duration::from_secs(60),
            256 << 20,
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let got = v["objects"]["function argument"][0].as_array().unwrap();
        assert_eq!(got.len(), n);
        assert_eq!(got[n - 1], format!("a{}", n - 1));
        let last = &v["ranges"]["function argument"][0]["items"][n - 1];
        let col = 6 + args[..n - 1].iter().map(|a| a.len() + 2).sum::<usize>();
        assert_eq!(
            last["start"],
            json!({"line": 0, "character": col}),
            "{last}"
        );
        eprintln!(
            "extract, def with {n} arguments: {:.2} s, {} MB peak RSS",
            r.took.as_secs_f64(),
            r.peak_rss_mb
        );
        took.push(r.took);
    }
    // Quadratic was 2.2 s and 35 s in a release build; linear is well under a second.
    assert!(took[1] < Duration::from_secs(10), "{took:?}");
}

/// A dialogue of `n` sessions: each adds a pivot of its own (a distinct id and pattern)
/// except every tenth, which updates one of ten long-lived pivots (thousands of versions).
fn long_dialogue(n: usize) -> String {
    let mut instructions = Vec::with_capacity(n);
    let mut sessions = Vec::with_capacity(n);
    for s in 0..n {
        let (pid, version, ty) = if s % 10 == 0 {
            let p = (s / 10) % 10;
            (
                p,
                s / 100,
                if s < 100 {
                    "instruction-add"
                } else {
                    "instruction-update"
                },
            )
        } else {
            (1000 + s, 0, "instruction-add")
        };
        instructions.push(json!([[pid, version]]));
        sessions.push(json!({
            "type": [ty],
            "topic": [format!("always start function names with 'g{pid}_'")],
            "session_regex": [["function", format!("^g{pid}_{s}")]],
            "history_regex": [],
            "session_eval_query": ["a function"],
            "history_eval_query": [],
            "session_length": "short",
            "text": format!("Ana: session {s}.\n\nBen: Noted."),
        }));
    }
    json!({"context": {"mentor": "Ana", "mentee": "Ben"}, "instructions": instructions,
           "fillers": [], "sessions": sessions})
    .to_string()
}

#[test]
fn a_100k_session_dialogue_opens_while_hovers_are_answered() {
    let root = tempfile::tempdir().unwrap();
    let n: usize = std::env::var("SCALE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dialogue = root.path().join("dialogue_1.json");
    std::fs::write(&dialogue, long_dialogue(n)).unwrap();
    let mut c = Client::start(root.path());
    let uri = file_uri(&root.path().join("a.py"));
    c.open(&uri, "def f_one():\n    return 1\n");
    c.diagnostics(&uri);
    let hover = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}}})
    };
    let t = Instant::now();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 7000, "method": "workspace/executeCommand",
        "params": {"command": "pivot.conversation.open", "arguments": [{"path": dialogue}]}}),
    );
    // Hovers one after another while the dialogue opens: each answered promptly.
    let (mut during, mut slowest, mut id) = (0, Duration::ZERO, 7001);
    while !c.has_response(7000) && t.elapsed() < Duration::from_secs(120) {
        let h = Instant::now();
        c.send(&hover(id));
        c.response(id).expect("hover");
        slowest = slowest.max(h.elapsed());
        if !c.has_response(7000) {
            during += 1;
        }
        id += 1;
    }
    let info = c.response(7000).expect("the dialogue opens");
    let opened = t.elapsed();
    eprintln!(
        "{n}-session dialogue opened in {:.2} s; {during} hovers answered meanwhile, slowest {:.0} ms",
        opened.as_secs_f64(),
        slowest.as_secs_f64() * 1e3
    );
    assert_eq!(info["count"], n, "{info}");
    assert_eq!(info["index"], 0, "{info}");
    // Quadratic was over 60 s in a release build for this size.
    assert!(opened < Duration::from_secs(30), "{opened:?}");
    assert!(slowest < Duration::from_secs(2), "a hover took {slowest:?}");
    assert!(
        during > 0 || opened < Duration::from_millis(500),
        "no hover was answered in the {opened:?} the open took"
    );
    // The sessions are all there: the last one, its transcript and its pivots. (Without the
    // document: checking one against 90,010 distinct patterns is not what is measured here.)
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    c.diagnostics(&uri);
    let t = Instant::now();
    let last = c
        .command("pivot.session.goto", json!({"index": n - 1}))
        .expect("goto");
    assert_eq!(last["index"], n - 1);
    let md = c
        .command("pivot.session.transcript", json!({"index": n - 1}))
        .expect("transcript");
    assert!(
        md.to_string().contains(&format!("session {}", n - 1)),
        "{md}"
    );
    let info = c.command("pivot.conversation.info", Value::Null).unwrap();
    // 90% of the sessions add a pivot of their own, plus the ten updated ones.
    assert_eq!(info["active"], n / 10 * 9 + 10, "{info}");
    eprintln!(
        "goto the last session, its transcript and pivots: {:?}",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.pid())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse().ok())
        .unwrap();
    eprintln!("the server's peak RSS: {} MB", peak_kib / 1024);
    // 520 MB before the dialogue's lists were read without spare room and its pivots shared
    // rather than copied (about 210 MB after); the bound leaves room for allocator and
    // build differences, and catches a return to copies.
    assert!(
        peak_kib < 300 * 1024,
        "the server's peak RSS was {} MB",
        peak_kib / 1024
    );
    c.shutdown_after_noise();
}
