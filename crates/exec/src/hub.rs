//! Files of a Hugging Face Hub dataset repository, downloaded as `huggingface_hub`'s
//! `hf_hub_download` does and kept in its cache layout, so either program reuses what the
//! other fetched:
//!
//! - `HEAD {endpoint}/datasets/{repo}/resolve/{revision}/{path}` without following redirects
//!   (a relative one, a renamed repository, is followed): `X-Repo-Commit` is the commit,
//!   `X-Linked-Etag` (LFS files: their SHA-256) or `ETag` (others: their git blob SHA-1) the
//!   blob's name, `Location` where an LFS file really is, `X-Linked-Size` / `Content-Length`
//!   its size;
//! - `GET` of that location into `blobs/{etag}.incomplete`, resumed with `Range: bytes=N-`
//!   after an interruption, checked against the ETag (SHA-256, or git's blob SHA-1), then
//!   renamed to `blobs/{etag}`; `snapshots/{commit}/{path}` links to it and `refs/{revision}`
//!   holds the commit;
//! - `GET {endpoint}/api/datasets/{repo}/tree/{revision}/{dir}` lists a folder.
//!
//! The cache is `HF_HUB_CACHE`, else `HF_HOME/hub`, else `XDG_CACHE_HOME/huggingface/hub`,
//! else `~/.cache/huggingface/hub`; the endpoint `HF_ENDPOINT` (default
//! `https://huggingface.co`); `HF_HUB_OFFLINE=1` (or `offline`) answers from the cache only,
//! naming what is missing; `HF_TOKEN` is sent to the endpoint (never to a CDN it redirects to).

use pivot_base::percent::encode_path;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, RANGE};
use reqwest::StatusCode;
use sha1::Digest as _;

/// Where files come from and where they are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubOptions {
    /// `https://huggingface.co` or `HF_ENDPOINT`, without a trailing `/`.
    pub endpoint: String,
    /// The hub cache (`.../huggingface/hub`).
    pub cache_dir: PathBuf,
    /// Answer from the cache only.
    pub offline: bool,
    pub token: Option<String>,
}

impl HubOptions {
    /// From the environment variables `huggingface_hub` reads.
    pub fn from_env() -> HubOptions {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let cache_dir = if let Some(c) = var("HF_HUB_CACHE") {
            PathBuf::from(c)
        } else if let Some(h) = var("HF_HOME") {
            PathBuf::from(h).join("hub")
        } else if let Some(x) = var("XDG_CACHE_HOME") {
            PathBuf::from(x).join("huggingface/hub")
        } else {
            let home = var("HOME").unwrap_or_else(|| "/".into());
            PathBuf::from(home).join(".cache/huggingface/hub")
        };
        let offline = var("HF_HUB_OFFLINE")
            .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
            .unwrap_or(false);
        HubOptions {
            endpoint: var("HF_ENDPOINT")
                .unwrap_or_else(|| "https://huggingface.co".into())
                .trim_end_matches('/')
                .to_string(),
            cache_dir,
            offline,
            token: var("HF_TOKEN"),
        }
    }
}

/// One entry of a folder listing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct TreeEntry {
    #[serde(rename = "type")]
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub size: u64,
}

/// A dataset repository on the Hub (or in the cache).
pub struct Dataset {
    opts: HubOptions,
    repo: String,
    revision: String,
    client: Option<Client>,
}

/// `datasets--owner--name`, the cache folder `huggingface_hub` uses.
fn repo_folder(repo: &str) -> String {
    format!("datasets--{}", repo.replace('/', "--"))
}

fn is_commit(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Dataset {
    pub fn new(opts: &HubOptions, repo: &str, revision: &str) -> Result<Dataset> {
        if repo.split('/').count() != 2 || repo.split('/').any(|s| s.is_empty() || s == "..") {
            bail!("{repo:?} is not a Hub repository id (owner/name)");
        }
        let client = if opts.offline {
            None
        } else {
            Some(
                Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(Duration::from_secs(20))
                    .timeout(Duration::from_secs(600))
                    .user_agent(concat!("pivot-lsp/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .context("building the HTTP client")?,
            )
        };
        Ok(Dataset {
            opts: opts.clone(),
            repo: repo.to_string(),
            revision: revision.to_string(),
            client,
        })
    }

    fn storage(&self) -> PathBuf {
        self.opts.cache_dir.join(repo_folder(&self.repo))
    }

    /// What the reader is told about where the files come from.
    pub fn describe(&self) -> String {
        format!(
            "{} @ {} ({})",
            self.repo,
            self.revision,
            if self.opts.offline {
                format!("offline, from {}", self.storage().display())
            } else {
                self.opts.endpoint.clone()
            }
        )
    }

    fn resolve_url(&self, path: &str) -> String {
        format!(
            "{}/datasets/{}/resolve/{}/{}",
            self.opts.endpoint,
            self.repo,
            encode_path(&self.revision).replace('/', "%2F"),
            encode_path(path)
        )
    }

    fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        to_endpoint: bool,
    ) -> Result<reqwest::blocking::RequestBuilder> {
        let client = self.client.as_ref().context("offline")?;
        let mut r = client.request(method, url);
        if let (true, Some(t)) = (to_endpoint, &self.opts.token) {
            r = r.bearer_auth(t);
        }
        Ok(r)
    }

    /// The commit a cached revision points to.
    fn cached_commit(&self) -> Option<String> {
        if is_commit(&self.revision) {
            return Some(self.revision.clone());
        }
        pivot_base::bounded_read::read_to_string(&self.storage().join("refs").join(&self.revision))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| is_commit(s))
    }

    /// The cached copy of `path` at this revision, if any.
    fn cached(&self, path: &str) -> Option<PathBuf> {
        let commit = self.cached_commit()?;
        let p = self.storage().join("snapshots").join(commit).join(path);
        p.is_file().then_some(p)
    }

    /// `path` of the repository at this revision, downloaded when not cached; its local path.
    pub fn file(&self, path: &str) -> Result<PathBuf> {
        if self.opts.offline {
            return self.cached(path).with_context(|| {
                format!(
                    "offline: {path} of {} @ {} is not in the cache {} (run once without --offline / HF_HUB_OFFLINE)",
                    self.repo,
                    self.revision,
                    self.opts.cache_dir.display()
                )
            });
        }
        if is_commit(&self.revision) {
            if let Some(p) = self.cached(path) {
                return Ok(p);
            }
        }
        let meta = match self.head(path) {
            Ok(m) => m,
            Err(e) if is_connection_error(&e) => {
                // As huggingface_hub does: without a connection, the cached copy will do.
                return self.cached(path).with_context(|| {
                    format!("{e:#}; and {path} of {} is not in the cache", self.repo)
                });
            }
            Err(e) => return Err(e),
        };
        let storage = self.storage();
        let blob = storage.join("blobs").join(&meta.etag);
        let pointer = storage.join("snapshots").join(&meta.commit).join(path);
        for d in [blob.parent(), pointer.parent(), Some(&storage.join("refs"))]
            .into_iter()
            .flatten()
        {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        if !is_commit(&self.revision) {
            let refs = storage.join("refs").join(&self.revision);
            if let Some(parent) = refs.parent() {
                std::fs::create_dir_all(parent)?;
            }
            pivot_base::durable::write_atomic(&refs, meta.commit.as_bytes())?;
        }
        if !blob.is_file() {
            self.download(&meta, &blob)?;
        }
        if !pointer.exists() {
            link(&blob, &pointer)?;
        }
        Ok(pointer)
    }

    /// The entries of folder `dir` at this revision (offline: of the cached snapshot).
    pub fn list(&self, dir: &str) -> Result<Vec<TreeEntry>> {
        let from_cache = || -> Result<Vec<TreeEntry>> {
            let commit = self.cached_commit().with_context(|| {
                format!(
                    "offline: revision {} of {} is not in the cache {}",
                    self.revision,
                    self.repo,
                    self.opts.cache_dir.display()
                )
            })?;
            let base = self.storage().join("snapshots").join(commit);
            let mut out = Vec::new();
            if let Ok(rd) = std::fs::read_dir(base.join(dir)) {
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let is_dir = e.path().is_dir();
                    out.push(TreeEntry {
                        kind: if is_dir { "directory" } else { "file" }.into(),
                        path: if dir.is_empty() {
                            name
                        } else {
                            format!("{dir}/{name}")
                        },
                        size: e.metadata().map(|m| m.len()).unwrap_or(0),
                    });
                }
            }
            out.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(out)
        };
        if self.opts.offline {
            return from_cache();
        }
        let mut url = format!(
            "{}/api/datasets/{}/tree/{}/{}",
            self.opts.endpoint,
            self.repo,
            encode_path(&self.revision).replace('/', "%2F"),
            encode_path(dir)
        );
        let mut out: Vec<TreeEntry> = Vec::new();
        // The listing comes in pages, the next one named by a `Link: <...>; rel="next"` header.
        for _ in 0..1000 {
            let resp = match self.request(reqwest::Method::GET, &url, true)?.send() {
                Ok(r) => r,
                Err(e) if e.is_connect() || e.is_timeout() => {
                    return from_cache().with_context(|| format!("listing {url}: {e}"))
                }
                Err(e) => return Err(e).with_context(|| format!("listing {url}")),
            };
            let resp = check_status(resp, &url)?;
            let next = next_link(resp.headers());
            let page: Vec<TreeEntry> = resp
                .json()
                .with_context(|| format!("{url}: not a folder listing"))?;
            out.extend(page);
            match next {
                Some(n) => url = n,
                None => break,
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn head(&self, path: &str) -> Result<Meta> {
        let mut url = self.resolve_url(path);
        for _ in 0..10 {
            let resp = self
                .request(reqwest::Method::HEAD, &url, true)?
                .header(reqwest::header::ACCEPT_ENCODING, "identity")
                .send()
                .map_err(|e| anyhow::Error::new(e).context(format!("HEAD {url}")))?;
            let status = resp.status();
            let h = resp.headers().clone();
            let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::to_string);
            if status.is_redirection() {
                let loc =
                    get("location").with_context(|| format!("{url}: redirect without Location"))?;
                if loc.starts_with('/') {
                    // A relative redirect (a renamed repository): follow it.
                    url = format!("{}{loc}", origin(&url));
                    continue;
                }
            } else {
                check_status(resp, &url)?;
            }
            let commit = get("x-repo-commit").with_context(|| {
                format!("{url}: no X-Repo-Commit header: not a Hugging Face Hub endpoint?")
            })?;
            let etag = get("x-linked-etag")
                .or_else(|| get("etag"))
                .map(|e| e.trim_start_matches("W/").trim_matches('"').to_string())
                .with_context(|| format!("{url}: no ETag, so the file cannot be checked"))?;
            if etag.is_empty() || etag.contains('/') || etag.contains("..") {
                bail!("{url}: unusable ETag {etag:?}");
            }
            let size = get("x-linked-size")
                .or_else(|| get("content-length"))
                .and_then(|s| s.parse().ok());
            let location = if status.is_redirection() {
                get("location").unwrap_or_else(|| url.clone())
            } else {
                url.clone()
            };
            return Ok(Meta {
                commit,
                etag,
                size,
                to_endpoint: location.starts_with(&self.opts.endpoint),
                location,
            });
        }
        bail!("{url}: too many redirects")
    }

    fn download(&self, meta: &Meta, blob: &Path) -> Result<()> {
        let partial = blob.with_extension("incomplete");
        let lock_path = blob.with_extension("lock");
        let lock = File::create(&lock_path)
            .with_context(|| format!("creating {}", lock_path.display()))?;
        // One download of a blob at a time (another process may be fetching it).
        lock.lock()
            .with_context(|| format!("locking {}", lock_path.display()))?;
        if blob.is_file() {
            return Ok(());
        }
        let mut last_err = None;
        // An interrupted transfer resumes where it stopped, a few times.
        for _ in 0..4 {
            match self.transfer(meta, &partial) {
                Ok(()) => {
                    last_err = None;
                    break;
                }
                Err(e) => last_err = Some(e),
            }
        }
        if let Some(e) = last_err {
            return Err(e.context(format!(
                "downloading {} (what arrived is kept in {} and resumed next time)",
                meta.location,
                partial.display()
            )));
        }
        if let Err(e) = verify(&partial, &meta.etag, meta.size) {
            let _ = std::fs::remove_file(&partial);
            return Err(e.context(format!("{} (the download was deleted)", meta.location)));
        }
        std::fs::rename(&partial, blob).with_context(|| format!("writing {}", blob.display()))?;
        let _ = std::fs::remove_file(&lock_path);
        Ok(())
    }

    /// One GET into `partial`, from its current length on.
    fn transfer(&self, meta: &Meta, partial: &Path) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(partial)
            .with_context(|| format!("opening {}", partial.display()))?;
        let have = f.metadata()?.len();
        if meta.size.is_some_and(|s| have == s) {
            return Ok(());
        }
        let mut req = self.request(reqwest::Method::GET, &meta.location, meta.to_endpoint)?;
        if have > 0 {
            req = req.header(RANGE, format!("bytes={have}-"));
        }
        let mut resp = req
            .send()
            .with_context(|| format!("GET {}", meta.location))?;
        match resp.status() {
            StatusCode::PARTIAL_CONTENT if have > 0 => {}
            StatusCode::RANGE_NOT_SATISFIABLE if have > 0 => return Ok(()),
            StatusCode::OK => {
                // The whole file again (the server ignored the range).
                f.set_len(0)?;
                f.rewind()?;
            }
            _ => {
                check_status(resp, &meta.location)?;
                bail!("{}: unexpected answer", meta.location);
            }
        }
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = resp
                .read(&mut buf)
                .with_context(|| format!("reading {}", meta.location))?;
            if n == 0 {
                break;
            }
            f.write_all(&buf[..n])
                .with_context(|| format!("writing {}", partial.display()))?;
        }
        f.flush()?;
        if let Some(size) = meta.size {
            let got = f.metadata()?.len();
            if got < size {
                bail!(
                    "{}: the transfer ended at {got} of {size} bytes",
                    meta.location
                );
            }
        }
        Ok(())
    }
}

/// What a HEAD told about a file.
#[derive(Debug)]
struct Meta {
    commit: String,
    etag: String,
    size: Option<u64>,
    location: String,
    /// The location is on the endpoint (the token may go there).
    to_endpoint: bool,
}

fn origin(url: &str) -> String {
    let after = url.find("://").map(|i| i + 3).unwrap_or(0);
    match url[after..].find('/') {
        Some(i) => url[..after + i].to_string(),
        None => url.to_string(),
    }
}

fn next_link(h: &HeaderMap) -> Option<String> {
    let link = h.get("link")?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let part = part.trim();
        if !part.contains("rel=\"next\"") {
            return None;
        }
        let start = part.find('<')? + 1;
        let end = part.find('>')?;
        Some(part[start..end].to_string())
    })
}

fn is_connection_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<reqwest::Error>()
            .is_some_and(|r| r.is_connect() || r.is_timeout())
    })
}

/// The Hub's errors, said with what its `X-Error-Code` means.
fn check_status(resp: Response, url: &str) -> Result<Response> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let code = resp
        .headers()
        .get("x-error-code")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let msg = resp
        .headers()
        .get("x-error-message")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let what = match code.as_str() {
        "RepoNotFound" => "no such repository (or it is private or gated: set HF_TOKEN)",
        "RevisionNotFound" => "no such revision",
        "EntryNotFound" => "no such file at this revision",
        "GatedRepo" => "the repository is gated: accept its terms and set HF_TOKEN",
        _ => "",
    };
    bail!(
        "{url}: {status}{}{}",
        if what.is_empty() {
            String::new()
        } else {
            format!(": {what}")
        },
        if msg.is_empty() {
            String::new()
        } else {
            format!(" ({msg})")
        }
    )
}

/// Checks a downloaded file against its ETag: SHA-256 (64 hex digits, LFS files) or git's
/// blob SHA-1 (40 hex digits), and its announced size.
fn verify(path: &Path, etag: &str, size: Option<u64>) -> Result<()> {
    let len = std::fs::metadata(path)?.len();
    if let Some(s) = size {
        if s != len {
            bail!("size mismatch: {len} bytes, the Hub announced {s}");
        }
    }
    let hex = pivot_base::digest::hex;
    let is_hex = etag.bytes().all(|b| b.is_ascii_hexdigit());
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let got = if etag.len() == 64 && is_hex {
        let mut h = sha2::Sha256::new();
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        hex(&h.finalize())
    } else if etag.len() == 40 && is_hex {
        let mut h = sha1::Sha1::new();
        h.update(format!("blob {len}\0").as_bytes());
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        hex(&h.finalize())
    } else {
        // Not a content hash: nothing to check it against.
        return Ok(());
    };
    if !got.eq_ignore_ascii_case(etag) {
        bail!("checksum mismatch: the file hashes to {got}, its ETag is {etag}");
    }
    Ok(())
}

/// `pointer` -> `blob` as a relative symlink (as huggingface_hub), or a copy where links fail.
fn link(blob: &Path, pointer: &Path) -> Result<()> {
    let depth = pointer
        .parent()
        .and_then(|p| p.strip_prefix(blob.parent()?.parent()?).ok())
        .map(|rel| rel.components().count())
        .unwrap_or(0);
    let mut target = PathBuf::new();
    for _ in 0..depth {
        target.push("..");
    }
    target.push("blobs");
    target.push(blob.file_name().unwrap_or_default());
    if std::os::unix::fs::symlink(&target, pointer).is_err() {
        std::fs::copy(blob, pointer).with_context(|| format!("writing {}", pointer.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_blob_and_sha256_etags_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello\n").unwrap();
        // `git hash-object` of "hello\n".
        verify(&p, "ce013625030ba8dba906f756967f9e9ca394464a", Some(6)).unwrap();
        verify(
            &p,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
            None,
        )
        .unwrap();
        let e = verify(&p, &"0".repeat(64), None).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        assert!(verify(&p, "ce013625030ba8dba906f756967f9e9ca394464a", Some(7)).is_err());
    }

    #[test]
    fn cache_folder_and_urls_follow_huggingface_hub() {
        assert_eq!(
            repo_folder("bigcode/bigcodebench"),
            "datasets--bigcode--bigcodebench"
        );
        assert_eq!(
            encode_path("data/v0.1.0_hf-00000-of-00001.parquet"),
            "data/v0.1.0_hf-00000-of-00001.parquet"
        );
        assert_eq!(encode_path("a b/c"), "a%20b/c");
        assert_eq!(
            origin("http://127.0.0.1:9/datasets/x"),
            "http://127.0.0.1:9"
        );
        let opts = HubOptions {
            endpoint: "http://h".into(),
            cache_dir: PathBuf::from("/c"),
            offline: true,
            token: None,
        };
        let d = Dataset::new(&opts, "bigcode/bigcodebench", "refs/pr/1").unwrap();
        assert_eq!(
            d.resolve_url("README.md"),
            "http://h/datasets/bigcode/bigcodebench/resolve/refs%2Fpr%2F1/README.md"
        );
        assert!(Dataset::new(&opts, "../x", "main").is_err());
    }
}
