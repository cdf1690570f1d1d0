//! `--problems bigcodebench[-hard][@VERSION]` against a loopback server that speaks the
//! Hugging Face Hub's file API as `huggingface_hub` uses it (HEAD and GET of
//! `/datasets/{repo}/resolve/{revision}/{path}` with `X-Repo-Commit`, `ETag`, `X-Linked-Etag`,
//! `X-Linked-Size` and a `Location` redirect to a CDN for LFS files, ranges, `X-Error-Code`;
//! `/api/datasets/{repo}/tree/{revision}/{dir}`), serving a small BigCodeBench made here
//! (a Parquet split and a JSONL split): cached in the hub cache layout, resumed after a
//! dropped transfer, checked against the checksums, offline from the cache; and local JSONL,
//! gzip and Parquet files.

use crate::support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pivot_exec::hub::{Dataset, HubOptions};
use pivot_exec::problem::load_problems_with;
use pivot_exec::{load_problems, ProblemSource};
use pivot_test_support::host::shared;
use sha1::Digest as _;
use support::cli::EXE;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
fn sha256(b: &[u8]) -> String {
    hex(&sha2::Sha256::digest(b))
}
fn git_sha1(b: &[u8]) -> String {
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", b.len()).as_bytes());
    h.update(b);
    hex(&h.finalize())
}

/// BigCodeBench-shaped records: `n` tasks whose tests pass with the canonical solution.
fn records(n: usize, tag: &str) -> Vec<serde_json::Value> {
    (0..n)
        .map(|k| {
            let code_prompt = "def task_func(x):\n".to_string();
            serde_json::json!({
                "task_id": format!("BigCodeBench/{k}"),
                "complete_prompt": format!("def task_func(x):\n    \"\"\"Add {k} ({tag}).\"\"\"\n"),
                "instruct_prompt": format!("Add {k} to x ({tag}).\nYou should write self-contained code starting with:\n```\ndef task_func(x):\n```"),
                "canonical_solution": format!("    return x + {k}\n"),
                "code_prompt": code_prompt,
                "test": format!("import unittest\nclass TestCases(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(task_func(1), {})\n", 1 + k),
                "entry_point": "task_func",
            })
        })
        .collect()
}

const COLUMNS: [&str; 7] = [
    "task_id",
    "complete_prompt",
    "instruct_prompt",
    "canonical_solution",
    "code_prompt",
    "test",
    "entry_point",
];

/// A Parquet file of `rows` (UTF-8 columns, Snappy), as `datasets` writes a split.
fn parquet_bytes(rows: &[serde_json::Value]) -> Vec<u8> {
    use parquet::basic::Compression;
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = format!(
        "message schema {{ {} }}",
        COLUMNS
            .iter()
            .map(|c| format!("REQUIRED BYTE_ARRAY {c} (UTF8);"))
            .collect::<String>()
    );
    let schema = Arc::new(parquet::schema::parser::parse_message_type(&schema).unwrap());
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let mut out: Vec<u8> = Vec::new();
    {
        let mut w = SerializedFileWriter::new(&mut out, schema, props).unwrap();
        let mut rg = w.next_row_group().unwrap();
        for c in COLUMNS {
            let mut col = rg.next_column().unwrap().unwrap();
            let vals: Vec<ByteArray> = rows
                .iter()
                .map(|r| ByteArray::from(r[c].as_str().unwrap()))
                .collect();
            col.typed::<ByteArrayType>()
                .write_batch(&vals, None, None)
                .unwrap();
            col.close().unwrap();
        }
        rg.close().unwrap();
        w.close().unwrap();
    }
    out
}

fn jsonl_bytes(rows: &[serde_json::Value]) -> Vec<u8> {
    rows.iter()
        .map(|r| format!("{r}\n"))
        .collect::<String>()
        .into_bytes()
}

const CARD: &str = "---\nlicense: apache-2.0\nconfigs:\n- config_name: default\n  data_files:\n  - split: v0.1.0_hf\n    path: data/v0.1.0_hf-*\n  - split: v0.1.4\n    path: data/v0.1.4-*\n---\n# BigCodeBench (made by the test)\n";

/// The server's state: files of bigcode/bigcodebench, what to break, and every request.
#[derive(Default)]
struct Hub {
    files: HashMap<String, Vec<u8>>,
    /// Paths stored as LFS (served from /cdn/{sha256}).
    lfs: Vec<String>,
    /// Drop the first transfer of this blob halfway.
    flaky: Option<String>,
    /// Serve wrong bytes for this blob.
    corrupt: Option<String>,
    log: Vec<String>,
}

fn serve(hub: Arc<Mutex<Hub>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let origin = base.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let hub = hub.clone();
            let origin = origin.clone();
            std::thread::spawn(move || {
                let _ = handle(conn, &hub, &origin);
            });
        }
    });
    base
}

fn respond(
    mut s: &TcpStream,
    status: &str,
    headers: &[(String, String)],
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let mut text = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers.iter().any(|(k, _)| k == "Content-Length") {
        text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    s.write_all(text.as_bytes())?;
    if !head {
        s.write_all(body)?;
    }
    s.flush()
}

fn handle(conn: TcpStream, hub: &Mutex<Hub>, origin: &str) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut range: Option<u64> = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = v
                    .trim()
                    .strip_prefix("bytes=")
                    .and_then(|r| r.trim_end_matches('-').parse().ok());
            }
        }
    }
    let head = method == "HEAD";
    let path = target.split('?').next().unwrap_or("").to_string();
    let mut g = hub.lock().unwrap();
    g.log.push(format!(
        "{method} {path}{}",
        range.map(|r| format!(" range={r}")).unwrap_or_default()
    ));
    let commit = ("X-Repo-Commit".to_string(), COMMIT.to_string());
    if let Some(rest) = path.strip_prefix("/datasets/bigcode/old-name/resolve/") {
        let loc = format!("/datasets/bigcode/bigcodebench/resolve/{rest}");
        drop(g);
        return respond(
            &conn,
            "307 Temporary Redirect",
            &[("Location".into(), loc)],
            b"",
            head,
        );
    }
    if let Some(rest) = path.strip_prefix("/datasets/bigcode/bigcodebench/resolve/main/") {
        let Some(body) = g.files.get(rest).cloned() else {
            let h = [commit, ("X-Error-Code".into(), "EntryNotFound".into())];
            drop(g);
            return respond(&conn, "404 Not Found", &h, b"", head);
        };
        if g.lfs.iter().any(|p| p == rest) {
            let sha = sha256(&body);
            let h = [
                commit,
                ("ETag".into(), format!("\"{}\"", git_sha1(b"pointer"))),
                ("X-Linked-Etag".into(), format!("\"{sha}\"")),
                ("X-Linked-Size".into(), body.len().to_string()),
                ("Location".into(), format!("{origin}/cdn/{sha}")),
            ];
            drop(g);
            return respond(&conn, "302 Found", &h, b"", head);
        }
        let h = [commit, ("ETag".into(), format!("\"{}\"", git_sha1(&body)))];
        drop(g);
        return respond(&conn, "200 OK", &h, &body, head);
    }
    if let Some(sha) = path.strip_prefix("/cdn/") {
        let Some(mut body) = g.files.values().find(|b| sha256(b) == sha).cloned() else {
            drop(g);
            return respond(&conn, "404 Not Found", &[], b"", head);
        };
        if g.corrupt.as_deref() == Some(sha) {
            body[0] ^= 0xff;
        }
        let full = body.len();
        if g.flaky.as_deref() == Some(sha) && range.is_none() {
            g.flaky = None;
            drop(g);
            // Announce it all, send half, hang up.
            let h = [("Content-Length".to_string(), full.to_string())];
            let mut s = &conn;
            respond(&conn, "200 OK", &h, b"", true)?;
            s.write_all(&body[..full / 2])?;
            s.flush()?;
            return conn.shutdown(std::net::Shutdown::Both);
        }
        drop(g);
        return match range {
            Some(from) if (from as usize) < full => respond(
                &conn,
                "206 Partial Content",
                &[(
                    "Content-Range".into(),
                    format!("bytes {from}-{}/{full}", full - 1),
                )],
                &body[from as usize..],
                head,
            ),
            _ => respond(&conn, "200 OK", &[], &body, head),
        };
    }
    if let Some(dir) = path.strip_prefix("/api/datasets/bigcode/bigcodebench/tree/main/") {
        let mut entries: Vec<serde_json::Value> = g
            .files
            .iter()
            .filter(|(p, _)| p.rsplit_once('/').map(|(d, _)| d) == Some(dir))
            .map(|(p, b)| {
                let mut e = serde_json::json!({"type": "file", "oid": git_sha1(b), "size": b.len(), "path": p});
                if g.lfs.contains(p) {
                    e["lfs"] = serde_json::json!({"oid": sha256(b), "size": b.len(), "pointerSize": 134});
                }
                e
            })
            .collect();
        entries.sort_by_key(|e| e["path"].as_str().unwrap().to_string());
        drop(g);
        let body = serde_json::to_vec(&entries).unwrap();
        return respond(
            &conn,
            "200 OK",
            &[("Content-Type".into(), "application/json".into())],
            &body,
            head,
        );
    }
    drop(g);
    respond(
        &conn,
        "404 Not Found",
        &[("X-Error-Code".into(), "RepoNotFound".into())],
        b"",
        head,
    )
}

const PARQUET: &str = "data/v0.1.0_hf-00000-of-00001.parquet";
const JSONL: &str = "data/v0.1.4-00000-of-00001.jsonl";

fn hub_with_data() -> (Arc<Mutex<Hub>>, Vec<u8>) {
    let parquet = parquet_bytes(&records(3, "v0.1.0_hf"));
    let mut h = Hub::default();
    h.files.insert("README.md".into(), CARD.as_bytes().to_vec());
    h.files.insert(PARQUET.into(), parquet.clone());
    h.files
        .insert(JSONL.into(), jsonl_bytes(&records(2, "v0.1.4")));
    h.lfs = vec![PARQUET.into(), JSONL.into()];
    (Arc::new(Mutex::new(h)), parquet)
}

fn opts(endpoint: &str, cache: &Path, offline: bool) -> HubOptions {
    HubOptions {
        endpoint: endpoint.to_string(),
        cache_dir: cache.to_path_buf(),
        offline,
        token: None,
    }
}

fn cdn_gets(hub: &Mutex<Hub>) -> Vec<String> {
    hub.lock()
        .unwrap()
        .log
        .iter()
        .filter(|l| l.starts_with("GET /cdn/"))
        .cloned()
        .collect()
}

#[test]
fn hub_bigcodebench_is_downloaded_cached_resumed_checked_and_read_offline() {
    let (hub, parquet) = hub_with_data();
    let endpoint = serve(hub.clone());
    let cache = tempfile::tempdir().unwrap();
    let py = Path::new("python3");
    let sha = sha256(&parquet);
    hub.lock().unwrap().flaky = Some(sha.clone());

    // The default version (v0.1.0_hf): the Parquet split, resumed after the dropped transfer.
    let src = ProblemSource::parse("bigcodebench");
    let ps = load_problems_with(&src, py, &opts(&endpoint, cache.path(), false)).unwrap();
    let ids: Vec<&str> = ps.iter().map(|p| p.task_id.as_str()).collect();
    assert_eq!(ids, ["BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2"]);
    assert_eq!(ps[2].canonical_solution, "    return x + 2\n");
    assert!(ps[1].complete_prompt.contains("Add 1 (v0.1.0_hf)"));
    assert_eq!(ps[1].calibration_prompt(), ps[1].complete_prompt);
    let gets = cdn_gets(&hub);
    assert!(
        gets.iter()
            .any(|g| g.contains(&sha) && g.contains("range=") && !g.ends_with("range=0")),
        "the second transfer asks for the rest: {gets:?}"
    );

    // huggingface_hub's cache layout.
    let repo = cache.path().join("datasets--bigcode--bigcodebench");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        COMMIT
    );
    let pointer = repo.join("snapshots").join(COMMIT).join(PARQUET);
    let target = std::fs::read_link(&pointer).unwrap();
    assert_eq!(target, PathBuf::from(format!("../../../blobs/{sha}")));
    assert_eq!(std::fs::read(&pointer).unwrap(), parquet);
    assert!(repo.join("blobs").join(git_sha1(CARD.as_bytes())).is_file());

    // Cached: asked again, nothing is transferred again.
    let before = cdn_gets(&hub).len();
    let again = load_problems_with(&src, py, &opts(&endpoint, cache.path(), false)).unwrap();
    assert_eq!(again, ps);
    assert_eq!(cdn_gets(&hub).len(), before);

    // Another version: the JSONL split.
    let v4 = ProblemSource::parse("bigcodebench@v0.1.4");
    let ps4 = load_problems_with(&v4, py, &opts(&endpoint, cache.path(), false)).unwrap();
    assert_eq!(ps4.len(), 2);
    assert!(ps4[0].instruct_prompt.contains("(v0.1.4)"));

    // Offline: from the cache, without a single request; a version never fetched is named.
    let n = hub.lock().unwrap().log.len();
    let off =
        load_problems_with(&src, py, &opts("http://127.0.0.1:9", cache.path(), true)).unwrap();
    assert_eq!(off, ps);
    assert_eq!(hub.lock().unwrap().log.len(), n);
    let e = load_problems_with(
        &ProblemSource::parse("bigcodebench-hard"),
        py,
        &opts(&endpoint, cache.path(), true),
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("offline"), "{e:#}");

    // A version the card does not list.
    let e = load_problems_with(
        &ProblemSource::parse("bigcodebench@v9"),
        py,
        &opts(&endpoint, cache.path(), false),
    )
    .unwrap_err();
    let e = format!("{e:#}");
    assert!(e.contains("v9") && e.contains("v0.1.0_hf, v0.1.4"), "{e}");

    // A renamed repository (a relative redirect) is followed.
    let d = Dataset::new(
        &opts(&endpoint, cache.path(), false),
        "bigcode/old-name",
        "main",
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(d.file("README.md").unwrap()).unwrap(),
        CARD
    );
}

#[test]
fn hub_a_corrupt_download_is_refused_and_not_kept() {
    let (hub, parquet) = hub_with_data();
    let endpoint = serve(hub.clone());
    let cache = tempfile::tempdir().unwrap();
    let sha = sha256(&parquet);
    hub.lock().unwrap().corrupt = Some(sha.clone());
    let e = load_problems_with(
        &ProblemSource::parse("bigcodebench"),
        Path::new("python3"),
        &opts(&endpoint, cache.path(), false),
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("checksum mismatch"), "{e:#}");
    let blobs = cache.path().join("datasets--bigcode--bigcodebench/blobs");
    assert!(!blobs.join(&sha).exists());
    assert!(!blobs.join(format!("{sha}.incomplete")).exists());
    // Fixed on the server: the next run gets it.
    hub.lock().unwrap().corrupt = None;
    let ps = load_problems_with(
        &ProblemSource::parse("bigcodebench"),
        Path::new("python3"),
        &opts(&endpoint, cache.path(), false),
    )
    .unwrap();
    assert_eq!(ps.len(), 3);
}

/// The command line: HF_ENDPOINT and HF_HOME are honoured, and `--offline` works from the
/// cache after the server is gone; local Parquet, JSONL and gzip files load as they are.
#[test]
fn hub_exec_runs_bigcodebench_from_the_hub_and_offline() {
    let (hub, parquet) = hub_with_data();
    let endpoint = serve(hub.clone());
    let home = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], endpoint: &str| {
        let out = std::process::Command::new(EXE)
            .args([
                "exec",
                "--problems",
                "bigcodebench",
                "--samples",
                "canonical",
            ])
            .args(["--python", "python3", "--format", "json", "--jobs", "1"])
            .args(extra)
            .env("HF_ENDPOINT", endpoint)
            .env("HF_HOME", home.path())
            .env_remove("HF_HUB_CACHE")
            .env_remove("HF_HUB_OFFLINE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["summary"].clone()
    };
    let s = run(&[], &endpoint);
    assert_eq!(
        (s["total"].as_u64(), s["pass"].as_u64()),
        (Some(3), Some(3)),
        "{s}"
    );
    assert!(home
        .path()
        .join("hub/datasets--bigcode--bigcodebench")
        .is_dir());
    let n = hub.lock().unwrap().log.len();
    let s = run(&["--offline"], "http://127.0.0.1:9");
    assert_eq!(s["pass"].as_u64(), Some(3), "{s}");
    assert_eq!(hub.lock().unwrap().log.len(), n);

    // Local files: Parquet, JSONL, gzipped JSONL.
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("bcb.parquet");
    std::fs::write(&pq, &parquet).unwrap();
    let jl = dir.path().join("bcb.jsonl");
    std::fs::write(&jl, jsonl_bytes(&records(3, "v0.1.0_hf"))).unwrap();
    let gz = dir.path().join("bcb.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&jsonl_bytes(&records(3, "v0.1.0_hf")))
        .unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = load_problems(&ProblemSource::Path(pq), Path::new("python3")).unwrap();
    let b = load_problems(&ProblemSource::Path(jl), Path::new("python3")).unwrap();
    let c = load_problems(&ProblemSource::Path(gz), Path::new("python3")).unwrap();
    assert_eq!(a, b);
    assert_eq!(b, c);
    let _ = std::io::Cursor::new(Vec::<u8>::new()).read(&mut [0u8; 0]);
}

/// The shared even half of the real BigCodeBench, in the Hugging Face format, loads as it is.
#[test]
fn hub_the_shared_even_half_loads_as_it_is() {
    let Some(f) = shared(
        "bigcodebench/BigCodeBench-even.jsonl.gz",
        "the real BigCodeBench not loaded",
    ) else {
        return;
    };
    let ps = load_problems(
        &ProblemSource::parse(f.to_str().unwrap()),
        Path::new("python3"),
    )
    .unwrap();
    assert_eq!(ps.len(), 570);
    assert!(ps
        .iter()
        .all(|p| !p.complete_prompt.is_empty() && p.test.contains("TestCases")));
    assert_eq!(ps[1].task_id, "BigCodeBench/2");
}

/// ConvCodeWorld's loop on BigCodeBench as a user runs it from a fresh machine: the tasks
/// from the Hub (`--problems bigcodebench`), the model at a loopback endpoint. Turn 0 is
/// generated from the split's `instruct_prompt`s, evaluated, and the failing task is
/// refined at turn 1 with execution feedback, in the original's file layout.
#[test]
fn hub_convcode_run_on_bigcodebench_against_the_loopback_model() {
    use pivot_llm::loopback::{LoopbackServer, Script};
    let (hub, _) = hub_with_data();
    let endpoint = serve(hub);
    let home = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    // Task k wants x + k: the model returns x + 1 for task 1 and x (right for task 0 only)
    // otherwise, so task 2 fails at turn 0 and is asked again with its feedback.
    let script: Script = serde_json::from_value(serde_json::json!({
        "rules": [{"name": "one", "contains": ["Add 1 to x"], "code": "def task_func(x):\n    return x + 1"}],
        "default": {"code": "def task_func(x):\n    return x"}
    }))
    .unwrap();
    let model = LoopbackServer::start(script).unwrap();
    let out = std::process::Command::new(EXE)
        .args(["convcode", "run", "--model", "org/coder", "--base-url"])
        .arg(model.base_url())
        .args(["--problems", "bigcodebench", "--python", "python3"])
        .args(["--turns", "1", "--config", "CF_EF_FULL", "--results"])
        .arg(results.path())
        .env("HF_ENDPOINT", &endpoint)
        .env("HF_HOME", home.path())
        .env_remove("HF_HUB_CACHE")
        .env_remove("HF_HUB_OFFLINE")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let seen = model.seen();
    for k in 0..3 {
        assert!(
            seen.iter()
                .any(|s| s.prompt.contains(&format!("Add {k} to x (v0.1.0_hf)."))),
            "turn 0 asks with the split's instruct prompt of task {k}"
        );
    }
    let t0 = results.path().join("bigcodebench/sanitized_calibrated_samples/instruct/org--coder--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json");
    let t0: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&t0).unwrap()).unwrap();
    let status = |k: usize| t0["eval"][format!("BigCodeBench/{k}")][0]["status"].clone();
    assert_eq!(
        (status(0), status(1), status(2)),
        ("pass".into(), "pass".into(), "fail".into()),
        "{t0}"
    );
    let log = results
        .path()
        .join("results/v0.3.6/bigcodebench_org_coder_CF_EF_FULL.jsonl");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("BigCodeBench/2"),
        "turn 1 refines the failing task: {log}"
    );
    assert!(
        seen.iter().any(|s| s.prompt.contains("test_add")),
        "turn 1's prompt carries the execution feedback (the failing test)"
    );
}
