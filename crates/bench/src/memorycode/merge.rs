//! MemoryCode score shards: the file a `score memorycode --shard K/N` run writes, and the
//! merge of N such files back into the unsharded run's report. The aggregates are
//! recomputed from the per-dialogue scores by `Report::finish`, exactly as the unsharded
//! scorer computes them; the counts the file does not carry (answers, scorings, the per-kind
//! sums) travel in the shard record.

use super::report::Report;
use super::score::DialogueScores;
use super::score_file::{floats, ScoreFile, ShardInput, ShardTotals};
use crate::shard::{merge_order, Shard};
use anyhow::{anyhow, Context, Result};
use serde_json::Value;

/// What a merge checks is the same in every shard: the dataset's dialogue ids and the model.
pub fn input_record(model: &str, ids: &[u32]) -> ShardInput {
    ShardInput {
        benchmark: "memorycode".into(),
        model: model.into(),
        dialogue_ids: ids.to_vec(),
    }
}

/// The report's file (as unsharded) with its `"shard"` record.
pub fn shard_file(report: &Report, shard: Shard, ids: &[u32]) -> ScoreFile {
    let mut out = report.to_file(true);
    let mut record = shard.record(input_record(&report.model, ids), true);
    record.totals = Some(ShardTotals {
        answers: report.answers as u64,
        scorings: report.scorings as u64,
        by_kind_sum: (report.by_kind.iter())
            .map(|(k, s)| (k.to_string(), s.sum))
            .collect(),
    });
    out.shard = Some(record);
    out
}

/// Whether a parsed JSON file is a MemoryCode score (shard).
pub fn is_memorycode(v: &Value) -> bool {
    v.get("benchmark").and_then(Value::as_str) == Some("memorycode")
}

/// Merges shard files (name, parsed JSON) into the report of the unsharded run.
pub fn merge(files: &[(String, Value)]) -> Result<Report> {
    let order = merge_order(files)?;
    let mut report = Report::default();
    for i in order {
        let (name, v) = &files[i];
        ScoreFile::deserialize_from(v)
            .and_then(|f| add_shard(&mut report, &f))
            .with_context(|| format!("{name}: malformed score shard"))?;
    }
    report.finish();
    Ok(report)
}

fn add_shard(report: &mut Report, f: &ScoreFile) -> Result<()> {
    let totals = (f.shard.as_ref())
        .and_then(|s| s.totals.as_ref())
        .ok_or_else(|| anyhow!("no valid \"totals\" in its shard record"))?;
    report.model = f.model.clone();
    report.round = f.round;
    report.feedback = f.feedback.clone();
    // The outputs folder's listing order decides numpy's per-session summation order; every
    // shard read the same folder, so the first one's listing serves for all.
    if report.row_order.is_empty() {
        report.row_order = f
            .listdir_order
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect();
    }
    report.max_length = report.max_length.max(f.max_length);
    report.answers += totals.answers as usize;
    report.scorings += totals.scorings as usize;
    for (id, d) in &f.dialogues {
        let scores = DialogueScores {
            history: floats(&d.history),
            session: floats(&d.session),
            instruction: floats(&d.instruction),
            instructions_chain: floats(&d.instructions_chain),
            rag: floats(&d.rag),
        };
        report.dialogues.insert(*id, scores);
    }
    report.skipped.extend(f.skipped.iter().cloned());
    report.warnings.extend(f.warnings.iter().flatten().cloned());
    for (kind, k) in &f.by_kind {
        // The kind names are the scorer's static ones; an unknown name is not ours.
        let name = pivot_python::python::ObjectKind::from_name(kind)
            .ok_or_else(|| anyhow!("unknown object kind {kind:?} in by_kind"))?
            .name();
        let e = report.by_kind.entry(name).or_default();
        e.sum += totals.by_kind_sum.get(kind).copied().unwrap_or(0.0);
        e.count += k.count as usize;
        e.absent += k.absent as usize;
    }
    Ok(())
}
