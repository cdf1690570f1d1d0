//! `pivot-lsp memorycode generate`: flags and output only; the logic is in
//! `bench::memorycode::generate`.

use crate::cli::shared::endpoint_args::EndpointArgs;
use crate::cli::shared::progress::Progress;
use anyhow::{bail, Context, Result};
use pivot_bench::memorycode::data::dialogue_files;
use pivot_bench::memorycode::dataset::{converse, write_prompts};
use pivot_bench::memorycode::feedback::{generate_with_feedback, FeedbackKind, FeedbackReport};
use pivot_bench::memorycode::generate::{
    generate, load_topics, model_dir_name, parse_ids, select_dialogues, GenerateOptions, Mode,
};
use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_llm::{Cache, Client, ClientConfig, Sampling};
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub enum MemorycodeCommand {
    /// Generate model outputs (instruction, session, history, instructions-chain, rag) from an
    /// OpenAI-compatible endpoint, in the files `score memorycode --outputs OUT/<model>` reads.
    Generate(Box<GenerateArgs>),
    /// Conversation prompts (`prompt_N.json`) from templates, as the original generate_prompt.py.
    Prompts(PromptsArgs),
    /// Conversation text of each session from the prompts, written into the template files
    /// (the original's generate_dialogue.py, through an OpenAI-compatible endpoint).
    Converse(Box<ConverseArgs>),
    /// Dialogue templates with the original generate_template.py's structure and sampling
    /// rules, reproducible by seed (by default the 360 of scripts/generate_dataset.sh).
    Templates(TemplatesArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Without --sessions, writes dialogue_1..360.json with the parameters \
scripts/generate_dataset.sh gives each (30 templates for each of 1, 2, 3, 4, 5, 10, 15, 20, 30, \
40, 50, 100 sessions). The original draws from Python's unseeded random, so its files cannot be \
reproduced; these make the same draws on CPython's generator, seeded from --seed and the template \
id, so the same seed gives the same files."
)]
pub struct TemplatesArgs {
    /// topics.json (instructions, fillers, filler instructions, contexts, personas).
    #[arg(long, value_name = "FILE")]
    pub topics: PathBuf,
    /// Output folder for dialogue_N.json templates.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Seed of Python's random generator; template N draws from it mixed with N.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Only templates with this many sessions (generate_dataset.sh's parameters for it).
    #[arg(long, value_name = "N")]
    pub sessions: Option<usize>,
    /// With --sessions: how many templates.
    #[arg(long, default_value_t = 30)]
    pub count: usize,
    /// With --sessions: the first template id.
    #[arg(long, default_value_t = 1)]
    pub first_id: usize,
}

#[derive(clap::Args, Debug)]
pub struct ConverseArgs {
    /// Folder of prompt_N.json files (`memorycode prompts`).
    #[arg(long, value_name = "DIR")]
    pub prompts: PathBuf,
    /// Folder of dialogue_N.json templates; each gets its sessions' `text`.
    #[arg(long, value_name = "DIR")]
    pub templates: PathBuf,
    /// Model name as sent to the endpoint.
    #[arg(long, value_name = "M")]
    pub model: String,
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Sampling temperature (the original: command-r-plus at 0.9).
    #[arg(long, default_value_t = pivot_bench::memorycode::dataset::CONVERSE_TEMPERATURE)]
    pub temperature: f64,
    /// Nucleus sampling `top_p` (the original: Cohere's p = 0.9).
    #[arg(long, default_value_t = pivot_bench::memorycode::dataset::CONVERSE_TOP_P)]
    pub top_p: f64,
    /// Response cache folder (default: TEMPLATES/.cache).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "The default follows the original's code, quirks included (\"They had \
{i+1} conversations before\", \"medium-length\", filler topics lowercased, filler instructions \
also listed among the coding instructions). --published reproduces the earlier version that \
made the prompt files published with the dataset, which left filler instructions out of that list."
)]
pub struct PromptsArgs {
    /// A template file (`dialogue_N.json`), or a folder of them.
    #[arg(long, value_name = "FILE|DIR")]
    pub template: PathBuf,
    /// Output folder for `prompt_N.json`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Reproduce the published prompt files (filler instructions not repeated as coding instructions).
    #[arg(long)]
    pub published: bool,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Requests are those of the original's OpenAI path \
(generate_model_output.py): [system: preamble, user: prompt] with only the model name, so the \
endpoint samples at its own default temperature unless --temperature is given. Answers are \
cached (--cache); a rerun sends nothing already answered and rewrites no unchanged file, so an \
interrupted run resumes by running it again. Writes OUT/instruction/<model>.json and \
OUT/<model>/output_N.json, where <model> is the last path component of --model.")]
pub struct GenerateArgs {
    /// Folder of dialogue_N.json files.
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,
    /// topics.json for the instruction mode (default: topics.json beside DATASET).
    #[arg(long, value_name = "FILE")]
    pub topics: Option<PathBuf>,
    /// Model name as sent to the endpoint.
    #[arg(long, value_name = "M")]
    pub model: String,
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Only these dialogues, e.g. `1,2,5-7` (the instruction mode still covers all of topics.json).
    #[arg(long, value_name = "IDS")]
    pub dialogues: Option<String>,
    /// Comma-separated modes.
    #[arg(
        long,
        value_parser = crate::cli::shared::choice::parser::<Mode>(Mode::CHOICES),
        value_delimiter = ',',
        default_value = "instruction,session,history"
    )]
    pub modes: Vec<Mode>,
    /// Sampling temperature (default: not sent, as the original's OpenAI path does).
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,
    /// Cohere-style `/rerank` endpoint (base URL with `/v1`) for the rag mode; vLLM and
    /// text-embeddings-inference serve one. Same key as the model endpoint.
    #[arg(long, value_name = "URL")]
    pub reranker_url: Option<String>,
    /// Reranker model name.
    #[arg(long, default_value = pivot_bench::memorycode::generate::DEFAULT_RERANK_MODEL)]
    pub reranker_model: String,
    /// Response cache folder (default: OUT/.cache).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// After round 0, ask again each answer whose code has findings, with only those
    /// findings as the next user turn (round r in OUT/feedback/round-r/<model>).
    #[arg(
        long,
        value_name = "KIND",
        value_parser = crate::cli::shared::choice::parser::<FeedbackKind>(FeedbackKind::CHOICES)
    )]
    pub feedback: Option<FeedbackKind>,
    /// With --feedback: how many feedback rounds after round 0.
    #[arg(
        long,
        value_name = "K",
        requires = "feedback",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..=100)
    )]
    pub rounds: u32,
}

pub fn run(cmd: MemorycodeCommand) -> Result<i32> {
    match cmd {
        MemorycodeCommand::Generate(a) => run_generate(*a),
        MemorycodeCommand::Prompts(a) => run_prompts(a),
        MemorycodeCommand::Converse(a) => run_converse(*a),
        MemorycodeCommand::Templates(a) => run_templates(a),
    }
}

fn run_generate(a: GenerateArgs) -> Result<i32> {
    let ids = a.dialogues.as_deref().map(parse_ids).transpose()?;
    let dialogues = select_dialogues(&a.dataset, ids.as_deref())?;
    let topics = if a.modes.contains(&Mode::Instruction) {
        let path = match &a.topics {
            Some(p) => p.clone(),
            None => a
                .dataset
                .parent()
                .map(|p| p.join("topics.json"))
                .context("no --topics and DATASET has no parent folder")?,
        };
        Some(load_topics(&path)?)
    } else {
        None
    };
    let (client, _server) = client(
        &a.endpoint,
        &a.model,
        a.cache.clone().unwrap_or_else(|| a.out.join(".cache")),
    )?;
    let opts = GenerateOptions {
        out: a.out.clone(),
        model_name: model_dir_name(&a.model).to_string(),
        modes: a.modes.clone(),
        sampling: Sampling {
            temperature: a.temperature,
            top_p: None,
        },
        workers: a.endpoint.requests.concurrency.max(1),
    };
    // The reranker: --reranker-url, or the loopback server's own /rerank.
    let rerank_url = match (&a.reranker_url, &_server) {
        (Some(u), _) => Some(u.clone()),
        (None, Some(s)) => Some(s.base_url()),
        (None, None) => None,
    };
    let reranker = match rerank_url {
        Some(url) => {
            let mut cfg = client.config().clone();
            cfg.base_url = url;
            cfg.model = a.reranker_model.clone();
            Some(Client::new(cfg)?)
        }
        None => None,
    };
    let _lock = open_out(
        &a.out,
        client.config().cache.as_ref(),
        &format!("memorycode generate --model {}", a.model),
    )?;
    if let Some(kind) = a.feedback {
        return run_feedback(
            &client,
            reranker.as_ref(),
            topics.as_deref(),
            &dialogues,
            &opts,
            kind,
            a.rounds as usize,
        );
    }
    let bar = std::sync::OnceLock::<Progress>::new();
    let progress = |_done: usize, total: usize| {
        bar.get_or_init(|| Progress::new(total as u64, "requests"))
            .inc(1);
    };
    let report = generate(
        &client,
        reranker.as_ref(),
        topics.as_deref(),
        &dialogues,
        &opts,
        &progress,
    )?;
    if let Some(b) = bar.get() {
        b.finish();
    }
    print_round("", &report);
    Ok(failures(&report.failures))
}

/// A round's files and requests.
fn print_round(label: &str, report: &pivot_bench::memorycode::generate::GenerateReport) {
    for p in &report.written {
        println!("wrote {}", p.display());
    }
    println!(
        "{label}{} requests ({} from the cache), {} files written, {} unchanged",
        report.requests,
        report.cached,
        report.written.len(),
        report.unchanged.len()
    );
}

/// The exit code of a run with these failures, printed.
fn failures(failures: &[String]) -> i32 {
    if failures.is_empty() {
        return 0;
    }
    for f in failures {
        eprintln!("error: {f}");
    }
    eprintln!(
        "{} problems; files with all their answers were written, the rest resume from the cache on the next run",
        failures.len()
    );
    1
}

/// `generate --feedback`: round 0 as without it, then the rounds, each printed with its
/// counts; the answers' diagnostics are the MCP server's (`pivot_workspace`).
fn run_feedback(
    client: &Client,
    reranker: Option<&Client>,
    topics: Option<&[pivot_bench::memorycode::generate::GenInstruction]>,
    dialogues: &[pivot_bench::memorycode::generate::GenDialogue],
    opts: &GenerateOptions,
    kind: FeedbackKind,
    rounds: usize,
) -> Result<i32> {
    // A bar per round: each round's total is known only once the round before is answered.
    let bar = std::sync::Mutex::new(None::<(usize, Progress)>);
    let progress = |round: usize, _done: usize, total: usize| {
        let mut b = bar.lock().unwrap_or_else(|p| p.into_inner());
        if b.as_ref().is_none_or(|(r, _)| *r != round) {
            if let Some((_, old)) = b.take() {
                old.finish();
            }
            *b = Some((
                round,
                Progress::new(total as u64, &format!("round {round} requests")),
            ));
        }
        if let Some((_, p)) = b.as_ref() {
            p.inc(1);
        }
    };
    let mut critic = pivot_workspace::memorycode_feedback::AgentCritic::new();
    let report: FeedbackReport = generate_with_feedback(
        client,
        reranker,
        topics,
        dialogues,
        opts,
        kind,
        rounds,
        &mut critic,
        &progress,
    )?;
    if let Some((_, p)) = bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
        p.finish();
    }
    let mut all = Vec::new();
    for (r, (round, counts)) in report.rounds.iter().zip(&report.summary.rounds).enumerate() {
        print_round(&format!("round {r}: "), round);
        println!(
            "round {r}: {:.3} s ({:.3} s of it the answers' diagnostics)",
            round.elapsed.as_secs_f64(),
            report.critique.get(r).map_or(0.0, |d| d.as_secs_f64())
        );
        println!(
            "round {r}: {} answers, {} with findings; {} asked again: {} fixed, {} kept broken, \
             {} broken anew, {} unanswered ({})",
            counts.answers,
            counts.broken,
            counts.reasked,
            counts.fixed,
            counts.kept_broken,
            counts.broken_anew,
            counts.unanswered,
            counts.outputs
        );
        all.extend(round.failures.iter().map(|f| format!("round {r}: {f}")));
    }
    println!("summary in {}", report.summary_path.display());
    Ok(failures(&all))
}

fn run_prompts(a: PromptsArgs) -> Result<i32> {
    let files = if a.template.is_dir() {
        dialogue_files(&a.template)?
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    } else {
        vec![a.template.clone()]
    };
    for f in files {
        let p = write_prompts(&f, &a.out, a.published)?;
        println!("wrote {}", p.display());
    }
    Ok(0)
}

/// The client for an endpoint, and the loopback server behind it when `--loopback` is given
/// (kept alive as long as the returned guard).
fn client(
    e: &EndpointArgs,
    model: &str,
    cache: PathBuf,
) -> Result<(Client, Option<LoopbackServer>)> {
    let server = match &e.loopback {
        Some(script) => {
            let s = LoopbackServer::start(Script::load(script)?)?;
            s.set_recording(false);
            Some(s)
        }
        None => None,
    };
    let base_url = match (&server, &e.base_url) {
        (Some(s), _) => s.base_url(),
        (None, Some(u)) => u.clone(),
        (None, None) if e.requests.offline => String::new(),
        (None, None) => {
            bail!("no endpoint: give --base-url URL (or OPENAI_BASE_URL), or --loopback SCRIPT")
        }
    };
    let mut cfg = ClientConfig::new(base_url, model);
    cfg.api_key = std::env::var(&e.api_key_env).ok().filter(|k| !k.is_empty());
    e.requests.apply(&mut cfg)?;
    cfg.cache = Some(Cache::new(cache));
    Ok((Client::new(cfg)?, server))
}

/// Takes the output folder for this run (one writer at a time: two runs filling one output
/// file with different modes would lose one's answers), clears the temporary files of writes
/// a killed run cut short, and says what an interrupted run left to resume from.
fn open_out(
    out: &std::path::Path,
    cache: Option<&Cache>,
    what: &str,
) -> Result<pivot_base::durable::FolderLock> {
    // Checked before the lock creates anything, so that a file in the way is named as
    // bad input and nothing is written.
    if let Some(p) = pivot_bench::out_dir::problem(out, "the output folder (--out)") {
        anyhow::bail!("bad input, nothing written:\n  {p}");
    }
    let lock = pivot_base::durable::FolderLock::acquire(out, what)?;
    crate::cli::shared::interrupt::hold_lock(out);
    if let Some(w) = &lock.warning {
        eprintln!("warning: {w}");
    }
    let mut swept = pivot_base::durable::sweep_stale_temps(out)?;
    if let Some(c) = cache.filter(|c| !c.dir().starts_with(out)) {
        swept += pivot_base::durable::sweep_stale_temps(c.dir())?;
    }
    if swept > 0 {
        eprintln!("note: removed {swept} temporary file(s) of writes an interrupted run cut short");
    }
    let cached = cache.map_or(0, Cache::entries);
    if let Some(h) = &lock.interrupted {
        eprintln!(
            "note: resuming {}: an earlier run ({h}) ended without finishing; {cached} answer(s) \
             in its cache are reused, only the rest is requested",
            out.display()
        );
    } else if cached > 0 {
        eprintln!(
            "note: {cached} answer(s) already in the cache {} are reused, only the rest is requested",
            cache.map(|c| c.dir().display().to_string()).unwrap_or_default()
        );
    }
    Ok(lock)
}

fn run_converse(a: ConverseArgs) -> Result<i32> {
    let (client, _server) = client(
        &a.endpoint,
        &a.model,
        a.cache
            .clone()
            .unwrap_or_else(|| a.templates.join(".cache")),
    )?;
    let sampling = Sampling {
        temperature: Some(a.temperature),
        top_p: Some(a.top_p),
    };
    let _lock = open_out(
        &a.templates,
        client.config().cache.as_ref(),
        &format!("memorycode converse --model {}", a.model),
    )?;
    let bar = std::sync::OnceLock::<Progress>::new();
    let progress = |_done: usize, total: usize| {
        bar.get_or_init(|| Progress::new(total as u64, "sessions"))
            .inc(1);
    };
    let report = converse(
        &client,
        &a.prompts,
        &a.templates,
        sampling,
        a.endpoint.requests.concurrency.max(1),
        &progress,
    )?;
    if let Some(b) = bar.get() {
        b.finish();
    }
    for p in &report.written {
        println!("wrote {}", p.display());
    }
    println!(
        "{} requests ({} from the cache), {} dialogues written",
        report.requests,
        report.cached,
        report.written.len()
    );
    for f in &report.failures {
        eprintln!("error: {f}");
    }
    Ok(if report.failures.is_empty() { 0 } else { 1 })
}

fn run_templates(a: TemplatesArgs) -> Result<i32> {
    use pivot_bench::memorycode::templates::{dataset_params, dataset_plan, write_templates};
    let (topics, _): (serde_json::Value, _) = pivot_bench::memorycode::data::read_json(&a.topics)?;
    let plan = match a.sessions {
        Some(0) => bail!("--sessions must be at least 1"),
        Some(n) => (0..a.count)
            .map(|i| (a.first_id + i, dataset_params(n)))
            .collect(),
        None => dataset_plan(),
    };
    let written = write_templates(&topics, &plan, a.seed, &a.out)
        .with_context(|| a.topics.display().to_string())?;
    println!("wrote {} templates to {}", written.len(), a.out.display());
    Ok(0)
}
