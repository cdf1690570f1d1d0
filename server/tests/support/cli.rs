//! The binary under test run as a command: where the checkout is, how the binary is started
//! (stdin closed, so that nothing waits on a terminal) and what a run must have ended with.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The binary under test.
pub const EXE: &str = env!("CARGO_BIN_EXE_pivot-lsp");

/// The `SOURCE_DATE_EPOCH` of `reproducible` runs.
pub const EPOCH: &str = "1700000000";

/// The checkout: the folder holding `server/`, `fixtures/` and `docs/` (without a `..` in
/// it, so that messages naming paths below it read as a user's would).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the server crate sits in the checkout")
        .to_path_buf()
}

/// `pivot-lsp` in `dir`, with stdin closed; its arguments still to add.
pub fn binary_in(dir: &Path) -> Command {
    let mut c = Command::new(EXE);
    c.current_dir(dir).stdin(Stdio::null());
    c
}

/// `pivot-lsp ARGS` in `dir`, with stdin closed.
pub fn command<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    let mut c = binary_in(dir);
    c.args(args);
    c
}

/// `command` with `SOURCE_DATE_EPOCH` set: the dates the run writes are the same in every
/// run, so two result trees can be compared byte for byte.
pub fn reproducible<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    let mut c = command(dir, args);
    c.env("SOURCE_DATE_EPOCH", EPOCH);
    c
}

/// `pivot-lsp check ARGS` in `root` to the end, its cache's secret in the test's own folder
/// (`root/../xdg`), not the user's home, and no cache folder from the environment.
pub fn check(root: &Path, args: &[&str]) -> Output {
    binary_in(root)
        .arg("check")
        .args(args)
        .env("XDG_CACHE_HOME", root.join("../xdg"))
        .env_remove("PIVOT_CACHE_DIR")
        .output()
        .expect("run pivot-lsp check")
}

/// Runs `pivot-lsp ARGS` in `dir` to the end.
pub fn pivot<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    command(dir, args).output().expect("the binary runs")
}

/// Runs `cmd` to the end. The target folder is shared with other builds, which may be
/// relinking the binary at this moment ("text file busy"): the start is retried for 10 s.
pub fn output_retrying(cmd: &mut Command) -> Output {
    let mut last = None;
    for _ in 0..40 {
        match cmd.output() {
            Ok(o) => return o,
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("cannot start pivot-lsp: {:?}", last)
}

/// Bytes as text, invalid UTF-8 replaced (for messages and searches).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A run's stdout as text; it must be UTF-8.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

/// A run's stderr as text; it must be UTF-8.
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// `out`, once asserted to have exited 0; else `what`, the status and stderr fail the test.
pub fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what}: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    out
}

/// The stdout of `out`, once asserted to have exited with one of `codes` (1 is how the
/// scorers say that something was skipped).
pub fn stdout_if(out: Output, codes: &[i32], what: &str) -> Vec<u8> {
    assert!(
        codes.contains(&out.status.code().unwrap_or(-1)),
        "{what}: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    out.stdout
}

/// The build's target folder, where what is built once for the tests is kept (tools,
/// interpreters' environments).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .to_path_buf()
}

/// Sends `SIG{signal}` (`INT`, `TERM`) to a long command started with its stderr in
/// `err_path`, and checks how an interrupted command ends: exit `code` (128 + the signal),
/// and a line saying it was interrupted and how to go on. Returns its stderr.
pub fn interrupt(
    child: &mut std::process::Child,
    signal: &str,
    code: i32,
    err_path: &Path,
) -> String {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(err_path).unwrap();
    assert_eq!(status.code(), Some(code), "SIG{signal}: {err}");
    assert!(
        err.contains(&format!("interrupted (SIG{signal})"))
            && err.contains("run the same command again"),
        "{err}"
    );
    err
}
