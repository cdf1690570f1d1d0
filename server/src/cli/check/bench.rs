//! `pivot-lsp bench check`: `pivot-lsp check` over a Python tree (default: this machine's
//! python3 standard library; site-packages is skipped by both tools) with a ten-pivot
//! pivots.toml, side by side with `ruff check --select N` (pep8-naming, the closest existing
//! naming checker) on the same files, in three modes, each tool in the same mode:
//!
//! - cold: no cache (`check --no-cache`, `ruff --no-cache`), and the floor: tree-sitter's
//!   parse alone of the same files with as many threads as `check` has servers, in this
//!   process (no server, no protocol, no walk, no pivots);
//! - warm: nothing changed since the tool's last run (each with its cache);
//! - one file changed since the tool's last run (each with its cache).
//!
//! Both run in a copy of the tree's Python files (the changed-file runs edit one; both
//! caches are written there), in alternating runs, with the peak memory of each run.

use crate::cli::shared::measure::{mb, run_child};
use anyhow::{bail, Context, Result};
use pivot_workspace::walk::{read_source, walk};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchCheckArgs {
    /// The tree to check [default: python3's standard library]
    #[arg(long)]
    pub tree: Option<PathBuf>,
    /// Timed runs of each tool after one warm-up run each.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Passed to `check --jobs` [default: check's own default]
    #[arg(long)]
    pub jobs: Option<usize>,
    /// The ruff command [default: `ruff` on PATH, else `python3 -m ruff`]
    #[arg(long)]
    pub ruff: Option<String>,
}

/// Ten pivots over the object kinds a team would name: names, docstrings, decorators,
/// imports.
const PIVOTS: &str = r#"
[[pivot]]
id = "fn-names"
[[pivot.version]]
text = "use snake_case for function names"
kind = "function"
rule = "^[a-z_][a-z0-9_]*$"

[[pivot]]
id = "method-names"
[[pivot.version]]
text = "use snake_case for method names"
kind = "method"
rule = "^[a-z_][a-z0-9_]*$"

[[pivot]]
id = "class-names"
[[pivot.version]]
text = "use CamelCase for class names"
kind = "class"
rule = "^_?[A-Z][a-zA-Z0-9]*$"

[[pivot]]
id = "var-names"
[[pivot.version]]
text = "use snake_case or UPPER_CASE for variables"
kind = "variable"
rule = "^(_?[a-z][a-z0-9_]*|[A-Z][A-Z0-9_]*)$"

[[pivot]]
id = "arg-names"
[[pivot.version]]
text = "use snake_case for function arguments"
kind = "function argument"
rule = "^[a-z_][a-z0-9_]*$"

[[pivot]]
id = "attr-names"
[[pivot.version]]
text = "use snake_case for attributes"
kind = "attribute"
rule = "^[a-z_][a-z0-9_]*$"

[[pivot]]
id = "fn-docstrings"
[[pivot.version]]
text = "give every function a docstring"
kind = "function docstring"
rule = true

[[pivot]]
id = "method-docstrings"
[[pivot.version]]
text = "give every method a docstring"
kind = "method docstring"
rule = true

[[pivot]]
id = "no-pickle"
[[pivot.version]]
text = "never import pickle"
kind = "import"
rule = ["pickle", false]

[[pivot]]
id = "timer"
[[pivot.version]]
text = "add the @timer decorator to methods"
kind = "method decorator"
rule = ["timer", true]
"#;

fn stdlib() -> Result<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .context("cannot run python3 to find its standard library")?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || p.is_empty() {
        bail!("python3 did not tell where its standard library is");
    }
    Ok(PathBuf::from(p))
}

fn ruff_command(given: Option<&str>) -> Result<Vec<String>> {
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    if let Some(g) = given {
        return Ok(words(g));
    }
    for cand in ["ruff", "python3 -m ruff"] {
        let w = words(cand);
        let ok = Command::new(&w[0])
            .args(&w[1..])
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(w);
        }
    }
    bail!("ruff is not installed (pip install ruff), or pass --ruff COMMAND")
}

/// The floor's wall time: each file read (as `check` reads it) and parsed by tree-sitter,
/// nothing else, `jobs` threads taking the files round-robin as `check`'s servers do.
fn parse_only(files: &[PathBuf], jobs: usize) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for j in 0..jobs {
            s.spawn(move || {
                for f in files.iter().skip(j).step_by(jobs) {
                    if let Ok(text) = read_source(f, 10_000_000) {
                        let text = pivot_python::python::module::lone_cr_as_lf(&text);
                        std::hint::black_box(pivot_python::python::module::parse_tree(&text, None));
                    }
                }
            });
        }
    });
    t.elapsed().as_secs_f64()
}

/// Wall times and peak memory of one tool in one mode.
#[derive(Default)]
struct Runs {
    secs: Vec<f64>,
    peak_kib: u64,
}

impl Runs {
    fn add(&mut self, (secs, kib): (f64, u64)) {
        self.secs.push(secs);
        self.peak_kib = self.peak_kib.max(kib);
    }
    /// (median, min, max)
    fn spread(&self) -> (f64, f64, f64) {
        let mut v = self.secs.clone();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    }
    fn line(&self) -> String {
        let (m, lo, hi) = self.spread();
        format!(
            "median {m:.3} s (min {lo:.3}, max {hi:.3}), peak RSS {}",
            mb(Some(self.peak_kib))
        )
    }
    fn median(&self) -> f64 {
        self.spread().0
    }
}

/// The files `check` walks in `tree`, copied to `dest` at the same relative paths; returns
/// the copies, largest first.
fn copy_tree(tree: &Path, dest: &Path) -> Result<Vec<(PathBuf, u64)>> {
    let walked = walk(tree, &[PathBuf::from(".")], None)?;
    let mut out = Vec::with_capacity(walked.files.len());
    for f in &walked.files {
        let to = dest.join(&f.rel);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let n = std::fs::copy(&f.abs, &to)
            .with_context(|| format!("cannot copy {} to {}", f.abs.display(), to.display()))?;
        out.push((to, n));
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.1));
    Ok(out)
}

pub fn bench_check(a: BenchCheckArgs) -> Result<i32> {
    let tree = match a.tree {
        Some(t) => t,
        None => stdlib()?,
    };
    let tree = tree
        .canonicalize()
        .with_context(|| format!("{}: no such folder", tree.display()))?;
    let tmp = tempfile::tempdir()?;
    let toml = tmp.path().join("pivots.toml");
    pivot_base::durable::write_scratch(&toml, PIVOTS)?;
    let ruff = ruff_command(a.ruff.as_deref())?;
    let copy = tmp.path().join("tree");
    let copied = copy_tree(&tree, &copy)?;
    if copied.is_empty() {
        bail!("{}: no Python file to check", tree.display());
    }
    let paths: Vec<PathBuf> = copied.iter().map(|(p, _)| p.clone()).collect();
    // The file the changed-file runs edit: the median by size, a typical file.
    let edited = copied[copied.len() / 2].0.clone();
    let original = pivot_base::bounded_read::read(&edited)
        .with_context(|| format!("cannot read {}", edited.display()))?;
    let jobs = a.jobs.unwrap_or_else(super::default_jobs).max(1);
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|f| read_source(f, 10_000_000).ok())
        .collect();
    let (files, bytes) = (texts.len(), texts.iter().map(String::len).sum::<usize>());
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    drop(texts);

    let exe = std::env::current_exe()?;
    let check = |cache: bool| {
        let mut c = Command::new(&exe);
        c.current_dir(&copy)
            .env_remove("PIVOT_CACHE_DIR")
            .args(["check", "--exit-zero", "--format", "text", "--pivots"])
            .arg(&toml);
        if !cache {
            c.arg("--no-cache");
        }
        if let Some(j) = a.jobs {
            c.args(["--jobs", &j.to_string()]);
        }
        c
    };
    let ruff_cmd = |cache: bool| {
        let mut c = Command::new(&ruff[0]);
        c.current_dir(&copy)
            .env_remove("RUFF_CACHE_DIR")
            .args(&ruff[1..])
            .args(["check", "--select", "N", "--exit-zero", "--quiet"]);
        if !cache {
            c.arg("--no-cache");
        }
        c.arg(".");
        c
    };
    let mut edits = 0usize;
    let mut edit = || -> Result<()> {
        edits += 1;
        let mut text = original.clone();
        text.extend_from_slice(format!("\n# bench edit {edits}\n").as_bytes());
        // In place, as the benchmark's copy is edited between runs.
        pivot_base::durable::write_scratch(&edited, text)
    };
    let rounds = a.runs.max(1);
    let progress = crate::cli::shared::progress::Progress::new(
        rounds as u64 + 1,
        "rounds of cold, warm and changed-file runs",
    );
    let (mut cold, mut cold_ruff, mut floor) = (Runs::default(), Runs::default(), Vec::new());
    let (mut warm, mut warm_ruff) = (Runs::default(), Runs::default());
    let (mut changed, mut changed_ruff) = (Runs::default(), Runs::default());
    // Round 0 warms the file cache and makes sure both tools work; it is not counted.
    // Each round: both tools cold; then both brought up to date untimed (each cache holds
    // the tree as it is); then both warm (nothing changed since their last run); then one
    // edit of one file, and both again (one file changed since their last run).
    for round in 0..=rounds {
        let counted = round > 0;
        let c = run_child(&mut check(false), "pivot-lsp check --no-cache")?;
        let r = run_child(&mut ruff_cmd(false), "ruff --no-cache")?;
        let f = parse_only(&paths, jobs);
        if counted {
            cold.add(c);
            cold_ruff.add(r);
            floor.push(f);
        }
        run_child(&mut check(true), "pivot-lsp check")?;
        run_child(&mut ruff_cmd(true), "ruff")?;
        let c = run_child(&mut check(true), "pivot-lsp check")?;
        let r = run_child(&mut ruff_cmd(true), "ruff")?;
        if counted {
            warm.add(c);
            warm_ruff.add(r);
        }
        edit()?;
        let c = run_child(&mut check(true), "pivot-lsp check")?;
        let r = run_child(&mut ruff_cmd(true), "ruff")?;
        if counted {
            changed.add(c);
            changed_ruff.add(r);
        }
        progress.inc(1);
    }
    progress.finish();
    floor.sort_by(f64::total_cmp);
    let mf = floor[floor.len() / 2];
    println!("tree: {} ({files} Python files, {lines} lines, {:.1} MB; site-packages, venv, build... skipped), checked in a copy", tree.display(), bytes as f64 / 1e6);
    println!("pivots: 10 (function, method, class, variable, argument, attribute names; function and method docstrings; an import; a method decorator)");
    println!("peer: ruff check --select N ({rounds} alternating rounds after one warm-up; wall time, and the peak RSS of the largest process of each tool)");
    println!(
        "cold, no cache:   pivot-lsp check --jobs {jobs} --no-cache {}; ruff --no-cache {}; ratio {:.2}x ruff",
        cold.line(),
        cold_ruff.line(),
        cold.median() / cold_ruff.median()
    );
    println!(
        "                  floor, tree-sitter parse only ({jobs} threads): median {mf:.3} s; pivot-lsp is {:.2}x its floor",
        cold.median() / mf
    );
    println!(
        "warm, unchanged:  pivot-lsp check {}; ruff {}; ratio {:.2}x ruff",
        warm.line(),
        warm_ruff.line(),
        warm.median() / warm_ruff.median()
    );
    println!(
        "one file changed: pivot-lsp check {}; ruff {}; ratio {:.2}x ruff (the file: {})",
        changed.line(),
        changed_ruff.line(),
        changed.median() / changed_ruff.median(),
        edited.strip_prefix(&copy).unwrap_or(&edited).display()
    );
    Ok(0)
}
