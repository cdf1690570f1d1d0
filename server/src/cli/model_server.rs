//! `pivot-lsp model-server`: the scripted loopback model (`llm::loopback`) as a command, so the
//! ConvCodeWorld loop can be tried without a model endpoint or a key. Flags and the request
//! log only; the matching and answering live in the core.

use anyhow::{bail, Context, Result};
use pivot_llm::loopback::{LoopbackServer, OnRequest, Script, Seen};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Serve an OpenAI-compatible endpoint on 127.0.0.1 that answers from a rules file.
#[derive(clap::Args, Debug)]
#[command(
    long_about = "Serve an OpenAI-compatible endpoint on 127.0.0.1 (POST /v1/chat/completions and \
/v1/completions) that answers from a rules file instead of a model: each request's prompt is \
matched against the rules in order, the first rule whose `contains` strings all occur (and no \
`not_contains` string does) answers, else `default`. No key is needed unless the script sets \
`api_key`. The first line on stdout is the base URL to pass as --base-url (by default on a free \
port the server picks: read the URL back, e.g. `pivot-lsp model-server ... > url.txt &`, so that \
no other server can answer in its place); each request is \
logged on stderr (and, with --log, as one JSON line in FILE). Runs until interrupted (Ctrl-C).\n\n\
Script format: docs/model-server.md. Without --script it serves the demo built into the \
binary (fixtures/model-server/humaneval-demo.json), which answers the first five HumanEval \
tasks: the ConvCodeWorld try-out of the README (docs/try-it.md) needs nothing else."
)]
pub struct ModelServerArgs {
    /// Rules file (JSON): which answer for which prompt; see docs/model-server.md
    /// [default: the bundled HumanEval demo, fixtures/model-server/humaneval-demo.json]
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Port on 127.0.0.1 to listen on. 0 (the default) picks a free port; the URL is the
    /// first line on stdout, so read it back rather than guess it. A port that is taken is
    /// refused: whatever listens there is not this server.
    #[arg(long, default_value_t = 0, value_name = "P")]
    pub port: u16,
    /// Also append each request as a JSON line (endpoint, rule, status, prompt) to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Log only the rule and status on stderr, not the start of each prompt.
    #[arg(long)]
    pub quiet: bool,
}

/// One stderr line per request: number, endpoint, status, the rule that answered, and the
/// prompt's last non-empty line (where DSPy-style prompts say what they ask for).
fn stderr_line(n: usize, r: &Seen, quiet: bool) -> String {
    let rule = r.rule.as_deref().unwrap_or("(default)");
    let mut line = format!("#{n} {} {} rule={rule}", r.endpoint, r.status);
    if !quiet {
        let tail = r
            .prompt
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let cut: String = tail.chars().take(70).collect();
        let more = if tail.chars().count() > 70 { "…" } else { "" };
        line.push_str(&format!(" | {} chars, ends: {cut}{more}", r.prompt.len()));
    }
    line
}

pub fn run(a: ModelServerArgs) -> Result<i32> {
    let (script, origin) = match &a.script {
        Some(path) => (Script::load(path)?, path.display().to_string()),
        None => (
            Script::parse(
                crate::cli::shared::bundled::HUMANEVAL_DEMO_SCRIPT,
                "the bundled HumanEval demo",
            )?,
            crate::cli::shared::bundled::HUMANEVAL_DEMO_NAME.to_string(),
        ),
    };
    let rules = script.rules.len();
    let file = match &a.log {
        Some(p) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open the request log {}", p.display()))?,
        )),
        None => None,
    };
    let count = Mutex::new(0usize);
    let quiet = a.quiet;
    let log: OnRequest = Arc::new(move |r: &Seen| {
        let n = {
            let mut c = count.lock().unwrap_or_else(|p| p.into_inner());
            *c += 1;
            *c
        };
        eprintln!("{}", stderr_line(n, r, quiet));
        if let Some(f) = &file {
            let rec = serde_json::json!({
                "n": n, "endpoint": r.endpoint, "status": r.status,
                "rule": r.rule, "prompt": r.prompt,
            });
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = writeln!(f, "{rec}") {
                eprintln!("warning: cannot write the request log: {e}");
            }
        }
    });
    let server = match LoopbackServer::start_on(script, a.port, Some(log)) {
        Ok(s) => s,
        Err(e)
            if e.root_cause()
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::AddrInUse) =>
        {
            bail!(
                "port {p} on 127.0.0.1 is taken by another program ({e:#}); commands pointed at \
                 http://127.0.0.1:{p}/v1 would talk to it, not to this script. Pass --port 0 \
                 (the default) and use the URL printed on stdout",
                p = a.port
            )
        }
        Err(e) => return Err(e),
    };
    // The banner goes out before the URL: a caller that reads the URL and sends a request at
    // once must find the banner already written, ahead of the request's own log line.
    eprintln!("model-server: {rules} rules from {origin}; listening (Ctrl-C to stop)");
    println!("{}", server.base_url());
    std::io::stdout().flush().ok();
    // The server runs on its own threads; this one only keeps the process alive.
    loop {
        std::thread::park();
    }
}
