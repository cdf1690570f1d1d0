//! Sharded runs: `--shard K/N` picks one of N disjoint parts of a job's items, and the set
//! of shard outputs is checked before a merge (each part once, all of the same input).
//!
//! The partition is by position in the job's sorted item list (round robin: item `i`
//! belongs to shard `i % N + 1`), so it is the same on every machine, needs no hashing,
//! and spreads MemoryCode's long-history dialogues (the high ids) over all shards.

use anyhow::{bail, Result};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// One shard of N, 1-based (`K` in 1..=N), as on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not K/N with 1 <= K <= N (e.g. 2/3)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// Whether the item at `index` (0-based, in the job's sorted order) is this shard's.
    pub fn owns(&self, index: usize) -> bool {
        index % self.n == self.k - 1
    }

    /// This shard's items, in their order.
    pub fn select<T>(&self, items: impl IntoIterator<Item = T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.owns(*i))
            .map(|(_, x)| x)
            .collect()
    }

    /// The `"shard"` record written into a shard's output: which shard, of what input
    /// (everything a merge must find equal across shards), and whether it finished.
    pub fn record<I, T>(&self, input: I, complete: bool) -> ShardRecord<I, T> {
        ShardRecord {
            k: self.k,
            n: self.n,
            input,
            complete,
            totals: None,
        }
    }
}

/// The `"shard"` key of a shard's output. `I` is what every shard of the run must share
/// (each benchmark's own type); `T`, counts a merge sums that the output does not carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardRecord<I, T = IgnoredAny> {
    pub k: usize,
    pub n: usize,
    pub input: I,
    /// False while the run is going, and for good when it was killed or failed.
    pub complete: bool,
    #[serde(default = "none::<T>", skip_serializing_if = "Option::is_none")]
    pub totals: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

impl<I: Serialize, T> ShardRecord<I, T> {
    /// This record as one of a set to merge: a valid K/N of a finished run (`name` says
    /// where it was read, for messages).
    pub fn checked(&self, name: &str) -> Result<ShardOf> {
        let (k, n) = (self.k, self.n);
        if n == 0 || k == 0 || k > n {
            bail!("{name}: shard {k}/{n} is not a valid shard");
        }
        if !self.complete {
            bail!(
                "{name}: shard {k}/{n} is unfinished: its run did not end well (killed, or \
                 stopped by an error); run that shard's command again, then merge again"
            );
        }
        Ok(ShardOf {
            name: name.to_string(),
            shard: Shard { k, n },
            input: serde_json::to_value(&self.input)?,
        })
    }
}

/// A shard record read back from one output (`name` says where, for messages).
#[derive(Clone, Debug)]
pub struct ShardOf {
    pub name: String,
    pub shard: Shard,
    pub input: Value,
}

/// The order in which to merge shard outputs (name, parsed JSON): each file's `"shard"`
/// record read, and the set checked (`check_set`).
pub fn merge_order(files: &[(String, Value)]) -> Result<Vec<usize>> {
    let records = files
        .iter()
        .map(|(name, v)| read_record(name, v.get("shard")))
        .collect::<Result<Vec<_>>>()?;
    check_set(&records)
}

/// Reads the `"shard"` record of an output; errors name `name` and what is wrong.
pub fn read_record(name: &str, record: Option<&Value>) -> Result<ShardOf> {
    let Some(r) = record else {
        bail!("{name}: not a shard output (no \"shard\" record; was it run with --shard K/N?)");
    };
    let r = ShardRecord::<Value>::deserialize(r)
        .map_err(|e| anyhow::anyhow!("{name}: its \"shard\" record is malformed: {e}"))?;
    r.checked(name)
}

/// Checks that `shards` are exactly shards 1..=N of one input: every problem is named
/// (all of them, one per line). Returns the shards' order by K.
pub fn check_set(shards: &[ShardOf]) -> Result<Vec<usize>> {
    let mut problems = Vec::new();
    let Some(first) = shards.first() else {
        bail!("nothing to merge: give the shard outputs");
    };
    let n = first.shard.n;
    for s in &shards[1..] {
        if s.shard.n != n {
            problems.push(format!(
                "{} is shard {} but {} is shard {}: shards of different N (every shard of a \
                 job needs the same N; re-run the odd ones with it)",
                s.name, s.shard, first.name, first.shard
            ));
        }
        if s.input != first.input {
            problems.push(format!(
                "{} is a shard of a different input than {} ({}): every shard must run the \
                 same command on the same input",
                s.name,
                first.name,
                differing_keys(&first.input, &s.input)
            ));
        }
    }
    let mut by_k: Vec<Option<usize>> = vec![None; n];
    for (i, s) in shards.iter().enumerate() {
        if s.shard.n != n {
            continue;
        }
        match by_k[s.shard.k - 1] {
            Some(j) => problems.push(format!(
                "shard {} given twice: {} and {} (give each shard once)",
                s.shard, shards[j].name, s.name
            )),
            None => by_k[s.shard.k - 1] = Some(i),
        }
    }
    for (k, slot) in by_k.iter().enumerate() {
        if slot.is_none() {
            problems.push(format!(
                "shard {}/{n} is missing: run it (--shard {}/{n}) and give its output too",
                k + 1,
                k + 1
            ));
        }
    }
    if !problems.is_empty() {
        bail!("cannot merge:\n  {}", problems.join("\n  "));
    }
    Ok(by_k.into_iter().flatten().collect())
}

/// Which top-level keys of two input records differ (for the refusal's message).
fn differing_keys(a: &Value, b: &Value) -> String {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return "their inputs differ".into();
    };
    let mut keys: Vec<&str> = a
        .keys()
        .chain(b.keys())
        .map(String::as_str)
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    keys.sort();
    keys.dedup();
    format!("different {}", keys.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_and_refuses() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { k: 2, n: 3 }));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_are_disjoint_and_cover() {
        for n in 1..7 {
            let mut seen = vec![0; 10];
            for k in 1..=n {
                for i in (Shard { k, n }).select(0..10) {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n={n}: {seen:?}");
        }
        // More shards than items: the extra shards are empty.
        assert!(Shard { k: 5, n: 5 }.select(0..3).is_empty());
    }

    fn rec(name: &str, k: usize, n: usize, input: Value) -> ShardOf {
        ShardOf {
            name: name.into(),
            shard: Shard { k, n },
            input,
        }
    }

    #[test]
    fn set_refusals_named() {
        let i = json!({"ids": [1, 2]});
        assert_eq!(
            check_set(&[rec("b", 2, 2, i.clone()), rec("a", 1, 2, i.clone())]).unwrap(),
            vec![1, 0]
        );
        let e = check_set(&[rec("a", 1, 3, i.clone()), rec("b", 1, 3, i.clone())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("shard 1/3 given twice: a and b"), "{e}");
        assert!(e.contains("shard 2/3 is missing"), "{e}");
        assert!(e.contains("shard 3/3 is missing"), "{e}");
        let e = check_set(&[rec("a", 1, 2, i.clone()), rec("b", 2, 3, i.clone())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("different N"), "{e}");
        let e = check_set(&[rec("a", 1, 2, i), rec("b", 2, 2, json!({"ids": [1]}))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("different input") && e.contains("ids"), "{e}");
        let unfinished = json!({"k": 1, "n": 2, "input": {}, "complete": false});
        let e = read_record("x.json", Some(&unfinished))
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.json") && e.contains("unfinished"), "{e}");
    }
}
