//! `pivot-lsp bench lsp`: server-side latency of a one-character edit, measured in-process
//! on the server's own path, without the JSON encoding and pipe: the request path
//! (`didChange` applies the change to the rope, the string and the pending tree, and
//! returns) and from the edit to the new diagnostics (re-parse, extract objects, check the
//! active pivots, build the LSP diagnostics: the background publish). The server's path
//! (an edit inside one top-level statement of an error-free file analysed from a parse of
//! that statement, the whole tree re-parsed only when something asks for it; otherwise
//! tree-sitter's incremental re-parse; the analysis and findings recomputed only for the
//! top-level statements that changed), the same path with the whole tree re-parsed after
//! every edit as well (what a request needing the tree after each edit would cost), and
//! everything from scratch for the same edits (a full parse, the whole walk, every pivot
//! checked on the whole module; no cache).

use super::publish;
use anyhow::Result;
use pivot_python::pivots::Rule;
use pivot_python::python::ObjectKind;
use pivot_workspace::document::{Change, Document, Reparse, Utf16Pos};
use pivot_workspace::sample::{sample_module, PIVOTS};
use pivot_workspace::Workspace;
use std::time::Instant;

/// What to time.
#[derive(Debug, Clone)]
pub struct BenchLspOptions {
    /// Lines of the generated Python file.
    pub lines: usize,
    /// Edits timed per mode (one character each, inserted then deleted in turn).
    pub edits: usize,
    /// Time only this mode (e.g. to count instructions of one under callgrind).
    pub only: Option<Only>,
    /// A pause before each edit (not timed), as between keystrokes; None: back to back.
    pub pace: Option<std::time::Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    Incremental,
    Tree,
    Full,
    Broken,
}

impl Only {
    /// The modes' names (as `bench lsp --only` takes them) and what each times.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("incremental", "the server's path"),
        (
            "tree",
            "the server's path with the whole tree re-parsed after every edit",
        ),
        ("full", "everything from scratch for each edit"),
        (
            "broken",
            "the server's path on the file with a syntax error in one function",
        ),
    ];
}

impl std::str::FromStr for Only {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "incremental" => Ok(Only::Incremental),
            "tree" => Ok(Only::Tree),
            "full" => Ok(Only::Full),
            "broken" => Ok(Only::Broken),
            _ => Err(format!(
                "unknown mode {s:?}; one of incremental, tree, full, broken"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Timing {
    pub mode: &'static str,
    /// From the edit to its diagnostics (edit, analysis, findings, LSP diagnostics).
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    pub max_us: f64,
    /// The request path alone: what `didChange` does before it returns (the edit applied
    /// to the text, the rope and the pending tree; the analysis follows in the background).
    pub request_p50_us: f64,
    pub request_p99_us: f64,
    pub request_max_us: f64,
}

#[derive(Clone, Debug)]
pub struct BenchReport {
    pub lines: usize,
    pub pivots: usize,
    pub diagnostics: usize,
    /// Of the server path's edits, how many were analysed without the whole tree.
    pub fast_edits: usize,
    pub timings: Vec<Timing>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Time `edits` one-character edits in each mode.
pub fn run(a: &BenchLspOptions) -> Result<BenchReport> {
    let text = sample_module(a.lines);
    let mut ws = Workspace::default();
    for (id, kind, rule) in PIVOTS {
        let kind = ObjectKind::from_name(kind).expect("a known kind");
        let rule = Rule::from_json(&serde_json::from_str(rule)?)?;
        ws.replay
            .add_user(id, 0, format!("benchmark pivot {id}"), kind, rule)
            .map_err(anyhow::Error::msg)?;
    }
    let key = "file:///bench/sample.py".to_string();
    // Lines holding `    value = x * 2`: the edits go at the start of `value`.
    let targets: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("    value = "))
        .map(|(i, _)| i as u32)
        .collect();
    anyhow::ensure!(!targets.is_empty(), "the sample has no edit target");
    let mut diagnostics = 0;
    let mut fast_edits = 0;
    let mut timings = Vec::new();
    // The same file with one function left mid-typing (`    value = x *`): CPython reports
    // it, so the document's only diagnostic is that syntax error, and every edit elsewhere
    // must keep finding it.
    let broken_line = targets[targets.len() / 2] as usize;
    let broken: String = text
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            if i == broken_line {
                "    value = x *\n"
            } else {
                l
            }
        })
        .collect();
    let targets_ok: Vec<u32> = targets
        .iter()
        .copied()
        .filter(|&l| l as usize != broken_line)
        .collect();
    for (mode, how, which) in [
        ("incremental", Reparse::Incremental, Only::Incremental),
        ("incremental + tree", Reparse::Incremental, Only::Tree),
        ("from scratch", Reparse::Full, Only::Full),
        (
            "incremental, syntax error",
            Reparse::Incremental,
            Only::Broken,
        ),
    ] {
        if a.only.is_some_and(|o| o != which) {
            continue;
        }
        let (text, targets) = if which == Only::Broken {
            (&broken, &targets_ok)
        } else {
            (&text, &targets)
        };
        ws.docs.insert(key.clone(), Document::new(text.clone(), 0));
        // Opened and analysed, as the server's background publish leaves it.
        ws.docs[&key].module();
        let mut samples = Vec::with_capacity(a.edits);
        let mut requests = Vec::with_capacity(a.edits);
        for k in 0..a.edits {
            let line = targets[(k / 2 * 7919) % targets.len()];
            let at = Utf16Pos { line, col: 4 };
            // Even edits type an `x`, odd ones delete it again.
            let change = if k % 2 == 0 {
                Change {
                    range: Some((at, at)),
                    text: "x".into(),
                }
            } else {
                Change {
                    range: Some((at, Utf16Pos { line, col: 5 })),
                    text: String::new(),
                }
            };
            if let Some(p) = a.pace {
                std::thread::sleep(p);
            }
            let t = Instant::now();
            let doc = ws.docs.get_mut(&key).expect("the document is open");
            doc.edit(std::slice::from_ref(&change), k as i32 + 1, how);
            let edited = t.elapsed();
            let d = publish::for_doc(&ws, &key).expect("diagnostics");
            if which == Only::Tree {
                std::hint::black_box(ws.docs[&key].tree().root_node().end_byte());
            }
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            requests.push(edited.as_secs_f64() * 1e6);
            if which == Only::Broken {
                anyhow::ensure!(
                    d.diagnostics.len() == 1
                        && d.diagnostics[0].source.as_deref() == Some("python"),
                    "the file with a syntax error has {} diagnostics, not its syntax error alone",
                    d.diagnostics.len()
                );
            } else {
                diagnostics = d.diagnostics.len();
            }
        }
        if which == Only::Incremental {
            fast_edits = ws.docs[&key].fast_edits();
        }
        anyhow::ensure!(
            ws.docs[&key].text() == *text,
            "the edits did not cancel out"
        );
        samples.sort_by(f64::total_cmp);
        requests.sort_by(f64::total_cmp);
        timings.push(Timing {
            mode,
            p50_us: percentile(&samples, 0.50),
            p99_us: percentile(&samples, 0.99),
            mean_us: samples.iter().sum::<f64>() / samples.len() as f64,
            max_us: samples.last().copied().unwrap_or(0.0),
            request_p50_us: percentile(&requests, 0.50),
            request_p99_us: percentile(&requests, 0.99),
            request_max_us: requests.last().copied().unwrap_or(0.0),
        });
    }
    Ok(BenchReport {
        lines: text.lines().count(),
        pivots: ws.replay.active().len(),
        diagnostics,
        fast_edits,
        timings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_runs_and_finds_diagnostics() {
        let r = run(&BenchLspOptions {
            lines: 200,
            edits: 20,
            only: None,
            pace: None,
        })
        .unwrap();
        assert_eq!(r.pivots, 10);
        assert!(r.lines >= 200);
        assert!(r.diagnostics > 0);
        assert_eq!(r.timings.len(), 4);
        assert!(r.fast_edits > 0);
    }
}

#[cfg(test)]
mod phases {
    use super::*;
    use pivot_python::python::module::parse_tree;
    use pivot_python::python::Module;
    use pivot_workspace::findings::findings;

    /// Where the time goes: `cargo test --release --lib lsp::bench::phases -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn phase_breakdown() {
        let text = sample_module(2000);
        let mut ws = Workspace::default();
        for (id, kind, rule) in PIVOTS {
            let kind = ObjectKind::from_name(kind).unwrap();
            let rule = Rule::from_json(&serde_json::from_str(rule).unwrap()).unwrap();
            ws.replay
                .add_user(id, 0, String::new(), kind, rule)
                .unwrap();
        }
        let t = Instant::now();
        let tree = parse_tree(&text, None);
        let parse = t.elapsed();
        let t = Instant::now();
        for _ in 0..20 {
            let _ = parse_tree(&text, Some(&tree));
        }
        let reparse_noedit = t.elapsed() / 20;
        let t = Instant::now();
        let mut m = Module::from_tree(&text, &tree);
        for _ in 0..19 {
            m = Module::from_tree(&text, &tree);
        }
        let module = t.elapsed() / 20;
        let active = ws.replay.active();
        let t = Instant::now();
        let mut f = findings(&text, &m, &active);
        for _ in 0..19 {
            f = findings(&text, &m, &active);
        }
        let find = t.elapsed() / 20;
        let t = Instant::now();
        for _ in 0..20 {
            let _: Vec<_> = f
                .iter()
                .map(|x| {
                    crate::lsp::convert::diagnostic(
                        &text,
                        x,
                        pivot_workspace::reported::Severity::Warning,
                    )
                })
                .collect();
        }
        let conv = t.elapsed() / 20;
        eprintln!("full parse {parse:?}, reparse (no edit) {reparse_noedit:?}, module {module:?}, findings {find:?} ({} findings), to LSP {conv:?}", f.len());
    }
}
