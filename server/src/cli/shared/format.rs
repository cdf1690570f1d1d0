//! `--format` of `score memorycode` and of `merge`: one enum, so that a merged MemoryCode
//! shard prints in every format the unsharded score does.

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
}
