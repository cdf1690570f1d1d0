//! Harness speed: the live loop over HumanEval x 10 turns for one configuration against an
//! instant loopback model, so the figure is the harness's (prompting, logging, compiling,
//! evaluating), not a model's.

use super::config::{Config, Layout, MAX_TURNS};
use super::executor::{Control, Observer};
use super::live::{run_live, LiveOptions, Turn0};
use super::records::sample_line;
use super::turn::TurnEnv;
use anyhow::{Context, Result};
use pivot_exec::{load_problems, ProblemSource, Runner, RunnerConfig};
use pivot_llm::loopback::{Answer, LoopbackServer, Script};
use pivot_llm::{Client, ClientConfig};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct SpeedOptions {
    pub python: PathBuf,
    pub problems: ProblemSource,
    pub config: Config,
    pub turns: usize,
    /// Tasks refined at once.
    pub workers: usize,
    /// Runner processes (default: cores).
    pub jobs: Option<usize>,
    pub limit: Option<usize>,
}

impl Default for SpeedOptions {
    fn default() -> Self {
        SpeedOptions {
            python: PathBuf::from("python3"),
            problems: ProblemSource::HumanEval,
            config: Config::parse("CF_EF_FULL").expect("known config"),
            turns: MAX_TURNS,
            workers: 8,
            jobs: None,
            limit: None,
        }
    }
}

#[derive(Debug)]
pub struct SpeedReport {
    pub tasks: usize,
    pub turns: usize,
    pub records: usize,
    pub evaluated: usize,
    pub requests: usize,
    pub sandbox: String,
    pub wall: Duration,
}

impl SpeedReport {
    pub fn per_task_turn(&self) -> Duration {
        self.wall / (self.tasks * self.turns).max(1) as u32
    }
}

impl std::fmt::Display for SpeedReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "convcode live loop: {} tasks x {} turns, {} records, {} evaluations, {} model requests ({} sandbox)",
            self.tasks, self.turns, self.records, self.evaluated, self.requests, self.sandbox
        )?;
        write!(
            f,
            "wall time {:.2} s, {:.1} ms per task-turn",
            self.wall.as_secs_f64(),
            self.per_task_turn().as_secs_f64() * 1000.0
        )
    }
}

/// Run the benchmark in a temporary folder. Every answer is wrong (it never defines the entry
/// point), so every task is refined and evaluated in every turn: the worst case.
pub fn bench_convcode(opts: &SpeedOptions, observer: &dyn Observer) -> Result<SpeedReport> {
    let mut problems = load_problems(&opts.problems, &opts.python)?;
    if let Some(n) = opts.limit {
        problems.truncate(n);
    }
    let dir = tempfile::Builder::new()
        .prefix("pivot-convcode-bench-")
        .tempdir()?;
    let samples = dir.path().join("samples.jsonl");
    let text: String = problems
        .iter()
        .map(|p| sample_line(&p.task_id, &format!("{}    return None\n", p.code_prompt)) + "\n")
        .collect();
    pivot_base::durable::write_scratch(&samples, text).context("writing benchmark samples")?;
    let script = Script {
        default: Answer {
            code: Some("def _not_the_entry_point():\n    return None".into()),
            ..Answer::default()
        },
        ..Script::default()
    };
    let server = LoopbackServer::start(script)?;
    let mut cc = ClientConfig::new(server.base_url(), "bench/model");
    // No cache: every task-turn costs a real HTTP round trip, as with a live model.
    cc.cache = None;
    cc.concurrency = opts.workers.max(1);
    cc.retries = 0;
    let coder = Client::new(cc.clone())?;
    let simulator = Client::new(ClientConfig {
        model: "bench/simulator".into(),
        ..cc
    })?;
    let mut rc = RunnerConfig {
        python: opts.python.clone(),
        ..RunnerConfig::default()
    };
    if let Some(j) = opts.jobs {
        rc.jobs = j;
    }
    let runner = Runner::new(rc)?;
    let env = TurnEnv {
        coder: &coder,
        simulator: Some(&simulator),
        python: &opts.python,
        runner: Some(&runner),
        instructions: None,
    };
    let mut lo = LiveOptions::new(
        Layout::new(dir.path().join("results"), "bench/simulator"),
        "bench/model",
        vec![opts.config],
    );
    lo.turns = opts.turns;
    lo.workers = opts.workers;
    let start = Instant::now();
    let report = run_live(
        &lo,
        &problems,
        Turn0::Samples(&samples),
        &env,
        &runner,
        &Control::default(),
        observer,
    )?;
    let wall = start.elapsed();
    Ok(SpeedReport {
        tasks: problems.len(),
        turns: opts.turns,
        records: report.written,
        evaluated: report.evaluated,
        requests: server.seen().len(),
        sandbox: runner.sandbox().to_string(),
        wall,
    })
}
