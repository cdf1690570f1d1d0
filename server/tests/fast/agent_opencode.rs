//! Pivot LSP as the language server of a real coding agent: OpenCode (npm `opencode-ai`,
//! pinned as scripts/test installs it into target/tools/opencode; `PIVOT_OPENCODE` names its
//! binary), run headless (`opencode run`) against the loopback model server (`pivot-lsp
//! model-server` with fixtures/agents/opencode/script.json), with the `opencode.json` that
//! docs/agents.md shows. The scripted model writes a file that breaks a pivot; its next
//! request must carry Pivot LSP's diagnostic (read from the model server's request log);
//! the scripted fix clears it.

use crate::history::git;
use crate::support;

use pivot_test_support::test_skip::skip;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::cli::{repo, target_dir, EXE};
use support::files::write;
use support::model_server::DemoServer;

/// The version scripts/test installs.
const OPENCODE: &str = "opencode-ai@1.18.33";

fn opencode() -> Result<PathBuf, String> {
    let p = match std::env::var_os("PIVOT_OPENCODE") {
        Some(p) => PathBuf::from(p),
        None => target_dir().join("tools/opencode/node_modules/.bin/opencode"),
    };
    match p.exists() {
        true => Ok(p),
        false => Err(format!(
            "no OpenCode at {} (scripts/test installs {OPENCODE} there; or set PIVOT_OPENCODE)",
            p.display()
        )),
    }
}

/// The try-out's `opencode.json` from docs/agents.md (the block that configures the
/// loopback model), pointed at `base_url`.
fn config_from_docs(base_url: &str) -> String {
    let doc = std::fs::read_to_string(repo().join("docs/agents.md")).unwrap();
    let block = doc
        .split("```json\n")
        .skip(1)
        .filter_map(|b| b.split("\n```").next())
        .find(|b| b.contains("\"loopback\"") && b.contains("\"lsp\""))
        .expect("docs/agents.md shows the try-out's opencode.json");
    assert!(block.contains("http://127.0.0.1:8000/v1"), "{block}");
    block.replace("http://127.0.0.1:8000/v1", base_url)
}

#[test]
fn opencode_reads_the_pivot_diagnostic_after_its_write_and_the_fix_clears_it() {
    let bin = match opencode() {
        Ok(b) => b,
        Err(why) => return skip(&why),
    };
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    write(
        &project.join("pivots.toml"),
        "[[pivot]]\nid = \"fn-prefix\"\n[[pivot.version]]\ntext = \"start function names with f_\"\nkind = \"function\"\nrule = \"^f_\"\n",
    );
    git(&project, &["init", "-q", "-b", "main"]);

    // The model server on a free port, its requests logged.
    let log = tmp.path().join("requests.jsonl");
    let server =
        DemoServer::start_logged(&repo().join("fixtures/agents/opencode/script.json"), &log);
    let url = server.url.clone();
    write(&project.join("opencode.json"), &config_from_docs(&url));

    // `pivot-lsp` on PATH is the binary under test, as the configuration names it.
    let bin_dir = Path::new(EXE).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut agent = Command::new(&bin)
        .args(["run", "Write calc.py: a function that sums a list."])
        .current_dir(&project)
        // OpenCode takes its project from PWD, which the working folder alone leaves as
        // this test's.
        .env("PWD", &project)
        .env("PATH", path)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        // Offline: no update check, no model catalogue from the network.
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = agent.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = agent.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = agent.wait_with_output().unwrap();
    drop(server);
    // What OpenCode printed, and the end of its own log (XDG_DATA_HOME/opencode/log).
    let mut said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(logs) = std::fs::read_dir(home.join(".local/share/opencode/log")) {
        for l in logs.flatten() {
            let text = std::fs::read_to_string(l.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(60).collect();
            said.push_str(&format!(
                "\n--- {}:\n{}",
                l.path().display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(
        status.is_some_and(|s| s.success()),
        "opencode run ended with {status:?} (killed after 300 s if None): {said}"
    );

    let requests: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rules: Vec<&str> = (requests.iter())
        .map(|r| r["rule"].as_str().unwrap_or("(default)"))
        .collect();
    // The model's request after the first write carries the pivot's diagnostic, exactly as
    // Pivot LSP words it; the one after the fix carries none.
    let fix = (requests.iter())
        .position(|r| r["rule"] == "fix")
        .unwrap_or_else(|| panic!("no request carried a diagnostic: rules {rules:?}\n{said}"));
    let prompt = requests[fix]["prompt"].as_str().unwrap();
    assert!(
        prompt.contains(
            "`total` does not match — \"start function names with f_\" (function: names must match `^f_`; given at session 0)"
        ),
        "{prompt}"
    );
    let done = (requests.iter().skip(fix + 1))
        .find(|r| r["rule"] == "done")
        .unwrap_or_else(|| panic!("no request after the fix: rules {rules:?}"));
    let after = done["prompt"].as_str().unwrap();
    assert!(
        after.contains("Wrote file successfully.") && !after.contains("LSP errors detected"),
        "{after}"
    );
    let code = std::fs::read_to_string(project.join("calc.py")).unwrap();
    assert_eq!(code, "def f_total(xs):\n    return sum(xs)\n");
    eprintln!("OpenCode's requests, by rule: {rules:?}");
}
