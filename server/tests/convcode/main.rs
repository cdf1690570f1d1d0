//! ConvCodeWorld / ConvCodeBench, one test binary in files by feature:
//! - `metrics`: MRR, Recall and Pass@1 on constructed result folders, live and static, and
//!   the tables as the original prints them;
//! - `print_results`: Tables 1 and 2 against the original's print_results.py, run here;
//! - `model`: prompts against hand-written golden files, answers parsed as DSPy parses them,
//!   the model client's retries against the loopback server;
//! - `instruction`: `_IF` configurations through the command line (base requests unchanged,
//!   the findings in the extra request, the counts, `score convcode`, refusals);
//! - `live`, `turn0`, `cli`: the live loop driven by a scripted loopback server (all nine
//!   configurations, resuming, ConvCodeBench on the run; turn 0 generated; bad input through
//!   the command line);
//! - `reask`: DSPy's re-ask, the requests, `log` and the eval files against what the
//!   original itself wrote for the same inputs.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // each test binary uses part of the support module
#[path = "../support/mod.rs"]
mod support;

mod cli;
mod instruction;
mod live;
mod metrics;
mod model;
mod print_results;
mod reask;
mod turn0;

use pivot_bench::convcode::score_file::{Column, Scores};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The ConvCodeWorld fixtures (fixtures/convcode).
fn fixtures() -> PathBuf {
    support::cli::repo().join("fixtures/convcode")
}

/// A golden file written by hand (fixtures/convcode/golden/NAME).
fn golden(name: &str) -> String {
    let p = fixtures().join("golden").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The column of configuration `code` (e.g. `CF_EF_FULL`).
fn column<'a>(s: &'a Scores, code: &str) -> &'a Column {
    s.columns.iter().find(|c| c.config == code).unwrap()
}

/// Write a BigCodeBench-shaped eval file; `passes[k]` is the status of task `X/k`.
fn write_eval(path: &Path, passes: &[bool]) {
    let mut eval = serde_json::Map::new();
    for (k, p) in passes.iter().enumerate() {
        let id = format!("X/{k}");
        eval.insert(
            id.clone(),
            json!([{"task_id": id, "solution": "def task_func():\n    return 1\n",
                    "status": if *p { "pass" } else { "fail" }, "details": {}}]),
        );
    }
    let file = json!({"date": "2026-11-26 10:00", "eval": eval});
    support::files::write(path, &serde_json::to_string(&file).unwrap());
}
