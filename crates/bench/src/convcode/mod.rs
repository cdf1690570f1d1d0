//! ConvCodeWorld (live feedback loop) and ConvCodeBench (static replay): configurations,
//! the original's file layout, the turn loop, and Pass@1 / MRR / Recall.
//!
//! Library entry points: [`turn::run_turn`] (one task, one turn, given its inputs),
//! [`live::run_live`], [`static_bench::run_static`], [`metrics::score`].

pub mod config;
pub mod conversation;
pub mod eval_file;
pub mod evaluate;
pub mod executor;
pub mod live;
pub mod locate;
pub mod merge;
pub mod metrics;
pub mod numeric;
pub mod order;
pub mod play;
pub mod records;
pub mod sanitize;
pub mod score_file;
pub mod shard_dir;
pub mod speed;
pub mod static_bench;
pub mod table;
pub mod turn;
pub mod turn0;

pub use config::{Config, Coverage, Expertise, Layout};
pub use metrics::{score, score_with, ScoreOptions, ScoreRequest};
pub use score_file::{Mode, Scores};
