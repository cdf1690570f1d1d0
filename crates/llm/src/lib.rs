//! OpenAI-compatible model client, prompt formats, on-disk response cache, and a scripted
//! loopback server for tests and benchmarks.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod cache;
pub mod client;
pub mod dspy;
pub mod loopback;
pub mod memorycode_dataset_prompts;
pub mod memorycode_prompts;
pub mod pivot_import;
pub mod prompts;
pub mod wire;

pub use cache::{Cache, CacheKey};
pub use client::{Client, ClientConfig, Completion, EndpointKind, LlmError, Sampling};
pub use wire::ChatMessage;
