//! OpenAI-compatible model client: `/v1/chat/completions` (one user message) or raw
//! `/v1/completions` (vLLM without a chat template), with retries, bounded concurrency and
//! the on-disk cache.

use super::cache::{Cache, CacheKey};
use super::wire::{
    ChatMessage, CompletionRequest, CompletionResponse, MessagesRequest, RerankRequest,
    RerankResponse,
};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The original's sampling parameters: greedy, 2048 tokens, stop at DSPy's field separator.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;
pub const DEFAULT_STOP: &str = "\n\n---\n\n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointKind {
    /// `POST {base}/chat/completions` with the prompt as a single user message.
    Chat,
    /// `POST {base}/completions` with the raw prompt.
    Completions,
}

impl EndpointKind {
    /// Each kind's name (on the command line and in protocol arguments) and what it sends.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "chat",
            "POST {base}/chat/completions with the prompt as a single user message",
        ),
        (
            "completions",
            "POST {base}/completions with the raw prompt (vLLM without a chat template)",
        ),
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            EndpointKind::Chat => "chat",
            EndpointKind::Completions => "completions",
        }
    }
}

impl std::str::FromStr for EndpointKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "chat" => Ok(EndpointKind::Chat),
            "completions" => Ok(EndpointKind::Completions),
            _ => Err(format!(
                "unknown endpoint kind {s:?}; one of chat, completions"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Base URL including the version segment, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub kind: EndpointKind,
    pub temperature: f64,
    pub max_tokens: u32,
    pub stop: Vec<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries after the first attempt on 429, 5xx, timeouts and connection failures.
    pub retries: u32,
    /// First backoff delay; doubles each retry (capped at 60 s); `Retry-After` wins when given.
    pub backoff: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
    pub cache: Option<Cache>,
    /// Answer from the cache only.
    pub offline: bool,
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ClientConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            kind: EndpointKind::Chat,
            temperature: 0.0,
            max_tokens: DEFAULT_MAX_TOKENS,
            stop: vec![DEFAULT_STOP.to_string()],
            timeout: Duration::from_secs(300),
            retries: 6,
            backoff: Duration::from_secs(1),
            concurrency: 4,
            cache: None,
            offline: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the model endpoint {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the model endpoint {url} rejected the API key (HTTP {status}): {body}. Check the key (--api-key-env NAME, or $OPENAI_API_KEY)")]
    Unauthorized {
        url: String,
        status: u16,
        body: String,
    },
    #[error("the model endpoint {url} answered HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
    },
    #[error("the model endpoint {url} timed out after {secs} s ({attempts} attempts)")]
    Timeout {
        url: String,
        secs: u64,
        attempts: u32,
    },
    #[error("malformed answer from {url}: {reason}")]
    Malformed { url: String, reason: String },
    #[error("offline: no cached answer of {model} ({kind}) for prompt {digest} starting {head:?}")]
    NotCached {
        model: String,
        kind: String,
        digest: String,
        head: String,
    },
    #[error("cache: {0}")]
    Cache(String),
    /// DSPy 2.4.12 asked three times (the prompt, then two continuations) and the answers
    /// never reached the output field: it raises `AssertionError`, which stops the original's
    /// run wherever `pot.py` does not catch it.
    #[error("the model's answers never reached the `{field}` field in {calls} calls (DSPy 2.4.12 gives up here; the original's run stops)")]
    MissingField { field: String, calls: usize },
}

impl LlmError {
    /// Errors that will not go away on the next task (stop the run rather than skip a task).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            LlmError::Unreachable { .. }
                | LlmError::Unauthorized { .. }
                | LlmError::Timeout { .. }
                | LlmError::MissingField { .. }
        ) || matches!(self, LlmError::Http { status, .. } if *status == 404 || *status == 429 || *status >= 500)
    }

    /// A request the endpoint refused as too long / bad (the original then trims feedback).
    pub fn is_bad_request(&self) -> bool {
        matches!(
            self,
            LlmError::Http {
                status: 400 | 413 | 422,
                ..
            }
        )
    }
}

/// Sampling parameters of [`Client::chat_messages`]: each is sent only when set (unset, the
/// endpoint's own default applies).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
}

/// One answered prompt.
#[derive(Clone, Debug)]
pub struct Completion {
    pub text: String,
    pub cached: bool,
}

/// A counting semaphore: at most `n` requests in flight.
struct Slots {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Slots {
    fn acquire(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        self.0.cv.notify_one();
    }
}

pub struct Client {
    config: ClientConfig,
    http: reqwest::blocking::Client,
    slots: Slots,
    /// Set once the endpoint has answered anything: until then a refused connection is a
    /// wrong `--base-url` (nothing listens there) and fails at once instead of being retried
    /// for a minute; after, it is a server restarting and is retried.
    answered: AtomicBool,
}

enum Attempt {
    Done(String),
    Retry {
        error: LlmError,
        after: Option<Duration>,
    },
    Fail(LlmError),
}

impl Client {
    pub fn new(config: ClientConfig) -> anyhow::Result<Client> {
        if !config.offline && reqwest::Url::parse(&config.base_url).is_err() {
            anyhow::bail!("invalid model endpoint URL `{}`", config.base_url);
        }
        let http = reqwest::blocking::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client: {e}"))?;
        let slots = Slots {
            free: Mutex::new(config.concurrency.max(1)),
            cv: Condvar::new(),
        };
        Ok(Client {
            config,
            http,
            slots,
            answered: AtomicBool::new(false),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    pub fn kind(&self) -> EndpointKind {
        self.config.kind
    }

    fn cache_key(&self, prompt: &str, max_tokens: u32) -> CacheKey {
        CacheKey {
            kind: self.config.kind.as_str().to_string(),
            model: self.config.model.clone(),
            prompt: prompt.to_string(),
            temperature: self.config.temperature,
            max_tokens,
            stop: self.config.stop.clone(),
        }
    }

    fn url(&self) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        match self.config.kind {
            EndpointKind::Chat => format!("{base}/chat/completions"),
            EndpointKind::Completions => format!("{base}/completions"),
        }
    }

    /// The request body. Both endpoints get the parameters the original's clients send
    /// (`dspy.OpenAI` and `dspy.HFClientVLLM` alike: `top_p` 1, both penalties 0, `n` 1).
    fn body(&self, prompt: &str, max_tokens: u32) -> Value {
        let c = &self.config;
        let chat = c.kind == EndpointKind::Chat;
        let body = CompletionRequest {
            model: &c.model,
            messages: chat.then(|| [ChatMessage::new("user", prompt)]),
            prompt: (!chat).then_some(prompt),
            temperature: c.temperature,
            max_tokens,
            top_p: 1,
            frequency_penalty: 0,
            presence_penalty: 0,
            n: 1,
            stop: &c.stop,
        };
        serde_json::to_value(body).expect("a request body serializes")
    }

    /// Answer `prompt`: from the cache when possible, else from the endpoint (and cache it).
    pub fn complete(&self, prompt: &str) -> Result<Completion, LlmError> {
        self.complete_with(prompt, None)
    }

    /// [`Client::complete`] with another `max_tokens` for this request (DSPy's continuation
    /// asks with half the configured length).
    pub fn complete_with(
        &self,
        prompt: &str,
        max_tokens: Option<u32>,
    ) -> Result<Completion, LlmError> {
        let max_tokens = max_tokens.unwrap_or(self.config.max_tokens);
        let key = self.cache_key(prompt, max_tokens);
        if let Some(cache) = &self.config.cache {
            if let Some(text) = cache.get(&key) {
                return Ok(Completion { text, cached: true });
            }
        }
        if self.config.offline {
            return Err(LlmError::NotCached {
                model: self.config.model.clone(),
                kind: self.config.kind.as_str().into(),
                digest: key.digest(),
                head: prompt.chars().take(80).collect(),
            });
        }
        let text = {
            let _slot = self.slots.acquire();
            self.fetch(prompt, max_tokens)?
        };
        if let Some(cache) = &self.config.cache {
            cache
                .put(&key, &text)
                .map_err(|e| LlmError::Cache(format!("{e:#}")))?;
        }
        Ok(Completion {
            text,
            cached: false,
        })
    }

    fn fetch(&self, prompt: &str, max_tokens: u32) -> Result<String, LlmError> {
        self.fetch_body(
            &self.url(),
            &self.body(prompt, max_tokens),
            self.config.kind,
        )
    }

    /// Body of a chat request with the given messages and nothing else but the model and the
    /// sampling parameters that are set, in the order the `openai` Python package sends them
    /// (`model`, `messages`, `temperature`, `top_p`, as openai 3.54 with httpx2 does).
    pub fn messages_body(&self, messages: &[ChatMessage], sampling: Sampling) -> Value {
        let body = MessagesRequest {
            model: &self.config.model,
            messages,
            temperature: sampling.temperature,
            top_p: sampling.top_p,
        };
        serde_json::to_value(body).expect("a request body serializes")
    }

    /// Answer a list of chat messages (`POST {base}/chat/completions` whatever the configured
    /// endpoint kind), sending only what [`Client::messages_body`] holds: the request a bare
    /// `client.chat.completions.create(model=..., messages=...)` makes. Cached like
    /// [`Client::complete`], keyed on the whole body.
    pub fn chat_messages(
        &self,
        messages: &[ChatMessage],
        sampling: Sampling,
    ) -> Result<Completion, LlmError> {
        let body = self.messages_body(messages, sampling);
        let key = CacheKey {
            kind: "chat-messages".into(),
            model: self.config.model.clone(),
            prompt: body.to_string(),
            temperature: 0.0,
            max_tokens: 0,
            stop: Vec::new(),
        };
        if let Some(cache) = &self.config.cache {
            if let Some(text) = cache.get(&key) {
                return Ok(Completion { text, cached: true });
            }
        }
        if self.config.offline {
            let last = messages.last().map(|m| m.content.as_str()).unwrap_or("");
            return Err(LlmError::NotCached {
                model: self.config.model.clone(),
                kind: "chat".into(),
                digest: key.digest(),
                head: last.chars().take(80).collect(),
            });
        }
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let text = {
            let _slot = self.slots.acquire();
            self.fetch_body(&url, &body, EndpointKind::Chat)?
        };
        if let Some(cache) = &self.config.cache {
            cache
                .put(&key, &text)
                .map_err(|e| LlmError::Cache(format!("{e:#}")))?;
        }
        Ok(Completion {
            text,
            cached: false,
        })
    }

    /// Cohere-style reranking (`POST {base}/rerank`, as vLLM and text-embeddings-inference
    /// serve it): the indices of the `top_n` documents most relevant to `query`, best first.
    /// Cached like completions.
    pub fn rerank(
        &self,
        query: &str,
        documents: &[String],
        top_n: usize,
    ) -> Result<Vec<usize>, LlmError> {
        let body = serde_json::to_value(RerankRequest {
            model: &self.config.model,
            query,
            documents,
            top_n,
            return_documents: true,
        })
        .expect("a request body serializes");
        let key = CacheKey {
            kind: "rerank".into(),
            model: self.config.model.clone(),
            prompt: body.to_string(),
            temperature: 0.0,
            max_tokens: 0,
            stop: Vec::new(),
        };
        let cached = self.config.cache.as_ref().and_then(|c| c.get(&key));
        let text = match cached {
            Some(t) => t,
            None if self.config.offline => {
                return Err(LlmError::NotCached {
                    model: self.config.model.clone(),
                    kind: "rerank".into(),
                    digest: key.digest(),
                    head: query.chars().take(80).collect(),
                })
            }
            None => {
                let url = format!("{}/rerank", self.config.base_url.trim_end_matches('/'));
                let n = documents.len();
                let text = {
                    let _slot = self.slots.acquire();
                    self.fetch_with(&url, &body, &|t| parse_rerank(t, n))?
                };
                if let Some(cache) = &self.config.cache {
                    cache
                        .put(&key, &text)
                        .map_err(|e| LlmError::Cache(format!("{e:#}")))?;
                }
                text
            }
        };
        serde_json::from_str(&text).map_err(|e| LlmError::Cache(format!("bad rerank entry: {e}")))
    }

    fn fetch_body(&self, url: &str, body: &Value, kind: EndpointKind) -> Result<String, LlmError> {
        self.fetch_with(url, body, &|text| parse(text, kind))
    }

    /// POST `body` with retries and backoff; `parse` turns a 2xx body into the answer (a
    /// malformed one is retried).
    fn fetch_with(
        &self,
        url: &str,
        body: &Value,
        parse: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<String, LlmError> {
        let mut delay = self.config.backoff;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.attempt(url, body, attempt, parse) {
                Attempt::Done(text) => return Ok(text),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry { error, after } => {
                    if attempt > self.config.retries {
                        return Err(error);
                    }
                    std::thread::sleep(after.unwrap_or(delay));
                    delay = (delay * 2).min(Duration::from_secs(60));
                }
            }
        }
    }

    /// A failed send or read: retried, as a timeout or an unreachable endpoint.
    fn transport_error(&self, url: &str, e: &reqwest::Error, attempt: u32) -> Attempt {
        let error = if e.is_timeout() {
            LlmError::Timeout {
                url: url.into(),
                secs: self.config.timeout.as_secs(),
                attempts: attempt,
            }
        } else if is_refused(e) && !self.answered.load(Ordering::Relaxed) {
            return Attempt::Fail(LlmError::Unreachable {
                url: url.into(),
                reason: format!(
                    "{} (nothing listens there: check --base-url and that the server runs)",
                    root_cause(e)
                ),
            });
        } else {
            LlmError::Unreachable {
                url: url.into(),
                reason: root_cause(e),
            }
        };
        Attempt::Retry { error, after: None }
    }

    fn attempt(
        &self,
        url: &str,
        body: &Value,
        attempt: u32,
        parse: &dyn Fn(&str) -> Result<String, String>,
    ) -> Attempt {
        let mut req = self.http.post(url).json(body);
        if let Some(key) = &self.config.api_key {
            req = req.bearer_auth(key);
        }
        let resp = match req.send() {
            Ok(r) => r,
            Err(e) => return self.transport_error(url, &e, attempt),
        };
        self.answered.store(true, Ordering::Relaxed);
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(120.0)));
        let text = match resp.text() {
            Ok(t) => t,
            Err(e) => return self.transport_error(url, &e, attempt),
        };
        let short: String = text.chars().take(300).collect();
        match status {
            200..=299 => match parse(&text) {
                Ok(t) => Attempt::Done(t),
                Err(reason) => Attempt::Retry {
                    error: LlmError::Malformed {
                        url: url.into(),
                        reason,
                    },
                    after: None,
                },
            },
            401 | 403 => Attempt::Fail(LlmError::Unauthorized {
                url: url.into(),
                status,
                body: short,
            }),
            408 | 409 | 429 | 500..=599 => Attempt::Retry {
                error: LlmError::Http {
                    url: url.into(),
                    status,
                    body: short,
                },
                after: retry_after,
            },
            _ => Attempt::Fail(LlmError::Http {
                url: url.into(),
                status,
                body: short,
            }),
        }
    }
}

/// An endpoint's answer read as `T`; the message says whether the text is no JSON at all or
/// JSON of another shape (`shape`).
fn answer<T: serde::de::DeserializeOwned>(text: &str, shape: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| {
        if e.is_data() {
            format!("{shape} ({e})")
        } else {
            format!("not JSON ({e})")
        }
    })
}

/// The indices of a rerank response (`results[].index`, each below `n`), as JSON.
fn parse_rerank(text: &str, n: usize) -> Result<String, String> {
    let v: RerankResponse = answer(text, "no `results` list of integer `index`es")?;
    let out: Vec<usize> = v.results.iter().map(|r| r.index).collect();
    if let Some(i) = out.iter().find(|&&i| i >= n) {
        return Err(format!("result index {i} out of range ({n} documents)"));
    }
    serde_json::to_string(&out).map_err(|e| e.to_string())
}

/// The answer text of a completion response.
fn parse(text: &str, kind: EndpointKind) -> Result<String, String> {
    let v: CompletionResponse = answer(text, "not a completion answer")?;
    let choice = v
        .choices
        .first()
        .ok_or_else(|| "no `choices[0]`".to_string())?;
    let content = match kind {
        EndpointKind::Chat => choice.message.as_ref().and_then(|m| m.content.as_ref()),
        EndpointKind::Completions => choice.text.as_ref(),
    };
    match content {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) => Ok(String::new()),
        _ => Err(match kind {
            EndpointKind::Chat => "no `choices[0].message.content` string".into(),
            EndpointKind::Completions => "no `choices[0].text` string".into(),
        }),
    }
}

/// Whether the connection was refused (the host answered that no one listens on the port).
fn is_refused(e: &reqwest::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// The innermost error message (reqwest wraps hyper wraps io).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &dyn std::error::Error = e;
    let mut msg = cur.to_string();
    while let Some(next) = cur.source() {
        msg = next.to_string();
        cur = next;
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Instant;

    /// A port on which nothing listens (bound, then closed).
    fn closed_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn a_refused_first_connection_fails_at_once_naming_the_url() {
        let base = format!("http://127.0.0.1:{}/v1", closed_port());
        let client = Client::new(ClientConfig::new(base.clone(), "m")).unwrap();
        let started = Instant::now();
        let e = client.complete("hi").unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let text = e.to_string();
        assert!(text.contains(&format!("{base}/chat/completions")), "{text}");
        assert!(text.contains("--base-url"), "{text}");
        assert!(e.is_fatal());
    }

    #[test]
    fn a_refusal_after_the_endpoint_answered_is_retried() {
        // The server answers one request with 503 (retried), then goes away: the retry meets
        // a refusal, which is retried too (a server restarting), until the retries run out.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        });
        let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
        config.retries = 2;
        config.backoff = Duration::from_millis(200);
        let client = Client::new(config).unwrap();
        let started = Instant::now();
        let e = client.complete("hi").unwrap_err();
        server.join().unwrap();
        // Two backoffs (200 + 400 ms) were slept: the refusal was not final.
        assert!(
            started.elapsed() >= Duration::from_millis(600),
            "{:?}",
            started.elapsed()
        );
        assert!(matches!(e, LlmError::Unreachable { .. }), "{e}");
    }
}
