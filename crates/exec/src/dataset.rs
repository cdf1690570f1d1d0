//! BigCodeBench as a command argument: `bigcodebench`, `bigcodebench-hard`, each with an
//! optional `@VERSION` (the Hub split; default [`DEFAULT_VERSION`], the split ConvCodeWorld and
//! its BigCodeBench fork load), read from the Hugging Face Hub (`super::hub`); and a dataset
//! file's records, JSONL (gzip or not) or Parquet.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::hub::{Dataset, HubOptions};

/// `load_dataset("bigcode/bigcodebench", split="v0.1.0_hf")`: the split ConvCodeWorld's
/// `dataset.py` and the fork's `BIGCODEBENCH_VERSION` name.
pub const DEFAULT_VERSION: &str = "v0.1.0_hf";

/// A BigCodeBench dataset on the Hub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubSource {
    /// `bigcode/bigcodebench` or `bigcode/bigcodebench-hard`.
    pub repo: String,
    /// The split (BigCodeBench's version), e.g. `v0.1.0_hf`, `v0.1.4`.
    pub split: String,
    /// The repository revision (`main`).
    pub revision: String,
}

impl HubSource {
    /// `bigcodebench[-hard][@VERSION]`, any case; None for anything else.
    pub fn parse(s: &str) -> Option<HubSource> {
        let (name, version) = match s.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (s, None),
        };
        let repo = match name.to_ascii_lowercase().as_str() {
            "bigcodebench" => "bigcode/bigcodebench",
            "bigcodebench-hard" => "bigcode/bigcodebench-hard",
            _ => return None,
        };
        let split = version.unwrap_or(DEFAULT_VERSION);
        if split.is_empty()
            || !split
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            return None;
        }
        Some(HubSource {
            repo: repo.into(),
            split: split.into(),
            revision: "main".into(),
        })
    }

    /// The split's files, downloaded (or from the cache), in order.
    pub fn files(&self, opts: &HubOptions) -> Result<Vec<PathBuf>> {
        let ds = Dataset::new(opts, &self.repo, &self.revision)?;
        // The dataset card says which files make each split; without one (or without this
        // split in it), `datasets`' own naming: data/{split}-*.
        let card = ds.file("README.md").ok();
        let (patterns, known) = match &card {
            Some(p) => {
                let text = pivot_base::bounded_read::read_to_string(p)
                    .with_context(|| format!("reading {}", p.display()))?;
                let all = card_splits(&text);
                let mine: Vec<String> = all
                    .iter()
                    .filter(|(s, _)| *s == self.split)
                    .map(|(_, p)| p.clone())
                    .collect();
                (mine, all.into_iter().map(|(s, _)| s).collect::<Vec<_>>())
            }
            None => (Vec::new(), Vec::new()),
        };
        let patterns = if patterns.is_empty() {
            vec![format!("data/{}-*", self.split)]
        } else {
            patterns
        };
        let mut wanted: Vec<String> = Vec::new();
        for pat in &patterns {
            let dir = pat.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            for e in ds.list(dir)? {
                if e.kind == "file" && glob_match(pat, &e.path) && !wanted.contains(&e.path) {
                    wanted.push(e.path);
                }
            }
        }
        wanted.sort();
        if wanted.is_empty() {
            let mut known = known;
            known.dedup();
            bail!(
                "{}: no files for version {:?}{}",
                ds.describe(),
                self.split,
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" (its card lists {})", known.join(", "))
                }
            );
        }
        wanted.iter().map(|f| ds.file(f)).collect()
    }
}

/// The `configs:` of a dataset card's YAML header: (split, path pattern) of the default
/// config, in order. Only the shape `datasets` writes is read:
/// `- config_name: default` / `data_files:` / `- split: S` / `path: P` (or a list of paths).
pub fn card_splits(card: &str) -> Vec<(String, String)> {
    let mut lines = card.lines();
    if lines.next().map(str::trim) != Some("---") {
        return Vec::new();
    }
    let header: Vec<&str> = lines.take_while(|l| l.trim() != "---").collect();
    let mut out = Vec::new();
    let mut in_configs = false;
    let mut config_ok = true;
    let mut split: Option<String> = None;
    let mut in_path_list = false;
    for raw in header {
        let indent = raw.len() - raw.trim_start().len();
        let line = raw.trim();
        if indent == 0 && !line.starts_with('-') {
            in_configs = line == "configs:";
            continue;
        }
        if !in_configs {
            continue;
        }
        let item = line.trim_start_matches("- ").trim();
        let unquote = |v: &str| v.trim().trim_matches('"').trim_matches('\'').to_string();
        if let Some(v) = item.strip_prefix("config_name:") {
            config_ok = unquote(v) == "default";
            split = None;
            in_path_list = false;
        } else if let Some(v) = item.strip_prefix("split:") {
            split = Some(unquote(v));
            in_path_list = false;
        } else if let Some(v) = item.strip_prefix("path:") {
            let v = unquote(v);
            if v.is_empty() {
                in_path_list = true;
            } else if let (true, Some(s)) = (config_ok, &split) {
                out.push((s.clone(), v));
            }
        } else if in_path_list && line.starts_with("- ") {
            if let (true, Some(s)) = (config_ok, &split) {
                out.push((s.clone(), unquote(item)));
            }
        }
    }
    out
}

/// `*` matches within one path segment; everything else literally.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let (pp, sp): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    if pp.len() != sp.len() {
        return false;
    }
    pp.iter()
        .zip(&sp)
        .all(|(p, s)| segment_match(p.as_bytes(), s.as_bytes()))
}

fn segment_match(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| segment_match(&p[1..], &s[i..])),
        Some(c) => s.first() == Some(c) && segment_match(&p[1..], &s[1..]),
    }
}

/// One record: its 1-based line (JSONL) or row (Parquet), and its fields.
pub type Record = (usize, serde_json::Map<String, serde_json::Value>);

/// A dataset file's records: Parquet (by its `PAR1` magic), else JSONL, gzipped or not (by
/// the gzip magic). Errors name the file and the line or row.
pub fn read_records(path: &Path) -> Result<Vec<Record>> {
    let raw = pivot_base::bounded_read::read(path)
        .with_context(|| format!("reading {}", path.display()))?;
    if raw.starts_with(b"PAR1") {
        return read_parquet(path, raw);
    }
    let text: Box<dyn Read> = if raw.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(std::io::Cursor::new(raw)))
    } else {
        Box::new(std::io::Cursor::new(raw))
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(text).lines().enumerate() {
        let lineno = i + 1;
        let line = line.with_context(|| format!("{}:{lineno}: unreadable line", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("{}:{lineno}: invalid JSON", path.display()))?;
        match value {
            serde_json::Value::Object(m) => out.push((lineno, m)),
            _ => bail!("{}:{lineno}: expected a JSON object", path.display()),
        }
    }
    if out.is_empty() {
        bail!("{}: no records", path.display());
    }
    Ok(out)
}

fn read_parquet(path: &Path, raw: Vec<u8>) -> Result<Vec<Record>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(bytes::Bytes::from(raw))
        .with_context(|| format!("{}: not a readable Parquet file", path.display()))?;
    let rows = reader
        .get_row_iter(None)
        .with_context(|| format!("{}: reading its rows", path.display()))?;
    let mut out = Vec::new();
    for (i, row) in rows.enumerate() {
        let row = row.with_context(|| format!("{}: row {}", path.display(), i + 1))?;
        let mut m = serde_json::Map::new();
        for (name, field) in row.get_column_iter() {
            m.insert(name.clone(), field.to_json_value());
        }
        out.push((i + 1, m));
    }
    if out.is_empty() {
        bail!("{}: no records", path.display());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_versions() {
        let s = HubSource::parse("bigcodebench").unwrap();
        assert_eq!(
            (s.repo.as_str(), s.split.as_str()),
            ("bigcode/bigcodebench", DEFAULT_VERSION)
        );
        let h = HubSource::parse("BigCodeBench-Hard@v0.1.4").unwrap();
        assert_eq!(
            (h.repo.as_str(), h.split.as_str()),
            ("bigcode/bigcodebench-hard", "v0.1.4")
        );
        assert!(HubSource::parse("bigcodebench@").is_none());
        assert!(HubSource::parse("bigcodebench@../x").is_none());
        assert!(HubSource::parse("humaneval").is_none());
        assert!(HubSource::parse("data/bigcodebench.jsonl").is_none());
    }

    #[test]
    fn a_dataset_card_names_each_splits_files() {
        let card = "---\ndataset_info:\n  features:\n  - name: task_id\n    dtype: string\n  splits:\n  - name: v0.1.0_hf\n    num_bytes: 1\nconfigs:\n- config_name: default\n  data_files:\n  - split: v0.1.0_hf\n    path: data/v0.1.0_hf-*\n  - split: v0.1.4\n    path:\n    - data/v0.1.4-a-*\n    - data/v0.1.4-b-*\n---\n# Card\n";
        assert_eq!(
            card_splits(card),
            vec![
                ("v0.1.0_hf".to_string(), "data/v0.1.0_hf-*".to_string()),
                ("v0.1.4".to_string(), "data/v0.1.4-a-*".to_string()),
                ("v0.1.4".to_string(), "data/v0.1.4-b-*".to_string()),
            ]
        );
        assert!(card_splits("# no header\n").is_empty());
        assert!(glob_match(
            "data/v0.1.0_hf-*",
            "data/v0.1.0_hf-00000-of-00001.parquet"
        ));
        assert!(!glob_match(
            "data/v0.1.0_hf-*",
            "data/v0.1.1-00000-of-00001.parquet"
        ));
        assert!(!glob_match("data/*", "data/x/y"));
    }
}
