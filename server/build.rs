//! Names the commit the binary is built from in `pivot-lsp --version`, as
//! `PIVOT_LSP_COMMIT_INFO` (" (0123456789ab 2026-11-24)": short hash and commit date), or ""
//! when the sources are not a git checkout (a tarball, an sdist). A packager building from
//! such sources can name the commit with `PIVOT_LSP_COMMIT=...`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PIVOT_LSP_COMMIT");
    let given = std::env::var("PIVOT_LSP_COMMIT").unwrap_or_default();
    let info = if !given.trim().is_empty() {
        format!(" ({})", given.trim())
    } else {
        let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
        from_git(&crate_dir).unwrap_or_default()
    };
    println!("cargo:rustc-env=PIVOT_LSP_COMMIT_INFO={info}");
}

/// `git -C dir args...`'s trimmed stdout, if git exists and succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn from_git(crate_dir: &Path) -> Option<String> {
    // Only the repository these sources belong to: a tarball unpacked inside some other
    // checkout is untracked there, and must not take that checkout's commit.
    git(crate_dir, &["ls-files", "--error-unmatch", "Cargo.toml"])?;
    // Rebuild when HEAD moves: HEAD itself, the branch it points to (a loose ref), and
    // packed-refs. Paths that do not exist are left out (cargo would rerun every build).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(crate_dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in &watched {
        // --git-path is relative to the directory git ran in (absolute paths need git 2.31).
        if let Some(p) = git(crate_dir, &["rev-parse", "--git-path", name]) {
            let p = crate_dir.join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let hash = git(crate_dir, &["rev-parse", "--short=12", "HEAD"])?;
    let date = git(crate_dir, &["log", "-1", "--format=%cs", "HEAD"])?;
    Some(format!(" ({hash} {date})"))
}
