//! The syntax verdict and the objects of every `.py` file of the interpreter's standard
//! library (about 1,800 files, constructs the benchmark data never had) against CPython's
//! own parser (`compile(..., ast.PyCF_ONLY_AST)`, what the reference's `ast.parse` does)
//! and MemoryCode's original extractor run on the same text
//! (`fixtures/python/reference_objects.py`). Slow (a minute of Python): ignored by
//! default, run by `scripts/test`.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

use pivot_python::python::{Module, ObjectKind};
use rayon::prelude::*;
use serde_json::Value;
use std::path::Path;

#[test]
#[ignore = "slow (about a minute): scripts/test runs it with --ignored"]
fn standard_library_agrees_with_cpython_and_the_reference_extractor() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = manifest.join("../../fixtures/python/reference_objects.py");
    let extractor = manifest.join("../../../shared/originals/memorycode/code");
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(&script);
    if extractor.join("extract_objects.py").is_file() {
        cmd.arg(&extractor);
    } else {
        pivot_test_support::test_skip::skip(&format!(
            "{} not found; only the syntax verdicts are compared, not the objects",
            extractor.display()
        ));
    }
    // A saved run of the script, to iterate on a fix without waiting for Python.
    let saved = std::env::var_os("PIVOT_STDLIB_REFERENCE");
    let text = match saved {
        Some(file) => std::fs::read_to_string(file).unwrap(),
        None => {
            let Ok(out) = cmd.output() else {
                pivot_test_support::test_skip::skip(
                    "python3 not found; cannot compare with CPython",
                );
                return;
            };
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        }
    };
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results: Vec<(bool, Vec<String>)> = lines
        .par_iter()
        .map(|want| {
            let path = want["path"].as_str().unwrap();
            if want.get("skip").is_some() {
                return (false, Vec::new());
            }
            if let Some((_, why)) = KNOWN.iter().find(|(p, _)| path.ends_with(p)) {
                println!("known difference, left alone: {path}: {why}");
                return (true, Vec::new());
            }
            let text = std::fs::read_to_string(path).unwrap();
            (true, compare(path, &text, want))
        })
        .collect();
    let compared = results.iter().filter(|r| r.0).count();
    let differ: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    println!(
        "{compared} of {} files compared, {} skipped (not UTF-8, or too deep for the reference)",
        lines.len(),
        lines.len() - compared
    );
    assert!(compared > 1000, "only {compared} files compared");
    assert!(
        differ.is_empty(),
        "{} disagreements:\n{}",
        differ.len(),
        differ
            .iter()
            .take(200)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Files known to differ, each with why it is left alone.
const KNOWN: [(&str, &str); 1] = [(
    "test_future_stmt/badsyntax_future8.py",
    "`from __future__ import *`: tree-sitter-python's grammar has no star future import; \
     CPython's parser accepts it and only its compiler rejects it (\"future feature * is \
     not defined\"), so no model answer that runs can contain it",
)];

/// What differs between our module of `text` and the reference's line for it.
fn compare(path: &str, text: &str, want: &Value) -> Vec<String> {
    let m = Module::parse(text);
    let ok = want["ok"].as_bool().unwrap();
    if ok != m.syntax_error.is_none() {
        return vec![format!(
            "{path}: CPython {}, ours {:?}",
            if ok {
                "compiles it".to_string()
            } else {
                format!("line {}: {}", want["line"], want["message"])
            },
            m.syntax_error
        )];
    }
    let Some(objects) = want["objects"].as_object() else {
        return Vec::new();
    };
    let mut differ = Vec::new();
    for kind in ObjectKind::ALL {
        let entries = m.objects.get(kind);
        // Try, assert and annotation entries are syntax nodes in the reference: only how
        // many there are matters to a score (the texts differ by trailing comments).
        let texts = |e: &pivot_python::python::Entry| -> Vec<Value> {
            e.items
                .iter()
                .map(|i| Value::from(i.text.clone()))
                .collect()
        };
        let counted = |v: &Value| -> Value {
            let count = |e: &Value| Value::from(e.as_array().map_or(0, Vec::len));
            v.as_array()
                .map_or(Value::Null, |a| a.iter().map(count).collect())
        };
        let ours: Value = if kind == ObjectKind::Import {
            entries.iter().flat_map(texts).collect()
        } else {
            entries.iter().map(|e| Value::Array(texts(e))).collect()
        };
        let (ours, theirs) = match kind.holds_nodes() {
            true => (counted(&ours), counted(&objects[kind.name()])),
            false => (ours, objects[kind.name()].clone()),
        };
        if ours != theirs {
            differ.push(format!(
                "{path}: {kind}: {}",
                first_difference(&theirs, &ours)
            ));
        }
    }
    differ
}

fn first_difference(want: &Value, got: &Value) -> String {
    let (w, g) = (want.as_array().unwrap(), got.as_array().unwrap());
    for (i, (a, b)) in w.iter().zip(g).enumerate() {
        if a != b {
            return format!("entry {i}: reference {a}, ours {b}");
        }
    }
    format!("{} entries in the reference, {} ours", w.len(), g.len())
}
