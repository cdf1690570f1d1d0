//! The order the original visits tasks in: DSPy's `Dataset.test` shuffles the dataset with
//! `random.Random(0).shuffle` before `run.py` walks it, so each turn's log is written in that
//! order (Python's generator: `bench::pyrandom`).

use crate::pyrandom::PyRandom;

/// The seed DSPy's `Dataset` uses for its test split (`eval_seed=0`).
const DSPY_TEST_SEED: i128 = 0;

/// Positions `0..n` in the order DSPy's test split visits them.
pub fn dspy_order(n: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    PyRandom::new(DSPY_TEST_SEED).shuffle(&mut idx);
    idx
}

/// The problems in the order the original's `run.py` visits them.
pub fn dspy_visit(problems: &[pivot_exec::Problem]) -> Vec<&pivot_exec::Problem> {
    dspy_order(problems.len())
        .into_iter()
        .map(|i| &problems[i])
        .collect()
}

/// The task ids of `whole` (a whole job's ids in problem order) in DSPy's visiting order.
pub fn dspy_visit_ids(whole: &[String]) -> Vec<&str> {
    dspy_order(whole.len())
        .into_iter()
        .map(|i| whole[i].as_str())
        .collect()
}

/// The order a run visits `problems` in. For a shard (`whole` = the whole job's ids in
/// problem order) it is the whole job's order restricted to the shard's problems, so each
/// shard's log is a subsequence of the unsharded run's log.
pub fn visit<'a>(
    problems: &'a [pivot_exec::Problem],
    whole: Option<&[String]>,
) -> Vec<&'a pivot_exec::Problem> {
    let Some(whole) = whole else {
        return dspy_visit(problems);
    };
    let by_id: std::collections::HashMap<&str, &pivot_exec::Problem> =
        problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    dspy_visit_ids(whole)
        .into_iter()
        .filter_map(|id| by_id.get(id).copied())
        .collect()
}
