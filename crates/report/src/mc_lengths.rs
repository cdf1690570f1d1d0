//! MemoryCode's key figure: each score against the number of sessions in the dialogue, one
//! line per model, each point the mean over the dialogues of that length with a bootstrap
//! band and its count. Computed from the score file's per-dialogue rows (`"dialogues"`).

use super::charts::{self, Axis, Extras, Series};
use super::csv;
use super::figure::{Figure, Table};
use super::stats::{self, Estimate};
use pivot_bench::memorycode::report::{fmt as mc_fmt, SHORT_HISTORY_MAX_ID};
use pivot_bench::memorycode::score_file::{DialogueRow, Score, ScoreFile};
use std::collections::BTreeSet;

/// A score of the figure: its name, whether History's scorer gives it (one value per
/// dialogue, at its last session; short / long by dialogue id), and its per-session row.
struct Metric {
    name: &'static str,
    history_scored: bool,
    row: fn(&DialogueRow) -> &[Score],
}

const METRICS: [Metric; 5] = [
    Metric {
        name: "history",
        history_scored: true,
        row: |r| &r.history,
    },
    Metric {
        name: "session",
        history_scored: false,
        row: |r| &r.session,
    },
    Metric {
        name: "instruction",
        history_scored: false,
        row: |r| &r.instruction,
    },
    Metric {
        name: "instructions chain",
        history_scored: true,
        row: |r| &r.instructions_chain,
    },
    Metric {
        name: "rag",
        history_scored: true,
        row: |r| &r.rag,
    },
];

/// A dialogue's score in a metric: numpy's nanmean of its sessions' scores (History has one,
/// at the last session); `None` when no session has one.
fn dialogue_score(row: &[Score]) -> Option<f64> {
    let xs: Vec<f64> = row.iter().map(|s| s.0).collect();
    let m = pivot_bench::numpy::nanmean(&xs);
    m.is_finite().then_some(m)
}

/// Per model, per dialogue length: the dialogues' scores.
fn by_length(m: &ScoreFile, metric: &Metric, lengths: &[usize]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); lengths.len()];
    for row in m.dialogues.values() {
        let r = (metric.row)(row);
        let Some(v) = dialogue_score(r) else { continue };
        if let Ok(i) = lengths.binary_search(&r.len()) {
            out[i].push(v);
        }
    }
    out
}

pub fn figures(mc: &[(&String, &ScoreFile)]) -> Result<Vec<Figure>, String> {
    let mut figs = Vec::new();
    for metric in &METRICS {
        let has = |m: &ScoreFile| {
            m.dialogues
                .values()
                .any(|r| dialogue_score((metric.row)(r)).is_some())
        };
        let models: Vec<&(&String, &ScoreFile)> = mc.iter().filter(|(_, m)| has(m)).collect();
        if models.is_empty() {
            continue;
        }
        let lengths: Vec<usize> = (models.iter())
            .flat_map(|(_, m)| m.dialogues.values().map(|r| (metric.row)(r).len()))
            .filter(|n| *n > 0)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let estimates: Vec<Vec<Option<Estimate>>> = (models.iter())
            .map(|(_, m)| {
                (by_length(m, metric, &lengths).iter())
                    .map(|v| stats::bootstrap_mean(v))
                    .collect()
            })
            .collect();
        figs.push(figure(metric, &models, &lengths, &estimates)?);
    }
    Ok(figs)
}

fn figure(
    metric: &Metric,
    models: &[&(&String, &ScoreFile)],
    lengths: &[usize],
    est: &[Vec<Option<Estimate>>],
) -> Result<Figure, String> {
    let labels: Vec<String> = lengths.iter().map(|n| n.to_string()).collect();
    let series: Vec<Series> = (models.iter().zip(est))
        .map(|((name, _), e)| Series {
            name: name.to_string(),
            values: e.iter().map(|e| e.map(|e| e.mean)).collect(),
        })
        .collect();
    let bands: Vec<Vec<Option<(f64, f64)>>> = est
        .iter()
        .map(|e| e.iter().map(|e| e.map(|e| (e.low, e.high))).collect())
        .collect();
    // Dialogues per point: one number when every model has the same, else one per model.
    let counts: Vec<String> = (0..lengths.len())
        .map(|i| {
            let ns: Vec<usize> = est.iter().map(|e| e[i].map_or(0, |e| e.n)).collect();
            if ns.iter().all(|n| *n == ns[0]) {
                format!("n={}", ns[0])
            } else {
                let ns: Vec<String> = ns.iter().map(usize::to_string).collect();
                format!("n={}", ns.join("/"))
            }
        })
        .collect();
    // History's short / long split is by dialogue id; where it falls between two lengths,
    // a rule marks it.
    let divider = if metric.history_scored {
        let (mut short_max, mut long_min) = (0usize, usize::MAX);
        for (_, m) in models {
            for (id, r) in &m.dialogues {
                let n = (metric.row)(r).len();
                if n == 0 || dialogue_score((metric.row)(r)).is_none() {
                    continue;
                }
                if *id <= SHORT_HISTORY_MAX_ID {
                    short_max = short_max.max(n);
                } else {
                    long_min = long_min.min(n);
                }
            }
        }
        let at = |n: usize| lengths.iter().position(|l| *l == n);
        match (at(short_max), at(long_min)) {
            (Some(a), Some(b)) if a + 1 == b => {
                Some((a as f64 + 0.5, "short history | long history"))
            }
            _ => None,
        }
    } else {
        None
    };
    let title = format!("MemoryCode: {} score by dialogue length", metric.name);
    let svg = charts::band_lines(
        &title,
        "sessions in the dialogue",
        &labels,
        &Axis {
            label: format!("{} score (0-1)", metric.name),
            max: 1.0,
            decimals: 2,
        },
        &series,
        &Extras {
            bands: &bands,
            counts: &counts,
            divider,
        },
    )?;
    let what = match metric.name {
        "history" => "the History score (the last session's queries after the whole dialogue; short history: dialogues 1-210, long: the rest)".to_string(),
        "session" => "the session score (each session's queries after that session alone), the dialogue's mean over its sessions".to_string(),
        "instruction" => "the instruction score (each instruction asked alone), the dialogue's mean over its sessions".to_string(),
        other => format!(
            "the {other} outputs scored by MemoryCode's History scorer (the same history queries and pairs as History; the original evaluator does not score this mode)"
        ),
    };
    let caption = format!(
        "Each point: the mean over the dialogues with that many sessions of {what}; n = dialogues per point (per model when they differ). x positions are evenly spaced. {}",
        stats::method()
    );
    let mut header = vec!["sessions".to_string()];
    for (name, _) in models {
        header.push(format!("{name}: mean"));
        header.push(format!("{name}: 95% CI"));
        header.push(format!("{name}: n"));
    }
    let rows = (0..lengths.len())
        .map(|i| {
            let mut row = vec![lengths[i].to_string()];
            for e in est {
                match e[i] {
                    Some(e) => {
                        row.push(mc_fmt(e.mean));
                        row.push(format!("[{}, {}]", mc_fmt(e.low), mc_fmt(e.high)));
                        row.push(e.n.to_string());
                    }
                    None => row.extend(["-".to_string(), "-".into(), "0".into()]),
                }
            }
            row
        })
        .collect();
    let mut csv_rows = Vec::new();
    for ((name, _), e) in models.iter().zip(est) {
        for (i, e) in e.iter().enumerate() {
            csv_rows.push(vec![
                name.to_string(),
                metric.name.to_string(),
                lengths[i].to_string(),
                e.map_or(0, |e| e.n).to_string(),
                csv::num(e.map(|e| e.mean)),
                csv::num(e.map(|e| e.low)),
                csv::num(e.map(|e| e.high)),
            ]);
        }
    }
    Ok(Figure {
        name: format!("memorycode-{}-by-length", metric.name.replace(' ', "-")),
        svg,
        caption,
        table: Table { header, rows },
        notes: Vec::new(),
        csv: csv::write(
            &[
                "model",
                "score",
                "sessions",
                "dialogues",
                "mean",
                "ci_low",
                "ci_high",
            ],
            &csv_rows,
        ),
    })
}
