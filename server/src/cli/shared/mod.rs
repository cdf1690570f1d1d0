//! What more than one command uses, in one place: a command imports these and the crate's
//! layers, never another command's file nor the dispatcher (`cli/mod.rs`). A helper that a
//! second command comes to need moves here, so that no command depends on another's
//! internals and a command's folder can change without breaking its neighbours.

pub mod bundled;
pub mod check_format;
pub mod choice;
pub mod endpoint_args;
pub mod format;
pub mod interrupt;
pub mod log_safe;
pub mod lsp_client;
pub mod measure;
pub mod progress;
pub mod report_page;
pub mod request_args;
pub mod runner;

/// `pivot-lsp --version`: the package version and, when built from a git checkout, the
/// commit and its date (server/build.rs). Here rather than in the dispatcher because
/// `check` writes it into its cache and history report too.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("PIVOT_LSP_COMMIT_INFO"));
