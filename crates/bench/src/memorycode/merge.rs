//! MemoryCode score shards: the JSON a `score memorycode --shard K/N` run writes, and the
//! merge of N such files back into the unsharded run's report. The aggregates are
//! recomputed from the per-dialogue scores by `Report::finish`, exactly as the unsharded
//! scorer computes them; the counts JSON does not carry (answers, scorings, the per-kind
//! sums) travel in the shard record.

use super::report::{Report, Skipped};
use super::score::DialogueScores;
use crate::shard::{check_set, read_record, Shard};
use anyhow::{anyhow, Context, Result};
use serde_json::{json, Map, Value};

/// What a merge checks is the same in every shard: the dataset's dialogue ids and the model.
pub fn input_record(model: &str, ids: &[u32]) -> Value {
    json!({"benchmark": "memorycode", "model": model, "dialogue_ids": ids})
}

/// The report's JSON (as unsharded) plus the `"shard"` record.
pub fn shard_json(report: &Report, shard: Shard, ids: &[u32]) -> Value {
    let mut out = report.to_json(true);
    let mut record = shard.record(input_record(&report.model, ids), true);
    let sums: Map<String, Value> = report
        .by_kind
        .iter()
        .map(|(k, s)| (k.to_string(), json!(s.sum)))
        .collect();
    record["totals"] = json!({
        "answers": report.answers,
        "scorings": report.scorings,
        "by_kind_sum": sums,
    });
    out["shard"] = record;
    out
}

/// Whether a parsed JSON file is a MemoryCode score (shard).
pub fn is_memorycode(v: &Value) -> bool {
    v.get("benchmark").and_then(Value::as_str) == Some("memorycode")
}

/// Merges shard files (name, parsed JSON) into the report of the unsharded run.
pub fn merge(files: &[(String, Value)]) -> Result<Report> {
    let records = files
        .iter()
        .map(|(name, v)| read_record(name, v.get("shard")))
        .collect::<Result<Vec<_>>>()?;
    let order = check_set(&records)?;
    let mut report = Report::default();
    for i in order {
        let (name, v) = &files[i];
        add_shard(&mut report, v).with_context(|| format!("{name}: malformed score shard"))?;
    }
    report.finish();
    Ok(report)
}

fn add_shard(report: &mut Report, v: &Value) -> Result<()> {
    let missing = |what: &str| anyhow!("no valid {what:?}");
    report.model = v["model"].as_str().ok_or_else(|| missing("model"))?.into();
    // The outputs folder's listing order decides numpy's per-session summation order; every
    // shard read the same folder, so the first one's listing serves for all.
    if report.row_order.is_empty() {
        if let Some(list) = v.get("listdir_order").and_then(Value::as_array) {
            report.row_order = list
                .iter()
                .filter_map(|id| match id {
                    Value::String(s) => s.parse().ok(),
                    other => other.as_u64().and_then(|n| u32::try_from(n).ok()),
                })
                .collect();
        }
    }
    let max = v["max_length"]
        .as_u64()
        .ok_or_else(|| missing("max_length"))?;
    report.max_length = report.max_length.max(max as usize);
    let totals = &v["shard"]["totals"];
    let count = |k: &str| totals[k].as_u64().ok_or_else(|| missing(k));
    report.answers += count("answers")? as usize;
    report.scorings += count("scorings")? as usize;
    let dialogues = v["dialogues"]
        .as_object()
        .ok_or_else(|| missing("dialogues"))?;
    for (id, d) in dialogues {
        let id: u32 = id.parse().map_err(|_| anyhow!("dialogue id {id:?}"))?;
        let arr = |k: &str| -> Result<Vec<f64>> {
            let a = d[k].as_array().ok_or_else(|| missing(k))?;
            // null is NaN (no score), as the scorer writes it.
            Ok(a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect())
        };
        let scores = DialogueScores {
            history: arr("history")?,
            session: arr("session")?,
            instruction: arr("instruction")?,
        };
        report.dialogues.insert(id, scores);
    }
    for s in v["skipped"].as_array().ok_or_else(|| missing("skipped"))? {
        report.skipped.push(Skipped {
            id: s["id"].as_u64().ok_or_else(|| missing("skipped id"))? as u32,
            reason: s["reason"].as_str().unwrap_or_default().into(),
        });
    }
    if let Some(w) = v["warnings"].as_array() {
        report
            .warnings
            .extend(w.iter().filter_map(|x| x.as_str().map(String::from)));
    }
    let kinds = v["by_kind"].as_object().ok_or_else(|| missing("by_kind"))?;
    for (kind, k) in kinds {
        // The kind names are the scorer's static ones; an unknown name is not ours.
        let name = pivot_python::python::ObjectKind::from_name(kind)
            .ok_or_else(|| anyhow!("unknown object kind {kind:?} in by_kind"))?
            .name();
        let e = report.by_kind.entry(name).or_default();
        e.sum += totals["by_kind_sum"][kind].as_f64().unwrap_or(0.0);
        e.count += k["count"].as_u64().unwrap_or(0) as usize;
        e.absent += k["absent"].as_u64().unwrap_or(0) as usize;
    }
    Ok(())
}
