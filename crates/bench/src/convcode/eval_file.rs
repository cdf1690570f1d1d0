//! Reading BigCodeBench-shaped evaluation results: `{"eval": {task_id: [{status, solution, ...}]}}`.

use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One turn's statuses, keys sorted by the numeric part of the task id (as the original does).
#[derive(Clone, Debug)]
pub struct EvalFile {
    pub path: PathBuf,
    keys: Vec<String>,
    entries: HashMap<String, Entry>,
}

#[derive(Clone, Debug)]
struct Entry {
    pass: bool,
    solution: Option<String>,
}

/// Sort key of a task id: the number after the last `/` (then the text, for ids without one).
pub fn task_sort_key(id: &str) -> (u64, String) {
    let n = id
        .rsplit('/')
        .next()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    (n, id.to_string())
}

impl EvalFile {
    pub fn load(path: &Path) -> Result<EvalFile> {
        let text = pivot_base::bounded_read::read_to_string(path)
            .with_context(|| format!("cannot read evaluation results {}", path.display()))?;
        let v: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?;
        Self::from_value(path, &v)
    }

    pub fn from_value(path: &Path, v: &Value) -> Result<EvalFile> {
        let Some(eval) = v.get("eval").and_then(Value::as_object) else {
            bail!(
                "{}: no \"eval\" object (expected BigCodeBench's eval-results shape)",
                path.display()
            );
        };
        let mut entries = HashMap::new();
        for (task, runs) in eval {
            let first = runs.as_array().and_then(|a| a.first()).with_context(|| {
                format!("{}: task {task} has no evaluation entry", path.display())
            })?;
            let status = first
                .get("status")
                .and_then(Value::as_str)
                .with_context(|| format!("{}: task {task} has no \"status\"", path.display()))?;
            let solution = first
                .get("solution")
                .and_then(Value::as_str)
                .map(str::to_string);
            entries.insert(
                task.clone(),
                Entry {
                    pass: status == "pass",
                    solution,
                },
            );
        }
        if entries.is_empty() {
            bail!("{}: \"eval\" is empty", path.display());
        }
        let mut keys: Vec<String> = entries.keys().cloned().collect();
        keys.sort_by_key(|k| task_sort_key(k));
        Ok(EvalFile {
            path: path.to_path_buf(),
            keys,
            entries,
        })
    }

    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether `task` passed; an error names the file when the task is absent.
    pub fn passed(&self, task: &str) -> Result<bool> {
        match self.entries.get(task) {
            Some(e) => Ok(e.pass),
            None => bail!("task {task} is missing from {}", self.path.display()),
        }
    }

    pub fn solution(&self, task: &str) -> Option<&str> {
        self.entries.get(task).and_then(|e| e.solution.as_deref())
    }
}
