//! On-disk response cache: one JSON file per request, named by a SHA-256 of what determines
//! the answer (endpoint kind, model, prompt, sampling parameters). Reruns are free and
//! reproducible; `--offline` reads only from here.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a cached answer is keyed on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CacheKey {
    pub kind: String,
    pub model: String,
    pub prompt: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub stop: Vec<String>,
}

impl CacheKey {
    /// Hex SHA-256 of the canonical JSON of the key.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        pivot_base::digest::sha256_hex(&json)
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: CacheKey,
    completion: String,
}

#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(&digest[..2]).join(format!("{digest}.json"))
    }

    /// The cached completion, if any. A corrupt or mismatching entry counts as absent.
    pub fn get(&self, key: &CacheKey) -> Option<String> {
        let found = pivot_base::bounded_read::read_to_string(&self.path(&key.digest()))
            .ok()
            .and_then(|text| serde_json::from_str::<Entry>(&text).ok())
            .filter(|entry| entry.key == *key)
            .map(|entry| entry.completion);
        tracing::debug!(
            digest = %key.digest(),
            hit = found.is_some(),
            "model answer cache {}",
            if found.is_some() { "hit" } else { "miss" }
        );
        found
    }

    /// Store atomically and durably (`durable::write_atomic`), so an interruption never
    /// leaves a half-written entry; the temporary file of a killed write is swept by the
    /// next run (`durable::sweep_stale_temps`).
    pub fn put(&self, key: &CacheKey, completion: &str) -> Result<()> {
        let path = self.path(&key.digest());
        let entry = Entry {
            key: key.clone(),
            completion: completion.to_string(),
        };
        let bytes = serde_json::to_vec(&entry)?;
        pivot_base::durable::write_atomic(&path, &bytes)
            .with_context(|| format!("cannot store a cache entry in {}", self.dir.display()))
    }

    /// How many answers the cache holds (to say what a resumed run starts from).
    pub fn entries(&self) -> usize {
        let Ok(dirs) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        dirs.flatten()
            .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|d| std::fs::read_dir(d.path()).ok())
            .flat_map(|files| files.flatten())
            .filter(|f| f.file_name().to_string_lossy().ends_with(".json"))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(prompt: &str) -> CacheKey {
        CacheKey {
            kind: "chat".into(),
            model: "m".into(),
            prompt: prompt.into(),
            temperature: 0.0,
            max_tokens: 2048,
            stop: vec!["\n\n---\n\n".into()],
        }
    }

    #[test]
    fn round_trip_and_key_sensitivity() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path());
        assert_eq!(c.get(&key("a")), None);
        c.put(&key("a"), "answer").unwrap();
        assert_eq!(c.get(&key("a")).as_deref(), Some("answer"));
        assert_eq!(c.get(&key("a ")), None);
        let mut k = key("a");
        k.max_tokens = 10;
        assert_ne!(k.digest(), key("a").digest());
    }
}
