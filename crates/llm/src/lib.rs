//! OpenAI-compatible model client, prompt formats, on-disk response cache, and a scripted
//! loopback server for tests and benchmarks.

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
