//! What the bench commands measure besides wall time: peak resident memory, of this process
//! and of each child run side by side (ours and the peer's alike, the same way).

use anyhow::{bail, Context, Result};
use std::process::{Command, Stdio};
use std::time::Instant;

/// User + system CPU seconds of this process so far.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Peak resident set size of this process in KiB (Linux).
pub fn peak_rss() -> Option<u64> {
    let status = pivot_base::kernel_file::read("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak RSS of the largest child process this process has waited for, in KiB
/// (`RUSAGE_CHILDREN`; descendants a child waited for count too).
pub fn children_peak_rss() -> Option<u64> {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return None;
    }
    u64::try_from(u.ru_maxrss).ok().filter(|&k| k > 0)
}

/// "123 MB" from KiB, or "unknown".
pub fn mb(kib: Option<u64>) -> String {
    kib.map_or("unknown".into(), |k| format!("{:.0} MB", k as f64 / 1024.0))
}

/// One run of `cmd` (stdout discarded, stderr kept for the error): its wall time in seconds
/// and its peak RSS in KiB (the largest of it and the descendants it waited for, from
/// `wait4`). The command must exit 0. A child counts this process's resident memory until
/// its exec (it is spawned with vfork), so run the measurement from a small process (the
/// bench commands are one).
pub fn run_child(cmd: &mut Command, what: &str) -> Result<(f64, u64)> {
    let stderr = tempfile::tempfile()?;
    let t = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(stderr.try_clone()?)
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {what}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes only into the two values we pass; the child is ours and is
    // reaped here (the `Child` handle is not waited on after this).
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = loop {
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut u) };
        if rc == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break rc;
    };
    let secs = t.elapsed().as_secs_f64();
    drop(child);
    if rc != pid {
        bail!("waiting for {what}: {}", std::io::Error::last_os_error());
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        use std::io::{Read, Seek};
        let mut f = stderr;
        let mut text = String::new();
        f.seek(std::io::SeekFrom::Start(0))?;
        f.take(64 * 1024).read_to_string(&mut text)?;
        bail!("{what} failed (wait status {status}): {text}");
    }
    Ok((secs, u64::try_from(u.ru_maxrss).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_peak_memory_is_its_own() {
        // A child that holds 64 MiB reports at least that; a plain `true` far less.
        let (_, big) = run_child(
            Command::new("python3").args([
                "-c",
                "b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096])",
            ]),
            "python3",
        )
        .unwrap();
        let (_, small) = run_child(&mut Command::new("true"), "true").unwrap();
        assert!(big >= 64 * 1024, "{big} KiB");
        // Until its exec, a child spawned with vfork (as `Command` spawns) shares this
        // process's memory, and the kernel counts that in the child's peak: `true` reports
        // at most this process's own peak (which other tests running beside this one raise).
        let ours = pivot_base::kernel_file::read("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap();
        assert!(
            small < (32 * 1024).max(ours + 1024),
            "{small} KiB (ours {ours} KiB)"
        );
        let err = run_child(&mut Command::new("false"), "false").unwrap_err();
        assert!(err.to_string().contains("false failed"), "{err}");
    }
}
