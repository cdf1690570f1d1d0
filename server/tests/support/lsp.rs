//! A strict JSON-RPC client for the language server's tests: it queues everything the server
//! sends, and fails when a test ends (or checks for quiet) with a message it did not consume.
//! The server is the real binary over stdio (`Client::start*`: for stdio, framing, hostile
//! input, memory and anything that needs the server's own environment), or the same server
//! in this process over a socket pair (`Client::in_memory*`: the protocol tests, which a
//! debugger can then step into, with no process per test). With it, an editor's view of a
//! document (`Doc`), kept in step with the server through incremental changes.

use super::cli::{repo, EXE};
use pivot_lsp::lsp::transport::{write_framed, Frame, FramedReader};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(20);

/// Where the server runs.
enum Server {
    Process(Child),
    /// `pivot_lsp::lsp::serve` on its own runtime, in a thread of this process.
    InMemory(Option<std::thread::JoinHandle<()>>),
}

impl Server {
    /// Whether the server has ended, and how (`Some(true)`: cleanly).
    fn ended(&mut self) -> Option<bool> {
        match self {
            Server::Process(child) => child.try_wait().unwrap().map(|s| s.success()),
            Server::InMemory(thread) => match thread.take_if(|t| t.is_finished()) {
                Some(t) => Some(t.join().is_ok()),
                None => thread.is_none().then_some(true),
            },
        }
    }
}

pub struct Client {
    server: Server,
    stdin: Option<Box<dyn Write + Send>>,
    rx: Receiver<Value>,
    queue: VecDeque<Value>,
    next_id: i64,
    pub root: PathBuf,
}

/// A file or folder of the checkout, by its path relative to the checkout (canonical).
pub fn fixture(rel: &str) -> PathBuf {
    repo().join(rel).canonicalize().unwrap()
}

pub fn file_uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Read framed messages until the stream ends, with the server's own framer; the server
/// must send nothing else.
fn reader(out: impl Read + Send + 'static) -> Receiver<Value> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut r = FramedReader::new(out);
        while let Some(frame) = r.next_frame() {
            let body = match frame {
                Frame::Body(b) => b,
                Frame::Bad(why) => panic!("the server sent bytes that are not a message: {why}"),
            };
            let v: Value = serde_json::from_slice(&body).expect("the server sends JSON");
            if tx.send(v).is_err() {
                return;
            }
        }
    });
    rx
}

impl Client {
    /// Start the server, initialize with `root` as the workspace folder and send
    /// `initialized`. The `pivot/sessionChanged` sent at start-up is left in the queue.
    pub fn start(root: &Path) -> Client {
        Client::start_with(root, json!({"window": {"workDoneProgress": true}}))
    }

    pub fn start_with(root: &Path, capabilities: Value) -> Client {
        Client::start_full(root, capabilities, Value::Null)
    }

    /// Start with `initializationOptions` (the editor's settings).
    pub fn start_with_options(root: &Path, options: Value) -> Client {
        Client::start_full(root, json!({"window": {"workDoneProgress": true}}), options)
    }

    pub fn start_full(root: &Path, capabilities: Value, options: Value) -> Client {
        Client::start_argv(root, &[], capabilities, options)
    }

    /// Start the binary with these command-line arguments (e.g. `serve --stdio`).
    pub fn start_argv(root: &Path, argv: &[&str], capabilities: Value, options: Value) -> Client {
        Client::start_env(root, argv, &[], capabilities, options)
    }

    /// `start_argv` with variables added to the server's environment.
    pub fn start_env(
        root: &Path,
        argv: &[&str],
        env: &[(&str, &str)],
        capabilities: Value,
        options: Value,
    ) -> Client {
        let mut child = Command::new(EXE)
            .args(argv)
            .envs(env.iter().copied())
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start pivot-lsp");
        let rx = reader(child.stdout.take().unwrap());
        let stdin = child
            .stdin
            .take()
            .map(|s| Box::new(s) as Box<dyn Write + Send>);
        Client::initialize(
            Server::Process(child),
            stdin,
            rx,
            root,
            capabilities,
            options,
        )
    }

    /// The server in this process (`pivot_lsp::lsp::serve` on a socket pair), initialized
    /// as `start` does.
    pub fn in_memory(root: &Path) -> Client {
        Client::in_memory_full(
            root,
            json!({"window": {"workDoneProgress": true}}),
            Value::Null,
        )
    }

    /// `in_memory` with `initializationOptions` (the editor's settings).
    pub fn in_memory_with_options(root: &Path, options: Value) -> Client {
        Client::in_memory_full(root, json!({"window": {"workDoneProgress": true}}), options)
    }

    pub fn in_memory_full(root: &Path, capabilities: Value, options: Value) -> Client {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                theirs.set_nonblocking(true).unwrap();
                let stream = tokio::net::UnixStream::from_std(theirs).unwrap();
                let (input, output) = stream.into_split();
                pivot_lsp::lsp::serve(input, output).await;
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        let rx = reader(ours.try_clone().expect("a second handle"));
        let stdin = Some(Box::new(ours) as Box<dyn Write + Send>);
        let server = Server::InMemory(Some(thread));
        Client::initialize(server, stdin, rx, root, capabilities, options)
    }

    fn initialize(
        server: Server,
        stdin: Option<Box<dyn Write + Send>>,
        rx: Receiver<Value>,
        root: &Path,
        capabilities: Value,
        options: Value,
    ) -> Client {
        let mut c = Client {
            server,
            stdin,
            rx,
            queue: VecDeque::new(),
            // Far from the small ids the fuzz test sends on its own.
            next_id: 1_000_000,
            root: root.to_path_buf(),
        };
        let uri = file_uri(root);
        let init = c
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": "ws"}],
                    "capabilities": capabilities,
                    "initializationOptions": options,
                }),
            )
            .expect("initialize");
        assert_eq!(
            init["capabilities"]["textDocumentSync"]["change"], 2,
            "incremental sync"
        );
        c.notify("initialized", json!({}));
        c
    }

    pub fn send_raw(&mut self, body: &[u8]) {
        if std::env::var_os("LSP_TEST_TRACE").is_some() {
            std::thread::sleep(Duration::from_millis(5));
            if let Some(clean) = self.server.ended() {
                panic!("server ended (cleanly: {clean}) before this message");
            }
            eprintln!(">>> {}", String::from_utf8_lossy(body));
        }
        let stdin = self.stdin.as_mut().expect("stdin open");
        let _ = write_framed(stdin, body);
        let _ = stdin.flush();
    }

    /// Bytes as they are, without framing.
    pub fn send_unframed(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let _ = stdin.write_all(bytes);
        let _ = stdin.flush();
    }

    pub fn send(&mut self, v: &Value) {
        self.send_raw(v.to_string().as_bytes());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn recv(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(v) => Some(v),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// Send a request and wait for its response: `Ok(result)` or `Err(error object)`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// Wait for the response with `id` (it may have been queued while waiting for another),
    /// queueing everything else.
    pub fn response(&mut self, id: i64) -> Result<Value, Value> {
        let deadline = Instant::now() + WAIT;
        let queued =
            (self.queue.iter()).position(|v| v.get("method").is_none() && v["id"] == json!(id));
        let mut queued = queued.and_then(|i| self.queue.remove(i));
        loop {
            let v = queued.take().unwrap_or_else(|| {
                self.recv(deadline)
                    .unwrap_or_else(|| panic!("no response to request {id}"))
            });
            let is_response = v.get("method").is_none() && v["id"] == json!(id);
            if !is_response {
                self.queue.push_back(v);
                continue;
            }
            return match v.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(v["result"].clone()),
            };
        }
    }

    /// Whether the response to `id` has arrived (and is queued), without waiting.
    pub fn has_response(&mut self, id: i64) -> bool {
        while let Ok(v) = self.rx.try_recv() {
            self.queue.push_back(v);
        }
        (self.queue.iter()).any(|v| v.get("method").is_none() && v["id"] == json!(id))
    }

    pub fn command(&mut self, name: &str, args: Value) -> Result<Value, Value> {
        let arguments = if args.is_null() {
            json!([])
        } else {
            json!([args])
        };
        self.request(
            "workspace/executeCommand",
            json!({"command": name, "arguments": arguments}),
        )
    }

    /// The next message with `method` (notification or server request), waiting for it.
    pub fn expect(&mut self, method: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(i) = self.queue.iter().position(|m| m["method"] == method) {
                return self.queue.remove(i).unwrap();
            }
            match self.recv(deadline) {
                Some(v) => self.queue.push_back(v),
                None => panic!("no {method} arrived; queued: {:?}", self.queue),
            }
        }
    }

    /// The next diagnostics published for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = self.queue.iter().position(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
            });
            if let Some(i) = found {
                let m = self.queue.remove(i).unwrap();
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
            match self.recv(deadline) {
                Some(v) => self.queue.push_back(v),
                None => panic!("no diagnostics for {uri}; queued: {:?}", self.queue),
            }
        }
    }

    pub fn session_changed(&mut self) -> (u64, u64) {
        let p = &self.expect("pivot/sessionChanged")["params"];
        (p["index"].as_u64().unwrap(), p["count"].as_u64().unwrap())
    }

    /// Fail if the server sent anything not consumed yet, or sends something within `ms`.
    pub fn assert_quiet(&mut self, ms: u64) {
        let deadline = Instant::now() + Duration::from_millis(ms);
        while let Some(v) = self.recv(deadline) {
            self.queue.push_back(v);
        }
        assert!(
            self.queue.is_empty(),
            "unexpected messages from the server: {:#?}",
            self.queue
        );
    }

    /// Waits `ms`, then removes and counts the messages with `method` received so far.
    pub fn count(&mut self, method: &str, ms: u64) -> usize {
        let deadline = Instant::now() + Duration::from_millis(ms);
        while let Some(v) = self.recv(deadline) {
            self.queue.push_back(v);
        }
        let before = self.queue.len();
        self.queue.retain(|m| m["method"] != method);
        before - self.queue.len()
    }

    /// Drop whatever was received (for the fuzz test, which expects arbitrary replies).
    pub fn drain(&mut self) -> usize {
        let mut n = self.queue.len();
        self.queue.clear();
        while self.rx.try_recv().is_ok() {
            n += 1;
        }
        n
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
    }

    pub fn pid(&self) -> u32 {
        match &self.server {
            Server::Process(child) => child.id(),
            Server::InMemory(_) => panic!("an in-memory server has no process of its own"),
        }
    }

    pub fn is_running(&mut self) -> bool {
        self.server.ended().is_none()
    }

    /// shutdown + exit; asserts nothing unexpected was left and the exit code is 0.
    pub fn shutdown(mut self) {
        self.assert_quiet(0);
        assert_eq!(self.request("shutdown", Value::Null), Ok(Value::Null));
        self.notify("exit", Value::Null);
        self.stdin = None;
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(clean) = self.server.ended() {
                assert!(clean, "the server did not end cleanly");
                break;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Ok(v) = self.rx.try_recv() {
            panic!("unexpected message after shutdown: {v}");
        }
    }
}

impl Client {
    /// shutdown + exit after a test that provoked arbitrary replies: they are dropped.
    pub fn shutdown_after_noise(mut self) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}));
        assert_eq!(self.response(id), Ok(Value::Null));
        self.queue.clear();
        self.notify("exit", Value::Null);
        self.stdin = None;
        let deadline = Instant::now() + WAIT;
        let clean = loop {
            if let Some(clean) = self.server.ended() {
                break clean;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(clean, "the server did not end cleanly");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        match &mut self.server {
            Server::Process(child) => {
                if matches!(child.try_wait(), Ok(None)) {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
            // Closing our end of the socket ends the server's input, and so the server.
            Server::InMemory(_) => self.stdin = None,
        }
    }
}

/// A (line, UTF-16 column) pair of `text`'s byte offset `at`: how an editor counts.
pub fn lsp_pos(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let col: usize = before[start..].encode_utf16().count();
    json!({"line": line, "character": col})
}

/// Apply LSP text edits (non-overlapping, against the same text) to `text`.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let byte = |p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap() as usize;
        let col = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= col || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, usize, String)> = edits
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                byte(&e["range"]["start"]),
                byte(&e["range"]["end"]),
                i,
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.2.cmp(&a.2)));
    let mut out = text.to_string();
    for (s, e, _, t) in spans {
        out.replace_range(s..e, &t);
    }
    out
}

/// An editor's view of one document: its text and version, kept in step with the server.
pub struct Doc {
    pub uri: String,
    pub text: String,
    pub version: i64,
}

impl Doc {
    pub fn open(c: &mut Client, name: &str, text: &str) -> Doc {
        let uri = file_uri(&c.root.join(name));
        c.open(&uri, text);
        Doc {
            uri,
            text: text.to_string(),
            version: 1,
        }
    }

    /// Send `edits` (LSP TextEdits against the current text) as one incremental change,
    /// back to front so each stays valid when applied in order.
    pub fn edit(&mut self, c: &mut Client, edits: &[Value]) {
        let mut sorted: Vec<(usize, &Value)> = edits.iter().enumerate().collect();
        sorted.sort_by(|(i, a), (j, b)| {
            let key = |e: &Value| {
                (
                    e["range"]["start"]["line"].as_u64().unwrap(),
                    e["range"]["start"]["character"].as_u64().unwrap(),
                )
            };
            key(b).cmp(&key(a)).then(j.cmp(i))
        });
        let changes: Vec<Value> = sorted
            .iter()
            .map(|(_, e)| json!({"range": e["range"], "text": e["newText"]}))
            .collect();
        self.text = apply_edits(&self.text, edits);
        self.version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": changes}),
        );
    }

    /// `textDocument/hover` at the first `needle` of the text.
    pub fn hover(&self, c: &mut Client, needle: &str) -> Value {
        c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": self.uri}, "position": self.at(needle)}),
        )
        .unwrap()
    }

    pub fn at(&self, needle: &str) -> Value {
        lsp_pos(&self.text, self.text.find(needle).unwrap())
    }

    pub fn range_of(&self, needle: &str) -> Value {
        let s = self.text.find(needle).unwrap();
        json!({"start": lsp_pos(&self.text, s), "end": lsp_pos(&self.text, s + needle.len())})
    }
}

/// The error a request must have ended with: (code, message).
pub fn error_of(r: Result<Value, Value>) -> (i64, String) {
    let e = r.expect_err("an error");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

/// A command run with a work-done token: its result and the `$/progress` end message.
pub fn with_progress(
    c: &mut Client,
    command: &str,
    args: Value,
    token: &str,
) -> (Result<Value, Value>, String) {
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [args], "workDoneToken": token}),
    );
    let begin = c.expect("$/progress");
    assert_eq!(begin["params"]["token"], token);
    assert_eq!(begin["params"]["value"]["kind"], "begin", "{begin}");
    let end = c.expect("$/progress");
    assert_eq!(end["params"]["token"], token);
    assert_eq!(end["params"]["value"]["kind"], "end", "{end}");
    (
        r,
        end["params"]["value"]["message"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}
