//! Running an editor document against a task's tests: the problems and the runner (made on
//! first use and shared with blocking tasks), and the last run of each open document, which
//! its `tests` diagnostics and its "Run tests" code lens show until the next run or close.

use super::settings::Settings;
use anyhow::{bail, Context, Result};
use pivot_exec::doc_tests::{entry_line, DocRun, Finding};
use pivot_exec::{load_problems, Problem, ProblemSource, Runner, RunnerConfig, SandboxMode};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The last test run of one document.
#[derive(Clone, Debug)]
pub struct LastRun {
    pub task: String,
    /// The task's entry point: the code lens follows its `def` as the document changes.
    pub entry_point: String,
    pub run: DocRun,
}

/// Test runs by document URI.
#[derive(Default)]
pub struct TestRuns {
    runs: HashMap<String, LastRun>,
}

/// Where the code lens goes and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Lens {
    /// 0-based document line.
    pub line: usize,
    pub task: String,
    /// "3/7 passed" after a run.
    pub summary: Option<String>,
}

impl TestRuns {
    pub fn get(&self, uri: &str) -> Option<&LastRun> {
        self.runs.get(uri)
    }

    pub fn set(&mut self, uri: &str, last: LastRun) {
        self.runs.insert(uri.to_string(), last);
    }

    /// Forget a closed document's run.
    pub fn forget(&mut self, uri: &str) -> bool {
        self.runs.remove(uri).is_some()
    }

    /// The failing tests to show for `uri`, each on a line of `text` (clamped to its end:
    /// the document may have shrunk since the run).
    pub fn failures(&self, uri: &str, text: &str) -> Vec<Finding> {
        let Some(last) = self.runs.get(uri) else {
            return Vec::new();
        };
        let last_line = text.split('\n').count().saturating_sub(1);
        last.run
            .findings
            .iter()
            .map(|f| Finding {
                line: f.line.min(last_line),
                ..f.clone()
            })
            .collect()
    }

    /// The lens of `uri`: after a run, on the entry point (or the first line when the
    /// document no longer defines it); before one, on the entry point of `default` (task,
    /// entry point), e.g. the open ConvCodeWorld task, when the document defines it.
    pub fn lens(&self, uri: &str, text: &str, default: Option<(&str, &str)>) -> Option<Lens> {
        match self.runs.get(uri) {
            Some(last) => Some(Lens {
                line: entry_line(text, &last.entry_point).unwrap_or(0),
                task: last.task.clone(),
                summary: Some(last.run.summary.clone()),
            }),
            None => {
                let (task, entry) = default?;
                Some(Lens {
                    line: entry_line(text, entry)?,
                    task: task.to_string(),
                    summary: None,
                })
            }
        }
    }
}

/// Loaded problems by (source, interpreter).
type ProblemCache = HashMap<(String, PathBuf), Arc<Vec<Problem>>>;

/// A runner with the (interpreter, timeout, sandbox) it was made for.
type MadeRunner = (PathBuf, Duration, SandboxMode, Arc<Runner>);

/// Problems and the test runner, shared by the handlers' blocking tasks.
#[derive(Default)]
pub struct Resources {
    problems: Mutex<ProblemCache>,
    /// With the (interpreter, timeout, sandbox) it was made for.
    runner: Mutex<Option<MadeRunner>>,
    /// The first refusal to start a runner (e.g. no working sandbox), until the editor was
    /// told once with `window/showMessage`; later refusals only fail their command.
    refusal: Mutex<(bool, Option<String>)>,
}

impl Resources {
    /// Task `task` of the problems in `settings`. Blocking (may start Python).
    pub fn problem(&self, settings: &Settings, task: &str) -> Result<Problem> {
        let source = &settings.problems;
        let key = (source.clone(), settings.python.clone());
        let all = {
            let mut cache = self.problems.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&key) {
                Some(p) => p.clone(),
                None => {
                    let p = Arc::new(
                        load_problems(&ProblemSource::parse(source), &settings.python)
                            .with_context(|| {
                                format!(
                                    "cannot load the problems `{source}` (setting pivot.problems)"
                                )
                            })?,
                    );
                    cache.insert(key, p.clone());
                    p
                }
            }
        };
        match all.iter().find(|p| p.task_id == task) {
            Some(p) => Ok(p.clone()),
            None => {
                let some: Vec<&str> = all.iter().take(3).map(|p| p.task_id.as_str()).collect();
                bail!(
                    "task {task} is not among the {} problems of `{source}` (setting pivot.problems; they include {})",
                    all.len(),
                    some.join(", ")
                )
            }
        }
    }

    /// A problem only if it is already loaded (never blocks on Python).
    pub fn cached_problem(&self, settings: &Settings, task: &str) -> Option<Problem> {
        let cache = self.problems.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(&(settings.problems.clone(), settings.python.clone()))?
            .iter()
            .find(|p| p.task_id == task)
            .cloned()
    }

    /// The runner for the interpreter and timeout of `settings` (one job: the editor tests
    /// one document at a time). Blocking.
    /// Fails closed like the CLI: without a working sandbox (and no `pivot.sandbox: "none"`)
    /// nothing runs and the error says why and how to fix it.
    pub fn runner(&self, settings: &Settings) -> Result<Arc<Runner>> {
        let mut slot = self.runner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((py, t, sb, r)) = slot.as_ref() {
            if *py == settings.python && *t == settings.test_timeout && *sb == settings.sandbox {
                return Ok(r.clone());
            }
        }
        let made = Runner::new(RunnerConfig {
            python: settings.python.clone(),
            timeout: settings.test_timeout,
            jobs: 1,
            sandbox: settings.sandbox,
            ..RunnerConfig::default()
        })
        .with_context(|| {
            format!(
                "cannot run tests with {} (settings pivot.python, pivot.sandbox)",
                settings.python.display()
            )
        });
        let r = match made {
            Ok(r) => Arc::new(r),
            Err(e) => {
                let mut n = self.refusal.lock().unwrap_or_else(|e| e.into_inner());
                if !n.0 {
                    *n = (true, Some(format!("{e:#}")));
                }
                return Err(e);
            }
        };
        *slot = Some((
            settings.python.clone(),
            settings.test_timeout,
            settings.sandbox,
            r.clone(),
        ));
        Ok(r)
    }

    /// The first refusal to start a runner, once: the face shows it to the user.
    pub fn take_refusal_notice(&self) -> Option<String> {
        self.refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pivot_exec::Status;

    fn finding(line: usize) -> Finding {
        Finding {
            test: "test_case_1".into(),
            line,
            message: "m".into(),
            test_line: None,
            traceback: String::new(),
            in_document: true,
        }
    }

    #[test]
    fn failures_and_lens_follow_the_document() {
        let mut t = TestRuns::default();
        let text = "import x\n\ndef f(a):\n    return a\n";
        assert_eq!(
            t.lens("u", text, Some(("T/1", "f"))),
            Some(Lens {
                line: 2,
                task: "T/1".into(),
                summary: None
            })
        );
        assert_eq!(t.lens("u", text, Some(("T/1", "g"))), None);
        assert_eq!(t.lens("u", text, None), None);
        t.set(
            "u",
            LastRun {
                task: "T/1".into(),
                entry_point: "f".into(),
                run: DocRun {
                    task_id: "T/1".into(),
                    status: Status::Fail,
                    total: 3,
                    passed: 1,
                    findings: vec![finding(3), finding(40)],
                    entry_line: Some(2),
                    summary: "1/3 passed".into(),
                },
            },
        );
        let lines: Vec<usize> = t.failures("u", text).iter().map(|f| f.line).collect();
        assert_eq!(lines, [3, 4]);
        // The def moved down two lines; the lens follows it.
        let moved = format!("# a\n# b\n{text}");
        let l = t.lens("u", &moved, None).unwrap();
        assert_eq!((l.line, l.summary.as_deref()), (4, Some("1/3 passed")));
        assert!(t.forget("u") && !t.forget("u"));
        assert!(t.failures("u", text).is_empty());
    }
}
