//! Scoring: each answer is parsed once and checked against every pair it is scored on;
//! dialogues are scored in parallel and aggregated as the original evaluator does.

use super::data::{Dialogue, ModelOutput, Pair, Session, SessionOutput};
use pivot_python::fasthash::{self, Prehashed};
use pivot_python::pivots::{check, Verdict};
use pivot_python::python::{code_block, Module, ObjectKind, SyntaxError};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
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
    pub fn drop_in_parallel(self) {
        self.shards.into_par_iter().for_each(drop);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Session,
    Instruction,
    History,
    /// An answer of `instructions_only_model_output`, scored as a history answer.
    InstructionsChain,
    /// An answer of `rag_model_output`, scored as a history answer.
    Rag,
}

impl AnswerKind {
    pub fn name(self) -> &'static str {
        match self {
            AnswerKind::Session => "session",
            AnswerKind::Instruction => "instruction",
            AnswerKind::History => "history",
            AnswerKind::InstructionsChain => "instructions_chain",
            AnswerKind::Rag => "rag",
        }
    }

    /// The kind whose pairs this answer is checked on: the instructions-chain and RAG
    /// answers answer the history queries, so the History scorer scores them.
    pub fn scored_as(self) -> AnswerKind {
        match self {
            AnswerKind::InstructionsChain | AnswerKind::Rag => AnswerKind::History,
            k => k,
        }
    }
}

/// The modes beyond the original evaluator's three that are scored by its History scorer:
/// (kind, the name in score files and reports, the output key `generate` writes).
pub const HISTORY_SCORED_MODES: [(AnswerKind, &str, &str); 2] = [
    (
        AnswerKind::InstructionsChain,
        "instructions chain",
        "instructions_only_model_output",
    ),
    (AnswerKind::Rag, "rag", "rag_model_output"),
];

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
    /// The History scorer on `instructions_only_model_output` and on `rag_model_output`
    /// (as [`HISTORY_SCORED_MODES`]), per session; empty when no session of the output has
    /// the key.
    pub instructions_chain: Vec<f64>,
    pub rag: Vec<f64>,
}

impl DialogueScores {
    /// The per-session scores of a mode of [`HISTORY_SCORED_MODES`].
    pub fn mode(&self, kind: AnswerKind) -> &[f64] {
        match kind {
            AnswerKind::InstructionsChain => &self.instructions_chain,
            AnswerKind::Rag => &self.rag,
            _ => &self.history,
        }
    }
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
    crate::numpy::nanmean(&xs)
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
        AnswerKind::History | AnswerKind::InstructionsChain | AnswerKind::Rag => {
            session.history_regex.iter().enumerate().collect()
        }
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
    // A mode is scored when any session of the output has its key.
    let has = |key: fn(&SessionOutput) -> &Option<Vec<String>>| {
        if out.sessions.iter().any(|o| key(o).is_some()) {
            vec![f64::NAN; n]
        } else {
            Vec::new()
        }
    };
    let mut scores = DialogueScores {
        history: vec![f64::NAN; n],
        session: vec![f64::NAN; n],
        instruction: vec![f64::NAN; n],
        instructions_chain: has(|o| &o.instructions_only_model_output),
        rag: has(|o| &o.rag_model_output),
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
            // After the original's three, so that their answers keep their order. A session
            // without the key scores none (nanmean of nothing), as an empty list would.
            if !scores.instructions_chain.is_empty() {
                let texts = o.instructions_only_model_output.as_deref().unwrap_or(&[]);
                scores.instructions_chain[s] =
                    per_kind(AnswerKind::InstructionsChain, texts, usize::MAX)?.0;
            }
            if !scores.rag.is_empty() {
                let texts = o.rag_model_output.as_deref().unwrap_or(&[]);
                scores.rag[s] = per_kind(AnswerKind::Rag, texts, usize::MAX)?.0;
            }
        }
    }
    Ok(DialogueResult {
        id: d.id,
        scores,
        answers,
        instruction_kinds,
    })
}
