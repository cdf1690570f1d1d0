//! `pivot-lsp score ...` and `pivot-lsp bench ...`: argument parsing and printing only.

use super::Progress;
use crate::bench::memorycode::score::{score_dirs, Detail};
use anyhow::Result;
use clap::ValueEnum;
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub enum ScoreCommand {
    /// MemoryCode's four scores (short history, long history, session, instruction).
    ///
    /// Scores every `dialogue_N.json` of --dataset against `output_N.json` of --outputs.
    /// A dialogue whose files are missing or malformed is listed as skipped (exit code 1)
    /// and the rest are scored. With neither flag, scores the bundled fixtures.
    Memorycode(MemorycodeArgs),
    /// ConvCodeWorld / ConvCodeBench: Pass@1 per turn, MRR and Recall (the original's Tables 1 and 2).
    Convcode(super::score_convcode::ScoreConvcodeArgs),
}

#[derive(clap::Args, Debug)]
pub struct MemorycodeArgs {
    /// Folder of dialogue_N.json files [default: the bundled fixtures/memorycode/dataset]
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Folder of output_N.json files [default: the bundled fixtures/memorycode/outputs/demo-model]
    #[arg(long)]
    pub outputs: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the score of every session index.
    #[arg(long)]
    pub per_session: bool,
    /// Model name written in the JSON's "model" [default: the --outputs folder's name]
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Also write an HTML report of these scores (as `pivot-lsp report` does) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
}

#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Time MemoryCode scoring of one model's outputs (default: the shared gpt-4o outputs).
    Memorycode(BenchMemorycodeArgs),
    /// Time all HumanEval canonical solutions with the runner against one fresh python3 per task.
    Exec(super::exec_cmd::BenchExecArgs),
    /// Time the ConvCodeWorld live loop against an instant loopback model.
    Convcode(super::convcode_cmd::BenchConvcodeArgs),
    /// Language server latency: one-character edit -> new diagnostics, incremental vs full re-parse.
    Lsp(crate::lsp::bench::BenchLspArgs),
    /// Build an HTML report from 20 score files (default: the shared MemoryCode reference scores).
    Report(super::report_cmd::BenchReportArgs),
}

#[derive(clap::Args, Debug)]
pub struct BenchMemorycodeArgs {
    #[arg(long, default_value = "../shared/memorycode/dataset")]
    pub dataset: PathBuf,
    #[arg(long, default_value = "../shared/memorycode/outputs/gpt-4o")]
    pub outputs: PathBuf,
    /// Timed runs after one warm-up run.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

pub fn run(c: ScoreCommand) -> Result<i32> {
    match c {
        ScoreCommand::Memorycode(a) => score_memorycode(a),
        ScoreCommand::Convcode(a) => super::score_convcode::run_score(a),
    }
}

pub fn run_bench(c: BenchCommand) -> Result<i32> {
    match c {
        BenchCommand::Memorycode(a) => bench_memorycode(a),
        BenchCommand::Exec(a) => super::exec_cmd::bench_exec(a),
        BenchCommand::Convcode(a) => super::convcode_cmd::bench_convcode(a),
        BenchCommand::Lsp(a) => crate::lsp::bench::bench_lsp(a),
        BenchCommand::Report(a) => super::report_cmd::bench_report(a),
    }
}

/// A bundled fixture path: relative to the working directory when run from the checkout,
/// else next to the crate the binary was built from.
pub fn bundled(rel: &str) -> PathBuf {
    let here = PathBuf::from(rel);
    if here.exists() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

fn score_memorycode(a: MemorycodeArgs) -> Result<i32> {
    let dataset = a
        .dataset
        .unwrap_or_else(|| bundled("fixtures/memorycode/dataset"));
    let outputs = a
        .outputs
        .unwrap_or_else(|| bundled("fixtures/memorycode/outputs/demo-model"));
    let n = crate::bench::memorycode::data::dialogue_files(&dataset)?.len();
    let progress = Progress::new(n as u64, "scoring");
    let (mut report, _) = score_dirs(&dataset, &outputs, Detail::ScoresOnly, &|| progress.inc(1))?;
    progress.finish();
    if let Some(name) = a.model_name {
        report.model = name;
    }
    if let Some(path) = &a.report {
        let json = report.to_json(true);
        super::report_cmd::write_one(&json, &format!("memorycode-{}.json", report.model), path)?;
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json(true))?),
        Format::Table => print!("{}", report.to_table(a.per_session)),
        Format::Markdown => print!("{}", report.to_markdown(a.per_session)),
    }
    if a.format != Format::Json {
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        for s in &report.skipped {
            eprintln!("skipped dialogue {}: {}", s.id, s.reason);
        }
        eprintln!(
            "{} dialogues scored, {} skipped; {} answers, {} scorings",
            report.dialogues.len(),
            report.skipped.len(),
            report.answers,
            report.scorings
        );
    }
    Ok(if report.skipped.is_empty() { 0 } else { 1 })
}

fn bench_memorycode(a: BenchMemorycodeArgs) -> Result<i32> {
    use std::time::Instant;
    let run = || -> Result<(f64, f64, usize)> {
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let (report, _) = score_dirs(&a.dataset, &a.outputs, Detail::ScoresOnly, &|| {})?;
        Ok((
            t.elapsed().as_secs_f64(),
            cpu_seconds() - cpu,
            report.answers,
        ))
    };
    let (_, _, answers) = run()?;
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..a.runs.max(1) {
        let (wall, cpu, _) = run()?;
        times.push(wall);
        cpus.push(cpu);
    }
    times.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    // The original evaluator's figure on this machine kind (memorycode-scoring.md §6).
    let baseline = 71.0;
    println!(
        "MemoryCode scoring: {} ({answers} answers)",
        a.outputs.display()
    );
    println!("threads: {}", rayon::current_num_threads());
    println!(
        "wall time: median {median:.3} s, min {:.3} s, max {:.3} s over {} runs",
        times[0],
        times[times.len() - 1],
        times.len()
    );
    // CPU time does not depend on what else the machine runs: CPU / threads is the wall
    // time on otherwise idle cores.
    let cpu = cpus[cpus.len() / 2];
    println!(
        "CPU time: median {cpu:.3} s (user+sys), i.e. {:.3} s on {} idle cores",
        cpu / rayon::current_num_threads() as f64,
        rayon::current_num_threads()
    );
    println!("answers/s: {:.0}", answers as f64 / median);
    println!(
        "peak RSS: {}",
        peak_rss().map_or("unknown".into(), |kb| format!(
            "{:.1} MB",
            kb as f64 / 1024.0
        ))
    );
    println!(
        "baseline: original Python evaluator, {baseline:.0} s (fastest measured, spec §6); speed-up {:.0}x",
        baseline / median
    );
    Ok(0)
}

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
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
