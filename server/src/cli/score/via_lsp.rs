//! `score memorycode --via-lsp`: MemoryCode's scores computed by driving the language
//! server as an editor does. Per dialogue: open it (`pivot/headless/setup`), go to each
//! session (`pivot.session.goto`), and have the server analyse that session's answers, each
//! as a document opened with its code, and check them (`pivot/memorycode/answers`). The
//! run, the skips and the aggregation are the core's (`score_dirs_with`), so the JSON must
//! equal the direct scorer's: any difference is a disagreement between the editor and the
//! benchmark.

use crate::cli::shared::lsp_client::LspClient;
use crate::lsp::{AnswerArgs, AnswersArgs, SetupArgs, Text};
use anyhow::{Context, Result};
use pivot_bench::memorycode::score::{
    answers_asked, score_dialogue_with, AnswerAt, AnswerResult, DialogueResult,
};
use pivot_bench::memorycode::score_dirs::{score_dirs_part, Detail};
use pivot_bench::memorycode::{Dialogue, ModelOutput, Report};
use pivot_python::pivots::Verdict;
use pivot_python::python::code_block;
use pivot_workspace::replies::{AnswerVerdicts, HeadlessSetup, Moved};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Mutex;

/// Score `outputs` against `dataset` through language servers (one per scoring thread).
pub fn score_via_lsp(
    dataset: &Path,
    outputs: &Path,
    on_done: &(dyn Fn() + Sync),
    shard: Option<pivot_bench::shard::Shard>,
) -> Result<Report> {
    let root = tempfile::tempdir().context("cannot create a temporary workspace")?;
    let root_path = root.path().canonicalize()?;
    let pool: Mutex<Vec<LspClient>> = Mutex::new(Vec::new());
    let scorer = |path: &Path, d: &Dialogue, o: &ModelOutput| {
        let taken = pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut c = match taken {
            Some(c) => c,
            None => LspClient::start(&root_path).map_err(|e| format!("{e:#}"))?,
        };
        let r = one_dialogue(&mut c, path, d, o);
        // A server that failed is not reused (dropping it stops it).
        if r.is_ok() {
            pool.lock().unwrap_or_else(|e| e.into_inner()).push(c);
        }
        r
    };
    let (report, _) = score_dirs_part(
        dataset,
        outputs,
        Detail::ScoresOnly,
        on_done,
        &scorer,
        shard,
    )?;
    for c in pool.into_inner().unwrap_or_else(|e| e.into_inner()) {
        c.finish()?;
    }
    Ok(report)
}

/// The requests of one session's answers: the move to it (when the server is elsewhere) and
/// the answers, with the answers they were sent for.
struct SessionSent<'a> {
    run: &'a [(AnswerAt, &'a str)],
    goto: Option<i64>,
    answers: i64,
}

fn one_dialogue(
    c: &mut LspClient,
    path: &Path,
    d: &Dialogue,
    o: &ModelOutput,
) -> Result<DialogueResult, String> {
    let err = |e: anyhow::Error| format!("{e:#}");
    let abs = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    c.request_as::<HeadlessSetup>(
        crate::lsp::HEADLESS_SETUP,
        serde_json::to_value(SetupArgs {
            conversation: Some(Text(abs.display().to_string())),
            session: Some(0),
            ..SetupArgs::default()
        })
        .map_err(|e| e.to_string())?,
        &mut |_| {},
    )
    .map_err(err)?;
    // The answers in the order the scorer asks for them (an order that does not depend on
    // the verdicts). All of a dialogue's requests go out at once, a move to a session and
    // that session's answers in one request, as an editor sends what the user does without
    // waiting for each answer; the server orders the answers after the moves sent before
    // them, and each reply names the session it was scored at, which is checked.
    let asked: Vec<(AnswerAt, &str)> = answers_asked(d, o)?
        .into_iter()
        .map(|(at, text)| (at, code_block::extract(text)))
        .collect();
    let mut current = 0usize;
    let mut sent: Vec<SessionSent> = Vec::new();
    for run in asked.chunk_by(|a, b| a.0.session == b.0.session) {
        let session = run[0].0.session;
        let goto = if session != current {
            current = session;
            let id = c
                .send_request(
                    "workspace/executeCommand",
                    json!({"command": "pivot.session.goto", "arguments": [{"index": session}]}),
                )
                .map_err(err)?;
            Some(id)
        } else {
            None
        };
        let answers = AnswersArgs {
            answers: (run.iter())
                .map(|(at, code)| AnswerArgs {
                    text: code.to_string(),
                    // The server knows the original's three kinds; chain and RAG answers are
                    // checked on the history pairs.
                    kind: Text(at.kind.scored_as().name().into()),
                    answer: at.answer,
                })
                .collect(),
        };
        let answers = serde_json::to_value(answers).map_err(|e| e.to_string())?;
        let answers = c
            .send_request(crate::lsp::MEMORYCODE_ANSWERS, answers)
            .map_err(err)?;
        sent.push(SessionSent { run, goto, answers });
    }
    c.flush().map_err(err)?;
    let mut replies = Vec::with_capacity(asked.len());
    for s in &sent {
        let session = s.run[0].0.session;
        if let Some(id) = s.goto {
            c.response_as::<Moved>(id, "pivot.session.goto", &mut |_| {})
                .map_err(err)?;
        }
        let v: AnswerVerdicts = c
            .response_as(s.answers, crate::lsp::MEMORYCODE_ANSWERS, &mut |_| {})
            .map_err(err)?;
        if v.session != session || v.results.len() != s.run.len() {
            return Err(format!(
                "the server scored {} answers at session {} where {} of session {session} were sent",
                v.results.len(),
                v.session,
                s.run.len(),
            ));
        }
        for ((at, _), r) in s.run.iter().zip(v.results) {
            let verdicts: Vec<(usize, Verdict)> =
                r.verdicts.into_iter().map(|(i, v)| (i, v.into())).collect();
            replies.push((*at, verdicts));
        }
    }
    let mut replies = replies.into_iter();
    score_dialogue_with(d, o, &mut |at, _| {
        let (asked, verdicts) = replies
            .next()
            .ok_or("the scorer asked for more answers the second time")?;
        if (asked.session, asked.kind, asked.answer) != (at.session, at.kind, at.answer) {
            return Err(format!(
                "the scorer asked for {at:?} the second time where it had asked for {asked:?}"
            ));
        }
        Ok(AnswerResult {
            session: at.session,
            kind: at.kind,
            answer: at.answer,
            // Only its presence travels (as text); the report does not use it.
            syntax_error: None,
            verdicts,
        })
    })
}

/// What a caller prints when the two scorers disagree.
pub fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if let Some(d) = first_difference(va, vb, &format!("{at}.{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (va, vb))| first_difference(va, vb, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} vs {b}")),
    }
}

/// `bench memorycode --via-lsp`: the direct scorer and the language-server path, run
/// alternately on the same data in one process; prints both times, the ratio, and
/// whether the two JSON reports are identical.
pub fn bench_via_lsp(dataset: &Path, outputs: &Path, runs: usize) -> Result<i32> {
    use pivot_bench::memorycode::score_dirs::score_dirs;
    use std::time::Instant;
    let (mut direct, mut via) = (Vec::new(), Vec::new());
    let (mut a, mut b) = (Value::Null, Value::Null);
    let progress =
        crate::cli::shared::progress::Progress::new(2 * runs.max(1) as u64, "scoring runs");
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let (r, _) = score_dirs(dataset, outputs, Detail::ScoresOnly, &|| {})?;
        direct.push(t.elapsed().as_secs_f64());
        progress.inc(1);
        a = r.to_json(true);
        let t = Instant::now();
        let r = score_via_lsp(dataset, outputs, &|| {}, None)?;
        via.push(t.elapsed().as_secs_f64());
        progress.inc(1);
        b = r.to_json(true);
    }
    progress.finish();
    direct.sort_by(f64::total_cmp);
    via.sort_by(f64::total_cmp);
    let (md, mv) = (direct[direct.len() / 2], via[via.len() / 2]);
    println!(
        "MemoryCode scoring of {}: direct scorer vs through the language server",
        outputs.display()
    );
    println!(
        "direct:  median {md:.3} s (min {:.3}, max {:.3})",
        direct[0],
        direct[direct.len() - 1]
    );
    println!(
        "via-lsp: median {mv:.3} s (min {:.3}, max {:.3})",
        via[0],
        via[via.len() - 1]
    );
    println!(
        "ratio via-lsp / direct: {:.2}x over {} alternating runs",
        mv / md,
        direct.len()
    );
    match first_difference(&a, &b, "$") {
        None => {
            println!("JSON: identical");
            Ok(0)
        }
        Some(d) => {
            println!("JSON: DIFFERENT at {d}");
            Ok(1)
        }
    }
}
