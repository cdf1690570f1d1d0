//! Running the CLI under watch for the hostile-input and scale tests: a time limit (the
//! child is killed past it and the test fails), its peak resident memory (each process's
//! `VmHWM` in /proc, read every few milliseconds while it runs, for it and for the
//! language servers it starts; `ru_maxrss` would count the test process it was forked
//! from), the same peak of a process still running (a language server under attack), and a
//! FIFO maker.

use super::cli::EXE;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Per case: the bounds.
pub const TIME: Duration = Duration::from_secs(10);
pub const RSS_MB: u64 = 500;

pub struct Run {
    pub code: Option<i32>,
    /// The first `keep` bytes of stdout (see `run`), and how many bytes there were in all.
    pub stdout: String,
    pub stdout_len: u64,
    pub stderr: String,
    pub took: Duration,
    /// The largest peak of any one process of the run (the command or a child of it).
    pub peak_rss_mb: u64,
}

/// `VmHWM` of `pid` in kB, if it is still running.
fn hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The peak resident memory (`VmHWM`) of the running process `pid`, in MB.
pub fn peak_rss_mb(pid: u32) -> u64 {
    hwm_kb(pid).unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status")) / 1024
}

/// `pid` and its descendants.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        let children = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children"));
        out.extend(
            children
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
        i += 1;
    }
    out
}

impl Run {
    /// Both streams, for assertion messages.
    pub fn out(&self) -> String {
        format!(
            "exit {:?} after {:?}, {} MB peak\nstdout: {}\nstderr: {}",
            self.code, self.took, self.peak_rss_mb, self.stdout, self.stderr
        )
    }
}

pub fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().expect("mkfifo");
    assert!(st.success());
}

/// Run `pivot-lsp args` in `dir` with `stdin` (a file, or nothing), killed after `limit`
/// (then the test fails). Keeps the first `keep` bytes of stdout and counts the rest.
pub fn run_in(
    dir: &Path,
    args: &[&str],
    stdin: Option<&Path>,
    limit: Duration,
    keep: usize,
) -> Run {
    let mut cmd = Command::new(EXE);
    cmd.args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).expect("stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    let t = Instant::now();
    let mut child = cmd.spawn().expect("start pivot-lsp");
    let pid = child.id();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let (mut kept, mut total, mut buf) = (Vec::new(), 0u64, vec![0u8; 1 << 16]);
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
            let room = keep.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        (kept, total)
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let mut peak_kb = 0;
    let status = loop {
        // Read before reaping: a reaped process has no /proc entry.
        for p in process_tree(pid) {
            peak_kb = peak_kb.max(hwm_kb(p).unwrap_or(0));
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pivot-lsp {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = t.elapsed();
    let (kept, stdout_len) = out_reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&kept).into_owned(),
        stdout_len,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took,
        peak_rss_mb: peak_kb / 1024,
    }
}

/// `run_in` with the time bound, keeping all of stdout up to 16 MB.
pub fn run(dir: &Path, args: &[&str]) -> Run {
    run_in(dir, args, None, TIME, 16 << 20)
}

/// Asserts the run ended within the bounds and returns it.
pub fn bounded(r: Run, what: &str) -> Run {
    eprintln!(
        "{what}: exit {:?}, {:.2} s, {} MB peak RSS",
        r.code,
        r.took.as_secs_f64(),
        r.peak_rss_mb
    );
    assert!(r.took < TIME, "{what}: {}", r.out());
    assert!(r.peak_rss_mb < RSS_MB, "{what}: {}", r.out());
    r
}
