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

/// Which handler a command runs: the dispatch `match` over it is exhaustive, so a command in
/// [`TABLE`] without a handler does not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmd {
    ConversationOpen,
    ConversationClose,
    ConversationInfo,
    SessionNext,
    SessionPrevious,
    SessionGoto,
    SessionTranscript,
    PivotsActive,
    PivotsAdd,
    PivotsRemove,
    PivotsReload,
    OutputsCheck,
    EvaluateMemorycode,
    DocumentInspect,
    TestsRun,
    TurnFeedback,
    TurnSubmit,
    MemorycodeGenerate,
    EvaluateConvcode,
    ReportOpen,
}

/// Whether a command runs in order with the session commands (under their lock) or beside
/// them: long runs over explicit inputs neither wait for nor block the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    InSession,
    Independent,
}

/// One command: its name (advertised to the client), handler, the arguments it takes (for
/// error messages) and how it is ordered.
struct Spec {
    name: &'static str,
    cmd: Cmd,
    usage: &'static str,
    order: Order,
}

const fn spec(name: &'static str, cmd: Cmd, usage: &'static str, order: Order) -> Spec {
    Spec {
        name,
        cmd,
        usage,
        order,
    }
}

use Order::{InSession, Independent};

/// Every command, once.
const TABLE: &[Spec] = &[
    spec(
        "pivot.conversation.open",
        Cmd::ConversationOpen,
        r#"{"path": ".../dialogue_N.json"} or {"path": RESULTS_DIR, "task": ID, optional "config", "model", "player", "simulator"}"#,
        InSession,
    ),
    spec(
        "pivot.conversation.close",
        Cmd::ConversationClose,
        "no arguments",
        InSession,
    ),
    spec(
        "pivot.conversation.info",
        Cmd::ConversationInfo,
        "no arguments",
        InSession,
    ),
    spec(
        "pivot.session.next",
        Cmd::SessionNext,
        "no arguments",
        InSession,
    ),
    spec(
        "pivot.session.previous",
        Cmd::SessionPrevious,
        "no arguments",
        InSession,
    ),
    spec(
        "pivot.session.goto",
        Cmd::SessionGoto,
        r#"{"index": k} (0-based)"#,
        InSession,
    ),
    spec(
        "pivot.session.transcript",
        Cmd::SessionTranscript,
        r#"optional {"index": k}"#,
        InSession,
    ),
    spec(
        "pivot.pivots.active",
        Cmd::PivotsActive,
        "no arguments",
        InSession,
    ),
    spec(
        "pivot.pivots.add",
        Cmd::PivotsAdd,
        r#"{"id", "kind", "rule", optional "text", optional "session"}"#,
        InSession,
    ),
    spec(
        "pivot.pivots.remove",
        Cmd::PivotsRemove,
        r#"{"id": "..."}"#,
        InSession,
    ),
    spec(
        "pivot.pivots.reload",
        Cmd::PivotsReload,
        "no arguments",
        InSession,
    ),
    // Takes the session lock itself, only to see the conversation (outputs.rs).
    spec(
        "pivot.outputs.check",
        Cmd::OutputsCheck,
        r#"{"path": ".../output_N.json"}"#,
        Independent,
    ),
    spec(
        "pivot.evaluate.memorycode",
        Cmd::EvaluateMemorycode,
        r#"{"dataset": DIR, "outputs": DIR}"#,
        Independent,
    ),
    spec(
        "pivot.document.inspect",
        Cmd::DocumentInspect,
        r#"{"uri": "file:///..."}"#,
        InSession,
    ),
    spec(
        "pivot.tests.run",
        Cmd::TestsRun,
        r#"{"uri": "file:///...", optional "task"}"#,
        Independent,
    ),
    spec(
        "pivot.turn.feedback",
        Cmd::TurnFeedback,
        r#"{"uri", "kind": "compilation"|"execution"|"execution-partial"|"novice"|"expert", optional "task"}"#,
        InSession,
    ),
    spec(
        "pivot.turn.submit",
        Cmd::TurnSubmit,
        r#"{"uri": "file:///..."}"#,
        InSession,
    ),
    spec(
        "pivot.memorycode.generate",
        Cmd::MemorycodeGenerate,
        r#"{"model": M, "out": DIR, "baseUrl": URL or "loopback": SCRIPT, optional "modes", "topics", "apiKeyEnv", "rerankerUrl", "temperature"}"#,
        Independent,
    ),
    spec(
        "pivot.evaluate.convcode",
        Cmd::EvaluateConvcode,
        r#"{"results": DIR, "model": M, optional "static", "refModel", "simulator", "excludeInitSolved"}"#,
        Independent,
    ),
    spec(
        "pivot.report.open",
        Cmd::ReportOpen,
        r#"{"inputs": [SCORES.json, ...], optional "title"}"#,
        Independent,
    ),
];

/// The command names, in the table's order (advertised in `executeCommandProvider`).
pub const COMMANDS: [&str; TABLE.len()] = {
    let mut out = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        out[i] = TABLE[i].name;
        i += 1;
    }
    out
};

fn find(command: &str) -> Option<&'static Spec> {
    TABLE.iter().find(|s| s.name == command)
}

pub async fn execute(b: &Backend, p: ExecuteCommandParams) -> Result<Value> {
    let args = Args::new(&p.command, &p.arguments)?;
    let token = p.work_done_progress_params.work_done_token;
    let Some(spec) = find(&p.command) else {
        return Err(invalid_params(format!(
            "unknown command `{}`; known commands: {}",
            p.command,
            COMMANDS.join(", ")
        )));
    };
    let _in_order = match spec.order {
        InSession => Some(b.command_lock.lock().await),
        Independent => None,
    };
    match spec.cmd {
        Cmd::ConversationOpen => conversation::open(b, &args).await,
        Cmd::ConversationClose => conversation::close(b, &args).await,
        Cmd::ConversationInfo => args.none().map(|_| b.ws().info()),
        Cmd::SessionNext => session::step(b, &args, session::Dir::Next).await,
        Cmd::SessionPrevious => session::step(b, &args, session::Dir::Previous).await,
        Cmd::SessionGoto => session::step(b, &args, session::Dir::Goto).await,
        Cmd::SessionTranscript => session::transcript(b, &args).await,
        Cmd::PivotsActive => pivots::active(b, &args),
        Cmd::PivotsAdd => pivots::add(b, &args).await,
        Cmd::PivotsRemove => pivots::remove(b, &args).await,
        Cmd::PivotsReload => pivots::reload(b, &args).await,
        Cmd::OutputsCheck => outputs::check(b, &args).await,
        Cmd::EvaluateMemorycode => evaluate::memorycode(b, &args, token).await,
        Cmd::DocumentInspect => document::inspect(b, &args),
        Cmd::TestsRun => tests::run(b, &args, token).await,
        Cmd::TurnFeedback => turn::feedback(b, &args).await,
        Cmd::TurnSubmit => turn::submit(b, &args, token).await,
        Cmd::EvaluateConvcode => convcode::evaluate(b, &args, token).await,
        Cmd::ReportOpen => report::open(b, &args).await,
        Cmd::MemorycodeGenerate => {
            memorycode_generate::generate_for_conversation(b, &args, token).await
        }
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
        find(self.command).map_or("", |s| s.usage)
    }

    pub fn error(&self, problem: &str) -> tower_lsp_server::jsonrpc::Error {
        match self.usage() {
            // Requests outside the table (the headless ones) have no usage line to show.
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
