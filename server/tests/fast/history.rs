//! `check --rev` and `check --history` on a repository made here with git: seven commits,
//! five of which change pivots.toml (an addition, an update, a removal, a rename of a
//! pivot's id), the others only code. Each commit's findings must equal what `check` finds
//! in a checkout of that commit.

use crate::support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{check, stderr};
use support::files::write;

pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ana")
        .env("GIT_AUTHOR_EMAIL", "ana@example.org")
        .env("GIT_COMMITTER_NAME", "Ana")
        .env("GIT_COMMITTER_EMAIL", "ana@example.org")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn pivot(id: &str, text: &str, kind: &str, rule: &str) -> String {
    format!("[[pivot]]\nid = \"{id}\"\n[[pivot.version]]\ntext = \"{text}\"\nkind = \"{kind}\"\nrule = {rule}\n\n")
}

const FN_F: (&str, &str) = ("start function names with 'f_'", "\"^f_\"");
const FN_G: (&str, &str) = ("start function names with 'g_'", "\"^g_\"");
const CLASSES: (&str, &str) = ("use CamelCase for class names", "\"^[A-Z][a-zA-Z0-9]*$\"");

/// The repository and its commits, oldest first, with what each did.
fn repository() -> (tempfile::TempDir, PathBuf, Vec<(String, &'static str)>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    let mut commit = |root: &Path, what: &'static str| {
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", what]);
        commits.push((git(root, &["rev-parse", "HEAD"]), what));
    };
    let toml = root.join("pivots.toml");
    // 1: the first pivot.
    write(&toml, &pivot("fn-prefix", FN_F.0, "function", FN_F.1));
    write(
        &root.join("app/one.py"),
        "def f_one():\n    return 1\n\n\ndef bad():\n    return 2\n",
    );
    commit(&root, "pivots: function names start with f_");
    // 2: an addition.
    write(
        &toml,
        &(pivot("fn-prefix", FN_F.0, "function", FN_F.1)
            + &pivot("classes", CLASSES.0, "class", CLASSES.1)),
    );
    write(&root.join("app/two.py"), "class lower:\n    pass\n");
    commit(&root, "pivots: class names in CamelCase");
    // 3: an update of fn-prefix.
    write(
        &toml,
        &(pivot("fn-prefix", FN_G.0, "function", FN_G.1)
            + &pivot("classes", CLASSES.0, "class", CLASSES.1)),
    );
    commit(&root, "pivots: function names now start with g_");
    // 4: code only: one function follows the old version, one neither.
    write(
        &root.join("app/three.py"),
        "def f_three():\n    return 3\n\n\ndef h_four():\n    return 4\n\n\ndef g_five():\n    return 5\n",
    );
    commit(&root, "code: three more functions");
    // 5: a removal.
    write(&toml, &pivot("fn-prefix", FN_G.0, "function", FN_G.1));
    commit(&root, "pivots: no rule for class names");
    // 6: a rename of the pivot's id.
    write(&toml, &pivot("fn-names", FN_G.0, "function", FN_G.1));
    commit(&root, "pivots: fn-prefix is now fn-names");
    // 7: code only.
    write(&root.join("app/four.py"), "def g_six():\n    return 6\n");
    commit(&root, "code: g_six");
    let root = root.canonicalize().unwrap();
    (dir, root, commits)
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(o)))
}

#[test]
fn rev_and_history_equal_a_checkout_of_each_commit() {
    let (dir, root, commits) = repository();
    // A checkout of each commit, checked as it is.
    let checkout = dir.path().join("checkout");
    git(
        dir.path(),
        &["clone", "-q", root.to_str().unwrap(), "checkout"],
    );
    let mut expected: Vec<Value> = Vec::new();
    for (id, what) in &commits {
        git(&checkout, &["checkout", "-q", id]);
        let o = check(&checkout, &["--format", "json", "--no-cache"]);
        let v = json_of(&o);
        // --rev, from the repository's own root, with the cache (twice: cold, then warm).
        for run in 0..2 {
            let r = check(&root, &["--rev", id, "--format", "json"]);
            let got = json_of(&r);
            for key in ["findings", "pivots", "session"] {
                assert_eq!(
                    got[key],
                    v[key],
                    "{what} ({key}), run {run}: {}",
                    stderr(&r)
                );
            }
            assert_eq!(got["root"], root.display().to_string());
        }
        expected.push(v);
    }
    assert!(
        expected
            .iter()
            .all(|v| !v["findings"].as_array().unwrap().is_empty()),
        "every commit has a finding"
    );

    // The history: every commit, with the findings of its checkout.
    let h = check(&root, &["--history", "--format", "json"]);
    assert_eq!(h.status.code(), Some(1), "{}", stderr(&h));
    let h = json_of(&h);
    let got = h["commits"].as_array().unwrap();
    assert_eq!(got.len(), commits.len());
    for ((c, (id, what)), v) in got.iter().zip(&commits).zip(&expected) {
        assert_eq!(c["commit"]["id"], id.as_str(), "{what}");
        assert_eq!(
            unnumbered(&c["findings"]),
            unnumbered(&v["findings"]),
            "{what}"
        );
    }
    // Sessions: the five commits that changed pivots.toml.
    let sessions: Vec<&str> = h["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["commit"]["id"].as_str().unwrap())
        .collect();
    let changed: Vec<&str> = [0, 1, 2, 4, 5]
        .iter()
        .map(|&i| commits[i].0.as_str())
        .collect();
    assert_eq!(sessions, changed);
    let session_of: Vec<Value> = got.iter().map(|c| c["session"].clone()).collect();
    assert_eq!(session_of, [0, 1, 2, 2, 3, 4, 4].map(Value::from).to_vec());

    // Commit 4's new findings: f_three follows the version before (the update forgotten),
    // h_four breaks both; g_five is no finding.
    let new = got[3]["new"].as_array().unwrap();
    let by_name = |name: &str| {
        new.iter()
            .find(|n| n["finding"]["message"].as_str().unwrap().contains(name))
            .unwrap_or_else(|| panic!("no new finding for {name}: {new:?}"))
    };
    assert_eq!(by_name("f_three")["follows_version_before"], true);
    assert_eq!(by_name("h_four")["follows_version_before"], false);
    assert!(!new
        .iter()
        .any(|n| n["finding"]["message"].as_str().unwrap().contains("g_five")));
    // Per pivot, while its version of session 2 (the update to g_) was in force (commits
    // 3 to 5, until the rename): at the
    // update, `bad` and `f_one` are new findings (the message names the version) in code
    // older than it; in commit 4, h_four broke it and f_three followed the old one.
    let rows = h["adherence"]["fn-prefix"].as_array().unwrap();
    let s2 = rows.iter().find(|r| r["session"] == 2).unwrap();
    assert_eq!(
        (
            s2["commits"].clone(),
            s2["older_than_instruction"].clone(),
            s2["broke"].clone(),
            s2["followed_version_before"].clone()
        ),
        (
            Value::from(3),
            Value::from(2),
            Value::from(1),
            Value::from(1)
        ),
        "{rows:?}"
    );
    // The first version has no version before: its findings in new code only break it.
    let first = &got[0]["new"].as_array().unwrap()[0];
    assert_eq!(first["class"], "breaks-version-in-force", "{first}");
    assert_eq!(first["before"], Value::Null);
    // The message names the history's session, not the file's own (0).
    let m = by_name("h_four")["finding"]["message"].as_str().unwrap();
    assert!(m.contains("given at session 2"), "{m}");
    // The renamed pivot is another pivot from its session on.
    let renamed = h["adherence"]["fn-names"].as_array().unwrap();
    assert_eq!(renamed.len(), 1, "{renamed:?}");
    assert_eq!(renamed[0]["session"], 4);

    // --since: only the commits after it.
    let o = check(
        &root,
        &["--history", "--since", &commits[4].0, "--format", "json"],
    );
    let v = json_of(&o);
    assert_eq!(v["commits"].as_array().unwrap().len(), 2, "{}", stderr(&o));
    // Text says which findings forgot an update.
    let o = check(&root, &["--history"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("the update forgotten"), "{text}");
    assert!(text.contains("per pivot"), "{text}");
    // A revision that does not exist is an input error naming it.
    let o = check(&root, &["--rev", "no-such-branch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-branch"), "{}", stderr(&o));
}

#[test]
fn outside_git_and_in_a_shallow_clone_the_files_are_checked_as_they_are() {
    let (dir, root, _) = repository();
    // Not a repository: the working files, and a message saying why.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::copy(root.join("pivots.toml"), plain.join("pivots.toml")).unwrap();
    write(&plain.join("a.py"), "def bad():\n    return 1\n");
    let o = check(&plain, &["--rev", "HEAD", "--format", "json"]);
    assert!(
        stderr(&o).contains("not inside a git repository"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_of(&o)["findings"].as_array().unwrap().len(), 1);
    // A shallow clone: its history stops early.
    let url = format!("file://{}", root.display());
    git(
        dir.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let o = check(
        &dir.path().join("shallow"),
        &["--history", "--format", "json"],
    );
    assert!(stderr(&o).contains("shallow clone"), "{}", stderr(&o));
    assert!(json_of(&o)["findings"].is_array());
}

/// Findings with the session number their messages name left out: a checkout's pivots
/// are given at its file's own session 0, the history's at the session that gave them.
pub fn unnumbered(findings: &Value) -> Vec<Value> {
    let re = regex::Regex::new(r"given at session \d+").unwrap();
    (findings.as_array().unwrap().iter())
        .map(|f| {
            let mut f = f.clone();
            let m = f["message"].as_str().unwrap().to_string();
            f["message"] = Value::from(re.replace_all(&m, "given at session N").into_owned());
            f
        })
        .collect()
}

/// "code: message" of each of `diags`, sorted.
fn messages(diags: &[Value]) -> Vec<String> {
    let mut m: Vec<String> = diags
        .iter()
        .map(|d| format!("{}: {}", d["code"], d["message"].as_str().unwrap()))
        .collect();
    m.sort();
    m
}

#[test]
fn the_editor_shows_the_history_as_sessions_and_names_the_commit_on_hover() {
    use support::lsp::{Client, Doc};
    let (_dir, root, commits) = repository();
    let short = |i: usize| commits[i].0[..12].to_string();
    // Without the setting: pivots.toml's own (hand-written) sessions, here one.
    let mut c = Client::start(&root);
    assert_eq!(c.session_changed(), (0, 1), "at start-up");
    let t = c.command("pivot.session.timeline", json!({})).unwrap();
    assert_eq!(
        (t["source"].as_str(), t["count"].as_u64()),
        (Some("workspace pivots"), Some(1))
    );
    // Turned on while running: the five commits that changed pivots.toml are the sessions.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"pivot": {"history": true}}}),
    );
    assert_eq!(c.session_changed(), (4, 5));
    let t = c.command("pivot.session.timeline", json!({})).unwrap();
    assert_eq!(t["source"], "history");
    let sessions = t["sessions"].as_array().unwrap();
    let ids: Vec<&str> = sessions
        .iter()
        .map(|s| s["commit"]["id"].as_str().unwrap())
        .collect();
    let changed: Vec<&str> = [0, 1, 2, 4, 5]
        .iter()
        .map(|&i| commits[i].0.as_str())
        .collect();
    assert_eq!(ids, changed);
    let changes: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            s["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ch| {
                    format!(
                        "{} {}",
                        ch["change"].as_str().unwrap(),
                        ch["id"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(
        changes,
        [
            vec!["added fn-prefix"],
            vec!["added classes"],
            vec!["updated fn-prefix"],
            vec!["removed classes"],
            vec!["removed fn-prefix", "added fn-names"],
        ]
    );
    c.shutdown();

    // Started with the setting, as the editors start it.
    let mut c = Client::start_with_options(&root, json!({"pivot": {"history": true}}));
    assert_eq!(c.session_changed(), (4, 5));
    let src = "def f_new():\n    return 1\n\n\nclass lower:\n    pass\n";
    let doc = Doc::open(&mut c, "app/new.py", src);
    // The latest session (the rename): f_new breaks fn-names (g_); classes was removed.
    let now = messages(&c.diagnostics(&doc.uri));
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(
        now[0].contains("fn-names") && now[0].contains("f_new"),
        "{now:?}"
    );
    let h = doc.hover(&mut c, "f_new");
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains(&format!("commit {}", short(5))) && md.contains("fn-prefix is now fn-names"),
        "the hover names the commit of the version in force: {md}"
    );
    // Session 1 (classes added): f_new follows f_, `lower` breaks the class rule; the hover
    // on the class names the commit that introduced it.
    c.command("pivot.session.goto", json!({"index": 1}))
        .unwrap();
    assert_eq!(c.session_changed(), (1, 5));
    let then = messages(&c.diagnostics(&doc.uri));
    assert_eq!(then.len(), 1, "{then:?}");
    assert!(then[0].contains("lower"), "{then:?}");
    let md = doc.hover(&mut c, "lower")["contents"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        md.contains(&format!("commit {}", short(1))) && md.contains("class names in CamelCase"),
        "{md}"
    );
    // The transcript of the removal names its commit and the removal.
    let tr = c
        .command("pivot.session.transcript", json!({"index": 3}))
        .unwrap();
    let md = tr["markdown"].as_str().unwrap();
    assert!(md.contains(&format!("commit {}", short(4))), "{md}");
    assert!(md.contains("**removed** `classes`"), "{md}");
    // An uncommitted pivots.toml is one more session, after the commits.
    write(
        &root.join("pivots.toml"),
        &pivot("fn-names", FN_F.0, "function", FN_F.1),
    );
    let info = c.command("pivot.pivots.reload", json!({})).unwrap();
    assert_eq!(info["count"], 6, "{info}");
    assert_eq!(c.session_changed(), (1, 6));
    assert_eq!(messages(&c.diagnostics(&doc.uri)), then, "still session 1");
    let t = c.command("pivot.session.timeline", json!({})).unwrap();
    let last = &t["sessions"][5];
    assert_eq!(
        (last["uncommitted"].clone(), last["commit"].clone()),
        (json!(true), Value::Null)
    );
    assert_eq!(last["changes"][0]["change"], "updated");
    c.shutdown();

    // Outside git the setting says why, and the file's own sessions are used.
    let plain = root.parent().unwrap().join("plain-ws");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::copy(root.join("pivots.toml"), plain.join("pivots.toml")).unwrap();
    let mut c = Client::start_with_options(&plain, json!({"pivot": {"history": true}}));
    let shown = c.expect("window/showMessage");
    let text = shown["params"]["message"].as_str().unwrap();
    assert!(text.contains("not inside a git repository"), "{text}");
    assert_eq!(c.session_changed(), (0, 1));
    let t = c.command("pivot.session.timeline", json!({})).unwrap();
    assert_eq!(t["source"], "workspace pivots");
    c.shutdown();
}

/// A repository whose pivots.toml changed in each of `n` commits (made with `git
/// fast-import`, in a blink), and a file with a function the pivot names.
fn long_history(n: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let mut stream = String::new();
    for i in 1..=n {
        let toml = pivot(
            "fn-prefix",
            &format!("start function names with 'f_' (revision {i})"),
            "function",
            FN_F.1,
        );
        let msg = format!("pivots: revision {i}");
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter Ana <ana@example.org> {} +0000\ndata {}\n{msg}\n",
            1_700_000_000 + i,
            msg.len() + 1
        ));
        if i > 1 {
            stream.push_str(&format!("from :{}\n", i - 1));
        }
        stream.push_str(&format!(
            "M 100644 inline pivots.toml\ndata {}\n{toml}\n",
            toml.len()
        ));
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&root)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    git(&root, &["checkout", "-q", "main"]);
    (dir, root.canonicalize().unwrap())
}

/// Turning the history on walks all of it; a hover asked meanwhile is answered from the
/// pivots in force before, not after the walk: the history is read under no lock and off
/// the async workers.
#[test]
fn a_hover_is_answered_while_a_long_history_loads() {
    use support::lsp::{Client, Doc};
    // About a second of walking here: far longer than a hover takes, even on a busy machine.
    let n = 10_000;
    let (_dir, root) = long_history(n);
    let mut c = Client::start(&root);
    assert_eq!(c.session_changed(), (0, 1));
    let doc = Doc::open(&mut c, "app.py", "def bad():\n    return 1\n");
    assert_eq!(c.diagnostics(&doc.uri).len(), 1);
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"pivot": {"history": true}}}),
    );
    let id = 7_000_001;
    c.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": doc.uri}, "position": doc.at("bad")}}),
    );
    let hover = c.response(id).expect("a hover");
    let md = hover["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // Answered from the pivots in force before the walk: a hover that waited for the
    // history would name its last commit.
    assert!(
        !md.contains("commit ") && md.contains("function `bad`"),
        "the hover waited for the history ({n} commits): {md}"
    );
    // The walk did happen, and the hover then names the commit in force.
    assert_eq!(c.session_changed(), (n as u64 - 1, n as u64));
    let md = doc.hover(&mut c, "bad")["contents"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        md.contains("commit ") && md.contains(&format!("revision {n}")),
        "{md}"
    );
    c.shutdown_after_noise();
}
