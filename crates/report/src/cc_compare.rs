//! ConvCodeWorld / ConvCodeBench with models side by side: per configuration, Pass@1 per
//! turn with one line per model (turn 0 included); the models x configurations tables of
//! MRR and Recall as the papers lay them out; and, for models scored on both, the
//! ConvCodeBench - ConvCodeWorld gap.

use super::charts::{self, Axis, Series};
use super::csv;
use super::figure::{Figure, Table};
use super::input::{is_static, present, Column, Convcode};
use pivot_bench::convcode::numeric::py_float;

/// One score file of a benchmark, with its label.
pub struct Run<'a> {
    pub label: &'a str,
    pub scores: &'a Convcode,
}

fn cell(v: Option<f64>) -> String {
    v.map(py_float).unwrap_or_default()
}

/// The configurations any run has results for, in the first run's column order (all runs
/// list the same configurations, in the original's order).
fn configs(runs: &[Run]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in runs {
        for c in present(r.scores) {
            if !out.iter().any(|(code, _)| *code == c.config) {
                out.push((c.config.clone(), c.label.clone()));
            }
        }
    }
    out
}

fn column<'a>(r: &'a Run, config: &str) -> Option<&'a Column> {
    present(r.scores).find(|c| c.config == config)
}

/// Pass@1 by turn.
type Curve = Vec<(u64, Option<f64>)>;

/// A run's Pass@1 by turn, turn 0 included: a live run's first row; for a static replay,
/// the reference model's turn 0 from the score file (`turn0`, absent in older files).
fn by_turn(r: &Run, col: &Column) -> Curve {
    let mut out: Curve = r
        .scores
        .turns
        .iter()
        .map(|&t| t as u64)
        .zip(col.pass_at_1.iter().copied())
        .collect();
    if is_static(r.scores) && !r.scores.turns.contains(&0) {
        let t0 = r.scores.turn0.as_ref().map(|t| t.reference_pass_at_1);
        out.insert(0, (0, t0));
    }
    out
}

/// The Pass@1 figures, one per configuration.
pub fn pass_figures(bench: &str, runs: &[Run]) -> Result<Vec<Figure>, String> {
    let pct = Axis {
        label: "Pass@1 (%)".into(),
        max: 100.0,
        decimals: 0,
    };
    let mut figs = Vec::new();
    for (code, label) in configs(runs) {
        let with: Vec<(&Run, Curve)> = (runs.iter())
            .filter_map(|r| Some((r, by_turn(r, column(r, &code)?))))
            .collect();
        let mut turns: Vec<u64> = with
            .iter()
            .flat_map(|(_, v)| v.iter().map(|(t, _)| *t))
            .collect();
        turns.sort_unstable();
        turns.dedup();
        let at =
            |v: &[(u64, Option<f64>)], t: u64| v.iter().find(|(x, _)| *x == t).and_then(|p| p.1);
        let series: Vec<Series> = with
            .iter()
            .map(|(r, v)| Series {
                name: r.label.to_string(),
                values: turns.iter().map(|t| at(v, *t)).collect(),
            })
            .collect();
        let title = format!("{bench} Pass@1 per turn: {label}");
        let mut header = vec!["Turn".to_string()];
        header.extend(with.iter().map(|(r, _)| r.label.to_string()));
        let rows = turns
            .iter()
            .map(|t| {
                std::iter::once(t.to_string())
                    .chain(with.iter().map(|(_, v)| cell(at(v, *t))))
                    .collect()
            })
            .collect();
        let mut notes = Vec::new();
        if with.iter().any(|(r, _)| is_static(r.scores)) {
            notes.push("ConvCodeBench's turn 0 is the reference model's turn-0 code, which every replayed conversation starts from (the original's Table 1 starts at turn 1).".to_string());
        }
        if with
            .iter()
            .any(|(r, v)| is_static(r.scores) && v[0].1.is_none())
        {
            notes.push("A ConvCodeBench score file without \"turn0\" (written before it existed) has no turn-0 point; score the folder again to add it.".to_string());
        }
        let mut csv_rows = Vec::new();
        for (r, v) in &with {
            for (t, p) in v {
                csv_rows.push(vec![
                    r.label.to_string(),
                    code.clone(),
                    label.clone(),
                    t.to_string(),
                    csv::num(*p),
                ]);
            }
        }
        figs.push(Figure {
            name: format!("{}-pass-at-1-{}", bench.to_lowercase(), code.to_lowercase()),
            svg: charts::lines(&title, "turn", &turns, &pct, &series)?,
            caption: format!(
                "Pass@1 (%) of each model at each turn of {bench} with {label}, as the original's Table 1 computes it."
            ),
            table: Table { header, rows },
            notes,
            csv: csv::write(&["model", "config", "label", "turn", "pass_at_1"], &csv_rows),
        });
    }
    Ok(figs)
}

/// MRR and Recall: one figure each, models as series over the configurations, the table
/// under it with models as rows and configurations as columns (the papers' layout).
pub fn mrr_recall_figures(bench: &str, runs: &[Run]) -> Result<Vec<Figure>, String> {
    let configs: Vec<(String, String)> = configs(runs)
        .into_iter()
        .filter(|(code, _)| {
            runs.iter()
                .any(|r| column(r, code).is_some_and(|c| c.mrr.is_some()))
        })
        .collect();
    if configs.is_empty() {
        return Ok(Vec::new());
    }
    let labels: Vec<String> = configs.iter().map(|(_, l)| l.clone()).collect();
    let mut figs = Vec::new();
    for (metric, pick) in [
        ("MRR", (|c: &Column| c.mrr) as fn(&Column) -> Option<f64>),
        ("Recall", |c: &Column| c.recall),
    ] {
        let value = |r: &Run, code: &str| column(r, code).and_then(pick);
        let series: Vec<Series> = runs
            .iter()
            .map(|r| Series {
                name: r.label.to_string(),
                values: configs.iter().map(|(code, _)| value(r, code)).collect(),
            })
            .collect();
        let mut header = vec!["Model".to_string()];
        header.extend(labels.iter().cloned());
        let rows = runs
            .iter()
            .map(|r| {
                std::iter::once(r.label.to_string())
                    .chain(configs.iter().map(|(code, _)| cell(value(r, code))))
                    .collect()
            })
            .collect();
        let mut csv_rows = Vec::new();
        for r in runs {
            for (code, label) in &configs {
                csv_rows.push(vec![
                    r.label.to_string(),
                    code.clone(),
                    label.clone(),
                    csv::num(value(r, code)),
                ]);
            }
        }
        let title = format!("{bench} {metric} by model and configuration");
        figs.push(Figure {
            name: format!("{}-{}", bench.to_lowercase(), metric.to_lowercase()),
            svg: charts::grouped_bars_h(
                &title,
                &labels,
                &Axis {
                    label: format!("{metric} (%)"),
                    max: 100.0,
                    decimals: 1,
                },
                &series,
            )?,
            caption: format!(
                "{metric} (%) over the 11 turns, one row per model and one column per configuration, as the original's Table 2 computes it."
            ),
            table: Table { header, rows },
            notes: Vec::new(),
            csv: csv::write(&["model", "config", "label", metric_key(metric)], &csv_rows),
        });
    }
    Ok(figs)
}

fn metric_key(metric: &str) -> &'static str {
    if metric == "MRR" {
        "mrr"
    } else {
        "recall"
    }
}

/// ConvCodeBench minus ConvCodeWorld, per model scored on both and per configuration both
/// have (a table, no chart: the gaps' signs differ).
pub fn gap_figure(live: &[Run], statics: &[Run]) -> Option<Figure> {
    let pairs: Vec<(&Run, &Run)> = statics
        .iter()
        .filter_map(|s| Some((live.iter().find(|l| l.scores.model == s.scores.model)?, s)))
        .collect();
    let mut header = vec!["Model".to_string(), "Configuration".to_string()];
    header.extend(
        [
            "MRR CCW",
            "MRR CCB",
            "MRR gap",
            "Recall CCW",
            "Recall CCB",
            "Recall gap",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut rows = Vec::new();
    let mut csv_rows = Vec::new();
    for (l, s) in &pairs {
        for sc in present(s.scores) {
            let Some(lc) = column(l, &sc.config) else {
                continue;
            };
            // Both are rounded to one decimal; so is their difference (no float noise).
            let gap = |a: Option<f64>, b: Option<f64>| Some(((b? - a?) * 10.0).round() / 10.0);
            // The gap of two one-decimal numbers, written with one decimal.
            let g = |v: Option<f64>| v.map(|v| format!("{v:+.1}")).unwrap_or_default();
            let (mg, rg) = (gap(lc.mrr, sc.mrr), gap(lc.recall, sc.recall));
            rows.push(vec![
                s.label.to_string(),
                sc.label.clone(),
                cell(lc.mrr),
                cell(sc.mrr),
                g(mg),
                cell(lc.recall),
                cell(sc.recall),
                g(rg),
            ]);
            csv_rows.push(vec![
                s.label.to_string(),
                sc.config.clone(),
                sc.label.clone(),
                csv::num(lc.mrr),
                csv::num(sc.mrr),
                csv::num(mg),
                csv::num(lc.recall),
                csv::num(sc.recall),
                csv::num(rg),
            ]);
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(Figure {
        name: "convcodebench-minus-convcodeworld".into(),
        svg: String::new(),
        caption: "ConvCodeBench (static replay of a reference model's conversations) minus ConvCodeWorld (live feedback), per model scored on both and per configuration both have: how far the cheap static benchmark is from the live one.".into(),
        table: Table { header, rows },
        notes: Vec::new(),
        csv: csv::write(
            &[
                "model", "config", "label", "mrr_ccw", "mrr_ccb", "mrr_gap", "recall_ccw",
                "recall_ccb", "recall_gap",
            ],
            &csv_rows,
        ),
    })
}
