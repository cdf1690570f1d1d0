//! `pivots import` on real instruction files: the corpus in fixtures/instructions/real/
//! (one file each from public Python repositories, SOURCES.toml), against its hand-written
//! gold (GOLD.toml: which lines the rule forms check and the rules each gives). Prints
//! precision and recall; no rule may be proposed that the gold does not give, and at least
//! 80% of the gold's checkable sentences must be read exactly.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

use pivot_python::pivots::import::{import, Source};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

#[derive(Deserialize)]
struct Sources {
    file: Vec<SourceEntry>,
}

#[derive(Deserialize)]
#[allow(dead_code)] // read to check the index is complete
struct SourceEntry {
    name: String,
    repo: String,
    path: String,
    commit: String,
    licence: String,
}

#[derive(Deserialize)]
struct Gold {
    file: Vec<GoldFile>,
}

#[derive(Deserialize)]
struct GoldFile {
    name: String,
    #[serde(default)]
    checkable: Vec<Checkable>,
    /// Sentences a tool could check that no rule form does yet: not expected.
    #[serde(default)]
    mechanical: Vec<Mechanical>,
}

#[derive(Deserialize)]
struct Mechanical {
    line: usize,
    text: String,
    form: String,
}

#[derive(Deserialize)]
struct Checkable {
    line: usize,
    text: String,
    rules: Vec<GoldRule>,
}

#[derive(Deserialize)]
struct GoldRule {
    kind: String,
    rule: toml::Value,
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/instructions/real")
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = corpus().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A gold rule as the JSON a proposal's rule gives.
fn json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(json).collect()),
        other => panic!("a gold rule is a string, a bool or [name, bool], not {other}"),
    }
}

#[test]
fn real_instruction_files_no_wrong_rule_and_recall_at_least_80_percent() {
    let sources: Sources = load("SOURCES.toml");
    let gold: Gold = load("GOLD.toml");
    assert!(sources.file.len() >= 50, "a corpus of at least 50 files");
    let indexed: BTreeSet<&str> = sources.file.iter().map(|f| f.name.as_str()).collect();
    let golden: BTreeSet<&str> = gold.file.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        indexed, golden,
        "SOURCES.toml and GOLD.toml list the same files"
    );
    for f in &sources.file {
        assert!(
            f.commit.len() == 40
                && f.repo.contains('/')
                && !f.path.is_empty()
                && !f.licence.is_empty(),
            "{}: repo, path, commit and licence",
            f.name
        );
    }
    let (mut proposed, mut correct, mut wrong) = (0, 0, Vec::new());
    let (mut sentences, mut read_exactly, mut gold_rules, mut gold_rules_found) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    let mut forms: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &gold.file {
        let text = std::fs::read_to_string(corpus().join(&g.name)).expect("a corpus file");
        let lines: Vec<&str> = text.lines().collect();
        // The gold cites the lines it means.
        for c in &g.checkable {
            assert_eq!(
                lines[c.line - 1].trim(),
                c.text,
                "{}:{}: the gold's text",
                g.name,
                c.line
            );
        }
        for m in &g.mechanical {
            let at = format!("{}:{}: the gold's text", g.name, m.line);
            assert_eq!(lines[m.line - 1].trim(), m.text, "{at}");
            *forms.entry(m.form.as_str()).or_insert(0) += 1;
        }
        let got = import(&[Source {
            name: g.name.clone(),
            text: text.clone(),
        }]);
        // (line, kind, rule) proposed, one per citation.
        let mut at: BTreeMap<usize, BTreeSet<(String, String)>> = BTreeMap::new();
        for p in &got.proposed {
            for s in &p.sources {
                proposed += 1;
                let key = (p.kind.name().to_string(), p.rule.to_json().to_string());
                let ok = g.checkable.iter().any(|c| {
                    (s.at.line..=s.at.end_line).contains(&c.line)
                        && c.rules
                            .iter()
                            .any(|r| r.kind == key.0 && json(&r.rule) == p.rule.to_json())
                });
                if ok {
                    correct += 1;
                } else {
                    wrong.push(format!("{}: {} {} from {:?}", s.at, key.0, key.1, s.text));
                }
                for l in s.at.line..=s.at.end_line {
                    at.entry(l).or_default().insert(key.clone());
                }
            }
        }
        for c in &g.checkable {
            sentences += 1;
            let here = at.get(&c.line);
            let found = c
                .rules
                .iter()
                .filter(|r| {
                    here.is_some_and(|h| h.contains(&(r.kind.clone(), json(&r.rule).to_string())))
                })
                .count();
            gold_rules += c.rules.len();
            gold_rules_found += found;
            if found == c.rules.len() {
                read_exactly += 1;
            } else {
                let why = got
                    .skipped
                    .iter()
                    .filter(|s| (s.at.line..=s.at.end_line).contains(&c.line))
                    .map(|s| s.reason.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ");
                missed.push(format!(
                    "{}:{}: {:?} ({found} of {} rules): {why}",
                    g.name,
                    c.line,
                    c.text,
                    c.rules.len()
                ));
            }
        }
    }
    let pct = |a: usize, b: usize| {
        if b == 0 {
            100.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    eprintln!(
        "real instruction files: {} files; proposed {proposed} rule citations, {correct} correct: \
         precision {:.1}%; gold checkable sentences {sentences}, read exactly {read_exactly}: \
         recall {:.1}% (rules {gold_rules_found} of {gold_rules}, {:.1}%)",
        gold.file.len(),
        pct(correct, proposed),
        pct(read_exactly, sentences),
        pct(gold_rules_found, gold_rules),
    );
    for m in &missed {
        eprintln!("not read exactly: {m}");
    }
    eprintln!(
        "mechanical sentences no rule form checks yet: {}",
        forms
            .iter()
            .map(|(f, n)| format!("{f} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for w in &wrong {
        eprintln!("WRONG: {w}");
    }
    assert!(
        wrong.is_empty(),
        "{} rule(s) proposed that the gold does not give",
        wrong.len()
    );
    assert!(
        read_exactly * 5 >= sentences * 4,
        "recall {read_exactly} of {sentences} is under 80%"
    );
}
