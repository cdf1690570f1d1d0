//! Scoring a whole dataset folder against a model's outputs folder: each dialogue scored in
//! parallel (score.rs), skips and warnings kept, the scores aggregated into the report
//! (report.rs). Above both, so that neither knows the other's caller.

use super::data::{dialogue_files, file_id, Dialogue, ModelOutput};
use super::report::Report;
use super::score::{score_dialogue_cached, DialogueResult, ParseCache};
use super::score_file::Skipped;
use rayon::prelude::*;
use std::path::Path;

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
    shard: Option<crate::shard::Shard>,
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
    shard: Option<crate::shard::Shard>,
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
    let canonical = outputs
        .canonicalize()
        .unwrap_or_else(|_| outputs.to_path_buf());
    let mut report = Report {
        model: folder_name(outputs),
        round: super::feedback::round_of(&canonical),
        feedback: super::feedback::round_of(&canonical)
            .and_then(|r| super::feedback::round_counts(&canonical, r)),
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
