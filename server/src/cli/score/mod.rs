//! `pivot-lsp score ...` (and `bench memorycode`, which times `score memorycode`): argument
//! parsing and printing only.

pub mod convcode;
mod via_lsp;

use crate::cli::shared::format::Format;
use crate::cli::shared::progress::Progress;
use anyhow::Result;
use pivot_bench::memorycode::score_dirs::{score_dirs, score_dirs_shard, Detail};
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
    Convcode(convcode::ScoreConvcodeArgs),
}

#[derive(clap::Args, Debug)]
pub struct MemorycodeArgs {
    /// Folder of dialogue_N.json files (give --outputs too) [default: the demo built into
    /// the binary, fixtures/memorycode/dataset]
    #[arg(long, requires = "outputs", value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// Folder of output_N.json files (give --dataset too) [default: the demo built into
    /// the binary, fixtures/memorycode/outputs/demo-model]
    #[arg(long, requires = "dataset", value_name = "DIR")]
    pub outputs: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the score of every session index.
    #[arg(long)]
    pub per_session: bool,
    /// Score through the language server (a `pivot-lsp serve` child per thread, driven
    /// over stdio as an editor): the same output, proving the editor agrees.
    #[arg(long)]
    pub via_lsp: bool,
    /// Model name written in the JSON's "model" [default: the --outputs folder's name]
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Also write an HTML report of these scores (as `pivot-lsp report` does) to FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "shard")]
    pub report: Option<PathBuf>,
    /// Score only shard K of N (1-based; dialogues dealt round robin by sorted id) and
    /// write JSON that `pivot-lsp merge` joins into the unsharded run's output (needs
    /// --format json).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<pivot_bench::shard::Shard>,
}

#[derive(clap::Args, Debug)]
pub struct BenchMemorycodeArgs {
    /// Folder of dialogue_N.json files.
    #[arg(
        long,
        default_value = "../shared/memorycode/dataset",
        value_name = "DIR"
    )]
    pub dataset: PathBuf,
    /// Folder of output_N.json files.
    #[arg(
        long,
        default_value = "../shared/memorycode/outputs/gpt-4o",
        value_name = "DIR"
    )]
    pub outputs: PathBuf,
    /// Timed runs after one warm-up run (at least 1).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// MemoryCode's `code/` folder: also time its evaluate_model_output.py on the same data,
    /// once, after our runs, and print the ratio. Without it no ratio is printed.
    #[arg(long, value_name = "DIR")]
    pub original: Option<PathBuf>,
    /// Interpreter for --original (needs numpy and fire).
    #[arg(long, default_value = "python3", value_name = "PY")]
    pub python: PathBuf,
    /// Time `score memorycode --via-lsp` against the direct scorer instead (alternating runs).
    #[arg(long, conflicts_with = "original")]
    pub via_lsp: bool,
}

pub fn run(c: ScoreCommand) -> Result<i32> {
    match c {
        ScoreCommand::Memorycode(a) => score_memorycode(a),
        ScoreCommand::Convcode(a) => convcode::run_score(a),
    }
}

/// An outputs folder with no `output_N.json` at all is the wrong folder (typically the
/// parent of the model folders): one error, not a skip line per dialogue and a table of
/// dashes. The model folders inside it, if any, are named.
fn refuse_empty_outputs(outputs: &std::path::Path) -> Result<()> {
    use pivot_bench::memorycode::score_dirs::listing_order;
    if !outputs.is_dir() || !listing_order(outputs).is_empty() {
        return Ok(());
    }
    let mut inside: Vec<String> = std::fs::read_dir(outputs)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir() && !listing_order(&e.path()).is_empty())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    inside.sort();
    let hint = match inside.len() {
        0 => String::new(),
        n => format!(
            " (its folder{} {} hold{} them: pass one of those)",
            if n == 1 { "" } else { "s" },
            inside
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if n == 1 { "s" } else { "" }
        ),
    };
    anyhow::bail!(
        "no output_N.json in {}: is --outputs the model's folder?{hint}",
        outputs.display()
    )
}

fn score_memorycode(a: MemorycodeArgs) -> Result<i32> {
    // With neither folder, the demo built into the binary (clap requires both or none).
    let demo = match a.dataset {
        None => Some(crate::cli::shared::bundled::memorycode_demo()?),
        Some(_) => None,
    };
    let (dataset, outputs) = match (&demo, a.dataset, a.outputs) {
        (Some(d), _, _) => (d.dataset.clone(), d.outputs.clone()),
        (None, Some(d), Some(o)) => (d, o),
        (None, _, _) => anyhow::bail!("--dataset and --outputs go together"),
    };
    if a.shard.is_some() && a.format != Format::Json {
        anyhow::bail!("--shard writes a shard for `pivot-lsp merge`: add --format json");
    }
    let files = pivot_bench::memorycode::data::dialogue_files(&dataset)?;
    refuse_empty_outputs(&outputs)?;
    let (files, _) = pivot_bench::memorycode::data::one_file_per_id(files);
    let ids: Vec<u32> = files.iter().map(|(id, _)| *id).collect();
    let n = a.shard.map_or(ids.len(), |s| s.select(&ids).len());
    let progress = Progress::new(n as u64, "scoring");
    let mut report = if a.via_lsp {
        via_lsp::score_via_lsp(&dataset, &outputs, &|| progress.inc(1), a.shard)?
    } else {
        score_dirs_shard(&dataset, &outputs, &|| progress.inc(1), a.shard)?
    };
    progress.finish();
    if let Some(name) = a.model_name {
        report.model = name;
    }
    if let Some(path) = &a.report {
        let json = report.to_json(true);
        crate::cli::shared::report_page::write_one(
            &json,
            &format!("memorycode-{}.json", report.model),
            path,
        )?;
    }
    if let Some(shard) = a.shard {
        let file = pivot_bench::memorycode::merge::shard_file(&report, shard, &ids);
        println!("{}", serde_json::to_string_pretty(&file)?);
        return Ok(if report.skipped.is_empty() { 0 } else { 1 });
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_file(true))?),
        Format::Table => print!("{}", report.to_table(a.per_session)),
        Format::Markdown => print!("{}", report.to_markdown(a.per_session)),
    }
    if a.format != Format::Json {
        if demo.is_some() {
            eprintln!(
                "scored the bundled demo fixtures (fixtures/memorycode: dataset and \
                 outputs/demo-model, built into the binary); pass --dataset and --outputs for real data"
            );
        }
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

pub fn bench_memorycode(a: BenchMemorycodeArgs) -> Result<i32> {
    use std::time::Instant;
    if a.via_lsp {
        return via_lsp::bench_via_lsp(&a.dataset, &a.outputs, a.runs as usize);
    }
    let run = || -> Result<(f64, f64, usize)> {
        let (t, cpu) = (Instant::now(), crate::cli::shared::measure::cpu_seconds());
        let (report, _) = score_dirs(&a.dataset, &a.outputs, Detail::ScoresOnly, &|| {})?;
        Ok((
            t.elapsed().as_secs_f64(),
            crate::cli::shared::measure::cpu_seconds() - cpu,
            report.answers,
        ))
    };
    let runs = Progress::new(a.runs as u64 + 1, "scoring runs");
    let (_, _, answers) = run()?;
    runs.inc(1);
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..a.runs {
        let (wall, cpu, _) = run()?;
        times.push(wall);
        cpus.push(cpu);
        runs.inc(1);
    }
    runs.finish();
    times.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
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
    // The floor: the parse alone of what the scorer parses, best of three.
    use pivot_bench::memorycode::floor;
    let codes = floor::distinct_codes(&a.dataset, &a.outputs)?;
    let mut parse_secs: Vec<f64> = (0..3)
        .map(|_| floor::parse_time(&codes).as_secs_f64())
        .collect();
    parse_secs.sort_by(f64::total_cmp);
    let distinct = codes.len();
    println!(
        "floor: tree-sitter's parse alone of the {distinct} distinct code blocks scored, {} threads: {:.3} s (best of 3); the scorer is {:.2}x its floor",
        rayon::current_num_threads(),
        parse_secs[0],
        median / parse_secs[0].max(1e-9)
    );
    println!(
        "peak RSS of the scorer (this process, before any peer runs): {}",
        crate::cli::shared::measure::mb(crate::cli::shared::measure::peak_rss())
    );
    // A ratio only against the original measured now, on this machine, on the same data.
    match &a.original {
        Some(dir) => {
            let phase = Progress::phase("original evaluator");
            let timed = pivot_bench::memorycode::original::time_original(
                dir, &a.dataset, &a.outputs, &a.python,
            );
            phase.finish();
            let (wall, scores) = timed?;
            let secs = wall.as_secs_f64();
            println!("original evaluator (same data, this run): {secs:.2} s wall; its macro scores: {scores}");
            println!("ratio: {:.1}x (original / our median)", secs / median);
        }
        None => println!(
            "no ratio: pass --original DIR (MemoryCode's code/ folder) to time the original evaluator side by side"
        ),
    }
    Ok(0)
}
