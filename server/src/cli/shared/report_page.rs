//! Writing a report page where `report --output` and `score ... --report` say: both take a
//! folder to mean `report.html` in it, and `score` builds its page as `report` would.

use anyhow::Result;
use std::path::{Path, PathBuf};

/// `score ... --report FILE`: a report of the one score JSON just computed, named `name`.
pub fn write_one(json: &serde_json::Value, name: &str, path: &Path) -> Result<()> {
    let input = pivot_report::Input {
        name: name.to_string(),
        bytes: serde_json::to_vec_pretty(json)?,
    };
    let html = pivot_report::build(std::slice::from_ref(&input), None)?;
    let path = into_folder(path.to_path_buf());
    pivot_report::write(&path, &html)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `-o DIR` (an existing folder, or a path ending in `/`) means `DIR/report.html`.
pub fn into_folder(output: PathBuf) -> PathBuf {
    let slash = output.as_os_str().as_encoded_bytes().ends_with(b"/");
    if output.is_dir() || slash {
        output.join("report.html")
    } else {
        output
    }
}
