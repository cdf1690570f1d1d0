//! A language-server client for the headless commands: starts `pivot-lsp serve` as a child
//! process and talks JSON-RPC to it over stdio, as an editor does. A reader thread queues
//! everything the server sends, so the server never blocks on a full pipe while we write.

use crate::lsp::transport::{write_framed, Frame, FramedReader};
use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;
use tower_lsp_server::ls_types::Uri;

/// How long the server may stay silent while we wait for it before we give up.
const SILENCE: Duration = Duration::from_secs(120);

/// One message from the server. Its parameters and result stay raw JSON until a caller
/// reads them, into the type it wants: a stdlib-sized `check` receives 100,000 diagnostics,
/// which are then read once, straight into LSP types, without a `Value` tree in between.
#[derive(Deserialize)]
pub struct Incoming {
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Value>,
}

impl Incoming {
    /// The parameters as `T` (`null` when there are none).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T> {
        let raw = self.params.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(raw).with_context(|| {
            format!(
                "the language server sent {} with parameters that are not what LSP says",
                self.method.as_deref().unwrap_or("a message")
            )
        })
    }
}

pub struct LspClient {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    rx: Receiver<Incoming>,
    next_id: i64,
    /// Responses that came while another one was awaited (requests sent ahead of their
    /// answers may be answered in any order).
    early: std::collections::HashMap<i64, Incoming>,
    /// `window/showMessage` / `logMessage` texts received so far.
    pub messages: Vec<String>,
}

/// `file://` URI of an absolute path.
pub fn uri_of(path: &Path) -> Result<String> {
    Uri::from_file_path(path)
        .map(|u| u.as_str().to_string())
        .ok_or_else(|| anyhow!("{} cannot be written as a file URI", path.display()))
}

impl LspClient {
    /// Start this binary's language server and initialize it with `root`, headless.
    pub fn start(root: &Path) -> Result<LspClient> {
        LspClient::start_with_limit(root, None)
    }

    /// `start`, the server analysing documents of up to `limit` bytes (`check`'s
    /// `--max-file-size`, so that what `check` reads the server checks).
    pub fn start_with_limit(root: &Path, limit: Option<u64>) -> Result<LspClient> {
        let exe = std::env::current_exe().context("cannot find the pivot-lsp binary")?;
        let mut command = Command::new(exe);
        if let Some(bytes) = limit {
            command.env(
                pivot_workspace::document::ANALYSED_LIMIT_VAR,
                bytes.to_string(),
            );
        }
        let mut child = command
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the language server (pivot-lsp serve)")?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take().map(BufWriter::new);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = FramedReader::new(stdout);
            while let Some(frame) = r.next_frame() {
                // What does not parse is skipped, as the server skips it from its clients.
                let Frame::Body(body) = frame else { continue };
                let Ok(v) = serde_json::from_slice::<Incoming>(&body) else {
                    continue;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut c = LspClient {
            child,
            stdin,
            rx,
            next_id: 0,
            early: Default::default(),
            messages: Vec::new(),
        };
        let root_uri = uri_of(root)?;
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        c.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": name}],
                "capabilities": {
                    "textDocument": {"publishDiagnostics": {"versionSupport": true}}
                },
                // Neither the root's `.pivot/` state nor its `pivots.toml` is read at start-up:
                // the pivot sources are only those `pivot/headless/setup` names.
                "initializationOptions": {"pivot": {"headless": true}},
            }),
        )?;
        c.notify("initialized", json!({}))?;
        Ok(c)
    }

    pub fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Send a request and wait for its answer; notifications that arrive meanwhile go to
    /// `on_other`. A JSON-RPC error becomes an error with the server's message.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.request_with(method, params, &mut |_| {})
    }

    pub fn request_with(
        &mut self,
        method: &str,
        params: Value,
        on_other: &mut dyn FnMut(Incoming),
    ) -> Result<Value> {
        self.request_as(method, params, on_other)
    }

    /// [`LspClient::request_with`], its result read straight into `T` (`null` when the
    /// server sent none).
    pub fn request_as<T: DeserializeOwned>(
        &mut self,
        method: &str,
        params: Value,
        on_other: &mut dyn FnMut(Incoming),
    ) -> Result<T> {
        let id = self.send_request(method, params)?;
        self.flush()?;
        self.response_as(id, method, on_other)
    }

    /// Sends a request without waiting for its answer (nor flushing): several can be sent
    /// back to back and their answers read afterwards with [`LspClient::response_as`].
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<i64> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    /// Waits for the answer to request `id` (sent as `method`), read into `T`; other answers
    /// that arrive first are kept for their own call, notifications go to `on_other`.
    pub fn response_as<T: DeserializeOwned>(
        &mut self,
        id: i64,
        method: &str,
        on_other: &mut dyn FnMut(Incoming),
    ) -> Result<T> {
        let msg = loop {
            if let Some(m) = self.early.remove(&id) {
                break m;
            }
            let msg = self.recv()?;
            match (
                msg.method.is_none(),
                msg.id.as_ref().and_then(Value::as_i64),
            ) {
                (true, Some(got)) if got == id => break msg,
                (true, Some(got)) => {
                    self.early.insert(got, msg);
                }
                _ => on_other(msg),
            }
        };
        if let Some(e) = &msg.error {
            let text = e.get("message").and_then(Value::as_str).unwrap_or("");
            bail!("{text}");
        }
        let raw = msg.result.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(raw)
            .with_context(|| format!("the language server's answer to {method}"))
    }

    /// The next message from the server that is not answered here (a request from the
    /// server is answered with null; shown messages are kept in `messages`).
    pub fn recv(&mut self) -> Result<Incoming> {
        loop {
            let msg = match self.rx.recv_timeout(SILENCE) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    bail!(
                        "the language server sent nothing for {}s",
                        SILENCE.as_secs()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    bail!("the language server exited unexpectedly")
                }
            };
            match (msg.method.as_deref(), &msg.id) {
                (Some(_), Some(id)) => {
                    let id = id.clone();
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}))?;
                    self.flush()?;
                }
                (Some("window/showMessage" | "window/logMessage"), None) => {
                    #[derive(Deserialize)]
                    struct Shown {
                        message: String,
                    }
                    if let Ok(t) = msg.params::<Shown>() {
                        self.messages.push(t.message);
                    }
                }
                _ => return Ok(msg),
            }
        }
    }

    fn send(&mut self, v: &Value) -> Result<()> {
        let body = serde_json::to_vec(v)?;
        let w = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("the language server's input is closed"))?;
        write_framed(w, &body).context("writing to the language server")
    }

    pub fn flush(&mut self) -> Result<()> {
        if let Some(w) = self.stdin.as_mut() {
            w.flush().context("writing to the language server")?;
        }
        Ok(())
    }

    /// `shutdown`, `exit`, and wait for the process.
    pub fn finish(mut self) -> Result<()> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        self.flush()?;
        self.stdin = None;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("the language server exited with {status}");
        }
        Ok(())
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        // Only after an error: a server still running is not left behind.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
