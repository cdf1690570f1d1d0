//! `exec --shard K/N` outputs (BigCodeBench eval-results JSON with a `"shard"` record) and
//! their merge: the `eval` maps joined, the summary recomputed as the unsharded run does.
//! The `"date"` of a merge is the latest shard's (when the last part finished): the one
//! field that differs from an unsharded run's file, as it differs between two such runs.

use crate::shard::{merge_order, Shard, ShardRecord};
use anyhow::{bail, Context, Result};
use pivot_exec::{result::task_sort_key, EvalResults};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Problem ids in the order shards are cut from (BigCodeBench's numeric order).
pub fn sorted_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = ids.into_iter().collect();
    v.sort_by_key(|a| task_sort_key(a));
    v
}

/// What every shard of one exec job shares: the problems and a digest of the samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardInput {
    pub benchmark: String,
    pub problems: String,
    pub task_ids: Vec<String>,
    pub samples_sha256: String,
}

/// A shard's output: BigCodeBench's eval-results file with the shard record after it.
#[derive(Clone, Debug, Serialize)]
pub struct ShardFile<'a> {
    #[serde(flatten)]
    pub results: &'a EvalResults,
    pub shard: ShardRecord<ShardInput, ()>,
}

/// What every shard of one exec job shares: the problems and a digest of the samples.
pub fn input_record(problems: &str, ids: &[&str], samples: &[(String, String)]) -> ShardInput {
    let mut h = Sha256::new();
    for (id, sol) in samples {
        // Length-prefixed, so no two sample lists hash the same text.
        for part in [id, sol] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    let digest = pivot_base::digest::hex(&h.finalize());
    ShardInput {
        benchmark: "exec".into(),
        problems: problems.into(),
        task_ids: ids.iter().map(|s| s.to_string()).collect(),
        samples_sha256: digest,
    }
}

/// The results plus the shard record.
pub fn shard_file(results: &EvalResults, shard: Shard, input: ShardInput) -> ShardFile<'_> {
    ShardFile {
        results,
        shard: shard.record(input, true),
    }
}

/// Whether a parsed JSON file looks like exec results.
pub fn is_exec(v: &Value) -> bool {
    v.get("eval").is_some_and(Value::is_object)
}

/// Merges exec shard files (name, parsed JSON) into one results file.
pub fn merge(files: &[(String, Value)]) -> Result<EvalResults> {
    let order = merge_order(files)?;
    let mut out = EvalResults::default();
    let mut sandbox: Option<(String, &str)> = None;
    let mut subset_of = None;
    for i in order {
        let (name, v) = &files[i];
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("shard");
        }
        let part: EvalResults = serde_json::from_value(v)
            .with_context(|| format!("{name}: not an exec results shard"))?;
        let summary = part.summary.clone().unwrap_or_default();
        match &sandbox {
            Some((s, first)) if *s != summary.sandbox => bail!(
                "cannot merge: {first} ran with sandbox {s:?} but {name} with {:?}",
                summary.sandbox
            ),
            Some(_) => {}
            None => sandbox = Some((summary.sandbox.clone(), name)),
        }
        subset_of = subset_of.or(summary.subset_of);
        out.date = out.date.max(part.date);
        for (id, rs) in part.eval {
            if out.eval.insert(id.clone(), rs).is_some() {
                bail!("cannot merge: task {id} is in more than one shard ({name})");
            }
        }
    }
    let mut summary = out.summarize();
    summary.sandbox = sandbox.map(|(s, _)| s).unwrap_or_default();
    summary.subset_of = subset_of;
    out.summary = Some(summary);
    Ok(out)
}
