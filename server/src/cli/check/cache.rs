//! `check`'s cache: what the server published for a file, kept under the root
//! (`.pivot-cache/check/`, see pivot_base::cache_dir) so that a second run opens only the
//! files that changed.
//!
//! A table belongs to one context: the cache's format, pivot-lsp's version, the root, the
//! set-up sent to the servers (pivots file, conversation, session), the SHA-256 of the
//! pivots file's and the conversation's bytes, and this user's cache secret (so that a
//! table shipped inside a checked tree is never the one read: its name cannot be guessed).
//! A change to any of them is another table, so every file is checked again. Within a table an entry is keyed by the file's path from
//! the root and the SHA-256 of its text: an edited file misses, the others hit. The entry
//! holds the diagnostics exactly as published (LSP's JSON), so a finding from the cache is
//! the finding a server gives, byte for byte in every format.

use super::drive::Checked;
use super::report::sha256_hex;
use crate::lsp::SetupArgs;
use anyhow::Result;
use pivot_base::cache_dir::CacheDir;
use pivot_workspace::replies::HeadlessSetup;
use pivot_workspace::walk::SourceFile;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::Path;

/// The cache's space in the folder.
const SPACE: &str = "check";
/// Bumped whenever what a table holds or means changes.
const FORMAT: u32 = 1;
/// Entries a table keeps at most: this run's files first, then earlier runs' (a run over
/// part of the tree keeps the rest's entries), so a tree's table stays within this.
const MAX_ENTRIES: usize = 250_000;

/// The inputs every finding depends on besides the file itself.
pub struct Context<'a> {
    pub secret: &'a [u8],
    pub root: &'a Path,
    /// What the servers are set up with (`pivot/headless/setup`'s parameters).
    pub setup: &'a SetupArgs,
    pub pivots: Option<&'a [u8]>,
    pub conversation: Option<&'a [u8]>,
}

impl Context<'_> {
    /// The table's key: the SHA-256 of every input, each length-prefixed.
    pub fn key(&self) -> String {
        let mut text = String::new();
        let hash = |b: Option<&[u8]>| b.map(sha256_hex).unwrap_or_else(|| "-".into());
        for part in [
            format!("pivot-lsp check cache {FORMAT}"),
            sha256_hex(self.secret),
            crate::cli::shared::VERSION.to_string(),
            self.root.display().to_string(),
            serde_json::to_string(self.setup).unwrap_or_default(),
            hash(self.pivots),
            hash(self.conversation),
        ] {
            text.push_str(&format!("{}:{part}\n", part.len()));
        }
        sha256_hex(text.as_bytes())
    }
}

#[derive(Serialize, Deserialize)]
struct Table {
    format: u32,
    version: String,
    /// The full key, checked on reading (the file name is the same key).
    context: String,
    /// What the set-up returned, and the messages the server showed: a run whose every
    /// file is in the table starts no server.
    setup: HeadlessSetup,
    messages: Vec<String>,
    files: HashMap<String, Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    sha256: String,
    /// The diagnostics' JSON, kept as text: a table is read with a scan of each entry
    /// (parsed into diagnostics only for the files that hit, on the lookup's threads) and
    /// written with the unchanged entries copied as they are.
    diagnostics: Box<RawValue>,
}

/// A run's view of its table.
pub struct CheckCache {
    dir: CacheDir,
    key: String,
    /// The table read at the start (empty when there was none or it was unusable).
    old: HashMap<String, Entry>,
    /// The set-up and messages of the table, when one was read.
    pub setup: Option<(HeadlessSetup, Vec<String>)>,
}

impl CheckCache {
    /// The table of `context` in `dir`; a missing, unreadable or foreign one is empty.
    pub fn open(dir: CacheDir, context: &Context) -> CheckCache {
        let key = context.key();
        let table = dir
            .read(SPACE, &key)
            .and_then(|b| serde_json::from_slice::<Table>(&b).ok())
            .filter(|t| {
                t.format == FORMAT && t.version == crate::cli::shared::VERSION && t.context == key
            });
        let (old, setup) = match table {
            Some(t) => (t.files, Some((t.setup, t.messages))),
            None => (HashMap::new(), None),
        };
        CheckCache {
            dir,
            key,
            old,
            setup,
        }
    }

    pub fn dir_path(&self) -> &Path {
        self.dir.path()
    }

    /// Per file, its result from the cache, or None (a server checks it). Each file is read
    /// (through the bounded reader, as the servers read it) and looked up by its path and
    /// text on `jobs` threads, the hits' diagnostics parsed there. A file that cannot be
    /// read is `NotChecked` with the reason the servers' reader gives, without a server.
    pub fn lookup(
        &self,
        files: &[SourceFile],
        jobs: usize,
        max_bytes: u64,
    ) -> Vec<Option<Checked>> {
        let n = files.len();
        if self.old.is_empty() {
            return vec![None; n];
        }
        let mut hits: Vec<Option<Checked>> = vec![None; n];
        let jobs = jobs.clamp(1, n.max(1));
        let chunk = n.div_ceil(jobs).max(1);
        let old = &self.old;
        std::thread::scope(|s| {
            for (files, hits) in files.chunks(chunk).zip(hits.chunks_mut(chunk)) {
                s.spawn(move || {
                    for (f, hit) in files.iter().zip(hits) {
                        *hit = match pivot_workspace::walk::read_source(&f.abs, max_bytes) {
                            Err(problem) => Some(Checked::NotChecked(problem)),
                            Ok(text) => {
                                let sha256 = sha256_hex(text.as_bytes());
                                old.get(&f.rel)
                                    .filter(|e| e.sha256 == sha256)
                                    .and_then(|e| serde_json::from_str(e.diagnostics.get()).ok())
                                    .map(|diagnostics| Checked::Published {
                                        diagnostics,
                                        sha256,
                                    })
                            }
                        };
                    }
                });
            }
        });
        hits
    }

    /// Write the table back: this run's results (cached or fresh) and the earlier entries
    /// of files this run did not check, up to [`MAX_ENTRIES`].
    pub fn save(
        mut self,
        files: &[SourceFile],
        results: &[Checked],
        setup: &HeadlessSetup,
        messages: &[String],
    ) -> Result<()> {
        let mut entries: HashMap<String, Entry> = HashMap::with_capacity(files.len());
        for (f, r) in files.iter().zip(results) {
            if let Checked::Published {
                diagnostics,
                sha256,
            } = r
            {
                // An entry that hit is copied as it is; a new one is encoded.
                let entry = match self.old.remove(&f.rel) {
                    Some(e) if &e.sha256 == sha256 => e,
                    _ => Entry {
                        sha256: sha256.clone(),
                        diagnostics: serde_json::value::to_raw_value(diagnostics)?,
                    },
                };
                entries.insert(f.rel.clone(), entry);
            }
        }
        // A file of this run that could not be checked loses its entry too.
        let this_run: std::collections::HashSet<&str> =
            files.iter().map(|f| f.rel.as_str()).collect();
        let mut old: Vec<(String, Entry)> = self
            .old
            .into_iter()
            .filter(|(rel, _)| !this_run.contains(rel.as_str()))
            .collect();
        // Which earlier entries stay when the bound cuts: the first by path, so the choice
        // does not depend on the hash map's order.
        old.sort_by(|a, b| a.0.cmp(&b.0));
        let room = MAX_ENTRIES.saturating_sub(entries.len());
        entries.extend(old.into_iter().take(room));
        let table = Table {
            format: FORMAT,
            version: crate::cli::shared::VERSION.to_string(),
            context: self.key.clone(),
            setup: setup.clone(),
            messages: messages.to_vec(),
            files: entries,
        };
        self.dir
            .write(SPACE, &self.key, &serde_json::to_vec(&table)?)
    }
}
