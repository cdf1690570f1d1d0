//! Writing so that a long run survives being killed at any moment (SIGKILL, an OOM kill, a
//! node failure, a scheduler's preemption) and a re-run of the same command ends with the
//! same bytes as a run that was never interrupted:
//!
//! - [`write_atomic`]: whole files go to a temporary name beside the destination, are
//!   flushed to disk, then renamed over it (and the folder flushed), so a reader sees the
//!   old file or the new one, never a mix or a stub.
//! - [`sweep_stale_temps`]: a process killed between creating and renaming a temporary file
//!   leaves it behind; a re-run removes those of dead processes, so the finished tree holds
//!   exactly what an uninterrupted run writes.
//! - [`FolderLock`]: one writer per results folder. Two processes appending to the same
//!   per-turn files (a "killed" run that was still running because the kill reached only a
//!   wrapper such as `cargo run`, `timeout` or `srun`; a shard re-submitted while its first
//!   job still ran) write every record twice; the second process now refuses, naming the first.
//!
//! Used by the core and the faces alike (like `bounded_read`); it knows nothing of either.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Prefix of every temporary file this program writes (`.tmp-pivot.PID.SEQ.HOST`). It starts
/// with `.tmp`, the prefix `pivot-lsp merge` and editors' file lists already leave out.
pub const TEMP_PREFIX: &str = ".tmp-pivot.";

/// The lock file [`FolderLock`] holds at the root of a folder while a run writes it; removed
/// when the run ends (after a kill it stays, unlocked, and the next run takes it over).
pub const LOCK_FILE: &str = ".pivot-lock";

/// A temporary file of an unknown or foreign process is only removed once it is this old: no
/// write of ours takes that long, and another machine's process cannot be asked if it lives.
const STALE_AFTER: Duration = Duration::from_secs(3600);

static SEQ: AtomicU64 = AtomicU64::new(0);

/// This machine's host name (for temporary file names and the lock's holder).
pub fn host_name() -> String {
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    // A host name goes into file names: keep it to what is safe there.
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn temp_path(dest: &Path) -> PathBuf {
    let dir = dest.parent().unwrap_or(Path::new("."));
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(
        "{TEMP_PREFIX}{}.{seq}.{}",
        std::process::id(),
        host_name()
    ))
}

/// Flush a folder's entries (a rename is durable only then). File systems that cannot
/// flush a folder (some network and user-space ones) are let be.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    match File::open(dir).and_then(|f| f.sync_all()) {
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EINVAL) | Some(libc::ENOTSUP) | Some(libc::EBADF)
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// Replace `dest` with `bytes` atomically and durably: a temporary file beside it, written
/// and flushed, renamed over it, the folder flushed. Creates the folder when missing. A
/// destination that exists and is not a regular file (`/dev/stdout`, a FIFO) is written
/// to as it is.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    write_whole(dest, bytes, true)
}

/// [`write_atomic`] without the flushes: a reader still sees the old file or the new one,
/// but after a power cut the file may be empty or torn. For caches, whose readers treat a
/// file they cannot parse as missing and which are written on every run (a flush of tens
/// of megabytes would cost more than the run saves).
pub fn replace_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    write_whole(dest, bytes, false)
}

/// A file of a private scratch or staging tree, which nothing reads before the writer is
/// done with it (a commit checked out into a temporary folder, a staging folder renamed into
/// place whole, a benchmark's copy): written in place and not flushed, since neither a
/// reader nor a power cut can see it half-written where it matters. Anything a user or
/// another process may read meanwhile goes through [`write_atomic`] / [`replace_atomic`].
pub fn write_scratch(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    #[allow(clippy::disallowed_methods)] // the one home of in-place writes of scratch files
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn write_whole(dest: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    // Through a link to its file, as a plain write would (the rename would replace the link).
    let resolved;
    let dest = match std::fs::symlink_metadata(dest) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(dest) {
            Ok(p) => {
                resolved = p;
                resolved.as_path()
            }
            Err(_) => dest,
        },
        _ => dest,
    };
    if let Ok(m) = std::fs::metadata(dest) {
        if m.is_dir() {
            bail!("cannot write {}: it is a folder", dest.display());
        }
        if !m.is_file() {
            return OpenOptions::new()
                .write(true)
                .open(dest)
                .and_then(|mut f| f.write_all(bytes))
                .with_context(|| format!("cannot write {}", dest.display()));
        }
    }
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = temp_path(dest);
    let written = (|| -> io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, dest)?;
        if durable {
            sync_dir(dir)?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", dest.display()));
    }
    Ok(())
}

/// Whether process `pid` exists on this machine.
fn alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    // Signal 0: the process exists (and may be signalled, or is someone else's).
    matches!(
        rustix::process::test_kill_process(pid),
        Ok(()) | Err(rustix::io::Errno::PERM)
    )
}

/// Whether `name` is a temporary file that no live writer will rename any more.
fn stale(name: &str, path: &Path, host: &str) -> bool {
    let old = || {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > STALE_AFTER)
    };
    if let Some(rest) = name.strip_prefix(TEMP_PREFIX) {
        let mut parts = rest.splitn(3, '.');
        let (pid, _seq, h) = (parts.next(), parts.next(), parts.next());
        let ours = h == Some(host);
        return match pid.and_then(|p| p.parse::<i32>().ok()) {
            Some(pid) if ours => (pid as u32 != std::process::id() && !alive(pid)) || old(),
            _ => old(),
        };
    }
    // `.tmpXXXXXX`: the `tempfile` crate's names, which earlier versions used.
    let legacy = name
        .strip_prefix(".tmp")
        .is_some_and(|r| r.len() == 6 && r.chars().all(|c| c.is_ascii_alphanumeric()));
    legacy && old()
}

/// Remove, under `root` (recursively; links are not followed), the temporary files left by
/// writes that were cut short: ours of processes that are gone, and any older than an hour.
/// Returns how many were removed. A missing `root` has none.
pub fn sweep_stale_temps(root: &Path) -> Result<usize> {
    fn walk(dir: &Path, host: &str, removed: &mut usize) -> Result<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                walk(&path, host, removed)?;
                continue;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if ft.is_file() && name.starts_with(".tmp") && stale(&name, &path, host) {
                match std::fs::remove_file(&path) {
                    Ok(()) => *removed += 1,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("cannot remove {}", path.display()))
                    }
                }
            }
        }
        Ok(())
    }
    let mut removed = 0;
    walk(root, &host_name(), &mut removed)?;
    Ok(removed)
}

/// The exclusive right to write a folder, held until dropped (or until the process dies:
/// the system releases the lock then, whatever the way it ended).
#[derive(Debug)]
pub struct FolderLock {
    file: Option<File>,
    path: PathBuf,
    /// The outermost of the folder and its parents that did not exist before: removed again
    /// on drop, down from the folder, as far as the run left them empty.
    created: Option<PathBuf>,
    /// The holder recorded by an earlier run that ended without releasing the folder (it
    /// was killed): "pid 123 on node7 since 2024-05-01 10:00:00 UTC: convcode run".
    pub interrupted: Option<String>,
    /// Set when the file system cannot lock (then the run goes ahead unguarded).
    pub warning: Option<String>,
}

impl FolderLock {
    /// Lock `dir` (created when missing) for `what` (the command, for the refusal another
    /// run prints). Refuses when another live process holds it.
    pub fn acquire(dir: &Path, what: &str) -> Result<FolderLock> {
        let created = dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(LOCK_FILE);
        // A holder may remove the file between our open and our lock: retry on a new file.
        for _ in 0..20 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    bail!(
                        "{} is being written by another run ({}): two runs writing one folder \
                         would write its records twice. Wait for that run to end or stop it \
                         (kill its process, or `scancel` its job), then run the same command \
                         again: it resumes the folder. If that run is gone (its node failed) and \
                         the lock stays, remove {} and run again",
                        dir.display(),
                        if holder.is_empty() {
                            "it has not said who it is yet"
                        } else {
                            holder
                        },
                        path.display()
                    );
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Ok(FolderLock {
                        file: None,
                        path,
                        created: None,
                        interrupted: None,
                        warning: Some(format!(
                            "cannot lock {} ({e}): make sure no other run writes this folder at the same time",
                            dir.display()
                        )),
                    });
                }
            }
            let same = match (file.metadata(), std::fs::metadata(&path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            };
            if !same {
                continue;
            }
            let mut before = String::new();
            let _ = file.read_to_string(&mut before);
            let interrupted = Some(before.trim().to_string()).filter(|s| !s.is_empty());
            let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
            let me = format!(
                "pid {} on {} since {now}: {what}\n",
                std::process::id(),
                host_name()
            );
            file.set_len(0)
                .and_then(|_| file.rewind())
                .and_then(|_| file.write_all(me.as_bytes()))
                .and_then(|_| file.sync_data())
                .with_context(|| format!("cannot write {}", path.display()))?;
            return Ok(FolderLock {
                file: Some(file),
                path,
                created,
                interrupted,
                warning: None,
            });
        }
        bail!(
            "cannot lock {}: its lock file keeps changing",
            path.display()
        )
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            // Removed while still locked, so no other run can take a file about to vanish.
            let _ = std::fs::remove_file(&self.path);
            drop(f);
            if let Some(top) = &self.created {
                // Only empty folders go (a run that stopped before writing anything).
                for dir in self.path.ancestors().skip(1) {
                    if std::fs::remove_dir(dir).is_err() || dir == top {
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("b.json")]);
        // Through a link, the file it names is replaced.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        write_atomic(&link, b"three").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        // A device is written to, never replaced.
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
        assert!(Path::new("/dev/null").exists());
        let e = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(format!("{e:#}").contains("it is a folder"), "{e:#}");
    }

    #[test]
    fn sweep_removes_dead_writers_temps_only() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("x/y");
        std::fs::create_dir_all(&sub).unwrap();
        let host = host_name();
        // A process that has ended: a child we waited for.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_tmp = sub.join(format!("{TEMP_PREFIX}{dead}.0.{host}"));
        let live_tmp = sub.join(format!("{TEMP_PREFIX}{}.0.{host}", std::process::id()));
        let foreign = sub.join(format!("{TEMP_PREFIX}{dead}.0.other-host"));
        let legacy = sub.join(".tmpAbC123");
        let keep = sub.join("data.json");
        for p in [&dead_tmp, &live_tmp, &foreign, &legacy, &keep] {
            std::fs::write(p, "x").unwrap();
        }
        assert_eq!(sweep_stale_temps(dir.path()).unwrap(), 1);
        assert!(!dead_tmp.exists());
        // Young files of a live process, of another machine or of unknown origin stay.
        for p in [&live_tmp, &foreign, &legacy, &keep] {
            assert!(p.exists(), "{} removed", p.display());
        }
        assert_eq!(sweep_stale_temps(&dir.path().join("missing")).unwrap(), 0);
    }

    #[test]
    fn one_writer_per_folder_and_a_killed_holder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let lock = FolderLock::acquire(dir.path(), "convcode run").unwrap();
        assert!(lock.interrupted.is_none());
        // flock locks belong to the open file: a second open in this process conflicts too.
        let e = FolderLock::acquire(dir.path(), "convcode bench").unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("being written by another run") && e.contains("convcode run"),
            "{e}"
        );
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists(), "released on drop");
        // Folders it made and nothing was written to are removed again, not the others.
        let deep = dir.path().join("new/deeper");
        drop(FolderLock::acquire(&deep, "x").unwrap());
        assert!(!dir.path().join("new").exists());
        let kept = FolderLock::acquire(&deep, "x").unwrap();
        std::fs::write(deep.join("out.json"), "{}").unwrap();
        drop(kept);
        assert!(deep.join("out.json").exists());
        // A holder that died leaves its file unlocked: the next run takes it and says so.
        std::fs::write(
            dir.path().join(LOCK_FILE),
            "pid 1 on h since t: convcode run\n",
        )
        .unwrap();
        let lock = FolderLock::acquire(dir.path(), "convcode run").unwrap();
        assert_eq!(
            lock.interrupted.as_deref(),
            Some("pid 1 on h since t: convcode run")
        );
    }
}
