//! MemoryCode with feedback rounds (`memorycode generate --feedback pivots --rounds K`):
//! round 0 is [`super::generate::generate`] unchanged; in round r > 0, each dialogue answer of
//! round r-1 whose code breaks a pivot in force at its session is asked again, as the same
//! conversation (the previous round's request), the model's previous answer as an assistant
//! message, and one user message holding only the diagnostics the [`Critic`] gives (an agent's
//! findings for that code); an answer without findings is carried over unchanged and not
//! asked again. Each round's output files have round 0's layout in a folder of their own
//! ([`round_dir`]), so the scorer reads any round as it reads round 0.
//!
//! What the diagnostics are is not decided here: the critic (the workspace's, in the binary)
//! is the engine the editor and the MCP server use. The instruction mode's answers belong to
//! no session of a dialogue, so they are carried over unchanged into every round.

use super::generate::{
    generate_round0, write_dialogues, Answers, GenDialogue, GenInstruction, GenerateOptions,
    GenerateReport, Mode, Target,
};
use anyhow::{bail, Context, Result};
use pivot_llm::{ChatMessage, Client};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folder under `--out` that holds the rounds after round 0 and the summary.
pub const FEEDBACK_DIR: &str = "feedback";

/// What a feedback turn holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackKind {
    /// The findings of the pivots in force at the answer's session, as an agent gets them.
    Pivots,
}

impl FeedbackKind {
    /// Each kind's name (on the command line, in the summary) and what it sends.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[(
        "pivots",
        "The findings of the pivots in force at the answer's session, as an agent's check_code gets them",
    )];

    pub fn name(self) -> &'static str {
        match self {
            FeedbackKind::Pivots => "pivots",
        }
    }
}

impl std::str::FromStr for FeedbackKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pivots" => Ok(FeedbackKind::Pivots),
            _ => Err(format!("unknown feedback {s:?}; one of pivots")),
        }
    }
}

/// The diagnostics an agent would get for a piece of code at a session of a dialogue.
pub trait Critic {
    /// Called once per dialogue before the first request, so a dialogue the critic cannot
    /// read stops the run before anything is written.
    fn prepare(&mut self, dialogue: &Path) -> Result<()>;
    /// The findings of `code` under the pivots in force at `session` of `dialogue`.
    fn critique(&mut self, dialogue: &Path, session: usize, code: &str) -> Critique;
}

/// One answer's diagnostics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Critique {
    /// What the code breaks, by finding code (a pivot's id, `syntax-error`).
    pub broken: BTreeSet<String>,
    /// The feedback turn's whole text; `None` when there is nothing to say (the answer is
    /// then carried over, not asked again).
    pub message: Option<String>,
}

/// The folder of round `round`'s output files: round 0's is generate's own `OUT/<model>`,
/// round r's `OUT/feedback/round-r/<model>` (the last component stays the model's name,
/// which the score file takes from it).
pub fn round_dir(out: &Path, model_name: &str, round: usize) -> PathBuf {
    if round == 0 {
        return out.join(model_name);
    }
    out.join(FEEDBACK_DIR)
        .join(format!("round-{round}"))
        .join(model_name)
}

/// The feedback round an outputs folder holds, read from its place (`.../round-r/<model>`,
/// see [`round_dir`]); `None` for any other folder (round 0 among them).
pub fn round_of(outputs: &Path) -> Option<usize> {
    let parent = outputs.parent()?.file_name()?.to_str()?;
    let n: usize = parent.strip_prefix("round-")?.parse().ok()?;
    (n > 0).then_some(n)
}

/// Round `round`'s counts from the summary beside its folder (`.../feedback/<model>.json`
/// for `.../feedback/round-r/<model>`), when there is one that says it; the score file
/// carries them to the report. A summary that cannot be read gives none: the scores do not
/// depend on it.
pub fn round_counts(outputs: &Path, round: usize) -> Option<RoundSummary> {
    let model = outputs.file_name()?.to_str()?;
    let summary = outputs.parent()?.parent()?.join(format!("{model}.json"));
    let text = pivot_base::bounded_read::read_to_string(&summary).ok()?;
    let s: FeedbackSummary = serde_json::from_str(&text).ok()?;
    s.rounds.into_iter().find(|r| r.round == round)
}

/// The summary file: `OUT/feedback/<model>.json`.
pub fn summary_file(out: &Path, model_name: &str) -> PathBuf {
    out.join(FEEDBACK_DIR).join(format!("{model_name}.json"))
}

/// One round's counts, over the dialogue answers (session, history, instructions-chain, rag).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundSummary {
    pub round: usize,
    /// The round's outputs folder, relative to `--out`, `/`-separated.
    pub outputs: String,
    /// Answers there are after this round (an answer whose request failed has none).
    pub answers: usize,
    /// Of those, answers whose code has findings (a broken pivot or a syntax error).
    pub broken: usize,
    /// Answers of the round before with findings, asked again in this round (0 in round 0).
    pub reasked: usize,
    /// Re-asked answers whose new code has no findings.
    pub fixed: usize,
    /// Re-asked answers whose new code still breaks some of what it broke, and nothing else.
    pub kept_broken: usize,
    /// Re-asked answers whose new code breaks something the previous one did not.
    pub broken_anew: usize,
    /// Re-asked answers that got no answer (a failed request; offline, not in the cache).
    pub unanswered: usize,
}

/// The summary file's content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedbackSummary {
    pub model: String,
    /// The `--feedback` kind.
    pub feedback: String,
    /// Round 0 first.
    pub rounds: Vec<RoundSummary>,
}

/// Round 0's report, then each later round's, and the summary (also written to
/// [`summary_file`]).
#[derive(Clone, Debug, Default)]
pub struct FeedbackReport {
    /// Each round's requests and files; its `elapsed` includes the critic's time, which
    /// `critique` gives apart.
    pub rounds: Vec<GenerateReport>,
    /// Per round, the time spent on the diagnostics of its answers.
    pub critique: Vec<std::time::Duration>,
    pub summary: FeedbackSummary,
    pub summary_path: PathBuf,
}

/// Progress: `(round, answered, total)` after each answer.
pub type RoundProgressFn<'a> = &'a (dyn Fn(usize, usize, usize) + Sync);

/// One dialogue answer followed through the rounds.
struct Thread {
    job: usize,
    d: usize,
    session: usize,
    /// The turns after round 0's prompt: (assistant, user) pairs, one per round asked.
    turns: Vec<ChatMessage>,
    /// The latest answer; `None` once a request of it failed.
    text: Option<String>,
    critique: Critique,
}

/// Round 0 (exactly [`super::generate::generate`]) and `rounds` feedback rounds after it.
#[allow(clippy::too_many_arguments)]
pub fn generate_with_feedback(
    client: &Client,
    reranker: Option<&Client>,
    topics: Option<&[GenInstruction]>,
    dialogues: &[GenDialogue],
    opts: &GenerateOptions,
    kind: FeedbackKind,
    rounds: usize,
    critic: &mut dyn Critic,
    progress: RoundProgressFn,
) -> Result<FeedbackReport> {
    let mut problems = Vec::new();
    for d in dialogues {
        if let Err(e) = critic.prepare(&d.path) {
            problems.push(format!("{}: {e:#}", d.path.display()));
        }
    }
    problems.extend(crate::out_dir::problem(
        &opts.out.join(FEEDBACK_DIR),
        "the feedback rounds' folder",
    ));
    if !problems.is_empty() {
        bail!("bad input, nothing written:\n  {}", problems.join("\n  "));
    }
    let (report0, round0) =
        generate_round0(client, reranker, topics, dialogues, opts, &|done, total| {
            progress(0, done, total)
        })?;
    let clock = std::time::Instant::now();
    let mut threads: Vec<Thread> = Vec::new();
    for (i, job) in round0.jobs.iter().enumerate() {
        if let Target::Dialogue { d, session, .. } = job.target {
            let text = round0.texts[i].clone();
            let critique = match &text {
                Some(t) => critique(critic, &dialogues[d], session, t),
                None => Critique::default(),
            };
            threads.push(Thread {
                job: i,
                d,
                session,
                turns: Vec::new(),
                text,
                critique,
            });
        }
    }
    let mut summary = FeedbackSummary {
        model: opts.model_name.clone(),
        feedback: kind.name().into(),
        rounds: vec![tally(0, &threads, RoundSummary::default(), opts)],
    };
    let mut critique_time = vec![clock.elapsed()];
    let mut reports = vec![report0];
    reports[0].elapsed += critique_time[0];
    let dialogue_modes: Vec<Mode> = (opts.modes.iter().copied())
        .filter(|m| *m != Mode::Instruction)
        .collect();
    let mut failed = round0.failed.clone();
    for round in 1..=rounds {
        if dialogue_modes.is_empty() {
            break;
        }
        let started = std::time::Instant::now();
        let mut critic_time = std::time::Duration::ZERO;
        let ask: Vec<usize> = (0..threads.len())
            .filter(|&t| threads[t].text.is_some() && threads[t].critique.message.is_some())
            .collect();
        let messages = |k: usize| {
            let t = &threads[ask[k]];
            let base = round0.jobs[t.job].chat_prompt(dialogues);
            let mut m = vec![
                ChatMessage::new("system", &base.preamble),
                ChatMessage::new("user", &base.prompt),
            ];
            m.extend(t.turns.iter().cloned());
            m.push(ChatMessage::new(
                "assistant",
                t.text.as_deref().unwrap_or(""),
            ));
            m.push(ChatMessage::new(
                "user",
                t.critique.message.as_deref().unwrap_or(""),
            ));
            m
        };
        let answers = super::generate::answer_messages(
            client,
            ask.len(),
            &messages,
            opts.sampling,
            opts.workers,
            &|done, total| progress(round, done, total),
        );
        let mut report = GenerateReport {
            requests: ask.len(),
            ..GenerateReport::default()
        };
        let mut counts = RoundSummary {
            reasked: ask.len(),
            ..RoundSummary::default()
        };
        for (&ti, answer) in ask.iter().zip(answers) {
            let t = &mut threads[ti];
            let job = &round0.jobs[t.job];
            match answer {
                Some(Ok(c)) => {
                    report.cached += c.cached as usize;
                    let clock = std::time::Instant::now();
                    let new = critique(critic, &dialogues[t.d], t.session, &c.text);
                    critic_time += clock.elapsed();
                    if new.message.is_none() {
                        counts.fixed += 1;
                    } else if new.broken.is_subset(&t.critique.broken) {
                        counts.kept_broken += 1;
                    } else {
                        counts.broken_anew += 1;
                    }
                    let previous = t.text.take().unwrap_or_default();
                    let said = t.critique.message.take().unwrap_or_default();
                    t.turns.push(ChatMessage::new("assistant", &previous));
                    t.turns.push(ChatMessage::new("user", &said));
                    t.text = Some(c.text);
                    t.critique = new;
                }
                other => {
                    if let Some(Err(e)) = other {
                        report.failures.push(format!("{}: {e}", job.what));
                    }
                    counts.unanswered += 1;
                    t.text = None;
                    failed[t.d] = true;
                }
            }
        }
        let mut per_dialogue: Vec<Answers> = vec![BTreeMap::new(); dialogues.len()];
        for t in &threads {
            if let (Some(text), Target::Dialogue { mode, query, .. }) =
                (&t.text, &round0.jobs[t.job].target)
            {
                per_dialogue[t.d]
                    .entry((*mode, t.session))
                    .or_default()
                    .push((*query, text.clone()));
            }
        }
        let folder = round_dir(&opts.out, &opts.model_name, round);
        write_dialogues(
            dialogues,
            opts,
            &dialogue_modes,
            &per_dialogue,
            &round0.known,
            &mut failed,
            round0.inst_failed,
            &folder,
            &mut report,
        )?;
        summary.rounds.push(tally(round, &threads, counts, opts));
        report.elapsed = started.elapsed();
        reports.push(report);
        critique_time.push(critic_time);
    }
    let summary_path = summary_file(&opts.out, &opts.model_name);
    let mut text = serde_json::to_string_pretty(&summary).context("the feedback summary")?;
    text.push('\n');
    pivot_base::durable::write_atomic(&summary_path, text.as_bytes())?;
    Ok(FeedbackReport {
        rounds: reports,
        critique: critique_time,
        summary,
        summary_path,
    })
}

/// The critic on an answer's code, as the scorer extracts it.
fn critique(critic: &mut dyn Critic, d: &GenDialogue, session: usize, answer: &str) -> Critique {
    let code = pivot_python::python::code_block::extract(answer);
    critic.critique(&d.path, session, code)
}

/// `counts` with the round's totals of answers and broken ones filled in.
fn tally(
    round: usize,
    threads: &[Thread],
    counts: RoundSummary,
    opts: &GenerateOptions,
) -> RoundSummary {
    let folder = round_dir(Path::new(""), &opts.model_name, round);
    let answered = threads.iter().filter(|t| t.text.is_some());
    RoundSummary {
        round,
        outputs: (folder.components())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        answers: answered.clone().count(),
        broken: answered.filter(|t| t.critique.message.is_some()).count(),
        ..counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_folders_and_their_numbers() {
        let out = Path::new("o");
        assert_eq!(round_dir(out, "m", 0), Path::new("o/m"));
        assert_eq!(round_dir(out, "m", 2), Path::new("o/feedback/round-2/m"));
        assert_eq!(round_of(&round_dir(out, "m", 2)), Some(2));
        assert_eq!(round_of(&round_dir(out, "m", 0)), None);
        assert_eq!(round_of(Path::new("x/round-two/m")), None);
        assert_eq!(summary_file(out, "m"), Path::new("o/feedback/m.json"));
    }
}
