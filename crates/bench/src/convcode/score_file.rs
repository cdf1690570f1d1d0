//! The ConvCodeWorld / ConvCodeBench score file: [`Scores`] as JSON, with `"benchmark"`
//! first and `"shard"` last when the folder is a shard's. The CLI (`score convcode --format
//! json`, `--report`), the editor (`pivot.evaluate.convcode`) and the HTML report
//! (`pivot-report`) all write or read this one type, so a renamed field is a compile error
//! in every one of them rather than a silent `null`.

use anyhow::Result;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Live (ConvCodeWorld) or static (ConvCodeBench against a reference model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Live,
    Static,
}

/// One column of Table 1 (and, when scored, of Table 2).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    pub config: String,
    pub label: String,
    /// All eval files were there, so the numbers are computed from the run itself.
    pub complete: bool,
    /// One value per row of Table 1 (`None` prints as a blank cell).
    pub pass_at_1: Vec<Option<f64>>,
    /// `None`: the configuration is left out of Table 2.
    pub mrr: Option<f64>,
    pub recall: Option<f64>,
}

/// Both tables' numbers plus what the reader should know about the inputs: the score file
/// itself (`score convcode --format json`, the editor's `pivot.evaluate.convcode`, what
/// `report` reads), one type for its writers and its reader (this module).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Scores {
    /// First in the file, so a reader knows the format before it reads the rest; always
    /// the one `mode` implies (a file where it is not is refused).
    pub benchmark: Benchmark,
    pub mode: Mode,
    pub model: String,
    pub reference: Option<String>,
    /// Table 1 row labels (turns).
    pub turns: Vec<usize>,
    pub columns: Vec<Column>,
    /// Tasks left out of MRR and Recall by `exclude_init_solved`.
    pub excluded_tasks: Vec<String>,
    /// Non-fatal findings (unreadable files, dropped configurations, unneeded missing files).
    pub notes: Vec<String>,
    /// ConvCodeBench only: the turn-0 Pass@1 its Table 1 leaves out (the original prints
    /// turns 1-10), for the report's turn-0 point; absent from live scores, whose turn 0 is
    /// Table 1's first row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn0: Option<StaticTurn0>,
    /// The results folder is shard k of n (its `pivot-shard.json`): these scores cover only
    /// that shard's tasks, and `notes` says how to get the whole run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardPart>,
}

/// A static replay's turn 0, as percentages rounded as Table 1's cells are.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct StaticTurn0 {
    /// The reference model's turn 0: the code every replayed conversation starts from, so
    /// the static Pass@1 formula (s_t or r_0) at t = 0.
    pub reference_pass_at_1: f64,
    /// The target model's own turn 0 (which MRR and Recall count at rank 0).
    pub model_pass_at_1: f64,
}

/// The score file's `"benchmark"`: which of the two benchmarks the numbers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Benchmark {
    Convcodeworld,
    Convcodebench,
}

impl Benchmark {
    /// Live runs are ConvCodeWorld's, static replays ConvCodeBench's.
    pub fn of(mode: Mode) -> Benchmark {
        match mode {
            Mode::Live => Benchmark::Convcodeworld,
            Mode::Static => Benchmark::Convcodebench,
        }
    }

    /// The name as the file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Convcodeworld => "convcodeworld",
            Benchmark::Convcodebench => "convcodebench",
        }
    }
}

/// The score file's `"shard"`: the scored folder is shard `k` of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardPart {
    pub k: usize,
    pub n: usize,
}

/// Marks `scores` as a shard's when `root` is a shard's results folder, with a note that
/// says how to score the whole run: a shard's folder holds only its tasks, so its scores
/// are not the benchmark's.
pub fn mark_shard(scores: &mut Scores, root: &Path) -> Result<()> {
    if let Some(m) = super::shard_dir::read(root)? {
        scores.notes.push(format!(
            "{} holds shard {} of {}: these scores cover only its tasks; `pivot-lsp merge --results OUT DIR...` joins the shards' folders, and scoring OUT gives the whole run's",
            root.display(),
            m.k,
            m.n
        ));
        scores.shard = Some(ShardPart { k: m.k, n: m.n });
    }
    Ok(())
}

/// The file's JSON, pretty-printed as `score convcode --format json` prints it.
pub fn to_json(scores: &Scores) -> Result<serde_json::Value> {
    Ok(serde_json::to_value(scores)?)
}

/// The name `--report DIR` gives the file: `<benchmark>-<model>.json`.
pub fn file_name(scores: &Scores) -> String {
    format!(
        "{}-{}.json",
        scores.benchmark.name(),
        scores.model.replace('/', "_")
    )
}

/// Reads a score file; the error says what is wrong (with the JSON path of the first
/// problem) but not which file, which the caller knows.
pub fn parse(raw: &serde_json::Value) -> Result<Scores, String> {
    let s: Scores = crate::score_json::typed(raw)?;
    if s.benchmark != Benchmark::of(s.mode) {
        return Err(format!(
            "\"benchmark\" is {:?} but \"mode\" is {:?}",
            s.benchmark.name(),
            match s.mode {
                Mode::Live => "live",
                Mode::Static => "static",
            }
        ));
    }
    for col in &s.columns {
        if col.pass_at_1.len() != s.turns.len() {
            return Err(format!(
                "configuration {}: {} Pass@1 values for {} turns",
                col.config,
                col.pass_at_1.len(),
                s.turns.len()
            ));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(mode: Mode) -> Scores {
        Scores {
            benchmark: Benchmark::of(mode),
            mode,
            model: "org/m".into(),
            reference: (mode == Mode::Static).then(|| "ref".into()),
            turns: vec![1, 2],
            columns: vec![Column {
                config: "CF".into(),
                label: "w/ CF".into(),
                complete: true,
                pass_at_1: vec![Some(12.5), None],
                mrr: Some(0.1),
                recall: None,
            }],
            excluded_tasks: vec![],
            notes: vec!["a note".into()],
            turn0: (mode == Mode::Static).then_some(StaticTurn0 {
                reference_pass_at_1: 1.0,
                model_pass_at_1: 2.0,
            }),
            shard: Some(ShardPart { k: 2, n: 3 }),
        }
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        for mode in [Mode::Live, Mode::Static] {
            let s = scores(mode);
            let json = to_json(&s).unwrap();
            let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
            assert_eq!(keys.first().map(String::as_str), Some("benchmark"));
            assert_eq!(keys.last().map(String::as_str), Some("shard"));
            let back = parse(&json).unwrap();
            assert_eq!(to_json(&back).unwrap(), json);
        }
        assert_eq!(file_name(&scores(Mode::Live)), "convcodeworld-org_m.json");
    }

    #[test]
    fn a_file_the_writer_would_not_write_is_refused() {
        let json = to_json(&scores(Mode::Live)).unwrap();
        let with = |key: &str, v: serde_json::Value| {
            let mut j = json.clone();
            j[key] = v;
            parse(&j).unwrap_err()
        };
        assert!(with("benchmark", "convcodebench".into()).contains("\"mode\" is \"live\""));
        assert!(with("mode", "sideways".into()).contains("at mode"));
        assert!(with("turns", serde_json::json!([1])).contains("2 Pass@1 values for 1 turns"));
        let mut no_notes = json.clone();
        no_notes.as_object_mut().unwrap().remove("notes");
        assert!(parse(&no_notes).unwrap_err().contains("notes"));
        let mut bad_col = json.clone();
        bad_col["columns"][0]
            .as_object_mut()
            .unwrap()
            .remove("label");
        assert!(parse(&bad_col).unwrap_err().contains("columns[0]"));
    }
}
