//! A shard's results folder (`convcode run|bench --shard K/N --results DIR`): the marker
//! file `pivot-shard.json` at its root says which shard of which job the folder holds, so
//! `pivot-lsp merge --results` can check the shards before joining them. The marker is the
//! one file of a shard's folder that is not in the original's layout; the merge leaves it out.
//!
//! One folder may hold several commands of the same shard (the reference model's
//! `convcode run`, then a target's `convcode bench`, which replays exactly the reference's
//! tasks of that shard): each is a run entry, marked complete only when it finished.

use super::config::Config;
use crate::shard::{read_record, Shard, ShardOf};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
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
    /// Everything a merge must find equal across shards (command, models, configurations,
    /// turns, quirks, a digest of given turn-0 samples).
    pub input: Value,
    /// False from the start of the command until it finished (an interrupted run leaves it
    /// false; re-running the same command resumes and then sets it).
    pub complete: bool,
    /// Why the command stopped, when it stopped with an error (a killed run cannot say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
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
}

impl RunInput<'_> {
    pub fn to_json(&self) -> Result<Value> {
        let samples = match self.samples {
            None => Value::Null,
            Some(p) => {
                let bytes = pivot_base::bounded_read::read(p)
                    .with_context(|| format!("cannot read samples {}", p.display()))?;
                let digest = pivot_base::digest::sha256_hex(&bytes);
                json!({ "sha256": digest })
            }
        };
        let configs: Vec<String> = self.configs.iter().map(Config::code).collect();
        Ok(json!({
            "command": self.command,
            "model": self.model,
            "ref_model": self.reference,
            "simulator": self.simulator,
            "configs": configs,
            "turns": self.turns,
            "fix_quirks": self.fix_quirks,
            "samples": samples,
        }))
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
    input: &Value,
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
pub fn fail(root: &Path, input: &Value, error: &str) -> Result<()> {
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
pub fn finish(root: &Path, input: &Value) -> Result<()> {
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
    input.insert("problems".into(), json!(m.problems));
    input.insert("task_ids".into(), json!(m.task_ids));
    for r in &m.runs {
        let Some(fields) = r.input.as_object() else {
            bail!("{name}: a run in its {MARKER} is not an object");
        };
        let str_of = |k: &str| fields.get(k).and_then(Value::as_str).unwrap_or("?");
        let run = format!("{} {}", str_of("command"), str_of("model"));
        for (k, v) in fields {
            input.insert(format!("{run}: {k}"), v.clone());
        }
    }
    // And the runs whole (in a stable order), should one command have run with two settings.
    let mut runs: Vec<String> = m.runs.iter().map(|r| r.input.to_string()).collect();
    runs.sort();
    input.insert("runs".into(), json!(runs));
    let shard = Shard { k: m.k, n: m.n };
    if m.runs.is_empty() {
        bail!("{name}: shard {shard} is unfinished: no command has run in it yet; run the shard's commands with --shard {shard} --results {name}, then merge again");
    }
    if let Some(r) = m.runs.iter().find(|r| !r.complete) {
        let str_of = |k: &str| r.input.get(k).and_then(Value::as_str).unwrap_or("?");
        let run = format!("`{} --model {}`", str_of("command"), str_of("model"));
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
    let complete = true;
    let record = json!({
        "k": m.k,
        "n": m.n,
        "input": input,
        "complete": complete,
    });
    read_record(name, Some(&record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_resume_finish_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ids = vec!["a".to_string(), "b".to_string()];
        let input = json!({"command": "run"});
        let s = Shard { k: 1, n: 2 };
        begin(root, s, "p", &ids, &input).unwrap();
        let e = shard_of("d", &read(root).unwrap().unwrap()).unwrap_err();
        assert!(e.to_string().contains("unfinished"), "{e}");
        finish(root, &input).unwrap();
        assert!(shard_of("d", &read(root).unwrap().unwrap()).is_ok());
        // Resuming re-opens the entry; another command adds one.
        begin(root, s, "p", &ids, &input).unwrap();
        assert!(!read(root).unwrap().unwrap().runs[0].complete);
        begin(root, s, "p", &ids, &json!({"command": "bench"})).unwrap();
        assert_eq!(read(root).unwrap().unwrap().runs.len(), 2);
        let e = begin(root, Shard { k: 2, n: 2 }, "p", &ids, &input).unwrap_err();
        assert!(e.to_string().contains("holds shard 1/2, not 2/2"), "{e}");
        let e = begin(root, s, "p", &ids[..1], &input).unwrap_err();
        assert!(e.to_string().contains("other problems"), "{e}");
        let e = refuse_unsharded(root).unwrap_err();
        assert!(e.to_string().contains("--shard 1/2"), "{e}");
    }
}
