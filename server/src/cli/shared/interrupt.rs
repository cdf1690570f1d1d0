//! Ctrl-C and SIGTERM for the long commands: the run stops cleanly and says how to go on.
//!
//! Without a handler the process dies where it is: its workers' memory cgroups stay behind
//! (one per worker, never removed), the folder lock stays, and nothing is said. With it, the
//! handler thread freezes the process's descendants (workers and their tasks: SIGSTOP, so a
//! worker's death cannot be reported, and recorded, as a task's failure), gives the memory
//! cgroups back, removes the folder locks the command holds, prints what to do, kills the
//! frozen processes and exits with 128 + the signal (130 for SIGINT, 143 for SIGTERM), as a
//! shell reports a process a signal ended. What was written before stays: the long commands
//! write each record whole, and a later run resumes from them.

use pivot_base::durable::LOCK_FILE;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The lock files the command holds, removed on interruption.
static LOCKS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// What an interrupted command can do next.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Then {
    /// It writes as it goes: the same command resumes.
    Resume,
    /// It writes at the end only: the same command starts over.
    StartOver,
}

/// Installs the handler for this process (call once, before the run starts).
pub(crate) fn install(then: Then) {
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            // The run still works; it just cannot clean up after a signal.
            eprintln!("warning: cannot handle Ctrl-C ({e}): an interrupted run leaves its lock and cgroups");
            return;
        }
    };
    std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                stop(sig, then);
            }
        })
        .ok();
}

/// Registers the lock of `dir` (a [`pivot_base::durable::FolderLock`] the command holds).
pub(crate) fn hold_lock(dir: &Path) {
    LOCKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.join(LOCK_FILE));
}

fn stop(sig: i32, then: Then) -> ! {
    use rustix::process::{kill_process, Pid, Signal};
    let signal = |pids: &[i32], s: Signal| {
        for &pid in pids {
            if let Some(p) = Pid::from_raw(pid) {
                let _ = kill_process(p, s);
            }
        }
    };
    // Frozen parents first would leave a child free to fork: read the tree until it holds
    // no process not yet stopped.
    let mut frozen: Vec<i32> = Vec::new();
    for _ in 0..10 {
        let fresh: Vec<i32> = descendants(std::process::id() as i32)
            .into_iter()
            .filter(|p| !frozen.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        signal(&fresh, Signal::STOP);
        frozen.extend(fresh);
    }
    frozen.extend(pivot_exec::cgroup::release_all());
    for lock in LOCKS.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = std::fs::remove_file(lock);
    }
    let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
    // A progress bar may hold the line: start a new one.
    match then {
        Then::Resume => eprintln!("\ninterrupted ({name}); run the same command again to resume"),
        Then::StartOver => eprintln!(
            "\ninterrupted ({name}); nothing was written: run the same command again to start over"
        ),
    }
    signal(&frozen, Signal::KILL);
    std::process::exit(128 + sig)
}

/// Every process below `root` (by parent pid, from /proc).
fn descendants(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(ppid) = parent(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if !out.contains(&c) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

/// The parent pid of `pid`: the field after the command name in /proc/PID/stat (the name is
/// in parentheses and may hold any character, so the last `)` ends it).
fn parent(pid: i32) -> Option<i32> {
    let stat = pivot_base::kernel_file::read(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_found_below_this_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let found = descendants(std::process::id() as i32);
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&(child.id() as i32)), "{found:?}");
    }
}
