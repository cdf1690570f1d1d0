//! What the commands that run model code (`exec`, `feedback`, `bench exec`, `convcode`)
//! share: the `--sandbox` choice, the Hub options their problems load with, and the runner
//! started with the sandbox in force said, so that each says it the same way.

use anyhow::Result;
use clap::ValueEnum;
use pivot_exec::{Runner, RunnerConfig, Sandbox, SandboxMode, NO_SANDBOX_WARNING};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// bubblewrap; refuse to run (exit 2, with the reason and the fix) when it does not work.
    Bwrap,
    /// No filesystem or network isolation (explicit opt-out, warned about): still a non-root
    /// user, a clean environment and resource limits.
    None,
}

impl SandboxArg {
    pub fn mode(self) -> SandboxMode {
        match self {
            SandboxArg::Bwrap => SandboxMode::Bwrap,
            SandboxArg::None => SandboxMode::None,
        }
    }
}

/// The Hub as the environment says, offline when `offline` asks for it too.
pub fn hub_options(offline: bool) -> pivot_exec::hub::HubOptions {
    let mut o = pivot_exec::hub::HubOptions::from_env();
    o.offline |= offline;
    o
}

/// Starts the runner and says on stderr which sandbox is in force (loudly when none).
pub fn start_runner(config: RunnerConfig) -> Result<Runner> {
    let runner = Runner::new(config)?;
    if runner.sandbox() == Sandbox::None {
        eprintln!("{NO_SANDBOX_WARNING}");
    }
    eprintln!("sandbox: {}", runner.sandbox_note());
    Ok(runner)
}
