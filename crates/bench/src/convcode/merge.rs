//! `pivot-lsp merge --results OUT DIR...`: the results folders of `convcode run|bench
//! --shard K/N` joined into the tree one unsharded run writes, file for file.
//!
//! - A file that every shard holding it holds byte for byte the same (turn-0 samples given
//!   with `--samples`, a reference run copied into each shard's folder) is copied.
//! - Per-turn logs (`.jsonl`) get every shard's records in the unsharded run's order: the
//!   original's visiting order (`order.rs`) of the whole job's tasks for turn logs, problem
//!   order for the turn-0 files under `bigcodebench/`. The original's `log` quirk (a task
//!   that made no model call shows the last exchange of an earlier task of its turn, or ""
//!   when there was none) is redone in that order: such a record is recognised in its shard's
//!   file because its `log` is "" or repeats the record before it, which a task's own exchange
//!   never does (its prompt names the task).
//! - Evaluation files (`*_eval_results.json`) get the union of the shards' entries, keys in
//!   numeric id order as BigCodeBench writes them, and the latest shard's `date` (the minute
//!   it was written; equal everywhere when the runs set `SOURCE_DATE_EPOCH`).
//! - Response cache entries (`.convcode-cache/`, one file per request, named by its digest)
//!   are joined: the cache of the merged tree answers every request any shard made. Should
//!   two shards hold different answers to one request, the lowest shard's is kept.
//! - The shard marker (`shard_dir::MARKER`), a run's lock (`durable::LOCK_FILE`) and files of
//!   writes cut short (`.tmp*`) are left out.
//!
//! Nothing is written unless every shard 1..N of the same job is there once and finished,
//! and OUT is new or empty; the tree is built beside OUT and renamed into place at the end.

use super::eval_file::task_sort_key;
use super::evaluate::python_json_indent2;
use super::order::dspy_visit_ids;
use super::records::{parse_record, record_line};
use super::shard_dir::{self, Marker, MARKER};
use crate::shard::check_set;
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    pub shards: usize,
    pub files: usize,
    pub records: usize,
}

/// Whether `dir` looks like a shard's results folder (has the marker).
pub fn is_shard_dir(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

/// Joins the shard folders `dirs` (any order) into the new folder `out`.
pub fn merge_results(dirs: &[PathBuf], out: &Path) -> Result<Merged> {
    let mut problems = Vec::new();
    let mut shards: Vec<(String, PathBuf, Marker)> = Vec::new();
    for d in dirs {
        let name = d.display().to_string();
        if !d.exists() {
            // A shard whose command refused its input writes nothing, not even its folder.
            problems.push(format!(
                "{name}: no such folder (its shard never ran, or its command refused its input \
                 before writing anything: see that shard's log, fix it and run it again)"
            ));
            continue;
        }
        if !d.is_dir() {
            problems.push(format!("{name}: not a folder"));
            continue;
        }
        match shard_dir::read(d) {
            Ok(Some(m)) => shards.push((name, d.clone(), m)),
            Ok(None) => problems.push(format!(
                "{name}: not a shard's results folder (no {MARKER}; was it run with --shard K/N?)"
            )),
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    for (name, _, m) in &shards {
        if let Err(e) = shard_dir::shard_of(name, m) {
            problems.push(e.to_string());
        }
    }
    if !problems.is_empty() {
        bail!("cannot merge:\n  {}", problems.join("\n  "));
    }
    let records = shards
        .iter()
        .map(|(name, _, m)| shard_dir::shard_of(name, m))
        .collect::<Result<Vec<_>>>()?;
    let order = check_set(&records)?;
    check_out(out)?;
    let shards: Vec<&(String, PathBuf, Marker)> = order.iter().map(|&i| &shards[i]).collect();
    let task_ids = &shards[0].2.task_ids;
    let problem_pos: HashMap<&str, usize> = task_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let visit_pos: HashMap<&str, usize> = dspy_visit_ids(task_ids)
        .into_iter()
        .enumerate()
        .map(|(i, id)| (id, i))
        .collect();

    // Every file of every shard, by path relative to its root (shards in K order).
    let mut files: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
    for (si, (_, root, _)) in shards.iter().enumerate() {
        for rel in tree_files(root)? {
            files.entry(rel).or_default().push(si);
        }
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".pivot-merge-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    let mut merged = Merged {
        shards: shards.len(),
        files: 0,
        records: 0,
    };
    for (rel, holders) in &files {
        let copies: Vec<(String, Vec<u8>)> = holders
            .iter()
            .map(|&si| {
                let (name, root, _) = shards[si];
                let path = root.join(rel);
                pivot_base::bounded_read::read(&path)
                    .with_context(|| format!("cannot read {}", path.display()))
                    .map(|b| (format!("{name}/{}", rel.display()), b))
            })
            .collect::<Result<_>>()?;
        let same = copies.iter().all(|(_, b)| *b == copies[0].1);
        let kind = kind(rel);
        // A turn log held by one shard only still has its `log` quirk redone (below).
        let copy = same && (copies.len() > 1 || !matches!(kind, Kind::Log { turn0: false }));
        let bytes = if copy {
            copies[0].1.clone()
        } else {
            match kind {
                Kind::Eval => merge_eval(&copies)?,
                Kind::Log { turn0 } => {
                    let pos = if turn0 { &problem_pos } else { &visit_pos };
                    let (bytes, n) = merge_log(&copies, pos, !turn0)?;
                    merged.records += n;
                    bytes
                }
                Kind::Cache => copies[0].1.clone(),
                Kind::Other => bail!(
                    "cannot merge: {} and {} differ, and it is neither a turn log, an evaluation nor a cache entry",
                    copies[0].0,
                    copies.iter().find(|(_, b)| *b != copies[0].1).map_or("", |c| c.0.as_str())
                ),
            }
        };
        let dest = staging.path().join(rel);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        pivot_base::durable::write_scratch(&dest, bytes)?;
        merged.files += 1;
    }
    if out.exists() {
        std::fs::remove_dir(out).with_context(|| format!("cannot replace {}", out.display()))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, out)
        .with_context(|| format!("cannot move the merged tree to {}", out.display()))?;
    Ok(merged)
}

/// OUT must be new or an empty folder: a merge never mixes with or overwrites other files.
fn check_out(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!(
            "{} exists and is not a folder: give a new or empty folder",
            out.display()
        );
    }
    let mut entries =
        std::fs::read_dir(out).with_context(|| format!("cannot read {}", out.display()))?;
    if entries.next().is_some() {
        bail!(
            "{} is not empty: the merge writes a new tree; give a new or empty folder",
            out.display()
        );
    }
    Ok(())
}

/// The regular files under `root`, relative, without the marker and unfinished temporary files.
fn tree_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walk {
        let entry = entry.with_context(|| format!("cannot list {}", root.display()))?;
        let Some(ft) = entry.file_type() else {
            continue;
        };
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_path_buf();
        if ft.is_dir() {
            continue;
        }
        if !ft.is_file() {
            bail!(
                "cannot merge: {} is not a regular file (links and devices are not copied)",
                entry.path().display()
            );
        }
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The marker is the shard's, not the tree's, and so is a run's lock; `.tmp*` is a
        // write an interruption cut.
        if rel == Path::new(MARKER)
            || rel == Path::new(pivot_base::durable::LOCK_FILE)
            || name.starts_with(".tmp")
        {
            continue;
        }
        out.push(rel);
    }
    Ok(out)
}

enum Kind {
    Eval,
    /// A JSONL log; `turn0` for the files under `bigcodebench/` (problem order, no `log`).
    Log {
        turn0: bool,
    },
    Cache,
    Other,
}

fn kind(rel: &Path) -> Kind {
    let s = rel.to_string_lossy();
    if s.ends_with(".jsonl") {
        Kind::Log {
            turn0: rel.starts_with("bigcodebench"),
        }
    } else if s.ends_with("_eval_results.json") {
        Kind::Eval
    } else if rel.starts_with(".convcode-cache") {
        Kind::Cache
    } else {
        Kind::Other
    }
}

struct Line {
    pos: usize,
    text: String,
    log: Option<String>,
    carried: bool,
}

/// The records of every copy in the unsharded order; returns the text and the record count.
fn merge_log(
    copies: &[(String, Vec<u8>)],
    pos: &HashMap<&str, usize>,
    redo_carried: bool,
) -> Result<(Vec<u8>, usize)> {
    let mut lines: Vec<Line> = Vec::new();
    let mut owner: HashMap<String, &str> = HashMap::new();
    for (name, bytes) in copies {
        let text = std::str::from_utf8(bytes)
            .with_context(|| format!("cannot merge: {name} is not UTF-8 text"))?;
        let mut prev: Option<String> = None;
        for (i, line) in text.split('\n').enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = || {
                format!(
                    "cannot merge: {name}:{}: not a JSON record (cut short by an interrupted run? re-run that shard)",
                    i + 1
                )
            };
            let v: Value = serde_json::from_str(line).map_err(|_| anyhow::anyhow!(bad()))?;
            let Some(task) = v.get("task_id").and_then(Value::as_str) else {
                bail!(bad());
            };
            let Some(&p) = pos.get(task) else {
                bail!(
                    "cannot merge: {name}:{}: task {task} is not one of the job's problems",
                    i + 1
                );
            };
            if let Some(other) = owner.insert(task.to_string(), name) {
                bail!("cannot merge: task {task} is in both {other} and {name}");
            }
            let log = v.get("log").and_then(Value::as_str).map(str::to_string);
            let carried = redo_carried
                && log
                    .as_deref()
                    .is_some_and(|l| l.is_empty() || prev.as_deref() == Some(l));
            prev.clone_from(&log);
            lines.push(Line {
                pos: p,
                text: line.to_string(),
                log,
                carried,
            });
        }
    }
    lines.sort_by_key(|l| l.pos);
    let mut last_own: Option<String> = None;
    let mut out = String::new();
    for l in &mut lines {
        if l.carried {
            let v: Value = serde_json::from_str(&l.text)?;
            // Only records this program wrote are rewritten (they print back to the same line).
            if let Some(mut rec) = parse_record(&v).filter(|r| record_line(r) == l.text) {
                rec.log = Some(last_own.clone().unwrap_or_default());
                l.text = record_line(&rec);
            }
        } else if let Some(own) = &l.log {
            last_own = Some(own.clone());
        }
        out.push_str(&l.text);
        out.push('\n');
    }
    Ok((out.into_bytes(), lines.len()))
}

/// The union of the copies' `eval` entries in numeric id order, with the latest `date`.
fn merge_eval(copies: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut date: Option<String> = None;
    let mut entries: HashMap<String, (Value, &str)> = HashMap::new();
    for (name, bytes) in copies {
        let v: Value = serde_json::from_slice(bytes).with_context(|| {
            format!("cannot merge: {name} is not valid JSON (an interrupted shard? re-run it)")
        })?;
        let (Some(d), Some(eval)) = (
            v.get("date").and_then(Value::as_str),
            v.get("eval").and_then(Value::as_object),
        ) else {
            bail!("cannot merge: {name} has no \"date\" and \"eval\" (BigCodeBench's eval-results shape)");
        };
        if date.as_deref().is_none_or(|have| d > have) {
            date = Some(d.to_string());
        }
        for (id, e) in eval {
            match entries.get(id) {
                Some((have, who)) if have != e => {
                    bail!("cannot merge: task {id} is evaluated differently in {who} and {name}")
                }
                Some(_) => {}
                None => {
                    entries.insert(id.clone(), (e.clone(), name));
                }
            }
        }
    }
    let mut ids: Vec<&String> = entries.keys().collect();
    ids.sort_by_key(|k| task_sort_key(k));
    let mut eval = Map::new();
    for id in ids {
        eval.insert(id.clone(), entries[id].0.clone());
    }
    let mut doc = Map::new();
    doc.insert("date".into(), Value::String(date.unwrap_or_default()));
    doc.insert("eval".into(), Value::Object(eval));
    Ok(python_json_indent2(&Value::Object(doc)).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convcode::turn::TurnRecord;

    fn rec(task: &str, log: Option<&str>) -> String {
        record_line(&TurnRecord {
            task_id: task.into(),
            solution: format!("# {task}"),
            compilation_feedback: None,
            execution_feedback: None,
            user_feedback: None,
            log: log.map(str::to_string),
            iteration: 1,
            instruction_feedback: None,
        })
    }

    fn file(lines: &[String]) -> Vec<u8> {
        lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn records_in_the_whole_order_and_carried_logs_redone() {
        let pos: HashMap<&str, usize> = [("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 4)].into();
        // Shard 1 made no call for b and d (the first shows "", the next repeats it);
        // shard 2 called for a and c; e is null (quirk fixed), never a carried log.
        let s1 = file(&[rec("b", Some("")), rec("d", Some(""))]);
        let s2 = file(&[rec("a", Some("LA")), rec("c", Some("LC")), rec("e", None)]);
        let (out, n) = merge_log(
            &[("s1/x.jsonl".into(), s1), ("s2/x.jsonl".into(), s2)],
            &pos,
            true,
        )
        .unwrap();
        assert_eq!(n, 5);
        let want = file(&[
            rec("a", Some("LA")),
            rec("b", Some("LA")),
            rec("c", Some("LC")),
            rec("d", Some("LC")),
            rec("e", None),
        ]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(want).unwrap()
        );
        // The same task in two shards, or a task of another job: refused, named.
        let dup = file(&[rec("a", Some("LA"))]);
        let e = merge_log(
            &[("s1/x".into(), dup.clone()), ("s2/x".into(), dup)],
            &pos,
            true,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("task a is in both s1/x and s2/x"),
            "{e}"
        );
        let e = merge_log(&[("s1/x".into(), file(&[rec("z", None)]))], &pos, true).unwrap_err();
        assert!(
            e.to_string()
                .contains("task z is not one of the job's problems"),
            "{e}"
        );
        let e = merge_log(
            &[("s1/x".into(), b"{\"task_id\": \"a\", \"so".to_vec())],
            &pos,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("s1/x:1: not a JSON record"), "{e}");
    }

    #[test]
    fn evaluations_joined_in_numeric_order_with_the_latest_date() {
        let one = br#"{"date": "2024-01-01 10:05", "eval": {"H/10": [{"status": "pass"}]}}"#;
        let two = br#"{"date": "2024-01-01 10:00", "eval": {"H/2": [{"status": "fail"}]}}"#;
        let out = merge_eval(&[("a".into(), one.to_vec()), ("b".into(), two.to_vec())]).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["date"], "2024-01-01 10:05");
        let keys: Vec<&String> = v["eval"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["H/2", "H/10"]);
        let other = br#"{"date": "2024-01-01 10:00", "eval": {"H/10": [{"status": "fail"}]}}"#;
        let e =
            merge_eval(&[("a".into(), one.to_vec()), ("c".into(), other.to_vec())]).unwrap_err();
        assert!(
            e.to_string()
                .contains("H/10 is evaluated differently in a and c"),
            "{e}"
        );
    }
}
