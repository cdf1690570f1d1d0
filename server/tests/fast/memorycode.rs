//! MemoryCode scoring: parity with the original evaluator on the real data in
//! `../shared/memorycode` (skipped with a printed reason when it is absent), the CLI on
//! the bundled fixtures, and bad input.

use crate::support;

use pivot_bench::memorycode::score::{AnswerKind, DialogueResult};
use pivot_bench::memorycode::score_dirs::{score_dirs, Detail};
use pivot_python::pivots::Verdict;
use pivot_test_support::host::shared;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cli::{repo, EXE};

type Key = (u64, u64, String, u64);

/// The reference's per-answer parse verdicts and per-pair scorings.
fn reference_lines(path: &Path) -> (HashMap<Key, bool>, HashMap<(Key, u64), Value>) {
    let f = std::fs::File::open(path).unwrap();
    let r = std::io::BufReader::new(flate2::read::GzDecoder::new(f));
    let (mut parses, mut scores) = (HashMap::new(), HashMap::new());
    for line in r.lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let key = (
            v["d"].as_u64().unwrap(),
            v["s"].as_u64().unwrap(),
            v["k"].as_str().unwrap().to_string(),
            v["o"].as_u64().unwrap(),
        );
        if let Some(p) = v.get("parse") {
            parses.insert(key, p.as_str().unwrap() == "ok");
        } else {
            scores.insert((key, v["p"].as_u64().unwrap()), v["score"].clone());
        }
    }
    (parses, scores)
}

/// The reference writes 1.0 / 0.0 / null (absent) / integer 0 (syntax error).
fn reference_verdict(v: &Value) -> Verdict {
    match v {
        Value::Null => Verdict::Absent,
        Value::Number(n) if n.is_u64() => Verdict::SyntaxError,
        Value::Number(n) if n.as_f64() == Some(1.0) => Verdict::Pass,
        _ => Verdict::Fail,
    }
}

fn kind_name(k: AnswerKind) -> &'static str {
    k.name()
}

/// Every number of `want` is the same double in `got` (null for NaN on both sides), and
/// both have the same shape; `count` counts the numbers compared.
fn same_numbers(want: &Value, got: &Value, at: &str, count: &mut usize, differ: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            if w.len() != g.len() {
                differ.push(format!("{at}: {} keys vs {}", w.len(), g.len()));
            }
            for (k, wv) in w {
                let gv = g.get(k).unwrap_or(&Value::Null);
                same_numbers(wv, gv, &format!("{at}.{k}"), count, differ);
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                differ.push(format!("{at}: length {} vs {}", w.len(), g.len()));
            }
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                same_numbers(wv, gv, &format!("{at}[{i}]"), count, differ);
            }
        }
        (w, g) => {
            *count += 1;
            // Parsed by Rust's own (correctly rounded) float parser from the JSON text.
            let bits = |v: &Value| {
                v.as_number()
                    .map(|n| n.to_string().parse::<f64>().unwrap().to_bits())
            };
            if bits(w) != bits(g) {
                differ.push(format!("{at}: reference {w}, ours {g}"));
            }
        }
    }
}

fn parity(model: &str) {
    let Some(root) = shared(
        "memorycode",
        "the parity with MemoryCode's reference not checked",
    ) else {
        return;
    };
    let (mut report, results) = score_dirs(
        &root.join("dataset"),
        &root.join("outputs").join(model),
        Detail::Answers,
        &|| {},
    )
    .unwrap();
    assert!(report.skipped.is_empty(), "skipped: {:?}", report.skipped);
    let (parses, scores) =
        reference_lines(&root.join(format!("reference/{model}.outputs.jsonl.gz")));

    let mut mismatches = Vec::new();
    let (mut seen_parses, mut seen_scores) = (0, 0);
    for DialogueResult { id, answers, .. } in &results {
        for a in answers {
            let key = (
                *id as u64,
                a.session as u64,
                kind_name(a.kind).to_string(),
                a.answer as u64,
            );
            match parses.get(&key) {
                Some(&ok) if ok == a.syntax_error.is_none() => {}
                other => mismatches.push(format!(
                    "parse {key:?}: reference {other:?}, ours {:?}",
                    a.syntax_error
                )),
            }
            seen_parses += 1;
            for (p, verdict) in &a.verdicts {
                let want = scores.get(&(key.clone(), *p as u64)).map(reference_verdict);
                if want != Some(*verdict) {
                    mismatches.push(format!(
                        "score {key:?} pair {p}: reference {want:?}, ours {verdict:?}"
                    ));
                }
                seen_scores += 1;
            }
        }
    }
    assert_eq!(
        seen_parses,
        parses.len(),
        "answers scored vs reference parse lines"
    );
    assert_eq!(
        seen_scores,
        scores.len(),
        "scorings vs reference scoring lines"
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first ones:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );

    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(format!("reference/{model}.json"))).unwrap(),
    )
    .unwrap();
    // The per-session sums add dialogues in the reference machine's `os.listdir` order;
    // this folder may list them otherwise.
    let listed: Vec<u32> = reference["listdir_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    if report.row_order != listed {
        println!("{model}: this folder lists the outputs in another order than the reference's; using the reference's");
        report.row_order = listed;
        report.finish();
    }
    let ours = report.to_json(false);
    let mut numbers = 0;
    let mut differ = Vec::new();
    same_numbers(
        &reference["macro"],
        &ours["macro"],
        "macro",
        &mut numbers,
        &mut differ,
    );
    same_numbers(
        &reference["per_session"],
        &ours["per_session"],
        "per_session",
        &mut numbers,
        &mut differ,
    );
    same_numbers(
        &reference["dialogues"],
        &ours["dialogues"],
        "dialogues",
        &mut numbers,
        &mut differ,
    );
    assert_eq!(reference["max_length"], ours["max_length"]);
    assert!(
        differ.is_empty(),
        "{} of {numbers} numbers differ, first ones:\n{}",
        differ.len(),
        differ
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(numbers > 1000, "only {numbers} numbers compared");
    println!("{model}: all {numbers} numbers of the JSON are the reference's doubles");
    println!(
        "{model}: {seen_parses} parse verdicts and {seen_scores} scorings equal the reference"
    );
}

#[test]
fn parity_gpt_4o() {
    parity("gpt-4o");
}

#[test]
fn parity_command_r_plus() {
    parity("command-r-plus");
}

/// The scorer's walk skips what cannot matter in error-free trees; on every distinct code
/// block both models wrote, the module it builds equals the one visiting every node.
#[test]
fn pruned_walk_equals_whole_walk_on_every_answer() {
    use pivot_bench::memorycode::data::ModelOutput;
    use pivot_python::python::module::parse_tree;
    use pivot_python::python::{code_block, Module};
    use rayon::prelude::*;
    let Some(root) = shared(
        "memorycode",
        "the pruned walk not checked on the real answers",
    ) else {
        return;
    };
    let mut codes = std::collections::BTreeSet::new();
    for model in ["gpt-4o", "command-r-plus"] {
        let dir = root.join("outputs").join(model);
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let out = ModelOutput::load(&e.path()).unwrap();
            for s in &out.sessions {
                let answers = (s.session_model_output.iter())
                    .chain(&s.instruction_model_output)
                    .chain(&s.history_model_output);
                codes.extend(answers.map(|a| code_block::extract(a).to_string()));
            }
        }
    }
    let codes: Vec<String> = codes.into_iter().collect();
    let compared: usize = codes
        .par_iter()
        .map(|code| {
            let tree = parse_tree(code, None);
            let (pruned, whole) = (
                Module::from_tree(code, &tree),
                Module::from_every_node(code, &tree),
            );
            assert_eq!(pruned.syntax_error, whole.syntax_error, "{code}");
            assert_eq!(pruned.objects, whole.objects, "{code}");
            !tree.root_node().has_error() as usize
        })
        .sum();
    println!(
        "{} code blocks, {compared} without tree-sitter errors",
        codes.len()
    );
    assert!(compared > 10_000);
}

// ---------------------------------------------------------------- bundled fixtures, CLI

fn fixtures() -> PathBuf {
    repo().join("fixtures/memorycode")
}

/// Expected values derived by hand from the answers in fixtures/memorycode/make_fixtures.py
/// (each answer's verdicts are commented there).
#[test]
fn bundled_fixtures_score_as_derived_by_hand() {
    let out = Command::new(EXE)
        .args(["score", "memorycode", "--format", "json"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let near = |k: &str, want: f64| {
        let got = v["macro"][k].as_f64().unwrap();
        assert!((got - want).abs() < 1e-12, "{k}: {got} vs {want}");
    };
    near("short history", 5.0 / 6.0);
    near("long history", 0.5);
    near("session", 5.0 / 9.0);
    near("instruction", 4.0 / 9.0);
    assert_eq!(v["per_session"]["session"][0].as_f64().unwrap(), 2.0 / 3.0);
    assert!(v["per_session"]["short history"][0].is_null());
    assert_eq!(
        v["dialogues"]["1"]["history"][2].as_f64().unwrap(),
        2.0 / 3.0
    );
    assert_eq!(v["dialogues"]["2"]["instruction"][0].as_f64().unwrap(), 0.0);
    assert_eq!(v["skipped"].as_array().unwrap().len(), 0);
}

#[test]
fn table_and_markdown_formats_name_all_four_scores() {
    for format in ["table", "markdown"] {
        let out = Command::new(EXE)
            .args(["score", "memorycode", "--per-session", "--format", format])
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        for m in [
            "short history",
            "long history",
            "session",
            "instruction",
            "0.8333",
            "0.5556",
            "0.4444",
        ] {
            assert!(text.contains(m), "{format} output lacks {m}:\n{text}");
        }
    }
}

// ---------------------------------------------------------------- bad input

/// A scratch copy of the fixtures that a test may break.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["dataset", "outputs"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    for id in [1, 2, 211] {
        std::fs::copy(
            fixtures().join(format!("dataset/dialogue_{id}.json")),
            dir.path().join(format!("dataset/dialogue_{id}.json")),
        )
        .unwrap();
        std::fs::copy(
            fixtures().join(format!("outputs/demo-model/output_{id}.json")),
            dir.path().join(format!("outputs/output_{id}.json")),
        )
        .unwrap();
    }
    dir
}

fn score_scratch(dir: &Path) -> pivot_bench::memorycode::Report {
    score_dirs(
        &dir.join("dataset"),
        &dir.join("outputs"),
        Detail::ScoresOnly,
        &|| {},
    )
    .unwrap()
    .0
}

fn only_skip(report: &pivot_bench::memorycode::Report) -> (u32, String) {
    assert_eq!(report.skipped.len(), 1, "skipped: {:?}", report.skipped);
    assert_eq!(
        report.dialogues.len(),
        2,
        "the other dialogues are still scored"
    );
    (report.skipped[0].id, report.skipped[0].reason.clone())
}

#[test]
fn malformed_json_names_file_and_path_and_the_rest_is_scored() {
    let dir = scratch();
    let p = dir.path().join("outputs/output_2.json");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    let (id, reason) = only_skip(&score_scratch(dir.path()));
    assert_eq!(id, 2);
    assert!(
        reason.contains("output_2.json") && reason.contains("JSON path"),
        "{reason}"
    );

    // A wrong type deep inside: the path points at it.
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["sessions"][1]["session_model_output"][0] = Value::from(42);
    std::fs::write(&p, v.to_string()).unwrap();
    let (_, reason) = only_skip(&score_scratch(dir.path()));
    assert!(
        reason.contains("sessions[1].session_model_output[0]"),
        "{reason}"
    );
}

#[test]
fn missing_output_file_is_skipped_by_name() {
    let dir = scratch();
    std::fs::remove_file(dir.path().join("outputs/output_211.json")).unwrap();
    let (id, reason) = only_skip(&score_scratch(dir.path()));
    assert_eq!(id, 211);
    assert!(
        reason.contains("missing output file") && reason.contains("output_211.json"),
        "{reason}"
    );
}

#[test]
fn output_with_fewer_sessions_than_its_dialogue_is_skipped() {
    let dir = scratch();
    let p = dir.path().join("outputs/output_1.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["sessions"].as_array_mut().unwrap().truncate(1);
    std::fs::write(&p, v.to_string()).unwrap();
    let (id, reason) = only_skip(&score_scratch(dir.path()));
    assert_eq!(id, 1);
    assert!(
        reason.contains("the output has 1 session but the dialogue has 3 sessions"),
        "{reason}"
    );
}

#[test]
fn non_utf8_answer_is_replaced_and_reported() {
    let dir = scratch();
    let p = dir.path().join("outputs/output_211.json");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut bytes = text.into_bytes();
    let at = bytes.windows(5).position(|w| w == b"merge").unwrap();
    bytes[at] = 0xff; // "merge" -> "\xffrge" inside an answer's comment
    std::fs::write(&p, &bytes).unwrap();
    let report = score_scratch(dir.path());
    assert!(report.skipped.is_empty());
    assert_eq!(report.warnings.len(), 1);
    assert!(
        report.warnings[0].contains("output_211.json")
            && report.warnings[0].contains("invalid UTF-8")
    );
    // The comment is still a comment: the scores are those of the clean file.
    let clean = score_dirs(
        &fixtures().join("dataset"),
        &fixtures().join("outputs/demo-model"),
        Detail::ScoresOnly,
        &|| {},
    )
    .unwrap()
    .0;
    assert_eq!(report.macro_scores, clean.macro_scores);
}

#[test]
fn five_megabyte_answer_is_scored() {
    let dir = scratch();
    let p = dir.path().join("outputs/output_211.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let mut code = String::from("```python\n# merge\n");
    let mut i = 0;
    while code.len() < 5 * 1024 * 1024 {
        code.push_str(&format!(
            "def merge_{i}(a_x, a_y):\n    return sorted(a_x + a_y)\n"
        ));
        i += 1;
    }
    code.push_str("def bad(x):\n    return x\n```");
    v["sessions"][0]["session_model_output"][0] = Value::from(code);
    std::fs::write(&p, v.to_string()).unwrap();
    let report = score_scratch(dir.path());
    assert!(report.skipped.is_empty());
    // Comment present (1), and one function's first argument is `x` (0): 0.5.
    assert_eq!(report.dialogues[&211].session[0], 0.5);
}

#[test]
fn invalid_regex_in_a_dialogue_is_a_clear_error() {
    let dir = scratch();
    let p = dir.path().join("dataset/dialogue_2.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["sessions"][0]["session_regex"][1][1] = Value::from("^v_(");
    std::fs::write(&p, v.to_string()).unwrap();
    let (id, reason) = only_skip(&score_scratch(dir.path()));
    assert_eq!(id, 2);
    assert!(
        reason.contains("dialogue_2.json")
            && reason.contains("sessions[0].session_regex[1]")
            && reason.contains("invalid regular expression"),
        "{reason}"
    );
}

#[test]
fn cli_reports_skips_on_stderr_with_exit_code_1() {
    let dir = scratch();
    std::fs::write(dir.path().join("outputs/output_1.json"), "{not json").unwrap();
    let out = Command::new(EXE)
        .args(["score", "memorycode", "--dataset"])
        .arg(dir.path().join("dataset"))
        .arg("--outputs")
        .arg(dir.path().join("outputs"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("skipped dialogue 1") && err.contains("output_1.json"),
        "{err}"
    );
    let missing = Command::new(EXE)
        .args([
            "score",
            "memorycode",
            "--dataset",
            "/nonexistent/x",
            "--outputs",
            "/tmp",
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/x"));
}

// ---------------------------------------------------------------- syntax verdicts vs CPython

/// Every snippet of fixtures/python/syntax_cases.py gets the same verdict from us as from
/// the real CPython's `ast.parse` (run here, not copied), on the same line; our message is
/// CPython's, unless it is the generic "invalid syntax" (where tree-sitter cannot tell).
#[test]
fn syntax_verdicts_agree_with_cpython_on_edge_cases() {
    let src = std::fs::read_to_string(repo().join("fixtures/python/syntax_cases.py")).unwrap();
    let cases: Vec<(String, String)> = src
        .split("\n### ")
        .skip(1)
        .map(|chunk| {
            let (title, code) = chunk.split_once('\n').unwrap_or((chunk, ""));
            // Files end with a newline; the separator took the snippet's own.
            let code = format!("{code}\n");
            let code = if title.contains("CRLF") {
                code.replace('\n', "\r\n")
            } else {
                code
            };
            (title.to_string(), code)
        })
        .collect();
    assert!(cases.len() > 60);
    let script = "import ast, json, sys\nout = []\nfor c in json.load(sys.stdin):\n    try:\n        ast.parse(c); out.append(None)\n    except SyntaxError as e:\n        out.append([e.lineno, e.msg])\nprint(json.dumps(out))";
    let child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        pivot_test_support::test_skip::skip(
            "python3 not found; cannot compare syntax verdicts with CPython",
        );
        return;
    };
    let codes: Vec<&String> = cases.iter().map(|c| &c.1).collect();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        serde_json::to_string(&codes).unwrap().as_bytes(),
    )
    .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let cpython: Vec<Option<(u32, String)>> = serde_json::from_slice(&out.stdout).unwrap();
    let (mut wrong, mut errors, mut same_message) = (Vec::new(), 0, 0);
    for ((title, code), want) in cases.iter().zip(cpython) {
        let ours = pivot_python::python::Module::parse(code).syntax_error;
        match (&want, &ours) {
            (None, None) => {}
            (Some((line, message)), Some(e)) => {
                errors += 1;
                if e.span.start.line + 1 != *line {
                    wrong.push(format!(
                        "{title}: CPython line {line} ({message}), ours {e}"
                    ));
                } else if e.message == *message {
                    same_message += 1;
                } else if e.message != "invalid syntax" {
                    wrong.push(format!("{title}: CPython says {message:?}, ours {e}"));
                }
            }
            _ => wrong.push(format!("{title}: CPython {want:?}, ours {ours:?}")),
        }
    }
    assert!(wrong.is_empty(), "disagreements:\n{}", wrong.join("\n"));
    assert!(errors > 30, "only {errors} cases are errors");
    println!(
        "{} cases: {errors} errors, all on CPython's line, {same_message} with CPython's message",
        cases.len()
    );
}

// ---------------------------------------------------------------- the ledger on real dialogues

/// The pivots the ledger says are active at the last session are exactly the pairs the
/// dataset scores history against (`history_regex`), for all 360 dialogues.
#[test]
fn ledger_active_pivots_at_the_end_equal_history_regex() {
    use pivot_bench::memorycode::data::{dialogue_files, Topics};
    use pivot_bench::memorycode::Dialogue;
    use pivot_python::pivots::Ledger;
    let Some(root) = shared("memorycode", "the ledger not checked on the real dialogues") else {
        return;
    };
    let topics = Topics::load(&root.join("topics.json")).unwrap();
    let mut checked = 0;
    for (_, path) in dialogue_files(&root.join("dataset")).unwrap() {
        let d = Dialogue::load(&path).unwrap();
        let ledger: Ledger = d.ledger(Some(&topics)).unwrap();
        let last = d.sessions.len() - 1;
        let key = |k: pivot_python::python::ObjectKind, r: &pivot_python::pivots::Rule| {
            format!("{k}|{}", r.to_json())
        };
        let mut active: Vec<String> = ledger
            .active_at(last)
            .iter()
            .map(|a| key(a.version.kind, &a.version.rule))
            .collect();
        let mut history: Vec<String> = d.sessions[last]
            .history_regex
            .iter()
            .map(|p| key(p.kind, &p.rule))
            .collect();
        active.sort();
        history.sort();
        assert_eq!(active, history, "dialogue {}", d.id);
        // Every version's text is the catalogue's text of that version.
        for p in &ledger.pivots {
            for v in &p.versions {
                assert_eq!(
                    p.catalogue.get(v.version),
                    Some(&v.text),
                    "dialogue {} pivot {}",
                    d.id,
                    p.id
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 360);
}

// ---------------------------------------------------------------- numpy's summation order

/// Our sums and means are numpy's own doubles: arrays of every length up to past two
/// halvings, with NaNs, values spread over many magnitudes (so that order shows in the last
/// bits), checked against numpy run here. Doubles cross as their bit patterns.
#[test]
fn means_are_numpy_s_to_the_bit() {
    use pivot_bench::numpy;
    let script = r#"
import json, sys
import numpy as np
arrays, rows = json.load(sys.stdin)
f = lambda bits: np.array(bits, dtype=np.uint64).view(np.float64)
b = lambda x: int(np.float64(x).view(np.uint64))
out = {
    "sum": [b(np.sum(f(a))) for a in arrays],
    "nanmean": [b(np.nanmean(f(a))) if len(a) else None for a in arrays],
    "axis0": [b(x) for x in np.nanmean(np.stack([f(r) for r in rows]), axis=0)],
}
print(json.dumps(out))
"#;
    // A small deterministic generator: the arrays need no randomness, only variety.
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut value = |nan_share: u64| -> f64 {
        let r = next();
        if r % 100 < nan_share {
            return f64::NAN;
        }
        let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
        let scale = [1.0, 1e-3, 1e8, 1.0 / 3.0][(r % 4) as usize];
        unit * scale
    };
    let mut lengths: Vec<usize> = (1..=140).collect();
    lengths.extend([255, 256, 257, 300, 361, 1000, 1031, 4097]);
    let arrays: Vec<Vec<f64>> = lengths
        .iter()
        .map(|&n| (0..n).map(|_| value(10)).collect())
        .collect();
    let rows: Vec<Vec<f64>> = (0..360)
        .map(|_| (0..100).map(|_| value(40)).collect())
        .collect();
    let bits = |a: &Vec<f64>| a.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let input = serde_json::json!([
        arrays.iter().map(bits).collect::<Vec<_>>(),
        rows.iter().map(bits).collect::<Vec<_>>()
    ]);
    let child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        pivot_test_support::test_skip::skip("python3 not found; cannot compare sums with numpy");
        return;
    };
    // An interpreter that fails at `import numpy` closes its input early: its own error,
    // read below, says why, not the broken pipe.
    let _ = std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.to_string().as_bytes());
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'numpy'") {
            pivot_test_support::test_skip::skip(
                "numpy is not installed for python3 (scripts/test installs it)",
            );
            return;
        }
        panic!("python3 failed: {err}");
    }
    let want: Value = serde_json::from_slice(&out.stdout).unwrap();
    let from_bits = |v: &Value| v.as_u64().map(f64::from_bits);
    let (mut checked, mut left_to_right_differs) = (0, 0);
    for (i, a) in arrays.iter().enumerate() {
        let zeroed: Vec<f64> = a
            .iter()
            .map(|&x| if x.is_nan() { 0.0 } else { x })
            .collect();
        let sum = numpy::pairwise_sum(&zeroed);
        let naive = zeroed.iter().fold(0.0, |s, x| s + x);
        left_to_right_differs += (naive != sum) as usize;
        // np.sum of an array with NaNs is NaN; compare on the zeroed array's sum instead.
        let np_sum = from_bits(&want["sum"][i]).unwrap();
        if a.iter().any(|x| x.is_nan()) {
            assert!(np_sum.is_nan());
        } else {
            assert_eq!(sum.to_bits(), np_sum.to_bits(), "sum, length {}", a.len());
        }
        let mean = numpy::nanmean(a);
        let np_mean = from_bits(&want["nanmean"][i]).unwrap();
        assert_eq!(
            mean.to_bits(),
            np_mean.to_bits(),
            "nanmean, length {}: {mean} vs {np_mean}",
            a.len()
        );
        checked += 2;
    }
    let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
    let ours = numpy::nanmean_axis0(&refs, 100);
    for (j, (o, w)) in ours
        .iter()
        .zip(want["axis0"].as_array().unwrap())
        .enumerate()
    {
        let w = from_bits(w).unwrap();
        assert!(o.to_bits() == w.to_bits(), "axis 0, column {j}: {o} vs {w}");
        checked += 1;
    }
    // The test means something only if the order shows in the last bits.
    assert!(
        left_to_right_differs > 20,
        "only {left_to_right_differs} sums differ from a left-to-right sum"
    );
    println!("{checked} sums and means equal numpy's");
}

/// The score tables `score memorycode` prints for the bundled demo, as snapshots
/// (`server/tests/fast/snapshots/`): the table, markdown and per-session forms, whose layout
/// and numbers a change must not move unseen.
#[test]
fn score_tables_match_their_snapshots() {
    let dataset = repo().join("fixtures/memorycode/dataset");
    let outputs = repo().join("fixtures/memorycode/outputs/demo-model");
    for (name, extra) in [
        ("score_table", vec![]),
        ("score_markdown", vec!["--format", "markdown"]),
        ("score_per_session", vec!["--per-session"]),
    ] {
        let o = Command::new(EXE)
            .args(["score", "memorycode", "--dataset"])
            .arg(&dataset)
            .arg("--outputs")
            .arg(&outputs)
            .args(&extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        insta::assert_snapshot!(name, String::from_utf8_lossy(&o.stdout));
    }
}

/// `score memorycode --format json` of an outputs folder against the bundled dataset.
pub(crate) fn score_json(outputs: &Path) -> Value {
    let out = Command::new(EXE)
        .args(["score", "memorycode", "--format", "json", "--dataset"])
        .arg(fixtures().join("dataset"))
        .arg("--outputs")
        .arg(outputs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The instructions-chain and RAG outputs are scored by the History scorer: each mode's
/// scores equal the History scores of a copy of the outputs whose `history_model_output`
/// holds that mode's answers (and History itself is unchanged by the extra keys).
#[test]
fn instructions_chain_and_rag_are_scored_as_history_is() {
    let modes = fixtures().join("modes/model-a");
    let with = score_json(&modes);
    let plain = score_json(&fixtures().join("outputs/demo-model"));
    assert!(plain.get("modes").is_none(), "no modes without their keys");
    assert_eq!(with["macro"], plain["macro"], "History etc. unchanged");
    assert_eq!(with["per_session"], plain["per_session"]);
    for (name, key, row) in [
        (
            "instructions chain",
            "instructions_only_model_output",
            "instructions_chain",
        ),
        ("rag", "rag_model_output", "rag"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(&modes).unwrap() {
            let p = e.unwrap().path();
            let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            for s in v["sessions"].as_array_mut().unwrap() {
                let s = s.as_object_mut().unwrap();
                let answers = s.remove(key).unwrap_or(Value::Array(vec![]));
                s.insert("history_model_output".into(), answers);
                s.remove("instructions_only_model_output");
                s.remove("rag_model_output");
            }
            std::fs::write(dir.path().join(p.file_name().unwrap()), v.to_string()).unwrap();
        }
        let as_history = score_json(dir.path());
        let m = &with["modes"][name];
        assert_eq!(m["output_key"], key);
        assert_eq!(m["scored_as"], "history");
        assert_eq!(m["dialogues"], 3);
        for h in ["short history", "long history"] {
            assert_eq!(m["macro"][h], as_history["macro"][h], "{name}: {h}");
            assert_eq!(m["per_session"][h], as_history["per_session"][h], "{name}");
        }
        for (id, d) in as_history["dialogues"].as_object().unwrap() {
            assert_eq!(with["dialogues"][id][row], d["history"], "{name}: {id}");
        }
        // The mode's answers differ from History's somewhere, so the check can fail.
        assert_ne!(
            m["macro"],
            json!({"short history": with["macro"]["short history"], "long history": with["macro"]["long history"]}),
            "{name}: the fixture's answers must differ from History's"
        );
    }
    // Through the language server (answers sent as an editor sends them, the chain's and
    // RAG's as history answers): the same scores.
    let out = Command::new(EXE)
        .args([
            "score",
            "memorycode",
            "--via-lsp",
            "--format",
            "json",
            "--dataset",
        ])
        .arg(fixtures().join("dataset"))
        .arg("--outputs")
        .arg(&modes)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let via: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(via["modes"], with["modes"]);
    assert_eq!(via["dialogues"], with["dialogues"]);

    // The text table names the scorer.
    let out = Command::new(EXE)
        .args(["score", "memorycode", "--dataset"])
        .arg(fixtures().join("dataset"))
        .arg("--outputs")
        .arg(&modes)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("instructions chain (history scorer): short history"),
        "{text}"
    );
    assert!(
        text.contains("rag (history scorer): long history"),
        "{text}"
    );
}
