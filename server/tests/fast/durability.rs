//! Long runs that survive: `convcode run` and `memorycode generate` killed with SIGKILL at
//! 20 seeded moments each, then run again with the same command, end with a tree byte for
//! byte equal to an uninterrupted run's (records, evaluation files, turn-0 files, response
//! caches, outputs; no temporary file left); a second run on a folder in use is refused;
//! and a run through an endpoint that answers 429 with Retry-After, 503, drops connections,
//! cuts bodies, stalls and sends non-JSON 200s ends with the fault-free run's tree.

use crate::support;

use pivot_test_support::host::human_eval;
use rand_mt::Mt64;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::cli::{ok, repo, reproducible};
use support::faulty_proxy::{Fault, Proxy};
use support::files::{assert_same_files, tree};
use support::model_server::DemoServer;

/// `pivot-lsp ARGS` from the checkout, with the dates it writes fixed.
fn command(args: &[String]) -> Command {
    reproducible(&repo(), args)
}

fn run_ok(args: &[String], what: &str) -> Output {
    ok(command(args).output().unwrap(), what)
}

/// Runs `args(dir)` to the end once (the reference), then for 20 seeded moments within its
/// duration: starts it in a fresh folder, SIGKILLs it at that moment, runs it again to the
/// end, and compares the folder with the reference.
fn killed_and_resumed(
    seed: u64,
    args: &(dyn Fn(&Path) -> Vec<String> + Sync),
    check: &dyn Fn(&Path),
) {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let start = Instant::now();
    run_ok(&args(&whole), "uninterrupted run");
    let full = start.elapsed();
    check(&whole);
    let want = tree(&whole);
    let mut rng = Mt64::new(seed);
    let moments: Vec<Duration> = (0..20)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            full.mul_f64(0.02 + 0.96 * u)
        })
        .collect();
    // (killed while running, the resumed run said what it resumed)
    let one = |i: usize| -> (bool, bool) {
        let moment = moments[i];
        let d = dir.path().join(format!("k{i}"));
        let mut child = command(&args(&d))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(moment);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let left_lock = d.join(".pivot-lock").exists();
        let out = run_ok(
            &args(&d),
            &format!("resumed run {i} (killed at {moment:?})"),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        if left_lock {
            assert!(
                err.contains("resuming") && err.contains("ended without finishing"),
                "run {i}: the resumed run does not say what it resumed:\n{err}"
            );
        }
        assert_same_files(&tree(&d), &want, &format!("killed at {moment:?} (run {i})"));
        std::fs::remove_dir_all(&d).unwrap();
        (status.signal() == Some(libc::SIGKILL), left_lock)
    };
    // Two at a time (the runs mostly wait on the model and on test runs).
    let results: Vec<(bool, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|w| {
                let one = &one;
                s.spawn(move || (w..20).step_by(2).map(one).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let killed = results.iter().filter(|r| r.0).count();
    let resumed_notes = results.iter().filter(|r| r.1).count();
    eprintln!(
        "uninterrupted run {full:?}; {killed} of 20 kills hit a running process, {resumed_notes} resumed runs said what they resumed"
    );
    // The moments fall within the run: most kills must have hit a running process.
    assert!(
        killed >= 10,
        "only {killed} of 20 kills hit a running process"
    );
    assert!(resumed_notes >= 5, "only {resumed_notes} resumes said so");
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn convcode_run_killed_at_20_seeded_moments_resumes_byte_identical() {
    if !human_eval("ConvCodeWorld runs not checked") {
        return;
    }
    let server = DemoServer::start(&repo().join("fixtures/model-server/humaneval-demo.json"));
    // A model that takes 10 ms per answer, so the moments spread over requests and writes.
    let proxy = Proxy::start(&server.url, Duration::from_millis(10), Box::new(|_| None));
    let url = proxy.url.clone();
    let args = move |d: &Path| {
        let mut a = strings(&[
            "convcode",
            "run",
            "--model",
            "demo/ref",
            "--base-url",
            &url,
            "--limit",
            "5",
            "--config",
            "CF_EF_FULL_SNF,CF_SEF",
            "--turns",
            "3",
            "--results",
        ]);
        a.push(d.to_string_lossy().into_owned());
        a
    };
    killed_and_resumed(22, &args, &|whole| {
        // The reference holds the loop's files: turn 0, its raw answers, three turns of two
        // configurations with their evaluations, and the cache.
        let t = tree(whole);
        assert!(t
            .iter()
            .any(|f| f.0.ends_with("-sanitized-calibrated.jsonl")));
        assert!(t
            .iter()
            .any(|f| f.0.ends_with("CF_SEF_by_gpt-4o_ITER=3_eval_results.json")));
        assert!(t.iter().any(|f| f.0.starts_with(".convcode-cache/")));
        assert!(!t.iter().any(|f| f.0.contains(".pivot-lock")));
    });
}

#[test]
fn memorycode_generate_killed_at_20_seeded_moments_resumes_byte_identical() {
    let server = DemoServer::start(&repo().join("fixtures/memorycode/loopback.json"));
    let proxy = Proxy::start(&server.url, Duration::from_millis(40), Box::new(|_| None));
    let url = proxy.url.clone();
    let args = move |d: &Path| {
        let mut a = strings(&[
            "memorycode",
            "generate",
            "--dataset",
            "fixtures/memorycode/dataset",
            "--model",
            "demo/loop-model",
            "--base-url",
            &url,
            "--concurrency",
            "2",
            "--out",
        ]);
        a.push(d.to_string_lossy().into_owned());
        a
    };
    killed_and_resumed(2022, &args, &|whole| {
        let t = tree(whole);
        assert!(t.iter().any(|f| f.0 == "instruction/loop-model.json"));
        assert!(t.iter().any(|f| f.0 == "loop-model/output_211.json"));
        assert!(t.iter().filter(|f| f.0.starts_with(".cache/")).count() >= 10);
    });
}

#[test]
fn a_second_run_on_a_folder_in_use_is_refused_and_writes_nothing() {
    if !human_eval("ConvCodeWorld runs not checked") {
        return;
    }
    let server = DemoServer::start(&repo().join("fixtures/model-server/humaneval-demo.json"));
    // Slow answers keep the first run busy while the second one starts.
    let proxy = Proxy::start(&server.url, Duration::from_millis(300), Box::new(|_| None));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("r");
    let args = strings(&[
        "convcode",
        "run",
        "--model",
        "demo/ref",
        "--base-url",
        &proxy.url,
        "--limit",
        "5",
        "--config",
        "CF_SEF",
        "--turns",
        "1",
        "--results",
        &d.to_string_lossy(),
    ]);
    let first = command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !d.join(".pivot-lock").exists() {
        assert!(Instant::now() < deadline, "the first run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = tree(&d);
    let second = command(&args).output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("being written by another run")
            && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    // The second run wrote nothing: the first one's files are those of a lone run.
    let lone = dir.path().join("lone");
    let mut a = args.clone();
    *a.last_mut().unwrap() = lone.to_string_lossy().into_owned();
    run_ok(&a, "lone run");
    assert!(!before.is_empty());
    assert_same_files(
        &tree(&d),
        &tree(&lone),
        "the first run with a second refused",
    );
}

#[test]
fn endpoint_faults_end_in_the_fault_free_tree() {
    if !human_eval("ConvCodeWorld runs not checked") {
        return;
    }
    let server = DemoServer::start(&repo().join("fixtures/model-server/humaneval-demo.json"));
    let dir = tempfile::tempdir().unwrap();
    let run = |url: &str, d: &Path| {
        let args = strings(&[
            "convcode",
            "run",
            "--model",
            "demo/ref",
            "--base-url",
            url,
            "--limit",
            "5",
            "--config",
            "CF_EF_FULL_SNF,CF_SEF",
            "--turns",
            "3",
            "--request-timeout",
            "1",
            "--backoff",
            "0.05",
            "--results",
            &d.to_string_lossy(),
        ]);
        run_ok(&args, "run")
    };
    let clean = dir.path().join("clean");
    run(&server.url, &clean);
    // Every kind of fault, at seeded requests (about one in four, never two in a row, so a
    // request's seven attempts do not all fail); a request's retry is a new request and may
    // meet another fault.
    let kinds = [
        Fault::TooMany,
        Fault::Unavailable,
        Fault::Dropped,
        Fault::Cut,
        Fault::Stall(Duration::from_millis(1500)),
        Fault::NotJson,
    ];
    let mut rng = Mt64::new(7);
    let mut plan: Vec<Option<Fault>> = Vec::new();
    for i in 0..400 {
        let fault = if i < kinds.len() * 2 {
            // The first requests meet each fault once, every other request.
            (i % 2 == 0).then(|| kinds[i / 2])
        } else {
            let r = rng.next_u64();
            (r.is_multiple_of(3) && plan[i - 1].is_none())
                .then(|| kinds[(r >> 8) as usize % kinds.len()])
        };
        plan.push(fault);
    }
    let proxy = Proxy::start(
        &server.url,
        Duration::ZERO,
        Box::new(move |n| plan.get(n).copied().flatten()),
    );
    let faulty = dir.path().join("faulty");
    run(&proxy.url, &faulty);
    let injected = proxy.injected();
    for k in kinds {
        assert!(injected.contains(&k), "{k:?} was never injected");
    }
    assert!(injected.len() >= 15, "only {} faults", injected.len());
    assert_same_files(
        &tree(&faulty),
        &tree(&clean),
        "the run through the faulty endpoint",
    );
}

#[test]
fn convcode_run_stopped_before_a_record_with_a_carried_log_resumes_byte_identical() {
    if !human_eval("ConvCodeWorld runs not checked") {
        return;
    }
    // The original's `log` of a task that made no model call repeats the turn's previous
    // exchange. A run stopped right before such a record must, when resumed, write that
    // exchange (read back from the record before it), not "" as a fresh turn would.
    let server = DemoServer::start(&repo().join("fixtures/model-server/humaneval-demo.json"));
    let dir = tempfile::tempdir().unwrap();
    let args = |d: &Path, extra: &[&str]| {
        let mut a = strings(&[
            "convcode",
            "run",
            "--model",
            "demo/ref",
            "--base-url",
            &server.url,
            "--limit",
            "5",
            "--config",
            "CF_EF_FULL_SNF,CF_SEF",
            "--turns",
            "3",
            "--results",
            &d.to_string_lossy(),
        ]);
        a.extend(strings(extra));
        a
    };
    let whole = dir.path().join("whole");
    run_ok(&args(&whole, &[]), "uninterrupted run");
    let want = tree(&whole);
    // Records in the order the run writes them: turn 0, then each configuration's turns.
    let mut files = vec![whole.join(
        "bigcodebench/sanitized_calibrated_samples/instruct/demo--ref--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl",
    )];
    for config in ["CF_EF_FULL_SNF", "CF_SEF"] {
        for t in 1..=3 {
            let iter = if t > 1 {
                format!("_ITER={t}")
            } else {
                String::new()
            };
            files.push(whole.join(format!(
                "results/v0.3.6/bigcodebench_demo_ref_{config}_by_gpt-4o{iter}.jsonl"
            )));
        }
    }
    let mut written = 0;
    let mut stops = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let logs: Vec<Option<String>> = text
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["log"].as_str().map(str::to_string)
            })
            .collect();
        for i in 1..logs.len() {
            if logs[i].as_deref().is_some_and(|l| !l.is_empty()) && logs[i] == logs[i - 1] {
                stops.push(written + i);
                break;
            }
        }
        written += logs.len();
    }
    assert!(stops.len() >= 2, "the demo has carried logs: {stops:?}");
    for n in stops.iter().take(3) {
        let d = dir.path().join(format!("stop{n}"));
        let out = command(&args(&d, &["--stop-after", &n.to_string()]))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{out:?}");
        let out = run_ok(&args(&d, &[]), "resumed run");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("record(s) already in"),
            "the resumed run says where it resumes"
        );
        assert_same_files(&tree(&d), &want, &format!("stopped after {n} records"));
    }
}
