//! `pivot-lsp score convcode`: Pass@1 per turn, MRR and Recall of a ConvCodeWorld results folder.

use pivot_bench::convcode::config::{Layout, DEFAULT_SIMULATOR};
use pivot_bench::convcode::{metrics, score_file, table};
use pivot_exec::feedback::{compilation_many, NO_SYNTAX_ERRORS};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ScoreFormat {
    /// The tables for a terminal: configurations without numbers left out, and split to fit
    /// 100 columns.
    Table,
    Json,
    Markdown,
    /// The tables exactly as the original's print_results.py prints them (every
    /// configuration, one line per turn, however wide).
    Original,
}

/// The width `table` output keeps to.
const WIDTH: usize = 100;

/// Score ConvCodeWorld (live) or ConvCodeBench (static) results, printed as the original's Tables 1 and 2.
#[derive(clap::Args, Debug)]
pub struct ScoreConvcodeArgs {
    /// The original's working directory: the folder holding `bigcodebench/` and `results/`
    /// (`convcode run`'s default).
    #[arg(long, default_value = "convcode-results", value_name = "DIR")]
    pub results: PathBuf,
    /// Model whose results are scored (as named in the file names, `/` allowed).
    #[arg(long, value_name = "M")]
    pub model: String,
    /// Score ConvCodeBench (static replay against --ref-model) instead of ConvCodeWorld.
    #[arg(long = "static", requires = "ref_model")]
    pub static_mode: bool,
    /// Reference model of ConvCodeBench.
    #[arg(long, value_name = "R")]
    pub ref_model: Option<String>,
    /// Feedback simulator named in the file names (`_by_{SIM}` when it differs from the model).
    #[arg(long, default_value = DEFAULT_SIMULATOR, value_name = "SIM")]
    pub simulator: String,
    /// `--exclude_init_solved` of the original's print_results.py: leave the tasks the model
    /// solves at its own turn 0 out of MRR and Recall (Table 2); Pass@1 (Table 1) is unchanged.
    #[arg(long)]
    pub exclude_init_solved: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScoreFormat::Table)]
    pub format: ScoreFormat,
    /// Also write an HTML report of these scores (as `pivot-lsp report` does) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Interpreter used to check that turn-0 code compiles.
    #[arg(long, default_value = "python3")]
    pub python: String,
}

pub fn run_score(args: ScoreConvcodeArgs) -> anyhow::Result<i32> {
    if !args.results.is_dir() {
        anyhow::bail!("results folder {} does not exist", args.results.display());
    }
    let req = metrics::ScoreRequest {
        layout: Layout::new(&args.results, &args.simulator),
        model: args.model.clone(),
        reference: if args.static_mode {
            args.ref_model.clone()
        } else {
            None
        },
    };
    let python = args.python.clone();
    let check = move |codes: &[&str]| -> anyhow::Result<Vec<bool>> {
        Ok(compilation_many(std::path::Path::new(&python), codes)?
            .into_iter()
            .map(|f| f == NO_SYNTAX_ERRORS)
            .collect())
    };
    let opts = metrics::ScoreOptions {
        exclude_init_solved: args.exclude_init_solved,
    };
    let scores = metrics::score_with(&req, Some(&check), opts)?;
    let json = score_file::to_json(&scores)?;
    if let Some(path) = &args.report {
        crate::cli::shared::report_page::write_one(&json, &score_file::file_name(&scores), path)?;
    }
    let out = match args.format {
        ScoreFormat::Table => compact_text(&scores),
        ScoreFormat::Original => table::render_text(&scores),
        ScoreFormat::Json => serde_json::to_string_pretty(&json)? + "\n",
        ScoreFormat::Markdown => table::render_markdown(&scores),
    };
    print!("{out}");
    if matches!(args.format, ScoreFormat::Table) {
        let empty = empty_columns(&scores);
        if !empty.is_empty() {
            println!(
                "note: not run, left out of the tables: {} (--format original prints every configuration)",
                empty.join(", ")
            );
        }
    }
    // Notes go under the table (the JSON carries them in `notes`).
    if !matches!(args.format, ScoreFormat::Json) {
        for n in &scores.notes {
            println!("note: {n}");
        }
    }
    Ok(0)
}

/// The labels of the configurations with no number at any turn (not run).
fn empty_columns(s: &score_file::Scores) -> Vec<String> {
    s.columns
        .iter()
        .filter(|c| c.pass_at_1.iter().all(Option::is_none) && c.mrr.is_none())
        .map(|c| c.label.clone())
        .collect()
}

/// Tables 1 and 2 in the original's style, without the columns of configurations that were
/// not run, each split into tables of at most [`WIDTH`] characters (the first column, the
/// turn or the metric, repeated in each).
fn compact_text(s: &score_file::Scores) -> String {
    let empty = empty_columns(s);
    let keep = |header: &[String]| -> Vec<usize> {
        (0..header.len())
            .filter(|&i| i == 0 || !empty.contains(&header[i]))
            .collect()
    };
    let (h1, r1) = table::table1(s);
    let (h2, r2) = table::table2(s);
    format!(
        "{}\n{}\n{}\n\n{}\n{}\n\n",
        split_tables(&h1, &r1, &keep(&h1)),
        table::caption1(s),
        table::LEGEND,
        split_tables(&h2, &r2, &keep(&h2)),
        table::caption2(s)
    )
}

/// `header` and `rows` restricted to the columns `keep` (the first one first), as framed
/// tables one under the other, each at most [`WIDTH`] wide when its columns allow.
fn split_tables(header: &[String], rows: &[Vec<String>], keep: &[usize]) -> String {
    let width = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i))
            .chain(std::iter::once(&header[i]))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
            + 3
    };
    let Some((&first, rest)) = keep.split_first() else {
        return String::new();
    };
    let mut chunks: Vec<Vec<usize>> = Vec::new();
    let mut used = 1 + width(first);
    for &i in rest {
        match chunks.last_mut() {
            Some(chunk) if used + width(i) <= WIDTH => chunk.push(i),
            _ => {
                chunks.push(vec![first, i]);
                used = 1 + width(first);
            }
        }
        used += width(i);
    }
    if chunks.is_empty() {
        chunks.push(vec![first]);
    }
    let pick = |row: &[String], cols: &[usize]| -> Vec<String> {
        cols.iter()
            .map(|&i| row.get(i).cloned().unwrap_or_default())
            .collect()
    };
    chunks
        .iter()
        .map(|cols| {
            let rows: Vec<Vec<String>> = rows.iter().map(|r| pick(r, cols)).collect();
            table::pretty_table(&pick(header, cols), &rows)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
