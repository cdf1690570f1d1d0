//! Pivots: coding instructions given at some session of a conversation, their rules, the
//! ledger of versions over sessions, and the check of code against one rule.

pub mod check;
pub mod import;
pub mod ledger;
pub mod rule;
pub mod scope;
pub mod toml_file;

pub use check::{check, Outcome, Reason, Verdict, Violation};
pub use ledger::{Active, Ledger, Pivot, PivotVersion};
pub use rule::{Rule, RuleError};
pub use scope::{Applies, Patterns, Scope};
