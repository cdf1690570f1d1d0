//! ConvCodeBench (spec §2, static): the target model refines the reference model's logged code
//! once per turn with the reference run's frozen verbal feedback; outputs are evaluated but
//! never fed forward.

use super::config::{eval_path, Config, Layout, MAX_TURNS};
use super::evaluate::load_eval;
use super::executor::{Control, Observer};
use super::live::{turn_jobs, RunReport, Turns};
use super::records::read_log;
use super::turn::TurnEnv;
use anyhow::{bail, Context, Result};
use pivot_exec::{Problem, Runner};
use std::collections::HashMap;

pub struct StaticOptions {
    pub layout: Layout,
    /// Target model T.
    pub model: String,
    /// Reference model R whose live logs are replayed.
    pub reference: String,
    pub configs: Vec<Config>,
    pub turns: usize,
    pub fix_quirks: bool,
    pub workers: usize,
    /// Run only this shard of the problems (see `LiveOptions::shard`).
    pub shard: Option<crate::shard::Shard>,
}

impl StaticOptions {
    pub fn new(layout: Layout, model: impl Into<String>, reference: impl Into<String>) -> Self {
        StaticOptions {
            layout,
            model: model.into(),
            reference: reference.into(),
            configs: Config::static_reported(),
            turns: MAX_TURNS,
            fix_quirks: false,
            workers: 4,
            shard: None,
        }
    }
}

/// The reference run's files the replay reads that are missing (each turn's previous code
/// and its evaluation, and for verbal configurations each turn's frozen feedback), in the
/// order the replay would need them; empty when the reference run is complete. Checked
/// before anything is asked of the target model.
pub fn missing_reference(opts: &StaticOptions) -> Vec<std::path::PathBuf> {
    let layout = &opts.layout;
    let r = opts.reference.as_str();
    let mut missing = Vec::new();
    let mut need = |p: std::path::PathBuf| {
        if !p.exists() && !missing.contains(&p) {
            missing.push(p);
        }
    };
    for &config in &opts.configs {
        for t in 1..=opts.turns {
            let prev = if t == 1 {
                layout.turn0_samples_found(r).0
            } else {
                layout.live_log(r, config, t - 1)
            };
            need(eval_path(&prev));
            need(prev);
            if config.verbal.is_some() {
                need(layout.live_log(r, config, t));
            }
        }
    }
    missing
}

pub fn run_static(
    opts: &StaticOptions,
    problems: &[Problem],
    env: &TurnEnv,
    runner: &Runner,
    control: &Control,
    observer: &dyn Observer,
) -> Result<RunReport> {
    let (problems, whole) = super::live::shard_of(problems, opts.shard);
    let problems: &[Problem] = &problems;
    let by_id: HashMap<&str, &Problem> = problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    let layout = &opts.layout;
    let r = opts.reference.as_str();
    let mut report = RunReport::default();
    let turns = Turns {
        env,
        runner,
        by_id: &by_id,
        fix_quirks: opts.fix_quirks,
        workers: opts.workers,
        control,
        observer,
    };
    for &config in &opts.configs {
        let mut counts = Vec::new();
        for t in 1..=opts.turns {
            let prev_path = if t == 1 {
                layout.turn0_samples_found(r).0
            } else {
                layout.live_log(r, config, t - 1)
            };
            let prev_eval_path = eval_path(&prev_path);
            if !prev_path.exists() || !prev_eval_path.exists() {
                bail!(
                    "reference run incomplete: {} and its evaluation {} are needed for {config} turn {t}",
                    prev_path.display(),
                    prev_eval_path.display()
                );
            }
            let prev_log = read_log(&prev_path)?;
            prev_log.check_unique(&prev_path)?;
            let prev_eval = load_eval(&prev_eval_path)?;
            let feedback_path = layout.live_log(r, config, t);
            let frozen = if config.verbal.is_some() {
                if !feedback_path.exists() {
                    bail!("reference run incomplete: {} (its verbal feedback) is needed for {config} turn {t}", feedback_path.display());
                }
                Some(read_log(&feedback_path).with_context(|| "reading the reference's feedback")?)
            } else {
                None
            };
            let out_path = layout.static_log(r, &opts.model, config, t);
            let done = super::live::read_done(&out_path, observer)?;
            let (jobs, skipped) = turn_jobs(
                problems,
                whole.as_deref(),
                &done,
                &prev_log,
                &prev_eval,
                frozen.as_ref(),
            );
            if skipped > 0 {
                observer.note(&format!("{config} turn {t}: {skipped} task(s) missing from the reference run are left out"));
            }
            let where_ = format!("static {config} turn {t}");
            match turns.run((config, t), &jobs, &out_path, &done, &where_, &mut report)? {
                Some(count) => counts.push(count),
                None => return Ok(report),
            }
        }
        report.pass_counts.push((config, counts));
    }
    Ok(report)
}
