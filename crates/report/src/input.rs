//! Reading score files: the JSON printed by `pivot-lsp score memorycode|convcode --format json`.
//! Every problem is reported with the file's name; nothing is guessed from a file that is
//! not a score file.

use serde_json::Value;

/// One input as given: its name (shown in the provenance) and its bytes, unchanged.
#[derive(Clone, Debug)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A score file, parsed: the raw JSON (embedded unchanged in the page) and its typed view.
#[derive(Clone, Debug)]
pub struct ScoreFile {
    pub name: String,
    pub sha256: String,
    pub raw: Value,
    pub score: Score,
}

#[derive(Clone, Debug)]
pub enum Score {
    /// The file `score memorycode` writes, read with its writer's type.
    Memorycode(Box<pivot_bench::memorycode::score_file::ScoreFile>),
    Convcode(Box<Convcode>),
}

/// The four MemoryCode scores, as the score file names them.
pub const MC_METRICS: [&str; 4] = pivot_bench::memorycode::score_file::METRICS;

/// The file `score convcode` writes, read with its writer's type.
pub type Convcode = pivot_bench::convcode::Scores;

/// A ConvCodeWorld configuration's column, as the score file holds it.
pub type Column = pivot_bench::convcode::score_file::Column;

/// Configurations that have at least one Pass@1 value (the others were not run).
pub fn present(c: &Convcode) -> impl Iterator<Item = &Column> {
    c.columns
        .iter()
        .filter(|c| c.pass_at_1.iter().any(Option::is_some))
}

/// Whether the scores are a static replay's (ConvCodeBench).
pub fn is_static(c: &Convcode) -> bool {
    c.mode == pivot_bench::convcode::Mode::Static
}

impl ScoreFile {
    /// The model's name: from the file, else the file's name without `.json`.
    pub fn model(&self) -> String {
        match &self.score {
            Score::Memorycode(m) => Some(m.model.clone()).filter(|m| !m.is_empty()),
            Score::Convcode(c) => Some(c.model.clone()),
        }
        .unwrap_or_else(|| {
            self.name
                .strip_suffix(".json")
                .unwrap_or(&self.name)
                .to_string()
        })
    }

    /// `(k, n)` when the file is shard k of n of a sharded run (its `"shard"` key), whose
    /// scores cover only that shard.
    pub fn shard(&self) -> Option<(u64, u64)> {
        match &self.score {
            Score::Convcode(c) => c.shard.map(|s| (s.k as u64, s.n as u64)),
            Score::Memorycode(m) => m.shard.as_ref().map(|s| (s.k as u64, s.n as u64)),
        }
    }

    pub fn benchmark(&self) -> &'static str {
        match &self.score {
            Score::Memorycode(_) => "memorycode",
            Score::Convcode(c) => c.benchmark.name(),
        }
    }
}

const EXPECTED: &str =
    "expected the JSON object printed by `pivot-lsp score memorycode --format json` \
or `pivot-lsp score convcode --format json`";

/// Parse one input; the error (without the file name, which the caller adds) says what is wrong.
pub fn parse(input: &Input) -> Result<ScoreFile, String> {
    if input.bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("the file is empty; {EXPECTED}"));
    }
    let raw: Value = serde_json::from_slice(&input.bytes).map_err(|e| {
        if e.is_eof() {
            format!("the JSON ends early (truncated file?): {e}")
        } else {
            format!("not valid JSON: {e}")
        }
    })?;
    let obj = match &raw {
        Value::Object(o) => o,
        Value::Array(a) if a.is_empty() => return Err(format!("an empty JSON list; {EXPECTED}")),
        Value::Array(_) => return Err(format!("a JSON list, not a score object; {EXPECTED}")),
        other => {
            return Err(format!(
                "a JSON {}, not a score object; {EXPECTED}",
                kind(other)
            ))
        }
    };
    let benchmark = match obj.get("benchmark") {
        Some(Value::String(b)) => b.as_str(),
        Some(other) => return Err(format!("\"benchmark\" must be a string, got {other}")),
        // Files written before "benchmark" existed: recognised by their keys.
        None if obj.contains_key("macro") && obj.contains_key("per_session") => "memorycode",
        None if obj.contains_key("columns") && obj.contains_key("mode") => {
            return Err(
                "a ConvCodeWorld score file written before score files said their \
                \"benchmark\": score the results folder again (`pivot-lsp score convcode \
                --format json`) to write one this version reads"
                    .to_string(),
            )
        }
        None => {
            return Err(format!(
                "not a score file (no \"benchmark\", \"macro\" or \"columns\" key); {EXPECTED}"
            ))
        }
    };
    let score = match benchmark {
        // A missing metric is named with its path (`macro: missing field ...`).
        "memorycode" => Score::Memorycode(Box::new(pivot_bench::score_json::typed(&raw)?)),
        "convcodeworld" | "convcodebench" => {
            Score::Convcode(Box::new(pivot_bench::convcode::score_file::parse(&raw)?))
        }
        other => {
            return Err(format!(
                "unknown \"benchmark\" {other:?} (known: memorycode, convcodeworld, convcodebench)"
            ))
        }
    };
    Ok(ScoreFile {
        name: input.name.clone(),
        sha256: sha256_hex(&input.bytes),
        raw,
        score,
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

pub use pivot_base::digest::sha256_hex;

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> Input {
        Input {
            name: "x.json".into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn refuses_what_is_not_a_score_file() {
        let err = |t: &str| parse(&input(t)).unwrap_err();
        assert!(err("").contains("empty"));
        assert!(err("[]").contains("empty JSON list"));
        assert!(err(r#"{"macro": {"#).contains("truncated"));
        assert!(err(r#"{"a": 1}"#).contains("not a score file"));
        assert!(
            err(r#"{"benchmark": "memorycode", "macro": {}, "per_session": {}}"#)
                .contains("short history")
        );
        assert!(err(r#"{"benchmark": "other"}"#).contains("unknown"));
        // A ConvCodeWorld file from before "benchmark": named as such, with the remedy.
        assert!(
            err(r#"{"mode": "live", "columns": []}"#).contains("score the results folder again")
        );
        let e = err(
            r#"{"benchmark": "convcodeworld", "mode": "live", "model": "m", "turns": [0], "columns": [{"config": "CF"}]}"#,
        );
        assert!(e.contains("columns[0]"), "{e}");
    }

    #[test]
    fn old_files_are_recognised_by_their_keys() {
        let mut per = String::new();
        for m in MC_METRICS {
            per.push_str(&format!("\"{m}\": [0.5, null],"));
        }
        let text = format!(
            r#"{{"macro": {{"short history": 1, "long history": null, "session": 0.5, "instruction": 0}}, "per_session": {{{}}}}}"#,
            per.trim_end_matches(',')
        );
        let f = parse(&input(&text)).unwrap();
        assert_eq!(f.benchmark(), "memorycode");
        assert_eq!(f.model(), "x");
    }
}
