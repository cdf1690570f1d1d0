//! From parsed score files to the page: the figures (chart + the text output's table) of
//! each section, the provenance rows, then the template (`report.html.j2`, minijinja with
//! HTML auto-escaping; only our SVG and the embedded JSON are marked safe).

use super::cc_compare;
use super::charts::{self, Axis, Series};
use super::figure::{slug, Figure, Table};
use super::input::{is_static, present, Convcode, Score, ScoreFile, MC_METRICS};
use pivot_bench::convcode::numeric::py_float;
use pivot_bench::convcode::table::LEGEND;
use pivot_bench::memorycode::report::fmt as mc_fmt;
use pivot_bench::memorycode::score_file::{Score as McScore, ScoreFile as McScoreFile};
use pivot_python::python::ObjectKind;
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
struct McSection {
    #[serde(rename = "macro")]
    macro_scores: Figure,
    by_length: Vec<Figure>,
    /// Scores per feedback round (mc_rounds.rs); empty without round inputs.
    rounds: Vec<Figure>,
    sessions: Vec<Figure>,
    kinds: Option<Figure>,
}

/// One benchmark's figures with models side by side, then each run's own.
#[derive(Serialize)]
struct CcSection {
    pass: Vec<Figure>,
    scores: Vec<Figure>,
    runs: Vec<CcBlock>,
}

#[derive(Serialize)]
struct CcBlock {
    heading: String,
    pass: Option<Figure>,
    mrr: Option<Figure>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct Provenance {
    name: String,
    benchmark: &'static str,
    model: String,
    bytes: usize,
    sha256: String,
}

/// What the page says about when and by what it was made.
pub struct Stamp {
    pub version: String,
    pub date: String,
}

pub fn render(
    files: &[ScoreFile],
    sizes: &[usize],
    title: &str,
    stamp: &Stamp,
) -> Result<String, String> {
    let names = model_labels(files);
    let mc: Vec<(&String, &McScoreFile)> = files
        .iter()
        .zip(&names)
        .filter_map(|(f, n)| match &f.score {
            Score::Memorycode(m) => Some((n, &**m)),
            _ => None,
        })
        .collect();
    let memorycode = if mc.is_empty() {
        None
    } else {
        Some(memorycode_section(&mc)?)
    };
    let mut live = Vec::new();
    let mut statics = Vec::new();
    let mut live_runs = Vec::new();
    let mut static_runs = Vec::new();
    for (f, name) in files.iter().zip(&names) {
        if let Score::Convcode(c) = &f.score {
            let block = convcode_block(c, name, &f.name)?;
            let run = cc_compare::Run {
                label: name,
                scores: c,
            };
            if is_static(c) {
                statics.push(block);
                static_runs.push(run);
            } else {
                live.push(block);
                live_runs.push(run);
            }
        }
    }
    let section = |bench: &str, runs: &[cc_compare::Run], blocks: Vec<CcBlock>| {
        if blocks.is_empty() {
            return Ok::<_, String>(None);
        }
        Ok(Some(CcSection {
            pass: cc_compare::pass_figures(bench, runs)?,
            scores: cc_compare::mrr_recall_figures(bench, runs)?,
            runs: blocks,
        }))
    };
    let live = section("ConvCodeWorld", &live_runs, live)?;
    let statics = section("ConvCodeBench", &static_runs, statics)?;
    let gap = cc_compare::gap_figure(&live_runs, &static_runs);
    let inputs: Vec<Provenance> = files
        .iter()
        .zip(sizes)
        .map(|(f, n)| Provenance {
            name: f.name.clone(),
            benchmark: f.benchmark(),
            model: f.model(),
            bytes: *n,
            sha256: f.sha256.clone(),
        })
        .collect();
    let summary = summary(files);
    let warnings = warnings(files);
    let data = embedded_json(files.iter().map(|f| &f.raw))?;

    let mut env = minijinja::Environment::new();
    // minijinja's HTML escaping also writes `/` as `&#x2f;`, legal but it hides model names
    // like `org/model` from a search of the file; `& < > " '` are enough in text and quoted
    // attributes.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if !value.is_safe() && state.auto_escape() != minijinja::AutoEscape::None => out
            .write_str(&html_escape(s))
            .map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed")),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env.add_template("report.html", include_str!("report.html.j2"))
        .map_err(|e| format!("the report template is broken: {e}"))?;
    let tmpl = env
        .get_template("report.html")
        .map_err(|e| format!("the report template is broken: {e}"))?;
    tmpl.render(minijinja::context! {
        title => title,
        summary => summary,
        warnings => warnings,
        version => stamp.version,
        date => stamp.date,
        memorycode => memorycode,
        live => live,
        static => statics,
        gap => gap,
        legend => LEGEND.lines().map(|l| l.trim().trim_start_matches("- ").to_string()).collect::<Vec<_>>(),
        inputs => inputs,
        data => data,
    })
    .map_err(|e| format!("rendering the report failed: {e:#}"))
}

/// The inputs as one JSON list, values unchanged. `<`, `>` and `&` only occur inside JSON
/// strings, where `\u003c` etc. mean the same characters: the text cannot close the
/// `<script>` element and a JSON parser reads back the very same values.
fn embedded_json<'a>(values: impl Iterator<Item = &'a Value>) -> Result<String, String> {
    let list: Vec<&Value> = values.collect();
    let text = serde_json::to_string(&list).map_err(|e| e.to_string())?;
    Ok(text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// One label per file: its model, with the file's name added where two files share a model,
/// and `[shard k/n]` for a shard's partial scores (wherever the label appears: legends,
/// tables, headings).
fn model_labels(files: &[ScoreFile]) -> Vec<String> {
    // A MemoryCode feedback round is its model's run after r rounds: named so, and apart
    // from the model's round 0.
    let round = |f: &ScoreFile| match &f.score {
        Score::Memorycode(m) => m.round,
        _ => None,
    };
    let key = |f: &ScoreFile| (f.benchmark(), f.model(), round(f));
    files
        .iter()
        .map(|f| {
            let same = files.iter().filter(|g| key(g) == key(f)).count();
            let model = match round(f) {
                Some(r) => format!("{} [feedback round {r}]", f.model()),
                None => f.model(),
            };
            let label = if same > 1 {
                format!("{model} ({})", f.name)
            } else {
                model
            };
            match f.shard() {
                Some((k, n)) => format!("{label} [shard {k}/{n}]"),
                None => label,
            }
        })
        .collect()
}

/// What the page says first about inputs that are not whole runs.
fn warnings(files: &[ScoreFile]) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| {
            let (k, n) = f.shard()?;
            let (part, join) = match f.score {
                Score::Memorycode(_) => (
                    "dialogues",
                    "`pivot-lsp merge` joins the shards' JSON into the whole run's",
                ),
                Score::Convcode(_) => (
                    "tasks",
                    "`pivot-lsp merge --results OUT DIR...` joins the shards' folders; score the joined folder",
                ),
            };
            Some(format!(
                "{} is shard {k} of {n} of a sharded run: its scores cover only that shard's {part}, not the whole benchmark ({join}).",
                f.name
            ))
        })
        .collect()
}

/// A note under a line chart whose series coincide (drawn nested, see `charts::lines`).
fn coincidence_notes(series: &[Series], along: &str) -> Vec<String> {
    charts::coincident(series)
        .into_iter()
        .map(|g| {
            let names: Vec<&str> = g.iter().map(|&i| series[i].name.as_str()).collect();
            let (last, rest) = names.split_last().expect("a group has two or more");
            format!(
                "{} and {last} have the same value at every {along}: their lines lie on each other, drawn one inside the other (the first widest) with their markers side by side.",
                rest.join(", ")
            )
        })
        .collect()
}

fn summary(files: &[ScoreFile]) -> String {
    let count = |b: &str| files.iter().filter(|f| f.benchmark() == b).count();
    let mut parts = Vec::new();
    for (b, label) in [
        ("memorycode", "MemoryCode"),
        ("convcodeworld", "ConvCodeWorld"),
        ("convcodebench", "ConvCodeBench"),
    ] {
        match count(b) {
            0 => {}
            1 => parts.push(format!("1 {label} score file")),
            n => parts.push(format!("{n} {label} score files")),
        }
    }
    parts.join(", ")
}

fn opt(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

fn memorycode_section(mc: &[(&String, &McScoreFile)]) -> Result<McSection, String> {
    let score_axis = Axis {
        label: "score (fraction followed, 0-1)".into(),
        max: 1.0,
        decimals: 2,
    };
    let metrics: Vec<String> = MC_METRICS.iter().map(|m| m.to_string()).collect();
    let series: Vec<Series> = mc
        .iter()
        .map(|(name, m)| Series {
            name: name.to_string(),
            values: MC_METRICS
                .iter()
                .map(|k| m.macro_scores.get(k).and_then(McScore::value))
                .collect(),
        })
        .collect();
    let title = "MemoryCode: macro scores by model";
    let macro_scores =
        Figure {
            name: "memorycode-macro".into(),
            csv: String::new(),
            svg: charts::grouped_bars(title, "score", &metrics, &score_axis, &series)?,
            caption: "The four scores of MemoryCode's evaluator, one bar per model.".into(),
            table: Table {
                header: std::iter::once("model".to_string())
                    .chain(metrics.iter().cloned())
                    .collect(),
                rows: mc
                    .iter()
                    .map(|(name, m)| {
                        std::iter::once(name.to_string())
                            .chain(MC_METRICS.iter().map(|k| {
                                mc_fmt(opt(m.macro_scores.get(k).and_then(McScore::value)))
                            }))
                            .collect()
                    })
                    .collect(),
            },
            notes: vec![],
        };
    let mut macro_scores = with_modes(macro_scores, mc)?;
    macro_scores.csv = macro_csv(mc);
    let by_length = super::mc_lengths::figures(mc)?;

    let mut sessions = Vec::new();
    for (name, m) in mc {
        let len = MC_METRICS
            .iter()
            .map(|k| m.per_session.get(k).map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        // Sessions numbered from 1, as the dialogue lengths are.
        let xs: Vec<u64> = (1..=len as u64).collect();
        let lines: Vec<Series> = MC_METRICS
            .iter()
            .map(|k| Series {
                name: k.to_string(),
                values: (m.per_session.get(k).into_iter().flatten())
                    .map(McScore::value)
                    .collect(),
            })
            .collect();
        let title = format!("MemoryCode per session: {name}");
        let notes = coincidence_notes(&lines, "session");
        let table = Table {
            header: std::iter::once("session number".to_string())
                .chain(metrics.iter().cloned())
                .collect(),
            rows: (0..len)
                .map(|i| {
                    std::iter::once((i + 1).to_string())
                        .chain(MC_METRICS.iter().map(|k| {
                            mc_fmt(opt(m
                                .per_session
                                .get(k)
                                .and_then(|v| v.get(i))
                                .and_then(McScore::value)))
                        }))
                        .collect()
                })
                .collect(),
        };
        let csv_rows: Vec<Vec<String>> = (0..len)
            .map(|i| {
                std::iter::once((i + 1).to_string())
                    .chain(MC_METRICS.iter().map(|k| {
                        super::csv::num(
                            m.per_session
                                .get(k)
                                .and_then(|v| v.get(i))
                                .and_then(McScore::value),
                        )
                    }))
                    .collect()
            })
            .collect();
        let mut csv_header = vec!["session_number"];
        csv_header.extend(MC_METRICS);
        sessions.push(Figure {
            name: format!("memorycode-per-session-{}", slug(name)),
            svg: charts::lines(&title, "session (1-based)", &xs, &score_axis, &lines)?,
            caption: format!(
                "{name}: each score at each session (numbered from 1), averaged as the original evaluator does over the dialogues that have that session: History is scored only at a dialogue's last session, so it shows at the dialogue lengths alone (gaps: no dialogue has a score there). The figures above average by dialogue length instead."
            ),
            table,
            notes,
            csv: super::csv::write(&csv_header, &csv_rows),
        });
    }

    let with_kinds: Vec<_> = mc.iter().filter(|(_, m)| !m.by_kind.is_empty()).collect();
    let kinds = if with_kinds.is_empty() {
        None
    } else {
        // The kinds any model has, in the order of MemoryCode's object kinds.
        let mut names: Vec<String> = ObjectKind::ALL
            .iter()
            .map(|k| k.name().to_string())
            .filter(|k| with_kinds.iter().any(|(_, m)| m.by_kind.contains_key(k)))
            .collect();
        for (_, m) in &with_kinds {
            for k in m.by_kind.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
        let series: Vec<Series> = with_kinds
            .iter()
            .map(|(name, m)| Series {
                name: name.to_string(),
                values: names
                    .iter()
                    .map(|k| m.by_kind.get(k).and_then(|r| r.mean.value()))
                    .collect(),
            })
            .collect();
        let mut header = vec!["object kind".to_string()];
        for (name, _) in &with_kinds {
            header.push(format!("{name}: mean"));
            header.push(format!("{name}: scored"));
            header.push(format!("{name}: absent"));
        }
        let rows = names
            .iter()
            .map(|k| {
                let mut row = vec![k.clone()];
                for (_, m) in &with_kinds {
                    match m.by_kind.get(k) {
                        Some(r) => {
                            row.push(mc_fmt(opt(r.mean.value())));
                            row.push(r.count.to_string());
                            row.push(r.absent.to_string());
                        }
                        None => row.extend(["-".to_string(), "0".into(), "0".into()]),
                    }
                }
                row
            })
            .collect();
        let mut notes = vec![];
        if with_kinds.len() < mc.len() {
            notes.push(format!(
                "{} of {} MemoryCode inputs have no per-kind breakdown and are not shown here.",
                mc.len() - with_kinds.len(),
                mc.len()
            ));
        }
        let table = Table { header, rows };
        let mut csv_rows = Vec::new();
        for (name, m) in &with_kinds {
            for k in &names {
                let r = m.by_kind.get(k);
                csv_rows.push(vec![
                    name.to_string(),
                    k.clone(),
                    super::csv::num(r.and_then(|r| r.mean.value())),
                    r.map_or(0, |r| r.count).to_string(),
                    r.map_or(0, |r| r.absent).to_string(),
                ]);
            }
        }
        Some(Figure {
            name: "memorycode-by-kind".into(),
            csv: super::csv::write(&["model", "object_kind", "mean", "scored", "absent"], &csv_rows),
            svg: charts::grouped_bars_h(
                "MemoryCode: instruction score by object kind of the pivot",
                &names,
                &Axis {
                    label: "mean instruction score (0-1)".into(),
                    ..score_axis.clone()
                },
                &series,
            )?,
            caption: "Instruction answers grouped by the object kind their pivot is about: the plain mean of the scored answers (answers where the object is absent have no score), so the kinds a model forgets stand out.".into(),
            table,
            notes,
        })
    };
    Ok(McSection {
        macro_scores,
        by_length,
        rounds: super::mc_rounds::figures(mc)?,
        sessions,
        kinds,
    })
}

/// The macro scores in full precision, one row per model and score (the instructions
/// chain's and RAG's as `instructions chain: short history` etc.).
fn macro_csv(mc: &[(&String, &McScoreFile)]) -> String {
    let mut rows = Vec::new();
    for (name, m) in mc {
        for k in MC_METRICS {
            let v = m.macro_scores.get(k).and_then(McScore::value);
            rows.push(vec![name.to_string(), k.to_string(), super::csv::num(v)]);
        }
        for (mode, s) in &m.modes {
            for (which, v) in [
                ("short history", s.macro_scores.short_history),
                ("long history", s.macro_scores.long_history),
            ] {
                rows.push(vec![
                    name.to_string(),
                    format!("{mode}: {which}"),
                    super::csv::num(v.value()),
                ]);
            }
        }
    }
    super::csv::write(&["model", "score", "value"], &rows)
}

/// One macro score of a file.
type ScoreOf = Box<dyn Fn(&McScoreFile) -> Option<f64>>;

/// The macro figure with the instructions-chain and RAG scores added as further metrics
/// when any input has them (their names say the History scorer gave them).
fn with_modes(fig: Figure, mc: &[(&String, &McScoreFile)]) -> Result<Figure, String> {
    let mut names: Vec<String> = Vec::new();
    for (_, m) in mc {
        for k in m.modes.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    if names.is_empty() {
        return Ok(fig);
    }
    let mut cats: Vec<(String, ScoreOf)> = MC_METRICS
        .iter()
        .map(|k| {
            let k = *k;
            (
                k.to_string(),
                Box::new(move |m: &McScoreFile| m.macro_scores.get(k).and_then(McScore::value))
                    as ScoreOf,
            )
        })
        .collect();
    for n in &names {
        for long in [false, true] {
            let n2 = n.clone();
            cats.push((
                format!("{n}: {} history", if long { "long" } else { "short" }),
                Box::new(move |m: &McScoreFile| {
                    let s = m.modes.get(&n2)?;
                    let v = if long {
                        s.macro_scores.long_history
                    } else {
                        s.macro_scores.short_history
                    };
                    v.value()
                }),
            ));
        }
    }
    let labels: Vec<String> = cats.iter().map(|(l, _)| l.clone()).collect();
    let series: Vec<Series> = mc
        .iter()
        .map(|(name, m)| Series {
            name: name.to_string(),
            values: cats.iter().map(|(_, f)| f(m)).collect(),
        })
        .collect();
    let title = "MemoryCode: macro scores by model";
    let svg = charts::grouped_bars_h(
        title,
        &labels,
        &Axis {
            label: "score (fraction followed, 0-1)".into(),
            max: 1.0,
            decimals: 2,
        },
        &series,
    )?;
    let mut header = vec!["model".to_string()];
    header.extend(labels.iter().cloned());
    let rows = mc
        .iter()
        .map(|(name, m)| {
            std::iter::once(name.to_string())
                .chain(cats.iter().map(|(_, f)| mc_fmt(opt(f(m)))))
                .collect()
        })
        .collect();
    Ok(Figure {
        svg,
        caption: format!(
            "{} Instructions chain and RAG ({}): the outputs of `memorycode generate --modes instructions-chain,rag`, scored by MemoryCode's History scorer on the same history queries and pairs (the original evaluator scores neither), averaged as History is.",
            fig.caption,
            names.join(", ")
        ),
        table: Table { header, rows },
        ..fig
    })
}

fn convcode_block(c: &Convcode, name: &str, file: &str) -> Result<CcBlock, String> {
    let (bench, heading) = match (&c.reference, is_static(c)) {
        (Some(r), true) => ("ConvCodeBench", format!("{name} (ref. model: {r})")),
        (None, true) => ("ConvCodeBench", format!("{name} (ref. model not named)")),
        _ => ("ConvCodeWorld", name.to_string()),
    };
    let present: Vec<_> = present(c).collect();
    if present.is_empty() {
        let mut notes = vec![format!("No configuration has results in {file}.")];
        notes.extend(c.notes.iter().cloned());
        return Ok(CcBlock {
            heading,
            pass: None,
            mrr: None,
            notes,
        });
    }
    let pct = Axis {
        label: "Pass@1 (%)".into(),
        max: 100.0,
        decimals: 0,
    };
    let series: Vec<Series> = present
        .iter()
        .map(|col| Series {
            name: col.label.clone(),
            values: col.pass_at_1.clone(),
        })
        .collect();
    let cell = |v: Option<f64>| v.map(py_float).unwrap_or_default();
    let mut header = vec!["Turn".to_string()];
    header.extend(present.iter().map(|col| col.label.clone()));
    let rows = c
        .turns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            std::iter::once(t.to_string())
                .chain(present.iter().map(|col| cell(col.pass_at_1[i])))
                .collect()
        })
        .collect();
    let mut notes = coincidence_notes(&series, "turn");
    let absent = c.columns.len() - present.len();
    if absent > 0 {
        notes.push(format!(
            "{absent} of the {} configurations have no results in {file} and are left out.",
            c.columns.len()
        ));
    }
    let title = format!("{bench} Pass@1 per turn: {heading}");
    let turns: Vec<u64> = c.turns.iter().map(|&t| t as u64).collect();
    let table = Table { header, rows };
    let pass = Some(Figure {
        name: slug(&format!("{bench}-pass-at-1-{heading}")),
        csv: table.csv(),
        svg: charts::lines(&title, "turn", &turns, &pct, &series)?,
        caption: caption(c, name, 1),
        table,
        notes,
    });
    let scored: Vec<_> = c.columns.iter().filter(|col| col.mrr.is_some()).collect();
    let mrr = if scored.is_empty() {
        None
    } else {
        let labels: Vec<String> = scored.iter().map(|col| col.label.clone()).collect();
        let series = vec![
            Series {
                name: "MRR".into(),
                values: scored.iter().map(|col| col.mrr).collect(),
            },
            Series {
                name: "Recall".into(),
                values: scored.iter().map(|col| col.recall).collect(),
            },
        ];
        let title = format!("{bench} MRR and Recall: {heading}");
        let mut header = vec!["Metrics".to_string()];
        header.extend(labels.iter().cloned());
        let row = |label: &str, pick: &dyn Fn(&super::input::Column) -> Option<f64>| {
            std::iter::once(label.to_string())
                .chain(scored.iter().map(|col| cell(pick(col))))
                .collect::<Vec<_>>()
        };
        let table = Table {
            header,
            rows: vec![row("MRR", &|col| col.mrr), row("Recall", &|col| col.recall)],
        };
        Some(Figure {
            name: slug(&format!("{bench}-mrr-recall-{heading}")),
            csv: table.csv(),
            svg: charts::grouped_bars_h(
                &title,
                &labels,
                &Axis {
                    label: "MRR / Recall (%)".into(),
                    decimals: 1,
                    ..pct
                },
                &series,
            )?,
            caption: caption(c, name, 2),
            table,
            notes: vec![],
        })
    };
    Ok(CcBlock {
        heading,
        pass,
        mrr,
        // What `score convcode` prints under its tables.
        notes: c.notes.clone(),
    })
}

/// The captions the text output prints under Tables 1 and 2.
fn caption(c: &Convcode, name: &str, table: u8) -> String {
    let what = if table == 1 {
        "Pass@1 results"
    } else {
        "MRR and Recall results"
    };
    let each = if table == 1 { " for each turn" } else { "" };
    match (&c.reference, is_static(c)) {
        (Some(r), true) => {
            format!("Table {table}. {what} of {name} on ConvCodeBench{each} (ref. model: {r}).")
        }
        _ => format!("Table {table}. {what} of {name} on ConvCodeWorld{each}."),
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
