//! Where a handler's panic stops. tower-lsp-server polls each request's future inside its
//! own serving loop, so a panic in any handler would end the process and every open
//! editor's diagnostics with it. `CatchPanics` wraps the service: a panic becomes a JSON-RPC
//! internal error for that request (nothing for a notification) and a log line, and the
//! server goes on. Every request runs in a `tracing` span naming its method and id.
//!
//! Locks the panicking handler held are poisoned; every lock in the server is taken with
//! `unwrap_or_else(PoisonError::into_inner)`, so the next request still gets them.

use futures::future::{BoxFuture, FutureExt};
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};
use tower_service::Service;
use tracing::Instrument;

pub struct CatchPanics<S>(pub S);

impl<S> Service<Request> for CatchPanics<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let id = req.id().cloned();
        let method = req.method().to_string();
        let span = tracing::info_span!("request", method = %method, id = ?id);
        let started = {
            let _in = span.enter();
            std::panic::catch_unwind(AssertUnwindSafe(|| self.0.call(req)))
        };
        let fut = match started {
            Ok(f) => f,
            Err(p) => return futures::future::ready(Ok(reply(id, &method, p))).boxed(),
        };
        async move {
            tracing::debug!("start");
            let r = match AssertUnwindSafe(fut).catch_unwind().await {
                Ok(r) => r,
                Err(p) => Ok(reply(id, &method, p)),
            };
            tracing::debug!("end");
            r
        }
        .instrument(span)
        .boxed()
    }
}

/// The reply to a request whose handler panicked (None for a notification), logged.
fn reply(id: Option<Id>, method: &str, panic: Box<dyn std::any::Any + Send>) -> Option<Response> {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    tracing::error!(method, "the handler panicked: {what}; the server goes on");
    let id = id?;
    Some(Response::from_error(
        id,
        Error {
            code: ErrorCode::InternalError,
            message: format!(
                "pivot-lsp: {method} failed with an internal error ({what}); the server goes on. Please report it with the server's log (PIVOT_LOG=debug)"
            )
            .into(),
            data: None,
        },
    ))
}

/// A test hook: with `PIVOT_TEST_PANIC` naming a method, its handler panics, so that a test
/// can see the server survive one (there is no known input that makes a handler panic).
/// Only in debug builds, which the tests run: the release binary (the wheel, the VS Code
/// package) does not have it.
#[cfg(debug_assertions)]
pub fn test_panic(method: &str) {
    if std::env::var_os("PIVOT_TEST_PANIC").is_some_and(|m| m == method) {
        panic!("PIVOT_TEST_PANIC asked {method} to panic");
    }
}

#[cfg(not(debug_assertions))]
pub fn test_panic(_method: &str) {}
