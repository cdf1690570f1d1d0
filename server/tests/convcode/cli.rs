//! Bad input through the command line (`convcode run`): clear messages, nothing already
//! logged lost; and `--fix-quirks`.

use super::fixtures;
use super::live::{self, run, world};
use crate::support::cli::{output_retrying, EXE};
use pivot_llm::loopback::{LoopbackServer, Script};
use std::path::Path;
use std::process::Command;

/// `convcode run` of org/coder into `dir` against `base_url`, with quick retries and no key
/// or endpoint from the environment.
pub fn convcode_run(dir: &Path, base_url: &str) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.args(["convcode", "run", "--model", "org/coder", "--results"])
        .arg(dir)
        .args([
            "--base-url",
            base_url,
            "--retries",
            "1",
            "--backoff",
            "0.01",
        ])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    cmd
}

fn pivot(dir: &Path, base_url: &str, extra: &[&str]) -> (bool, String) {
    let config = if extra.contains(&"--config") {
        vec![]
    } else {
        vec!["--config", "CF_EF_FULL_SNF,CF_EF_UNIT_SEF"]
    };
    let out = output_retrying(
        convcode_run(dir, base_url)
            .args(["--limit", "5"])
            .args(config)
            .arg("--cache")
            .arg(dir.join(".cache"))
            .args(["--request-timeout", "5"])
            .args(extra),
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("results/v0.3.6"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn unreachable_endpoint_invalid_key_and_offline_misses_are_named() {
    let Some(w) = world() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Some work logged first (through the library, same cache folder).
    let first = run(&w, d, "CF_EF_FULL_SNF,CF_EF_UNIT_SEF", Some(12)).unwrap();
    assert!(first.interrupted);
    let before = snapshot(d);
    assert!(!before.is_empty());

    // Unreachable endpoint: cached answers are reused, the first new prompt fails clearly.
    let samples = fixtures().join("samples_humaneval5.jsonl");
    let s = samples.to_str().unwrap();
    let (ok, err) = pivot(d, "http://127.0.0.1:9/v1", &["--samples", s]);
    assert!(!ok);
    assert!(
        err.contains("cannot reach the model endpoint http://127.0.0.1:9/v1/chat/completions"),
        "{err}"
    );
    assert!(err.contains("rerun the same command to resume"), "{err}");
    let after = snapshot(d);
    for (name, bytes) in &before {
        let now = &after.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(now.starts_with(bytes), "{name} lost records");
    }

    // Invalid key: 401 is not retried and says which setting to check.
    let keyed = LoopbackServer::start(Script {
        api_key: Some("right".into()),
        ..Script::default()
    })
    .unwrap();
    let (ok, err) = pivot(
        d,
        &keyed.base_url(),
        &["--samples", s, "--api-key", "wrong", "--workers", "1"],
    );
    assert!(!ok);
    assert!(
        err.contains("rejected the API key (HTTP 401)") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
    assert_eq!(
        keyed.seen().len(),
        1,
        "a 401 must stop the run, not be retried"
    );

    // Offline with an empty cache: the missing prompts are named.
    let fresh = tempfile::tempdir().unwrap();
    let (ok, err) = pivot(
        fresh.path(),
        "http://127.0.0.1:9/v1",
        &["--samples", s, "--offline"],
    );
    assert!(!ok);
    assert!(
        err.contains("offline:")
            && err.contains("missing from the cache")
            && err.contains("no cached answer of gpt-4o (chat) for prompt"),
        "{err}"
    );

    // A log line broken in the middle of a file is reported with its line and left alone.
    let broken = d.join("results/v0.3.6/bigcodebench_org_coder_CF_EF_FULL_SNF_by_gpt-4o.jsonl");
    let mut text = std::fs::read_to_string(&broken).unwrap();
    text.insert_str(0, "{not json}\n");
    std::fs::write(&broken, &text).unwrap();
    let (ok, err) = pivot(d, &w.server.base_url(), &["--samples", s]);
    assert!(!ok);
    assert!(
        err.contains("bigcodebench_org_coder_CF_EF_FULL_SNF_by_gpt-4o.jsonl:1: not a JSON record"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), text);
}

#[test]
fn fix_quirks_turns_off_the_plain_bugs() {
    let Some(w) = world() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let samples = fixtures().join("samples_humaneval5.jsonl");
    let (ok, err) = pivot(
        d,
        &w.server.base_url(),
        &[
            "--samples",
            samples.to_str().unwrap(),
            "--config",
            "CF,CF_EF_FULL",
            "--fix-quirks",
        ],
    );
    assert!(ok, "{err}");
    let cf10 = live::log(d, "CF", 10);
    let r = cf10.iter().find(|r| r.task_id == "HumanEval/1").unwrap();
    assert_eq!(
        r.solution.matches("from typing import List").count(),
        1,
        "{}",
        r.solution
    );
    // Fresh execution feedback after the in-turn fix of X/2: the fixed code passes.
    let full1 = live::log(d, "CF_EF_FULL", 1);
    let r = full1.iter().find(|r| r.task_id == "HumanEval/2").unwrap();
    assert_eq!(
        r.execution_feedback.as_deref(),
        Some("Passed all test runs")
    );
    let r = full1.iter().find(|r| r.task_id == "HumanEval/3").unwrap();
    assert!(r.log.as_deref().unwrap().starts_with(
        "\n\n\nYou are given `input`, `previous_code`, `execution_feedback` due to an error"
    ));
}
