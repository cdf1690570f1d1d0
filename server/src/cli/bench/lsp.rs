//! `pivot-lsp bench lsp`: the flags and the printing; the measurement is the server's own
//! (`lsp::bench`), timed in-process on its edit path.

use anyhow::Result;
use serde_json::json;

use crate::lsp::bench;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchLspArgs {
    /// Lines of the generated Python file.
    #[arg(long, default_value_t = 2000)]
    pub lines: usize,
    /// Edits timed per mode (one character each, inserted then deleted in turn).
    #[arg(long, default_value_t = 1000)]
    pub edits: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Time only this mode (e.g. to count instructions of one under callgrind).
    #[arg(long, value_parser = crate::cli::shared::choice::parser::<bench::Only>(bench::Only::CHOICES))]
    pub only: Option<bench::Only>,
    /// Keep N other processes busy meanwhile (each a `yes > /dev/null`), to see the latency
    /// while the machine's cores are taken: `--busy 2` on a 2-core machine.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub busy: usize,
    /// Pause this many milliseconds before each edit (not timed), as between keystrokes
    /// (10 keys a second is 100 ms). Default: edits back to back, which on a busy machine
    /// times the scheduler sharing a core between processes that never wait, not typing.
    #[arg(long, value_name = "MS")]
    pub pace_ms: Option<u64>,
}

/// Processes that keep cores busy until dropped.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start(n: usize) -> Result<Busy> {
        let mut kids = Vec::with_capacity(n);
        for _ in 0..n {
            let child = std::process::Command::new("yes")
                .stdout(std::process::Stdio::null())
                .spawn()
                .map_err(|e| anyhow::anyhow!("--busy: cannot start `yes`: {e}"))?;
            kids.push(child);
        }
        Ok(Busy(kids))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for k in &mut self.0 {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}

/// The command: run and print.
pub fn run(a: BenchLspArgs) -> Result<i32> {
    let busy = Busy::start(a.busy)?;
    let r = bench::run(&bench::BenchLspOptions {
        lines: a.lines,
        edits: a.edits,
        only: a.only,
        pace: a.pace_ms.map(std::time::Duration::from_millis),
    })?;
    drop(busy);
    if a.json {
        let timings: Vec<_> = r
            .timings
            .iter()
            .map(|t| json!({"mode": t.mode, "p50_us": t.p50_us, "p99_us": t.p99_us, "mean_us": t.mean_us, "max_us": t.max_us,
                "request_p50_us": t.request_p50_us, "request_p99_us": t.request_p99_us, "request_max_us": t.request_max_us}))
            .collect();
        let out = json!({"lines": r.lines, "pivots": r.pivots, "diagnostics": r.diagnostics, "edits": a.edits, "fast_edits": r.fast_edits, "busy": a.busy, "pace_ms": a.pace_ms, "timings": timings});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "one-character edits, in-process: {} lines, {} active pivots, {} diagnostics, {} one-character edits per mode{}",
            r.lines,
            r.pivots,
            r.diagnostics,
            a.edits,
            match (a.busy, a.pace_ms) {
                (0, None) => String::new(),
                (0, Some(p)) => format!(", {p} ms apart"),
                (b, None) => format!(", while {b} other processes keep cores busy"),
                (b, Some(p)) => format!(
                    ", {p} ms apart, while {b} other processes keep cores busy"
                ),
            }
        );
        if a.only.is_none_or(|o| o == bench::Only::Incremental) {
            println!(
                "incremental: {} of {} edits analysed from the edited statement alone (the whole tree re-parsed when asked for)",
                r.fast_edits, a.edits
            );
        }
        println!(
            "request: what didChange does before it returns (the edit applied to the text and the pending tree); to diagnostics: the edit, its analysis and the diagnostics, published in the background"
        );
        println!(
            "{:<26} {:>13} {:>13} {:>13} {:>10} {:>10} {:>10} {:>10}",
            "mode",
            "request p50",
            "request p99",
            "request max",
            "diag p50",
            "diag p99",
            "diag mean",
            "diag max"
        );
        for t in &r.timings {
            println!(
                "{:<26} {:>10.3} ms {:>10.3} ms {:>10.3} ms {:>7.3} ms {:>7.3} ms {:>7.3} ms {:>7.3} ms",
                t.mode,
                t.request_p50_us / 1e3,
                t.request_p99_us / 1e3,
                t.request_max_us / 1e3,
                t.p50_us / 1e3,
                t.p99_us / 1e3,
                t.mean_us / 1e3,
                t.max_us / 1e3
            );
        }
    }
    Ok(0)
}
