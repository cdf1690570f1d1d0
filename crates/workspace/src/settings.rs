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
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
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

/// The settings object as the server reads it: `initializationOptions.pivot` (or the
/// object itself) and `workspace/didChangeConfiguration`'s. Every key may be left out or
/// `null`, which keeps its value; keys of other tools sharing the object are ignored. Its
/// JSON schema is the `settings` entry of `editors/schema/commands.schema.json`, from which
/// the editors' types of what they send are generated.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsObject {
    /// The interpreter that runs the tests (a venv's python works); default `PIVOT_PYTHON`,
    /// else `python3`.
    pub python: Option<String>,
    /// `humaneval` (found through `python`) or a BigCodeBench / HumanEval JSONL file,
    /// relative to the workspace root.
    pub problems: Option<String>,
    /// Wall time of one test run, in seconds.
    pub test_timeout: Option<f64>,
    /// How model code is contained: `bwrap` (the default) or `none` (unconfined).
    pub sandbox: Option<SandboxSetting>,
    /// pivots.toml's sessions are the commits that changed it.
    pub history: Option<bool>,
    /// An instruction file (`AGENTS.md`, ...) relative to the root, read in place of
    /// pivots.toml; `""` reads pivots.toml again.
    pub instructions: Option<String>,
    /// The severity pivot findings are published with: `error`, `warning` (the default) or
    /// `information`, in any case.
    pub severity: Option<String>,
    /// The server's log on stderr: `error`, `warn`, `info`, `debug`, `trace` or `off`.
    pub log_level: Option<String>,
    /// The feedback simulator's endpoint; `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<EndpointObject>")]
    pub simulator: Option<Option<EndpointObject>>,
    /// `simulator` under the name the bundled clients send.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<EndpointObject>")]
    pub endpoint: Option<Option<EndpointObject>>,
}

/// `sandbox`'s two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    Bwrap,
    None,
}

/// An OpenAI-compatible endpoint: both `baseUrl` and `model`, or neither (no simulator).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointObject {
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Else `OPENAI_API_KEY` of the server's environment.
    pub api_key: Option<String>,
    /// `chat` (the default) or `completions`.
    pub endpoint: Option<String>,
}

/// A key given as `null` (`Some(None)`) apart from one left out (`None`).
fn present<'de, D, T>(d: D) -> std::result::Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl Settings {
    /// Applies the `pivot` object of `v` (or `v` itself when it has no `pivot` key), read as a
    /// [`SettingsObject`]. Keys not given keep their value; unknown keys are ignored (other
    /// tools share the object); a wrong value is an error naming the setting, and then
    /// nothing is changed.
    pub fn update(&mut self, v: &Value, root: Option<&Path>) -> Result<()> {
        let v = v.get("pivot").unwrap_or(v);
        if !v.is_object() {
            return Ok(());
        }
        let o: SettingsObject = serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            anyhow::anyhow!("setting pivot.{path}: {}", e.into_inner())
        })?;
        let mut next = self.clone();
        if let Some(p) = text("python", o.python)? {
            next.python = PathBuf::from(p);
        }
        if let Some(p) = text("problems", o.problems)? {
            // A relative path is the workspace's; `humaneval` stays a name.
            next.problems = match root {
                Some(r) if !p.eq_ignore_ascii_case("humaneval") && Path::new(&p).is_relative() => {
                    r.join(p).display().to_string()
                }
                _ => p,
            };
        }
        if let Some(t) = o.test_timeout {
            next.test_timeout = pivot_exec::time_limit::checked(t)
                .map_err(|e| anyhow::anyhow!("setting pivot.testTimeout: {e}"))?;
        }
        if let Some(sb) = o.sandbox {
            next.sandbox = match sb {
                SandboxSetting::Bwrap => SandboxMode::Bwrap,
                SandboxSetting::None => SandboxMode::None,
            };
        }
        if let Some(h) = o.history {
            next.history = h;
        }
        match o.instructions {
            None => {}
            Some(p) if p.trim().is_empty() => next.instructions = None,
            Some(p) => next.instructions = Some(instructions_path(&p)?),
        }
        if let Some(sev) = text("severity", o.severity)? {
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
        if let Some(l) = text("logLevel", o.log_level)? {
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
        // `simulator` wins when both are given, as it always has.
        let (key, given) = match o.simulator {
            Some(s) => ("simulator", Some(s)),
            None => ("endpoint", o.endpoint),
        };
        match given {
            None => {}
            Some(None) => next.simulator = None,
            Some(Some(s)) => next.simulator = simulator(key, s)?,
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

/// A string setting: `None` when not given; an empty one is an error naming the setting.
fn text(k: &str, v: Option<String>) -> Result<Option<String>> {
    match v {
        Some(s) if s.trim().is_empty() => {
            bail!("setting pivot.{k} must be a non-empty string, got {s:?}")
        }
        v => Ok(v),
    }
}

/// The simulator endpoint; `None` when neither its URL nor its model is set (a client
/// sending its empty settings).
fn simulator(key: &str, s: EndpointObject) -> Result<Option<Simulator>> {
    let given = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let (base_url, model) = match (given(s.base_url), given(s.model)) {
        (None, None) => return Ok(None),
        (Some(b), Some(m)) => (b, m),
        _ => bail!("setting pivot.{key} needs both \"baseUrl\" and \"model\""),
    };
    let kind = match given(s.endpoint).as_deref() {
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
        api_key: given(s.api_key).or_else(|| std::env::var("OPENAI_API_KEY").ok()),
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

    /// Every key the schema names is read, and changes its setting: the schema the editors'
    /// types come from is the reader's own.
    #[test]
    fn every_key_of_the_schema_is_read() {
        let schema = schemars::schema_for!(SettingsObject).to_value();
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let value = |k: &str| match k {
            "python" => json!("/v/python"),
            "problems" => json!("/p.jsonl"),
            "testTimeout" => json!(7),
            "sandbox" => json!("none"),
            "history" => json!(true),
            "instructions" => json!("AGENTS.md"),
            "severity" => json!("error"),
            "logLevel" => json!("debug"),
            "simulator" | "endpoint" => json!({"baseUrl": "http://h/v1", "model": k}),
            other => panic!("the schema names {other}, which this test does not know"),
        };
        for k in keys {
            let mut s = Settings::default();
            let before = s.clone();
            s.update(&json!({ k.as_str(): value(k) }), None).unwrap();
            assert_ne!(s, before, "{k} changed nothing");
        }
        let mut s = Settings::default();
        s.update(&json!({"otherTool": {"x": 1}}), None).unwrap();
        assert_eq!(s, Settings::default(), "keys of other tools are ignored");
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
