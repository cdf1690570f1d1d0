//! `pivot-lsp mcp` through a real MCP client: the official Python SDK (`mcp` from PyPI,
//! driven by tests/mcp/client.py), in a venv of its own: `PIVOT_MCP_PYTHON` (scripts/test
//! makes target/tools/mcp-venv and sets it), else one made in the build folder on first use.
//! One session: initialize, list the tools and resources, check the fixture workspace and
//! compare with `check --format json` on the same tree, check a code string, read the pivots
//! and the timeline, explain a finding, and refuse every hostile input with a clear error
//! (a huge code string, paths outside the root and through a symlink out of it, a FIFO),
//! the server still answering after them.

use crate::history::git;
use crate::support;

use pivot_test_support::host::python;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cli::{check, repo, stderr, stdout, target_dir, EXE};
use support::files::{copy_tree, write};

/// The client's version, pinned as scripts/test pins it.
const MCP_CLIENT: &str = "mcp==2.3.0";

fn has_mcp(py: &Path) -> bool {
    Command::new(py)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// An interpreter with the `mcp` package, or why there is none.
fn client_python() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("PIVOT_MCP_PYTHON") {
        let p = PathBuf::from(p);
        return match has_mcp(&p) {
            true => Ok(p),
            false => Err(format!(
                "PIVOT_MCP_PYTHON={} cannot import mcp",
                p.display()
            )),
        };
    }
    let _one_at_a_time = pivot_test_support::host::serial();
    let venv = target_dir().join("tools/mcp-venv");
    let py = venv.join("bin/python");
    if has_mcp(&py) {
        return Ok(py);
    }
    let made = Command::new(python())
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("cannot run python3 -m venv: {e}"))?;
    if !made.status.success() {
        return Err(format!("python3 -m venv failed: {}", stderr(&made)));
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check", MCP_CLIENT])
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    match pip.status.success() && has_mcp(&py) {
        true => Ok(py),
        false => Err(format!(
            "pip install {MCP_CLIENT} failed (no registry?): {}",
            stderr(&pip)
        )),
    }
}

/// The check fixture in a temporary folder, with what git cannot carry: a git-ignored
/// folder, a virtualenv, CRLF line endings, a FIFO named like a Python file; and, beside the
/// root, a file outside it with a symlink to it from inside.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    copy_tree(&repo().join("fixtures/check/workspace"), &root);
    write(&root.join(".gitignore"), "generated/\n");
    write(
        &root.join("generated/out.py"),
        "def bad_name():\n    pass\n",
    );
    write(
        &root.join(".venv/lib/site.py"),
        "def bad_name():\n    pass\n",
    );
    write(
        &root.join("app/crlf.py"),
        "import logging\r\n\r\nclass lower_case:\r\n    \"\"\"C\u{e9}.\"\"\"\r\n",
    );
    let fifo = std::ffi::CString::new(root.join("app/pipe.py").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    write(
        &dir.path().join("secret.py"),
        "def leaked_name():\n    pass\n",
    );
    std::os::unix::fs::symlink(dir.path().join("secret.py"), root.join("link.py")).unwrap();
    let root = root.canonicalize().unwrap();
    (dir, root)
}

/// Runs the plan's steps in one client session; the transcript.
fn session(py: &Path, root: &Path, steps: Vec<Value>) -> Value {
    let plan = json!({
        "command": EXE,
        "args": ["mcp"],
        "cwd": root,
        "timeout": 60,
        "steps": steps,
    });
    let file = root.join("../plan.json");
    std::fs::write(&file, serde_json::to_vec(&plan).unwrap()).unwrap();
    let o = Command::new(py)
        .arg(repo().join("tests/mcp/client.py"))
        .arg(&file)
        .output()
        .expect("run the MCP client");
    assert!(o.status.success(), "the MCP client failed: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("the client prints JSON")
}

fn call(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "args": args})
}

/// A tool result's structured content, once asserted not to be an error.
fn structured<'a>(step: &'a Value, what: &str) -> &'a Value {
    let r = &step["ok"];
    assert_eq!(r["isError"], json!(false), "{what}: {step:#}");
    &r["structuredContent"]
}

/// A tool result's text, once asserted to be an error result (not a JSON-RPC error: the
/// agent's model reads it).
fn refusal(step: &Value, what: &str) -> String {
    let r = &step["ok"];
    assert_eq!(
        r["isError"],
        json!(true),
        "{what} must be refused: {step:#}"
    );
    r["content"][0]["text"].as_str().unwrap().to_string()
}

/// The 1-based line of the first line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

#[test]
fn a_real_client_checks_lists_explains_and_is_refused_hostile_inputs() {
    let py = match client_python() {
        Ok(p) => p,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!("no MCP client (Python mcp): {why}"));
            return;
        }
    };
    let (dir, root) = workspace();
    let huge = "x = 1\n".repeat((4 << 20) / 6 + 1);
    let outside = dir.path().join("secret.py");
    let t = session(
        &py,
        &root,
        vec![
            json!({"op": "list_tools"}),
            json!({"op": "list_resources"}),
            call("check_path", json!({"path": "."})),
            call("check_path", json!({"path": "app/models/inventory.py"})),
            call(
                "check_code",
                json!({"code": "import logging\n\ndef bad():\n    \"\"\"Doc.\"\"\"\n", "path": "app/new.py"}),
            ),
            call("check_code", json!({"code": huge})),
            call("check_path", json!({"path": "../secret.py"})),
            call("check_path", json!({"path": outside})),
            call("check_path", json!({"path": "link.py"})),
            call("check_path", json!({"path": "app/pipe.py"})),
            call(
                "check_code",
                json!({"code": "x = 1\n", "path": "../elsewhere.py"}),
            ),
            call("list_pivots", json!({})),
            call("explain_finding", json!({"code": "fn-prefix"})),
            call("explain_finding", json!({"code": "no-such-pivot"})),
            json!({"op": "read", "uri": "pivot://pivots"}),
            json!({"op": "read", "uri": "pivot://timeline"}),
        ],
    );
    let s = t["steps"].as_array().unwrap();

    // Initialize: the server and its capabilities.
    let init = &t["initialize"];
    assert_eq!(init["serverInfo"]["name"], "pivot-lsp", "{init:#}");
    assert!(init["capabilities"]["tools"].is_object(), "{init:#}");
    assert!(init["capabilities"]["resources"].is_object(), "{init:#}");

    // The tools and resources listed.
    let mut tools: Vec<&str> = (s[0]["ok"]["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        ["check_code", "check_path", "explain_finding", "list_pivots"]
    );
    let uris: Vec<&str> = (s[1]["ok"]["resources"].as_array().unwrap().iter())
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["pivot://pivots", "pivot://timeline"]);

    // The folder's findings are `check --format json`'s on the same tree.
    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let want: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let want = &want["findings"];
    let got = structured(&s[2], "check_path .");
    assert!(
        want.as_array().unwrap().len() > 5,
        "the fixture has findings: {want:#}"
    );
    assert_eq!(&got["findings"], want, "MCP and check disagree");
    assert!(
        (got["problems"].as_array().unwrap().iter())
            .any(|p| p["path"] == "app/pipe.py" && p["problem"].as_str().unwrap().contains("FIFO")),
        "the FIFO is a problem of the folder, not a hang: {got:#}"
    );
    // One file: the same findings as check's for that file, and only those.
    let file = structured(&s[3], "check_path inventory.py");
    let of_file: Vec<&Value> = (want.as_array().unwrap().iter())
        .filter(|f| f["path"] == "app/models/inventory.py")
        .collect();
    assert!(!of_file.is_empty());
    assert_eq!(
        file["findings"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        of_file
    );

    // A code string with a finding, named as the file it is meant for.
    let code = structured(&s[4], "check_code");
    let findings = code["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["code"] == "fn-prefix"
            && f["path"] == "app/new.py"
            && f["message"].as_str().unwrap().contains("`bad`")),
        "{code:#}"
    );

    // Hostile inputs: refused at once, each saying why.
    let huge_refusal = refusal(&s[5], "a code string over the analysis limit");
    assert!(
        huge_refusal.contains("refused") && huge_refusal.contains(&(4u64 << 20).to_string()),
        "{huge_refusal}"
    );
    for (i, what) in [
        (6, "a relative path out of the root"),
        (7, "an absolute path out of it"),
    ] {
        let r = refusal(&s[i], what);
        assert!(r.contains("outside the workspace root"), "{what}: {r}");
    }
    let link = refusal(&s[8], "a symlink out of the root");
    assert!(link.contains("symlink out of the workspace root"), "{link}");
    assert!(
        !link.contains("leaked_name"),
        "nothing of the target is read: {link}"
    );
    let fifo = refusal(&s[9], "a FIFO");
    assert!(fifo.contains("FIFO"), "{fifo}");
    let elsewhere = refusal(&s[10], "a code string named as a file outside the root");
    assert!(
        elsewhere.contains("outside the workspace root"),
        "{elsewhere}"
    );

    // After them the server still answers: the pivots in force, with history and lines.
    let toml = std::fs::read_to_string(root.join("pivots.toml")).unwrap();
    let listed = structured(&s[11], "list_pivots");
    let pivots = listed["pivots"].as_array().unwrap();
    assert_eq!(
        pivots.len(),
        toml.matches("[[pivot]]").count(),
        "{listed:#}"
    );
    let fp = pivots.iter().find(|p| p["id"] == "fn-prefix").unwrap();
    assert_eq!(fp["line"], line_of(&toml, "id = \"fn-prefix\""), "{fp:#}");
    assert_eq!(
        fp["version"]["text"],
        "start function names with 'f_' or 'g_'"
    );
    let history = fp["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{fp:#}");
    assert_eq!(history[0]["text"], "start function names with 'f_'");
    let second_kind =
        toml[toml.find("or 'g_'").unwrap()..].find("kind").unwrap() + toml.find("or 'g_'").unwrap();
    assert_eq!(
        fp["version"]["line"],
        toml[..second_kind].matches('\n').count() as u64 + 1
    );

    let explained = structured(&s[12], "explain_finding");
    let text = explained["explanation"].as_str().unwrap();
    assert!(
        text.contains("start function names with 'f_' or 'g_'")
            && text.contains(&format!("pivots.toml:{}", fp["version"]["line"]))
            && text.contains("# pivot: ignore[fn-prefix]"),
        "{text}"
    );
    let unknown = refusal(&s[13], "an unknown code");
    assert!(unknown.contains("no-such-pivot"), "{unknown}");

    // The resources: the pivots as list_pivots gives them, and the sessions.
    let read = |i: usize| -> Value {
        let text = s[i]["ok"]["contents"][0]["text"].as_str().unwrap();
        serde_json::from_str(text).unwrap()
    };
    assert_eq!(read(14)["pivots"], listed["pivots"]);
    let timeline = read(15);
    assert_eq!(timeline["count"], 2, "{timeline:#}");
    assert!(
        (timeline["sessions"][1]["changes"]
            .as_array()
            .unwrap()
            .iter())
        .any(|c| c["id"] == "fn-prefix" && c["change"] == "updated"),
        "{timeline:#}"
    );
}

#[test]
fn nested_pivots_files_and_scopes_give_check_s_findings() {
    let py = match client_python() {
        Ok(p) => p,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!("no MCP client (Python mcp): {why}"));
            return;
        }
    };
    // `include` / `exclude` patterns and a pivots.toml in a folder below the root.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("scoped");
    copy_tree(&repo().join("fixtures/check/scoped"), &root);
    let root = root.canonicalize().unwrap();
    let t = session(
        &py,
        &root,
        vec![
            call("check_path", json!({"path": "."})),
            call("check_path", json!({"path": "sub"})),
        ],
    );
    let o = check(&root, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let want: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let want = want["findings"].as_array().unwrap();
    assert!(
        want.iter()
            .any(|f| f["path"].as_str().unwrap().starts_with("sub/")),
        "the nested pivots file has findings: {want:?}"
    );
    let got = structured(&t["steps"][0], "check_path .");
    assert_eq!(
        got["findings"].as_array().unwrap(),
        want,
        "MCP and check disagree"
    );
    let sub: Vec<&Value> = want
        .iter()
        .filter(|f| f["path"].as_str().unwrap().starts_with("sub/"))
        .collect();
    let got = structured(&t["steps"][1], "check_path sub");
    assert_eq!(
        got["findings"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        sub
    );
}

#[test]
fn a_pivots_file_linked_from_outside_the_root_is_refused_not_read() {
    let py = match client_python() {
        Ok(p) => p,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!("no MCP client (Python mcp): {why}"));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(
        repo().join("fixtures/check/workspace/pivots.toml"),
        dir.path().join("outside.toml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.toml"), root.join("pivots.toml")).unwrap();
    let root = root.canonicalize().unwrap();
    let t = session(
        &py,
        &root,
        vec![
            call("list_pivots", json!({})),
            call("check_code", json!({"code": "def bad():\n    pass\n"})),
        ],
    );
    let listed = structured(&t["steps"][0], "list_pivots");
    assert_eq!(listed["pivots"], json!([]), "{listed:#}");
    let errors = listed["errors"].to_string();
    assert!(
        errors.contains("symlink out of the workspace root"),
        "{errors}"
    );
    let checked = structured(&t["steps"][1], "check_code");
    assert_eq!(
        checked["findings"],
        json!([]),
        "no pivot of the linked file applies: {checked:#}"
    );
    assert!(
        checked["errors"].to_string().contains("pivots.toml"),
        "{checked:#}"
    );
}

#[test]
fn in_git_the_pivots_list_the_commits_and_the_timeline_is_the_history() {
    let py = match client_python() {
        Ok(p) => p,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!("no MCP client (Python mcp): {why}"));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let pivot = |rule: &str| {
        format!("[[pivot]]\nid = \"fn\"\n[[pivot.version]]\ntext = \"names {rule}\"\nkind = \"function\"\nrule = \"{rule}\"\n")
    };
    let mut ids = Vec::new();
    for (rule, message) in [("^f_", "Functions start with f_"), ("^g_", "Now with g_")] {
        write(&root.join("pivots.toml"), &pivot(rule));
        write(&root.join("app.py"), "def f_one():\n    return 1\n");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", message]);
        ids.push(git(&root, &["rev-parse", "HEAD"]));
    }
    let root = root.canonicalize().unwrap();
    let t = session(
        &py,
        &root,
        vec![
            call("list_pivots", json!({})),
            json!({"op": "read", "uri": "pivot://timeline"}),
            call("check_path", json!({"path": "app.py"})),
        ],
    );
    let listed = structured(&t["steps"][0], "list_pivots");
    let commits: Vec<&str> = (listed["commits"].as_array().unwrap().iter())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(commits, ids, "{listed:#}");
    assert_eq!(listed["commits"][1]["summary"], "Now with g_");
    assert_eq!(listed["pivots"][0]["version"]["text"], "names ^g_");
    let text = t["steps"][1]["ok"]["contents"][0]["text"].as_str().unwrap();
    let timeline: Value = serde_json::from_str(text).unwrap();
    assert_eq!(timeline["source"], "history", "{timeline:#}");
    let sessions: Vec<&Value> = (timeline["sessions"].as_array().unwrap().iter())
        .map(|s| &s["commit"]["id"])
        .collect();
    assert_eq!(sessions, [&json!(ids[0]), &json!(ids[1])], "{timeline:#}");
    // The check is check's on the same commit's files.
    let o = check(&root, &["--format", "json", "app.py"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let want: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let got = structured(&t["steps"][2], "check_path app.py");
    assert_eq!(got["findings"], want["findings"]);
    assert_eq!(got["findings"][0]["code"], "fn", "{got:#}");
}
