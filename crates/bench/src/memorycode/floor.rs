//! The floor of MemoryCode scoring on this machine: tree-sitter's parse alone of every
//! distinct code block the scorer reads, with the scorer's threads. No scorer that parses
//! the answers with tree-sitter can be faster; `bench memorycode` prints its ratio to it.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::score::{score_dialogue_with, AnswerResult};
use super::score_dirs::{score_dirs_part, Detail};
use pivot_python::python::code_block;
use pivot_python::python::module::{lone_cr_as_lf, parse_tree};

/// The distinct code blocks of the answers the scorer reads (the same answers, found by the
/// same walk).
pub fn distinct_codes(dataset: &Path, outputs: &Path) -> anyhow::Result<Vec<String>> {
    let codes: Mutex<HashSet<String>> = Mutex::default();
    let collect = |_: &Path, d: &super::Dialogue, o: &super::ModelOutput| {
        score_dialogue_with(d, o, &mut |at, text| {
            let code = code_block::extract(text);
            let mut seen = codes.lock().unwrap_or_else(|e| e.into_inner());
            if !seen.contains(code) {
                seen.insert(code.to_string());
            }
            Ok(AnswerResult::unscored(at))
        })
    };
    score_dirs_part(dataset, outputs, Detail::ScoresOnly, &|| {}, &collect, None)?;
    Ok(codes
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .collect())
}

/// The wall time of parsing each of `codes` once on rayon's threads.
pub fn parse_time(codes: &[String]) -> Duration {
    let t = Instant::now();
    codes.par_iter().for_each(|c| {
        std::hint::black_box(parse_tree(&lone_cr_as_lf(c), None));
    });
    t.elapsed()
}
