//! `check --history --instructions AGENTS.md` on a repository made here with git: ten
//! commits, AGENTS.md changing in seven of them (a rule added, another added, one updated,
//! one removed, a comment-only edit that moves every line, a `### JavaScript` section
//! whose rule is not Python's) and code in the others. The sessions must be the commits
//! whose rules changed, each commit's findings those of a checkout checked against the
//! pivots `pivots import` proposes from that commit's AGENTS.md, and each new finding's
//! age the one `git blame --first-parent` gives.

use crate::history::{git, unnumbered};
use crate::support;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use support::cli::{check, pivot, stderr};
use support::files::write;

const HEAD: &str = "# Agent notes\n\nThis repository is a small app.\n\n## Code style\n\n";
const FN_F: &str = "- Start function names with `f_`.\n";
const FN_G: &str = "- Start function names with `g_`.\n";
const CLASSES: &str = "- Class names must be PascalCase.\n";
const COMMENT: &str =
    "<!-- Reviewed by Ana in November; ask her before changing a rule. -->\n\nSee CONTRIBUTING for the workflow.\n\n";
const JS: &str = "\n### JavaScript\n\n- Start function names with `js_`.\n";

/// `check`'s arguments for the history read from AGENTS.md, as JSON.
const HISTORY_JSON: &[&str] = &[
    "--history",
    "--instructions",
    "AGENTS.md",
    "--format",
    "json",
];

/// The repository, and its commits oldest first with what each did.
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
    let agents = root.join("AGENTS.md");
    // 0: code before any instruction.
    write(
        &root.join("app/old.py"),
        "def OldName():\n    return 0\n\n\nclass lower_cls:\n    pass\n",
    );
    commit(&root, "code: the first module");
    // 1: the first rule (session 0).
    write(&agents, &format!("{HEAD}{FN_F}"));
    write(&root.join("app/one.py"), "def f_one():\n    return 1\n");
    commit(&root, "AGENTS.md: function names start with f_");
    // 2: code that breaks it.
    write(&root.join("app/two.py"), "def bad_two():\n    return 2\n");
    commit(&root, "code: bad_two");
    // 3: a comment and a paragraph: every line moves, no rule changes.
    write(&agents, &format!("{COMMENT}{HEAD}{FN_F}"));
    commit(&root, "AGENTS.md: a note for reviewers");
    // 4: a class rule (session 1), with a class in the same commit that breaks it.
    write(&agents, &format!("{COMMENT}{HEAD}{FN_F}{CLASSES}"));
    write(&root.join("app/cls.py"), "class another_bad:\n    pass\n");
    commit(&root, "AGENTS.md: class names in PascalCase");
    // 5: the function rule updated (session 2).
    write(&agents, &format!("{COMMENT}{HEAD}{FN_G}{CLASSES}"));
    commit(&root, "AGENTS.md: function names now start with g_");
    // 6: code: one function follows the old version, one neither, one the new.
    write(
        &root.join("app/three.py"),
        "def f_three():\n    return 3\n\n\ndef h_four():\n    return 4\n\n\ndef g_five():\n    return 5\n",
    );
    commit(&root, "code: three more functions");
    // 7: the class rule removed (session 3).
    write(&agents, &format!("{COMMENT}{HEAD}{FN_G}"));
    commit(&root, "AGENTS.md: no rule for class names");
    // 8: a JavaScript section: its rule is not Python's, no session.
    write(&agents, &format!("{COMMENT}{HEAD}{FN_G}{JS}"));
    commit(&root, "AGENTS.md: JavaScript style");
    // 9: code, and an edit of an old file.
    write(
        &root.join("app/old.py"),
        "def OldName():\n    return 0\n\n\ndef g_six():\n    return 6\n\n\ndef late():\n    return 7\n",
    );
    commit(&root, "code: g_six and late in old.py");
    let root = root.canonicalize().unwrap();
    (dir, root, commits)
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(o)))
}

/// The (id, kind, rule) of every pivot `pivots import` proposes from `file`, and a
/// pivots.toml of them written to `to` (empty when there is no file).
fn imported(dir: &Path, file: &Path, to: &Path) -> BTreeSet<String> {
    let _ = std::fs::remove_file(to);
    if !file.exists() {
        write(to, "");
        return BTreeSet::new();
    }
    let o = pivot(
        dir,
        &[
            "pivots",
            "import",
            file.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    let o = pivot(
        dir,
        &[
            "pivots",
            "import",
            file.to_str().unwrap(),
            "--write",
            to.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    if !to.exists() {
        write(to, "");
    }
    (v["proposed"].as_array().unwrap().iter())
        .map(|p| format!("{} {} {}", p["id"], p["kind"], p["rule"]))
        .collect()
}

/// `git blame --first-parent`'s commit for line `line` (0-based) of `path` at `rev`.
fn blamed(root: &Path, rev: &str, path: &str, line: u64) -> String {
    let l = format!("{},{}", line + 1, line + 1);
    let out = git(
        root,
        &[
            "blame",
            "--first-parent",
            "--porcelain",
            "-L",
            &l,
            rev,
            "--",
            path,
        ],
    );
    out.split_whitespace().next().unwrap().to_string()
}

#[test]
fn sessions_are_the_commits_that_change_the_rules_and_findings_are_attributed_by_age() {
    let (dir, root, commits) = repository();
    let h = check(&root, HISTORY_JSON);
    assert_eq!(h.status.code(), Some(1), "{}", stderr(&h));
    let h = json_of(&h);
    let got = h["commits"].as_array().unwrap();
    assert_eq!(got.len(), commits.len(), "{}", h["warnings"]);

    // A checkout of each commit, checked against what `pivots import` reads from its
    // AGENTS.md: the same findings; and the sessions are where that reading changes.
    let checkout = dir.path().join("checkout");
    git(
        dir.path(),
        &["clone", "-q", root.to_str().unwrap(), "checkout"],
    );
    let toml = dir.path().join("imported.toml");
    let mut rules_before = BTreeSet::new();
    let mut changed = Vec::new();
    for (i, ((id, what), c)) in commits.iter().zip(got).enumerate() {
        git(&checkout, &["checkout", "-q", id]);
        let rules = imported(&checkout, &checkout.join("AGENTS.md"), &toml);
        if rules != rules_before {
            changed.push(id.clone());
        }
        rules_before = rules;
        let o = check(
            &checkout,
            &[
                "--pivots",
                toml.to_str().unwrap(),
                "--format",
                "json",
                "--no-cache",
            ],
        );
        let v = json_of(&o);
        assert_eq!(c["commit"]["id"], id.as_str(), "{what}");
        assert_eq!(
            unnumbered(&c["findings"]),
            unnumbered(&v["findings"]),
            "commit {i} ({what}): {}",
            stderr(&o)
        );
        // Every new finding of a pivot was written where git blame says.
        for n in c["new"].as_array().unwrap() {
            if n["class"] == "no-pivot" {
                continue;
            }
            let f = &n["finding"];
            let line = f["range"]["start"]["line"].as_u64().unwrap();
            let path = f["path"].as_str().unwrap();
            assert_eq!(
                n["written"]["id"].as_str().unwrap(),
                blamed(&root, id, path, line),
                "commit {i}: {f}"
            );
        }
    }
    let sessions: Vec<&str> = (h["sessions"].as_array().unwrap().iter())
        .map(|s| s["commit"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, changed);
    // Rules added (1, 4), updated (5) and removed (7); the comment (3) and the JavaScript
    // section (8) are no session.
    let expected: Vec<&str> = [1, 4, 5, 7]
        .iter()
        .map(|&i| commits[i].0.as_str())
        .collect();
    assert_eq!(sessions, expected);
    let what: Vec<String> = (h["sessions"].as_array().unwrap().iter())
        .map(|s| {
            let n = |k: &str| s[k].as_array().unwrap().len();
            format!("+{} ~{} -{}", n("added"), n("updated"), n("removed"))
        })
        .collect();
    // "function names" is every def: the function and the method kinds, two pivots.
    assert_eq!(what, ["+2 ~0 -0", "+1 ~0 -0", "+0 ~2 -0", "+0 ~0 -1"]);
    let session_of: Vec<Value> = got.iter().map(|c| c["session"].clone()).collect();
    assert_eq!(
        session_of,
        [
            Value::Null,
            0.into(),
            0.into(),
            0.into(),
            1.into(),
            2.into(),
            2.into(),
            3.into(),
            3.into(),
            3.into()
        ]
    );

    // Each commit's new findings: "name class (given session, before session)".
    let new: Vec<Vec<String>> = got
        .iter()
        .map(|c| {
            let mut v: Vec<String> = (c["new"].as_array().unwrap().iter())
                .map(|n| {
                    let m = n["finding"]["message"].as_str().unwrap();
                    let name = m.split('`').nth(1).unwrap_or("?");
                    format!(
                        "{name} {} ({}, {})",
                        n["class"].as_str().unwrap(),
                        n["given"]["session"],
                        n["before"]["session"]
                    )
                })
                .collect();
            v.sort();
            v
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        new,
        [
            s(&[]),
            // Code older than the instruction is a backlog, not a forgotten update.
            s(&["OldName older-than-instruction (0, null)"]),
            // A pivot with no version before is never "the version before".
            s(&["bad_two breaks-version-in-force (0, null)"]),
            s(&[]),
            s(&[
                "another_bad breaks-version-in-force (1, null)",
                "lower_cls older-than-instruction (1, null)"
            ]),
            // The update: every function written before it is older than this version.
            s(&[
                "OldName older-than-instruction (2, null)",
                "bad_two older-than-instruction (2, null)",
                "f_one older-than-instruction (2, null)"
            ]),
            s(&[
                "f_three follows-version-before (2, 0)",
                "h_four breaks-version-in-force (2, null)"
            ]),
            s(&[]),
            s(&[]),
            // old.py edited: `late` is new code; OldName's line was not touched.
            s(&["late breaks-version-in-force (2, null)"]),
        ]
    );
    // Messages name the session that gave the version in force, and the report its commit.
    let f_three = (got[6]["new"].as_array().unwrap().iter())
        .find(|n| n["class"] == "follows-version-before")
        .unwrap();
    let m = f_three["finding"]["message"].as_str().unwrap();
    assert!(m.contains("given at session 2"), "{m}");
    assert_eq!(f_three["given"]["commit"]["id"], commits[5].0.as_str());
    assert_eq!(f_three["before"]["commit"]["id"], commits[1].0.as_str());
    assert_eq!(h["totals"]["follows-version-before"], 1);
    assert_eq!(h["totals"]["older-than-instruction"], 5);
    assert_eq!(h["totals"]["breaks-version-in-force"], 4);
    // Only the files a commit changed were checked again (commit 6: three.py).
    assert_eq!(got[6]["rechecked"], 1, "{}", got[6]);
    assert_eq!(got[3]["rechecked"], 0, "{}", got[3]);

    // Per pivot and version: the g_ version (session 2) over commits 5..9.
    let rows = &h["adherence"]["function-prefix"];
    let g = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session"] == 2)
        .unwrap();
    assert_eq!(
        [
            &g["commits"],
            &g["older_than_instruction"],
            &g["broke"],
            &g["followed_version_before"]
        ],
        [
            &Value::from(5),
            &Value::from(3),
            &Value::from(2),
            &Value::from(1)
        ],
        "{rows}"
    );

    // --since: the commit's findings are the baseline; what is new after it is what the
    // whole history found new there.
    let o = check(
        &root,
        &[
            "--history",
            "--instructions",
            "AGENTS.md",
            "--since",
            &commits[5].0,
            "--format",
            "json",
        ],
    );
    let v = json_of(&o);
    assert_eq!(v["baseline"]["id"], commits[5].0.as_str(), "{}", stderr(&o));
    let after = v["commits"].as_array().unwrap();
    assert_eq!(after.len(), 4);
    for (a, b) in after.iter().zip(&got[6..]) {
        assert_eq!(a["new"], b["new"], "{}", a["commit"]["summary"]);
        assert_eq!(a["findings"], b["findings"]);
    }

    // Text: the backlog apart, the session and commit of the version in force named.
    let o = check(&root, &["--history", "--instructions", "AGENTS.md"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("older than the instruction (a backlog"),
        "{text}"
    );
    let short = |i: usize| commits[i].0[..12].to_string();
    assert!(
        text.contains(&format!(
            "follows the version before, given at session 0 (commit {})",
            short(1)
        )) && text.contains(&format!("after session 2 (commit {})", short(5))),
        "{text}"
    );
}

/// The history's commits' findings (with their new findings' classes and commits), next
/// to a checkout's of each commit checked against what `pivots import` reads from it.
fn history_and_checkouts(dir: &Path, root: &Path, commits: &[(String, &str)]) -> Vec<Value> {
    let h = check(root, HISTORY_JSON);
    let h = json_of(&h);
    let got = h["commits"].as_array().unwrap().clone();
    assert_eq!(got.len(), commits.len(), "{h}");
    let checkout = dir.join("checkout");
    git(dir, &["clone", "-q", root.to_str().unwrap(), "checkout"]);
    let toml = dir.join("imported.toml");
    for ((id, what), c) in commits.iter().zip(&got) {
        git(&checkout, &["checkout", "-q", id]);
        imported(&checkout, &checkout.join("AGENTS.md"), &toml);
        let o = check(
            &checkout,
            &[
                "--pivots",
                toml.to_str().unwrap(),
                "--format",
                "json",
                "--no-cache",
            ],
        );
        assert_eq!(
            unnumbered(&c["findings"]),
            unnumbered(&json_of(&o)["findings"]),
            "{what}: {}",
            stderr(&o)
        );
    }
    got
}

#[test]
fn an_ignore_file_rechecks_the_tree_and_an_empty_file_is_dated_by_its_last_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    let mut commit = |what: &'static str| {
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", what]);
        commits.push((git(&root, &["rev-parse", "HEAD"]), what));
    };
    write(&root.join("app/__init__.py"), "");
    write(
        &root.join("generated/gen.py"),
        "import logging\n\n\ndef Gen():\n    return 0\n",
    );
    commit("code: an empty package and generated code");
    write(
        &root.join("AGENTS.md"),
        "## Style\n\n- Always import `logging`.\n- Start function names with `f_`.\n",
    );
    commit("AGENTS.md: logging, and function names start with f_");
    write(&root.join(".gitignore"), "generated/\n");
    commit("ignore generated/");
    let root = root.canonicalize().unwrap();
    let got = history_and_checkouts(dir.path(), &root, &commits);
    // The empty file's finding (it has no line to blame) is dated by the file's last
    // change: older than the instruction.
    let init = (got[1]["new"].as_array().unwrap().iter())
        .find(|n| n["finding"]["path"] == "app/__init__.py")
        .unwrap_or_else(|| panic!("{}", got[1]));
    assert_eq!(init["class"], "older-than-instruction", "{init}");
    assert_eq!(init["written"]["id"], commits[0].0.as_str());
    // The ignore file took generated/ out: the whole tree was checked again.
    assert!(got[1]["findings"].to_string().contains("generated/gen.py"));
    assert!(!got[2]["findings"].to_string().contains("generated/gen.py"));
}

#[test]
fn an_instruction_rewritten_in_another_form_keeps_its_version_before() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    let mut commit = |what: &'static str| {
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", what]);
        commits.push((git(&root, &["rev-parse", "HEAD"]), what));
    };
    let agents = |case: &str| format!("# Notes\n\n## Style\n\n- Use {case} for function names.\n");
    write(&root.join("AGENTS.md"), &agents("snake_case"));
    write(&root.join("app/a.py"), "def load_all():\n    return 0\n");
    commit("AGENTS.md: snake_case functions");
    write(&root.join("AGENTS.md"), &agents("camelCase"));
    commit("AGENTS.md: camelCase functions now");
    write(
        &root.join("app/b.py"),
        "def save_all():\n    return 1\n\n\ndef Save_Mixed():\n    return 2\n\n\ndef saveAll():\n    return 3\n",
    );
    commit("code: three functions");
    let root = root.canonicalize().unwrap();
    let got = history_and_checkouts(dir.path(), &root, &commits);
    let classes: Vec<String> = (got[2]["new"].as_array().unwrap().iter())
        .map(|n| {
            let m = n["finding"]["message"].as_str().unwrap();
            format!(
                "{} {} {}",
                m.split('`').nth(1).unwrap(),
                n["class"].as_str().unwrap(),
                n["before"]["session"]
            )
        })
        .collect();
    // save_all keeps the snake_case version (the rule's version before, though the
    // importer's id for it changed); Save_Mixed keeps neither; saveAll is no finding.
    assert_eq!(
        classes,
        [
            "save_all follows-version-before 0",
            "Save_Mixed breaks-version-in-force null"
        ]
    );
    // At the rewrite, load_all (written before it) is older than the instruction.
    let at = got[1]["new"].as_array().unwrap();
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0]["class"], "older-than-instruction");
}

/// The editor with `instructions: AGENTS.md` and `history`: the same sessions as `check
/// --history --instructions`, the file named in the timeline, and each session's pivots
/// those `pivots import` proposes from that commit's AGENTS.md (here: the flagged names of
/// app/three.py). Without `history`, the pivots of AGENTS.md as it is now.
#[test]
fn the_editor_reads_an_instruction_file_s_history_as_check_does() {
    use support::lsp::{Client, Doc};
    let (_dir, root, commits) = repository();
    let h = json_of(&check(&root, HISTORY_JSON));
    let from_check: Vec<&str> = (h["sessions"].as_array().unwrap().iter())
        .map(|s| s["commit"]["id"].as_str().unwrap())
        .collect();
    let mut c = Client::start_with_options(
        &root,
        serde_json::json!({"pivot": {"history": true, "instructions": "AGENTS.md"}}),
    );
    assert_eq!(c.session_changed(), (3, 4));
    let t = c
        .command("pivot.session.timeline", serde_json::json!({}))
        .unwrap();
    assert_eq!(
        (t["source"].as_str(), t["file"].as_str()),
        (Some("history"), Some("AGENTS.md"))
    );
    let from_editor: Vec<&str> = (t["sessions"].as_array().unwrap().iter())
        .map(|s| s["commit"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(from_editor, from_check);
    assert_eq!(from_editor[0], commits[1].0);

    let three = std::fs::read_to_string(root.join("app/three.py")).unwrap();
    let doc = Doc::open(&mut c, "app/three.py", &three);
    let flagged = |c: &mut Client| -> Vec<String> {
        let mut v: Vec<String> = (c.diagnostics(&doc.uri).iter())
            .map(|d| {
                let m = d["message"].as_str().unwrap();
                m.split('`').nth(1).unwrap_or(m).to_string()
            })
            .collect();
        v.sort();
        v
    };
    // Session 3 (g_): f_three and h_four break it.
    assert_eq!(flagged(&mut c), ["f_three", "h_four"]);
    // Session 1 (f_, and the class rule): h_four and g_five.
    c.command("pivot.session.goto", serde_json::json!({"index": 1}))
        .unwrap();
    assert_eq!(c.session_changed(), (1, 4));
    assert_eq!(flagged(&mut c), ["g_five", "h_four"]);
    c.drain();
    c.shutdown();

    // Without history: AGENTS.md as it is now, one session; and an edit of the file (the
    // editor's file watcher) is read again.
    let mut c = Client::start_with_options(
        &root,
        serde_json::json!({"pivot": {"instructions": "AGENTS.md"}}),
    );
    c.session_changed();
    let _reopened = Doc::open(&mut c, "app/three.py", &three);
    assert_eq!(flagged(&mut c), ["f_three", "h_four"]);
    let agents = root.join("AGENTS.md");
    let text = std::fs::read_to_string(&agents).unwrap();
    write(&agents, &text.replace(FN_G, FN_F));
    c.notify(
        "workspace/didChangeWatchedFiles",
        serde_json::json!({"changes": [{"uri": support::lsp::file_uri(&agents), "type": 2}]}),
    );
    assert_eq!(flagged(&mut c), ["g_five", "h_four"]);
    c.drain();
    c.shutdown();
}
