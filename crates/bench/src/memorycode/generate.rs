//! Model outputs for MemoryCode from any OpenAI-compatible endpoint: the original's
//! `generate_model_output.py` (instruction, session and history steps of
//! `scripts/generate_model_output.sh`, and the instructions-chain variant) in one pass.
//!
//! Every request is planned and every input checked before the first request, so bad input
//! stops the run before anything is written. Answers go through the client's on-disk cache,
//! so an interrupted run resumes where it stopped and a finished one reruns without requests;
//! a file is written (atomically) only when all of its answers are in and its content changed.

use super::data::dialogue_files;
use anyhow::{bail, Context, Result};
use pivot_llm::memorycode_prompts::{self as prompts, ChatPrompt};
use pivot_llm::{ChatMessage, Client, LlmError, Sampling};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Every version of every instruction of topics.json (`generate_model_output_instruction`).
    Instruction,
    /// Each session's queries after that session alone (`generate_model_output_session`).
    Session,
    /// The last session's queries after all sessions (`generate_model_output_history`).
    History,
    /// The last session's queries after the list of instructions (`..._instructions_chain`).
    InstructionsChain,
    /// The last session's queries after the sessions a reranker picks (`..._rag`).
    Rag,
}

impl Mode {
    /// Each mode's name (on the command line and in protocol arguments) and what it asks.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "instruction",
            "Every version of every instruction of topics.json (generate_model_output_instruction)",
        ),
        (
            "session",
            "Each session's queries after that session alone (generate_model_output_session)",
        ),
        (
            "history",
            "The last session's queries after all sessions (generate_model_output_history)",
        ),
        (
            "instructions-chain",
            "The last session's queries after the list of instructions (..._instructions_chain)",
        ),
        (
            "rag",
            "The last session's queries after the sessions a reranker picks (..._rag)",
        ),
    ];
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "instruction" => Mode::Instruction,
            "session" => Mode::Session,
            "history" => Mode::History,
            "instructions-chain" => Mode::InstructionsChain,
            "rag" => Mode::Rag,
            _ => {
                return Err(format!(
                "unknown mode {s:?}; one of instruction, session, history, instructions-chain, rag"
            ))
            }
        })
    }
}

/// The output key each dialogue mode fills, as the original names it.
fn mode_key(mode: Mode) -> &'static str {
    match mode {
        Mode::Instruction => "instruction_model_output",
        Mode::Session => "session_model_output",
        Mode::History => "history_model_output",
        Mode::InstructionsChain => "instructions_only_model_output",
        Mode::Rag => "rag_model_output",
    }
}

/// What the original reads of a dialogue file.
#[derive(Clone, Debug)]
pub struct GenDialogue {
    pub id: u32,
    pub path: PathBuf,
    pub mentor: String,
    pub mentee: String,
    pub company: String,
    /// Per session: the `[pivot, version]` pairs it introduces (empty for `[-1]`).
    pub instructions: Vec<Vec<(i64, i64)>>,
    pub sessions: Vec<GenSession>,
}

#[derive(Clone, Debug)]
pub struct GenSession {
    pub types: Vec<String>,
    pub topics: Vec<String>,
    pub session_eval_query: Option<Vec<String>>,
    pub history_eval_query: Option<Vec<String>>,
    pub text: String,
}

impl GenDialogue {
    /// The dialogue file as the original's generator reads it, through the format's one
    /// reader ([`super::data::Dialogue`]); what the generator needs and the editor does not
    /// (the context, each session's text) is required here, and its absence named.
    pub fn load(path: &Path) -> Result<GenDialogue> {
        let d = super::data::Dialogue::load(path)?;
        Self::from_dialogue(d, path).with_context(|| format!("{}", path.display()))
    }

    fn from_dialogue(d: super::data::Dialogue, path: &Path) -> Result<GenDialogue> {
        let context = d.context.context("no `context`")?;
        let field = |v: Option<String>, k: &str| {
            v.with_context(|| format!("`context.{k}` is missing or not a string"))
        };
        let instructions = d.instructions.context("no `instructions` list")?;
        let mut sessions = Vec::with_capacity(d.sessions.len());
        for (i, s) in d.sessions.into_iter().enumerate() {
            sessions.push(GenSession {
                types: s.types,
                topics: s.topic,
                session_eval_query: s.session_eval_query,
                history_eval_query: s.history_eval_query,
                text: s
                    .text
                    .with_context(|| format!("`sessions[{i}].text` is missing"))?,
            });
        }
        Ok(GenDialogue {
            id: d.id,
            path: path.to_path_buf(),
            mentor: field(context.mentor, "mentor")?,
            mentee: field(context.mentee, "mentee")?,
            company: field(context.company, "company")?,
            instructions: (instructions.into_iter().enumerate())
                .map(|(i, p)| match p.malformed {
                    false => Ok(p.pairs),
                    true => {
                        bail!("`instructions[{i}]` is neither [-1] nor a list of [id, version]")
                    }
                })
                .collect::<Result<_>>()?,
            sessions,
        })
    }

    fn preamble(&self) -> String {
        prompts::dialogue_preamble(&self.mentee, &self.company, &self.mentor)
    }
}

/// `topics.json`'s instructions as the instruction step reads them.
#[derive(Clone, Debug)]
pub struct GenInstruction {
    pub id: i64,
    pub eval_query: String,
    pub text: Vec<String>,
}

pub fn load_topics(path: &Path) -> Result<Vec<GenInstruction>> {
    let topics = super::data::Topics::load(path)?;
    (topics.instructions.into_iter().enumerate())
        .map(|(i, x)| {
            Ok(GenInstruction {
                id: x.id,
                eval_query: x.eval_query.with_context(|| {
                    format!(
                        "{}: instructions[{i}]: no `eval_query` string",
                        path.display()
                    )
                })?,
                text: x.text,
            })
        })
        .collect()
}

/// The last path component of a model name, as the original names its folders and files.
pub fn model_dir_name(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

#[derive(Clone, Debug)]
pub struct GenerateOptions {
    pub out: PathBuf,
    /// The name files are written under (see [`model_dir_name`]).
    pub model_name: String,
    pub modes: Vec<Mode>,
    pub sampling: Sampling,
    /// Requests prepared at once (the client bounds those in flight).
    pub workers: usize,
}

/// The RAG mode's reranker, as the original calls Cohere's.
pub const DEFAULT_RERANK_MODEL: &str = "rerank-english-v3.0";

/// A RAG query waiting for its reranking.
struct RagQuery {
    d: usize,
    query: usize,
    text: String,
}

/// Progress: `(answered, total)` after each answer.
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

#[derive(Clone, Debug, Default)]
pub struct GenerateReport {
    pub requests: usize,
    pub cached: usize,
    pub written: Vec<PathBuf>,
    pub unchanged: Vec<PathBuf>,
    /// One line per request or file that failed; the run's other files are still written.
    pub failures: Vec<String>,
    /// Wall time of the run (planning, requests, files), for the feedback bench.
    pub elapsed: std::time::Duration,
}

#[derive(Clone, Debug)]
pub(super) enum Target {
    Instruction(String),
    Dialogue {
        d: usize,
        mode: Mode,
        session: usize,
        query: usize,
    },
}

/// One dialogue's answers: per (mode, session), `(query index, text)`.
pub(super) type Answers = BTreeMap<(Mode, usize), Vec<(usize, String)>>;

/// A request's prompt: built up front, or (the history prompts, which hold every session of
/// a dialogue) only when it is sent, so a run over long dialogues does not hold them all.
pub(super) enum Prompt {
    Ready(ChatPrompt),
    History { d: usize, query: String },
}

pub(super) struct Job {
    pub(super) target: Target,
    pub(super) prompt: Prompt,
    pub(super) what: String,
}

impl Job {
    /// The request's prompt, the history prompts built only now (see [`Prompt`]).
    pub(super) fn chat_prompt(&self, dialogues: &[GenDialogue]) -> ChatPrompt {
        match &self.prompt {
            Prompt::Ready(p) => p.clone(),
            Prompt::History { d, query } => {
                let d = &dialogues[*d];
                let joined = prompts::join_sessions(d.sessions.iter().map(|s| s.text.as_str()));
                prompts::dialogue(&d.preamble(), &d.mentor, query, &joined)
            }
        }
    }
}

/// What the feedback rounds (feedback.rs) start from: round 0's jobs and answers.
pub(super) struct Round0 {
    pub(super) jobs: Vec<Job>,
    /// Each job's answer, `None` when it has none (a failed or unsent request).
    pub(super) texts: Vec<Option<String>>,
    pub(super) known: BTreeMap<String, Option<String>>,
    /// The dialogues whose file round 0 could not write.
    pub(super) failed: Vec<bool>,
    /// Whether an instruction answer is missing (then no session-mode file is written).
    pub(super) inst_failed: bool,
}

/// The instruction file's path: `OUT/instruction/<model>.json`.
pub fn instruction_file(out: &Path, model_name: &str) -> PathBuf {
    out.join("instruction").join(format!("{model_name}.json"))
}

/// Where the run writes (the output folder, the instruction and per-model folders in it,
/// the response cache) that cannot be written: checked before the first request, so that
/// no answer is paid for that could not be saved. Inside an output folder that is in the
/// way, only the folder itself is named.
fn unwritable(client: &Client, opts: &GenerateOptions, no_dialogues: bool) -> Vec<String> {
    use crate::out_dir::problem;
    let mut out = Vec::new();
    match problem(&opts.out, "the output folder (--out)") {
        Some(p) => out.push(p),
        None => {
            if opts.modes.contains(&Mode::Instruction) {
                out.extend(problem(
                    &opts.out.join("instruction"),
                    "the instruction outputs' folder",
                ));
            }
            if !no_dialogues && opts.modes.iter().any(|m| *m != Mode::Instruction) {
                out.extend(problem(
                    &opts.out.join(&opts.model_name),
                    "the model outputs' folder",
                ));
            }
        }
    }
    if let Some(cache) = &client.config().cache {
        if !cache.dir().starts_with(&opts.out) || out.is_empty() {
            out.extend(problem(cache.dir(), "the response cache (--cache)"));
        }
    }
    out
}

/// What a run asks, planned before any request: the jobs, the instruction keys known so far
/// (with their answers when read from an earlier run) and the rag queries to rerank.
struct Plan {
    jobs: Vec<Job>,
    known: BTreeMap<String, Option<String>>,
    rag: Vec<RagQuery>,
}

/// Plan, check, request, write. Errors here are bad input (nothing was written); request
/// failures are listed in the report.
pub fn generate(
    client: &Client,
    reranker: Option<&Client>,
    topics: Option<&[GenInstruction]>,
    dialogues: &[GenDialogue],
    opts: &GenerateOptions,
    progress: ProgressFn,
) -> Result<GenerateReport> {
    Ok(generate_round0(client, reranker, topics, dialogues, opts, progress)?.0)
}

/// [`generate`], keeping the jobs and answers for feedback rounds.
pub(super) fn generate_round0(
    client: &Client,
    reranker: Option<&Client>,
    topics: Option<&[GenInstruction]>,
    dialogues: &[GenDialogue],
    opts: &GenerateOptions,
    progress: ProgressFn,
) -> Result<(GenerateReport, Round0)> {
    let started = std::time::Instant::now();
    let has = |m: Mode| opts.modes.contains(&m);
    let inst_path = instruction_file(&opts.out, &opts.model_name);
    // 1. Plan, and check everything before the first request.
    let (mut plan, mut problems) = plan(topics, dialogues, opts, &inst_path)?;
    if has(Mode::Rag) && reranker.is_none() {
        problems.push("the rag mode needs a reranker (--reranker-url)".into());
    }
    problems.extend(unwritable(client, opts, dialogues.is_empty()));
    if !problems.is_empty() {
        bail!("bad input, nothing written:\n  {}", problems.join("\n  "));
    }
    // 2. The rag mode's sessions, chosen by the reranker.
    let (rag_failed, rag_failures) = match reranker.filter(|_| has(Mode::Rag)) {
        Some(rr) => rerank(rr, dialogues, &plan.rag, &mut plan.jobs),
        None => (vec![false; dialogues.len()], Vec::new()),
    };
    // 3. Every request.
    let jobs = &plan.jobs;
    let make = |i: usize| jobs[i].chat_prompt(dialogues);
    let answers = answer_all(
        client,
        jobs.len(),
        &make,
        opts.sampling,
        opts.workers,
        progress,
    );
    let mut report = GenerateReport {
        requests: jobs.len(),
        ..GenerateReport::default()
    };
    report.failures.extend(rag_failures);
    let mut failed_dialogues = rag_failed;
    let mut inst_failed = false;
    let mut per_dialogue: Vec<Answers> = vec![BTreeMap::new(); dialogues.len()];
    let mut texts = Vec::with_capacity(jobs.len());
    for (job, answer) in jobs.iter().zip(answers) {
        texts.push(match &answer {
            Some(Ok(c)) => Some(c.text.clone()),
            _ => None,
        });
        match answer {
            Some(Ok(c)) => {
                report.cached += c.cached as usize;
                match &job.target {
                    Target::Instruction(k) => {
                        plan.known.insert(k.clone(), Some(c.text));
                    }
                    Target::Dialogue {
                        d,
                        mode,
                        session,
                        query,
                    } => per_dialogue[*d]
                        .entry((*mode, *session))
                        .or_default()
                        .push((*query, c.text)),
                }
            }
            other => {
                if let Some(Err(e)) = other {
                    report.failures.push(format!("{}: {e}", job.what));
                }
                match &job.target {
                    Target::Instruction(_) => inst_failed = true,
                    Target::Dialogue { d, .. } => failed_dialogues[*d] = true,
                }
            }
        }
    }
    // 4. The output files: the instruction file, then one file per dialogue.
    if has(Mode::Instruction) && !inst_failed {
        // The original's order: topics order, then version.
        let mut ordered = Map::new();
        for job in jobs {
            if let Target::Instruction(k) = &job.target {
                let answer = plan.known.get(k).cloned().flatten().unwrap_or_default();
                ordered.insert(k.clone(), Value::String(answer));
            }
        }
        write_if_changed(&inst_path, &Value::Object(ordered), &mut report)?;
    }
    let dialogue_modes: Vec<Mode> = opts
        .modes
        .iter()
        .copied()
        .filter(|m| *m != Mode::Instruction)
        .collect();
    if !dialogue_modes.is_empty() {
        write_dialogues(
            dialogues,
            opts,
            &dialogue_modes,
            &per_dialogue,
            &plan.known,
            &mut failed_dialogues,
            inst_failed,
            &opts.out.join(&opts.model_name),
            &mut report,
        )?;
    }
    report.elapsed = started.elapsed();
    let round0 = Round0 {
        jobs: plan.jobs,
        texts,
        known: plan.known,
        failed: failed_dialogues,
        inst_failed,
    };
    Ok((report, round0))
}

/// One output file per dialogue in `folder`, but for those whose answers are missing
/// (marked in `failed`).
#[allow(clippy::too_many_arguments)]
pub(super) fn write_dialogues(
    dialogues: &[GenDialogue],
    opts: &GenerateOptions,
    dialogue_modes: &[Mode],
    per_dialogue: &[Answers],
    known: &BTreeMap<String, Option<String>>,
    failed_dialogues: &mut [bool],
    inst_failed: bool,
    folder: &Path,
    report: &mut GenerateReport,
) -> Result<()> {
    let has = |m: Mode| opts.modes.contains(&m);
    for (di, d) in dialogues.iter().enumerate() {
        if failed_dialogues[di] || (has(Mode::Session) && inst_failed) {
            failed_dialogues[di] = true;
            report.failures.push(format!(
                "{}: not written (answers missing)",
                d.path.display()
            ));
            continue;
        }
        let path = folder.join(format!("output_{}.json", d.id));
        let value = assemble(d, dialogue_modes, &per_dialogue[di], known, &path)?;
        write_if_changed(&path, &value, report)?;
    }
    Ok(())
}

/// Every job of the run, in the original's order, and the problems of the input (each
/// named by file and place). Reading the instruction outputs of an earlier run (for the
/// session mode without the instruction mode) is the only error returned at once.
fn plan(
    topics: Option<&[GenInstruction]>,
    dialogues: &[GenDialogue],
    opts: &GenerateOptions,
    inst_path: &Path,
) -> Result<(Plan, Vec<String>)> {
    let has = |m: Mode| opts.modes.contains(&m);
    let mut jobs = Vec::new();
    // Instruction step: every version of every instruction, whichever dialogues are chosen.
    let mut known: BTreeMap<String, Option<String>> = BTreeMap::new();
    if has(Mode::Instruction) {
        let topics = topics.context("the instruction mode needs --topics")?;
        for ins in topics {
            for (u, text) in ins.text.iter().enumerate() {
                let key = format!("{}.{u}", ins.id);
                known.insert(key.clone(), None);
                jobs.push(Job {
                    target: Target::Instruction(key.clone()),
                    prompt: Prompt::Ready(prompts::instruction(&ins.eval_query, text)),
                    what: format!("instruction {key}"),
                });
            }
        }
    } else if has(Mode::Session) {
        let (v, _): (Value, _) = super::data::read_json(inst_path).with_context(|| {
            "the session mode needs the instruction outputs: add the `instruction` mode".to_string()
        })?;
        let obj = v
            .as_object()
            .with_context(|| format!("{}: not a JSON object", inst_path.display()))?;
        for (k, x) in obj {
            known.insert(k.clone(), Some(x.as_str().unwrap_or_default().to_string()));
        }
    }
    let mut problems = Vec::new();
    for (di, d) in dialogues.iter().enumerate() {
        plan_dialogue(di, d, opts, &known, &mut jobs, &mut problems);
    }
    let mut rag = Vec::new();
    if has(Mode::Rag) {
        for (di, d) in dialogues.iter().enumerate() {
            if let Some(last) = d.sessions.last() {
                for (qi, q) in last.history_eval_query.iter().flatten().enumerate() {
                    rag.push(RagQuery {
                        d: di,
                        query: qi,
                        text: q.clone(),
                    });
                }
            }
        }
    }
    Ok((Plan { jobs, known, rag }, problems))
}

/// One dialogue's jobs (session, history and instructions-chain modes), or its problems.
fn plan_dialogue(
    di: usize,
    d: &GenDialogue,
    opts: &GenerateOptions,
    known: &BTreeMap<String, Option<String>>,
    jobs: &mut Vec<Job>,
    problems: &mut Vec<String>,
) {
    let has = |m: Mode| opts.modes.contains(&m);
    let name = d.path.display();
    let last = d.sessions.len().saturating_sub(1);
    let preamble = d.preamble();
    if has(Mode::Session) {
        for (si, s) in d.sessions.iter().enumerate() {
            let Some(queries) = &s.session_eval_query else {
                problems.push(format!("{name}: session {si} has no `session_eval_query` (the original reads it for every session)"));
                continue;
            };
            if queries.is_empty() {
                continue;
            }
            match d.instructions.get(si) {
                Some(pairs) if !pairs.is_empty() => {
                    for (p, u) in pairs {
                        let key = format!("{p}.{u}");
                        if !known.contains_key(&key) {
                            problems.push(format!(
                                "{name}: session {si} names instruction {key}, which {} lacks",
                                if has(Mode::Instruction) { "the topics file" } else { "the instruction outputs" }
                            ));
                        }
                    }
                }
                _ => problems.push(format!(
                    "{name}: session {si} has eval queries but `instructions[{si}]` names no instruction"
                )),
            }
            for (qi, q) in queries.iter().enumerate() {
                jobs.push(Job {
                    target: Target::Dialogue {
                        d: di,
                        mode: Mode::Session,
                        session: si,
                        query: qi,
                    },
                    prompt: Prompt::Ready(prompts::dialogue(&preamble, &d.mentor, q, &s.text)),
                    what: format!("{name}: session {si} query {qi}"),
                });
            }
        }
    }
    let needs_history = has(Mode::History) || has(Mode::InstructionsChain) || has(Mode::Rag);
    if needs_history {
        if let Some(si) = d
            .sessions
            .iter()
            .position(|s| s.history_eval_query.is_none())
        {
            problems.push(format!("{name}: session {si} has no `history_eval_query`"));
            return;
        }
    }
    let Some(last_s) = d.sessions.last() else {
        problems.push(format!("{name}: no sessions"));
        return;
    };
    let hq = last_s.history_eval_query.clone().unwrap_or_default();
    if has(Mode::History) {
        for (qi, q) in hq.iter().enumerate() {
            jobs.push(Job {
                target: Target::Dialogue {
                    d: di,
                    mode: Mode::History,
                    session: last,
                    query: qi,
                },
                prompt: Prompt::History {
                    d: di,
                    query: q.clone(),
                },
                what: format!("{name}: history query {qi}"),
            });
        }
    }
    if has(Mode::InstructionsChain) {
        // `"instruction" in type` is a substring test: filler-instruction topics count too.
        let topics: Vec<String> = (d.sessions.iter())
            .flat_map(|s| s.types.iter().zip(&s.topics))
            .filter(|(t, _)| t.contains("instruction"))
            .map(|(_, topic)| topic.clone())
            .collect();
        for (qi, q) in hq.iter().enumerate() {
            jobs.push(Job {
                target: Target::Dialogue {
                    d: di,
                    mode: Mode::InstructionsChain,
                    session: last,
                    query: qi,
                },
                prompt: Prompt::Ready(prompts::instructions_chain(q, &topics)),
                what: format!("{name}: instructions-chain query {qi}"),
            });
        }
    }
}

/// The rag mode's jobs: for each query, the sessions the reranker picks, in chronological
/// order. A dialogue whose rerank failed is marked, and a fatal error (no such endpoint, a
/// bad key) stops the reranking.
fn rerank(
    rr: &Client,
    dialogues: &[GenDialogue],
    rag: &[RagQuery],
    jobs: &mut Vec<Job>,
) -> (Vec<bool>, Vec<String>) {
    let mut rag_failed = vec![false; dialogues.len()];
    let mut rag_failures = Vec::new();
    for q in rag {
        let d = &dialogues[q.d];
        let texts: Vec<String> = d.sessions.iter().map(|s| s.text.clone()).collect();
        // As many sessions as the dialogue has instruction sessions.
        let top_n = d.instructions.iter().filter(|p| !p.is_empty()).count();
        match rr.rerank(&q.text, &texts, top_n) {
            Ok(mut picked) => {
                // The original keeps the chronological order and renumbers from 0.
                picked.sort_unstable();
                let chunks = prompts::join_sessions(picked.iter().map(|&i| texts[i].as_str()));
                jobs.push(Job {
                    target: Target::Dialogue {
                        d: q.d,
                        mode: Mode::Rag,
                        session: d.sessions.len() - 1,
                        query: q.query,
                    },
                    prompt: Prompt::Ready(prompts::dialogue(
                        &d.preamble(),
                        &d.mentor,
                        &q.text,
                        &chunks,
                    )),
                    what: format!("{}: rag query {}", d.path.display(), q.query),
                });
            }
            Err(e) => {
                rag_failed[q.d] = true;
                rag_failures.push(format!(
                    "{}: rerank of query {}: {e}",
                    d.path.display(),
                    q.query
                ));
                if e.is_fatal() {
                    break;
                }
            }
        }
    }
    (rag_failed, rag_failures)
}

/// One dialogue's output file: the existing file's sessions (when they match in number) with
/// this run's keys replaced, as the original's history step updates the session step's file.
fn assemble(
    d: &GenDialogue,
    modes: &[Mode],
    answers: &Answers,
    known: &BTreeMap<String, Option<String>>,
    path: &Path,
) -> Result<Value> {
    let n = d.sessions.len();
    let mut sessions: Vec<Map<String, Value>> = pivot_base::bounded_read::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("sessions").and_then(Value::as_array).cloned())
        .filter(|s| s.len() == n && s.iter().all(Value::is_object))
        .map(|s| {
            s.into_iter()
                .filter_map(|x| x.as_object().cloned())
                .collect()
        })
        .unwrap_or_else(|| vec![Map::new(); n]);
    let list = |mode: Mode, si: usize| -> Value {
        let mut got = answers.get(&(mode, si)).cloned().unwrap_or_default();
        got.sort_by_key(|(q, _)| *q);
        Value::Array(got.into_iter().map(|(_, t)| Value::String(t)).collect())
    };
    for (si, s) in sessions.iter_mut().enumerate() {
        for &mode in modes {
            match mode {
                Mode::Session => {
                    s.insert(mode_key(Mode::Session).into(), list(Mode::Session, si));
                    let has_q = d.sessions[si]
                        .session_eval_query
                        .as_ref()
                        .is_some_and(|q| !q.is_empty());
                    let inst: Vec<Value> = if has_q {
                        d.instructions[si]
                            .iter()
                            .map(|(p, u)| {
                                let k = format!("{p}.{u}");
                                Value::String(known.get(&k).cloned().flatten().unwrap_or_default())
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    s.insert(mode_key(Mode::Instruction).into(), Value::Array(inst));
                }
                Mode::History | Mode::InstructionsChain | Mode::Rag => {
                    s.insert(mode_key(mode).into(), list(mode, si));
                }
                Mode::Instruction => {}
            }
        }
    }
    let sessions = sessions.into_iter().map(Value::Object).collect();
    let mut top = Map::new();
    top.insert("sessions".into(), Value::Array(sessions));
    Ok(Value::Object(top))
}

/// Python's `json.dump(obj, f, indent=2)`: two-space indentation, `": "`, non-ASCII escaped
/// as `\uXXXX` (UTF-16), no final newline.
pub fn python_json(v: &Value) -> String {
    python_json_indent(v, 2)
}

/// Python's `json.dump(obj, f, indent=N)` (see [`python_json`]).
pub fn python_json_indent(v: &Value, indent: usize) -> String {
    crate::pyjson::dump_indent(v, indent)
}

fn write_if_changed(path: &Path, v: &Value, report: &mut GenerateReport) -> Result<()> {
    let text = python_json(v);
    if pivot_base::bounded_read::read_to_string(path)
        .ok()
        .as_deref()
        == Some(text.as_str())
    {
        report.unchanged.push(path.to_path_buf());
        return Ok(());
    }
    pivot_base::durable::write_atomic(path, text.as_bytes())?;
    report.written.push(path.to_path_buf());
    Ok(())
}

/// One answer per prompt, or `None` when it was not asked.
pub type Answered = Vec<Option<Result<pivot_llm::Completion, LlmError>>>;

/// Answer prompts `0..count` (`[system: preamble, user: prompt]`, each built by `prompt(i)`
/// when it is sent) with `workers` threads; after an
/// error that will not go away (endpoint unreachable, key rejected) the remaining prompts are
/// not sent (`None`).
pub fn answer_all(
    client: &Client,
    count: usize,
    prompt: &(dyn Fn(usize) -> ChatPrompt + Sync),
    sampling: Sampling,
    workers: usize,
    progress: ProgressFn,
) -> Answered {
    let messages = |i: usize| {
        let job = prompt(i);
        vec![
            ChatMessage::new("system", &job.preamble),
            ChatMessage::new("user", &job.prompt),
        ]
    };
    answer_messages(client, count, &messages, sampling, workers, progress)
}

/// [`answer_all`] for conversations of any length: request `i` sends `messages(i)`.
pub fn answer_messages(
    client: &Client,
    count: usize,
    messages: &(dyn Fn(usize) -> Vec<ChatMessage> + Sync),
    sampling: Sampling,
    workers: usize,
    progress: ProgressFn,
) -> Answered {
    let mut results: Answered = (0..count).map(|_| None).collect();
    let mut done = 0;
    let _ = pivot_base::pool::run(
        count,
        workers,
        |i| client.chat_messages(&messages(i), sampling),
        // Offline misses are not fatal: every missing answer gets named.
        |r| matches!(r, Err(e) if e.is_fatal()),
        |i, r| {
            results[i] = Some(r);
            done += 1;
            progress(done, count);
            Ok::<_, std::convert::Infallible>(pivot_base::pool::Flow::More)
        },
    );
    results
}

/// The dialogue files of `dataset` whose ids are in `ids` (all when `None`).
pub fn select_dialogues(dataset: &Path, ids: Option<&[u32]>) -> Result<Vec<GenDialogue>> {
    let files = dialogue_files(dataset)?;
    if let Some(ids) = ids {
        let have: Vec<u32> = files.iter().map(|(i, _)| *i).collect();
        let missing: Vec<String> = ids
            .iter()
            .filter(|i| !have.contains(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            bail!(
                "{}: no dialogue_N.json for N = {}",
                dataset.display(),
                missing.join(", ")
            );
        }
    }
    files
        .into_iter()
        .filter(|(i, _)| ids.is_none_or(|ids| ids.contains(i)))
        .map(|(_, p)| GenDialogue::load(&p))
        .collect()
}

/// `1,2,5-7` as a sorted list of ids.
pub fn parse_ids(s: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| -> Result<u32> {
            x.trim()
                .parse()
                .with_context(|| format!("bad dialogue id `{x}` in `{s}`"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    bail!("empty dialogue range `{part}`");
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The editor opens a dialogue whose pivots or context are malformed (bad pairs left
    /// out); the generator, which sends them to a model, refuses it and names the entry.
    #[test]
    fn malformed_pivots_open_in_the_editor_and_stop_the_generator() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dialogue_4.json");
        let text = r#"{"context": {"mentor": "A", "mentee": "B", "company": 3},
            "instructions": [[[1, 0], [2, 1, 9]], [-1], "x"],
            "sessions": [{"type": [], "topic": [], "text": "t"}]}"#;
        pivot_base::durable::write_scratch(&path, text).unwrap();
        let d = super::super::data::Dialogue::load(&path).unwrap();
        assert_eq!(d.pivots_at(0), &[(1, 0)]);
        assert!(d.pivots_at(1).is_empty() && d.pivots_at(2).is_empty());
        let e = format!("{:#}", GenDialogue::load(&path).unwrap_err());
        assert!(e.contains("context.company"), "{e}");
        pivot_base::durable::write_scratch(&path, text.replace("3}", "\"C\"}")).unwrap();
        let e = format!("{:#}", GenDialogue::load(&path).unwrap_err());
        assert!(e.contains("instructions[0]"), "{e}");
    }

    #[test]
    fn ids_and_python_json() {
        assert_eq!(parse_ids("1,2,5-7").unwrap(), vec![1, 2, 5, 6, 7]);
        assert!(parse_ids("3-1").is_err());
        assert!(parse_ids("x").is_err());
        let v = serde_json::json!({"a": ["é😀", []]});
        assert_eq!(
            python_json(&v),
            "{\n  \"a\": [\n    \"\\u00e9\\ud83d\\ude00\",\n    []\n  ]\n}"
        );
        assert_eq!(model_dir_name("meta-llama/Llama-3"), "Llama-3");
    }
}
