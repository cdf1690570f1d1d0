//! A loopback HTTP proxy in front of a model server that misbehaves on purpose, as real
//! endpoints and the networks to them do: 429 with `Retry-After`, 503, a dropped connection,
//! a body cut in half, a stall longer than the client's timeout, a 200 whose body is not
//! JSON. Which request gets which fault is the caller's plan (seeded in the tests); every
//! request that gets no fault is forwarded, optionally after a delay (a slow model, so a
//! test can kill a run at many different moments).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// 429 Too Many Requests with `Retry-After: 1`.
    TooMany,
    /// 503 Service Unavailable.
    Unavailable,
    /// The connection closed without an answer.
    Dropped,
    /// The upstream answer's headers and half of its body, then the connection closed.
    Cut,
    /// No answer for this long, then the connection closed.
    Stall(Duration),
    /// 200 with an HTML body.
    NotJson,
}

/// Which fault the request numbered `n` (0-based, in arrival order) gets, if any.
pub type Plan = Box<dyn Fn(usize) -> Option<Fault> + Send + Sync>;

pub struct Proxy {
    pub url: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    injected: Arc<Mutex<Vec<Fault>>>,
    forwarded: Arc<AtomicUsize>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// A proxy for the model server at `upstream` (`http://127.0.0.1:P/v1`): forwards after
    /// `delay`, or injects what `plan` says.
    pub fn start(upstream: &str, delay: Duration, plan: Plan) -> Proxy {
        let host = upstream
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let injected = Arc::new(Mutex::new(Vec::new()));
        let forwarded = Arc::new(AtomicUsize::new(0));
        let plan = Arc::new(plan);
        let next = Arc::new(AtomicUsize::new(0));
        let accept = {
            let (stop, injected, forwarded) = (stop.clone(), injected.clone(), forwarded.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (host, plan, next) = (host.clone(), plan.clone(), next.clone());
                    let (injected, forwarded) = (injected.clone(), forwarded.clone());
                    std::thread::spawn(move || {
                        let _ = serve(conn, &host, delay, &plan, &next, &injected, &forwarded);
                    });
                }
            })
        };
        Proxy {
            url: format!("http://{addr}/v1"),
            addr,
            stop,
            injected,
            forwarded,
            accept: Some(accept),
        }
    }

    /// The faults injected so far, in order.
    pub fn injected(&self) -> Vec<Fault> {
        self.injected.lock().unwrap().clone()
    }

    /// Requests forwarded to the model server so far.
    pub fn forwarded(&self) -> usize {
        self.forwarded.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// One request: read whole, then answered as planned.
fn serve(
    client: TcpStream,
    upstream: &str,
    delay: Duration,
    plan: &Plan,
    next: &AtomicUsize,
    injected: &Mutex<Vec<Fault>>,
    forwarded: &AtomicUsize,
) -> std::io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    client.set_nodelay(true)?;
    let mut reader = BufReader::new(client.try_clone()?);
    let mut head = Vec::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        head.extend_from_slice(line.as_bytes());
        if line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    let fault = plan(next.fetch_add(1, Ordering::SeqCst));
    if let Some(f) = fault {
        injected.lock().unwrap().push(f);
    }
    let mut out = client;
    let reply = |out: &mut TcpStream, status: &str, ctype: &str, extra: &str, text: &str| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
            text.len()
        );
        out.write_all(format!("{head}{text}").as_bytes())?;
        out.flush()
    };
    match fault {
        Some(Fault::TooMany) => reply(
            &mut out,
            "429 Too Many Requests",
            "application/json",
            "Retry-After: 1\r\n",
            r#"{"error": {"message": "rate limited", "type": "rate_limit_exceeded"}}"#,
        ),
        Some(Fault::Unavailable) => reply(
            &mut out,
            "503 Service Unavailable",
            "application/json",
            "",
            r#"{"error": {"message": "overloaded"}}"#,
        ),
        Some(Fault::NotJson) => reply(
            &mut out,
            "200 OK",
            "text/html",
            "",
            "<html><body>502 Bad Gateway (from a load balancer)</body></html>",
        ),
        Some(Fault::Dropped) => Ok(()),
        Some(Fault::Stall(d)) => {
            std::thread::sleep(d);
            Ok(())
        }
        Some(Fault::Cut) | None => {
            let answer = forward(upstream, &head, &body)?;
            forwarded.fetch_add(1, Ordering::SeqCst);
            if fault == Some(Fault::Cut) {
                let split = answer
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map_or(answer.len() / 2, |i| i + 4);
                let keep = split + (answer.len() - split) / 2;
                out.write_all(&answer[..keep])?;
                return out.flush();
            }
            std::thread::sleep(delay);
            out.write_all(&answer)?;
            out.flush()
        }
    }
}

/// The model server's whole answer to the request.
fn forward(upstream: &str, head: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    // The answer is read to its end, so the model server is asked to close after it (it
    // keeps connections alive otherwise).
    let text = String::from_utf8_lossy(head);
    let mut head: String = text
        .split_inclusive('\n')
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:") && l.trim() != "")
        .collect();
    head.push_str("Connection: close\r\n\r\n");
    let mut up = TcpStream::connect(upstream)?;
    up.set_read_timeout(Some(Duration::from_secs(30)))?;
    up.set_nodelay(true)?;
    up.write_all(&[head.as_bytes(), body].concat())?;
    up.flush()?;
    let mut answer = Vec::new();
    up.read_to_end(&mut answer)?;
    Ok(answer)
}
