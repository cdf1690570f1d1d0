//! The embedded Python harness (the package `harness/pivot_harness/`) and its one-shot modes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// The harness package's modules, by dotted name (`harness/pivot_harness/*.py`).
const MODULES: &[(&str, &str)] = &[
    (
        "pivot_harness",
        include_str!("harness/pivot_harness/__init__.py"),
    ),
    (
        "pivot_harness.base",
        include_str!("harness/pivot_harness/base.py"),
    ),
    (
        "pivot_harness.cleanup",
        include_str!("harness/pivot_harness/cleanup.py"),
    ),
    (
        "pivot_harness.evaluator_env",
        include_str!("harness/pivot_harness/evaluator_env.py"),
    ),
    (
        "pivot_harness.hardening",
        include_str!("harness/pivot_harness/hardening.py"),
    ),
    (
        "pivot_harness.humaneval_task",
        include_str!("harness/pivot_harness/humaneval_task.py"),
    ),
    (
        "pivot_harness.isolation",
        include_str!("harness/pivot_harness/isolation.py"),
    ),
    (
        "pivot_harness.main",
        include_str!("harness/pivot_harness/main.py"),
    ),
    (
        "pivot_harness.protocol",
        include_str!("harness/pivot_harness/protocol.py"),
    ),
    (
        "pivot_harness.report",
        include_str!("harness/pivot_harness/report.py"),
    ),
    (
        "pivot_harness.streams",
        include_str!("harness/pivot_harness/streams.py"),
    ),
    (
        "pivot_harness.sysv_ipc",
        include_str!("harness/pivot_harness/sysv_ipc.py"),
    ),
    (
        "pivot_harness.task_process",
        include_str!("harness/pivot_harness/task_process.py"),
    ),
    (
        "pivot_harness.task_run",
        include_str!("harness/pivot_harness/task_run.py"),
    ),
    (
        "pivot_harness.unittest_task",
        include_str!("harness/pivot_harness/unittest_task.py"),
    ),
    (
        "pivot_harness.zygote",
        include_str!("harness/pivot_harness/zygote.py"),
    ),
];

/// The version of the request protocol (`protocol.py` `VERSION`): every request names it
/// and the zygote refuses any other.
pub(crate) const PROTOCOL_VERSION: u32 = 5;

/// Imports the package from the sources embedded below it (nothing is written to disk, so
/// the sandbox binds nothing for it) and runs `main()`. Each module's file name is
/// `<pivot_harness>/NAME.py`, which tracebacks show.
const LOADER: &str = r#"
import importlib.abc, importlib.util, sys
class _PivotHarness(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name in SOURCES:
            return importlib.util.spec_from_loader(name, self, is_package=(name == "pivot_harness"))
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        name = module.__name__
        if name == "pivot_harness":
            module.__path__ = []
        file = "<pivot_harness>/" + name.split(".")[-1] + ".py"
        module.__file__ = file
        exec(compile(SOURCES[name], file, "exec", dont_inherit=True), module.__dict__)
sys.meta_path.insert(0, _PivotHarness())
from pivot_harness.main import main
main()
"#;

/// The `python -c` program: the sources as a dict literal (JSON strings are Python string
/// literals), then the loader. Built once per process.
pub(crate) fn program() -> &'static str {
    static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(|| {
        let sources: serde_json::Map<String, serde_json::Value> = MODULES
            .iter()
            .map(|(name, src)| (name.to_string(), serde_json::Value::from(*src)))
            .collect();
        format!("SOURCES = {}\n{LOADER}", serde_json::Value::Object(sources))
    })
}

/// One `python -c HARNESS compile` call: `None` when a program compiles, else the traceback.
pub(crate) fn compile_all(python: &Path, codes: &[&str]) -> Result<Vec<Option<String>>> {
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let input = serde_json::to_vec(codes)?;
    let stdout = run_mode(python, "compile", &input)?;
    let out: Vec<Option<String>> = serde_json::from_slice(&stdout)
        .context("the compile harness printed something that is not its JSON answer")?;
    if out.len() != codes.len() {
        bail!(
            "the compile harness answered {} of {} programs",
            out.len(),
            codes.len()
        );
    }
    Ok(out)
}

/// Runs the harness in `mode` with `input` on stdin and returns its stdout.
pub(crate) fn run_mode(python: &Path, mode: &str, input: &[u8]) -> Result<Vec<u8>> {
    let mut child = Command::new(python)
        .args(["-c", program(), mode])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    // Writing from another thread: the child may fill its stdout pipe before reading all input.
    let mut stdin = child.stdin.take().context("no stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child
        .wait_with_output()
        .with_context(|| format!("waiting for {}", python.display()))?;
    let _ = writer.join();
    if !out.status.success() {
        bail!(
            "{} -c <harness> {mode} failed ({}): {}",
            python.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_fits_in_one_argument() {
        // Linux refuses a single argument longer than 128 KiB (MAX_ARG_STRLEN).
        assert!(program().len() < 120 * 1024, "{} bytes", program().len());
    }

    #[test]
    fn every_module_of_the_package_is_embedded() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/harness/pivot_harness");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter_map(|n| n.strip_suffix(".py").map(str::to_string))
            .map(|n| match n.as_str() {
                "__init__" => "pivot_harness".to_string(),
                m => format!("pivot_harness.{m}"),
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = MODULES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn the_protocol_versions_agree() {
        let proto = MODULES
            .iter()
            .find(|(n, _)| *n == "pivot_harness.protocol")
            .unwrap()
            .1;
        assert!(proto.contains(&format!("VERSION = {PROTOCOL_VERSION}\n")));
    }
}
