//! The documentation as a reader meets it: the README (at most 250 lines, its quick start in
//! the first 80), CONTRIBUTING.md and the book in `docs/` (every chapter listed in
//! `docs/SUMMARY.md`, every relative link resolving to a file, every `#anchor` to a heading
//! of its file, as GitHub and mdBook make them).

use crate::support::cli::repo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The anchors GitHub and mdBook make of a file's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let a: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.insert(a);
    }
    out
}

/// Every `[label](target)` of `text` outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let span = regex::Regex::new(r"`[^`]*`").unwrap();
    let mut out = Vec::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let line = span.replace_all(line, "");
        out.extend(re.captures_iter(&line).map(|c| c[1].to_string()));
    }
    out
}

fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut broken = Vec::new();
    for l in links(&text) {
        if l.starts_with("http://") || l.starts_with("https://") || l.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match l.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (l.as_str(), None),
        };
        let target: PathBuf = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        if !target.exists() {
            broken.push(format!("{}: {l}: no such file", file.display()));
            continue;
        }
        if let Some(a) = anchor {
            if target.extension().is_some_and(|e| e == "md") {
                let t = std::fs::read_to_string(&target).unwrap();
                if !anchors(&t).contains(a) {
                    broken.push(format!("{}: {l}: no heading makes #{a}", file.display()));
                }
            }
        }
    }
    broken
}

#[test]
fn every_link_of_the_readme_contributing_and_the_book_resolves() {
    let root = repo();
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters.iter().cloned());
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // Every chapter is in the book's table of contents.
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    for c in &chapters {
        let name = c.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name == "SUMMARY.md" || listed.contains(&name),
            "docs/{name} is not in docs/SUMMARY.md"
        );
    }
}

#[test]
fn the_readme_is_short_with_the_quick_start_first() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    // As a reader sees it: the snippet marks (snippets.rs) are HTML comments, not shown.
    let lines: Vec<&str> = (readme.lines())
        .filter(|l| !l.starts_with("<!-- snippet:"))
        .collect();
    assert!(lines.len() <= 250, "README.md has {} lines", lines.len());
    let quick = lines
        .iter()
        .position(|l| *l == "## Quick start")
        .expect("a Quick start section");
    let next = lines[quick + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map(|i| quick + 1 + i)
        .unwrap_or(lines.len());
    assert!(next <= 80, "the quick start ends at line {next}");
    // The README's two set-up commands (the main job, every test) are in it.
    assert!(readme.contains("cargo run --release -p pivot-lsp -- score memorycode"));
    assert!(readme.contains("scripts/test"));
}

/// Paths of other repositories the docs cite in this tree's shape, and whose they are.
const ELSEWHERE: [(&str, &str); 3] = [
    (
        "scripts/generate_model_output.sh",
        "MemoryCode's repository",
    ),
    ("scripts/generate_dataset.sh", "MemoryCode's repository"),
    ("server/pivot-lsp", "inside the platform .vsix"),
];

/// Every path of this tree that the README, ARCHITECTURE.md, CONTRIBUTING.md, the book and
/// the editors' READMEs cite in a code span (`crates/...`, `server/tests/fast/check.rs`,
/// `fixtures/...`, with an optional `:LINE`), exists; one cited with a test or module name
/// (`server/tests/fast/check.rs::name`) has that `fn` or `mod`. Spans with a placeholder
/// (`*`, `<model>`, `{..}`, `NAME`) are patterns, not paths.
#[test]
fn every_path_the_docs_cite_exists() {
    let root = repo();
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for dir in [
        "docs",
        "editors/vscode",
        "editors/nvim",
        "fixtures/snippets",
    ] {
        let mut md: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        md.sort();
        files.extend(md);
    }
    let span = regex::Regex::new(r"`([^`\s]+)`").unwrap();
    let placeholder = regex::Regex::new(r"[*<>{}$]|(?:^|/)[A-Z]{3,}(?:_|/|$|\.)").unwrap();
    let line_suffix = regex::Regex::new(r":\d+(?:-\d+)?$").unwrap();
    const TREE: [&str; 9] = [
        "crates/",
        "server/",
        "fixtures/",
        "docs/",
        "editors/",
        "scripts/",
        "tests/",
        ".ci/",
        ".github/",
    ];
    let (mut cited, mut missing) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let shown = f.strip_prefix(&root).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            for c in span.captures_iter(line) {
                let token = c[1].trim_end_matches(['.', ',', ';', ':', ')']);
                if !TREE.iter().any(|t| token.starts_with(t)) || placeholder.is_match(token) {
                    continue;
                }
                let (path, name) = match token.split_once("::") {
                    Some((p, n)) => (p, Some(n)),
                    None => (token, None),
                };
                let path = line_suffix.replace(path, "");
                if ELSEWHERE.iter().any(|(p, _)| *p == path) {
                    continue;
                }
                cited += 1;
                let at = format!("{shown}:{}: `{token}`", i + 1);
                let target = root.join(path.as_ref());
                if !target.exists() {
                    missing.push(format!("{at}: no such path"));
                    continue;
                }
                let Some(name) = name.and_then(|n| n.split("::").next()) else {
                    continue;
                };
                let name = name.trim_end_matches("()");
                if name.is_empty() || !target.is_file() {
                    continue;
                }
                let src = std::fs::read_to_string(&target).unwrap_or_default();
                let def =
                    regex::Regex::new(&format!(r"\b(?:fn|mod) {}\b", regex::escape(name))).unwrap();
                if !def.is_match(&src) {
                    missing.push(format!("{at}: no fn or mod `{name}` in {path}"));
                }
            }
        }
    }
    assert!(
        cited > 100,
        "only {cited} paths cited: is the pattern still right?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
