//! The layering ARCHITECTURE.md promises, checked on the source: a module may use its own
//! layer and the layers below it, never one above (`python` < `pivots` <
//! `bench` / `exec` / `llm` < `lsp` / `cli`). A `crate::X` path in code (not in comments)
//! is a use of layer X.

use regex::Regex;
use std::path::{Path, PathBuf};

/// Rank of a top-level module; helpers every layer may use rank lowest.
fn rank(module: &str) -> Option<u8> {
    Some(match module {
        "fasthash" | "test_skip" | "durable" => 0,
        "python" => 1,
        "pivots" => 2,
        "bench" | "exec" | "llm" => 3,
        "lsp" | "cli" => 4,
        _ => return None,
    })
}

/// Modules named after `crate::` in code: `crate::a::b` and each item of `crate::{a, b::c}`.
fn used_modules(source: &str) -> Vec<(usize, String)> {
    let path = Regex::new(r"\bcrate::(\{[^}]*\}|[a-z_][a-z0-9_]*)").expect("valid regex");
    let first = Regex::new(r"(?:^|[{,])\s*([a-z_][a-z0-9_]*)").expect("valid regex");
    let mut out = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for m in path.captures_iter(code) {
            let what = &m[1];
            if let Some(inner) = what.strip_prefix('{') {
                for f in first.captures_iter(inner) {
                    out.push((n + 1, f[1].to_string()));
                }
            } else {
                out.push((n + 1, what.to_string()));
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir)
        .expect("source folder readable")
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every use of a higher layer under `src`, as "file:line: layer uses higher".
fn violations(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let layer = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or("")
            .trim_end_matches(".rs");
        let Some(own) = rank(layer) else { continue };
        let text = std::fs::read_to_string(&file).expect("source readable");
        for (line, used) in used_modules(&text) {
            if rank(&used).is_some_and(|r| r > own) {
                found.push(format!("{}:{line}: {layer} uses {used}", rel.display()));
            }
        }
    }
    found
}

#[test]
fn no_layer_imports_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "lower layers use higher ones:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_finds_a_higher_import_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "pivots/ledger.rs",
        "use crate::bench::memorycode::data::Dialogue;\n",
    );
    write(
        "python/a.rs",
        "use crate::{fasthash::X, lsp::Server};\n// crate::cli in a comment\n",
    );
    write(
        "exec/b.rs",
        "fn f() { crate::llm::x(); crate::python::y(); }\n",
    );
    write("cli/c.rs", "use crate::lsp::z;\n");
    let mut bad = violations(dir.path());
    bad.sort();
    assert_eq!(
        bad,
        vec![
            "pivots/ledger.rs:1: pivots uses bench".to_string(),
            "python/a.rs:1: python uses lsp".to_string(),
        ]
    );
}
