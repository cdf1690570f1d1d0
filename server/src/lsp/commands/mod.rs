//! `workspace/executeCommand`: argument parsing shared by all commands, and dispatch to one
//! file per command family. Every command returns JSON; bad arguments are JSON-RPC
//! InvalidParams errors that name the command, the argument and the expected shape.

mod convcode;
mod conversation;
mod document;
mod evaluate;
pub mod headless;
mod memorycode_generate;
mod outputs;
mod pivots;
mod progress;
mod report;
mod session;
mod tests;
mod turn;

use super::convert::invalid_params;
use super::server::Backend;
use serde_json::{Map, Value};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::ExecuteCommandParams;

/// (command, arguments it takes): advertised to the client and used in error messages.
pub const USAGE: &[(&str, &str)] = &[
    (
        "pivot.conversation.open",
        r#"{"path": ".../dialogue_N.json"} or {"path": RESULTS_DIR, "task": ID, optional "config", "model", "player", "simulator"}"#,
    ),
    ("pivot.conversation.close", "no arguments"),
    ("pivot.conversation.info", "no arguments"),
    ("pivot.session.next", "no arguments"),
    ("pivot.session.previous", "no arguments"),
    ("pivot.session.goto", r#"{"index": k} (0-based)"#),
    ("pivot.session.transcript", r#"optional {"index": k}"#),
    ("pivot.pivots.active", "no arguments"),
    (
        "pivot.pivots.add",
        r#"{"id", "kind", "rule", optional "text", optional "session"}"#,
    ),
    ("pivot.pivots.remove", r#"{"id": "..."}"#),
    ("pivot.pivots.reload", "no arguments"),
    ("pivot.outputs.check", r#"{"path": ".../output_N.json"}"#),
    (
        "pivot.evaluate.memorycode",
        r#"{"dataset": DIR, "outputs": DIR}"#,
    ),
    ("pivot.document.inspect", r#"{"uri": "file:///..."}"#),
    (
        "pivot.tests.run",
        r#"{"uri": "file:///...", optional "task"}"#,
    ),
    (
        "pivot.turn.feedback",
        r#"{"uri", "kind": "compilation"|"execution"|"execution-partial"|"novice"|"expert", optional "task"}"#,
    ),
    ("pivot.turn.submit", r#"{"uri": "file:///..."}"#),
    (
        "pivot.memorycode.generate",
        r#"{"model": M, "out": DIR, "baseUrl": URL or "loopback": SCRIPT, optional "modes", "topics", "apiKeyEnv", "rerankerUrl", "temperature"}"#,
    ),
    (
        "pivot.evaluate.convcode",
        r#"{"results": DIR, "model": M, optional "static", "refModel", "simulator", "excludeInitSolved"}"#,
    ),
    (
        "pivot.report.open",
        r#"{"inputs": [SCORES.json, ...], optional "title"}"#,
    ),
];

pub const COMMANDS: [&str; USAGE.len()] = {
    let mut out = [""; USAGE.len()];
    let mut i = 0;
    while i < USAGE.len() {
        out[i] = USAGE[i].0;
        i += 1;
    }
    out
};

pub async fn execute(b: &Backend, p: ExecuteCommandParams) -> Result<Value> {
    let args = Args::new(&p.command, &p.arguments)?;
    let token = p.work_done_progress_params.work_done_token;
    // Long runs over explicit inputs do not wait for (or block) the session commands;
    // checking outputs takes the lock only to see the conversation (outputs.rs).
    let independent = matches!(
        p.command.as_str(),
        "pivot.evaluate.memorycode"
            | "pivot.evaluate.convcode"
            | "pivot.tests.run"
            | "pivot.report.open"
            | "pivot.memorycode.generate"
            | "pivot.outputs.check"
    );
    let _in_order = if independent {
        None
    } else {
        Some(b.command_lock.lock().await)
    };
    match p.command.as_str() {
        "pivot.conversation.open" => conversation::open(b, &args).await,
        "pivot.conversation.close" => conversation::close(b, &args).await,
        "pivot.conversation.info" => args.none().map(|_| b.ws().info()),
        "pivot.session.next" => session::step(b, &args, session::Dir::Next).await,
        "pivot.session.previous" => session::step(b, &args, session::Dir::Previous).await,
        "pivot.session.goto" => session::step(b, &args, session::Dir::Goto).await,
        "pivot.session.transcript" => session::transcript(b, &args).await,
        "pivot.pivots.active" => pivots::active(b, &args),
        "pivot.pivots.add" => pivots::add(b, &args).await,
        "pivot.pivots.remove" => pivots::remove(b, &args).await,
        "pivot.pivots.reload" => pivots::reload(b, &args).await,
        "pivot.outputs.check" => outputs::check(b, &args).await,
        "pivot.evaluate.memorycode" => evaluate::memorycode(b, &args, token).await,
        "pivot.document.inspect" => document::inspect(b, &args),
        "pivot.tests.run" => tests::run(b, &args, token).await,
        "pivot.turn.feedback" => turn::feedback(b, &args).await,
        "pivot.turn.submit" => turn::submit(b, &args, token).await,
        "pivot.evaluate.convcode" => convcode::evaluate(b, &args, token).await,
        "pivot.report.open" => report::open(b, &args).await,
        "pivot.memorycode.generate" => {
            memorycode_generate::generate_for_conversation(b, &args, token).await
        }
        other => Err(invalid_params(format!(
            "unknown command `{other}`; known commands: {}",
            COMMANDS.join(", ")
        ))),
    }
}

/// A command's arguments: none, or one JSON object.
pub struct Args<'a> {
    command: &'a str,
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    fn new(command: &'a str, arguments: &'a [Value]) -> Result<Args<'a>> {
        let a = Args { command, obj: None };
        match arguments {
            [] | [Value::Null] => Ok(a),
            [Value::Object(o)] => Ok(Args { obj: Some(o), ..a }),
            [other] => Err(a.error(&format!("the argument must be a JSON object, got {other}"))),
            _ => Err(a.error(&format!(
                "expected one argument object, got {} arguments",
                arguments.len()
            ))),
        }
    }

    /// No arguments, for calling another command's handler.
    pub fn empty(like: &Args<'a>) -> Args<'a> {
        Args {
            command: like.command,
            obj: None,
        }
    }

    fn usage(&self) -> &'static str {
        USAGE
            .iter()
            .find(|(c, _)| *c == self.command)
            .map_or("", |(_, u)| u)
    }

    pub fn error(&self, problem: &str) -> tower_lsp_server::jsonrpc::Error {
        match self.usage() {
            // Requests outside USAGE (the headless ones) have no usage line to show.
            "" => invalid_params(format!("{}: {problem}", self.command)),
            usage => invalid_params(format!("{}: {problem} (arguments: {usage})", self.command)),
        }
    }

    /// For commands that take no arguments: an unexpected one is an error, not ignored.
    pub fn none(&self) -> Result<()> {
        match self.obj {
            Some(o) if !o.is_empty() => Err(self.error("this command takes no arguments")),
            _ => Ok(()),
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.and_then(|o| o.get(key)).filter(|v| !v.is_null())
    }

    pub fn value(&self, key: &str) -> Result<&'a Value> {
        self.get(key)
            .ok_or_else(|| self.error(&format!("missing argument `{key}`")))
    }

    pub fn str(&self, key: &str) -> Result<&'a str> {
        match self.value(key)? {
            Value::String(s) if !s.is_empty() => Ok(s),
            other => Err(self.error(&format!("`{key}` must be a non-empty string, got {other}"))),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.str(key).map(Some),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(v)) => Ok(Some(*v)),
            Some(other) => Err(self.error(&format!("`{key}` must be true or false, got {other}"))),
        }
    }

    pub fn opt_index(&self, key: &str) -> Result<Option<usize>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| {
                    self.error(&format!("`{key}` must be a non-negative integer, got {v}"))
                }),
        }
    }

    pub fn index(&self, key: &str) -> Result<usize> {
        self.opt_index(key)?
            .ok_or_else(|| self.error(&format!("missing argument `{key}`")))
    }
}
