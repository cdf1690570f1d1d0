//! The order the original visits tasks in: DSPy's `Dataset.test` shuffles the dataset with
//! `random.Random(0).shuffle` before `run.py` walks it, so each turn's log is written in that
//! order. Python's `Random(seed)` is MT19937 seeded with `init_by_array` of the seed's 32-bit
//! words, and `shuffle` is Fisher-Yates from the end with `_randbelow` (rejection sampling
//! over `getrandbits(n.bit_length())`); reproduced here over `rand_mt`'s MT19937.

use rand_mt::Mt;

/// The seed DSPy's `Dataset` uses for its test split (`eval_seed=0`).
pub const DSPY_TEST_SEED: u32 = 0;

/// Python's `random.Random(seed)` for a seed below 2^32 (one key word, as CPython uses for 0).
struct PyRandom(Mt);

impl PyRandom {
    fn new(seed: u32) -> Self {
        PyRandom(Mt::new_with_key([seed]))
    }

    /// `getrandbits(k)` for 1 <= k <= 32.
    fn getrandbits(&mut self, k: u32) -> u32 {
        self.0.next_u32() >> (32 - k)
    }

    /// `_randbelow_with_getrandbits(n)` for 1 <= n <= 2^32 - 1.
    fn randbelow(&mut self, n: u32) -> u32 {
        let k = 32 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }
}

/// `random.Random(seed).shuffle(items)`, in place. Lists longer than 2^32 - 1 items (which
/// Python would draw with more words) are not shuffled.
pub fn python_shuffle<T>(items: &mut [T], seed: u32) {
    if items.len() < 2 || items.len() > u32::MAX as usize {
        return;
    }
    let mut rng = PyRandom::new(seed);
    for i in (1..items.len()).rev() {
        let j = rng.randbelow(i as u32 + 1) as usize;
        items.swap(i, j);
    }
}

/// Positions `0..n` in the order DSPy's test split visits them.
pub fn dspy_order(n: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    python_shuffle(&mut idx, DSPY_TEST_SEED);
    idx
}

/// The problems in the order the original's `run.py` visits them.
pub fn dspy_visit(problems: &[crate::exec::Problem]) -> Vec<&crate::exec::Problem> {
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
    problems: &'a [crate::exec::Problem],
    whole: Option<&[String]>,
) -> Vec<&'a crate::exec::Problem> {
    let Some(whole) = whole else {
        return dspy_visit(problems);
    };
    let by_id: std::collections::HashMap<&str, &crate::exec::Problem> =
        problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    dspy_visit_ids(whole)
        .into_iter()
        .filter_map(|id| by_id.get(id).copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compared with python3's own `random.Random(seed).shuffle` when python3 is available.
    #[test]
    fn shuffle_equals_pythons() {
        let script = "import random, json\nout = {}\nfor seed in (0, 1, 12345):\n    for n in (2, 5, 164, 1140):\n        l = list(range(n)); random.Random(seed).shuffle(l); out[f'{seed}/{n}'] = l\nprint(json.dumps(out))";
        let out = match std::process::Command::new("python3")
            .args(["-c", script])
            .output()
        {
            Ok(o) if o.status.success() => o,
            _ => {
                crate::test_skip::skip("python3 is not available to compare the shuffle with");
                return;
            }
        };
        let want: std::collections::HashMap<String, Vec<usize>> =
            serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(want.len(), 12);
        for (key, expect) in want {
            let (seed, n) = key.split_once('/').unwrap();
            let mut got: Vec<usize> = (0..n.parse().unwrap()).collect();
            python_shuffle(&mut got, seed.parse().unwrap());
            assert_eq!(got, expect, "seed/n = {key}");
        }
    }
}
