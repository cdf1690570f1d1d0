//! Evaluate a per-turn log with the execution runner into `*_eval_results.json` (BigCodeBench's
//! shape), reusing entries already evaluated for the same solution, so a resumed run only runs
//! what is new.

use super::config::eval_path;
use super::eval_file::task_sort_key;
use super::records::Log;
use anyhow::Result;
use pivot_exec::{EvalResult, EvalResults, Problem, Runner};
use std::collections::HashMap;
use std::path::Path;

/// What BigCodeBench runs for a solution: turn-0 ("sanitized-calibrated") files get the
/// `code_prompt` and a `pass` body in front.
pub fn executed_solution(problem: &Problem, solution: &str, turn0: bool) -> String {
    if turn0 {
        format!("{}\n    pass\n{}", problem.code_prompt, solution)
    } else {
        solution.to_string()
    }
}

/// `datetime.now().strftime("%Y-%m-%d %H:%M")`, the `date` BigCodeBench writes. With
/// `SOURCE_DATE_EPOCH` (seconds) set, that time in UTC instead: reproducible files, so two
/// runs (or shards and their merge) can be compared byte for byte.
pub fn bigcodebench_date() -> String {
    let fixed = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0));
    match fixed {
        Some(t) => t.format("%Y-%m-%d %H:%M").to_string(),
        None => chrono::Local::now().format("%Y-%m-%d %H:%M").to_string(),
    }
}

/// Python's `json.dump(obj, f, indent=2)` text of a JSON value: serde_json's pretty layout is
/// the same, and `ensure_ascii` escapes every character outside printable ASCII, which can
/// only occur inside strings.
pub fn python_json_indent2(v: &serde_json::Value) -> String {
    crate::pyjson::dump_indent(v, 2)
}

/// Write evaluation results the way BigCodeBench's evaluator does: exactly
/// `{"date": "%Y-%m-%d %H:%M", "eval": {task_id: [{task_id, solution, status, details}]}}`,
/// indented by 2, tasks in numeric id order. Nothing else goes in (the run's summary is the
/// caller's to report). Written atomically next to its destination.
pub fn save_atomic(results: &EvalResults, path: &Path) -> Result<()> {
    let mut ids: Vec<&String> = results.eval.keys().collect();
    ids.sort_by_key(|k| task_sort_key(k));
    let mut eval = serde_json::Map::new();
    for id in ids {
        eval.insert(id.clone(), serde_json::to_value(&results.eval[id])?);
    }
    let date = if results.date.is_empty() {
        bigcodebench_date()
    } else {
        results.date.clone()
    };
    let doc = serde_json::json!({"date": date, "eval": eval});
    pivot_base::durable::write_atomic(path, python_json_indent2(&doc).as_bytes())
}

/// Evaluate every record of `log` (stored at `log_path`) and write its eval file. Returns the
/// results by task id and how many solutions were actually run.
pub fn evaluate_log(
    runner: &Runner,
    problems: &HashMap<&str, &Problem>,
    log_path: &Path,
    log: &Log,
    turn0: bool,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(HashMap<String, EvalResult>, usize)> {
    let out = eval_path(log_path);
    let mut known: HashMap<String, EvalResult> = HashMap::new();
    if out.exists() {
        match EvalResults::load(&out) {
            Ok(r) => {
                for (k, mut v) in r.eval {
                    if !v.is_empty() {
                        known.insert(k, v.remove(0));
                    }
                }
            }
            // An unreadable results file is simply redone.
            Err(_) => known.clear(),
        }
    }
    let mut results: HashMap<String, EvalResult> = HashMap::new();
    let mut todo: Vec<(&Problem, String)> = Vec::new();
    for r in &log.records {
        let Some(p) = problems.get(r.task_id.as_str()) else {
            continue;
        };
        let code = executed_solution(p, &r.solution, turn0);
        match known.remove(&r.task_id) {
            Some(e) if e.solution == code => {
                results.insert(r.task_id.clone(), e);
            }
            _ => todo.push((p, code)),
        }
    }
    let ran = todo.len();
    if !todo.is_empty() {
        let batch: Vec<(&Problem, &str)> = todo.iter().map(|(p, s)| (*p, s.as_str())).collect();
        for r in runner.run_batch(&batch, |n, _| progress(n)) {
            results.insert(r.task_id.clone(), r);
        }
    }
    let mut file = EvalResults::from_results(
        results.values().cloned().collect(),
        bigcodebench_date(),
        &runner.sandbox().to_string(),
    );
    file.summary = None;
    save_atomic(&file, &out)?;
    Ok((results, ran))
}

/// Load an eval file as a map (for a previous turn written earlier or by the original).
pub fn load_eval(path: &Path) -> Result<HashMap<String, EvalResult>> {
    let r = EvalResults::load(path)?;
    Ok(r.eval
        .into_iter()
        .filter_map(|(k, mut v)| {
            if v.is_empty() {
                None
            } else {
                Some((k, v.remove(0)))
            }
        })
        .collect())
}
