//! `.pivot/state.json`: what survives an editor restart (the conversation, the session
//! index, the user's own pivots). Written atomically (temp file, fsync, rename); a file
//! that cannot be read back is moved aside, never overwritten unread.
//!
//! Several servers (editor windows) may share one workspace. Each write holds an exclusive
//! lock on `.pivot/state.lock` and re-reads the file, then applies only what this server
//! changed since its own last write (`merge`): user pivot versions added or removed here
//! are added or removed, the others' stay; the conversation and the session are taken
//! from this server only when it changed them. So the file holds every window's pivots
//! and the conversation and session most recently chosen in any window; each window keeps
//! its own current session while it runs, and a restart resumes the last one chosen.
//! Temporary files left by a killed writer are removed at start-up, under the lock.

use super::convcode_conv::SavedConvCode;
use anyhow::{Context, Result};
use pivot_python::pivots::{Ledger, Rule};
use pivot_python::python::ObjectKind;
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
        let mut index = std::collections::HashMap::new();
        for v in &self.user_pivots {
            let kind = ObjectKind::from_name(&v.kind).with_context(|| {
                format!("user pivot `{}`: unknown object kind {:?}", v.id, v.kind)
            })?;
            let rule =
                Rule::from_json(&v.rule).with_context(|| format!("user pivot `{}`", v.id))?;
            l.give_indexed(
                &mut index,
                &v.id,
                "user",
                v.session,
                v.text.clone(),
                kind,
                rule,
            );
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
    let bytes = match pivot_base::bounded_read::read(&path) {
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

/// `.pivot/state.lock`, held exclusively (flock) until dropped. Released by the kernel if
/// the process dies, so a `kill -9` cannot leave the workspace locked.
pub struct StateLock(std::fs::File);

impl Drop for StateLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Wait (up to 10 s) for the workspace's state lock.
pub fn lock(root: &Path) -> Result<StateLock> {
    let dir = state_path(root)
        .parent()
        .context("state path has no folder")?
        .to_path_buf();
    ensure_dir(&dir)?;
    let path = dir.join("state.lock");
    let f = open_lock_file(&path)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(StateLock(f)),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
        if std::time::Instant::now() > deadline {
            anyhow::bail!(
                "{} is held by another process for over 10 s",
                path.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Open (creating) the lock file without ever blocking or leaving the folder: a FIFO put
/// there would block a plain open until a reader came, a symlink could point at a device
/// or at a file elsewhere. Only a regular file is used as the lock.
fn open_lock_file(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |what: &str| {
        anyhow::anyhow!(
            "{} is {what}, not a regular file: remove it (it is only a lock, recreated when missing)",
            path.display()
        )
    };
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_symlink() {
            let to = match std::fs::metadata(path) {
                Ok(t) => format!(
                    "a symlink to {}",
                    pivot_base::bounded_read::kind_of(t.file_type())
                ),
                Err(_) => "a symlink".to_string(),
            };
            return Err(refuse(&to));
        }
        if !m.file_type().is_file() {
            return Err(refuse(pivot_base::bounded_read::kind_of(m.file_type())));
        }
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse("a symlink"),
            Some(libc::ENXIO) => refuse("a FIFO (named pipe)"),
            _ => anyhow::Error::new(e).context(format!("cannot open {}", path.display())),
        })?;
    // Checked again on what was opened, in case the path changed in between.
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(refuse(pivot_base::bounded_read::kind_of(t)));
    }
    Ok(f)
}

/// Remove `.state.json.tmp-*` files a killed writer left behind. Call with the lock held
/// (every write holds it, so no temp file then belongs to a live writer).
pub fn remove_stale_temp_files(root: &Path, _lock: &StateLock) -> usize {
    let Some(dir) = state_path(root).parent().map(Path::to_path_buf) else {
        return 0;
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return 0;
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".state.json.tmp-")
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// What goes to disk: `disk` (the file as it is now, other servers' writes included) with
/// the changes from `base` (this server's state at its last write) to `mine` applied.
pub fn merge(disk: &SavedState, base: &SavedState, mine: &SavedState) -> SavedState {
    let conv_changed = mine.conversation != base.conversation || mine.convcode != base.convcode;
    let (conversation, convcode) = if conv_changed {
        (mine.conversation.clone(), mine.convcode.clone())
    } else {
        (disk.conversation.clone(), disk.convcode.clone())
    };
    let session = if conv_changed || mine.session != base.session {
        mine.session
    } else {
        disk.session
    };
    let removed = |v: &SavedVersion| base.user_pivots.contains(v) && !mine.user_pivots.contains(v);
    let mut user_pivots: Vec<SavedVersion> = disk
        .user_pivots
        .iter()
        .filter(|v| !removed(v))
        .cloned()
        .collect();
    for v in &mine.user_pivots {
        if !base.user_pivots.contains(v) && !user_pivots.contains(v) {
            user_pivots.push(v.clone());
        }
    }
    SavedState {
        format: FORMAT,
        conversation,
        convcode,
        session,
        user_pivots,
    }
}

/// Under the lock: re-read the file, merge this server's changes since `base` into it
/// and write the result, which is returned (the next `base` is `mine`). An unreadable
/// file is set aside (as `load` does) and this server's state written alone.
pub fn save_merged(root: &Path, base: &SavedState, mine: &SavedState) -> Result<SavedState> {
    let _lock = lock(root)?;
    let disk = match load(root) {
        Loaded::Found(s) => s,
        Loaded::Missing | Loaded::SetAside { .. } => SavedState {
            format: FORMAT,
            ..SavedState::default()
        },
    };
    let merged = merge(&disk, base, mine);
    save(root, &merged)?;
    Ok(merged)
}

fn ensure_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // Per-user editor state: keep it out of version control by default.
        let _ = pivot_base::durable::write_atomic(&dir.join(".gitignore"), b"*\n");
    }
    Ok(())
}

/// Write the state atomically: a reader sees the old file or the new one, never a mix.
pub fn save(root: &Path, state: &SavedState) -> Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = state_path(root);
    let dir = path.parent().context("state path has no folder")?;
    ensure_dir(dir)?;
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

    fn pivot(id: &str) -> SavedVersion {
        SavedVersion {
            id: id.into(),
            session: 0,
            text: String::new(),
            kind: "function".into(),
            rule: json!("^f_"),
        }
    }

    /// Issue 10, items 7 and 8: two servers writing in turn keep each other's changes, and
    /// a killed writer's temp files go at the next start.
    #[test]
    fn two_writers_keep_each_others_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let empty = SavedState {
            format: FORMAT,
            ..SavedState::default()
        };
        // Window A opens a conversation, picks session 2 and adds a pivot.
        let a = SavedState {
            conversation: Some("d/dialogue_1.json".into()),
            session: Some(2),
            user_pivots: vec![pivot("a")],
            ..empty.clone()
        };
        save_merged(root, &empty, &a).unwrap();
        // Window B, started before, adds its own pivot only.
        let b = SavedState {
            user_pivots: vec![pivot("b")],
            ..empty.clone()
        };
        let on_disk = save_merged(root, &empty, &b).unwrap();
        assert_eq!(on_disk.conversation, a.conversation);
        assert_eq!(on_disk.session, Some(2));
        assert_eq!(on_disk.user_pivots, vec![pivot("a"), pivot("b")]);
        // A removes its pivot: B's stays.
        let a2 = SavedState {
            user_pivots: vec![],
            ..a.clone()
        };
        let on_disk = save_merged(root, &a, &a2).unwrap();
        assert_eq!(on_disk.user_pivots, vec![pivot("b")]);
        match load(root) {
            Loaded::Found(s) => assert_eq!(s, on_disk),
            other => panic!("{other:?}"),
        }
        std::fs::write(root.join(".pivot/.state.json.tmp-1-1"), "{").unwrap();
        let l = lock(root).unwrap();
        assert_eq!(remove_stale_temp_files(root, &l), 1);
    }
}
