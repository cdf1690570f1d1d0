//! The stdio transport in front of tower-lsp-server. Its reader stops for good at the first
//! body that is not a JSON-RPC message (tokio-util's `FramedRead` ends the stream after a
//! decode error), so one bad message from a client would end the server. Here every frame
//! is checked first: a valid one is passed on re-framed, an invalid one is answered with a
//! JSON-RPC error (-32700 / -32600, id null unless it has a usable id) and dropped, and bad
//! framing is skipped up to the next `Content-Length` header.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// Bodies larger than this are refused (and skipped) rather than buffered: the same bound
/// as for files read from disk (bounded_read), with room for JSON's escaping of a 20 MB file.
const MAX_BODY: usize = 64 << 20;
const MAX_HEADER: usize = 8 << 10;
const HEADER: &[u8] = b"Content-Length";

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Body(Vec<u8>),
    /// Bytes that were not a frame, with the reason; already skipped.
    Bad(String),
}

/// Splits a byte stream into `Content-Length`-framed bodies.
///
/// Header lines end in CRLF or a bare LF. Any header that is not `Name: value` with a
/// decimal `Content-Length` of at most `MAX_BODY`, or a header block over `MAX_HEADER`
/// bytes, gives one `Bad` and the framer resynchronises at the next `Content-Length` after
/// the bad header's first byte. Every `Bad` consumes at least one byte, so no input can
/// make it loop, and the buffer never holds more than one header or one accepted body.
#[derive(Default)]
pub struct Framer {
    buf: Vec<u8>,
    /// Body length of a header already consumed.
    pending: Option<usize>,
    /// In bytes that are not a message: dropping them up to the next header.
    skipping: bool,
}

/// A header block read so far: where it ends, if complete, and its Content-Length.
enum Header {
    Incomplete,
    Done { end: usize, len: usize },
    Bad(String),
}

impl Framer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, or None until more bytes arrive. A stretch of bad bytes
    /// gives one `Bad`, however it is chunked.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(len) = self.pending {
                if self.buf.len() < len {
                    return None;
                }
                let body = self.buf.drain(..len).collect();
                self.pending = None;
                return Some(Frame::Body(body));
            }
            if self.skipping {
                match find(&self.buf, HEADER) {
                    Some(i) => {
                        self.buf.drain(..i);
                        self.skipping = false;
                    }
                    None => {
                        // Keep a tail that may be the start of the next header.
                        let keep = self.buf.len().saturating_sub(HEADER.len() - 1);
                        self.buf.drain(..keep);
                        return None;
                    }
                }
            }
            // Blank lines between messages are harmless.
            let blank = self
                .buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n' | b' ' | b'\t'))
                .count();
            self.buf.drain(..blank);
            if self.buf.is_empty() {
                return None;
            }
            match header(&self.buf) {
                Header::Incomplete => return None,
                Header::Done { end, len } => {
                    self.buf.drain(..end);
                    self.pending = Some(len);
                }
                Header::Bad(why) => {
                    // Resynchronise after this header's first byte.
                    self.buf.drain(..1);
                    self.skipping = true;
                    return Some(Frame::Bad(why));
                }
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Reads the header block at the start of `buf`, line by line.
fn header(buf: &[u8]) -> Header {
    let mut pos = 0;
    let mut len = None;
    loop {
        let rest = &buf[pos..buf.len().min(MAX_HEADER + 1)];
        let nl = memchr::memchr(b'\n', rest);
        let line = match nl {
            Some(i) => &rest[..i],
            None => rest,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if nl.is_none() && line.is_empty() {
            return Header::Incomplete;
        }
        if nl.is_some() && line.is_empty() {
            return match len {
                Some(len) => Header::Done {
                    end: pos + nl.unwrap_or(0) + 1,
                    len,
                },
                None => Header::Bad("missing Content-Length header".into()),
            };
        }
        // The name: token characters up to ':' (no space before the colon).
        let name_end = line
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'));
        match name_end {
            Some(i) if line[i] == b':' && i > 0 => {}
            None if nl.is_none() => {}
            Some(_) | None => {
                // Said the same however the bytes were chunked.
                return Header::Bad(if pos == 0 {
                    "bytes outside a message (not a `Name: value` header)".into()
                } else {
                    "malformed header line (not `Name: value`)".into()
                });
            }
        }
        let Some(i) = nl else {
            if buf.len() > MAX_HEADER {
                return Header::Bad("header too long".into());
            }
            return Header::Incomplete;
        };
        let colon = name_end.unwrap_or(0);
        if line[..colon].eq_ignore_ascii_case(HEADER) {
            let value = String::from_utf8_lossy(&line[colon + 1..]);
            let value = value.trim();
            match value.parse::<usize>() {
                Ok(n) if n <= MAX_BODY => len = Some(n),
                Ok(n) => return Header::Bad(format!("Content-Length {n} is too large")),
                Err(e) => {
                    let v: String = value.chars().take(40).collect();
                    return Header::Bad(format!("bad Content-Length {v:?}: {e}"));
                }
            }
        }
        pos += i + 1;
        if pos > MAX_HEADER {
            return Header::Bad("header too long".into());
        }
    }
}

/// What to do with one body.
#[derive(Debug, PartialEq)]
pub enum Checked {
    /// Pass these bytes on: the body, or the body with lone surrogate escapes replaced.
    Pass(Vec<u8>),
    /// Drop the body and answer with this error response.
    Reply(Value),
}

/// Decides whether `body` goes on to tower-lsp-server. A string escape of a lone UTF-16
/// surrogate (`"\ud800"`, which JavaScript clients can send) is valid JSON text but not a
/// Rust string, so it would fail the whole message and lose an edit: it becomes U+FFFD,
/// which keeps UTF-16 positions the same. A `$/` request with an id is answered with
/// MethodNotFound here, as the specification asks (tower-lsp-server never answers it).
pub fn check_body(body: Vec<u8>) -> Checked {
    // Requests and notifications first: nearly everything a client sends.
    if let Ok(req) = serde_json::from_slice::<Request>(&body) {
        return dollar_request(&req).map_or(Checked::Pass(body), Checked::Reply);
    }
    if serde_json::from_slice::<Response>(&body).is_ok() {
        return Checked::Pass(body);
    }
    if let Some(fixed) = without_lone_surrogates(&body) {
        if serde_json::from_slice::<Value>(&fixed).is_ok() {
            return check_body(fixed);
        }
    }
    let (code, message, id) = match serde_json::from_slice::<Value>(&body) {
        Err(e) => (-32700, format!("Parse error: {e}"), Value::Null),
        Ok(v) => {
            let why = serde_json::from_value::<Request>(v.clone())
                .err()
                .map_or_else(String::new, |e| e.to_string());
            let id = match v.get("id") {
                Some(id @ Value::Number(n)) if n.is_i64() => id.clone(),
                Some(id @ Value::String(_)) => id.clone(),
                _ => Value::Null,
            };
            (-32600, format!("Invalid request: {why}"), id)
        }
    };
    Checked::Reply(error(id, code, message))
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}

/// The MethodNotFound answer to a `$/` request that has an id.
fn dollar_request(req: &Request) -> Option<Value> {
    let id = req.id()?;
    if !req.method().starts_with("$/") {
        return None;
    }
    let id = serde_json::to_value(id).unwrap_or(Value::Null);
    Some(error(
        id,
        -32601,
        format!("Method not found: {}", req.method()),
    ))
}

/// `body` with each `\uXXXX` escape of a lone surrogate replaced by `\ufffd`; None when
/// there is none.
fn without_lone_surrogates(b: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u32> {
        let hex = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u32::from_str_radix(hex, 16).ok()
    };
    let escape_at = |at: usize| b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u');
    let mut out = Vec::with_capacity(b.len());
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let Some(cu) = escape_at(i).then(|| unit(i + 2)).flatten() else {
            // Another escape (or a broken one): copied as is, both bytes.
            out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
            i += 2;
            continue;
        };
        let pair = (0xD800..0xDC00).contains(&cu)
            && escape_at(i + 6)
            && unit(i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l));
        if pair {
            out.extend_from_slice(&b[i..i + 12]);
            i += 12;
        } else if (0xD800..0xE000).contains(&cu) {
            out.extend_from_slice(b"\\ufffd");
            changed = true;
            i += 6;
        } else {
            out.extend_from_slice(&b[i..i + 6]);
            i += 6;
        }
    }
    changed.then_some(out)
}

/// Blocking reads of framed bodies from any byte stream, with the server's own framing and
/// bounds: `check`'s client reads the server through it, and so do the tests.
pub struct FramedReader<R> {
    inner: R,
    framer: Framer,
    chunk: Vec<u8>,
}

impl<R: std::io::Read> FramedReader<R> {
    pub fn new(inner: R) -> Self {
        FramedReader {
            inner,
            framer: Framer::default(),
            chunk: vec![0; 64 << 10],
        }
    }

    /// The next frame (a body, or a stretch of bytes that was not one), or None when the
    /// stream ends or fails.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(f) = self.framer.next_frame() {
                return Some(f);
            }
            let n = loop {
                match self.inner.read(&mut self.chunk) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r.ok()?,
                }
            };
            if n == 0 {
                return None;
            }
            self.framer.push(&self.chunk[..n]);
        }
    }
}

/// Writes `body` as one `Content-Length`-framed message.
pub fn write_framed(w: &mut impl std::io::Write, body: &[u8]) -> std::io::Result<()> {
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(body)
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Client -> server: pass valid frames on, answer the rest through `errors`.
pub async fn pump_in(
    mut input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    errors: mpsc::UnboundedSender<Value>,
) {
    let mut framer = Framer::default();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        framer.push(&chunk[..n]);
        while let Some(frame) = framer.next_frame() {
            match frame {
                // An empty body is no message: tower-lsp skips it too.
                Frame::Body(b) if b.is_empty() => {}
                Frame::Body(b) => match check_body(b) {
                    Checked::Pass(b) => {
                        if to_server.write_all(&framed(&b)).await.is_err() {
                            return;
                        }
                    }
                    Checked::Reply(err) => {
                        let _ = errors.send(err);
                    }
                },
                Frame::Bad(why) => {
                    let _ = errors.send(json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32700, "message": format!("Parse error: {why}")}}));
                }
            }
        }
        let _ = to_server.flush().await;
    }
    let _ = to_server.shutdown().await;
}

/// Server -> client: copy the server's frames whole, with the transport's error replies
/// between them, until the server's output ends.
pub async fn pump_out(
    mut from_server: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    mut errors: mpsc::UnboundedReceiver<Value>,
) {
    let mut framer = Framer::default();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        tokio::select! {
            r = from_server.read(&mut chunk) => {
                let n = match r {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                framer.push(&chunk[..n]);
                while let Some(frame) = framer.next_frame() {
                    if let Frame::Body(b) = frame {
                        if output.write_all(&framed(&b)).await.is_err() {
                            return;
                        }
                    }
                }
            }
            Some(err) = errors.recv() => {
                if output.write_all(&framed(err.to_string().as_bytes())).await.is_err() {
                    return;
                }
            }
        }
        let _ = output.flush().await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames must not depend on how the input is chunked.
    fn frames_by(input: &[u8], chunk: usize) -> Vec<Frame> {
        let mut f = Framer::default();
        let mut out = Vec::new();
        for c in input.chunks(chunk) {
            f.push(c);
            while let Some(x) = f.next_frame() {
                out.push(x);
            }
        }
        out
    }

    fn frames(input: &[u8]) -> Vec<Frame> {
        let one = frames_by(input, 1);
        assert_eq!(one, frames_by(input, 7));
        one
    }

    #[test]
    fn frames_split_and_garbage_is_skipped_to_the_next_header() {
        let input = b"Content-Length: 2\r\n\r\n{}junk junk Content-Length: 3\r\n\r\n[1]Content-Length: x\r\n\r\nContent-Length: 1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n7";
        let f = frames(input);
        assert_eq!(f[0], Frame::Body(b"{}".to_vec()));
        assert!(matches!(&f[1], Frame::Bad(why) if why.contains("not a `Name: value` header")));
        assert_eq!(f[2], Frame::Body(b"[1]".to_vec()));
        assert!(matches!(&f[3], Frame::Bad(why) if why.contains("bad Content-Length")));
        assert_eq!(f[4], Frame::Body(b"7".to_vec()));
        assert_eq!(f.len(), 5);
        // A header that never ends is dropped, not looped on.
        let mut long = b"Content-Length: 1".to_vec();
        long.extend(std::iter::repeat_n(b'x', 2 * MAX_HEADER));
        long.extend(b"Content-Length: 1\r\n\r\n7");
        let f = frames_by(&long, 997);
        assert!(
            matches!(&f[0], Frame::Bad(why) if why.contains("too long")),
            "{f:?}"
        );
        assert_eq!(f.last(), Some(&Frame::Body(b"7".to_vec())));
    }

    #[test]
    fn only_messages_pass_and_the_rest_get_errors() {
        let reply = |b: &[u8]| match check_body(b.to_vec()) {
            Checked::Reply(v) => v,
            Checked::Pass(p) => panic!("passed: {}", String::from_utf8_lossy(&p)),
        };
        let pass = |b: &[u8]| match check_body(b.to_vec()) {
            Checked::Pass(p) => String::from_utf8(p).unwrap(),
            Checked::Reply(v) => panic!("refused: {v}"),
        };
        pass(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#);
        pass(br#"{"jsonrpc":"2.0","id":1,"result":null}"#);
        pass(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#);
        let e = reply(br#"{"jsonrpc":"2.0","id":1,"meth"#);
        assert_eq!(
            (e["error"]["code"].as_i64(), &e["id"]),
            (Some(-32700), &Value::Null)
        );
        let e = reply(br#"{"jsonrpc":"1.0","id":5,"method":"x"}"#);
        assert_eq!(
            (e["error"]["code"].as_i64(), &e["id"]),
            (Some(-32600), &json!(5))
        );
        let e = reply(br#"{"jsonrpc":"2.0","id":"a","method":"$/anything"}"#);
        assert_eq!(
            (e["error"]["code"].as_i64(), &e["id"]),
            (Some(-32601), &json!("a"))
        );
        reply(b"\xff\xfe");
        reply(b"[1,2]");
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        let body =
            br#"{"jsonrpc":"2.0","method":"m","params":{"t":"a\ud800b\udc00\\ud800\ud83d\ude00"}}"#;
        let Checked::Pass(p) = check_body(body.to_vec()) else {
            panic!("refused")
        };
        let v: Value = serde_json::from_slice(&p).unwrap();
        assert_eq!(
            v["params"]["t"],
            json!("a\u{fffd}b\u{fffd}\\ud800\u{1f600}")
        );
    }

    /// A small deterministic generator, so a failing case can be replayed by its seed.
    use pivot_test_support::edit_fuzz::Rng;

    /// Bad stretches a client could send, none of them a complete valid header.
    const GARBAGE: &[&[u8]] = &[
        b"Content-Length : 2\r\n\r\n{}",
        b"Content-Length\r\n\r\n",
        b"Content-Lengthx: 3\r\n\r\n",
        b"Content-Length: 99999999999999999999\r\n\r\n",
        b"Content-Length: 300000000\r\n\r\n{}",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Type: x\r\n\r\n",
        b"\r\n\r\n",
        b"{\"jsonrpc\":\"2.0\"}",
        b"\x00\x00\xff garbage",
        b"Content-Lengt",
        b"a:b\nc d\n\n",
    ];

    /// Fuzzing the framing: valid messages (CRLF or LF-only headers) with random bad
    /// stretches between them, cut into random chunks. Every valid message must come out,
    /// in order, with at most one `Bad` per bad stretch, whatever the chunking.
    #[test]
    fn fuzzed_streams_lose_no_valid_message() {
        for seed in 1..=2000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut input = Vec::new();
            let mut want = Vec::new();
            let mut bad_stretches = 0;
            for n in 0..rng.below(8) + 1 {
                if rng.below(2) == 0 {
                    let mut g = GARBAGE[rng.below(GARBAGE.len())].to_vec();
                    for _ in 0..rng.below(4) {
                        g.push(b"xyz: \r\n\x00{}"[rng.below(9)]);
                    }
                    input.extend(&g);
                    bad_stretches += 1;
                }
                let text: String = (0..rng.below(40))
                    .map(|_| (b'a' + rng.below(26) as u8) as char)
                    .collect();
                let body = format!(r#"{{"id":{n},"s":"{text}"}}"#).into_bytes();
                let eol = if rng.below(2) == 0 { "\r\n" } else { "\n" };
                let extra = if rng.below(3) == 0 {
                    format!("Content-Type: application/json{eol}")
                } else {
                    String::new()
                };
                input.extend(format!("{extra}Content-Length: {}{eol}{eol}", body.len()).bytes());
                input.extend(&body);
                want.push(body);
            }
            let chunk = rng.below(50) + 1;
            let got = frames_by(&input, chunk);
            assert_eq!(got, frames_by(&input, input.len()), "seed {seed}");
            let bodies: Vec<_> = got
                .iter()
                .filter_map(|f| match f {
                    Frame::Body(b) => Some(b.clone()),
                    Frame::Bad(_) => None,
                })
                .collect();
            assert_eq!(
                bodies,
                want,
                "seed {seed}: {}",
                String::from_utf8_lossy(&input)
            );
            let bads = got.len() - bodies.len();
            assert!(bads <= bad_stretches, "seed {seed}: {got:?}");
        }
    }

    /// Issue 10, items 1 and 11: each of these once looped forever, lost the next message
    /// or swallowed it.
    #[test]
    fn malformed_headers_resynchronise_at_the_next_message() {
        let next = b"Content-Length: 2\r\n\r\n[]";
        for bad in [
            &b"Content-Length : 2\r\n\r\n"[..],
            b"Content-Length\r\n\r\n",
            b"Content-Lengthx\r\n\r\n",
            b"Content-Length: 999999999999\r\n\r\n",
        ] {
            let mut input = bad.to_vec();
            input.extend(next);
            let f = frames(&input);
            assert!(matches!(&f[0], Frame::Bad(_)), "{f:?}");
            assert_eq!(f[1..], [Frame::Body(b"[]".to_vec())], "{bad:?}");
        }
        let f = frames(b"Content-Length: 2\n\n{}Content-Length: 2\n\n[]");
        assert_eq!(
            f,
            [Frame::Body(b"{}".to_vec()), Frame::Body(b"[]".to_vec())]
        );
    }
}
