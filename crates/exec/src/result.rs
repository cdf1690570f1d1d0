//! Evaluation results in BigCodeBench's `*_eval_results.json` shape:
//! `{"date", "eval": {task_id: [{task_id, solution, status, details}]}}`, plus our summary.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{Context, Result};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Outcome of one solution. `Pass` only when every test ran and passed. `Tampered`: the
/// code also passed the problem's impossible twin, which no correct solution passes (the
/// evidence is in `EvalResult::tamper`); it never counts as passed, and BigCodeBench's and
/// ConvCodeWorld's tables count it as a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    #[default]
    Fail,
    Timeout,
    Tampered,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Timeout => "timeout",
            Status::Tampered => "tampered",
        })
    }
}

/// Failing tests in unittest's order (failures, then errors): test method name -> traceback.
/// A module-level crash is the single key `ALL` with `str(exc)`.
/// Serialised as a JSON object whose key order is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details(pub Vec<(String, String)>);

impl Details {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
    /// Inserts or replaces, keeping the first position (like a Python dict).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }
}

impl Serialize for Details {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Details;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of test name -> traceback")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Details, A::Error> {
                let mut out = Details::default();
                while let Some((k, v)) = a.next_entry::<String, serde_json::Value>()? {
                    // Files written by other tools may hold non-strings; keep their JSON text.
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    };
                    out.insert(k, v);
                }
                Ok(out)
            }
            // BigCodeBench writes `null`/`[]` details in some versions; treat as empty.
            fn visit_unit<E>(self) -> std::result::Result<Details, E> {
                Ok(Details::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Details, A::Error> {
                while a.next_element::<serde_json::Value>()?.is_some() {}
                Ok(Details::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// How a passing sample was checked against its problem's impossible twin
/// (`exec::twin`): serialised as the twin's kind, `"unavailable"` or `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TamperCheck {
    /// An expected value changed.
    Value,
    /// An assertion turned into its opposite.
    Inverted,
    /// The entry point replaced by one that raises (catches what acts at import).
    Raise,
    /// No twin the canonical solution fails could be made for the problem.
    Unavailable,
    /// The check was turned off (`--no-tamper-check`).
    Off,
}

impl TamperCheck {
    /// Not written to results files: no check, or a twin that was run.
    pub fn is_quiet(check: &Option<TamperCheck>) -> bool {
        !matches!(check, Some(TamperCheck::Unavailable | TamperCheck::Off))
    }
}

/// How the passing samples of a run were checked against their problems' twins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TwinCoverage {
    pub value: usize,
    pub inverted: usize,
    pub raise: usize,
    pub unavailable: usize,
    pub off: usize,
}

impl TwinCoverage {
    pub fn of(results: &[EvalResult]) -> TwinCoverage {
        let mut c = TwinCoverage::default();
        for r in results {
            match r.tamper_check {
                Some(TamperCheck::Value) => c.value += 1,
                Some(TamperCheck::Inverted) => c.inverted += 1,
                Some(TamperCheck::Raise) => c.raise += 1,
                Some(TamperCheck::Unavailable) => c.unavailable += 1,
                Some(TamperCheck::Off) => c.off += 1,
                None => {}
            }
        }
        c
    }
}

impl fmt::Display for TwinCoverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let checked = self.value + self.inverted + self.raise + self.unavailable;
        if self.off > 0 && checked == 0 {
            return write!(f, "twin check off ({} passing samples)", self.off);
        }
        write!(
            f,
            "twin check of {checked} passing samples: {} value twin, {} inverted, {} entry point raising, {} unavailable",
            self.value, self.inverted, self.raise, self.unavailable
        )
    }
}

/// One evaluated solution, as BigCodeBench stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    pub task_id: String,
    pub solution: String,
    pub status: Status,
    #[serde(default)]
    pub details: Details,
    /// Why a `tampered` solution is: what it passed in the impossible twin, one sentence
    /// each (absent otherwise, so files of honest runs keep BigCodeBench's shape).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tamper: Vec<String>,
    /// For a sample that passed its tests: how it was checked against the twin. Written
    /// only when it says something a reader must know (`unavailable`, `off`), so that a
    /// checked pass keeps BigCodeBench's shape.
    #[serde(default, skip_serializing_if = "TamperCheck::is_quiet")]
    pub tamper_check: Option<TamperCheck>,
    /// Captured stdout/stderr of the run (capped); not part of BigCodeBench's shape.
    #[serde(skip)]
    pub output: String,
}

impl EvalResult {
    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }
}

/// Counts over one results file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub timeout: usize,
    /// Solutions that tampered with the harness or the tests (counted as failures by pass@1).
    #[serde(default)]
    pub tampered: usize,
    /// Fraction of tasks whose first sample passed (BigCodeBench's pass@1 with one sample).
    pub pass_at_1: f64,
    /// "bwrap" or "none": how the code was contained.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sandbox: String,
    /// Set when only some problems were scored (`exec --subset`): how many there are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset_of: Option<usize>,
}

/// A whole `*_eval_results.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EvalResults {
    #[serde(default)]
    pub date: String,
    pub eval: BTreeMap<String, Vec<EvalResult>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

impl EvalResults {
    /// Groups results by task (keys sorted by numeric id, like BigCodeBench) and adds a summary.
    pub fn from_results(results: Vec<EvalResult>, date: String, sandbox: &str) -> Self {
        let mut eval: BTreeMap<String, Vec<EvalResult>> = BTreeMap::new();
        for r in results {
            eval.entry(r.task_id.clone()).or_default().push(r);
        }
        let mut out = EvalResults {
            date,
            eval,
            summary: None,
        };
        let mut summary = out.summarize();
        summary.sandbox = sandbox.to_string();
        out.summary = Some(summary);
        out
    }

    /// Task ids in numeric order ("HumanEval/2" before "HumanEval/10").
    pub fn task_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.eval.keys().map(String::as_str).collect();
        ids.sort_by_key(|a| task_sort_key(a));
        ids
    }

    pub fn summarize(&self) -> Summary {
        let mut s = Summary::default();
        for rs in self.eval.values() {
            let Some(first) = rs.first() else { continue };
            s.total += 1;
            match first.status {
                Status::Pass => s.pass += 1,
                Status::Fail => s.fail += 1,
                Status::Timeout => s.timeout += 1,
                Status::Tampered => s.tampered += 1,
            }
        }
        s.pass_at_1 = if s.total == 0 {
            0.0
        } else {
            s.pass as f64 / s.total as f64
        };
        s
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text = pivot_base::bounded_read::read_to_string(path)
            .with_context(|| format!("reading eval results {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a BigCodeBench eval-results file", path.display()))
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        pivot_base::durable::write_atomic(path, text.as_bytes())
    }
}

/// Sort key for ids like "BigCodeBench/12": (prefix, number), non-numeric ids last by text.
pub fn task_sort_key(id: &str) -> (String, u64, String) {
    match id.rsplit_once('/') {
        Some((prefix, n)) => match n.parse::<u64>() {
            Ok(n) => (prefix.to_string(), n, String::new()),
            Err(_) => (prefix.to_string(), u64::MAX, n.to_string()),
        },
        None => (String::new(), u64::MAX, id.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_keep_order_and_read_bigcodebench_files() {
        let text = r#"{"date":"x","eval":{"T/1":[{"task_id":"T/1","solution":"s","status":"fail",
            "details":{"test_b":"tb","test_a":"ta"}}],"T/0":[{"task_id":"T/0","solution":"s",
            "status":"pass","details":{}}]}}"#;
        let r: EvalResults = serde_json::from_str(text).unwrap();
        let keys: Vec<&str> = r.eval["T/1"][0].details.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["test_b", "test_a"]);
        let again = serde_json::to_string(&r.eval["T/1"][0]).unwrap();
        assert!(again.find("test_b").unwrap() < again.find("test_a").unwrap());
        let s = r.summarize();
        assert_eq!((s.total, s.pass, s.fail), (2, 1, 1));
        assert_eq!(r.task_ids(), ["T/0", "T/1"]);
    }

    #[test]
    fn numeric_task_order() {
        let mut ids = vec!["H/10", "H/2", "H/1"];
        ids.sort_by_key(|a| task_sort_key(a));
        assert_eq!(ids, ["H/1", "H/2", "H/10"]);
    }
}
