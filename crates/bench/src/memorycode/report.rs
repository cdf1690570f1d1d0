//! MemoryCode's aggregate report: per-session and macro scores, in the shape of the
//! reference dump (`reference/<model>.json`), as JSON, a table or markdown.

use super::score::{nanmean, DialogueResult, DialogueScores, HISTORY_SCORED_MODES};
use super::score_file::{
    scores, DialogueRow, HistoryPair, KindRow, Metrics, ModeScores, Score, ScoreFile, Skipped,
    METRICS,
};
use crate::numpy;
use serde_json::Value;
use std::collections::BTreeMap;

/// Dialogues with an id up to this are "short history"; later ones "long history".
pub const SHORT_HISTORY_MAX_ID: u32 = 210;

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub dialogues: BTreeMap<u32, DialogueScores>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
    /// Longest dialogue (sessions): the per-session arrays' length.
    pub max_length: usize,
    pub answers: usize,
    pub scorings: usize,
    /// Dialogue ids in the order the original evaluator reads them (`os.listdir` of the
    /// outputs folder): the order of the per-session sums, which changes their last bit.
    /// Ids not listed come after, in id order.
    pub row_order: Vec<u32>,
    /// metric -> per-session score (NaN where no dialogue has one)
    pub per_session: BTreeMap<&'static str, Vec<f64>>,
    pub macro_scores: BTreeMap<&'static str, f64>,
    /// The model scored (the outputs folder's name unless the caller names it).
    pub model: String,
    /// The feedback round the outputs are (`generate --feedback`'s `round-r` folders), none
    /// for any other folder.
    pub round: Option<usize>,
    /// That round's counts (answers asked again, fixed, ...), from the run's summary.
    pub feedback: Option<super::feedback::RoundSummary>,
    /// Instruction answers by the object kind of their pivot (no original evaluator has it).
    pub by_kind: BTreeMap<&'static str, KindScore>,
    /// The modes of [`HISTORY_SCORED_MODES`] that some dialogue has, by name: per-session
    /// (short, long) history scores and their macro means, and how many dialogues have one.
    pub modes: BTreeMap<&'static str, ModeReport>,
}

/// One mode scored by the History scorer, aggregated as History is.
#[derive(Clone, Debug, Default)]
pub struct ModeReport {
    pub output_key: &'static str,
    pub short: Vec<f64>,
    pub long: Vec<f64>,
    pub macro_short: f64,
    pub macro_long: f64,
    pub dialogues: usize,
}

/// Instruction answers of one object kind: the mean of the scored ones (a plain mean over
/// answers, unlike the macro instruction score's mean over sessions) and how many there were.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KindScore {
    pub sum: f64,
    /// Answers with a score (1 or 0).
    pub count: usize,
    /// Answers where the object the pivot is about was absent (no score).
    pub absent: usize,
}

impl KindScore {
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }
}

impl Report {
    pub fn add(&mut self, r: &DialogueResult, n_sessions: usize) {
        self.max_length = self.max_length.max(n_sessions);
        self.answers += r.answers.len();
        self.scorings += r.answers.iter().map(|a| a.verdicts.len()).sum::<usize>();
        self.dialogues.insert(r.id, r.scores.clone());
        for (kind, score) in &r.instruction_kinds {
            let k = self.by_kind.entry(kind.name()).or_default();
            if score.is_nan() {
                k.absent += 1;
            } else {
                k.sum += score;
                k.count += 1;
            }
        }
    }

    /// Pad every dialogue's arrays to the longest, average over dialogues per session
    /// (rows in `row_order`, as numpy's `nanmean(axis=0)` adds them), then average the
    /// per-session scores.
    pub fn finish(&mut self) {
        self.skipped.sort_by_key(|s| s.id);
        self.warnings.sort();
        let len = self.max_length;
        let listed: std::collections::HashSet<u32> = self.row_order.iter().copied().collect();
        let order: Vec<u32> = (self.row_order.iter().copied())
            .filter(|id| self.dialogues.contains_key(id))
            .chain(
                self.dialogues
                    .keys()
                    .copied()
                    .filter(|id| !listed.contains(id)),
            )
            .collect();
        let column = |pick: &dyn Fn(u32, &DialogueScores) -> Option<&[f64]>| -> Vec<f64> {
            let rows: Vec<Vec<f64>> = (order.iter())
                .filter_map(|id| pick(*id, &self.dialogues[id]))
                .map(|r| {
                    let mut padded = r.to_vec();
                    padded.resize(len, f64::NAN);
                    padded
                })
                .collect();
            let rows: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
            numpy::nanmean_axis0(&rows, len)
        };
        let short = column(&|id, d| (id <= SHORT_HISTORY_MAX_ID).then_some(&d.history[..]));
        let long = column(&|id, d| (id > SHORT_HISTORY_MAX_ID).then_some(&d.history[..]));
        let session = column(&|_, d| Some(&d.session[..]));
        let instruction = column(&|_, d| Some(&d.instruction[..]));
        for (name, col) in METRICS.into_iter().zip([short, long, session, instruction]) {
            self.macro_scores.insert(name, nanmean(col.iter().copied()));
            self.per_session.insert(name, col);
        }
        self.modes.clear();
        for (kind, name, key) in HISTORY_SCORED_MODES {
            let with: Vec<u32> = (order.iter().copied())
                .filter(|id| !self.dialogues[id].mode(kind).is_empty())
                .collect();
            if with.is_empty() {
                continue;
            }
            let pick = |short: bool| {
                column(&|id, d| {
                    let v = d.mode(kind);
                    (!v.is_empty() && (id <= SHORT_HISTORY_MAX_ID) == short).then_some(v)
                })
            };
            let (short, long) = (pick(true), pick(false));
            self.modes.insert(
                name,
                ModeReport {
                    output_key: key,
                    macro_short: nanmean(short.iter().copied()),
                    macro_long: nanmean(long.iter().copied()),
                    short,
                    long,
                    dialogues: with.len(),
                },
            );
        }
    }

    /// The score file: `{"macro", "per_session", "dialogues", "skipped"}` with NaN as null,
    /// as the reference, between `"benchmark"` / `"model"` and `"by_kind"`.
    pub fn to_file(&self, with_warnings: bool) -> ScoreFile {
        ScoreFile {
            benchmark: "memorycode".into(),
            model: self.model.clone(),
            round: self.round,
            feedback: self.feedback.clone(),
            macro_scores: Metrics::from_fn(|m| Score(self.macro_scores[m])),
            per_session: Metrics::from_fn(|m| scores(&self.per_session[m])),
            max_length: self.max_length,
            dialogues: (self.dialogues.iter())
                .map(|(id, d)| {
                    let row = DialogueRow {
                        history: scores(&d.history),
                        session: scores(&d.session),
                        instruction: scores(&d.instruction),
                        instructions_chain: scores(&d.instructions_chain),
                        rag: scores(&d.rag),
                    };
                    (*id, row)
                })
                .collect(),
            listdir_order: self.row_order.iter().map(u32::to_string).collect(),
            skipped: self.skipped.clone(),
            warnings: with_warnings.then(|| self.warnings.clone()),
            by_kind: (self.by_kind.iter())
                .map(|(k, s)| {
                    let row = KindRow {
                        mean: Score(s.mean()),
                        count: s.count as u64,
                        absent: s.absent as u64,
                    };
                    (k.to_string(), row)
                })
                .collect(),
            modes: (self.modes.iter())
                .map(|(name, m)| {
                    let row = ModeScores {
                        output_key: m.output_key.into(),
                        scored_as: "history".into(),
                        macro_scores: HistoryPair {
                            short_history: Score(m.macro_short),
                            long_history: Score(m.macro_long),
                        },
                        per_session: HistoryPair {
                            short_history: scores(&m.short),
                            long_history: scores(&m.long),
                        },
                        dialogues: m.dialogues as u64,
                    };
                    (name.to_string(), row)
                })
                .collect(),
            shard: None,
        }
    }

    /// [`Report::to_file`] as a JSON value.
    pub fn to_json(&self, with_warnings: bool) -> Value {
        serde_json::to_value(self.to_file(with_warnings)).expect("a score file serializes")
    }

    /// A plain-text table of the macro scores (and per-session rows when asked).
    pub fn to_table(&self, per_session: bool) -> String {
        let mut rows = vec![vec!["metric".to_string(), "score".to_string()]];
        for m in METRICS {
            rows.push(vec![m.to_string(), fmt(self.macro_scores[m])]);
        }
        rows.extend(self.mode_rows());
        let mut out = render_table(&rows);
        if per_session {
            out.push('\n');
            out.push_str(&render_table(&self.per_session_rows()));
        }
        out
    }

    pub fn to_markdown(&self, per_session: bool) -> String {
        let mut out = String::from("| metric | score |\n|---|---|\n");
        for m in METRICS {
            out.push_str(&format!("| {m} | {} |\n", fmt(self.macro_scores[m])));
        }
        for r in self.mode_rows() {
            out.push_str(&format!("| {} | {} |\n", r[0], r[1]));
        }
        if per_session {
            let rows = self.per_session_rows();
            out.push('\n');
            out.push_str(&format!("| {} |\n", rows[0].join(" | ")));
            out.push_str(&format!("|{}\n", "---|".repeat(rows[0].len())));
            for r in &rows[1..] {
                out.push_str(&format!("| {} |\n", r.join(" | ")));
            }
        }
        out
    }

    /// The macro rows of the instructions-chain and RAG modes, when scored: their names say
    /// that the History scorer scored them (`rag (history scorer): short history`).
    fn mode_rows(&self) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for (name, m) in &self.modes {
            for (which, v) in [
                ("short history", m.macro_short),
                ("long history", m.macro_long),
            ] {
                rows.push(vec![format!("{name} (history scorer): {which}"), fmt(v)]);
            }
        }
        rows
    }

    fn per_session_rows(&self) -> Vec<Vec<String>> {
        let mut rows = vec![std::iter::once("session index".to_string())
            .chain(METRICS.iter().map(|m| m.to_string()))
            .collect::<Vec<_>>()];
        for i in 0..self.max_length {
            let mut r = vec![i.to_string()];
            r.extend(METRICS.iter().map(|m| fmt(self.per_session[m][i])));
            rows.push(r);
        }
        rows
    }
}

/// A score as the text table prints it (4 decimals, `-` for none).
pub fn fmt(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.4}")
    }
}

/// Left-aligned columns separated by two spaces, with a rule under the header.
pub fn render_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(
                &widths
                    .iter()
                    .map(|w| "-".repeat(*w))
                    .collect::<Vec<_>>()
                    .join("  "),
            );
            out.push('\n');
        }
    }
    out
}
