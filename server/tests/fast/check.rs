//! `pivot-lsp check` and `score memorycode --via-lsp` against the real binary. The check
//! workspace is `fixtures/check/workspace` copied to a temporary folder, plus what git
//! cannot carry reliably (a git-ignored folder, a virtualenv, CRLF line endings). Every
//! format's findings are compared with what the server publishes to a plain LSP client.

use crate::support;

use pivot_test_support::host::shared;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{check, repo, stderr, stdout, EXE};
use support::files::{copy_tree, write};
use support::lsp::{file_uri, Client};

/// The check workspace in a fresh temporary folder (canonical path).
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    copy_tree(&repo().join("fixtures/check/workspace"), &root);
    write(&root.join(".gitignore"), "generated/\n");
    // Violations that must not be reported: git-ignored and virtualenv folders.
    write(
        &root.join("generated/out.py"),
        "def bad_name():\n    pass\n",
    );
    write(
        &root.join(".venv/lib/site.py"),
        "def bad_name():\n    pass\n",
    );
    write(
        &root.join("app/venv_like/venv/x.py"),
        "class bad_class:\n    pass\n",
    );
    write(
        &root.join("app/crlf.py"),
        "import logging\r\n\r\n\r\nclass lower_case:\r\n    \"\"\"Cé.\"\"\"\r\n\r\n\r\ndef f_ok():\r\n    \"\"\"Ok.\"\"\"\r\n    Bad_Var = 1\r\n    return Bad_Var\r\n",
    );
    let root = root.canonicalize().unwrap();
    (dir, root)
}

/// The Python files `check` must open in the workspace (relative, sorted).
const EXPECTED_FILES: &[&str] = &[
    "app/__init__.py",
    "app/broken.py",
    "app/crlf.py",
    "app/models/inventory.py",
    "app/models/unicode_names.py",
    "scripts/clean.py",
    "scripts/tool.py",
];

/// How many files a run took from the cache, from its summary line.
fn from_cache(o: &Output) -> usize {
    let e = stderr(o);
    e.split(" unchanged, from the cache")
        .next()
        .filter(|_| e.contains(" unchanged, from the cache"))
        .and_then(|head| head.rsplit('(').next())
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// What the server publishes to a plain client for each file: path -> diagnostics.
fn plain_client(
    root: &Path,
    files: &[&str],
    setup: Option<(&Path, usize)>,
) -> BTreeMap<String, Vec<Value>> {
    let mut c = Client::start(root);
    c.session_changed();
    if let Some((conv, session)) = setup {
        c.command("pivot.conversation.open", json!({"path": conv}))
            .unwrap();
        c.session_changed();
        c.command("pivot.session.goto", json!({"index": session}))
            .unwrap();
        if session != 0 {
            c.session_changed();
        }
    }
    let mut out = BTreeMap::new();
    for f in files {
        let p = root.join(f);
        let uri = file_uri(&p);
        c.open(&uri, &std::fs::read_to_string(&p).unwrap());
        out.insert(f.to_string(), c.diagnostics(&uri));
    }
    c.drain();
    out
}

/// (path, range, severity, source, code, message) of each diagnostic, sorted as check sorts;
/// `code` as check's JSON gives it: the rule id that text and SARIF show (a syntax error,
/// published without a code, is `syntax-error`).
fn flatten(per_file: &BTreeMap<String, Vec<Value>>) -> Vec<Value> {
    let mut all: Vec<Value> = per_file
        .iter()
        .flat_map(|(p, ds)| {
            ds.iter().map(move |d| {
                json!({"path": p, "range": d["range"], "severity": d["severity"],
                       "source": d["source"], "code": rule_of(d), "message": d["message"]})
            })
        })
        .collect();
    let key = |v: &Value| {
        let s = &v["range"]["start"];
        let e = &v["range"]["end"];
        (
            v["path"].as_str().unwrap().to_string(),
            s["line"].as_u64().unwrap(),
            s["character"].as_u64().unwrap(),
            (
                e["line"].as_u64().unwrap(),
                e["character"].as_u64().unwrap(),
            ),
            // check sorts by the published code, which a syntax error lacks.
            match v["source"].as_str() {
                Some("python") => String::new(),
                _ => v["code"].as_str().unwrap_or("").to_string(),
            },
            v["message"].as_str().unwrap().to_string(),
        )
    };
    all.sort_by_key(key);
    all
}

fn rule_of(v: &Value) -> String {
    match v["code"].as_str() {
        Some(c) => c.to_string(),
        None => "syntax-error".into(),
    }
}

#[test]
fn every_format_equals_what_the_server_publishes() {
    let (_d, root) = workspace();
    let expected = flatten(&plain_client(&root, EXPECTED_FILES, None));
    // The workspace has something of each: pivot kinds, a syntax error, CRLF, non-ASCII.
    let codes: std::collections::BTreeSet<String> = expected.iter().map(rule_of).collect();
    for c in [
        "classes",
        "fn-prefix",
        "imports",
        "timer",
        "docstrings",
        "variables",
        "syntax-error",
    ] {
        assert!(
            codes.contains(c),
            "the workspace has no {c} finding: {codes:?}"
        );
    }
    assert!(expected.iter().any(|f| f["path"] == "app/crlf.py"));

    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Each finding is the published diagnostic, with `code` the rule id text and SARIF
    // show: a syntax error (published without a code) is `syntax-error` in every format.
    assert_eq!(report["findings"], json!(expected));
    let syntax = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "python")
        .expect("a syntax error among the findings");
    assert_eq!(syntax["code"], "syntax-error");
    assert_eq!(report["root"], json!(root.display().to_string()));
    assert_eq!(report["session"], json!(1));
    let ids: Vec<&str> = report["pivots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 6, "{ids:?}");
    let checked = stderr(&o);
    assert!(
        checked.contains(&format!("{} files checked", EXPECTED_FILES.len())),
        "{checked}"
    );

    // UTF-16 columns: `Total` sits after "🙂" (two UTF-16 units) on its line.
    let total = expected
        .iter()
        .find(|f| f["message"].as_str().unwrap().contains("`Total`"))
        .unwrap();
    let line = std::fs::read_to_string(root.join("app/models/unicode_names.py")).unwrap();
    let line = line.lines().find(|l| l.contains("Total")).unwrap();
    let col16 = line[..line.find("Total").unwrap()].encode_utf16().count();
    assert_eq!(total["range"]["start"]["character"], json!(col16));

    // text: path:line:col: [code] message, 1-based.
    let text = text_lines(&expected);
    let o = check(&root, &[]);
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), text);

    // github: one workflow command per finding, ::error for syntax errors.
    let o = check(&root, &["--format", "github"]);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), expected.len());
    for (l, f) in lines.iter().zip(&expected) {
        let level = if f["source"] == "python" {
            "error"
        } else {
            "warning"
        };
        let head = format!(
            "::{level} file={},line={},col={},",
            f["path"].as_str().unwrap(),
            f["range"]["start"]["line"].as_u64().unwrap() + 1,
            f["range"]["start"]["character"].as_u64().unwrap() + 1
        );
        assert!(l.starts_with(&head), "{l} vs {head}");
        assert!(
            l.ends_with(&format!("::{}", f["message"].as_str().unwrap())),
            "{l}"
        );
    }

    // sarif: results in the same order, 1-based regions, relative URIs, fingerprints.
    let out = root.join("..").join("out.sarif");
    let o = check(
        &root,
        &["--format", "sarif", "--output", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(run["columnKind"], "utf16CodeUnits");
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        json!(format!("{}/", file_uri(&root)))
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), expected.len());
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for (r, f) in results.iter().zip(&expected) {
        assert_eq!(r["ruleId"], json!(rule_of(f)));
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
            r["ruleId"]
        );
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], f["path"]);
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(
            loc["region"]["startLine"],
            json!(f["range"]["start"]["line"].as_u64().unwrap() + 1)
        );
        assert_eq!(
            loc["region"]["startColumn"],
            json!(f["range"]["start"]["character"].as_u64().unwrap() + 1)
        );
        assert!(r["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with(f["message"].as_str().unwrap()));
        assert_eq!(
            r["partialFingerprints"]["pivotFindingHash/v1"]
                .as_str()
                .unwrap()
                .len(),
            64
        );
    }
    // One rule per active pivot, with its instruction.
    let timer = rules.iter().find(|r| r["id"] == "timer").unwrap();
    assert_eq!(
        timer["properties"]["instruction"],
        "always add the '@timer' decorator to methods"
    );
    assert_eq!(timer["properties"]["kind"], "method decorator");
}

/// Microsoft's SARIF Multitool, installed by scripts/test (or SARIF_MULTITOOL).
fn multitool() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SARIF_MULTITOOL") {
        return Some(PathBuf::from(p));
    }
    let p = repo()
        .join("target/tools/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    p.exists().then_some(p)
}

#[test]
fn sarif_passes_the_multitool_with_no_error_and_no_warning() {
    let Some(tool) = multitool() else {
        pivot_test_support::test_skip::skip("the SARIF Multitool is not installed (scripts/test installs it with npm into target/tools/sarif)");
        return;
    };
    let (_d, root) = workspace();
    // A file that cannot be checked too: it becomes a tool execution notification.
    std::fs::write(root.join("scripts/blob.py"), b"\x00\x01binary").unwrap();
    let out = root.join("..").join("out.sarif");
    let o = check(&root, &["--format", "sarif", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = Command::new(&tool)
        .arg("validate")
        .arg(&out)
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .expect("run Sarif.Multitool");
    let log = format!("{}{}", stdout(&v), stderr(&v));
    assert!(v.status.success(), "Sarif.Multitool failed: {log}");
    for bad in [": error ", ": warning ", ": note "] {
        assert!(
            !log.contains(bad),
            "Sarif.Multitool reported{bad}in:\n{log}"
        );
    }
    assert!(
        log.contains("1 files scanned") || log.contains("Analysis completed"),
        "{log}"
    );
}

#[test]
fn exit_codes() {
    let (_d, root) = workspace();
    let o = check(&root, &["scripts/clean.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert_eq!(check(&root, &["app"]).status.code(), Some(1));
    assert_eq!(check(&root, &["app", "--exit-zero"]).status.code(), Some(0));

    let o = check(&root, &["no/such/dir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no/such/dir: no such file or folder"),
        "{}",
        stderr(&o)
    );

    let o = check(&root, &["--pivots", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.toml"), "{}", stderr(&o));

    let o = check(&root, &["--conversation", "nope/dialogue_1.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nope/dialogue_1.json: cannot read"),
        "{}",
        stderr(&o)
    );

    write(&root.join("bad_dialogue.json"), "{\"sessions\": [");
    let o = check(&root, &["--conversation", "bad_dialogue.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad_dialogue.json"), "{}", stderr(&o));

    let o = check(&root, &["--session", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("session index 9 is out of range"),
        "{}",
        stderr(&o)
    );

    // A folder given as --pivots is said to be one, not "no such file".
    std::fs::create_dir_all(root.join("pivots_dir")).unwrap();
    let o = check(&root, &["--pivots", "pivots_dir"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("pivots_dir: a directory, not a pivots file"),
        "{err}"
    );
    assert!(!err.contains("no such"), "{err}");

    // A session out of the conversation's range: its count, the conversation, and none
    // of the internal request's name or usage.
    let conv = repo().join("fixtures/memorycode/dataset/dialogue_1.json");
    let o = check(
        &root,
        &["--conversation", conv.to_str().unwrap(), "--session", "50"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("session index 50 is out of range"), "{err}");
    assert!(err.contains("dialogue_1.json"), "{err}");
    for internal in ["pivot/headless", "(arguments:", "headless"] {
        assert!(!err.contains(internal), "{internal:?} shown: {err}");
    }
}

#[test]
fn an_invalid_regex_in_pivots_toml_is_named_and_syntax_is_still_checked() {
    let (_d, root) = workspace();
    let toml = std::fs::read_to_string(root.join("pivots.toml")).unwrap();
    write(
        &root.join("pivots.toml"),
        &toml.replace("rule = \"^f_\"", "rule = \"^(f_\""),
    );
    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("pivots.toml") && err.contains("fn-prefix"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    assert!(
        f.iter()
            .any(|f| f["path"] == "app/broken.py" && f["source"] == "python"),
        "{v}"
    );
    assert!(f.iter().all(|f| f["source"] == "python"));
}

#[test]
fn bad_files_are_reported_and_the_rest_is_checked() {
    let (_d, root) = workspace();
    std::fs::write(root.join("app/blob.py"), b"\x7fELF\x00\x00binary").unwrap();
    std::fs::write(root.join("app/latin1.py"), b"x = '\xe9'\n").unwrap();
    let big = "x = 1\n".repeat(20 * 1024 * 1024 / 6 + 1);
    write(&root.join("app/huge.py"), &big);
    std::os::unix::fs::symlink("gone.py", root.join("app/dangling.py")).unwrap();
    std::os::unix::fs::symlink("self.py", root.join("app/self.py")).unwrap();
    std::os::unix::fs::symlink(".", root.join("app/loop")).unwrap();
    write(&root.join("app/locked.py"), "def locked():\n    pass\n");
    let locked = root.join("app/locked.py");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let as_root = std::fs::read(&locked).is_ok();

    let o = check(&root, &["--format", "json"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for (path, problem) in [
        ("app/blob.py", "binary file"),
        ("app/latin1.py", "not UTF-8 text"),
        ("app/huge.py", "larger than the 4.2 MB limit"),
        ("app/dangling.py", "cannot read: no such file"),
        ("app/self.py", "symlink loop"),
        ("app/loop", "symlink loop"),
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("warning: {path}: ")) && l.contains(problem)),
            "no `{problem}` for {path} in:\n{err}"
        );
    }
    if as_root {
        println!("note: running as root, so a mode-000 file is still readable (not asserted)");
    } else {
        assert!(
            err.contains("app/locked.py: cannot read: permission denied"),
            "{err}"
        );
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let paths: std::collections::BTreeSet<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    for p in [
        "app/broken.py",
        "app/models/inventory.py",
        "scripts/tool.py",
    ] {
        assert!(paths.contains(p), "{p} not checked: {paths:?}");
    }
    let o = check(&root, &["app", "--max-file-size", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--max-file-size must be"),
        "{}",
        stderr(&o)
    );
}

fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

#[test]
fn bundles_are_byte_identical_across_runs_and_paths() {
    let (_d1, a) = workspace();
    let (_d2, b) = workspace();
    assert_ne!(a, b);
    let bundle = |root: &Path, name: &str| -> Vec<u8> {
        let out = root.join("..").join(name);
        let o = check(root, &["--bundle", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    let first = bundle(&a, "b1.json");
    assert_eq!(first, bundle(&a, "b2.json"), "two runs differ");
    assert_eq!(first, bundle(&b, "b3.json"), "two paths differ");

    let v: Value = serde_json::from_slice(&first).unwrap();
    // Inputs: every file with its SHA-256, the pivot source, the session.
    let files = v["inputs"]["files"].as_array().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, EXPECTED_FILES);
    for f in files {
        let bytes = std::fs::read(a.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["sha256"], json!(sha256_hex(&bytes)));
    }
    assert_eq!(v["inputs"]["pivots"]["path"], "pivots.toml");
    assert_eq!(
        v["inputs"]["pivots"]["sha256"],
        json!(sha256_hex(&std::fs::read(a.join("pivots.toml")).unwrap()))
    );
    assert_eq!(v["inputs"]["session"], json!(1));
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["fingerprint"].is_string()));
    assert!(!String::from_utf8_lossy(&first).contains(a.to_str().unwrap()));
    // The hash is over the canonical content without it.
    let mut content = v.clone();
    let hash = content.as_object_mut().unwrap().remove("hash").unwrap();
    assert_eq!(
        hash,
        json!(sha256_hex(&serde_json::to_vec(&content).unwrap()))
    );
    // A changed file changes the bundle.
    std::fs::write(b.join("scripts/tool.py"), "def helper():\n    return 2\n").unwrap();
    assert_ne!(first, bundle(&b, "b4.json"));
}

#[test]
fn baseline_reports_only_new_findings_and_survives_line_shifts() {
    let (_d, root) = workspace();
    let base = root.join("..").join("base.json");
    let o = check(&root, &["--bundle", base.to_str().unwrap()]);
    let before = stdout(&o).lines().count();
    assert!(before > 5);

    // Blank lines above old violations (and CRLF ones) do not make them new.
    for f in ["app/models/inventory.py", "app/crlf.py", "scripts/tool.py"] {
        let p = root.join(f);
        let text = std::fs::read_to_string(&p).unwrap();
        let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
        std::fs::write(&p, format!("{nl}{nl}{nl}{text}")).unwrap();
    }
    let o = check(&root, &["--baseline", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(&format!(
            "0 new findings, 0 of the baseline's {before} fixed"
        )),
        "{}",
        stderr(&o)
    );

    // One new violation, one fixed (the docstring added).
    let p = root.join("scripts/tool.py");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(
        &p,
        text.replace("def helper():\n", "def helper():\n    \"\"\"Help.\"\"\"\n")
            + "\n\nclass new_bad:\n    pass\n",
    )
    .unwrap();
    let o = check(&root, &["--baseline", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("scripts/tool.py:") && out.contains("[classes] `new_bad`"),
        "{out}"
    );
    assert!(
        stderr(&o).contains(&format!(
            "1 new finding, 1 of the baseline's {before} fixed"
        )),
        "{}",
        stderr(&o)
    );

    let o = check(&root, &["--baseline", "pivots.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("pivots.toml: not JSON"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn conversation_and_session_equal_the_editor() {
    let (_d, root) = workspace();
    let conv = repo()
        .join("fixtures/memorycode/dataset/dialogue_1.json")
        .canonicalize()
        .unwrap();
    let conv_s = conv.to_str().unwrap();
    for session in [0usize, 1] {
        let o = check(
            &root,
            &[
                "--conversation",
                conv_s,
                "--session",
                &session.to_string(),
                "--format",
                "json",
            ],
        );
        assert!(o.status.code() == Some(1), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["session"], json!(session));
        let expected = flatten(&plain_client(&root, EXPECTED_FILES, Some((&conv, session))));
        assert_eq!(v["findings"], json!(expected), "session {session}");
        assert!(v["pivots"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["origin"] == "memorycode"));
    }
}

fn score_json(args: &[&str]) -> Value {
    let o = Command::new(EXE)
        .args(["score", "memorycode", "--format", "json"])
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn via_lsp_equals_the_scorer_on_the_fixtures() {
    let direct = score_json(&[]);
    assert!(direct["dialogues"]
        .as_object()
        .is_some_and(|d| !d.is_empty()));
    assert_eq!(score_json(&["--via-lsp"]), direct);
}

#[test]
fn via_lsp_equals_the_scorer_on_shared_data() {
    let Some(outputs) = shared(
        "memorycode/outputs",
        "--via-lsp not compared with the scorer on the real data",
    ) else {
        return;
    };
    let dataset = outputs.parent().unwrap().join("dataset");
    let mut models: Vec<PathBuf> = std::fs::read_dir(&outputs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    models.sort();
    for m in models {
        let args = [
            "--dataset",
            dataset.to_str().unwrap(),
            "--outputs",
            m.to_str().unwrap(),
        ];
        let direct = score_json(&args);
        let mut via_args = args.to_vec();
        via_args.push("--via-lsp");
        assert_eq!(score_json(&via_args), direct, "{}", m.display());
        println!("{}: --via-lsp equals the scorer", m.display());
    }
}

/// The table files of the check cache in `root`.
fn tables(root: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(root.join(".pivot-cache/check")) {
        Ok(d) => d
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn the_cache_gives_the_same_bytes_and_invalidates_exactly_what_changed() {
    let (_d, root) = workspace();
    let n = EXPECTED_FILES.len();
    // What a run without the cache writes, per format: the reference for every cached run.
    let fresh = |root: &Path| -> Vec<(Vec<u8>, Vec<u8>)> {
        ["json", "sarif", "text", "github"]
            .iter()
            .map(|f| {
                let o = check(root, &["--no-cache", "--format", f]);
                assert_eq!(from_cache(&o), 0);
                let bundle = root.join("../fresh-bundle.json");
                let b = check(
                    root,
                    &[
                        "--no-cache",
                        "--format",
                        f,
                        "--bundle",
                        bundle.to_str().unwrap(),
                    ],
                );
                assert_eq!(b.stdout, o.stdout);
                (o.stdout, std::fs::read(&bundle).unwrap())
            })
            .collect()
    };
    let cached = |root: &Path, hits: usize| -> Vec<(Vec<u8>, Vec<u8>)> {
        ["json", "sarif", "text", "github"]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let bundle = root.join("../cached-bundle.json");
                let o = check(root, &["--format", f, "--bundle", bundle.to_str().unwrap()]);
                // The first format's run meets the change; the others find it cached.
                let want = if i == 0 { hits } else { n };
                assert_eq!(from_cache(&o), want, "{f}: {}", stderr(&o));
                (o.stdout, std::fs::read(&bundle).unwrap())
            })
            .collect()
    };
    let reference = fresh(&root);
    assert!(tables(&root).is_empty(), "--no-cache wrote a cache");
    assert_eq!(cached(&root, 0), reference, "first cached run");
    assert_eq!(tables(&root).len(), 1);
    assert_eq!(cached(&root, n), reference, "warm run");
    // Git ignores the folder by its own .gitignore; backup tools by its tag.
    let ignore = std::fs::read_to_string(root.join(".pivot-cache/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
    assert!(root.join(".pivot-cache/CACHEDIR.TAG").is_file());

    // One file edited: that file alone is checked again.
    std::fs::write(
        root.join("scripts/tool.py"),
        "def helper():\n    return 2\n\n\nclass lower:\n    pass\n",
    )
    .unwrap();
    let reference = fresh(&root);
    assert_eq!(cached(&root, n - 1), reference, "one file changed");

    // The pivots changed: every file again, in a table of its own.
    let toml = root.join("pivots.toml");
    let before = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, before.replace("f_", "g_")).unwrap();
    let reference = fresh(&root);
    assert_eq!(cached(&root, 0), reference, "pivots changed");
    assert_eq!(tables(&root).len(), 2);
    // Back to the first pivots: their table is still there.
    std::fs::write(&toml, &before).unwrap();
    let reference = fresh(&root);
    assert_eq!(cached(&root, n), reference, "pivots changed back");

    // Another session of the same pivots is another context.
    let o = check(&root, &["--format", "json", "--session", "0"]);
    assert_eq!(from_cache(&o), 0, "{}", stderr(&o));

    // A table written by another version of pivot-lsp, or cut short, is not used, and is
    // rewritten.
    for t in tables(&root) {
        let text = std::fs::read_to_string(&t).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let changed = text.replacen(
            &format!("\"version\":{}", v["version"]),
            "\"version\":\"0.0.0-older\"",
            1,
        );
        assert_ne!(changed, text);
        std::fs::write(&t, changed).unwrap();
    }
    assert_eq!(cached(&root, 0), reference, "another version's table");
    for t in tables(&root) {
        let b = std::fs::read(&t).unwrap();
        std::fs::write(&t, &b[..b.len() / 2]).unwrap();
    }
    assert_eq!(cached(&root, 0), reference, "a torn table");
    assert_eq!(cached(&root, n), reference, "rewritten after the torn one");

    // Runs at once: each output is right, and the table they leave is whole.
    std::fs::write(
        root.join("scripts/tool.py"),
        "def helper():\n    return 3\n",
    )
    .unwrap();
    let reference = fresh(&root);
    let outs: Vec<Output> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| check(&root, &["--format", "json"])))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for o in outs {
        assert_eq!(o.stdout, reference[0].0, "{}", stderr(&o));
    }
    assert_eq!(cached(&root, n), reference, "after concurrent runs");

    // A temporary file of a killed run is swept; nothing else is left beside the tables.
    let dead = root.join(".pivot-cache/check/.tmp-pivot.999999999.0.somehost");
    std::fs::write(&dead, "{").unwrap();
    // Two hours old: no write of a live run takes that long.
    std::fs::File::options()
        .write(true)
        .open(&dead)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(7200))
        .unwrap();
    std::fs::write(
        root.join("scripts/tool.py"),
        "def helper():\n    return 4\n",
    )
    .unwrap();
    check(&root, &["--format", "json"]);
    let left: Vec<String> = std::fs::read_dir(root.join(".pivot-cache/check"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".json"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // `pivot-lsp clean` removes the folder; a folder that is not a cache is refused.
    let clean = |args: &[&str]| {
        Command::new(EXE)
            .arg("clean")
            .args(args)
            .current_dir(&root)
            .env_remove("PIVOT_CACHE_DIR")
            .output()
            .unwrap()
    };
    let o = clean(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!root.join(".pivot-cache").exists());
    let o = clean(&["--cache-dir", "app"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not removed"), "{}", stderr(&o));
    assert!(root.join("app/__init__.py").exists());
}

#[test]
fn a_cache_shipped_in_the_tree_is_never_read_or_written_through() {
    let (_d, root) = workspace();
    let reference = check(&root, &["--no-cache", "--format", "json"]).stdout;
    check(&root, &["--format", "json"]);
    let found = tables(&root);
    let [table] = &found[..] else {
        panic!("one table expected: {found:?}")
    };
    // A table that claims every file is clean, under the name this user's run reads: as
    // another user (another secret) would have written it, or a repository shipped it.
    let mut v: Value = serde_json::from_slice(&std::fs::read(table).unwrap()).unwrap();
    for (_, e) in v["files"].as_object_mut().unwrap() {
        e["diagnostics"] = json!([]);
    }
    std::fs::write(table, serde_json::to_vec(&v).unwrap()).unwrap();
    // Under the name this user's runs compute, it would be believed: the name is the guard.
    let believed = check(&root, &["--format", "json"]);
    assert_eq!(from_cache(&believed), EXPECTED_FILES.len());
    assert_ne!(believed.stdout, reference);
    // Another user's secret: another name; the shipped table is not the one read.
    let other = Command::new(EXE)
        .args(["check", "--format", "json"])
        .current_dir(&root)
        .env("XDG_CACHE_HOME", root.join("../xdg-other"))
        .output()
        .unwrap();
    assert_eq!(
        other.stdout, reference,
        "a table of another secret was read"
    );
    assert_eq!(from_cache(&other), 0);

    // A cache folder that is a link out of the tree is not written through.
    let (_d2, root2) = workspace();
    let outside = root2.join("../outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root2.join(".pivot-cache")).unwrap();
    let o = check(&root2, &["--format", "json"]);
    assert_eq!(
        o.stdout,
        check(&root2, &["--no-cache", "--format", "json"]).stdout
    );
    assert!(stderr(&o).contains("the cache in"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// `text` with the machine's paths and the version replaced by placeholders.
fn normalized(text: &str, root: &Path) -> String {
    let uri_root = pivot_base::percent::encode_path(&root.display().to_string());
    text.replace(&format!("file://{uri_root}"), "file://<ROOT>")
        .replace(&root.display().to_string(), "<ROOT>")
        .replace(env!("CARGO_PKG_VERSION"), "<VERSION>")
}

/// `check`'s JSON and SARIF on the fixture workspace, as snapshots (`server/tests/fast/snapshots/`):
/// a change in any field shows as a diff to review (`INSTA_UPDATE=always` rewrites them
/// after a deliberate change; CI never does).
#[test]
fn json_and_sarif_match_their_snapshots() {
    let (_dir, root) = workspace();
    for (format, name) in [("json", "check_json"), ("sarif", "check_sarif")] {
        let o = check(&root, &["--format", format, "--no-cache"]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = normalized(&String::from_utf8_lossy(&o.stdout), &root);
        insta::assert_snapshot!(name, text);
    }
}

/// One file breaking every team kind (docs/pivots-toml.md), and a pivot of each kind.
const TEAM_PIVOTS: &[(&str, &str, &str)] = &[
    ("no-bare-except", "bare except", "false"),
    ("no-broad-except", "except", "[\"Exception\", false]"),
    ("no-wildcard", "wildcard import", "false"),
    ("no-relative", "relative import", "false"),
    ("imports-at-top", "import not at top", "false"),
    (
        "future-annotations",
        "from import",
        "[\"__future__.annotations\", true]",
    ),
    ("no-print", "call", "[\"print\", false]"),
    ("no-optional", "typing name", "[\"Optional\", false]"),
    (
        "no-type-ignore",
        "comment text",
        "[\"type: ignore\", false]",
    ),
    ("public-docstrings", "public function docstring", "true"),
    ("public-method-hints", "public method annotation", "true"),
];

const TEAM_CODE: &str = "from typing import Optional\nfrom .models import *\n\n\ndef load(path: str):\n    import json  # type: ignore\n    try:\n        return json.loads(path)\n    except Exception:\n        print(\n            path,\n        )\n    except:\n        pass\n\n\ndef _private(x):\n    return x\n\n\nclass Store:\n    def get(self, key):\n        \"\"\"Doc.\"\"\"\n        return key\n\n    def _raw(self):\n        pass\n";

/// `check` (JSON, text, SARIF) and an editor's diagnostics give the same findings for the
/// team kinds, each at the offending construct.
#[test]
fn team_kinds_give_the_same_findings_in_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let mut toml = String::new();
    for (id, kind, rule) in TEAM_PIVOTS {
        toml.push_str(&format!(
            "[[pivot]]\nid = \"{id}\"\n[[pivot.version]]\nkind = \"{kind}\"\nrule = {rule}\n\n"
        ));
    }
    write(&root.join("pivots.toml"), &toml);
    write(&root.join("app/store.py"), TEAM_CODE);
    let root = root.canonicalize().unwrap();
    let expected = flatten(&plain_client(&root, &["app/store.py"], None));
    // Each pivot's findings, as (code, 1-based line, the range's text).
    let lines: Vec<&str> = TEAM_CODE.lines().collect();
    let got: Vec<(String, u64, String)> = expected
        .iter()
        .map(|f| {
            let (s, e) = (&f["range"]["start"], &f["range"]["end"]);
            let (sl, el) = (s["line"].as_u64().unwrap(), e["line"].as_u64().unwrap());
            let (sc, ec) = (
                s["character"].as_u64().unwrap() as usize,
                e["character"].as_u64().unwrap() as usize,
            );
            let text = if sl == el {
                lines[sl as usize][sc..ec].to_string()
            } else {
                format!("{}...", &lines[sl as usize][sc..])
            };
            (rule_of(f), sl + 1, text)
        })
        .collect();
    let want = [
        ("future-annotations", 1, "from typing import Optional"),
        ("no-optional", 1, "Optional"),
        ("no-relative", 2, "from .models import *"),
        ("no-wildcard", 2, "from .models import *"),
        ("public-docstrings", 5, "load"),
        ("imports-at-top", 6, "import json"),
        ("no-type-ignore", 6, "# type: ignore"),
        ("no-broad-except", 9, "Exception"),
        ("no-print", 10, "print(..."),
        ("no-bare-except", 13, "except"),
        ("public-method-hints", 22, "get"),
    ];
    let want: Vec<(String, u64, String)> = want
        .iter()
        .map(|(c, l, t)| (c.to_string(), *l, t.to_string()))
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(sorted, want_sorted, "{expected:#?}");
    assert!(expected.iter().all(|f| f["source"] == "pivot"));

    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["findings"], json!(expected));

    let text = text_lines(&expected);
    let o = check(&root, &[]);
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), text);

    let out = root.join("..").join("team.sarif");
    let o = check(
        &root,
        &["--format", "sarif", "--output", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1));
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let placed: Vec<(String, u64, u64)> = results
        .iter()
        .map(|r| {
            let region = &r["locations"][0]["physicalLocation"]["region"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                region["startLine"].as_u64().unwrap(),
                region["startColumn"].as_u64().unwrap(),
            )
        })
        .collect();
    let from_lsp: Vec<(String, u64, u64)> = expected
        .iter()
        .map(|f| {
            (
                rule_of(f),
                f["range"]["start"]["line"].as_u64().unwrap() + 1,
                f["range"]["start"]["character"].as_u64().unwrap() + 1,
            )
        })
        .collect();
    assert_eq!(placed, from_lsp);

    // The editor's quick fixes on them: a suppression for a construct, a docstring for a
    // public def.
    let mut c = Client::start(&root);
    c.session_changed();
    let uri = file_uri(&root.join("app/store.py"));
    c.open(&uri, TEAM_CODE);
    let diagnostics = c.diagnostics(&uri);
    let titles = |c: &mut Client, code: &str| -> Vec<String> {
        let d = diagnostics.iter().find(|d| d["code"] == code).unwrap();
        let actions = c
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
            )
            .unwrap();
        actions
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["title"].as_str().unwrap().to_string())
            .collect()
    };
    let print = titles(&mut c, "no-print");
    assert!(print.iter().any(|t| t.contains("`no-print`")), "{print:?}");
    let doc = titles(&mut c, "public-docstrings");
    assert!(
        doc.iter().any(|t| t == "Add a docstring to `load`"),
        "{doc:?}"
    );
    c.drain();
}

/// The text report `check` prints for these findings: `path:line:col: [code] message`, 1-based.
fn text_lines(expected: &[Value]) -> Vec<String> {
    expected
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}: [{}] {}",
                f["path"].as_str().unwrap(),
                f["range"]["start"]["line"].as_u64().unwrap() + 1,
                f["range"]["start"]["character"].as_u64().unwrap() + 1,
                rule_of(f),
                f["message"].as_str().unwrap()
            )
        })
        .collect()
}
