//! The server's log: `tracing` on stderr (stdout carries the protocol), so that what
//! tower-lsp-server and our handlers report is seen in the editor's output panel (VS Code's
//! "Pivot LSP" channel, Neovim's lsp.log) rather than dropped. The level comes from
//! `PIVOT_LOG` (an env-filter such as `debug` or `pivot_lsp=debug,tower_lsp_server=warn`;
//! default `warn`), and the editors' `logLevel` setting changes it while the server runs.

use std::sync::OnceLock;
use tracing_subscriber::{filter::EnvFilter, fmt, prelude::*, reload, Registry};

type Handle = reload::Handle<EnvFilter, Registry>;

static HANDLE: OnceLock<Handle> = OnceLock::new();

/// The level used when `PIVOT_LOG` is unset or empty.
pub const DEFAULT: &str = "warn";

/// Install the subscriber (once per process; later calls do nothing). A `PIVOT_LOG` that
/// does not parse is said on stderr and the default is used.
pub fn init() {
    if HANDLE.get().is_some() {
        return;
    }
    let wanted = std::env::var("PIVOT_LOG").unwrap_or_default();
    let filter = match wanted.trim() {
        "" => EnvFilter::new(DEFAULT),
        w => EnvFilter::try_new(w).unwrap_or_else(|e| {
            eprintln!("pivot-lsp: PIVOT_LOG={w:?} is not a log filter ({e}); using {DEFAULT}");
            EnvFilter::new(DEFAULT)
        }),
    };
    let (filter, handle) = reload::Layer::new(filter);
    let layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true);
    if tracing_subscriber::registry()
        .with(filter)
        .with(layer)
        .try_init()
        .is_ok()
    {
        let _ = HANDLE.set(handle);
    }
}

/// Change the filter (the `logLevel` setting): `error`, `warn`, `info`, `debug`, `trace`, or
/// any env-filter directive.
pub fn set_level(level: &str) -> Result<(), String> {
    let filter = EnvFilter::try_new(level)
        .map_err(|e| format!("log level {level:?} is not a log filter ({e})"))?;
    match HANDLE.get() {
        Some(h) => h.reload(filter).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}
