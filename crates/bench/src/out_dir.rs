//! Whether a folder can be written where the user asked, checked before the first model
//! request so that a run does not pay for answers it cannot save.

use std::path::Path;

/// `None` when `dir` is a folder this process can write in, or can be created (its nearest
/// existing ancestor is a folder it can write in); otherwise what is in the way, starting
/// with `label` (the flag or the folder's role) and the path.
pub fn problem(dir: &Path, label: &str) -> Option<String> {
    let at = format!("{label} {}", dir.display());
    if dir.exists() && !dir.is_dir() {
        return Some(format!("{at}: exists and is not a folder"));
    }
    let mut existing = dir;
    while !existing.as_os_str().is_empty() && !existing.exists() {
        match existing.parent() {
            Some(p) => existing = p,
            None => break,
        }
    }
    let existing = if existing.as_os_str().is_empty() {
        Path::new(".")
    } else {
        existing
    };
    if !existing.is_dir() {
        return Some(format!(
            "{at}: cannot be created, {} is not a folder",
            existing.display()
        ));
    }
    // The one sure test of permission (ACLs, read-only mounts, root squash): a file that
    // is gone again at once.
    if let Err(e) = tempfile::tempfile_in(existing) {
        return Some(format!("{at}: cannot write in {}: {e}", existing.display()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_the_way_is_named() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(problem(d.path(), "--out").is_none());
        assert!(problem(&d.path().join("new/deeper"), "--out").is_none());
        let p = problem(&file, "--out").unwrap();
        assert!(
            p.starts_with("--out ") && p.ends_with("exists and is not a folder"),
            "{p}"
        );
        let p = problem(&file.join("sub"), "--out").unwrap();
        assert!(
            p.contains("cannot be created") && p.contains("/f is not a folder"),
            "{p}"
        );
    }
}
