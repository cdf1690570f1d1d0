//! Headless commands. Each subcommand lives in its own file with its own clap `Args`;
//! this file only dispatches. The CLI prints and formats; the logic is in the core.

use clap::{Parser, Subcommand};

mod convcode_cmd;
mod exec_cmd;
mod extract_cmd;
mod memorycode_cmd;
mod progress;
mod score_cmd;
mod score_convcode;

pub use progress::Progress;

#[derive(Parser, Debug)]
#[command(
    name = "pivot-lsp",
    version,
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
    Score(score_cmd::ScoreCommand),
    /// Print the objects (functions, classes, variables, ...) of one Python file, with ranges.
    Extract(extract_cmd::ExtractArgs),
    /// Run solutions against problems' tests in a sandboxed Python process.
    Exec(exec_cmd::ExecArgs),
    /// Print ConvCodeWorld's compilation or execution feedback for one piece of code.
    Feedback(exec_cmd::FeedbackArgs),
    /// ConvCodeWorld's live feedback loop and ConvCodeBench's static replay.
    #[command(subcommand)]
    Convcode(convcode_cmd::ConvcodeCommand),
    /// MemoryCode: model outputs, templates, prompts and conversations from an OpenAI-compatible endpoint.
    #[command(subcommand)]
    Memorycode(memorycode_cmd::MemorycodeCommand),
    /// Benchmarks: print timings and the ratio against the named baseline.
    #[command(subcommand)]
    Bench(score_cmd::BenchCommand),
}

/// Entry point of the binary; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        None | Some(Command::Serve) => crate::lsp::run_stdio(),
        Some(Command::Score(c)) => score_cmd::run(c),
        Some(Command::Extract(a)) => extract_cmd::run(a),
        Some(Command::Exec(a)) => exec_cmd::run_exec(a),
        Some(Command::Feedback(a)) => exec_cmd::run_feedback(a),
        Some(Command::Convcode(c)) => convcode_cmd::run(c),
        Some(Command::Memorycode(c)) => memorycode_cmd::run(c),
        Some(Command::Bench(c)) => score_cmd::run_bench(c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}
