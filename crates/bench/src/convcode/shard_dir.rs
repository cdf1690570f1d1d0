//! A shard's results folder (`convcode run|bench --shard K/N --results DIR`): the marker
//! file `pivot-shard.json` at its root says which shard of which job the folder holds, so
//! `pivot-lsp merge --results` can check the shards before joining them. The marker is the
//! one file of a shard's folder that is not in the original's layout; the merge leaves it out.
//!
//! One folder may hold several commands of the same shard (the reference model's
//! `convcode run`, then a target's `convcode bench`, which replays exactly the reference's
//! tasks of that shard): each is a run entry, marked complete only when it finished.

use super::config::Config;
use crate::shard::{Shard, ShardOf};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The marker's file name, at the root of a shard's results folder.
pub const MARKER: &str = "pivot-shard.json";

/// The marker's content.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Marker {
    pub k: usize,
    pub n: usize,
    /// The whole job's problems: where they come from, and their ids in problem order
    /// (after `--limit`, before sharding). Merging orders records by them.
    pub problems: String,
    pub task_ids: Vec<String>,
    /// The commands run into this folder, in the order they were first started.
    pub runs: Vec<RunEntry>,
}

/// One command run into the folder.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunEntry {
    /// Everything a merge must find equal across shards.
    pub input: RunSettings,
    /// False from the start of the command until it finished (an interrupted run leaves it
    /// false; re-running the same command resumes and then sets it).
    pub complete: bool,
    /// Why the command stopped, when it stopped with an error (a killed run cannot say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// What identifies one command's run, as the marker records it: command, models,
/// configurations, turns, quirks and digests of given turn-0 samples and pivots file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunSettings {
    pub command: String,
    pub model: String,
    pub ref_model: Option<String>,
    pub simulator: String,
    /// The configurations' codes (`Config::code`).
    pub configs: Vec<String>,
    pub turns: usize,
    pub fix_quirks: bool,
    pub samples: Option<SamplesDigest>,
    /// `_IF` configurations: the pivots file given with `--pivots` (digested, as the samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pivots: Option<SamplesDigest>,
}

/// A file given as input (`--samples`, `--pivots`): its content is the input, not its path.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SamplesDigest {
    pub sha256: String,
}

/// What identifies one command's run: built by the caller from its options.
pub struct RunInput<'a> {
    pub command: &'a str,
    pub model: &'a str,
    pub reference: Option<&'a str>,
    pub simulator: &'a str,
    pub configs: &'a [Config],
    pub turns: usize,
    pub fix_quirks: bool,
    /// Turn-0 samples given with `--samples` (digested: their content is the input).
    pub samples: Option<&'a Path>,
    /// The pivots file of `_IF` configurations (digested).
    pub pivots: Option<&'a Path>,
}

impl RunInput<'_> {
    /// The settings the marker records (reads and digests the samples file).
    pub fn settings(&self) -> Result<RunSettings> {
        let digest = |file: Option<&Path>, what: &str| -> Result<Option<SamplesDigest>> {
            let Some(p) = file else { return Ok(None) };
            let bytes = pivot_base::bounded_read::read(p)
                .with_context(|| format!("cannot read {what} {}", p.display()))?;
            Ok(Some(SamplesDigest {
                sha256: pivot_base::digest::sha256_hex(&bytes),
            }))
        };
        let samples = digest(self.samples, "samples")?;
        let pivots = digest(self.pivots, "the pivots file")?;
        Ok(RunSettings {
            command: self.command.into(),
            model: self.model.into(),
            ref_model: self.reference.map(str::to_string),
            simulator: self.simulator.into(),
            configs: self.configs.iter().map(Config::code).collect(),
            turns: self.turns,
            fix_quirks: self.fix_quirks,
            samples,
            pivots,
        })
    }
}

/// Reads a folder's marker; `Ok(None)` when it has none.
pub fn read(root: &Path) -> Result<Option<Marker>> {
    let path = root.join(MARKER);
    let text = match pivot_base::bounded_read::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let m: Marker = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a shard marker (remove it only if the folder is not a shard's)",
            path.display()
        )
    })?;
    Ok(Some(m))
}

fn write(root: &Path, m: &Marker) -> Result<()> {
    let mut text = serde_json::to_string_pretty(m)?;
    text.push('\n');
    pivot_base::durable::write_atomic(&root.join(MARKER), text.as_bytes())
}

/// Before a sharded command: records (or re-opens, when resuming) its run entry as
/// unfinished. Refuses a folder that holds another shard or another job's problems.
pub fn begin(
    root: &Path,
    shard: Shard,
    problems: &str,
    task_ids: &[String],
    input: &RunSettings,
) -> Result<()> {
    let mut m = match read(root)? {
        Some(m) => {
            let this = Shard { k: m.k, n: m.n };
            if this != shard {
                bail!(
                    "{} holds shard {this}, not {shard}: give each shard its own --results folder",
                    root.display()
                );
            }
            if m.problems != problems || m.task_ids != task_ids {
                bail!(
                    "{} holds shard {this} of other problems ({}, {} tasks; now {problems}, {} tasks): \
                     every command of a sharded job needs the same --problems and --limit",
                    root.display(),
                    m.problems,
                    m.task_ids.len(),
                    task_ids.len()
                );
            }
            m
        }
        None => Marker {
            k: shard.k,
            n: shard.n,
            problems: problems.to_string(),
            task_ids: task_ids.to_vec(),
            runs: Vec::new(),
        },
    };
    match m.runs.iter_mut().find(|r| r.input == *input) {
        Some(r) => {
            r.complete = false;
            r.failed = None;
        }
        None => m.runs.push(RunEntry {
            input: input.clone(),
            complete: false,
            failed: None,
        }),
    }
    write(root, &m)
}

/// After a sharded command stopped with an error: its run entry says why, for `merge`.
pub fn fail(root: &Path, input: &RunSettings, error: &str) -> Result<()> {
    let Some(mut m) = read(root)? else {
        return Ok(());
    };
    for r in m.runs.iter_mut().filter(|r| r.input == *input) {
        r.complete = false;
        r.failed = Some(error.to_string());
    }
    write(root, &m)
}

/// After a sharded command finished: its run entry is complete.
pub fn finish(root: &Path, input: &RunSettings) -> Result<()> {
    let Some(mut m) = read(root)? else {
        bail!(
            "{}: the shard marker disappeared during the run",
            root.display()
        );
    };
    for r in m.runs.iter_mut().filter(|r| r.input == *input) {
        r.complete = true;
    }
    write(root, &m)
}

/// An unsharded command refuses a shard's folder (its files are one shard's part).
pub fn refuse_unsharded(root: &Path) -> Result<()> {
    if let Some(m) = read(root)? {
        bail!(
            "{} holds shard {}/{} of a sharded job ({MARKER}): run with --shard {}/{} to resume it, \
             or join the shards with `pivot-lsp merge --results OUT DIR...`",
            root.display(),
            m.k,
            m.n,
            m.k,
            m.n
        );
    }
    Ok(())
}

/// The shard record of a folder for `bench::shard::check_set`: the input is the problems
/// and every run's settings, one key per setting (`"convcode run demo/ref: configs"`), so a
/// refusal names the setting that differs; complete when every run is.
pub fn shard_of(name: &str, m: &Marker) -> Result<ShardOf> {
    let mut input = serde_json::Map::new();
    input.insert("problems".into(), Value::from(m.problems.as_str()));
    input.insert("task_ids".into(), Value::from(m.task_ids.clone()));
    let mut runs = Vec::new();
    for r in &m.runs {
        let run = format!("{} {}", r.input.command, r.input.model);
        let Value::Object(fields) = serde_json::to_value(&r.input)? else {
            unreachable!("run settings serialize as an object");
        };
        // And the runs whole (in a stable order), should one command have run with two
        // settings.
        runs.push(Value::Object(fields.clone()).to_string());
        for (k, v) in fields {
            input.insert(format!("{run}: {k}"), v);
        }
    }
    runs.sort();
    input.insert("runs".into(), Value::from(runs));
    let shard = Shard { k: m.k, n: m.n };
    if m.runs.is_empty() {
        bail!("{name}: shard {shard} is unfinished: no command has run in it yet; run the shard's commands with --shard {shard} --results {name}, then merge again");
    }
    if let Some(r) = m.runs.iter().find(|r| !r.complete) {
        let run = format!("`{} --model {}`", r.input.command, r.input.model);
        match &r.failed {
            Some(why) => bail!(
                "{name}: shard {shard} is unfinished: {run} failed: {why}\n    \
                 fix that, run the same command again with --shard {shard} --results {name} \
                 (it resumes where it stopped), then merge again"
            ),
            None => bail!(
                "{name}: shard {shard} is unfinished: {run} started but did not finish (it was \
                 killed, timed out, or is still running)\n    run the same command again with \
                 --shard {shard} --results {name} (it resumes where it stopped), then merge again"
            ),
        }
    }
    shard.record::<_, ()>(input, true).checked(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(command: &str) -> RunSettings {
        RunSettings {
            command: command.into(),
            model: "m".into(),
            ref_model: None,
            simulator: "s".into(),
            configs: Vec::new(),
            turns: 1,
            fix_quirks: false,
            samples: None,
            pivots: None,
        }
    }

    #[test]
    fn begin_resume_finish_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ids = vec!["a".to_string(), "b".to_string()];
        let input = settings("run");
        let s = Shard { k: 1, n: 2 };
        begin(root, s, "p", &ids, &input).unwrap();
        let e = shard_of("d", &read(root).unwrap().unwrap()).unwrap_err();
        assert!(e.to_string().contains("unfinished"), "{e}");
        finish(root, &input).unwrap();
        assert!(shard_of("d", &read(root).unwrap().unwrap()).is_ok());
        // Resuming re-opens the entry; another command adds one.
        begin(root, s, "p", &ids, &input).unwrap();
        assert!(!read(root).unwrap().unwrap().runs[0].complete);
        begin(root, s, "p", &ids, &settings("bench")).unwrap();
        assert_eq!(read(root).unwrap().unwrap().runs.len(), 2);
        let e = begin(root, Shard { k: 2, n: 2 }, "p", &ids, &input).unwrap_err();
        assert!(e.to_string().contains("holds shard 1/2, not 2/2"), "{e}");
        let e = begin(root, s, "p", &ids[..1], &input).unwrap_err();
        assert!(e.to_string().contains("other problems"), "{e}");
        let e = refuse_unsharded(root).unwrap_err();
        assert!(e.to_string().contains("--shard 1/2"), "{e}");
    }
}
