//! The language server: protocol glue over the core. `workspace/` holds the server's state
//! and logic without any LSP types (documents, replay, findings, fixes, saved state); the
//! files here translate LSP requests into calls on it, one file per request family.

pub mod bench;
mod catch;
mod code_action;
mod code_lens;
mod commands;
mod convert;
mod hover;
pub mod log;
mod publish;
mod server;
pub mod session;
mod sync;
pub mod transport;

pub use commands::headless::{
    AnswerArgs, AnswersArgs, SetupArgs, ANSWERS as MEMORYCODE_ANSWERS, SETUP as HEADLESS_SETUP,
};
pub use commands::schema::text as command_schema;
pub use commands::Text;
pub use server::Backend;
use tower_lsp_server::{LspService, Server};

/// Serve LSP over stdin/stdout until the client exits; returns the exit code.
pub fn run_stdio() -> anyhow::Result<i32> {
    log::init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // Blocking tasks (a cancelled evaluation) must not keep the process alive after exit.
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(0)
}

/// Serve LSP on `input` and `output` until the client exits or closes `input`: stdio in the
/// binary, a socket pair in the in-process protocol tests (`server/tests/support/lsp.rs`).
pub async fn serve(
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) {
    let (service, socket) = LspService::build(Backend::new)
        .custom_method("window/workDoneProgress/cancel", Backend::cancel_progress)
        .custom_method(commands::headless::SETUP, Backend::headless_setup)
        .custom_method(commands::headless::ANSWERS, Backend::memorycode_answers)
        .finish();
    // tower-lsp-server talks to the transport's checked streams, not to the raw ones.
    let (to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (errors_tx, errors_rx) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(transport::pump_in(input, to_server, errors_tx));
    let writer = tokio::spawn(transport::pump_out(from_server, output, errors_rx));
    Server::new(server_in, server_out, socket)
        .serve(catch::CatchPanics(service))
        .await;
    // The server's output half is dropped: the writer drains it and ends.
    let _ = writer.await;
    reader.abort();
}
