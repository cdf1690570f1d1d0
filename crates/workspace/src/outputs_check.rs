//! `pivot.outputs.check`: a model's answers for the open conversation, scored by the core's
//! MemoryCode scorer, as JSON: per session and answer, each pair's verdict and score.

use crate::replies::{AnswerScored, OutputsChecked, PairScored, SessionScores};
use anyhow::{Context, Result};
use pivot_bench::memorycode::data::{file_id, Pair};
use pivot_bench::memorycode::score::{nanmean, score_dialogue, AnswerKind};
use pivot_bench::memorycode::{Dialogue, ModelOutput};
use pivot_python::pivots::Ledger;
use std::path::Path;

/// Score `output` against `dialogue` (whose pivots are `ledger`).
pub fn check_outputs(
    dialogue: &Dialogue,
    dialogue_path: &Path,
    ledger: &Ledger,
    output: &Path,
) -> Result<OutputsChecked> {
    if let (Some(o), Some(d)) = (
        file_id(output, "output_"),
        file_id(dialogue_path, "dialogue_"),
    ) {
        if o != d {
            anyhow::bail!(
                "{} is for dialogue {o}, but the open conversation is dialogue {d} ({})",
                output.display(),
                dialogue_path.display()
            );
        }
    }
    let out = ModelOutput::load(output)?;
    let result = score_dialogue(dialogue, &out)
        .map_err(|e| anyhow::anyhow!(e))
        .with_context(|| format!("cannot score {}", output.display()))?;
    let answers = result
        .answers
        .iter()
        .map(|a| {
            let session = &dialogue.sessions[a.session];
            let pairs: &[Pair] = match a.kind.scored_as() {
                AnswerKind::History => &session.history_regex,
                _ => &session.session_regex,
            };
            let verdicts = a
                .verdicts
                .iter()
                .map(|(i, v)| {
                    let pair = &pairs[*i];
                    // The pivot whose version (active at that session) is this pair.
                    let pivot = ledger
                        .active_at(a.session)
                        .into_iter()
                        .find(|x| x.version.kind == pair.kind && x.version.rule == pair.rule)
                        .map(|x| x.pivot.id.clone());
                    PairScored {
                        pair: *i,
                        pivot,
                        kind: pair.kind.name().to_string(),
                        rule: pair.rule.to_json(),
                        verdict: (*v).into(),
                        score: v.score(),
                    }
                })
                .collect();
            let score = nanmean(
                a.verdicts
                    .iter()
                    .map(|(_, v)| v.score().unwrap_or(f64::NAN)),
            );
            AnswerScored {
                session: a.session,
                kind: a.kind.name().to_string(),
                answer: a.answer,
                syntax_error: a.syntax_error.as_ref().map(|e| e.to_string()),
                score: finite(score),
                verdicts,
            }
        })
        .collect();
    let list = |v: &[f64]| v.iter().copied().map(finite).collect();
    Ok(OutputsChecked {
        dialogue: dialogue_path.to_path_buf(),
        output: output.to_path_buf(),
        scores: SessionScores {
            session: list(&result.scores.session),
            instruction: list(&result.scores.instruction),
            history: list(&result.scores.history),
        },
        answers,
        warnings: out.warnings,
    })
}

/// A mean over no pair is NaN, which JSON cannot hold: it is written as null.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Conversation;
    use crate::replies::VerdictName;
    use std::path::PathBuf;

    #[test]
    fn fixture_outputs_have_hand_checked_verdicts() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/memorycode");
        let dpath = root.join("dataset/dialogue_1.json");
        let (c, _) = Conversation::open(&dpath).unwrap();
        let out = root.join("outputs/demo-model/output_1.json");
        let v = check_outputs(&c.dialogue, &dpath, &c.ledger, &out).unwrap();
        // make_fixtures.py: session 0's first session answer passes both pairs.
        let first = &v.answers[0];
        assert_eq!(first.kind, "session");
        assert_eq!(first.verdicts[0].verdict, VerdictName::Pass);
        assert_eq!(first.verdicts[0].pivot.as_deref(), Some("mc-100"));
        assert_eq!(first.verdicts[1].pivot.as_deref(), Some("mc-101"));
        assert_eq!(v.scores.session[0], Some(0.5));
        assert_eq!(v.scores.session[1], None);
        let wrong = root.join("outputs/demo-model/output_2.json");
        let e = check_outputs(&c.dialogue, &dpath, &c.ledger, &wrong).unwrap_err();
        assert!(format!("{e:#}").contains("is for dialogue 2"), "{e:#}");
    }
}
