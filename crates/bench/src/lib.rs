//! Benchmark data, scoring and metrics: MemoryCode and ConvCodeWorld.
pub mod bcb_parity;
pub mod convcode;
pub mod exec_shards;
pub mod memorycode;
pub mod numpy;
pub mod out_dir;
pub mod pyjson;
pub mod pyrandom;
pub mod shard;
