//! Every input a user or a command names, given something that is not a small regular
//! file: `/dev/zero` (never ends), a FIFO (blocks whoever opens it), a directory, and a
//! 1 GB (sparse) file. For each named input of `check`, `report`, `extract`, `score`,
//! `merge` and of the language server's commands (and the files it reads by itself: the
//! state file, its lock, `pivots.toml`), the run ends within 10 s and 500 MB with an error
//! (or, for a file among others, a warning) that names the input. Figures: `--nocapture`.

use crate::support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;
use support::bounds::{bounded, mkfifo, peak_rss_mb, run, run_in, RSS_MB, TIME};
use support::files::copy_tree;
use support::lsp::{fixture, Client};

#[derive(Clone, Copy, Debug)]
enum Hostile {
    DevZero,
    Fifo,
    Directory,
    Huge,
}

const ALL: [Hostile; 4] = [
    Hostile::DevZero,
    Hostile::Fifo,
    Hostile::Directory,
    Hostile::Huge,
];

impl Hostile {
    /// Make `path` this kind of hostile input (`/dev/zero` through a symlink, so that it
    /// can carry any name).
    fn place(self, path: &Path) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        let _ = std::fs::remove_file(path);
        match self {
            Hostile::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
            Hostile::Fifo => mkfifo(path),
            Hostile::Directory => std::fs::create_dir(path).unwrap(),
            Hostile::Huge => std::fs::File::create(path)
                .unwrap()
                .set_len(1 << 30)
                .unwrap(),
        }
    }

    /// What the error says about it.
    fn reason(self) -> &'static [&'static str] {
        match self {
            Hostile::DevZero => &["a device"],
            Hostile::Fifo => &["FIFO"],
            Hostile::Directory => &["a directory", "folder", "Is a directory"],
            Hostile::Huge => &["over the limit", "larger than"],
        }
    }
}

/// A fresh folder holding a hostile input named `name`; returns (folder, input path).
fn hostile(kind: Hostile, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    kind.place(&p);
    (dir, p)
}

fn says(text: &str, name: &str, kind: Hostile) -> bool {
    text.contains(name) && kind.reason().iter().any(|r| text.contains(r))
}

/// A CLI run that must fail (`code`, when given) within the bounds and name the input.
fn refuses(dir: &Path, args: &[&str], name: &str, kind: Hostile, code: Option<i32>) {
    let what = format!("{args:?} with {kind:?}");
    let r = bounded(run(dir, args), &what);
    match code {
        Some(c) => assert_eq!(r.code, Some(c), "{what}: {}", r.out()),
        None => assert_ne!(r.code, Some(0), "{what}: {}", r.out()),
    }
    assert!(says(&r.stderr, name, kind), "{what}: {}", r.out());
}

#[test]
fn check_refuses_hostile_conversation_baseline_and_pivots_files() {
    for kind in ALL {
        for flag in ["--conversation", "--baseline", "--pivots"] {
            let (dir, _) = hostile(kind, "input.json");
            std::fs::write(dir.path().join("a.py"), "def f():\n    pass\n").unwrap();
            refuses(
                dir.path(),
                &["check", flag, "input.json"],
                "input.json",
                kind,
                Some(2),
            );
        }
        // The root's own pivots.toml, found rather than named.
        let (dir, _) = hostile(kind, "pivots.toml");
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        refuses(dir.path(), &["check"], "pivots.toml", kind, Some(2));
    }
}

#[test]
fn check_reports_hostile_files_it_is_told_to_check_and_checks_the_rest() {
    for kind in [Hostile::DevZero, Hostile::Fifo, Hostile::Huge] {
        let (dir, _) = hostile(kind, "x.py");
        std::fs::write(dir.path().join("good.py"), "def f():\n    pass\n").unwrap();
        for args in [&["check", "x.py", "good.py"][..], &["check"]] {
            let what = format!("{args:?} with {kind:?}");
            let r = bounded(run(dir.path(), args), &what);
            assert_eq!(r.code, Some(0), "{what}: {}", r.out());
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with("warning: x.py: ") && says(l, "x.py", kind)),
                "{what}: {}",
                r.out()
            );
            assert!(r.stderr.contains("1 file checked"), "{what}: {}", r.out());
        }
        // /dev/zero itself, named by the user: refused by type, not read.
        let r = bounded(run(dir.path(), &["check", "/dev/zero"]), "check /dev/zero");
        assert!(
            says(&r.stderr, "/dev/zero", Hostile::DevZero),
            "{}",
            r.out()
        );
    }
}

#[test]
fn report_extract_and_merge_refuse_hostile_files() {
    for kind in ALL {
        let (dir, _) = hostile(kind, "scores.json");
        let out = dir.path().join("r.html");
        refuses(
            dir.path(),
            &["report", "scores.json", "--output", out.to_str().unwrap()],
            "scores.json",
            kind,
            None,
        );
        assert!(!out.exists());
        let (dir, _) = hostile(kind, "code.py");
        refuses(dir.path(), &["extract", "code.py"], "code.py", kind, None);
        let (dir, _) = hostile(kind, "shard.json");
        refuses(
            dir.path(),
            &["merge", "shard.json"],
            "shard.json",
            kind,
            None,
        );
    }
}

/// `extract -` reads standard input: bounded like a file, whatever it is.
#[test]
fn extract_bounds_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.py");
    Hostile::Huge.place(&huge);
    for (stdin, reason) in [
        (Path::new("/dev/zero"), "over the limit"),
        (huge.as_path(), "over the limit"),
        (dir.path(), "standard input"),
    ] {
        let what = format!("extract - < {}", stdin.display());
        let r = bounded(
            run_in(dir.path(), &["extract", "-"], Some(stdin), TIME, 1 << 20),
            &what,
        );
        assert_ne!(r.code, Some(0), "{what}: {}", r.out());
        assert!(
            r.stderr.contains("standard input") && r.stderr.contains(reason),
            "{what}: {}",
            r.out()
        );
    }
}

/// A MemoryCode dataset and outputs folder with one file made hostile (or the folder
/// itself, for the kinds a folder cannot be).
#[test]
fn score_memorycode_refuses_hostile_folders_and_skips_hostile_files() {
    for kind in ALL {
        for (folder, file) in [("dataset", "dialogue_1.json"), ("outputs", "output_1.json")] {
            let d = tempfile::tempdir().unwrap();
            let data = d.path().join("dataset");
            let outputs = d.path().join("outputs");
            copy_tree(&fixture("fixtures/memorycode/dataset"), &data);
            copy_tree(&fixture("fixtures/memorycode/outputs/demo-model"), &outputs);
            let target = d.path().join(folder).join(file);
            kind.place(&target);
            let args = [
                "score",
                "memorycode",
                "--dataset",
                data.to_str().unwrap(),
                "--outputs",
                outputs.to_str().unwrap(),
            ];
            let what = format!("score memorycode, {file} {kind:?}");
            let r = bounded(run(d.path(), &args), &what);
            assert_eq!(r.code, Some(1), "{what}: {}", r.out());
            assert!(
                r.stderr.contains("skipped dialogue 1") && says(&r.stderr, file, kind),
                "{what}: {}",
                r.out()
            );
            if !matches!(kind, Hostile::Directory) {
                // The folder itself.
                let bad = d.path().join("bad");
                kind.place(&bad);
                let mut args = args;
                args[if folder == "dataset" { 3 } else { 5 }] = bad.to_str().unwrap();
                let what = format!("score memorycode, --{folder} {kind:?}");
                let r = bounded(run(d.path(), &args), &what);
                assert_ne!(r.code, Some(0), "{what}: {}", r.out());
                assert!(r.stderr.contains("bad"), "{what}: {}", r.out());
            }
        }
    }
}

/// The ConvCodeWorld results of the fixture with a turn's files made hostile; and `merge
/// --results` with a shard folder or its marker made hostile.
#[test]
fn score_convcode_and_merge_results_refuse_hostile_files() {
    let log = "bigcodebench_fixture_coder_CF_EF_FULL_SEF_by_gpt-4o.jsonl";
    let eval = "bigcodebench_fixture_coder_CF_EF_FULL_SEF_by_gpt-4o_eval_results.json";
    for kind in ALL {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("results");
        copy_tree(&fixture("fixtures/lsp/convcode"), &results);
        kind.place(&results.join("results/v0.3.6").join(log));
        kind.place(&results.join("results/v0.3.6").join(eval));
        let args = [
            "score",
            "convcode",
            "--results",
            results.to_str().unwrap(),
            "--model",
            "fixture/coder",
        ];
        let r = bounded(run(d.path(), &args), &format!("score convcode {kind:?}"));
        // An unreadable turn file ends its configuration's turns (as the original does),
        // with a note under the tables naming it.
        assert!(says(&r.stdout, eval, kind), "{}", r.out());

        let shard = d.path().join("shard1");
        std::fs::create_dir(&shard).unwrap();
        kind.place(&shard.join("pivot-shard.json"));
        let out = d.path().join("merged");
        let r = bounded(
            run(
                d.path(),
                &[
                    "merge",
                    "--results",
                    out.to_str().unwrap(),
                    shard.to_str().unwrap(),
                ],
            ),
            &format!("merge --results {kind:?}"),
        );
        assert_ne!(r.code, Some(0), "{}", r.out());
        assert!(r.stderr.contains("shard1"), "{}", r.out());
    }
}

/// A command that must fail within the bounds with an error naming the input.
fn command_refuses(c: &mut Client, cmd: &str, args: Value, name: &str, kind: Hostile) {
    let t = Instant::now();
    let r = c.command(cmd, args.clone());
    let took = t.elapsed();
    eprintln!(
        "{cmd} with {kind:?}: {:.2} s, server peak {} MB",
        took.as_secs_f64(),
        peak_rss_mb(c.pid())
    );
    assert!(took < TIME, "{cmd} {args} took {took:?}");
    let e = r.expect_err(&format!("{cmd} {args}: an error"));
    let m = e["message"].as_str().unwrap_or_default();
    assert!(says(m, name, kind), "{cmd} {args}: {m}");
    assert!(peak_rss_mb(c.pid()) < RSS_MB, "{} MB", peak_rss_mb(c.pid()));
    // Still answering.
    c.command("pivot.conversation.info", Value::Null).unwrap();
}

#[test]
fn server_commands_refuse_hostile_inputs() {
    let dialogue = fixture("fixtures/memorycode/dataset/dialogue_1.json");
    for kind in ALL {
        let (dir, input) = hostile(kind, "input.json");
        // No work-done progress: this client does not answer the server's requests.
        let mut c = Client::start_with(dir.path(), json!({}));
        let path = input.to_str().unwrap();
        if !matches!(kind, Hostile::Directory) {
            // A folder is a ConvCodeWorld results folder there: refused for want of "task".
            command_refuses(
                &mut c,
                "pivot.conversation.open",
                json!({"path": path}),
                "input.json",
                kind,
            );
        }
        command_refuses(
            &mut c,
            "pivot.report.open",
            json!({"inputs": [path]}),
            "input.json",
            kind,
        );
        c.command("pivot.conversation.open", json!({"path": dialogue}))
            .unwrap();
        command_refuses(
            &mut c,
            "pivot.outputs.check",
            json!({"path": path}),
            "input.json",
            kind,
        );
        let out = dir.path().join("gen");
        command_refuses(
            &mut c,
            "pivot.memorycode.generate",
            json!({"model": "demo/m", "out": out, "loopback": path}),
            "input.json",
            kind,
        );
        // A dataset and outputs folder with a hostile dialogue: scored without it.
        let data = dir.path().join("dataset");
        let outputs = dir.path().join("outputs");
        copy_tree(&fixture("fixtures/memorycode/dataset"), &data);
        copy_tree(&fixture("fixtures/memorycode/outputs/demo-model"), &outputs);
        kind.place(&data.join("dialogue_1.json"));
        let t = Instant::now();
        let v = c
            .command(
                "pivot.evaluate.memorycode",
                json!({"dataset": data, "outputs": outputs}),
            )
            .expect("scores the rest");
        assert!(t.elapsed() < TIME);
        let skipped = v["skipped"].to_string();
        assert!(says(&skipped, "dialogue_1.json", kind), "{skipped}");
        assert!(peak_rss_mb(c.pid()) < RSS_MB);
        c.shutdown_after_noise();
    }
}

/// The files the server reads by itself: `pivots.toml` and `.pivot/state.json` at start-up,
/// `.pivot/state.lock` at every state write.
#[test]
fn server_start_up_and_state_writes_survive_hostile_workspace_files() {
    for kind in ALL {
        for name in ["pivots.toml", ".pivot/state.json", ".pivot/state.lock"] {
            if name == ".pivot/state.lock" && matches!(kind, Hostile::Huge) {
                // A lock is never read: a large regular file is as good a lock as any.
                continue;
            }
            let (dir, _) = hostile(kind, name);
            let t = Instant::now();
            let mut c = Client::start(dir.path());
            let what = format!("{name} {kind:?}");
            // Start-up reads pivots.toml and the state file (and takes the lock).
            let shown = c.expect("window/showMessage");
            let m = shown["params"]["message"].as_str().unwrap().to_string();
            assert!(
                says(&m, name.rsplit('/').next().unwrap(), kind),
                "{what}: {m}"
            );
            // A state write (the lock, then the file).
            let r = c.command(
                "pivot.pivots.add",
                json!({"id": "u", "kind": "function", "rule": "^f_"}),
            );
            assert!(r.is_ok(), "{what}: {r:?}");
            if name == ".pivot/state.lock" {
                let m = c.expect("window/showMessage");
                let m = m["params"]["message"].as_str().unwrap();
                assert!(says(m, "state.lock", kind), "{what}: {m}");
            }
            c.command("pivot.conversation.info", Value::Null).unwrap();
            let took = t.elapsed();
            eprintln!(
                "server with {what}: {:.2} s, peak {} MB",
                took.as_secs_f64(),
                peak_rss_mb(c.pid())
            );
            assert!(took < TIME, "{what}: {took:?}");
            assert!(peak_rss_mb(c.pid()) < RSS_MB, "{what}");
            c.shutdown_after_noise();
        }
    }
}
