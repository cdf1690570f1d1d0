//! `pivot-lsp merge`: joins the outputs of `--shard K/N` runs. Reading files and printing
//! only; the checks and the merge are in `bench::shard` and the benchmarks' merge modules.

use super::score_cmd::Format;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// Merge the outputs of sharded runs (`--shard K/N`) into the unsharded run's output.
///
/// SHARD files are the JSON of `score memorycode --shard K/N --format json` or of
/// `exec --shard K/N --format json`: the result is what one unsharded run prints
/// (MemoryCode aggregates recomputed from the per-dialogue scores; exec `eval` maps joined
/// and the summary recomputed; its "date" is the latest shard's). Nothing is printed
/// unless every shard 1..N of the same input is there exactly once and finished: each
/// problem is named.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  for k in 1 2 3; do pivot-lsp score memorycode --shard $k/3 --format json > s$k.json; done\n  \
pivot-lsp merge s1.json s2.json s3.json --format table"
)]
pub struct MergeArgs {
    /// Shard outputs (JSON), in any order.
    #[arg(value_name = "SHARD", required = true)]
    pub shards: Vec<PathBuf>,
    /// Output format (exec results: json, or a one-line summary for table / markdown).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

pub fn run(a: MergeArgs) -> Result<i32> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in &a.shards {
        let name = path.display().to_string();
        match crate::bounded_read::read_to_string(path) {
            Err(e) => problems.push(format!("{name}: cannot read it ({e:#})")),
            Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(v) => files.push((name, v)),
                Err(e) => problems.push(format!(
                    "{name}: not valid JSON ({e}): an unfinished shard? re-run it"
                )),
            },
        }
    }
    if !problems.is_empty() {
        bail!("cannot merge:\n  {}", problems.join("\n  "));
    }
    let memorycode = files
        .iter()
        .filter(|(_, v)| crate::bench::memorycode::merge::is_memorycode(v))
        .count();
    let exec = files
        .iter()
        .filter(|(_, v)| crate::bench::exec_shards::is_exec(v))
        .count();
    if memorycode == files.len() {
        let report = crate::bench::memorycode::merge::merge(&files)?;
        match a.format {
            Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json(true))?),
            Format::Table => print!("{}", report.to_table(false)),
            Format::Markdown => print!("{}", report.to_markdown(false)),
        }
        return Ok(if report.skipped.is_empty() { 0 } else { 1 });
    }
    if exec == files.len() {
        let all = crate::bench::exec_shards::merge(&files)?;
        let s = all.summary.clone().unwrap_or_default();
        match a.format {
            Format::Json => println!("{}", serde_json::to_string_pretty(&all)?),
            Format::Table | Format::Markdown => println!(
                "{} tasks: {} pass, {} fail, {} timeout; pass@1 = {:.1}%",
                s.total,
                s.pass,
                s.fail,
                s.timeout,
                s.pass_at_1 * 100.0
            ),
        }
        return Ok(0);
    }
    let kinds: Vec<String> = files
        .iter()
        .map(|(name, v)| {
            let kind = if crate::bench::memorycode::merge::is_memorycode(v) {
                "a MemoryCode score"
            } else if crate::bench::exec_shards::is_exec(v) {
                "exec results"
            } else {
                "neither a MemoryCode score nor exec results"
            };
            format!("{name}: {kind}")
        })
        .collect();
    Err(anyhow::anyhow!(
        "cannot merge different kinds of output:\n  {}",
        kinds.join("\n  ")
    ))
    .context("give the shards of one command")
}
