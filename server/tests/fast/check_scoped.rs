//! `check`'s configuration found as ruff finds it (from a subfolder, nested, none), pivots
//! scoped to paths, inline suppressions and their unused report, one size limit, and
//! pivots.toml errors placed: against the real binary, on `fixtures/check/scoped` copied to a
//! temporary repository. The editor (a plain LSP client) must publish what `check` reports.

use crate::support;

use serde_json::Value;
use std::path::PathBuf;
use support::cli::{check, repo, stderr, stdout};
use support::files::{copy_tree, write};
use support::lsp::{file_uri, Client};

/// The fixture in a fresh temporary repository (a `.git` folder marks its root).
fn scoped() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_tree(&repo().join("fixtures/check/scoped"), &root);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let root = root.canonicalize().unwrap();
    (dir, root)
}

/// (path, 1-based line, code) of each finding of a JSON report.
fn findings(o: &std::process::Output) -> Vec<(String, u64, String)> {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["range"]["start"]["line"].as_u64().unwrap() + 1,
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn expected() -> Vec<(String, u64, String)> {
    [
        ("app/calc.py", 11, "docstrings"),
        ("app/calc.py", 11, "unused-suppression"),
        ("app/calc.py", 15, "classes"),
        ("sub/mod.py", 2, "variables"),
        ("tests/test_calc.py", 5, "classes"),
    ]
    .iter()
    .map(|(p, l, c)| (p.to_string(), *l, c.to_string()))
    .collect()
}

#[test]
fn scopes_suppressions_and_a_nested_pivots_file() {
    let (_d, root) = scoped();
    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(findings(&o), expected(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let unused = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "unused-suppression")
        .unwrap();
    let m = unused["message"].as_str().unwrap();
    assert!(m.contains("`classes`") && !m.contains("`fn-prefix`"), "{m}");
}

#[test]
fn from_a_subfolder_the_pivots_file_above_applies_and_the_cache_stays_at_its_root() {
    let (_d, root) = scoped();
    let o = check(&root.join("app"), &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let app: Vec<_> = expected()
        .into_iter()
        .filter(|f| f.0.starts_with("app/"))
        .collect();
    assert_eq!(findings(&o), app, "{}", stderr(&o));
    assert!(
        !root.join("app/.pivot-cache").exists(),
        "a cache left in app/"
    );
    assert!(root.join(".pivot-cache").is_dir(), "the cache at the root");
    // A path given from the subfolder is read from there.
    let o = check(&root.join("app"), &["--format", "json", "old.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(findings(&o).is_empty());
}

#[test]
fn with_no_pivots_file_a_warning_says_so_and_require_pivots_fails() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(&root.join("a.py"), "def bad():\n    pass\n");
    // A pivots.toml above the repository's root is not this repository's.
    write(&dir.path().join("pivots.toml"), "this is not read = [\n");
    let o = check(&root, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: no pivots.toml (nor pyproject.toml with [tool.pivot]) in"),
        "{err}"
    );
    assert!(
        err.contains("pivot-lsp pivots import AGENTS.md --write"),
        "{err}"
    );
    let o = check(&root, &["--require-pivots"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: no pivots.toml (nor pyproject.toml with [tool.pivot]) in"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn show_settings_names_the_file_and_why_each_pivot_applies_or_not() {
    let (_d, root) = scoped();
    let o = check(
        &root.join("app"),
        &["--show-settings", "../tests/test_calc.py"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "configuration: {}",
            root.join("pivots.toml").display()
        )),
        "{out}"
    );
    assert!(
        out.contains("path matched by include/exclude: tests/test_calc.py"),
        "{out}"
    );
    let line = |id: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id}: {out}"))
            .to_string()
    };
    assert!(
        line("fn-prefix").contains("not checked: its exclude `tests/` matches"),
        "{out}"
    );
    assert!(
        line("docstrings").contains("not checked: no include pattern matches"),
        "{out}"
    );
    assert!(
        line("classes").contains(": checked: no include; no exclude matches"),
        "{out}"
    );
    let o = check(&root, &["--show-settings", "sub/mod.py"]);
    let out = stdout(&o);
    assert!(
        out.contains(&root.join("sub/pivots.toml").display().to_string()),
        "{out}"
    );
    assert!(
        out.contains("variables") && !out.contains("fn-prefix"),
        "{out}"
    );
}

#[test]
fn the_editor_publishes_what_check_reports() {
    let (_d, root) = scoped();
    let o = check(&root, &["--format", "json"]);
    let from_check = findings(&o);
    let mut c = Client::start(&root);
    c.session_changed();
    let mut from_editor = Vec::new();
    // sub/ has a pivots file of its own: its pivots, not the root's, apply there.
    for f in [
        "app/calc.py",
        "app/old.py",
        "generated/out.py",
        "sub/mod.py",
        "tests/test_calc.py",
    ] {
        let p = root.join(f);
        let uri = file_uri(&p);
        c.open(&uri, &std::fs::read_to_string(&p).unwrap());
        for d in c.diagnostics(&uri) {
            from_editor.push((
                f.to_string(),
                d["range"]["start"]["line"].as_u64().unwrap() + 1,
                d["code"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    c.drain();
    assert_eq!(from_editor, from_check);

    // The hover on sub/'s function names no root pivot (fn-prefix is not in force there);
    // on its variable, the nested file's pivot.
    let sub = root.join("sub/mod.py");
    let sub_uri = file_uri(&sub);
    let hover = |c: &mut Client, line: u32, character: u32| -> String {
        let h = c
            .request(
                "textDocument/hover",
                serde_json::json!({"textDocument": {"uri": sub_uri}, "position": {"line": line, "character": character}}),
            )
            .unwrap();
        h["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let on_fn = hover(&mut c, 0, 5);
    assert!(
        on_fn.contains("No active pivot governs") && !on_fn.contains("fn-prefix"),
        "{on_fn}"
    );
    let on_var = hover(&mut c, 1, 5);
    assert!(
        on_var.contains("**variables**") && on_var.contains("breaks it"),
        "{on_var}"
    );

    // The nested file edited (the editor's file watcher says so): its document follows.
    let nested = root.join("sub/pivots.toml");
    let text = std::fs::read_to_string(&nested).unwrap();
    write(&nested, &text.replace("^[a-z_][a-z0-9_]*$", ".*"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        serde_json::json!({"changes": [{"uri": file_uri(&nested), "type": 2}]}),
    );
    assert_eq!(c.diagnostics(&sub_uri), Vec::<Value>::new());
    // Removed: the root's pivots apply to sub/ again (fn-prefix on `any_name`).
    std::fs::remove_file(&nested).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        serde_json::json!({"changes": [{"uri": file_uri(&nested), "type": 3}]}),
    );
    let codes: Vec<String> = c
        .diagnostics(&sub_uri)
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(codes, ["fn-prefix"]);
    // The other documents were published again too.
    c.drain();
    c.shutdown();
}

#[test]
fn a_file_over_the_one_size_limit_is_a_warning_naming_it_not_a_finding() {
    let (_d, root) = scoped();
    // Over the analysis limit (4 MiB), under the 10 MB that was --max-file-size's default.
    let big = "x = 1\n".repeat((5 << 20) / 6 + 1000);
    write(&root.join("app/big.py"), &big);
    let o = check(&root, &["--format", "json", "app"]);
    let err = stderr(&o);
    assert!(err.contains("warning: app/big.py: not checked:"), "{err}");
    let f = findings(&o);
    assert!(
        f.iter()
            .all(|(p, _, code)| p != "app/big.py" && !code.is_empty()),
        "{f:?}"
    );
    assert!(err.contains("1 not checked"), "{err}");
    // Raised, the one limit is the server's too: the file is checked.
    let o = check(
        &root,
        &["--format", "json", "--max-file-size", "10", "app/big.py"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not checked"), "{}", stderr(&o));
}

#[test]
fn pivots_toml_errors_are_placed_and_multi_line() {
    let (_d, root) = scoped();
    let toml = std::fs::read_to_string(root.join("pivots.toml")).unwrap();
    write(
        &root.join("pivots.toml"),
        &toml.replace("kind = \"class\"", "kind = \"clas\""),
    );
    let o = check(&root, &["--format", "github", "app"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: pivots.toml:20:8: unknown object kind \"clas\" (pivot `classes`)\n"),
        "{err}"
    );
    assert!(
        err.contains("20 | kind = \"clas\"\n   |        ^^^^^^\n"),
        "{err}"
    );
    assert!(err.contains("= did you mean \"class\"?"), "{err}");
    assert!(!err.contains("\\n"), "no literal \\n: {err}");
    // A line of the message that would start a workflow command is escaped.
    write(
        &root.join("pivots.toml"),
        "[[pivot]]\nid = \"x\"\n[[pivot.version]]\nkind = \"function\"\nrule = \"\"\"(\n::error::forged\"\"\"\n",
    );
    let o = check(&root, &["--format", "github", "app"]);
    let err = stderr(&o);
    assert!(
        err.lines().all(|l| !l.trim_start().starts_with("::")),
        "{err}"
    );
}

/// The fixture's pivots.toml as the `[tool.pivot]` table of a pyproject.toml, with a
/// `per-file-ignores` table that turns `classes` off in tests/.
fn as_pyproject(root: &std::path::Path) {
    let toml = std::fs::read_to_string(root.join("pivots.toml")).unwrap();
    let body = toml
        .replace("exclude = [\"generated/\"]\n", "")
        .replace("[[pivot]]", "[[tool.pivot.pivot]]")
        .replace("[[pivot.version]]", "[[tool.pivot.pivot.version]]");
    let py = format!(
        "[project]\nname = \"team\"\nversion = \"0.1.0\"\n\n[tool.ruff]\nline-length = 100\n\n\
         [tool.pivot]\nexclude = [\"generated/\"]\n\n[tool.pivot.per-file-ignores]\n\
         \"tests/**\" = [\"classes\"]\n\n{body}"
    );
    std::fs::remove_file(root.join("pivots.toml")).unwrap();
    write(&root.join("pyproject.toml"), &py);
}

#[test]
fn a_pyproject_tool_pivot_table_is_found_as_pivots_toml_is_and_per_file_ignores_apply() {
    let (_d, root) = scoped();
    as_pyproject(&root);
    let want: Vec<_> = expected()
        .into_iter()
        .filter(|f| f.0 != "tests/test_calc.py")
        .collect();
    // From the root and from a subfolder, as with a pivots.toml.
    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(findings(&o), want, "{}", stderr(&o));
    let o = check(&root.join("app"), &["--format", "json"]);
    let app: Vec<_> = want
        .iter()
        .filter(|f| f.0.starts_with("app/"))
        .cloned()
        .collect();
    assert_eq!(findings(&o), app, "{}", stderr(&o));
    let o = check(&root, &["--show-settings", "tests/test_calc.py"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "configuration: {}",
            root.join("pyproject.toml").display()
        )),
        "{out}"
    );
    assert!(
        out.contains("classes [class]")
            && out.contains("not checked: per-file-ignores `tests/**` names it"),
        "{out}"
    );
    // The editor reads the same table.
    let mut c = Client::start(&root);
    c.session_changed();
    let p = root.join("tests/test_calc.py");
    let uri = file_uri(&p);
    c.open(&uri, &std::fs::read_to_string(&p).unwrap());
    let codes: Vec<String> = c
        .diagnostics(&uri)
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect();
    let p = root.join("app/calc.py");
    let uri = file_uri(&p);
    c.open(&uri, &std::fs::read_to_string(&p).unwrap());
    let app_codes: Vec<String> = c
        .diagnostics(&uri)
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect();
    c.drain();
    assert!(codes.is_empty(), "{codes:?}");
    assert_eq!(app_codes, ["docstrings", "unused-suppression", "classes"]);
    // A mistake in the table is placed in the pyproject.toml.
    let py = std::fs::read_to_string(root.join("pyproject.toml")).unwrap();
    write(
        &root.join("pyproject.toml"),
        &py.replace("[\"classes\"]", "[\"clases\"]"),
    );
    let o = check(&root, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pyproject.toml:12:15: per-file-ignores `tests/**` names `clases`"),
        "{}",
        stderr(&o)
    );
}

/// A generated file (its head says so, as pyright's stubs and Django's migrations do) is
/// checked for its syntax and against no pivot, in `check` and in the editor alike;
/// `--show-settings` names the line that says so. The same code without the marker is.
#[test]
fn generated_files_are_checked_against_no_pivot() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(
        &root.join("pivots.toml"),
        "[[pivot]]\nid = \"fn-snake\"\n[[pivot.version]]\nkind = \"function\"\nrule = \"^[a-z_][a-z0-9_]*$\"\n",
    );
    let code = "def loadAll():\n    pass\n";
    write(
        &root.join("stubs/api.pyi"),
        &format!("\"\"\"\nThis type stub file was generated by pyright.\n\"\"\"\n\n{code}"),
    );
    write(
        &root.join("app/migration.py"),
        &format!("# Generated by Django 4.2 on 2024-01-01 12:00\n\n{code}"),
    );
    write(
        &root.join("app/broken.py"),
        "# Generated by a tool\ndef f(:\n",
    );
    write(&root.join("app/own.py"), code);
    let root = root.canonicalize().unwrap();
    let o = check(&root, &["--format", "json"]);
    let by_file: Vec<(String, String)> = findings(&o).into_iter().map(|(p, _, c)| (p, c)).collect();
    assert!(
        by_file.contains(&("app/own.py".into(), "fn-snake".into())),
        "{by_file:?}"
    );
    assert!(
        by_file
            .iter()
            .any(|(p, c)| p == "app/broken.py" && c == "syntax-error"),
        "{by_file:?}"
    );
    assert!(
        !by_file
            .iter()
            .any(|(p, c)| c == "fn-snake" && p != "app/own.py"),
        "a generated file was checked: {by_file:?}"
    );
    let mut editor = Client::start(&root);
    for rel in ["stubs/api.pyi", "app/migration.py"] {
        let uri = file_uri(&root.join(rel));
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        editor.open(&uri, &text);
        let diags = editor.diagnostics(&uri);
        assert!(diags.is_empty(), "{rel}: {diags:?}");
    }
    let o = check(&root, &["--show-settings", "app/migration.py"]);
    let out = stdout(&o);
    assert!(out.contains("generated: line 1 says so"), "{out}");
    assert!(out.contains("not checked: a generated file"), "{out}");
}
