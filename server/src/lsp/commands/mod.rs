//! `workspace/executeCommand`: argument parsing shared by all commands, and dispatch to one
//! file per command family. Every command returns JSON; bad arguments are JSON-RPC
//! InvalidParams errors that name the command, the argument and the expected shape.

mod args;
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
use super::session::Session;
pub use args::{Args, NoArgs, Text};
use serde_json::Value;
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
    SessionTimeline,
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
        "pivot.session.timeline",
        Cmd::SessionTimeline,
        "no arguments",
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

pub async fn execute(b: &Session, p: ExecuteCommandParams) -> Result<Value> {
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
    // Each handler's argument type is read here (`Args::parse`), so what a command takes
    // is the type in its handler's signature.
    let a = &args;
    match spec.cmd {
        Cmd::ConversationOpen => {
            let o: conversation::OpenArgs = a.parse()?;
            if o.is_convcode() {
                convcode::open(b, a, o).await
            } else {
                conversation::open(b, a, o).await
            }
        }
        Cmd::ConversationClose => conversation::close(b, a.parse()?).await,
        Cmd::ConversationInfo => a.parse::<NoArgs>().map(|_| b.ws().info()),
        Cmd::SessionNext => session::step(b, a, a.parse::<NoArgs>().map(session::next)?).await,
        Cmd::SessionPrevious => {
            session::step(b, a, a.parse::<NoArgs>().map(session::previous)?).await
        }
        Cmd::SessionGoto => session::step(b, a, a.parse::<session::GotoArgs>()?.into()).await,
        Cmd::SessionTranscript => session::transcript(b, a, a.parse()?).await,
        Cmd::SessionTimeline => session::timeline(b, a.parse()?),
        Cmd::PivotsActive => pivots::active(b, a.parse()?),
        Cmd::PivotsAdd => pivots::add(b, a, a.parse()?).await,
        Cmd::PivotsRemove => pivots::remove(b, a, a.parse()?).await,
        Cmd::PivotsReload => pivots::reload(b, a.parse()?).await,
        Cmd::OutputsCheck => outputs::check(b, a, a.parse()?).await,
        Cmd::EvaluateMemorycode => evaluate::memorycode(b, a.parse()?, token).await,
        Cmd::DocumentInspect => document::inspect(b, a, a.parse()?),
        Cmd::TestsRun => tests::run(b, a, a.parse()?, token).await,
        Cmd::TurnFeedback => turn::feedback(b, a, a.parse()?).await,
        Cmd::TurnSubmit => turn::submit(b, a, a.parse()?, token).await,
        Cmd::EvaluateConvcode => convcode::evaluate(b, a, a.parse()?, token).await,
        Cmd::ReportOpen => report::open(b, a, a.parse()?).await,
        Cmd::MemorycodeGenerate => {
            memorycode_generate::generate_for_conversation(b, a, a.parse()?, token).await
        }
    }
}
