//! The MemoryCode score file: the JSON `score memorycode --format json` prints and a shard
//! run writes, in the shape of the reference dump (`reference/<model>.json`) with our keys
//! after it. One type for the writer ([`super::report::Report::to_file`]), the shard merge
//! ([`super::merge`]) and the HTML report's reader (`pivot-report`), so a renamed field is a
//! compile error in all three rather than a silent `null`.

use crate::shard::ShardRecord;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
/// reference dump writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, JsonSchema)]
pub struct Score(#[schemars(with = "Option<f64>")] pub f64);

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            s.serialize_none()
        }
    }
}

/// A number or `null`; unlike an `Option`, a missing key is an error, not a silent NaN.
impl<'de> Deserialize<'de> for Score {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Number;
        impl<'de> serde::de::Visitor<'de> for Number {
            type Value = Score;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or null")
            }
            fn visit_f64<E>(self, x: f64) -> Result<Score, E> {
                Ok(Score(x))
            }
            fn visit_i64<E>(self, x: i64) -> Result<Score, E> {
                Ok(Score(x as f64))
            }
            fn visit_u64<E>(self, x: u64) -> Result<Score, E> {
                Ok(Score(x as f64))
            }
            fn visit_unit<E>(self) -> Result<Score, E> {
                Ok(Score(f64::NAN))
            }
        }
        d.deserialize_any(Number)
    }
}

impl Score {
    /// The score, or `None` where the file has `null`.
    pub fn value(&self) -> Option<f64> {
        self.0.is_finite().then_some(self.0)
    }
}

/// Scores as a list, NaN as `null`.
pub fn scores(xs: &[f64]) -> Vec<Score> {
    xs.iter().copied().map(Score).collect()
}

/// Scores back from a list.
pub fn floats(xs: &[Score]) -> Vec<f64> {
    xs.iter().map(|s| s.0).collect()
}

/// MemoryCode's four scores, by the names the reference dump gives them, in its order.
pub const METRICS: [&str; 4] = ["short history", "long history", "session", "instruction"];

/// One value per metric, in [`METRICS`]' order and with its names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Metrics<T> {
    #[serde(rename = "short history")]
    pub short_history: T,
    #[serde(rename = "long history")]
    pub long_history: T,
    pub session: T,
    pub instruction: T,
}

impl<T> Metrics<T> {
    /// Each metric's value, made from its name.
    pub fn from_fn(f: impl Fn(&'static str) -> T) -> Self {
        Metrics {
            short_history: f(METRICS[0]),
            long_history: f(METRICS[1]),
            session: f(METRICS[2]),
            instruction: f(METRICS[3]),
        }
    }

    /// The value of the metric named `name` (`"short history"`, ...).
    pub fn get(&self, name: &str) -> Option<&T> {
        self.iter()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// `(name, value)` in the file's order.
    pub fn iter(&self) -> [(&'static str, &T); 4] {
        [
            (METRICS[0], &self.short_history),
            (METRICS[1], &self.long_history),
            (METRICS[2], &self.session),
            (METRICS[3], &self.instruction),
        ]
    }
}

/// One dialogue's per-session scores.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DialogueRow {
    pub history: Vec<Score>,
    pub session: Vec<Score>,
    pub instruction: Vec<Score>,
    /// The History scorer on `instructions_only_model_output` / `rag_model_output`; absent
    /// when the output has no such key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions_chain: Vec<Score>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rag: Vec<Score>,
}

/// A mode beyond the original evaluator's (instructions chain, RAG): its answers scored by
/// the History scorer, aggregated as History is (short / long by dialogue id).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModeScores {
    /// The output key its answers are read from.
    pub output_key: String,
    /// Always `"history"`: which of the original's scorers scored the answers.
    pub scored_as: String,
    #[serde(rename = "macro")]
    pub macro_scores: HistoryPair<Score>,
    pub per_session: HistoryPair<Vec<Score>>,
    /// Dialogues with a score in this mode.
    pub dialogues: u64,
}

/// History's two scores, by the reference dump's names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryPair<T> {
    #[serde(rename = "short history")]
    pub short_history: T,
    #[serde(rename = "long history")]
    pub long_history: T,
}

/// A dialogue that was not scored, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub id: u32,
    #[serde(default)]
    pub reason: String,
}

/// Instruction answers of one object kind (no original evaluator has it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KindRow {
    pub mean: Score,
    pub count: u64,
    /// Answers whose pivot's object was absent (no score); absent in older files.
    #[serde(default)]
    pub absent: u64,
}

/// What every shard of one run shares: the dataset's dialogues and the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardInput {
    pub benchmark: String,
    pub model: String,
    pub dialogue_ids: Vec<u32>,
}

/// The counts the scores do not carry, summed by the merge.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardTotals {
    pub answers: u64,
    pub scorings: u64,
    /// Per object kind, the sum of its scored answers (the mean alone loses it).
    pub by_kind_sum: BTreeMap<String, f64>,
}

/// The whole file. Files written before `benchmark`, `model`, `by_kind` or `listdir_order`
/// existed still read (the report recognises them by `macro` and `per_session`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScoreFile {
    #[serde(default = "memorycode")]
    pub benchmark: String,
    #[serde(default)]
    pub model: String,
    /// The feedback round of `memorycode generate --feedback` the outputs are (round r's
    /// folder is `OUT/feedback/round-r/<model>`); absent for round 0 and any other folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// That round's counts from `OUT/feedback/<model>.json`, when it is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<super::feedback::RoundSummary>,
    #[serde(rename = "macro")]
    pub macro_scores: Metrics<Score>,
    pub per_session: Metrics<Vec<Score>>,
    #[serde(default)]
    pub max_length: usize,
    /// By dialogue id (numeric order; the keys are the ids as text).
    #[serde(default)]
    pub dialogues: BTreeMap<u32, DialogueRow>,
    /// The outputs folder's listing order (`os.listdir`), which decides numpy's summation
    /// order and so the last bit of the per-session means.
    #[serde(default)]
    pub listdir_order: Vec<String>,
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    #[serde(default)]
    pub by_kind: BTreeMap<String, KindRow>,
    /// Instructions chain and RAG, by name (`"instructions chain"`, `"rag"`), when the
    /// outputs have them; absent otherwise (and in files written before they were scored).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub modes: BTreeMap<String, ModeScores>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord<ShardInput, ShardTotals>>,
}

impl ScoreFile {
    /// A parsed JSON file as a score file; the message names the path of the first wrong key.
    pub fn deserialize_from(v: &serde_json::Value) -> anyhow::Result<ScoreFile> {
        serde_path_to_error::deserialize(v)
            .map_err(|e| anyhow::anyhow!("{}: {}", e.path(), e.inner()))
    }
}

fn memorycode() -> String {
    "memorycode".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_is_null_and_null_is_nan() {
        let v = serde_json::to_string(&scores(&[0.5, f64::NAN, f64::INFINITY])).unwrap();
        assert_eq!(v, "[0.5,null,null]");
        let back: Vec<Score> = serde_json::from_str("[0.25,null]").unwrap();
        assert_eq!(back[0].0, 0.25);
        assert!(back[1].0.is_nan());
    }

    #[test]
    fn the_keys_are_the_metrics_names_in_their_order() {
        let v = serde_json::to_value(Metrics::from_fn(|name| name.len())).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, METRICS);
        let back: Metrics<usize> = serde_json::from_value(v).unwrap();
        assert_eq!(back.get("long history"), Some(&"long history".len()));
    }

    #[test]
    fn a_missing_metric_is_named() {
        let e = serde_json::from_str::<ScoreFile>(
            r#"{"macro": {"short history": 1, "long history": 1, "session": 1},
                "per_session": {}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("instruction"), "{e}");
    }
}
