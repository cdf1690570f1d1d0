//! `$/progress` for long commands: the client's work-done token, or one the server creates
//! when the client supports it, and a begin / end without a percentage.

use crate::lsp::session::Session;
use tower_lsp_server::ls_types::{NumberOrString, ProgressToken};
use tower_lsp_server::{NotCancellable, OngoingProgress, Unbounded};

/// The client's token if it sent one, else one created now (`pivot-NAME-n`) when the client
/// supports server-initiated progress; None: no progress is reported.
pub async fn token(b: &Session, given: Option<ProgressToken>, name: &str) -> Option<ProgressToken> {
    match given {
        Some(t) => Some(t),
        None => {
            let t = NumberOrString::String(b.new_progress_token(name)?);
            b.client
                .create_work_done_progress(t.clone())
                .await
                .ok()
                .map(|_| t)
        }
    }
}

/// A running progress report (nothing when the client gets none).
pub struct Progress(Option<OngoingProgress<Unbounded, NotCancellable>>);

impl Progress {
    pub async fn begin(
        b: &Session,
        given: Option<ProgressToken>,
        name: &str,
        title: &str,
        message: String,
    ) -> Progress {
        let Some(t) = token(b, given, name).await else {
            return Progress(None);
        };
        let p = b
            .client
            .progress(t, title)
            .with_message(message)
            .begin()
            .await;
        Progress(Some(p))
    }

    pub async fn end(self, message: String) {
        if let Some(p) = self.0 {
            p.finish_with_message(message).await;
        }
    }
}
