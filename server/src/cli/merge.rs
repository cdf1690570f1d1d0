//! `pivot-lsp merge`: joins the outputs of `--shard K/N` runs. Reading files and printing
//! only; the checks and the merge are in `bench::shard` and the benchmarks' merge modules.

use crate::cli::shared::check_format::CheckReport;
use crate::cli::shared::format::Format;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

/// Merge the outputs of sharded runs (`--shard K/N`) into the unsharded run's output.
///
/// SHARD files are the JSON of `score memorycode --shard K/N --format json`, of
/// `exec --shard K/N --format json` or of `check --shard K/N --format json`: the result is what one unsharded run prints
/// (MemoryCode aggregates recomputed from the per-dialogue scores; exec `eval` maps joined
/// and the summary recomputed; its "date" is the latest shard's; check findings joined in
/// path order).
///
/// With `--results OUT`, the SHARDs are the `--results` folders of `convcode run|bench
/// --shard K/N`, joined into OUT in the original's layout: every file as an unsharded run
/// writes it (records in its order, evaluation keys in its order, the latest "date"; the
/// response caches joined; the shards' `pivot-shard.json` left out).
///
/// Nothing is written unless every shard 1..N of the same input is there exactly once and
/// finished (and OUT is new or empty): each problem is named. Joined check shards exit 1
/// when there are findings, as `check` does.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  for k in 1 2 3; do pivot-lsp score memorycode --shard $k/3 --format json > s$k.json; done\n  \
pivot-lsp merge s1.json s2.json s3.json --format table\n  \
for k in 1 2 3; do pivot-lsp convcode run --model M --shard $k/3 --results r$k; done\n  \
pivot-lsp merge --results convcode-results r1 r2 r3"
)]
pub struct MergeArgs {
    /// Shard outputs (JSON files; with --results, results folders), in any order.
    #[arg(value_name = "SHARD", required = true)]
    pub shards: Vec<PathBuf>,
    /// Join ConvCodeWorld / ConvCodeBench shard folders into this new or empty folder.
    #[arg(long, value_name = "OUT")]
    pub results: Option<PathBuf>,
    /// Output format (exec results: json, or a one-line summary for table / markdown).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

pub fn run(a: MergeArgs) -> Result<i32> {
    if let Some(out) = &a.results {
        let m = pivot_bench::convcode::merge::merge_results(&a.shards, out)?;
        println!(
            "merged {} shards into {}: {} files, {} log records",
            m.shards,
            out.display(),
            m.files,
            m.records
        );
        return Ok(0);
    }
    if let Some(d) = a
        .shards
        .iter()
        .find(|p| pivot_bench::convcode::merge::is_shard_dir(p))
    {
        bail!(
            "{} is a shard's results folder: join folders with `pivot-lsp merge --results OUT DIR...`",
            d.display()
        );
    }
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in &a.shards {
        let name = path.display().to_string();
        match pivot_base::bounded_read::read_to_string(path) {
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
    if !files.is_empty() && files.iter().all(|(_, v)| is_check(v)) {
        let v = merge_json(&files)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        // As `check` itself: 1 when there are findings, so a merge job can gate a pipeline.
        let found = !v.findings.is_empty();
        return Ok(if found { 1 } else { 0 });
    }
    let memorycode = files
        .iter()
        .filter(|(_, v)| pivot_bench::memorycode::merge::is_memorycode(v))
        .count();
    let exec = files
        .iter()
        .filter(|(_, v)| pivot_bench::exec_shards::is_exec(v))
        .count();
    if memorycode == files.len() {
        let report = pivot_bench::memorycode::merge::merge(&files)?;
        match a.format {
            Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json(true))?),
            Format::Table => print!("{}", report.to_table(false)),
            Format::Markdown => print!("{}", report.to_markdown(false)),
        }
        return Ok(if report.skipped.is_empty() { 0 } else { 1 });
    }
    if exec == files.len() {
        let all = pivot_bench::exec_shards::merge(&files)?;
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
            let kind = if pivot_bench::memorycode::merge::is_memorycode(v) {
                "a MemoryCode score"
            } else if pivot_bench::exec_shards::is_exec(v) {
                "exec results"
            } else if is_check(v) {
                "a check shard"
            } else {
                "neither a MemoryCode score, exec results nor a check shard"
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

/// Whether a parsed JSON file is a `check` shard.
fn is_check(v: &Value) -> bool {
    v["shard"]["input"]["benchmark"] == "check"
}

/// Joins `check --shard K/N --format json` outputs (name, parsed JSON) into the unsharded
/// run's JSON. Every file is in one shard and findings are sorted by path first (check's `report::sort`),
/// so the shards' findings, each shard's in its order, stably sorted by path are the
/// unsharded order.
fn merge_json(files: &[(String, Value)]) -> anyhow::Result<CheckReport> {
    let order = pivot_bench::shard::merge_order(files)?;
    let mut merged: Option<CheckReport> = None;
    let mut findings = Vec::new();
    for &i in &order {
        let (name, v) = &files[i];
        let part = CheckReport::deserialize(v)
            .map_err(|e| anyhow::anyhow!("{name}: not a `check --format json` shard ({e})"))?;
        findings.extend(part.findings.iter().cloned());
        merged.get_or_insert(part);
    }
    findings.sort_by(|a, b| a.path.cmp(&b.path));
    let first = merged.expect("check_set refuses an empty set");
    Ok(CheckReport {
        findings,
        shard: None,
        ..first
    })
}
