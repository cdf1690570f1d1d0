//! `pivot-lsp report`: score files (the JSON of `score memorycode|convcode --format json`)
//! to one self-contained HTML page with charts. A face-level module: it reads the core's
//! score formats and rounding; the core never imports it. The CLI (`cli/report.rs`,
//! `cli/shared/report_page.rs`) and the editor command `pivot.report.open` both call
//! [`build`] and [`write`].

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod cc_compare;
mod charts;
mod csv;
mod figure;
pub mod input;
mod mc_lengths;
mod mc_rounds;
mod page;
mod stats;

pub use input::Input;
use std::path::{Path, PathBuf};

/// Read every path (regular files of bounded size only: a FIFO or device is refused at
/// once); unreadable files are named in the error (all of them, not just the first).
pub fn read_inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    if paths.is_empty() {
        anyhow::bail!("no score files given: pass one or more files written by `pivot-lsp score ... --format json`");
    }
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        match pivot_base::bounded_read::read(p) {
            Ok(bytes) => inputs.push(Input {
                name: p.display().to_string(),
                bytes,
            }),
            Err(e) => problems.push(format!("{}: cannot read: {e}", p.display())),
        }
    }
    if !problems.is_empty() {
        anyhow::bail!("{}", refusal(&problems, paths.len()));
    }
    Ok(inputs)
}

fn refusal(problems: &[String], total: usize) -> String {
    format!(
        "{} of {total} input(s) unusable, no report written:\n  {}",
        problems.len(),
        problems.join("\n  ")
    )
}

/// The page for `inputs` (all valid, or an error naming each invalid one).
pub fn build(inputs: &[Input], title: Option<&str>) -> anyhow::Result<String> {
    if inputs.is_empty() {
        anyhow::bail!("no score files given: pass one or more files written by `pivot-lsp score ... --format json`");
    }
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for i in inputs {
        match input::parse(i) {
            Ok(f) => files.push(f),
            Err(e) => problems.push(format!("{}: {e}", i.name)),
        }
    }
    if !problems.is_empty() {
        anyhow::bail!("{}", refusal(&problems, inputs.len()));
    }
    let sizes: Vec<usize> = inputs.iter().map(|i| i.bytes.len()).collect();
    let stamp = page::Stamp {
        version: env!("CARGO_PKG_VERSION").to_string(),
        date: now_utc(),
    };
    let title = title.unwrap_or("Pivot LSP report");
    page::render(&files, &sizes, title, &stamp).map_err(anyhow::Error::msg)
}

/// Write `html` to `path` atomically (a temporary file in the same folder, then renamed), so
/// an existing report is never left half-written; the folder is created when missing.
pub fn write(path: &Path, html: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(html.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A report is for sharing: readable by all, like a file the shell would create.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The generation time, UTC, to the second; `SOURCE_DATE_EPOCH` (seconds) fixes it for
/// reproducible pages.
fn now_utc() -> String {
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
    rfc3339(epoch.unwrap_or_else(std::time::SystemTime::now))
}

/// `2026-11-28T21:04:05Z`: RFC 3339, UTC, whole seconds.
fn rfc3339(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn generation_time_is_rfc_3339_utc_to_the_second() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_764_363_845_900);
        assert_eq!(super::rfc3339(t), "2025-11-28T21:04:05Z");
        assert_eq!(
            super::rfc3339(std::time::UNIX_EPOCH),
            "1970-01-01T00:00:00Z"
        );
    }
}
