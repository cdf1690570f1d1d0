//! A loopback OpenAI-compatible server for tests and benchmarks, scripted by a JSON fixture.
//! Answers are chosen by what the prompt contains (so they are a function of the prompt and a
//! rerun or resumed run sees the same answers); transient failures (429, 5xx, a stall longer
//! than the client's timeout) are injected on the first requests a rule matches.
//!
//! Fixture shape:
//! ```json
//! {"api_key": "optional; other keys get 401",
//!  "rules": [{"name": "r1", "contains": ["def f("], "not_contains": [], "endpoint": "chat",
//!             "ends_with": "Code:",               // the prompt's end (a continuation's cue)
//!             "turns": [2],                       // only while the server is at these turns
//!             "body_contains": ["\"tools\""],   // the whole request body must hold these
//!             "code": "def f(): ...",         // or "feedback": "...", "reply": "raw text",
//!                                             //    "body": "raw HTTP body", "status": 401,
//!                                             //    "tool_call": {"name": "write",
//!                                             //                  "arguments": {...}}
//!             "fail_first": [{"status": 429}, {"stall_ms": 3000}]}],
//!  "default": {"reply": "..."}}
//! ```
//!
//! A chat request's prompt is its last message's text (a tool result's too, so a rule can
//! answer what an agent's tool reported); a request with `"stream": true` is answered as
//! server-sent events (`chat.completion.chunk`s, then `data: [DONE]`), as a coding agent
//! reads its model.
//!
//! The turn a rule may be limited to is set by [`LoopbackServer::set_turn`] (a test's observer
//! on each stage) or by `POST /turn` with the number as the body (an external driver), so a
//! rule can answer without `Code:` at one given turn only.

use crate::wire::{
    ChunkChoice, ChunkReply, CompletionReply, Delta, DocumentText, ErrorBody, ErrorReply,
    FunctionCall, RankedDocument, RerankReply, ToolCallOut,
};
use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use serde::Deserialize;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// A `generated_code` answer: a rationale, then `Code:` and the code in a python fence.
    #[serde(default)]
    pub code: Option<String>,
    /// A `user_feedback` answer: a rationale, then `User Feedback:` and the text.
    #[serde(default)]
    pub feedback: Option<String>,
    /// The completion text as is.
    #[serde(default)]
    pub reply: Option<String>,
    /// The HTTP body as is (for malformed JSON).
    #[serde(default)]
    pub body: Option<String>,
    /// HTTP status (default 200).
    #[serde(default)]
    pub status: Option<u16>,
    /// A tool call (chat only): the model asks its agent to run a tool.
    #[serde(default)]
    pub tool_call: Option<ToolCall>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub name: String,
    /// The tool's arguments (sent as their JSON text, as OpenAI does).
    #[serde(default)]
    pub arguments: Value,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    #[serde(default)]
    pub status: Option<u16>,
    /// Wait this long before answering (longer than the client's timeout = a timeout).
    #[serde(default)]
    pub stall_ms: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub contains: Vec<String>,
    #[serde(default)]
    pub not_contains: Vec<String>,
    /// `chat` or `completions`; any when absent.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The prompt must end with this text.
    #[serde(default)]
    pub ends_with: Option<String>,
    /// The whole request body must contain each (e.g. `"tools"`: a request offering tools,
    /// which an agent's side requests, such as its title's, do not).
    #[serde(default)]
    pub body_contains: Vec<String>,
    /// Only at these turns (see [`LoopbackServer::set_turn`]); any turn when empty.
    #[serde(default)]
    pub turns: Vec<usize>,
    #[serde(flatten)]
    pub answer: Answer,
    #[serde(default)]
    pub fail_first: Vec<Failure>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub default: Answer,
}

impl Script {
    pub fn load(path: &std::path::Path) -> Result<Script> {
        let text = pivot_base::bounded_read::read_to_string(path)
            .with_context(|| format!("cannot read server script {}", path.display()))?;
        Script::parse(&text, &path.display().to_string())
    }

    /// A script from its JSON text; `origin` names it in the error.
    pub fn parse(text: &str, origin: &str) -> Result<Script> {
        serde_json::from_str(text).with_context(|| format!("bad server script {origin}"))
    }
}

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub endpoint: String,
    pub prompt: String,
    /// The request body as sent (`Null` when it was not JSON).
    pub body: Value,
    /// The request body's bytes, for byte-for-byte comparisons.
    pub raw: Vec<u8>,
    pub rule: Option<String>,
    pub status: u16,
}

/// Called once per request with what was asked and answered (the command's log).
pub type OnRequest = Arc<dyn Fn(&Seen) + Send + Sync>;

struct State {
    script: Script,
    fired: Mutex<Vec<usize>>,
    seen: Mutex<Vec<Seen>>,
    turn: AtomicUsize,
    /// When set, requests go to the callback instead of `seen` (a long-running server must
    /// not keep every prompt in memory).
    on_request: Option<OnRequest>,
    /// Whether requests are kept for [`LoopbackServer::seen`] (a long run as a model
    /// stand-in does not need them).
    record: AtomicBool,
}

/// A running server; stops when dropped.
pub struct LoopbackServer {
    addr: std::net::SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The largest request body read; a longer one is answered 413 (a prompt is far smaller).
const MAX_BODY: usize = 64 << 20;

type Reply = hyper::Response<Full<Bytes>>;

impl LoopbackServer {
    pub fn start(script: Script) -> Result<LoopbackServer> {
        Self::start_on(script, 0, None)
    }

    /// Listen on 127.0.0.1:`port` (0: any free port); each request is passed to `on_request`
    /// when given (and then not kept for [`LoopbackServer::seen`]).
    pub fn start_on(
        script: Script,
        port: u16,
        on_request: Option<OnRequest>,
    ) -> Result<LoopbackServer> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let n = script.rules.len();
        let state = Arc::new(State {
            script,
            fired: Mutex::new(vec![0; n]),
            seen: Mutex::new(Vec::new()),
            turn: AtomicUsize::new(0),
            on_request,
            record: AtomicBool::new(true),
        });
        // hyper's HTTP/1.1 (keep-alive, pipelining, bounded reads) on a runtime of its own
        // thread: the server's work per request is small, and a scripted stall is a timer,
        // not a blocked thread.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("starting the loopback server's runtime")?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                tokio::spawn(accept(listener, st));
                let _ = stopped.await;
            });
            // Dropping the runtime here ends every connection still open.
        });
        Ok(LoopbackServer {
            addr,
            state,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Base URL in the OpenAI convention (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The turn rules with `turns` are matched against (0 until set).
    pub fn set_turn(&self, turn: usize) {
        self.state.turn.store(turn, Ordering::SeqCst);
    }

    /// Keep requests for [`LoopbackServer::seen`] (the default) or not.
    pub fn set_recording(&self, on: bool) {
        self.state.record.store(on, Ordering::SeqCst);
    }

    /// Requests seen so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.state
            .seen
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

async fn accept(listener: tokio::net::TcpListener, st: Arc<State>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: wait a little rather than spin on the error.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        // Head and body go out in two writes: without this, Nagle's algorithm holds the body
        // until the client's delayed ACK (40 ms a request on Linux).
        let _ = stream.set_nodelay(true);
        let st = st.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let st = st.clone();
                async move { Ok::<_, std::convert::Infallible>(serve(req, &st).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Answers one request.
async fn serve(request: hyper::Request<hyper::body::Incoming>, st: &State) -> Reply {
    let path = request.uri().path().to_string();
    let auth = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string());
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(e) => {
            let e =
                format!("the request body could not be read whole (at most {MAX_BODY} bytes): {e}");
            return reply(413, ErrorReply::text(e));
        }
    };
    if path.ends_with("/turn") {
        let turn = std::str::from_utf8(&body)
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        return match turn {
            Some(t) => {
                st.turn.store(t, Ordering::SeqCst);
                #[derive(serde::Serialize)]
                struct Turn {
                    turn: usize,
                }
                reply(
                    200,
                    serde_json::to_string(&Turn { turn: t }).unwrap_or_default(),
                )
            }
            None => reply(400, ErrorReply::text("body must be a turn number")),
        };
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if path.ends_with("/rerank") {
        let (status, text) = rerank(&req);
        if let Some(mut seen) = recorder(st) {
            seen.push(Seen {
                endpoint: "rerank".into(),
                prompt: req["query"].as_str().unwrap_or("").to_string(),
                body: req.clone(),
                raw: body,
                rule: None,
                status,
            });
        }
        return reply(status, text);
    }
    let endpoint = if path.ends_with("/chat/completions") {
        "chat"
    } else {
        "completions"
    };
    let prompt = if endpoint == "chat" {
        // The last message: the user's prompt after any system preamble, or a tool's result.
        (req.get("messages").and_then(Value::as_array))
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .map(message_text)
            .unwrap_or_default()
    } else {
        req.get("prompt")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let stream = req.get("stream").and_then(Value::as_bool) == Some(true);
    let raw = String::from_utf8_lossy(&body);
    let asked = Asked {
        endpoint,
        prompt: &prompt,
        body: &raw,
        stream,
        model: req
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("loopback"),
    };
    let (status, text, rule, stall) = respond(st, &asked, auth.as_deref());
    let seen = Seen {
        endpoint: endpoint.into(),
        prompt,
        body: req,
        raw: body,
        rule,
        status,
    };
    match &st.on_request {
        Some(log) => log(&seen),
        None => {
            if let Some(mut kept) = recorder(st) {
                kept.push(seen);
            }
        }
    }
    if let Some(ms) = stall {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let mut response = reply(status, text);
    if stream && status == 200 {
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
    }
    if status == 429 {
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("0"),
        );
    }
    response
}

/// A JSON answer with `status`.
fn reply(status: u16, text: String) -> Reply {
    let mut r = hyper::Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// The request log, when requests are recorded.
fn recorder(st: &State) -> Option<std::sync::MutexGuard<'_, Vec<Seen>>> {
    if !st.record.load(Ordering::SeqCst) {
        return None;
    }
    st.seen.lock().ok()
}

/// A Cohere-style rerank answer: documents scored by how many of the query's words they
/// contain (ties: earlier first), the best `top_n`.
fn rerank(req: &Value) -> (u16, String) {
    let (Some(query), Some(docs)) = (
        req.get("query").and_then(Value::as_str),
        req.get("documents").and_then(Value::as_array),
    ) else {
        return (
            400,
            ErrorReply::text("`query` and `documents` are required"),
        );
    };
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut scored: Vec<(usize, usize, String)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let text = d.as_str().unwrap_or("").to_string();
            let lower = text.to_lowercase();
            let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
            (i, hits, text)
        })
        .collect();
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top_n = req
        .get("top_n")
        .and_then(Value::as_u64)
        .map_or(docs.len(), |n| n as usize);
    let results = (scored.into_iter().take(top_n))
        .map(|(index, hits, text)| RankedDocument {
            index,
            relevance_score: hits as f64 / (words.len().max(1) as f64),
            document: DocumentText { text },
        })
        .collect();
    let reply = RerankReply {
        id: "loopback",
        results,
    };
    (200, serde_json::to_string(&reply).unwrap_or_default())
}

/// A message's text: a string, or the text parts of a list of content parts.
fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => (parts.iter())
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What one request asks, as the rules match it.
struct Asked<'a> {
    endpoint: &'a str,
    prompt: &'a str,
    /// The request body as text.
    body: &'a str,
    stream: bool,
    model: &'a str,
}

/// (status, body, rule name, stall).
fn respond(
    st: &State,
    asked: &Asked,
    auth: Option<&str>,
) -> (u16, String, Option<String>, Option<u64>) {
    let (endpoint, prompt) = (asked.endpoint, asked.prompt);
    if let Some(key) = &st.script.api_key {
        if auth != Some(&format!("Bearer {key}")) {
            let body = ErrorReply {
                error: ErrorBody {
                    message: "Incorrect API key provided".into(),
                    kind: Some("invalid_request_error"),
                    code: Some("invalid_api_key"),
                },
            };
            return (401, body.to_string(), None, None);
        }
    }
    let turn = st.turn.load(Ordering::SeqCst);
    let hit = st.script.rules.iter().position(|r| {
        r.endpoint.as_deref().is_none_or(|e| e == endpoint)
            && (r.turns.is_empty() || r.turns.contains(&turn))
            && r.ends_with.as_deref().is_none_or(|e| prompt.ends_with(e))
            && r.contains.iter().all(|c| prompt.contains(c.as_str()))
            && !r.not_contains.iter().any(|c| prompt.contains(c.as_str()))
            && r.body_contains
                .iter()
                .all(|c| asked.body.contains(c.as_str()))
    });
    let (answer, name) = match hit {
        Some(i) => {
            let rule = &st.script.rules[i];
            let n = {
                let mut fired = st.fired.lock().unwrap_or_else(|p| p.into_inner());
                fired[i] += 1;
                fired[i]
            };
            if let Some(f) = rule.fail_first.get(n - 1) {
                if let Some(ms) = f.stall_ms {
                    let (s, b) = render(asked, &rule.answer, &call_id(&rule.name, n));
                    return (s, b, Some(rule.name.clone()), Some(ms));
                }
                let status = f.status.unwrap_or(500);
                let body = ErrorReply::text(format!("injected {status}"));
                return (status, body, Some(rule.name.clone()), None);
            }
            (&rule.answer, Some((rule.name.clone(), n)))
        }
        None => (&st.script.default, None),
    };
    let id = name
        .as_ref()
        .map_or_else(|| call_id("default", 0), |(r, n)| call_id(r, *n));
    let (s, b) = render(asked, answer, &id);
    (s, b, name.map(|(r, _)| r), None)
}

/// A tool call's id: the rule's name and how many times it fired.
fn call_id(rule: &str, n: usize) -> String {
    format!("call_{rule}_{n}")
}

fn completion_text(a: &Answer) -> String {
    if let Some(code) = &a.code {
        format!(" produce the generated_code. We revise the code.\n\nCode: ```python\n{code}\n```")
    } else if let Some(fb) = &a.feedback {
        format!(" produce the user_feedback. We compare the code.\n\nUser Feedback: {fb}")
    } else {
        a.reply.clone().unwrap_or_default()
    }
}

fn render(asked: &Asked, a: &Answer, call_id: &str) -> (u16, String) {
    let status = a.status.unwrap_or(200);
    if let Some(body) = &a.body {
        return (status, body.clone());
    }
    if status != 200 {
        return (status, ErrorReply::text(format!("scripted {status}")));
    }
    let chat = asked.endpoint == "chat";
    let text = completion_text(a);
    let call = |index: Option<u32>| {
        (a.tool_call.as_ref().filter(|_| chat)).map(|t| {
            [ToolCallOut {
                index,
                id: call_id,
                kind: "function",
                function: FunctionCall {
                    name: &t.name,
                    arguments: match &t.arguments {
                        Value::Null => "{}".to_string(),
                        v => v.to_string(),
                    },
                },
            }]
        })
    };
    if asked.stream {
        return (200, stream_events(asked, &text, call(Some(0))));
    }
    let mut body = CompletionReply::new(chat, &text);
    if let (Some(calls), Some(m)) = (call(None), body.choices[0].message.as_mut()) {
        m.content = None;
        m.tool_calls = Some(calls);
        body.choices[0].finish_reason = "tool_calls";
    }
    (200, serde_json::to_string(&body).unwrap_or_default())
}

/// A streamed answer as server-sent events: the text (or the tool call) in one chunk, a
/// chunk with the finish reason, then `[DONE]`.
fn stream_events(asked: &Asked, text: &str, call: Option<[ToolCallOut<'_>; 1]>) -> String {
    let chat = asked.endpoint == "chat";
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    let chunk = |delta: Option<Delta>, text: Option<&str>, finish: Option<&'static str>| {
        let c = ChunkReply {
            id: "loopback",
            object: if chat {
                "chat.completion.chunk"
            } else {
                "text_completion"
            },
            created: 0,
            model: asked.model,
            choices: [ChunkChoice {
                index: 0,
                delta,
                text,
                finish_reason: finish,
            }],
        };
        format!(
            "data: {}\n\n",
            serde_json::to_string(&c).unwrap_or_default()
        )
    };
    let first = match (chat, call) {
        (true, Some(calls)) => chunk(
            Some(Delta {
                role: Some("assistant"),
                tool_calls: Some(calls),
                ..Delta::default()
            }),
            None,
            None,
        ),
        (true, None) => chunk(
            Some(Delta {
                role: Some("assistant"),
                content: Some(text),
                ..Delta::default()
            }),
            None,
            None,
        ),
        (false, _) => chunk(None, Some(text), None),
    };
    let last = match chat {
        true => chunk(Some(Delta::default()), None, Some(finish)),
        false => chunk(None, Some(""), Some(finish)),
    };
    format!("{first}{last}data: [DONE]\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn post(url: &str, path: &str, body: &str) -> (u16, String) {
        let addr = url.trim_start_matches("http://").trim_end_matches("/v1");
        let mut s = TcpStream::connect(addr).unwrap();
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let status = out.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    }

    fn text(body: &str) -> String {
        let v: Value = serde_json::from_str(body).unwrap();
        v["choices"][0]["text"].as_str().unwrap().to_string()
    }

    /// A rule limited to a turn answers without `Code:` only then; `ends_with` picks the
    /// continuation; the turn can be set over HTTP.
    #[test]
    fn turn_limited_and_ends_with_rules() {
        let script: Script = serde_json::from_value(json!({
            "rules": [
                {"name": "cont", "ends_with": "Code:", "reply": " done"},
                {"name": "malformed", "contains": ["task"], "turns": [2], "reply": " no code field"},
                {"name": "ok", "contains": ["task"], "code": "x = 1"}
            ]
        }))
        .unwrap();
        let server = LoopbackServer::start(script).unwrap();
        let url = server.base_url();
        let ask = |prompt: &str| {
            let body = json!({"model": "m", "prompt": prompt}).to_string();
            let (status, b) = post(&url, "/v1/completions", &body);
            assert_eq!(status, 200);
            text(&b)
        };
        assert!(ask("task").contains("Code: ```python\nx = 1\n```"));
        server.set_turn(2);
        assert_eq!(ask("task"), " no code field");
        assert_eq!(ask("task ... Code:"), " done");
        assert_eq!(post(&url, "/turn", "3").0, 200);
        assert!(ask("task").contains("Code:"));
        assert_eq!(post(&url, "/turn", "three").0, 400);
        let seen = server.seen();
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[1].rule.as_deref(), Some("malformed"));
        assert_eq!(seen[0].body["model"], "m");
    }

    /// An agent's loop: a request offering tools gets the scripted tool call (streamed when
    /// asked), the tool's result is the next prompt, and a side request without tools (a
    /// title) is told apart by `body_contains`.
    #[test]
    fn tool_calls_whole_and_streamed_and_tool_results_as_prompts() {
        let script: Script = serde_json::from_value(json!({
            "rules": [
                {"name": "fixed", "contains": ["Wrote file"], "reply": "Done."},
                {"name": "write", "contains": ["calc.py"], "body_contains": ["\"tools\""],
                 "tool_call": {"name": "write", "arguments": {"filePath": "calc.py", "content": "x = 1\n"}}},
                {"name": "title", "contains": ["calc.py"], "reply": "Calc"}
            ]
        }))
        .unwrap();
        let server = LoopbackServer::start(script).unwrap();
        let url = server.base_url();
        let user = json!({"role": "user", "content": [{"type": "text", "text": "write calc.py"}]});
        let whole = json!({"model": "m", "messages": [user], "tools": []}).to_string();
        let (status, b) = post(&url, "/v1/chat/completions", &whole);
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&b).unwrap();
        let call = &v["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "write");
        assert_eq!(
            serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(),
            json!({"filePath": "calc.py", "content": "x = 1\n"})
        );
        assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(v["choices"][0]["message"]["content"], Value::Null);

        let streamed =
            json!({"model": "m", "messages": [user], "tools": [], "stream": true}).to_string();
        let (_, b) = post(&url, "/v1/chat/completions", &streamed);
        let events: Vec<&str> = b.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert_eq!(events.last(), Some(&"data: [DONE]"), "{b}");
        let first: Value = serde_json::from_str(events[0].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(first["object"], "chat.completion.chunk");
        assert_eq!(first["choices"][0]["delta"]["tool_calls"][0]["index"], 0);
        let fin: Value = serde_json::from_str(events[1].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(fin["choices"][0]["finish_reason"], "tool_calls");

        let title = json!({"model": "m", "messages": [user]}).to_string();
        let (_, b) = post(&url, "/v1/chat/completions", &title);
        assert_eq!(
            serde_json::from_str::<Value>(&b).unwrap()["choices"][0]["message"]["content"],
            "Calc"
        );
        let tool = json!({"model": "m", "stream": true, "tools": [], "messages": [user,
            {"role": "tool", "tool_call_id": "call_write_1", "content": "Wrote file successfully."}]});
        let (_, b) = post(&url, "/v1/chat/completions", &tool.to_string());
        assert!(b.contains("\"content\":\"Done.\""), "{b}");
        let rules: Vec<_> = server
            .seen()
            .iter()
            .map(|s| s.rule.clone().unwrap())
            .collect();
        assert_eq!(rules, ["write", "write", "title", "fixed"]);
        assert_eq!(server.seen()[3].prompt, "Wrote file successfully.");
    }

    /// One answer read off a kept-alive connection (head, then Content-Length bytes).
    fn read_answer(r: &mut std::io::BufReader<TcpStream>) -> (u16, String) {
        use std::io::BufRead;
        let mut status = 0;
        let mut len = 0;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if status == 0 {
                status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            } else if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            } else if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        (status, String::from_utf8(body).unwrap())
    }

    /// Many clients each keeping a connection alive across several requests, all at once
    /// (a pooled HTTP client's pattern): every request is answered, none waits for another
    /// connection to close.
    #[test]
    fn kept_alive_connections_are_all_served_at_once() {
        let script: Script = serde_json::from_value(json!({"default": {"reply": "ok"}})).unwrap();
        let server = LoopbackServer::start(script).unwrap();
        let addr = server.addr;
        let clients: Vec<_> = (0..12)
            .map(|c| {
                std::thread::spawn(move || {
                    let s = TcpStream::connect(addr).unwrap();
                    // A stall shows as a failed read, not a hung test.
                    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                    let mut w = s.try_clone().unwrap();
                    let mut r = std::io::BufReader::new(s);
                    for k in 0..3 {
                        let body = json!({"model": "m", "prompt": format!("{c}.{k}")}).to_string();
                        write!(
                            w,
                            "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        )
                        .unwrap();
                        let (status, answer) = read_answer(&mut r);
                        assert_eq!(status, 200);
                        assert_eq!(text(&answer), "ok");
                        std::thread::sleep(Duration::from_millis(20));
                    }
                })
            })
            .collect();
        for c in clients {
            c.join().unwrap();
        }
        assert_eq!(server.seen().len(), 36);
    }
}
