//! Against the original itself: DSPy 2.4.12's re-ask, the request parameters, the `log` and
//! order rules and the eval-file shape, compared with what ConvCodeWorld v0.3.6 (run.py,
//! unmodified, dspy-ai 2.4.12) wrote for the same inputs and scripted answers
//! (fixtures/convcode/reask/README.md says how the golden files were made).

use super::fixtures;
use pivot_bench::convcode::config::Layout;
use pivot_bench::convcode::config::{eval_path, Config};
use pivot_bench::convcode::executor::{Control, Observer};
use pivot_bench::convcode::live::{run_live, LiveOptions, Turn0};
use pivot_bench::convcode::turn::TurnEnv;
use pivot_exec::problem::load_bigcodebench_jsonl;
use pivot_exec::{Runner, RunnerConfig};
use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_llm::{Client, ClientConfig, EndpointKind};
use serde_json::json;
use std::path::PathBuf;

fn dir() -> PathBuf {
    fixtures().join("reask")
}

fn client(url: &str, model: &str, kind: EndpointKind) -> Client {
    let mut c = ClientConfig::new(url, model);
    c.kind = kind;
    c.retries = 0;
    Client::new(c).unwrap()
}

/// Tells the scripted server which turn follows (for rules limited to turns).
struct Turns<'a>(&'a LoopbackServer);
impl Observer for Turns<'_> {
    fn stage(&self, what: &str, _total: usize) {
        if let Some(t) = what.rsplit(" turn ").next().and_then(|t| t.parse().ok()) {
            self.0.set_turn(t);
        }
    }
}

/// Runs turn 1 of `config` as the original's driver would, returns the results folder
/// and the server (with the requests it saw). `None` (a skip listed by test_skip) without python3.
fn run_turn1(config: &str, fix_quirks: bool) -> Option<(tempfile::TempDir, LoopbackServer)> {
    let python = PathBuf::from("python3");
    let runner = match Runner::new(RunnerConfig {
        python: python.clone(),
        ..RunnerConfig::default()
    }) {
        Ok(r) => r,
        Err(e) => {
            pivot_test_support::test_skip::skip(&format!("no Python runner here: {e:#}"));
            return None;
        }
    };
    let problems = load_bigcodebench_jsonl(&dir().join("problems.jsonl")).unwrap();
    let script = Script::load(&dir().join("script.json")).unwrap();
    let server = LoopbackServer::start(script).unwrap();
    let out = tempfile::tempdir().unwrap();
    let layout = Layout::new(out.path(), "gpt-4o");
    // The turn-0 evaluation both runs read (written by hand in BigCodeBench's shape).
    let t0_eval = eval_path(&layout.turn0_samples("org/coder"));
    std::fs::create_dir_all(t0_eval.parent().unwrap()).unwrap();
    std::fs::copy(dir().join("turn0_eval_results.json"), &t0_eval).unwrap();
    let coder = client(&server.base_url(), "org/coder", EndpointKind::Completions);
    let sim = client(&server.base_url(), "gpt-4o", EndpointKind::Chat);
    let env = TurnEnv {
        coder: &coder,
        simulator: Some(&sim),
        python: &python,
        runner: Some(&runner),
        instructions: None,
    };
    let mut opts = LiveOptions::new(layout, "org/coder", vec![Config::parse(config).unwrap()]);
    opts.turns = 1;
    opts.workers = 1;
    opts.fix_quirks = fix_quirks;
    let samples = dir().join("turn0.jsonl");
    run_live(
        &opts,
        &problems,
        Turn0::Samples(&samples),
        &env,
        &runner,
        &Control::default(),
        &Turns(&server),
    )
    .unwrap();
    Some((out, server))
}

const RUNS: [(&str, &str); 3] = [
    ("CF", "CF"),
    ("CF_EF_UNIT_SNF", "CF_EF_UNIT_SNF_by_gpt-4o"),
    ("CF_EF_FULL_SEF", "CF_EF_FULL_SEF_by_gpt-4o"),
];

fn golden_requests(config: &str) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(dir().join(format!("golden/{config}.requests.jsonl")))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["endpoint"].as_str().unwrap().to_string(),
                v["body"].clone(),
            )
        })
        .collect()
}

/// Records (with `log`, order and the re-asked code) and every request, as the original.
#[test]
fn records_and_requests_equal_the_originals() {
    for (config, stem) in RUNS {
        let Some((out, server)) = run_turn1(config, false) else {
            return;
        };
        let name = format!("bigcodebench_org_coder_{stem}.jsonl");
        let ours = std::fs::read_to_string(out.path().join("results/v0.3.6").join(&name)).unwrap();
        let want = std::fs::read_to_string(dir().join("golden").join(&name)).unwrap();
        for (i, (o, w)) in ours.lines().zip(want.lines()).enumerate() {
            assert_eq!(o, w, "{config}: record {} differs", i + 1);
        }
        assert_eq!(
            ours, want,
            "{config}: record count or trailing bytes differ"
        );
        // Requests: the same bodies (values and number types; key order is the client
        // library's), in the same order.
        let seen: Vec<(String, serde_json::Value)> = server
            .seen()
            .into_iter()
            .map(|s| (s.endpoint, s.body))
            .collect();
        let want = golden_requests(config);
        assert_eq!(seen.len(), want.len(), "{config}: number of requests");
        for (i, (s, w)) in seen.iter().zip(want.iter()).enumerate() {
            assert_eq!(s, w, "{config}: request {} differs", i + 1);
        }
    }
}

/// The re-ask paths themselves, read from the golden requests so that a fixture that
/// stopped exercising them would fail here.
#[test]
fn golden_requests_cover_both_reask_sides() {
    let ends = |r: &(String, serde_json::Value)| -> String {
        let b = &r.1;
        let p = b["prompt"]
            .as_str()
            .or_else(|| b["messages"][0]["content"].as_str())
            .unwrap();
        p[p.len().saturating_sub(60)..].to_string()
    };
    let cf = golden_requests("CF");
    assert_eq!(cf[1].1["max_tokens"], json!(1024));
    assert!(ends(&cf[1]).ends_with("I am not sure how.\n\nCode:"));
    let snf = golden_requests("CF_EF_UNIT_SNF");
    assert!(ends(&snf[0]).ends_with("\n\nUser Feedback:"));
    assert!(ends(&snf[1]).ends_with("Reasoning: Let's think step by step in order to"));
    assert_eq!(snf[1].1["max_tokens"], json!(1024));
    let sef = golden_requests("CF_EF_FULL_SEF");
    let cont = sef
        .iter()
        .find(|r| r.0 == "chat" && r.1["max_tokens"] == json!(1024))
        .expect("a simulator continuation");
    assert!(ends(cont).ends_with("one element early.\n\nUser Feedback:"));
    for (_, b) in cf.iter().chain(&snf).chain(&sef) {
        assert_eq!(
            (
                &b["top_p"],
                &b["frequency_penalty"],
                &b["presence_penalty"],
                &b["n"]
            ),
            (&json!(1), &json!(0), &json!(0), &json!(1))
        );
    }
}

/// `--fix-quirks` leaves `log` null where no call was made; everything else the same.
#[test]
fn fix_quirks_keeps_log_null_without_a_call() {
    let Some((out, _server)) = run_turn1("CF", true) else {
        return;
    };
    let log = pivot_bench::convcode::records::read_log(
        &out.path()
            .join("results/v0.3.6/bigcodebench_org_coder_CF.jsonl"),
    )
    .unwrap();
    let nulls: Vec<&str> = log
        .records
        .iter()
        .filter(|r| r.log.is_none())
        .map(|r| r.task_id.as_str())
        .collect();
    // Only BigCodeBench/1 calls the model under CF.
    assert_eq!(nulls.len(), 4, "{nulls:?}");
    assert!(!nulls.contains(&"BigCodeBench/1"));
}

/// Eval files in the results tree: exactly `{"date": "%Y-%m-%d %H:%M", "eval": {...}}`,
/// laid out as Python's `json.dump(results, f, indent=2)` lays it out.
#[test]
fn eval_files_have_bigcodebenchs_shape() {
    let Some((out, _server)) = run_turn1("CF", false) else {
        return;
    };
    let path = out
        .path()
        .join("results/v0.3.6/bigcodebench_org_coder_CF_eval_results.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["date", "eval"]);
    let date = v["date"].as_str().unwrap();
    let shape: Vec<bool> = date.chars().map(|c| c.is_ascii_digit()).collect();
    assert_eq!(date.len(), 16, "{date}");
    assert!(date.chars().enumerate().all(|(i, c)| match i {
        4 | 7 => c == '-',
        10 => c == ' ',
        13 => c == ':',
        _ => shape[i],
    }));
    let entry = v["eval"]["BigCodeBench/1"][0].as_object().unwrap();
    let ek: Vec<&String> = entry.keys().collect();
    assert_eq!(ek, ["task_id", "solution", "status", "details"]);
    let py = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2), end='')",
        ])
        .arg(&path)
        .output();
    match py {
        Ok(o) if o.status.success() => {
            assert_eq!(String::from_utf8(o.stdout).unwrap(), text)
        }
        _ => pivot_test_support::test_skip::skip("python3 unavailable to compare the JSON layout"),
    }
}
