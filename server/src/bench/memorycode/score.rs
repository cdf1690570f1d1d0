//! Scoring: each answer is parsed once and checked against every pair it is scored on;
//! dialogues are scored in parallel and aggregated as the original evaluator does.

use super::data::{dialogue_files, file_id, Dialogue, ModelOutput, Pair};
use super::report::{Report, Skipped};
use crate::fasthash::{self, Prehashed};
use crate::pivots::{check, Verdict};
use crate::python::{code_block, Module, SyntaxError};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Identical code recurs across dialogues (a model gives the same answer to the same
/// query: 11,123 distinct code blocks among gpt-4o's 18,860), so a run parses each
/// distinct code once. Sharded so parallel dialogues rarely wait on each other.
#[derive(Default)]
pub struct ParseCache {
    shards: [Mutex<Shard>; 16],
}

/// Modules by the hash of their code, each with its code (colliding codes share a list).
type Shard = HashMap<u64, Vec<(Box<str>, Arc<Module>)>, BuildHasherDefault<Prehashed>>;

impl ParseCache {
    pub fn module(&self, code: &str) -> Arc<Module> {
        let h = fasthash::of(code.as_bytes(), 0);
        let shard = &self.shards[(h % 16) as usize];
        let find = |s: &Shard| {
            let same = s.get(&h)?.iter().find(|(c, _)| **c == *code);
            same.map(|(_, m)| m.clone())
        };
        if let Some(m) = find(&shard.lock().unwrap_or_else(|e| e.into_inner())) {
            return m;
        }
        // Parse outside the lock; a rare duplicate parse is cheaper than serialising.
        let m = Arc::new(Module::parse(code));
        let mut s = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = find(&s) {
            return m;
        }
        s.entry(h).or_default().push((code.into(), m.clone()));
        m
    }

    /// Free the modules on every worker thread: thousands of them, and at the end of a
    /// run nothing else is left to do in parallel.
    fn drop_in_parallel(self) {
        self.shards.into_par_iter().for_each(drop);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Session,
    Instruction,
    History,
}

impl AnswerKind {
    pub fn name(self) -> &'static str {
        match self {
            AnswerKind::Session => "session",
            AnswerKind::Instruction => "instruction",
            AnswerKind::History => "history",
        }
    }
}

/// One answer: its parse verdict and the verdict of each pair it was scored on.
#[derive(Clone, Debug, Serialize)]
pub struct AnswerResult {
    pub session: usize,
    pub kind: AnswerKind,
    pub answer: usize,
    pub syntax_error: Option<SyntaxError>,
    /// (index of the pair in the session's regex list, verdict)
    pub verdicts: Vec<(usize, Verdict)>,
}

/// Per-session scores of one dialogue (NaN where the session has no such score).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DialogueScores {
    pub history: Vec<f64>,
    pub session: Vec<f64>,
    pub instruction: Vec<f64>,
}

#[derive(Clone, Debug)]
pub struct DialogueResult {
    pub id: u32,
    pub scores: DialogueScores,
    pub answers: Vec<AnswerResult>,
}

/// numpy's 1-D `nanmean`, in numpy's summation order: NaN when nothing is left.
pub fn nanmean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.into_iter().collect();
    super::numpy::nanmean(&xs)
}

fn mean_of_scores(verdicts: &[(usize, Verdict)]) -> f64 {
    nanmean(verdicts.iter().map(|(_, v)| v.score().unwrap_or(f64::NAN)))
}

/// Parse one answer and check it against `pairs` (their indices given).
fn score_answer(
    cache: &ParseCache,
    session: usize,
    kind: AnswerKind,
    answer: usize,
    text: &str,
    pairs: &mut dyn Iterator<Item = (usize, &Pair)>,
) -> AnswerResult {
    let code = code_block::extract(text);
    let module = cache.module(code);
    let verdicts = pairs
        .map(|(i, p)| (i, check(&module, code, p.kind, &p.rule).verdict))
        .collect();
    AnswerResult {
        session,
        kind,
        answer,
        syntax_error: module.syntax_error.clone(),
        verdicts,
    }
}

/// Score one dialogue against one model's output for it.
pub fn score_dialogue(d: &Dialogue, out: &ModelOutput) -> Result<DialogueResult, String> {
    score_dialogue_cached(d, out, &ParseCache::default())
}

/// `score_dialogue`, sharing parses with other dialogues of the same run.
pub fn score_dialogue_cached(
    d: &Dialogue,
    out: &ModelOutput,
    cache: &ParseCache,
) -> Result<DialogueResult, String> {
    if out.sessions.len() < d.sessions.len() {
        return Err(format!(
            "the output has {} sessions but the dialogue has {}",
            out.sessions.len(),
            d.sessions.len()
        ));
    }
    let n = d.sessions.len();
    let mut scores = DialogueScores {
        history: vec![f64::NAN; n],
        session: vec![f64::NAN; n],
        instruction: vec![f64::NAN; n],
    };
    let mut answers = Vec::new();
    for (s, (session, o)) in d.sessions.iter().zip(&out.sessions).enumerate() {
        // One answer's score: the mean of its non-absent pair scores.
        let mut scored =
            |kind, i, text: &String, pairs: &mut dyn Iterator<Item = (usize, &Pair)>| {
                let r = score_answer(cache, s, kind, i, text, pairs);
                let m = mean_of_scores(&r.verdicts);
                answers.push(r);
                m
            };
        if !session.session_regex.is_empty() {
            let per_answer: Vec<f64> = (o.session_model_output.iter().enumerate())
                .map(|(i, text)| {
                    scored(
                        AnswerKind::Session,
                        i,
                        text,
                        &mut session.session_regex.iter().enumerate(),
                    )
                })
                .collect();
            scores.session[s] = nanmean(per_answer);
            // Answer i is scored against pair i only.
            let per_answer: Vec<f64> = (o.instruction_model_output.iter())
                .zip(session.session_regex.iter().enumerate())
                .enumerate()
                .map(|(i, (text, pair))| {
                    scored(AnswerKind::Instruction, i, text, &mut std::iter::once(pair))
                })
                .collect();
            scores.instruction[s] = nanmean(per_answer);
        }
        if !session.history_regex.is_empty() {
            let per_answer: Vec<f64> = (o.history_model_output.iter().enumerate())
                .map(|(i, text)| {
                    scored(
                        AnswerKind::History,
                        i,
                        text,
                        &mut session.history_regex.iter().enumerate(),
                    )
                })
                .collect();
            scores.history[s] = nanmean(per_answer);
        }
    }
    Ok(DialogueResult {
        id: d.id,
        scores,
        answers,
    })
}

/// What to keep of each dialogue's result besides its scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    ScoresOnly,
    Answers,
}

/// Score every dialogue of `dataset` against `outputs/output_N.json`. A dialogue whose
/// files are missing or malformed is reported as skipped; the rest of the run goes on.
/// `on_done` is called once per dialogue (for progress).
pub fn score_dirs(
    dataset: &Path,
    outputs: &Path,
    detail: Detail,
    on_done: &(dyn Fn() + Sync),
) -> anyhow::Result<(Report, Vec<DialogueResult>)> {
    if !outputs.is_dir() {
        anyhow::bail!("outputs folder {} does not exist", outputs.display());
    }
    let files = dialogue_files(dataset)?;
    let cache = ParseCache::default();
    let results: Vec<(u32, usize, Scored)> = files
        .par_iter()
        .map(|(id, path)| {
            let r = score_one(
                *id,
                path,
                &outputs.join(format!("output_{id}.json")),
                &cache,
            );
            on_done();
            r
        })
        .collect();
    cache.drop_in_parallel();
    let mut report = Report {
        row_order: listing_order(outputs),
        ..Report::default()
    };
    let mut kept = Vec::new();
    for (id, n_sessions, r) in results {
        match r {
            Ok((mut res, warnings)) => {
                report.warnings.extend(warnings);
                report.add(&res, n_sessions);
                if detail == Detail::Answers {
                    kept.push(res);
                } else {
                    res.answers.clear();
                }
            }
            Err(reason) => report.skipped.push(Skipped { id, reason }),
        }
    }
    report.finish();
    Ok((report, kept))
}

/// Ids of the `output_N.json` files in the folder's listing order (`read_dir` and Python's
/// `os.listdir` both return `readdir`'s order).
pub fn listing_order(outputs: &Path) -> Vec<u32> {
    std::fs::read_dir(outputs)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| file_id(&e.path(), "output_"))
                .collect()
        })
        .unwrap_or_default()
}

type Scored = Result<(DialogueResult, Vec<String>), String>;

fn score_one(id: u32, dialogue: &Path, output: &Path, cache: &ParseCache) -> (u32, usize, Scored) {
    let d = match Dialogue::load_pairs(dialogue) {
        Ok(d) => d,
        Err(e) => return (id, 0, Err(format!("{e:#}"))),
    };
    let n = d.sessions.len();
    if !output.exists() {
        return (
            id,
            n,
            Err(format!("missing output file {}", output.display())),
        );
    }
    let r = ModelOutput::load(output)
        .map_err(|e| format!("{e:#}"))
        .and_then(|o| {
            score_dialogue_cached(&d, &o, cache)
                .map(|r| (r, o.warnings))
                .map_err(|e| format!("{}: {e}", output.display()))
        });
    (id, n, r)
}
