//! `pivot-lsp bench check`: `pivot-lsp check` over a Python tree (default: this machine's
//! python3 standard library; site-packages is skipped by both tools) with a ten-pivot
//! pivots.toml, side by side with `ruff check --select N --no-cache` (pep8-naming, the
//! closest existing naming checker) on the same tree, in alternating runs, and against the
//! floor: tree-sitter's parse alone of the same files with as many threads as `check` has
//! servers, in this process (no server, no protocol, no walks, no pivots).

use super::check_walk::{read_source, walk};
use anyhow::{bail, Context, Result};
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
                        let text = crate::python::module::lone_cr_as_lf(&text);
                        std::hint::black_box(crate::python::module::parse_tree(&text, None));
                    }
                }
            });
        }
    });
    t.elapsed().as_secs_f64()
}

fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Wall time of one run; the command must exit 0.
fn timed(cmd: &mut Command, what: &str) -> Result<f64> {
    let t = Instant::now();
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    let secs = t.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(secs)
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
    std::fs::write(&toml, PIVOTS)?;
    let ruff = ruff_command(a.ruff.as_deref())?;
    let walked = walk(&tree, &[PathBuf::from(".")], None)?;
    let paths: Vec<PathBuf> = walked.files.iter().map(|f| f.abs.clone()).collect();
    let jobs = a.jobs.unwrap_or_else(super::check_cmd::default_jobs).max(1);
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|f| read_source(f, 10_000_000).ok())
        .collect();
    let (files, bytes) = (texts.len(), texts.iter().map(String::len).sum::<usize>());
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    drop(texts);

    let exe = std::env::current_exe()?;
    let check = |tree: &Path| {
        let mut c = Command::new(&exe);
        c.current_dir(tree)
            .args(["check", "--exit-zero", "--format", "text", "--pivots"])
            .arg(&toml);
        if let Some(j) = a.jobs {
            c.args(["--jobs", &j.to_string()]);
        }
        c
    };
    let ruff_cmd = |tree: &Path| {
        let mut c = Command::new(&ruff[0]);
        c.args(&ruff[1..])
            .args([
                "check",
                "--select",
                "N",
                "--no-cache",
                "--exit-zero",
                "--quiet",
            ])
            .arg(tree);
        c
    };
    // Warm-up: file cache, and both tools must work before anything is timed.
    let progress = super::Progress::new(
        2 * (a.runs.max(1) as u64 + 1),
        "check, ruff and parse-only runs",
    );
    timed(&mut check(&tree), "pivot-lsp check")?;
    progress.inc(1);
    timed(&mut ruff_cmd(&tree), "ruff")?;
    parse_only(&paths, jobs);
    progress.inc(1);
    let (mut ours, mut theirs, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..a.runs.max(1) {
        ours.push(timed(&mut check(&tree), "pivot-lsp check")?);
        progress.inc(1);
        theirs.push(timed(&mut ruff_cmd(&tree), "ruff")?);
        floor.push(parse_only(&paths, jobs));
        progress.inc(1);
    }
    progress.finish();
    let (mo, o_min, o_max) = spread(&mut ours);
    let (mr, r_min, r_max) = spread(&mut theirs);
    let (mf, f_min, f_max) = spread(&mut floor);
    println!("tree: {} ({files} Python files, {lines} lines, {:.1} MB; site-packages, venv, build... skipped)", tree.display(), bytes as f64 / 1e6);
    println!("pivots: 10 (function, method, class, variable, argument, attribute names; function and method docstrings; an import; a method decorator)");
    println!(
        "pivot-lsp check --jobs {jobs}: median {mo:.3} s (min {o_min:.3}, max {o_max:.3}), {:.0} files/s",
        files as f64 / mo
    );
    println!(
        "ruff check --select N --no-cache: median {mr:.3} s (min {r_min:.3}, max {r_max:.3}), {:.0} files/s",
        files as f64 / mr
    );
    println!(
        "floor, tree-sitter parse only ({jobs} threads, files read as check reads them): median {mf:.3} s (min {f_min:.3}, max {f_max:.3})"
    );
    println!(
        "ratio pivot-lsp / ruff: {:.2}x; pivot-lsp / floor: {:.2}x ({} alternating runs each, after one warm-up)",
        mo / mr,
        mo / mf,
        ours.len()
    );
    Ok(0)
}
