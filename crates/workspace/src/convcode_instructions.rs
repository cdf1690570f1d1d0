//! The instruction feedback of ConvCodeWorld's `_IF` configurations (`convcode run --pivots
//! FILE`): a turn's code checked as an agent's `check_code` checks a code string given without
//! a path (`agent::check_code_in`: the same findings, shape and order), under the pivots file
//! set up as `check` sets it up (its latest session). The refiner is told the reply's text as
//! an agent's model reads it (`agent::reply_text`), as MemoryCode's feedback rounds are.

use crate::agent::{self, check_code_in, NO_FILE};
use crate::Workspace;
use anyhow::{bail, Context, Result};
use pivot_bench::convcode::turn::Instructions;
use pivot_exec::Problem;
use std::path::Path;
use std::sync::Mutex;

/// The pivots of one file, in force for every problem of a run. A check takes a few
/// milliseconds, so the run's workers share one workspace.
pub struct PivotInstructions {
    ws: Mutex<Workspace>,
}

impl PivotInstructions {
    /// The pivots of `file` (a `pivots.toml`); refused when it cannot be read or holds no
    /// pivot, since instruction feedback would then say nothing.
    pub fn open(file: &Path) -> Result<PivotInstructions> {
        let file = file
            .canonicalize()
            .with_context(|| format!("cannot read the pivots file {}", file.display()))?;
        let mut ws = Workspace::new(file.parent().map(Path::to_path_buf));
        if let Some(e) = ws.headless_pivots(Some(&file)) {
            bail!("{e}");
        }
        ws.replay.go_to_last();
        if ws.replay.ledger().active_at(ws.replay.index()).is_empty() {
            bail!(
                "{}: holds no pivot in force; instruction feedback (_IF) would have nothing to say",
                file.display()
            );
        }
        Ok(PivotInstructions { ws: Mutex::new(ws) })
    }
}

impl Instructions for PivotInstructions {
    fn feedback(&self, _problem: &Problem, code: &str) -> Result<Option<String>, String> {
        if let Some(refused) = agent::oversized(code) {
            return Err(refused);
        }
        // A worker that panicked mid-check left no half-made state a check depends on: each
        // check opens and closes its own document.
        let mut ws = self.ws.lock().unwrap_or_else(|p| p.into_inner());
        let reply = check_code_in(&mut ws, None, NO_FILE, code.to_string(), Vec::new());
        if reply.findings.is_empty() {
            return Ok(None);
        }
        agent::reply_text(&reply)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem() -> Problem {
        serde_json::from_value(serde_json::json!({
            "task_id": "T/0", "code_prompt": "", "canonical_solution": "", "test": "",
            "entry_point": "task_func"
        }))
        .unwrap()
    }

    #[test]
    fn the_findings_of_the_code_are_the_agent_s_and_clean_code_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let toml = dir.path().join("pivots.toml");
        std::fs::write(
            &toml,
            "[[pivot]]\nid = \"f-prefix\"\n[[pivot.version]]\nsession = 0\n\
             text = \"start function names with 'f_'\"\nkind = \"function\"\nrule = \"^f_\"\n",
        )
        .unwrap();
        let i = PivotInstructions::open(&toml).unwrap();
        let text = i.feedback(&problem(), "def task_func():\n    return 1\n");
        let text = text.unwrap().expect("a finding");
        assert!(
            text.contains("f-prefix") && text.contains("task_func"),
            "{text}"
        );
        assert_eq!(
            i.feedback(&problem(), "def f_task():\n    return 1\n"),
            Ok(None)
        );
    }

    #[test]
    fn a_file_without_pivots_or_unreadable_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let toml = dir.path().join("pivots.toml");
        std::fs::write(&toml, "").unwrap();
        let e = PivotInstructions::open(&toml).err().unwrap().to_string();
        assert!(e.contains("holds no pivot"), "{e}");
        std::fs::write(&toml, "[[pivot]\n").unwrap();
        assert!(PivotInstructions::open(&toml).is_err());
        assert!(PivotInstructions::open(&dir.path().join("missing.toml")).is_err());
    }
}
