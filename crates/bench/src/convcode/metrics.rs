//! Pass@1 per turn, MRR and Recall exactly as the original's `print_results.py` (spec §3).

use super::config::{Config, Layout, MAX_TURNS};
use super::eval_file::EvalFile;
use super::locate::{locate, ConfigFiles, Located, TurnFile};
use super::numeric::percent;
use super::score_file::{Benchmark, Column, Mode, Scores, StaticTurn0};
use anyhow::{bail, Result};

/// What to score.
#[derive(Clone, Debug)]
pub struct ScoreRequest {
    pub layout: Layout,
    pub model: String,
    /// `Some(R)` for ConvCodeBench with reference model R.
    pub reference: Option<String>,
}

/// Scoring switches of the original's `print_results.py` beyond what is scored.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScoreOptions {
    /// `--exclude_init_solved`: leave the tasks the scored model solves at its own turn 0
    /// out of MRR and Recall (Table 2). Pass@1 (Table 1) keeps every task, as in the original.
    pub exclude_init_solved: bool,
}

/// Checks whether code compiles (`compile(code, 'tmp.py', 'exec')`); used for the original's
/// assertion that all turn-0 code compiles before `w/ CF` repeats turn 0.
pub type CompileCheck<'a> = &'a dyn Fn(&[&str]) -> Result<Vec<bool>>;

fn mean_percent(values: &[f64], what: &str) -> Result<f64> {
    match percent(values) {
        Some(v) => Ok(v),
        None => bail!("no tasks to average for {what}"),
    }
}

/// Tasks left out of MRR and Recall (none unless `exclude_init_solved`).
type Excluded = std::collections::HashSet<String>;

/// The excluded tasks in turn 0's order (`Scores::excluded_tasks`).
fn in_turn0_order(init: &EvalFile, excluded: &Excluded) -> Vec<String> {
    (init.keys().iter())
        .filter(|k| excluded.contains(*k))
        .cloned()
        .collect()
}

/// A complete configuration's (Pass@1 per turn, MRR, Recall).
type Numbers = (Vec<f64>, f64, f64);

/// A complete configuration's numbers, or none when they cannot be computed: the
/// configuration is then dropped, with a note saying why.
fn kept(config: Config, numbers: Result<Numbers>, notes: &mut Vec<String>) -> Option<Numbers> {
    match numbers {
        Ok(n) => Some(n),
        Err(e) => {
            notes.push(format!("{config} dropped: {e:#}"));
            None
        }
    }
}

impl Column {
    /// A configuration scored from its complete run.
    fn computed(config: Config, (pass, mrr, recall): Numbers) -> Column {
        Column {
            config: config.code(),
            label: config.label(),
            complete: true,
            pass_at_1: pass.into_iter().map(Some).collect(),
            mrr: Some(mrr),
            recall: Some(recall),
        }
    }

    /// A configuration without numbers: `rows` blank cells in Table 1, none in Table 2.
    fn blank(config: Config, rows: usize) -> Column {
        Column {
            config: config.code(),
            label: config.label(),
            complete: false,
            pass_at_1: vec![None; rows],
            mrr: None,
            recall: None,
        }
    }
}

/// Pass@1 of `results` with `base` OR-ed in, over every key of `results`.
fn pass_at_1(results: &EvalFile, base: &EvalFile) -> Result<f64> {
    let mut v = Vec::with_capacity(results.len());
    for k in results.keys() {
        v.push(if results.passed(k)? || base.passed(k)? {
            1.0
        } else {
            0.0
        });
    }
    mean_percent(&v, &results.path.display().to_string())
}

/// Score a results folder.
pub fn score(req: &ScoreRequest, compiles: Option<CompileCheck>) -> Result<Scores> {
    score_with(req, compiles, ScoreOptions::default())
}

/// Score a results folder with the original's optional switches.
pub fn score_with(
    req: &ScoreRequest,
    compiles: Option<CompileCheck>,
    opts: ScoreOptions,
) -> Result<Scores> {
    score_until(req, compiles, opts, &|| false)
}

/// What `score_with` answers when `stop` says to stop.
pub const STOPPED: &str = "the evaluation was stopped";

/// `score_with`, asking `stop` before each configuration (and before the turn-0 compile
/// check): once it answers true, the scoring ends with the error `STOPPED`. The server
/// stops a cancelled evaluation this way.
pub fn score_until(
    req: &ScoreRequest,
    compiles: Option<CompileCheck>,
    opts: ScoreOptions,
    stop: &dyn Fn() -> bool,
) -> Result<Scores> {
    // Every file first (a missing turn 0 is named with the command that makes it), then
    // each configuration's files loaded and scored in turn.
    let located = locate(&req.layout, &req.model, req.reference.as_deref())?;
    let mut scores = match &req.reference {
        None => score_live(&located, &req.model, compiles, opts, stop),
        Some(r) => score_static(&located, &req.model, r, opts, stop),
    }?;
    super::score_file::mark_shard(&mut scores, &req.layout.root)?;
    Ok(scores)
}

/// Live turns of one configuration, in order; stops at an unreadable file as the original
/// does.
fn load_turns(files: &[TurnFile], notes: &mut Vec<String>) -> Vec<EvalFile> {
    let mut out = Vec::new();
    for f in files {
        match EvalFile::load(&f.eval) {
            Ok(f) => out.push(f),
            Err(e) => {
                notes.push(format!("{e:#}"));
                break;
            }
        }
    }
    out
}

/// Task ids in a turn's eval file that turn 0 does not have are counted in that turn's
/// Pass@1 (over the file's own keys) while MRR and Recall follow turn 0's tasks: not an
/// error, but the reader is told which file and which ids.
fn note_extra_tasks(init: &EvalFile, turns: &[EvalFile], notes: &mut Vec<String>) {
    let known: std::collections::HashSet<&str> = init.keys().iter().map(String::as_str).collect();
    for f in turns {
        let extra: Vec<&str> = (f.keys().iter().map(String::as_str))
            .filter(|k| !known.contains(k))
            .collect();
        if !extra.is_empty() {
            let shown: Vec<&str> = extra.iter().take(5).copied().collect();
            notes.push(format!(
                "{}: {} task id(s) not in turn 0 ({}{}) are counted in this turn's Pass@1; \
                 MRR and Recall use turn 0's tasks",
                f.path.display(),
                extra.len(),
                shown.join(", "),
                if extra.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                }
            ));
        }
    }
}

/// The tasks `model` solves at its own turn 0, when `exclude_init_solved` asks for them,
/// with a note saying how many.
fn init_solved(
    init: &EvalFile,
    model: &str,
    opts: ScoreOptions,
    notes: &mut Vec<String>,
) -> Result<Excluded> {
    let mut excluded = Excluded::new();
    if opts.exclude_init_solved {
        for k in init.keys() {
            if init.passed(k)? {
                excluded.insert(k.clone());
            }
        }
        notes.push(format!(
            "{} task(s) solved by {model} at turn 0 left out of MRR and Recall ({} left); \
             Pass@1 counts every task, as in the original",
            excluded.len(),
            init.len() - excluded.len()
        ));
    }
    Ok(excluded)
}

fn score_live(
    located: &Located,
    model: &str,
    compiles: Option<CompileCheck>,
    opts: ScoreOptions,
    stop: &dyn Fn() -> bool,
) -> Result<Scores> {
    let init = EvalFile::load(&located.turn0.eval)?;
    let p0 = pass_at_1(&init, &init)?;
    let mut notes: Vec<String> = located.turn0.note.iter().cloned().collect();
    let excluded = init_solved(&init, model, opts, &mut notes)?;
    let mut columns = Vec::new();
    let mut turn0_checked = false;

    for ConfigFiles { config, turns } in &located.configs {
        let config = *config;
        if stop() {
            bail!(STOPPED);
        }
        let turns = load_turns(turns, &mut notes);
        note_extra_tasks(&init, &turns, &mut notes);
        let mut list = vec![&init];
        list.extend(turns.iter());
        let computed = if list.len() == MAX_TURNS + 1 {
            kept(config, live_column(&list, &init, &excluded), &mut notes)
        } else {
            if !turns.is_empty() {
                notes.push(format!(
                    "{config}: {} of {MAX_TURNS} turn files readable; configuration incomplete",
                    turns.len()
                ));
            }
            None
        };
        let column = match computed {
            Some(numbers) => Column::computed(config, numbers),
            None if config.repeats_turn0() => {
                if !turn0_checked {
                    turn0_checked = true;
                    check_turn0_compiles(&init, compiles, &mut notes);
                }
                // The original fills these columns from turn 0 when they have no logs; we keep
                // that, and say so.
                notes.push(format!(
                    "{} ({config}) has no complete turn logs: its columns repeat turn 0's Pass@1, \
                     as the original does",
                    config.label()
                ));
                Column {
                    config: config.code(),
                    label: config.label(),
                    complete: false,
                    pass_at_1: vec![Some(p0); MAX_TURNS + 1],
                    mrr: Some(p0),
                    recall: Some(p0),
                }
            }
            None => Column::blank(config, MAX_TURNS + 1),
        };
        columns.push(column);
    }
    Ok(Scores {
        benchmark: Benchmark::of(Mode::Live),
        mode: Mode::Live,
        model: model.to_string(),
        reference: None,
        turns: (0..=MAX_TURNS).collect(),
        columns,
        excluded_tasks: in_turn0_order(&init, &excluded),
        notes,
        turn0: None,
        shard: None,
    })
}

/// The original asserts that every turn-0 solution compiles before repeating turn 0; we report it.
fn check_turn0_compiles(init: &EvalFile, compiles: Option<CompileCheck>, notes: &mut Vec<String>) {
    let Some(check) = compiles else { return };
    let with_code: Vec<(&String, &str)> = init
        .keys()
        .iter()
        .filter_map(|k| init.solution(k).map(|s| (k, s)))
        .collect();
    let codes: Vec<&str> = with_code.iter().map(|(_, s)| *s).collect();
    match check(&codes) {
        Ok(ok) => {
            let bad: Vec<&str> = with_code
                .iter()
                .zip(ok)
                .filter(|(_, ok)| !ok)
                .map(|((k, _), _)| k.as_str())
                .collect();
            if !bad.is_empty() {
                notes.push(format!(
                    "turn-0 code of {} task(s) does not compile ({}); the original asserts it does \
                     before repeating turn 0 for w/ CF and w/ CF SNF",
                    bad.len(),
                    bad.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        Err(e) => notes.push(format!("could not check that turn-0 code compiles: {e:#}")),
    }
}

/// MRR and Recall over turn 0's tasks (`init`) but `excluded`. A task's rank is that of the
/// first `(file, rank)` of `order` it passes in (0-based); MRR = mean of 1/(1 + rank), 0
/// without one; Recall = share with a pass.
fn mrr_recall(
    init: &EvalFile,
    excluded: &Excluded,
    order: &[(&EvalFile, usize)],
) -> Result<(f64, f64)> {
    let mut firsts: Vec<Option<usize>> = Vec::new();
    for k in init.keys().iter().filter(|k| !excluded.contains(*k)) {
        let mut first = None;
        for (f, rank) in order {
            if f.passed(k)? {
                first = Some(*rank);
                break;
            }
        }
        firsts.push(first);
    }
    let rr: Vec<f64> = firsts
        .iter()
        .map(|f| f.map_or(0.0, |t| 1.0 / (t as f64 + 1.0)))
        .collect();
    let hit: Vec<f64> = firsts
        .iter()
        .map(|f| if f.is_some() { 1.0 } else { 0.0 })
        .collect();
    Ok((mean_percent(&rr, "MRR")?, mean_percent(&hit, "Recall")?))
}

/// (Pass@1 per turn, MRR, Recall) of a complete live run; `list[0]` is turn 0, turn `t`
/// has rank `t`. MRR and Recall leave `excluded` out.
fn live_column(list: &[&EvalFile], init: &EvalFile, excluded: &Excluded) -> Result<Numbers> {
    let mut pass = Vec::new();
    for f in list {
        pass.push(pass_at_1(f, init)?);
    }
    let order: Vec<(&EvalFile, usize)> = list.iter().copied().zip(0..).collect();
    let (mrr, recall) = mrr_recall(init, excluded, &order)?;
    Ok((pass, mrr, recall))
}

fn score_static(
    located: &Located,
    model: &str,
    reference: &str,
    opts: ScoreOptions,
    stop: &dyn Fn() -> bool,
) -> Result<Scores> {
    let init = EvalFile::load(&located.turn0.eval)?;
    let ref_turn0 =
        (located.reference_turn0.as_ref()).expect("a static score locates the reference's turn 0");
    let ref_init = EvalFile::load(&ref_turn0.eval)?;
    let mut notes: Vec<String> = (located.turn0.note.iter())
        .chain(&ref_turn0.note)
        .cloned()
        .collect();
    let excluded = init_solved(&init, model, opts, &mut notes)?;
    let mut columns = Vec::new();
    for ConfigFiles { config, turns } in &located.configs {
        let config = *config;
        if stop() {
            bail!(STOPPED);
        }
        // T's turn-i file first, then R's live turn-i file; a missing R file ends the list after
        // T's file was taken, so R's turn 10 is never needed (as in the original).
        let mut targets = vec![&init];
        let mut refs = vec![&ref_init];
        let mut owned_t = Vec::new();
        let mut owned_r = Vec::new();
        for TurnFile {
            turn,
            eval,
            reference,
        } in turns
        {
            match EvalFile::load(eval) {
                Ok(f) => owned_t.push(f),
                Err(e) => {
                    notes.push(format!("{e:#}"));
                    break;
                }
            }
            let rp = reference
                .as_ref()
                .expect("a static turn names the reference's");
            match EvalFile::load(rp) {
                Ok(f) => owned_r.push(f),
                Err(e) => {
                    let needed = if *turn == MAX_TURNS {
                        " (not needed)"
                    } else {
                        ""
                    };
                    notes.push(format!("{config}: {e:#}{needed}"));
                    break;
                }
            }
        }
        targets.extend(owned_t.iter());
        refs.extend(owned_r.iter());
        let computed = if targets.len() == MAX_TURNS + 1 {
            kept(
                config,
                static_column(&targets, &refs, &excluded),
                &mut notes,
            )
        } else {
            if targets.len() > 1 {
                notes.push(format!(
                    "{config}: {} of {MAX_TURNS} static turns usable; configuration incomplete",
                    targets.len() - 1
                ));
            }
            None
        };
        columns.push(match computed {
            Some(numbers) => Column::computed(config, numbers),
            None => Column::blank(config, MAX_TURNS),
        });
    }
    Ok(Scores {
        benchmark: Benchmark::of(Mode::Static),
        mode: Mode::Static,
        model: model.to_string(),
        reference: Some(reference.to_string()),
        turns: (1..=MAX_TURNS).collect(),
        columns,
        excluded_tasks: in_turn0_order(&init, &excluded),
        notes,
        turn0: Some(StaticTurn0 {
            reference_pass_at_1: pass_at_1(&ref_init, &ref_init)?,
            model_pass_at_1: pass_at_1(&init, &init)?,
        }),
        shard: None,
    })
}

/// `targets[0]` = T's turn 0, `targets[i]` = T's static turn i; `refs[0]` = R's turn 0,
/// `refs[i]` = R's live turn i (R's turn 10 may be absent). MRR and Recall leave `excluded` out.
fn static_column(
    targets: &[&EvalFile],
    refs: &[&EvalFile],
    excluded: &Excluded,
) -> Result<Numbers> {
    let r0 = refs[0];
    let mut pass = Vec::new();
    for f in &targets[1..] {
        pass.push(pass_at_1(f, r0)?);
    }
    // R's turn 0 first, then T's turns, R's turn i-1 reached just before T's turn i, at
    // rank i-1 (as the original counts).
    let mut order = vec![(r0, 0), (targets[0], 0)];
    for (i, t) in targets.iter().enumerate().skip(1) {
        if let Some(r) = refs.get(i - 1) {
            order.push((r, i - 1));
        }
        order.push((t, i));
    }
    let (mrr, recall) = mrr_recall(targets[0], excluded, &order)?;
    Ok((pass, mrr, recall))
}

#[cfg(test)]
mod extra_task_tests {
    use super::*;
    use serde_json::json;

    fn eval(path: &str, tasks: &[&str]) -> EvalFile {
        let eval: serde_json::Map<String, serde_json::Value> = tasks
            .iter()
            .map(|t| (t.to_string(), json!([{"status": "pass"}])))
            .collect();
        EvalFile::from_value(std::path::Path::new(path), &json!({ "eval": eval })).unwrap()
    }

    /// Issue 10, item 13: an extra task id in one turn's eval file is named in a note.
    #[test]
    fn extra_task_ids_in_a_turn_are_noted() {
        let init = eval("t0.json", &["H/0", "H/1"]);
        let turns = [
            eval("t1.json", &["H/0", "H/1"]),
            eval("t2.json", &["H/0", "H/1", "H/9"]),
        ];
        let mut notes = Vec::new();
        note_extra_tasks(&init, &turns, &mut notes);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("t2.json: 1 task id(s) not in turn 0 (H/9)"),
            "{}",
            notes[0]
        );
    }
}
