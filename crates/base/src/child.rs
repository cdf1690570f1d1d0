//! A child process with a deadline: the one way the core waits for a program it started
//! and stops it when its time is up, with the process group it leads when it was started
//! with `process_group(0)` (so that what it started goes too).
//!
//! The wait sleeps in `poll(2)` on a pidfd, woken the moment the child exits (a polling loop
//! either wakes late or spins); where pidfds are missing (Linux before 5.3) it polls
//! `try_wait` with a short sleep instead.

use std::io;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Whether the child leads its own process group (started with `process_group(0)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Own,
    Inherited,
}

/// SIGKILL to the child's process group (best effort: the group may be gone already).
pub fn kill_group(child: &Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Wait for `child` at most `limit`. `Some(status)` when it exited in time; `None` when it
/// did not, and was then killed (its group too with `Group::Own`) and reaped.
pub fn wait_or_kill(
    child: &mut Child,
    limit: Duration,
    group: Group,
) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    if let Some(s) = wait_until(child, deadline)? {
        return Ok(Some(s));
    }
    if group == Group::Own {
        kill_group(child);
    }
    let _ = child.kill();
    child.wait()?;
    Ok(None)
}

/// The child's status if it exits before `deadline`.
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let pidfd = rustix::process::Pid::from_raw(child.id() as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        match &pidfd {
            Some(fd) => {
                let t = Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: left.subsec_nanos() as _,
                };
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                match poll(&mut fds, Some(&t)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            None => std::thread::sleep(left.min(Duration::from_millis(5))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn a_child_that_exits_in_time_gives_its_status_at_once() {
        let mut c = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let t = Instant::now();
        let s = wait_or_kill(&mut c, Duration::from_secs(20), Group::Inherited).unwrap();
        assert_eq!(s.and_then(|s| s.code()), Some(3));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "woken at the exit, not the deadline"
        );
    }

    #[test]
    fn past_the_deadline_the_child_and_its_group_are_killed() {
        // The shell starts a grandchild in its group that would outlive it.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let mut c = Command::new("sh")
            .args([
                "-c",
                &format!("sleep 60 & echo $! > {}; wait", pidfile.display()),
            ])
            .process_group(0)
            .spawn()
            .unwrap();
        while std::fs::read_to_string(&pidfile).map_or(true, |s| s.trim().is_empty()) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let t = Instant::now();
        let s = wait_or_kill(&mut c, Duration::from_millis(200), Group::Own).unwrap();
        assert!(s.is_none(), "timed out");
        assert!(t.elapsed() < Duration::from_secs(10));
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..200).any(|_| {
            let dead = std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                .map_or(true, |s| s.split_whitespace().nth(2) == Some("Z"));
            if !dead {
                std::thread::sleep(Duration::from_millis(10));
            }
            dead
        });
        assert!(gone, "the group's other process was killed too");
    }
}
