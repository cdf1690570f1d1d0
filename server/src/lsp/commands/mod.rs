//! `workspace/executeCommand`: argument parsing shared by all commands, and dispatch to one
//! file per command family. Every command answers with its own reply type (replies.rs),
//! whose schema the editors' tests check replies against (schema.rs); bad arguments are
//! JSON-RPC InvalidParams errors that name the command, the argument and the expected shape.

mod args;
#[cfg(test)]
mod client_types;
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
pub mod schema;
mod session;
mod tests;
mod turn;

use super::convert::{invalid_params, request_failed};
use super::session::Session;
pub use args::{Args, NoArgs, Text};
use pivot_workspace::replies;
use pivot_workspace::timeline::Timeline;
use serde::Serialize;
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{ExecuteCommandParams, ProgressToken};

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
        InSession => Some(b.in_order().await),
        Independent => None,
    };
    run(spec, b, &args, token).await
}

/// A reply as JSON, at the dispatch boundary (tower-lsp's `executeCommand` returns a
/// `Value`).
fn to_json<R: Serialize>(spec: &Spec, reply: &R) -> Result<Value> {
    serde_json::to_value(reply).map_err(|e| {
        request_failed(format!(
            "{}: the reply could not be written as JSON: {e}",
            spec.name
        ))
    })
}

/// Each command's argument type, reply type and handler, written once: `run` reads the
/// arguments as the first type and holds the handler to returning the second, and `shapes`
/// describes the command from the same two types, so the schema the editors check replies
/// against is the type the handler returns. The `match`es are exhaustive over [`Cmd`].
macro_rules! handlers {
    (|$b:ident, $raw:ident, $a:ident, $token:ident| {
        $($cmd:ident($args:ty) -> $reply:ty => $body:expr,)*
    }) => {
        async fn run(
            spec: &Spec,
            $b: &Session,
            $raw: &Args<'_>,
            $token: Option<ProgressToken>,
        ) -> Result<Value> {
            match spec.cmd {
                $(Cmd::$cmd => {
                    let $a: $args = $raw.parse()?;
                    let reply: $reply = $body?;
                    to_json(spec, &reply)
                })*
            }
        }

        /// The schemas of `cmd`'s arguments and reply.
        fn shapes(cmd: Cmd, g: &mut schema::Generators) -> schema::Shapes {
            match cmd {
                $(Cmd::$cmd => g.shapes::<$args, $reply>(),)*
            }
        }
    };
}

handlers!(|b, raw, a, token| {
    ConversationOpen(conversation::OpenArgs) -> replies::Opened => if a.is_convcode() {
        convcode::open(b, raw, a).await
    } else {
        conversation::open(b, raw, a).await
    },
    ConversationClose(NoArgs) -> replies::Info => conversation::close(b, a).await,
    ConversationInfo(NoArgs) -> replies::Info => conversation::info(b, a),
    SessionNext(NoArgs) -> replies::Moved => session::step(b, raw, session::next(a)).await,
    SessionPrevious(NoArgs) -> replies::Moved => session::step(b, raw, session::previous(a)).await,
    SessionGoto(session::GotoArgs) -> replies::Moved => session::step(b, raw, a.into()).await,
    SessionTranscript(session::TranscriptArgs) -> replies::Transcript =>
        session::transcript(b, raw, a).await,
    SessionTimeline(NoArgs) -> Timeline => session::timeline(b, a),
    PivotsActive(NoArgs) -> replies::ActivePivots => pivots::active(b, a),
    PivotsAdd(pivots::AddArgs) -> replies::ActivePivots => pivots::add(b, raw, a).await,
    PivotsRemove(pivots::RemoveArgs) -> replies::ActivePivots => pivots::remove(b, raw, a).await,
    PivotsReload(NoArgs) -> replies::Reloaded => pivots::reload(b, a).await,
    OutputsCheck(outputs::CheckArgs) -> replies::OutputsChecked => outputs::check(b, raw, a).await,
    EvaluateMemorycode(evaluate::MemorycodeArgs) -> replies::MemoryCodeScores =>
        evaluate::memorycode(b, a, token).await,
    DocumentInspect(document::InspectArgs) -> replies::Inspected => document::inspect(b, raw, a),
    TestsRun(tests::RunArgs) -> replies::TestRun => tests::run(b, raw, a, token).await,
    TurnFeedback(turn::FeedbackArgs) -> replies::FeedbackGiven => turn::feedback(b, raw, a).await,
    TurnSubmit(turn::SubmitArgs) -> replies::Submitted => turn::submit(b, raw, a, token).await,
    MemorycodeGenerate(memorycode_generate::GenerateArgs) -> replies::Generated =>
        memorycode_generate::generate_for_conversation(b, raw, a, token).await,
    EvaluateConvcode(convcode::EvaluateArgs) -> replies::ConvCodeEvaluation =>
        convcode::evaluate(b, raw, a, token).await,
    ReportOpen(report::OpenArgs) -> replies::ReportOpened => report::open(b, raw, a).await,
});
