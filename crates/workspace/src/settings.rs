//! The editor's settings for running tests and playing ConvCodeWorld, read from the `pivot`
//! object of `initializationOptions` (and of `workspace/didChangeConfiguration`):
//!
//! ```json
//! {"pivot": {"python": "python3", "problems": "humaneval", "testTimeout": 30,
//!            "sandbox": "bwrap" /* default; "none" runs model code unconfined */,
//!            "simulator": {"baseUrl": "http://host/v1", "model": "gpt-4o",
//!                          "apiKey": "...", "endpoint": "chat"},
//!            "history": false /* true: pivots.toml's sessions are the commits that changed it */,
//!            "instructions": "AGENTS.md" /* the workspace's pivots from this instruction file */,
//!            "severity": "warning" /* of pivot findings: "error" for agents that read errors only */,
//!            "logLevel": "warn" /* the server's log on stderr: error|warn|info|debug|trace|off */}}
//! ```
//!
//! The keys may also sit at the top level, and `endpoint` is read like `simulator`: the
//! shape the bundled VS Code and Neovim clients send. `PIVOT_PYTHON` in the server's
//! environment is the default interpreter.

use anyhow::{bail, Result};
use pivot_exec::SandboxMode;
use pivot_llm::EndpointKind;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Interpreter that runs the tests (a venv's python works).
    pub python: PathBuf,
    /// `humaneval` (found through `python`) or a BigCodeBench / HumanEval JSONL path.
    pub problems: String,
    /// Wall time of one test run.
    pub test_timeout: Duration,
    /// The feedback simulator for novice and expert feedback.
    pub simulator: Option<Simulator>,
    /// How model code is contained: bubblewrap (default; refuses when it does not work) or
    /// none (the explicit opt-out).
    pub sandbox: SandboxMode,
    /// The sessions of `pivots.toml` are the commits that changed it (read with git), not
    /// its hand-written session numbers.
    pub history: bool,
    /// An instruction file (`AGENTS.md`, `CLAUDE.md`, ...; relative to the root) the
    /// workspace's pivots are read from, as `pivots import` proposes them, in place of
    /// `pivots.toml` (None: pivots.toml).
    pub instructions: Option<String>,
    /// The severity pivot findings are published with (warning by default). Coding agents
    /// that feed diagnostics back to their model pass on errors only (OpenCode's write and
    /// edit tools), so an agent's configuration asks for `error`.
    pub pivot_severity: crate::reported::Severity,
    /// The server's log level, when a client set one (else `PIVOT_LOG`'s stays).
    pub log_level: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Simulator {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub kind: EndpointKind,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            python: std::env::var_os("PIVOT_PYTHON")
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            problems: "humaneval".into(),
            test_timeout: pivot_exec::time_limit::default(),
            simulator: None,
            sandbox: SandboxMode::Bwrap,
            history: false,
            instructions: None,
            pivot_severity: crate::reported::Severity::Warning,
            log_level: None,
        }
    }
}

impl Settings {
    /// Applies the `pivot` object of `v` (or `v` itself when it has no `pivot` key). Keys not
    /// given keep their value; unknown keys are ignored (other tools share the object); a
    /// wrong type is an error naming the setting, and then nothing is changed.
    pub fn update(&mut self, v: &Value, root: Option<&Path>) -> Result<()> {
        let v = v.get("pivot").unwrap_or(v);
        let Some(o) = v.as_object() else {
            return Ok(());
        };
        let mut next = self.clone();
        if let Some(p) = text(o, "python")? {
            next.python = PathBuf::from(p);
        }
        if let Some(p) = text(o, "problems")? {
            // A relative path is the workspace's; `humaneval` stays a name.
            next.problems = match root {
                Some(r) if !p.eq_ignore_ascii_case("humaneval") && Path::new(&p).is_relative() => {
                    r.join(p).display().to_string()
                }
                _ => p,
            };
        }
        if let Some(t) = o.get("testTimeout").filter(|t| !t.is_null()) {
            next.test_timeout = t
                .as_f64()
                .ok_or_else(|| format!("got {t}"))
                .and_then(pivot_exec::time_limit::checked)
                .map_err(|e| anyhow::anyhow!("setting pivot.testTimeout: {e}"))?;
        }
        if let Some(sb) = text(o, "sandbox")? {
            next.sandbox = match sb.as_str() {
                "bwrap" => SandboxMode::Bwrap,
                "none" => SandboxMode::None,
                other => {
                    bail!("setting pivot.sandbox must be \"bwrap\" or \"none\", got {other:?}")
                }
            };
        }
        match o.get("history") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(h)) => next.history = *h,
            Some(other) => bail!("setting pivot.history must be true or false, got {other}"),
        }
        match o.get("instructions") {
            None | Some(Value::Null) => {}
            Some(Value::String(p)) if p.trim().is_empty() => next.instructions = None,
            Some(Value::String(p)) => next.instructions = Some(instructions_path(p)?),
            Some(other) => {
                bail!("setting pivot.instructions must be a path (a string), got {other}")
            }
        }
        if let Some(sev) = text(o, "severity")? {
            use crate::reported::Severity;
            next.pivot_severity = match sev.trim().to_ascii_lowercase().as_str() {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "information" => Severity::Information,
                other => bail!(
                    "setting pivot.severity must be \"error\", \"warning\" or \"information\", got {other:?}"
                ),
            };
        }
        if let Some(l) = text(o, "logLevel")? {
            const LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];
            let l = l.trim().to_ascii_lowercase();
            if !LEVELS.contains(&l.as_str()) {
                bail!(
                    "setting pivot.logLevel must be one of {}, got {l:?}",
                    LEVELS.join(", ")
                );
            }
            next.log_level = Some(l);
        }
        let key = if o.contains_key("simulator") {
            "simulator"
        } else {
            "endpoint"
        };
        match o.get(key) {
            None => {}
            Some(Value::Null) => next.simulator = None,
            Some(Value::Object(s)) => next.simulator = simulator(key, s)?,
            Some(other) => bail!("setting pivot.{key} must be an object, got {other}"),
        }
        *self = next;
        Ok(())
    }
}

/// The `instructions` setting's file: a path inside the workspace root, relative to it (its
/// history is read from git by that path), `/`-separated.
fn instructions_path(p: &str) -> Result<String> {
    let path = Path::new(p.trim());
    use std::path::Component::{CurDir, Normal};
    let inside = path.components().all(|c| matches!(c, Normal(_) | CurDir))
        && path.components().any(|c| matches!(c, Normal(_)));
    if !inside {
        bail!(
            "setting pivot.instructions must be a path relative to the workspace root, inside \
             it (e.g. \"AGENTS.md\"), got {p:?}"
        );
    }
    let parts: Vec<String> = (path.components())
        .filter(|c| matches!(c, Normal(_)))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

fn text(o: &Map<String, Value>, k: &str) -> Result<Option<String>> {
    match o.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(other) => bail!("setting pivot.{k} must be a non-empty string, got {other}"),
    }
}

/// The simulator endpoint; `None` when neither its URL nor its model is set (a client
/// sending its empty settings).
fn simulator(key: &str, s: &Map<String, Value>) -> Result<Option<Simulator>> {
    let get = |k: &str| -> Result<Option<String>> {
        match s.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) if v.trim().is_empty() => Ok(None),
            Some(Value::String(v)) => Ok(Some(v.clone())),
            Some(other) => bail!("setting pivot.{key}.{k} must be a string, got {other}"),
        }
    };
    let (base_url, model) = match (get("baseUrl")?, get("model")?) {
        (None, None) => return Ok(None),
        (Some(b), Some(m)) => (b, m),
        _ => bail!("setting pivot.{key} needs both \"baseUrl\" and \"model\""),
    };
    let kind = match get("endpoint")?.as_deref() {
        None | Some("chat") => EndpointKind::Chat,
        Some("completions") => EndpointKind::Completions,
        Some(other) => {
            bail!("setting pivot.{key}.endpoint must be \"chat\" or \"completions\", got {other:?}")
        }
    };
    Ok(Some(Simulator {
        base_url,
        model,
        // The usual variable, as for the CLI, when the settings hold no key.
        api_key: get("apiKey")?.or_else(|| std::env::var("OPENAI_API_KEY").ok()),
        kind,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_pivot_object_and_rejects_wrong_types_whole() {
        let mut s = Settings::default();
        s.update(
            &json!({"pivot": {"python": "/venv/bin/python", "problems": "p.jsonl", "testTimeout": 2.5,
                "simulator": {"baseUrl": "http://h/v1", "model": "m", "apiKey": "k", "endpoint": "completions"}}}),
            Some(Path::new("/ws")),
        )
        .unwrap();
        assert_eq!(s.python, PathBuf::from("/venv/bin/python"));
        assert_eq!(s.problems, "/ws/p.jsonl");
        assert_eq!(s.test_timeout, Duration::from_millis(2500));
        let sim = s.simulator.clone().unwrap();
        assert_eq!(
            (sim.model.as_str(), sim.kind),
            ("m", EndpointKind::Completions)
        );
        assert_eq!(sim.api_key.as_deref(), Some("k"));

        let before = s.clone();
        let e = s
            .update(&json!({"python": "py", "testTimeout": -1}), None)
            .unwrap_err();
        assert!(e.to_string().contains("pivot.testTimeout"), "{e}");
        assert_eq!(s, before, "a bad update changes nothing");
        let e = s
            .update(&json!({"simulator": {"baseUrl": "x"}}), None)
            .unwrap_err();
        assert!(
            e.to_string().contains("both \"baseUrl\" and \"model\""),
            "{e}"
        );
        s.update(&json!({"simulator": null, "problems": "HumanEval"}), None)
            .unwrap();
        assert!(s.simulator.is_none());
        assert_eq!(s.problems, "HumanEval");
        // Not an object: nothing to apply.
        s.update(&json!(null), None).unwrap();
        // The editors' shape: top-level keys, `endpoint` for the simulator, nulls when unset.
        s.update(
            &json!({"python": null, "endpoint": {"baseUrl": null, "model": null, "apiKey": null}}),
            None,
        )
        .unwrap();
        assert!(s.simulator.is_none());
        s.update(
            &json!({"python": "/v/python", "endpoint": {"baseUrl": "http://e/v1", "model": "x", "apiKey": null}}),
            None,
        )
        .unwrap();
        assert_eq!(s.python, PathBuf::from("/v/python"));
        assert_eq!(s.simulator.unwrap().base_url, "http://e/v1");
    }

    #[test]
    fn sandbox_defaults_to_bwrap_and_accepts_only_the_two_modes() {
        let mut s = Settings::default();
        assert_eq!(s.sandbox, SandboxMode::Bwrap);
        s.update(&json!({"pivot": {"sandbox": "none"}}), None)
            .unwrap();
        assert_eq!(s.sandbox, SandboxMode::None);
        let e = s.update(&json!({"sandbox": "auto"}), None).unwrap_err();
        assert!(e.to_string().contains("pivot.sandbox"), "{e}");
        assert_eq!(s.sandbox, SandboxMode::None);
    }

    #[test]
    fn history_is_off_by_default_and_a_bool() {
        let mut s = Settings::default();
        assert!(!s.history);
        s.update(&json!({"pivot": {"history": true}}), None)
            .unwrap();
        assert!(s.history);
        let e = s.update(&json!({"history": "yes"}), None).unwrap_err();
        assert!(e.to_string().contains("pivot.history"), "{e}");
        s.update(&json!({"history": null}), None).unwrap();
        assert!(s.history, "null keeps the value");
    }

    #[test]
    fn instructions_is_a_path_inside_the_root() {
        let mut s = Settings::default();
        assert_eq!(s.instructions, None);
        s.update(&json!({"pivot": {"instructions": "docs/AGENTS.md"}}), None)
            .unwrap();
        assert_eq!(s.instructions.as_deref(), Some("docs/AGENTS.md"));
        for bad in ["/etc/AGENTS.md", "../AGENTS.md", "a/../../b.md", "."] {
            let e = s.update(&json!({"instructions": bad}), None).unwrap_err();
            assert!(e.to_string().contains("pivot.instructions"), "{bad}: {e}");
        }
        assert_eq!(s.instructions.as_deref(), Some("docs/AGENTS.md"));
        s.update(&json!({"instructions": "./CLAUDE.md"}), None)
            .unwrap();
        assert_eq!(s.instructions.as_deref(), Some("CLAUDE.md"));
        s.update(&json!({"instructions": "docs/AGENTS.md"}), None)
            .unwrap();
        s.update(&json!({"instructions": null}), None).unwrap();
        assert_eq!(
            s.instructions.as_deref(),
            Some("docs/AGENTS.md"),
            "null keeps it"
        );
        s.update(&json!({"instructions": ""}), None).unwrap();
        assert_eq!(s.instructions, None, "empty: pivots.toml again");
    }

    #[test]
    fn severity_is_one_of_three() {
        use crate::reported::Severity;
        let mut s = Settings::default();
        assert_eq!(s.pivot_severity, Severity::Warning);
        s.update(&json!({"pivot": {"severity": "Error"}}), None)
            .unwrap();
        assert_eq!(s.pivot_severity, Severity::Error);
        let e = s.update(&json!({"severity": "fatal"}), None).unwrap_err();
        assert!(e.to_string().contains("pivot.severity"), "{e}");
        assert_eq!(s.pivot_severity, Severity::Error);
    }

    #[test]
    fn log_level_is_one_of_the_levels() {
        let mut s = Settings::default();
        assert_eq!(s.log_level, None);
        s.update(&json!({"logLevel": "Debug"}), None).unwrap();
        assert_eq!(s.log_level.as_deref(), Some("debug"));
        let e = s.update(&json!({"logLevel": "loud"}), None).unwrap_err();
        assert!(e.to_string().contains("pivot.logLevel"), "{e}");
        assert_eq!(s.log_level.as_deref(), Some("debug"));
    }
}
