//! `pivot-lsp memorycode generate --feedback pivots --rounds 2` against the loopback model
//! scripted by fixtures/memorycode/loopback.json, on the bundled fixtures: round 0 sends the
//! original's requests byte for byte; rounds 1 and 2 ask again exactly the answers with
//! findings, each as its conversation so far plus one user message holding only the findings
//! an agent's `check_code` gets for that code at that session; every round's folder is
//! scored by `score memorycode`, and the report draws the rounds.

use crate::support;

use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_workspace::agent::{check_code_in, reply_text, NO_FILE};
use pivot_workspace::replay::Move;
use pivot_workspace::Workspace;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{repo, stderr, EXE};

fn fixtures() -> PathBuf {
    repo().join("fixtures/memorycode")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn generate(out: &Path, endpoint: &[&str]) -> Output {
    let fx = fixtures();
    Command::new(EXE)
        .args(["memorycode", "generate", "--dataset"])
        .arg(fx.join("dataset"))
        .arg("--topics")
        .arg(fx.join("topics.json"))
        .arg("--out")
        .arg(out)
        .args(["--model", "gpt-4o", "--concurrency", "1", "--retries", "0"])
        .args(["--modes", "instruction,session,history,instructions-chain"])
        .args(["--feedback", "pivots", "--rounds", "2"])
        .args(endpoint)
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-golden")
        .output()
        .unwrap()
}

/// The (previous answer, feedback turn) pairs a round must send, from the round before's
/// output files: every dialogue answer whose code has findings under the pivots in force at
/// its session, with `check_code`'s reply for that code as the agent's model reads it.
fn expected_turns(round_dir: &Path) -> Vec<(String, String)> {
    let mut want = Vec::new();
    for id in [1, 2, 211] {
        let dialogue = fixtures().join(format!("dataset/dialogue_{id}.json"));
        let mut ws = Workspace::new(None);
        ws.open_conversation(&dialogue).unwrap();
        let out = json(&round_dir.join(format!("output_{id}.json")));
        let sessions = out["sessions"].as_array().unwrap();
        for (s, session) in sessions.iter().enumerate() {
            ws.replay.step(Move::Goto(s)).unwrap();
            for key in [
                "session_model_output",
                "history_model_output",
                "instructions_only_model_output",
            ] {
                for answer in session[key].as_array().into_iter().flatten() {
                    let answer = answer.as_str().unwrap();
                    let code = pivot_python::python::code_block::extract(answer).to_string();
                    let reply = check_code_in(&mut ws, None, NO_FILE, code, Vec::new());
                    if !reply.findings.is_empty() {
                        want.push((answer.to_string(), reply_text(&reply).unwrap()));
                    }
                }
            }
        }
    }
    want.sort();
    want
}

fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn feedback_rounds_send_only_the_findings_and_every_round_is_scored() {
    let script = Script::load(&fixtures().join("loopback.json")).unwrap();
    let srv = LoopbackServer::start(script).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = generate(&out, &["--base-url", &srv.base_url()]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Round 0: the original's requests, byte for byte, before any other.
    let golden: Vec<Value> = read(&fixtures().join("golden/requests.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen = srv.seen();
    assert!(seen.len() > golden.len(), "no feedback round was asked");
    for (i, (s, w)) in seen.iter().zip(&golden).enumerate() {
        let got = String::from_utf8(s.raw.clone()).unwrap();
        assert_eq!(
            got,
            w["body"].as_str().unwrap(),
            "round-0 request {i} differs"
        );
    }
    let round0: Vec<Vec<(String, String)>> = seen[..golden.len()]
        .iter()
        .map(|s| messages(&s.body))
        .collect();
    // Rounds 1 and 2: [system, user] of a round-0 request, then per round the answer and the
    // feedback turn.
    let later: Vec<Vec<(String, String)>> = seen[golden.len()..]
        .iter()
        .map(|s| messages(&s.body))
        .collect();
    let (r1, r2): (Vec<_>, Vec<_>) = later.into_iter().partition(|m| m.len() == 4);
    assert!(r2.iter().all(|m| m.len() == 6), "{r2:?}");
    let model = |r: usize| match r {
        0 => out.join("gpt-4o"),
        r => out.join(format!("feedback/round-{r}/gpt-4o")),
    };
    for (round, asked, before) in [(1, &r1, &round0), (2, &r2, &r1)] {
        for m in asked {
            let prefix = &m[..m.len() - 2];
            assert!(
                before.iter().any(|b| b.as_slice() == prefix),
                "round {round}: a request that continues no request of the round before"
            );
            assert_eq!(m[m.len() - 2].0, "assistant");
            assert_eq!(m[m.len() - 1].0, "user");
        }
        let mut got: Vec<(String, String)> = asked
            .iter()
            .map(|m| (m[m.len() - 2].1.clone(), m[m.len() - 1].1.clone()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            expected_turns(&model(round - 1)),
            "round {round}: the answers asked again and their feedback turns"
        );
    }

    // The counts follow from the script. 20 dialogue answers (dialogue 1: 4 session, 3
    // history, 3 chain; dialogue 2: 4, 1, 1; dialogue 211: 2, 1, 1; the chain's answers are
    // the history answers). At round 0 the default answer has findings everywhere it is
    // given: in dialogue 1 (5) it misses a docstring, and the answer to that turn adds one
    // (fixed); in dialogue 2 (6) it misses `import hashlib`, and the answer imports it but
    // names a variable `answer`, which breaks `^v_` (broken anew, fixed in round 2); in
    // dialogue 211 (4) it has neither a comment nor an argument, and the answer adds an
    // `a_` argument only (kept broken, then fixed in round 2).
    let summary = json(&out.join("feedback/gpt-4o.json"));
    assert_eq!(summary["model"], "gpt-4o");
    assert_eq!(summary["feedback"], "pivots");
    let counts = |r: usize| {
        let s = &summary["rounds"][r];
        assert_eq!(s["round"], r);
        [
            "answers",
            "broken",
            "reasked",
            "fixed",
            "kept_broken",
            "broken_anew",
            "unanswered",
        ]
        .map(|k| s[k].as_u64().unwrap())
    };
    assert_eq!(counts(0), [20, 15, 0, 0, 0, 0, 0]);
    assert_eq!(counts(1), [20, 10, 15, 5, 4, 6, 0]);
    assert_eq!(counts(2), [20, 0, 10, 10, 0, 0, 0]);
    assert_eq!((r1.len(), r2.len()), (15, 10));
    assert_eq!(summary["rounds"][2]["outputs"], "feedback/round-2/gpt-4o");

    // Each round's folder is scored as round 0's; in round 2 nothing has findings, so every
    // answer of the dialogue modes follows every pivot it is scored on.
    let scores: Vec<Value> = (0..=2)
        .map(|r| super::memorycode::score_json(&model(r)))
        .collect();
    for (r, s) in scores.iter().enumerate() {
        assert_eq!(s["model"], "gpt-4o");
        assert_eq!(s["skipped"], Value::Array(vec![]), "round {r}");
        assert_eq!(
            s.get("round").and_then(Value::as_u64),
            (r > 0).then_some(r as u64)
        );
    }
    for k in ["session", "short history", "long history"] {
        assert!(scores[0]["macro"][k].as_f64().unwrap() < 1.0, "{k}");
        assert_eq!(scores[2]["macro"][k], 1.0, "{k}");
    }
    assert_eq!(
        scores[2]["modes"]["instructions chain"]["macro"]["short history"],
        1.0
    );
    // The instruction mode's answers belong to no session: carried over unchanged.
    assert_eq!(
        scores[0]["macro"]["instruction"],
        scores[2]["macro"]["instruction"]
    );

    // The report draws the three rounds of the model.
    let files: Vec<PathBuf> = (0..=2)
        .map(|r| {
            let f = dir.path().join(format!("round{r}.json"));
            std::fs::write(&f, scores[r].to_string()).unwrap();
            f
        })
        .collect();
    let page = dir.path().join("report.html");
    let o = Command::new(EXE)
        .arg("report")
        .args(&files)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let html = read(&page);
    assert!(
        html.contains("MemoryCode session per feedback round"),
        "no rounds figure"
    );
    assert!(html.contains("gpt-4o [feedback round 2]"));
    // And what each round did, from the summary the round's score file carries.
    assert_eq!(scores[1]["feedback"], summary["rounds"][1]);
    assert!(scores[0].get("feedback").is_none());
    assert!(html.contains("broken anew"), "no counts table");

    // A rerun asks nothing and rewrites nothing; offline, it ends the same.
    let summary_text = read(&out.join("feedback/gpt-4o.json"));
    let n = srv.seen().len();
    let url = srv.base_url();
    for endpoint in [vec!["--base-url", url.as_str()], vec!["--offline"]] {
        let o = generate(&out, &endpoint);
        assert!(o.status.success(), "{endpoint:?}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("wrote "), "{endpoint:?}: {text}");
        assert_eq!(srv.seen().len(), n, "{endpoint:?}: a request was sent");
        assert_eq!(read(&out.join("feedback/gpt-4o.json")), summary_text);
    }
}
