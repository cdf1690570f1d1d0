//! The integration tests that need only the binary, the fixtures and `../shared`, as one
//! test binary with a module per feature: each test binary links the whole crate, so one
//! binary instead of sixteen is most of a cold `cargo test`'s link time. Tests that change
//! the process's environment, run untrusted code or measure the machine keep binaries of
//! their own (`exec`, `tamper`, `scale`, `slurm`, ...).

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // not every module uses all of the support module
#[path = "../support/mod.rs"]
mod support;

mod agent_opencode;
mod check;
mod check_scoped;
mod cli_usage;
mod docs;
mod durability;
mod history;
mod history_instructions;
mod hostile_inputs;
mod hostile_repository;
mod hub_dataset;
mod layering;
mod mcp;
mod memorycode;
mod memorycode_feedback;
mod memorycode_generate;
mod model_server;
mod pivots_import;
mod report;
mod report_figures;
mod self_contained;
mod shards;
mod snippets;
mod stdio_flag;
