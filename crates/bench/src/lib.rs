//! Benchmark data, scoring and metrics: MemoryCode and ConvCodeWorld.
// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod convcode;
pub mod exec_shards;
pub mod memorycode;
pub mod numpy;
pub mod out_dir;
pub mod pyjson;
pub mod pyrandom;
pub mod score_json;
pub mod shard;
