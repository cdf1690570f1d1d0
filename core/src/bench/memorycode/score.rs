//! Scoring: each answer is parsed once and checked against every pair it is scored on;
//! dialogues are scored in parallel and aggregated as the original evaluator does.

use super::data::{dialogue_files, file_id, Dialogue, ModelOutput, Pair, Session};
use super::report::{Report, Skipped};
use crate::fasthash::{self, Prehashed};
use crate::pivots::{check, Verdict};
use crate::python::{code_block, Module, ObjectKind, SyntaxError};
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
    /// Each instruction answer's score (NaN when absent) with the object kind of its one
    /// pair, for the per-kind breakdown (kept when the answers are not).
    pub instruction_kinds: Vec<(ObjectKind, f64)>,
}

/// numpy's 1-D `nanmean`, in numpy's summation order: NaN when nothing is left.
pub fn nanmean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.into_iter().collect();
    crate::bench::numpy::nanmean(&xs)
}

fn mean_of_scores(verdicts: &[(usize, Verdict)]) -> f64 {
    nanmean(verdicts.iter().map(|(_, v)| v.score().unwrap_or(f64::NAN)))
}

/// The pairs one answer is scored on, with their indices in the session's list: a session
/// answer on every pair of its session, the i-th instruction answer on pair i only (none
/// when the session has fewer pairs), a history answer on every history pair.
pub fn pairs_for(session: &Session, kind: AnswerKind, answer: usize) -> Vec<(usize, &Pair)> {
    match kind {
        AnswerKind::Session => session.session_regex.iter().enumerate().collect(),
        AnswerKind::Instruction => session
            .session_regex
            .get(answer)
            .map(|p| (answer, p))
            .into_iter()
            .collect(),
        AnswerKind::History => session.history_regex.iter().enumerate().collect(),
    }
}

/// Parse one answer and check it against the pairs it is scored on.
fn score_answer(cache: &ParseCache, session: &Session, at: AnswerAt, text: &str) -> AnswerResult {
    let code = code_block::extract(text);
    let module = cache.module(code);
    let verdicts = pairs_for(session, at.kind, at.answer)
        .into_iter()
        .map(|(i, p)| (i, check(&module, code, p.kind, &p.rule).verdict))
        .collect();
    AnswerResult {
        session: at.session,
        kind: at.kind,
        answer: at.answer,
        syntax_error: module.syntax_error.clone(),
        verdicts,
    }
}

/// Which answer of a dialogue is being scored.
#[derive(Clone, Copy, Debug)]
pub struct AnswerAt {
    pub session: usize,
    pub kind: AnswerKind,
    pub answer: usize,
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
    score_dialogue_with(d, out, &mut |at, text| {
        Ok(score_answer(cache, &d.sessions[at.session], at, text))
    })
}

/// The answers `score_dialogue_with` asks for, in its order (which does not depend on the
/// verdicts), each with its text: what a scorer must read, known before it reads any.
pub fn answers_asked<'o>(
    d: &Dialogue,
    out: &'o ModelOutput,
) -> Result<Vec<(AnswerAt, &'o str)>, String> {
    let mut asked = Vec::new();
    score_dialogue_with(d, out, &mut |at, text| {
        asked.push((at, text));
        Ok(AnswerResult::unscored(at))
    })?;
    Ok(asked)
}

impl AnswerResult {
    /// An answer with no verdicts yet, for walks that only see which answers are read.
    pub fn unscored(at: AnswerAt) -> AnswerResult {
        AnswerResult {
            session: at.session,
            kind: at.kind,
            answer: at.answer,
            syntax_error: None,
            verdicts: Vec::new(),
        }
    }
}

/// Score one dialogue with `answer` giving each answer's verdicts (the direct scorer, or
/// the language server's verdicts read over the protocol); the aggregation is the same.
pub fn score_dialogue_with<'o>(
    d: &Dialogue,
    out: &'o ModelOutput,
    answer: &mut dyn FnMut(AnswerAt, &'o str) -> Result<AnswerResult, String>,
) -> Result<DialogueResult, String> {
    if out.sessions.len() < d.sessions.len() {
        let sessions = |n: usize| format!("{n} session{}", if n == 1 { "" } else { "s" });
        return Err(format!(
            "the output has {} but the dialogue has {}",
            sessions(out.sessions.len()),
            sessions(d.sessions.len())
        ));
    }
    let n = d.sessions.len();
    let mut scores = DialogueScores {
        history: vec![f64::NAN; n],
        session: vec![f64::NAN; n],
        instruction: vec![f64::NAN; n],
    };
    let mut answers = Vec::new();
    let mut instruction_kinds = Vec::new();
    for (s, (session, o)) in d.sessions.iter().zip(&out.sessions).enumerate() {
        // One answer's score: the mean of its non-absent pair scores.
        // Also returns each answer's score (the per-kind breakdown needs them).
        let mut per_kind =
            |kind, texts: &'o [String], limit: usize| -> Result<(f64, Vec<f64>), String> {
                let mut per_answer = Vec::new();
                for (i, text) in texts.iter().take(limit).enumerate() {
                    let at = AnswerAt {
                        session: s,
                        kind,
                        answer: i,
                    };
                    let r = answer(at, text)?;
                    per_answer.push(mean_of_scores(&r.verdicts));
                    answers.push(r);
                }
                Ok((nanmean(per_answer.clone()), per_answer))
            };
        if !session.session_regex.is_empty() {
            scores.session[s] =
                per_kind(AnswerKind::Session, &o.session_model_output, usize::MAX)?.0;
            // Answer i is scored against pair i only.
            let (mean, per_answer) = per_kind(
                AnswerKind::Instruction,
                &o.instruction_model_output,
                session.session_regex.len(),
            )?;
            scores.instruction[s] = mean;
            for (m, pair) in per_answer.into_iter().zip(&session.session_regex) {
                instruction_kinds.push((pair.kind, m));
            }
        }
        if !session.history_regex.is_empty() {
            scores.history[s] =
                per_kind(AnswerKind::History, &o.history_model_output, usize::MAX)?.0;
        }
    }
    Ok(DialogueResult {
        id: d.id,
        scores,
        answers,
        instruction_kinds,
    })
}

/// What to keep of each dialogue's result besides its scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    ScoresOnly,
    Answers,
}

/// Scores one dialogue (its file, its content, the model's output for it).
pub type DialogueScorer<'a> =
    dyn Fn(&Path, &Dialogue, &ModelOutput) -> Result<DialogueResult, String> + Sync + 'a;

/// Score every dialogue of `dataset` against `outputs/output_N.json`. A dialogue whose
/// files are missing or malformed is reported as skipped; the rest of the run goes on.
/// `on_done` is called once per dialogue (for progress).
pub fn score_dirs(
    dataset: &Path,
    outputs: &Path,
    detail: Detail,
    on_done: &(dyn Fn() + Sync),
) -> anyhow::Result<(Report, Vec<DialogueResult>)> {
    let cache = ParseCache::default();
    let r = score_dirs_with(dataset, outputs, detail, on_done, &|_, d, o| {
        score_dialogue_cached(d, o, &cache)
    });
    cache.drop_in_parallel();
    r
}

/// `score_dirs` on one shard's dialogues (`score memorycode --shard K/N`).
pub fn score_dirs_shard(
    dataset: &Path,
    outputs: &Path,
    on_done: &(dyn Fn() + Sync),
    shard: Option<crate::bench::shard::Shard>,
) -> anyhow::Result<Report> {
    let cache = ParseCache::default();
    let scorer = |_: &Path, d: &Dialogue, o: &ModelOutput| score_dialogue_cached(d, o, &cache);
    let r = score_dirs_part(
        dataset,
        outputs,
        Detail::ScoresOnly,
        on_done,
        &scorer,
        shard,
    );
    cache.drop_in_parallel();
    Ok(r?.0)
}

/// `score_dirs` with each dialogue scored by `scorer` (files, skips, warnings and the
/// report are handled here, the same for every scorer).
pub fn score_dirs_with(
    dataset: &Path,
    outputs: &Path,
    detail: Detail,
    on_done: &(dyn Fn() + Sync),
    scorer: &DialogueScorer<'_>,
) -> anyhow::Result<(Report, Vec<DialogueResult>)> {
    score_dirs_part(dataset, outputs, detail, on_done, scorer, None)
}

/// `score_dirs_with` on one shard's dialogues (by position in the sorted id list; see
/// `bench::shard`), or on all of them with `None`.
pub fn score_dirs_part(
    dataset: &Path,
    outputs: &Path,
    detail: Detail,
    on_done: &(dyn Fn() + Sync),
    scorer: &DialogueScorer<'_>,
    shard: Option<crate::bench::shard::Shard>,
) -> anyhow::Result<(Report, Vec<DialogueResult>)> {
    if !outputs.is_dir() {
        anyhow::bail!("outputs folder {} does not exist", outputs.display());
    }
    let (mut files, mut ignored) = super::data::one_file_per_id(dialogue_files(dataset)?);
    if let Some(s) = shard {
        files = s.select(files);
        ignored.retain(|(id, _)| files.iter().any(|(f, _)| f == id));
    }
    let results: Vec<(u32, usize, Scored)> = files
        .par_iter()
        .map(|(id, path)| {
            let r = score_one(
                *id,
                path,
                &outputs.join(format!("output_{id}.json")),
                scorer,
            );
            on_done();
            r
        })
        .collect();
    let mut report = Report {
        model: folder_name(outputs),
        row_order: listing_order(outputs),
        ..Report::default()
    };
    for (id, reason) in ignored {
        report.skipped.push(Skipped { id, reason });
    }
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

/// The outputs folder's last component (`.../outputs/gpt-4o` -> `gpt-4o`): the model's name.
fn folder_name(outputs: &Path) -> String {
    let canonical = outputs
        .canonicalize()
        .unwrap_or_else(|_| outputs.to_path_buf());
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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

fn score_one(
    id: u32,
    dialogue: &Path,
    output: &Path,
    scorer: &DialogueScorer<'_>,
) -> (u32, usize, Scored) {
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
            scorer(dialogue, &d, &o)
                .map(|r| (r, o.warnings))
                .map_err(|e| format!("{}: {e}", output.display()))
        });
    (id, n, r)
}
