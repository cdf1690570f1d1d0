//! Where `check` finds its pivots, as ruff finds its settings: the nearest `pivots.toml` in
//! the current directory or a folder above it, stopping at the repository's root (the
//! folder holding `.git`). That file's folder is the run's root: paths are reported from
//! it and the cache lives in it. A `pivots.toml` in a folder below applies to that folder's
//! files instead (the nearest one wins, as in ruff). `--show-settings FILE` says which file
//! and which pivots apply to FILE, and why.

use crate::cli::shared::log_safe;
use anyhow::Result;
use pivot_python::pivots::{Applies, Ledger};
use pivot_workspace::walk::relative;
use std::path::{Path, PathBuf};

pub const CONFIG: &str = pivot_workspace::PIVOTS_TOML;

// Where a file's pivots file is (shared with the MCP server): pivot_workspace::pivots_files.
pub use pivot_workspace::pivots_files::{config_file, discover, Nested};

/// `check`'s exit code when no pivots file was found and `--require-pivots` was given.
pub const NO_PIVOTS_EXIT: i32 = 3;

/// How the message of no pivots file starts (`input_error` gives it its own exit code).
pub const NO_PIVOTS_START: &str = "no pivots.toml (nor pyproject.toml with [tool.pivot]) in ";

/// What `check` says when it checks with no pivot (and, with `--require-pivots`, refuses).
pub fn no_pivots_message(here: &Path) -> String {
    format!(
        "{NO_PIVOTS_START}{} or a folder above it (up to the repository root): no pivot is \
         checked, only Python syntax. Make one from your instruction files with \
         `pivot-lsp pivots import AGENTS.md --write` (see docs/pivots-toml.md)",
        here.display()
    )
}

/// `check --show-settings FILE`: the pivots file that applies to FILE and why, then each
/// pivot in its latest version and whether it is checked on FILE (the pattern deciding).
pub fn show_settings(here: &Path, file: &Path) -> Result<i32> {
    let abs = here.join(file);
    if !abs.exists() {
        eprintln!(
            "error: {}: no such file",
            log_safe::path(&file.display().to_string())
        );
        return Ok(2);
    }
    let abs = abs.canonicalize()?;
    let start = abs.parent().unwrap_or(&abs);
    let mut out = format!("file: {}\n", log_safe::path(&abs.display().to_string()));
    let Some(dir) = discover(start) else {
        out.push_str(&format!(
            "configuration: none\n  {}\n",
            no_pivots_message(start)
        ));
        print!("{out}");
        return Ok(0);
    };
    let config = config_file(&dir).unwrap_or_else(|| dir.join(CONFIG));
    out.push_str(&format!(
        "configuration: {}\n  why: the nearest {CONFIG} (or pyproject.toml with a [tool.pivot] \
         table) in the file's folder or above it (the search stops at the repository root, \
         the folder holding .git)\n",
        log_safe::path(&config.display().to_string())
    ));
    let text = match pivot_base::bounded_read::read_to_string(&config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: cannot read: {e}", config.display());
            return Ok(2);
        }
    };
    let format = pivot_python::pivots::toml_file::Format::of(&config);
    let ledger = match Ledger::from_config(&text, CONFIG, &config.display().to_string(), format) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {}", log_safe::lines(&format!("{e:#}")));
            return Ok(2);
        }
    };
    let rel = relative(&dir, &abs);
    out.push_str(&format!("cache: {}\n", dir.join(".pivot-cache").display()));
    out.push_str(&format!(
        "path matched by include/exclude: {}\n",
        log_safe::path(&rel)
    ));
    let latest = ledger
        .pivots
        .iter()
        .flat_map(|p| p.versions.iter().map(|v| v.session))
        .max()
        .unwrap_or(0);
    let source = pivot_base::bounded_read::read_to_string(&abs).unwrap_or_default();
    let generated = pivot_python::python::generated::marker(&source);
    if let Some((line, text)) = generated {
        out.push_str(&format!(
            "generated: line {line} says so (`{}`): no pivot is checked on it\n",
            log_safe::text(text)
        ));
    }
    out.push_str(&format!("pivots (session {latest}, the latest):\n"));
    for a in ledger.active_at(latest) {
        let (mark, why) = match a.pivot.scope.explain(Some(&rel)) {
            _ if generated.is_some() => ("not checked", "a generated file".to_string()),
            Applies::Yes(w) => ("checked", w),
            Applies::No(w) => ("not checked", w),
        };
        out.push_str(&format!(
            "  {} [{}] {} `{}` ({}): {mark}: {why}\n",
            log_safe::text(&a.pivot.id),
            a.version.kind,
            a.version.rule.describe(),
            log_safe::text(a.version.text.trim()),
            format_args!(
                "version {}, session {}",
                a.version.version, a.version.session
            ),
        ));
    }
    print!("{out}");
    Ok(0)
}

/// `path`, written relative to `here`, as the root names it (`here` is at or below it).
pub fn from_root(root: &Path, here: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() || root == here {
        return path.to_path_buf();
    }
    let prefix = here.strip_prefix(root).unwrap_or(Path::new(""));
    let joined = prefix.join(path);
    // `app` + `.` is `app`.
    let parts: PathBuf = joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if parts.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        parts
    }
}
