//! MemoryCode (Rakotonirina et al., 2025): dialogues, model outputs, and the evaluator's
//! four scores, exactly as the original computes them (memorycode-scoring.md §5-§6).

pub mod data;
pub mod dataset;
pub mod feedback;
pub mod floor;
pub mod generate;
pub mod ledger;
pub mod merge;
pub mod original;
pub mod report;
pub mod score;
pub mod score_dirs;
pub mod score_file;
pub mod templates;

pub use data::{Dialogue, ModelOutput, Pair, Session, SessionOutput};
pub use report::Report;
pub use score::{score_dialogue, AnswerKind, AnswerResult, DialogueResult, DialogueScores};
pub use score_dirs::score_dirs;
