//! `.pivot/state.json`: what survives an editor restart (the conversation, the session
//! index, the user's own pivots). Written atomically (temp file, fsync, rename); a file
//! that cannot be read back is moved aside, never overwritten unread.

use super::convcode_conv::SavedConvCode;
use crate::pivots::{Ledger, Rule};
use crate::python::ObjectKind;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedState {
    /// Version of this file's layout.
    pub format: u32,
    /// The open MemoryCode conversation (absolute, or relative to the workspace root).
    #[serde(default)]
    pub conversation: Option<PathBuf>,
    /// The open ConvCodeWorld conversation instead. Left out when there is none, so a file
    /// without it reads as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convcode: Option<SavedConvCode>,
    /// The current session; None follows the latest session.
    #[serde(default)]
    pub session: Option<usize>,
    #[serde(default)]
    pub user_pivots: Vec<SavedVersion>,
}

/// One version of a user pivot, in the rule forms of the data files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedVersion {
    pub id: String,
    pub session: usize,
    #[serde(default)]
    pub text: String,
    pub kind: String,
    pub rule: serde_json::Value,
}

impl SavedState {
    /// The user pivots as a ledger; an invalid kind or rule is an error naming the pivot.
    pub fn user_ledger(&self) -> Result<Ledger> {
        let mut l = Ledger::default();
        for v in &self.user_pivots {
            let kind = ObjectKind::from_name(&v.kind).with_context(|| {
                format!("user pivot `{}`: unknown object kind {:?}", v.id, v.kind)
            })?;
            let rule =
                Rule::from_json(&v.rule).with_context(|| format!("user pivot `{}`", v.id))?;
            l.give(&v.id, "user", v.session, v.text.clone(), kind, rule);
        }
        Ok(l)
    }

    pub fn from_user_ledger(l: &Ledger) -> Vec<SavedVersion> {
        l.pivots
            .iter()
            .flat_map(|p| {
                p.versions.iter().map(|v| SavedVersion {
                    id: p.id.clone(),
                    session: v.session,
                    text: v.text.clone(),
                    kind: v.kind.name().to_string(),
                    rule: v.rule.to_json(),
                })
            })
            .collect()
    }
}

pub fn state_path(root: &Path) -> PathBuf {
    root.join(".pivot").join("state.json")
}

#[derive(Debug)]
pub enum Loaded {
    Missing,
    Found(SavedState),
    /// The file was unreadable; it was renamed (or could not be) as `problem` says.
    SetAside {
        problem: String,
    },
}

/// Read the state of the workspace at `root`. A file that does not parse, has an unknown
/// format, or holds invalid pivots is renamed `state.json.corrupt-<time>` and reported.
pub fn load(root: &Path) -> Loaded {
    let path = state_path(root);
    let bytes = match crate::bounded_read::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => {
            return Loaded::SetAside {
                problem: format!(
                    "cannot read {}: {e}; starting without saved state",
                    path.display()
                ),
            }
        }
    };
    let problem = match parse(&bytes) {
        Ok(s) => return Loaded::Found(s),
        Err(e) => format!("{e:#}"),
    };
    let moved = match set_aside(&path) {
        Ok(to) => format!("moved it to {}", to.display()),
        Err(e) => format!("could not move it aside ({e:#}); it will be overwritten"),
    };
    Loaded::SetAside {
        problem: format!(
            "{} is not a valid state file ({problem}); {moved}; starting without saved state",
            path.display()
        ),
    }
}

fn parse(bytes: &[u8]) -> Result<SavedState> {
    let text = std::str::from_utf8(bytes).context("not UTF-8")?;
    if text.trim().is_empty() {
        anyhow::bail!("the file is empty");
    }
    let s: SavedState = serde_json::from_str(text)?;
    if s.format != FORMAT {
        anyhow::bail!("format {} (this server reads format {FORMAT})", s.format);
    }
    s.user_ledger()?;
    Ok(s)
}

fn set_aside(path: &Path) -> Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = |n: u32| {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        path.with_file_name(format!("state.json.corrupt-{secs}{suffix}"))
    };
    let to = (0..1000)
        .map(name)
        .find(|p| !p.exists())
        .context("too many set-aside state files")?;
    std::fs::rename(path, &to).with_context(|| format!("rename to {}", to.display()))?;
    Ok(to)
}

/// Write the state atomically: a reader sees the old file or the new one, never a mix.
pub fn save(root: &Path, state: &SavedState) -> Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = state_path(root);
    let dir = path.parent().context("state path has no folder")?;
    if !dir.is_dir() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // Per-user editor state: keep it out of version control by default.
        let _ = std::fs::write(dir.join(".gitignore"), "*\n");
    }
    let tmp = dir.join(format!(
        ".state.json.tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let write = || -> Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        let mut json = serde_json::to_vec_pretty(state)?;
        json.push(b'\n');
        f.write_all(&json)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        e.context(format!("cannot write {}", path.display()))
    })?;
    // Make the rename durable too (best effort: not every filesystem allows it).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_and_corrupt_files_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(load(dir.path()), Loaded::Missing));
        let s = SavedState {
            format: FORMAT,
            conversation: Some("conv/dialogue_1.json".into()),
            convcode: None,
            session: Some(2),
            user_pivots: vec![SavedVersion {
                id: "u".into(),
                session: 1,
                text: "t".into(),
                kind: "method".into(),
                rule: json!("^m_"),
            }],
        };
        save(dir.path(), &s).unwrap();
        match load(dir.path()) {
            Loaded::Found(back) => assert_eq!(back, s),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            SavedState::from_user_ledger(&s.user_ledger().unwrap()),
            s.user_pivots
        );
        for bad in ["{\"format\": 1, \"sess", "", "{\"format\": 9}", "{\"format\":1,\"user_pivots\":[{\"id\":\"x\",\"session\":0,\"kind\":\"nope\",\"rule\":true}]}"] {
            std::fs::write(state_path(dir.path()), bad).unwrap();
            let Loaded::SetAside { problem } = load(dir.path()) else {
                panic!("{bad:?} was accepted")
            };
            assert!(problem.contains("not a valid state file") && problem.contains("moved it to"), "{problem}");
            assert!(!state_path(dir.path()).exists());
        }
        let aside = std::fs::read_dir(dir.path().join(".pivot"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains("corrupt")
            })
            .count();
        assert_eq!(aside, 4, "every bad file is kept");
    }
}
