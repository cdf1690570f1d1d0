//! MemoryCode with feedback rounds (`memorycode generate --feedback`): each score at each
//! round, one line per model, drawn as ConvCodeWorld's Pass@1 per turn is (cc_compare.rs:
//! a line chart over the rounds, its table with the rounds as rows). A round's score file
//! says its round (`"round"`, from the `OUT/feedback/round-r/<model>` folder it scored);
//! round 0 is the same model's file without one.

use super::charts::{self, Axis, Series};
use super::csv;
use super::figure::{slug, Figure, Table};
use pivot_bench::memorycode::report::fmt as mc_fmt;
use pivot_bench::memorycode::score_file::{ScoreFile, METRICS};

/// The figures, one per score; none when no input is a feedback round.
pub fn figures(mc: &[(&String, &ScoreFile)]) -> Result<Vec<Figure>, String> {
    // The models with a feedback round, in input order; for each, its file of each round
    // (the first input of a round wins, as the inputs are listed).
    let mut models: Vec<(&str, Vec<(u64, &ScoreFile)>)> = Vec::new();
    for (_, m) in mc.iter().filter(|(_, m)| m.round.is_some()) {
        if !models.iter().any(|(name, _)| *name == m.model) {
            models.push((&m.model, Vec::new()));
        }
    }
    if models.is_empty() {
        return Ok(Vec::new());
    }
    for (_, m) in mc {
        if let Some((_, rounds)) = models.iter_mut().find(|(name, _)| *name == m.model) {
            let r = m.round.unwrap_or(0) as u64;
            if !rounds.iter().any(|(x, _)| *x == r) {
                rounds.push((r, *m));
            }
        }
    }
    let mut rounds: Vec<u64> = (models.iter())
        .flat_map(|(_, rs)| rs.iter().map(|(r, _)| *r))
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    let axis = Axis {
        label: "score (fraction followed, 0-1)".into(),
        max: 1.0,
        decimals: 2,
    };
    let mut figs = Vec::new();
    for metric in METRICS {
        let at = |rs: &[(u64, &ScoreFile)], r: u64| {
            (rs.iter().find(|(x, _)| *x == r))
                .and_then(|(_, m)| m.macro_scores.get(metric))
                .and_then(|s| s.value())
        };
        let series: Vec<Series> = (models.iter())
            .map(|(name, rs)| Series {
                name: name.to_string(),
                values: rounds.iter().map(|r| at(rs, *r)).collect(),
            })
            .collect();
        if series.iter().all(|s| s.values.iter().all(Option::is_none)) {
            continue;
        }
        let title = format!("MemoryCode {metric} per feedback round");
        let mut header = vec!["Round".to_string()];
        header.extend(models.iter().map(|(name, _)| name.to_string()));
        let rows = (rounds.iter())
            .map(|r| {
                std::iter::once(r.to_string())
                    .chain((models.iter()).map(|(_, rs)| mc_fmt(at(rs, *r).unwrap_or(f64::NAN))))
                    .collect()
            })
            .collect();
        let mut csv_rows = Vec::new();
        for (name, rs) in &models {
            for r in &rounds {
                csv_rows.push(vec![
                    name.to_string(),
                    metric.to_string(),
                    r.to_string(),
                    csv::num(at(rs, *r)),
                ]);
            }
        }
        let mut notes = Vec::new();
        if models
            .iter()
            .any(|(_, rs)| !rs.iter().any(|(r, _)| *r == 0))
        {
            notes.push("A model without a round-0 input (its score file without \"round\") has no round-0 point.".to_string());
        }
        figs.push(Figure {
            name: format!("memorycode-rounds-{}", slug(metric)),
            svg: charts::lines(&title, "feedback round", &rounds, &axis, &series)?,
            caption: format!(
                "MemoryCode's {metric} score of each model after each round of feedback (round 0: the answers before any; round r: each answer with findings asked again r times with only its findings, `memorycode generate --feedback pivots`)."
            ),
            table: Table { header, rows },
            notes,
            csv: csv::write(&["model", "score", "round", "value"], &csv_rows),
        });
    }
    figs.extend(counts(&models));
    Ok(figs)
}

/// What each round did to the answers, from the counts its score file carries (`"feedback"`,
/// the run's summary): a table alone.
fn counts(models: &[(&str, Vec<(u64, &ScoreFile)>)]) -> Option<Figure> {
    let header: Vec<String> = [
        "model",
        "round",
        "answers",
        "with findings",
        "asked again",
        "fixed",
        "kept broken",
        "broken anew",
        "unanswered",
    ]
    .map(str::to_string)
    .to_vec();
    let mut rows = Vec::new();
    for (name, rs) in models {
        let mut rs: Vec<&(u64, &ScoreFile)> = rs.iter().collect();
        rs.sort_by_key(|(r, _)| *r);
        for (r, m) in rs {
            let Some(c) = &m.feedback else { continue };
            let cells = [
                c.answers,
                c.broken,
                c.reasked,
                c.fixed,
                c.kept_broken,
                c.broken_anew,
                c.unanswered,
            ];
            let mut row = vec![name.to_string(), r.to_string()];
            row.extend(cells.iter().map(usize::to_string));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let table = Table { header, rows };
    Some(Figure {
        name: "memorycode-rounds-answers".into(),
        svg: String::new(),
        csv: table.csv(),
        caption: "What each feedback round did to the dialogue answers: those with findings asked again, and of them the ones fixed (no finding left), kept broken (findings of pivots they already broke only) and broken anew (a finding they did not have), from the run's summary (OUT/feedback/<model>.json).".into(),
        table,
        notes: Vec::new(),
    })
}
