//! The first step of scoring a results folder: every file the score reads, found on disk in
//! the original's layout (`config.rs`), before anything is loaded. A turn-0 evaluation the
//! scores cannot do without is the one refusal here, and it names the file and the command
//! that makes it; turn files that are absent only leave their configuration incomplete,
//! which the scoring notes. Loading (`EvalFile::load`) and the numbers (`metrics.rs`) follow.

use super::config::{eval_path, Config, Layout, MAX_TURNS};
use super::conversation::models;
use anyhow::{bail, Result};
use std::path::PathBuf;

/// A model's turn-0 evaluation file, and a note when two candidates existed.
#[derive(Clone, Debug)]
pub struct Turn0 {
    pub eval: PathBuf,
    pub note: Option<String>,
}

/// One turn of one configuration: the scored model's eval file and, for ConvCodeBench, the
/// reference model's live eval file of the same turn (which may be absent: the scoring
/// says so when it needs it).
#[derive(Clone, Debug)]
pub struct TurnFile {
    pub turn: usize,
    pub eval: PathBuf,
    pub reference: Option<PathBuf>,
}

/// One configuration's turn files that exist, in turn order.
#[derive(Clone, Debug)]
pub struct ConfigFiles {
    pub config: Config,
    pub turns: Vec<TurnFile>,
}

/// Every file one score reads.
#[derive(Clone, Debug)]
pub struct Located {
    pub turn0: Turn0,
    /// ConvCodeBench: the reference model's turn 0.
    pub reference_turn0: Option<Turn0>,
    /// Live: every configuration; static: the ones ConvCodeBench reports.
    pub configs: Vec<ConfigFiles>,
}

/// Finds the files of `model`'s run (live), or of its replay against `reference` (static).
pub fn locate(layout: &Layout, model: &str, reference: Option<&str>) -> Result<Located> {
    let turn0 = find_turn0(layout, model, "model", reference.is_some())?;
    let reference_turn0 = match reference {
        Some(r) => Some(find_turn0(layout, r, "reference model", false)?),
        None => None,
    };
    let configs = match reference {
        // The original's nine always (its tables have their columns), an `_IF` one only
        // when the folder has its files.
        None => (Config::every().into_iter())
            .map(|config| ConfigFiles {
                config,
                turns: existing(
                    (1..=MAX_TURNS)
                        .map(|t| (t, eval_path(&layout.live_log(model, config, t)), None)),
                ),
            })
            .filter(|c| !c.config.instruction || !c.turns.is_empty())
            .collect(),
        Some(r) => (Config::static_reported().into_iter())
            .map(|config| ConfigFiles {
                config,
                turns: existing((1..=MAX_TURNS).map(|t| {
                    let eval = eval_path(&layout.static_log(r, model, config, t));
                    let live = eval_path(&layout.live_log(r, config, t));
                    (t, eval, Some(live))
                })),
            })
            .collect(),
    };
    Ok(Located {
        turn0,
        reference_turn0,
        configs,
    })
}

/// The turns whose scored eval file exists (a gap is skipped, as the original skips it).
fn existing(turns: impl Iterator<Item = (usize, PathBuf, Option<PathBuf>)>) -> Vec<TurnFile> {
    turns
        .filter(|(_, eval, _)| eval.exists())
        .map(|(turn, eval, reference)| TurnFile {
            turn,
            eval,
            reference,
        })
        .collect()
}

/// A model's turn-0 eval file, or an error naming it, the command that makes it and the
/// models whose turn 0 the folder does hold.
fn find_turn0(layout: &Layout, model: &str, role: &str, replayed: bool) -> Result<Turn0> {
    let (samples, note) = layout.turn0_samples_found(model);
    let eval = eval_path(&samples);
    if eval.exists() {
        return Ok(Turn0 { eval, note });
    }
    let found = models(&layout.root);
    let found = if found.is_empty() {
        "none".to_string()
    } else {
        found.join(", ")
    };
    let make = if replayed {
        format!(
            "`pivot-lsp convcode bench --model {model} ...` (or `convcode run --turns 0 --model \
             {model} ...`) makes it"
        )
    } else {
        format!("`pivot-lsp convcode run --model {model} ...` makes it")
    };
    bail!(
        "no turn-0 evaluation of {role} `{model}` in {} ({} is missing); {make}. Models found \
         there: {found}",
        layout.root.display(),
        eval.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &std::path::Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "{}").unwrap();
    }

    #[test]
    fn the_other_backends_turn0_is_found_and_gaps_in_turns_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path(), "gpt-4o");
        // `org/m` is named as a vLLM model; only an `openai` turn-0 file exists.
        let openai = dir.path().join(
            "bigcodebench/sanitized_calibrated_samples/instruct/\
             org--m--bigcodebench-instruct--openai-0-1-sanitized-calibrated_eval_results.json",
        );
        touch(&openai);
        // The samples beside it are what the folder's model list is read from.
        touch(&dir.path().join(
            "bigcodebench/sanitized_calibrated_samples/instruct/\
             org--m--bigcodebench-instruct--openai-0-1-sanitized-calibrated.jsonl",
        ));
        let config = Config::all()[0];
        for t in [1, 3] {
            touch(&eval_path(&layout.live_log("org/m", config, t)));
        }
        let found = locate(&layout, "org/m", None).unwrap();
        assert_eq!(found.turn0.eval, openai);
        let turns: Vec<usize> = found.configs[0].turns.iter().map(|t| t.turn).collect();
        assert_eq!(turns, [1, 3]);
        assert!(found.configs[1].turns.is_empty());

        // A static score needs the reference's turn 0 too, and names it.
        let e = locate(&layout, "org/m", Some("ref/r"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("reference model `ref/r`")
                && e.contains("convcode run --model ref/r")
                && e.contains("Models found there: org/m"),
            "{e}"
        );
    }
}
