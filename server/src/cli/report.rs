//! `pivot-lsp report`: score files to one self-contained HTML page. Parsing and printing
//! only; the page is built by `pivot_report`.

use crate::cli::shared::report_page::into_folder;
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `pivot-lsp report` (its help text is on the subcommand in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Score files (JSON), in the order they should appear.
    #[arg(value_name = "SCORES.json", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write the page (replaced atomically if it exists; a folder gets
    /// `report.html` in it) [default:
    /// .pivot/report.html, where the editor's "Open Report" writes it; `.pivot/` is the
    /// folder Pivot LSP keeps its state in, and git-ignored in this repository]
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The page's title.
    #[arg(long, value_name = "T")]
    pub title: Option<String>,
}

/// Where `report` writes without --output (and the editor's `pivot.report.open` always).
pub const DEFAULT_OUTPUT: &str = ".pivot/report.html";

pub fn run(a: ReportArgs) -> Result<i32> {
    let inputs = pivot_report::read_inputs(&a.inputs)?;
    let html = pivot_report::build(&inputs, a.title.as_deref())?;
    // Not into the current folder unasked: a checkout would gain an untracked report.html.
    let (output, default) = match a.output {
        Some(p) => (p, ""),
        None => (
            PathBuf::from(DEFAULT_OUTPUT),
            " (the default; --output FILE writes elsewhere)",
        ),
    };
    let output = into_folder(output);
    pivot_report::write(&output, &html)?;
    eprintln!(
        "wrote {}{default} ({} inputs, {} KB)",
        output.display(),
        inputs.len(),
        html.len().div_ceil(1024)
    );
    Ok(0)
}

/// Time `report` on N score files (the given ones repeated, each copy named apart).
#[derive(clap::Args, Debug)]
pub struct BenchReportArgs {
    /// Score files [default: MemoryCode's reference scores in ../shared/memorycode/reference]
    #[arg(value_name = "SCORES.json")]
    pub inputs: Vec<PathBuf>,
    /// How many inputs the report is built from (the files above, cycled).
    #[arg(long, default_value_t = 20)]
    pub files: usize,
    /// Timed runs after one warm-up run.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

pub fn bench_report(a: BenchReportArgs) -> Result<i32> {
    use std::time::Instant;
    let given = if a.inputs.is_empty() {
        let dir = PathBuf::from("../shared/memorycode/reference");
        vec![dir.join("gpt-4o.json"), dir.join("command-r-plus.json")]
    } else {
        a.inputs.clone()
    };
    let read = pivot_report::read_inputs(&given)?;
    // Each copy carries its own model name, as 20 different models' files would.
    let inputs: Vec<pivot_report::Input> = (0..a.files.max(1))
        .map(|k| {
            let base = &read[k % read.len()];
            let mut v: serde_json::Value = serde_json::from_slice(&base.bytes).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                let m = o
                    .get("model")
                    .and_then(|m| m.as_str())
                    .unwrap_or("model")
                    .to_string();
                o.insert("model".into(), format!("{m} #{k}").into());
            }
            pivot_report::Input {
                name: format!("{k}-{}", base.name),
                bytes: serde_json::to_vec_pretty(&v).unwrap_or_else(|_| base.bytes.clone()),
            }
        })
        .collect();
    let bytes: usize = inputs.iter().map(|i| i.bytes.len()).sum();
    let out = tempfile::tempdir()?;
    let target = out.path().join("report.html");
    // The peer, timed in the same loop: reading the inputs' JSON and hashing them, the
    // part any report of these files pays; the rest is charts and the page.
    let peer = || {
        for i in &inputs {
            let _: serde_json::Value = serde_json::from_slice(&i.bytes).unwrap_or_default();
            let _ = pivot_report::input::sha256_hex(&i.bytes);
        }
    };
    let mut size = pivot_report::build(&inputs, None)?.len();
    let (mut times, mut peers) = (Vec::new(), Vec::new());
    for _ in 0..a.runs.max(1) {
        let t = Instant::now();
        let html = pivot_report::build(&inputs, None)?;
        pivot_report::write(&target, &html)?;
        times.push(t.elapsed().as_secs_f64());
        size = html.len();
        let t = Instant::now();
        peer();
        peers.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    peers.sort_by(f64::total_cmp);
    let (median, peer_median) = (times[times.len() / 2], peers[peers.len() / 2]);
    println!(
        "report from {} score files ({:.1} MB of JSON) -> {:.1} MB of HTML",
        inputs.len(),
        bytes as f64 / 1e6,
        size as f64 / 1e6
    );
    println!(
        "wall time: median {median:.3} s, min {:.3} s, max {:.3} s over {} runs (target: under 1 s, {:.1}x margin)",
        times[0],
        times[times.len() - 1],
        times.len(),
        1.0 / median
    );
    println!(
        "peer, same runs: parsing and hashing the inputs alone {peer_median:.3} s (report / peer {:.1}x)",
        median / peer_median.max(1e-9)
    );
    Ok(0)
}
