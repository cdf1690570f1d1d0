//! `pivot-lsp bench ...`: one subcommand per measured command. Each bench's flags and
//! timing live with the command it times (`bench check` in check/bench.rs, `bench exec` in
//! exec.rs, ...), so that a change to a command and to its bench are read together; this
//! file only names them and prints the memory every bench ends with. `bench lsp` times the
//! language server, which has no command folder of its own here.

mod lsp;

use anyhow::Result;

#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Time MemoryCode scoring of one model's outputs (default: the shared gpt-4o outputs).
    Memorycode(crate::cli::score::BenchMemorycodeArgs),
    /// Time all HumanEval canonical solutions with the runner against one fresh python3 per task.
    Exec(crate::cli::exec::BenchExecArgs),
    /// Time the ConvCodeWorld live loop against an instant loopback model.
    Convcode(crate::cli::convcode::BenchConvcodeArgs),
    /// Language server latency: one-character edit -> new diagnostics, incremental vs full re-parse.
    Lsp(lsp::BenchLspArgs),
    /// `pivot-lsp check` over a Python tree (default: python3's standard library) with ten
    /// pivots, side by side with `ruff check --select N`.
    Check(crate::cli::check::bench::BenchCheckArgs),
    /// Build an HTML report from 20 score files (default: the shared MemoryCode reference scores).
    Report(crate::cli::report::BenchReportArgs),
}

pub fn run(c: BenchCommand) -> Result<i32> {
    let code = match c {
        BenchCommand::Memorycode(a) => crate::cli::score::bench_memorycode(a),
        BenchCommand::Exec(a) => crate::cli::exec::bench_exec(a),
        BenchCommand::Convcode(a) => crate::cli::convcode::bench_convcode(a),
        BenchCommand::Lsp(a) => lsp::run(a),
        BenchCommand::Check(a) => crate::cli::check::bench::bench_check(a),
        BenchCommand::Report(a) => crate::cli::report::bench_report(a),
    }?;
    // Every bench ends with its memory: this process, and the largest process it waited for
    // (a server, a sandbox, or the peer: per tool where the bench says so above).
    use crate::cli::shared::measure::{children_peak_rss, mb, peak_rss};
    println!(
        "peak RSS: this process {}; largest child process {}",
        mb(peak_rss()),
        mb(children_peak_rss())
    );
    Ok(code)
}
