//! Per-turn JSONL logs: written the way the original's `json.dump` writes them (`", "` and
//! `": "` separators, non-ASCII escaped), read back tolerantly (the original's files as well as
//! ours), and repaired when an interruption left half a line at the end.

use super::turn::TurnRecord;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Python's `json.dumps` string escaping with `ensure_ascii=True`.
pub fn py_json_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn py_json_opt(s: Option<&str>, out: &mut String) {
    match s {
        Some(s) => py_json_str(s, out),
        None => out.push_str("null"),
    }
}

/// One record as the original's `json.dump(result, fp)` writes it (no newline).
pub fn record_line(r: &TurnRecord) -> String {
    let mut out = String::from("{\"task_id\": ");
    py_json_str(&r.task_id, &mut out);
    out.push_str(", \"solution\": ");
    py_json_str(&r.solution, &mut out);
    out.push_str(", \"compilation_feedback\": ");
    py_json_opt(r.compilation_feedback.as_deref(), &mut out);
    out.push_str(", \"execution_feedback\": ");
    py_json_opt(r.execution_feedback.as_deref(), &mut out);
    out.push_str(", \"user_feedback\": ");
    py_json_opt(r.user_feedback.as_deref(), &mut out);
    out.push_str(", \"log\": ");
    py_json_opt(r.log.as_deref(), &mut out);
    out.push_str(&format!(", \"iteration\": {}", r.iteration));
    // Only `_IF` turns have it; the original's records stay byte for byte its own.
    if let Some(fi) = &r.instruction_feedback {
        out.push_str(", \"instruction_feedback\": ");
        py_json_str(fi, &mut out);
    }
    out.push('}');
    out
}

/// A turn-0 sample line (`{"task_id": ..., "solution": ...}`).
pub fn sample_line(task_id: &str, solution: &str) -> String {
    let mut out = String::from("{\"task_id\": ");
    py_json_str(task_id, &mut out);
    out.push_str(", \"solution\": ");
    py_json_str(solution, &mut out);
    out.push('}');
    out
}

fn opt_str(v: &Value, key: &str) -> Option<String> {
    match v.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

pub(crate) fn parse_record(v: &Value) -> Option<TurnRecord> {
    let task_id = v.get("task_id")?.as_str()?.to_string();
    let solution = v.get("solution")?.as_str()?.to_string();
    Some(TurnRecord {
        task_id,
        solution,
        compilation_feedback: opt_str(v, "compilation_feedback"),
        execution_feedback: opt_str(v, "execution_feedback"),
        user_feedback: opt_str(v, "user_feedback"),
        log: opt_str(v, "log"),
        iteration: v.get("iteration").and_then(Value::as_u64).unwrap_or(0) as usize,
        instruction_feedback: opt_str(v, "instruction_feedback"),
    })
}

/// A log read back: its records in file order, and a note when a torn last line was removed.
#[derive(Debug, Default)]
pub struct Log {
    pub records: Vec<TurnRecord>,
    pub repaired: Option<String>,
    /// The 1-based line of each record (for messages).
    pub lines: Vec<usize>,
}

impl Log {
    pub fn by_task(&self) -> HashMap<&str, &TurnRecord> {
        self.records
            .iter()
            .map(|r| (r.task_id.as_str(), r))
            .collect()
    }

    /// Refuses a log that holds a task twice: one turn has one record per task, so a second
    /// one was written by a second run appending to the same file at the same time (what the
    /// folder lock now prevents). Reading on would count that task twice.
    pub fn check_unique(&self, path: &Path) -> Result<()> {
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (r, line) in self.records.iter().zip(&self.lines) {
            if let Some(at) = first.insert(r.task_id.as_str(), *line) {
                bail!(
                    "{}: task {} has a record at line {at} and another at line {line}: two runs \
                     wrote this folder at the same time. Remove the folder's turn files from this \
                     one on (or the whole folder) and run again; answers come from the cache",
                    path.display(),
                    r.task_id
                );
            }
        }
        Ok(())
    }
}

/// Read a JSONL log (missing file = empty). A last line that is cut off (no newline and not
/// valid JSON: an interrupted write) is cut from the file so appending can resume; any other
/// bad line is an error naming file and line, and the file is left alone.
pub fn read_log(path: &Path) -> Result<Log> {
    let bytes = match pivot_base::bounded_read::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Log::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut log = Log::default();
    let mut start = 0usize;
    let mut lineno = 0usize;
    while start < bytes.len() {
        lineno += 1;
        let end = bytes[start..]
            .iter()
            .position(|b| *b == b'\n')
            .map(|i| start + i);
        let line = &bytes[start..end.unwrap_or(bytes.len())];
        let parsed = std::str::from_utf8(line).ok().and_then(|s| {
            if s.trim().is_empty() {
                Some(None)
            } else {
                serde_json::from_str::<Value>(s).ok().map(Some)
            }
        });
        match (parsed, end) {
            (Some(None), _) => {}
            (Some(Some(v)), _) => match parse_record(&v) {
                Some(r) => {
                    log.records.push(r);
                    log.lines.push(lineno);
                }
                None => bail!(
                    "{}:{lineno}: record without a string `task_id` and `solution`",
                    path.display()
                ),
            },
            (None, None) => {
                // Torn tail from an interrupted write: drop it (it holds no complete record).
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("cannot repair {}", path.display()))?;
                f.set_len(start as u64)
                    .with_context(|| format!("cannot repair {}", path.display()))?;
                log.repaired = Some(format!(
                    "{}:{lineno}: removed an incomplete last line ({} bytes) left by an interrupted run",
                    path.display(),
                    line.len()
                ));
                break;
            }
            (None, Some(_)) => bail!(
                "{}:{lineno}: not a JSON record; fix or remove this line (nothing was changed)",
                path.display()
            ),
        }
        start = end.map_or(bytes.len(), |e| e + 1);
    }
    Ok(log)
}

/// Appends lines to a log, one complete line per write, flushed to disk before the next
/// (a record reported written survives a node failure; a line cut by a kill is repaired by
/// [`read_log`]).
pub struct Appender {
    file: std::fs::File,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Appender> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let new = !path.exists();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .with_context(|| format!("cannot open {} for appending", path.display()))?;
        if new {
            // The file's name must survive a crash as its records do.
            pivot_base::durable::sync_dir(path.parent().unwrap_or(Path::new(".")))
                .with_context(|| format!("cannot create {}", path.display()))?;
        }
        // A last line written without its newline (e.g. by hand) must not swallow ours.
        let len = file.metadata()?.len();
        if len > 0 {
            use std::io::{Read, Seek, SeekFrom};
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(Appender { file })
    }

    pub fn append(&mut self, line: &str) -> Result<()> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.file.write_all(&buf)?;
        self.file.sync_data()?;
        Ok(())
    }
}

/// A log's file name, as progress lines name it.
pub(crate) fn short(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json_escaping() {
        let mut s = String::new();
        py_json_str("a\"b\\c\nd\u{7f}é😀/", &mut s);
        assert_eq!(s, "\"a\\\"b\\\\c\\nd\\u007f\\u00e9\\ud83d\\ude00/\"");
    }

    #[test]
    fn a_task_twice_in_one_turn_is_refused_naming_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.jsonl");
        let a = "{\"task_id\": \"a\", \"solution\": \"x\"}\n";
        let b = "{\"task_id\": \"b\", \"solution\": \"y\"}\n";
        std::fs::write(&p, format!("{a}{b}")).unwrap();
        read_log(&p).unwrap().check_unique(&p).unwrap();
        std::fs::write(&p, format!("{a}{b}\n{a}")).unwrap();
        let e = read_log(&p)
            .unwrap()
            .check_unique(&p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("task a has a record at line 1 and another at line 4")
                && e.contains("two runs"),
            "{e}"
        );
    }

    #[test]
    fn torn_last_line_is_cut_and_bad_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.jsonl");
        std::fs::write(
            &p,
            "{\"task_id\": \"a\", \"solution\": \"x\"}\n{\"task_id\": \"b\", \"sol",
        )
        .unwrap();
        let log = read_log(&p).unwrap();
        assert_eq!(log.records.len(), 1);
        assert!(log.repaired.is_some());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"task_id\": \"a\", \"solution\": \"x\"}\n"
        );
        let bad = "garbage\n{\"task_id\": \"a\", \"solution\": \"x\"}\n";
        std::fs::write(&p, bad).unwrap();
        let e = read_log(&p).unwrap_err().to_string();
        assert!(e.contains(":1:"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            bad,
            "a bad line is never rewritten"
        );
    }
}
