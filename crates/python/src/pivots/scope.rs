//! Which files a pivot applies to: `include` / `exclude` patterns of its `[[pivot]]` and
//! the file's top-level `exclude`, in gitignore syntax (the `ignore` crate's matcher, so
//! `tests/`, `/app`, `**/gen_*.py` and `!keep.py` read as they do in a `.gitignore`), with
//! paths relative to the folder of the `pivots.toml`.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// A set of gitignore-syntax patterns, kept with their text (for `--show-settings` and
/// equality).
#[derive(Clone, Debug, Default)]
pub struct Patterns {
    pub patterns: Vec<String>,
    matcher: Option<Arc<Gitignore>>,
}

impl Patterns {
    /// The patterns compiled; `Err((index, message))` names the first one that is not a
    /// valid glob.
    pub fn new(patterns: Vec<String>) -> Result<Patterns, (usize, String)> {
        if patterns.is_empty() {
            return Ok(Patterns::default());
        }
        let mut b = GitignoreBuilder::new(".");
        for (i, p) in patterns.iter().enumerate() {
            b.add_line(None, p).map_err(|e| (i, e.to_string()))?;
        }
        let matcher = b.build().map_err(|e| (0, e.to_string()))?;
        Ok(Patterns {
            patterns,
            matcher: Some(Arc::new(matcher)),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The pattern that decides `rel` (a `/`-separated path relative to the pivots file's
    /// folder), as a .gitignore would: the last one matching it or a folder above it;
    /// None when none does or a `!pattern` takes it back.
    pub fn matching(&self, rel: &str) -> Option<&str> {
        let m = self.matcher.as_ref()?;
        let p = Path::new(rel);
        if p.has_root() || rel.is_empty() {
            return None;
        }
        match m.matched_path_or_any_parents(p, false) {
            ignore::Match::Ignore(g) => Some(g.original()),
            _ => None,
        }
    }
}

impl PartialEq for Patterns {
    fn eq(&self, other: &Patterns) -> bool {
        self.patterns == other.patterns
    }
}

/// A pivot's scope: the files it is checked on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// When not empty, only the files these match.
    pub include: Patterns,
    /// Never the files these match (the pivot's own `exclude`).
    pub exclude: Patterns,
    /// Never the files these match (the file's top-level `exclude`).
    pub project_exclude: Patterns,
    /// Never the files these match (the `per-file-ignores` patterns that name the pivot).
    pub file_ignores: Patterns,
}

/// Whether a scope takes a file, and why (for `check --show-settings`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applies {
    Yes(String),
    No(String),
}

impl Scope {
    pub fn is_everywhere(&self) -> bool {
        self.include.is_empty()
            && self.exclude.is_empty()
            && self.project_exclude.is_empty()
            && self.file_ignores.is_empty()
    }

    /// Whether the pivot is checked on `rel` (relative to the pivots file's folder,
    /// `/`-separated; None for a file outside it, which only an unscoped pivot takes).
    pub fn applies(&self, rel: Option<&str>) -> bool {
        matches!(self.explain(rel), Applies::Yes(_))
    }

    /// `applies`, with the pattern that decided it.
    pub fn explain(&self, rel: Option<&str>) -> Applies {
        if self.is_everywhere() {
            return Applies::Yes("no include or exclude".into());
        }
        let Some(rel) = rel else {
            return match self.include.is_empty() {
                true => Applies::Yes("outside the pivots file's folder, no include".into()),
                false => Applies::No("outside the pivots file's folder".into()),
            };
        };
        if let Some(p) = self.project_exclude.matching(rel) {
            return Applies::No(format!("the top-level exclude `{p}` matches"));
        }
        if let Some(p) = self.file_ignores.matching(rel) {
            return Applies::No(format!("per-file-ignores `{p}` names it"));
        }
        if let Some(p) = self.exclude.matching(rel) {
            return Applies::No(format!("its exclude `{p}` matches"));
        }
        if self.include.is_empty() {
            return Applies::Yes("no include; no exclude matches".into());
        }
        match self.include.matching(rel) {
            Some(p) => Applies::Yes(format!("its include `{p}` matches")),
            None => Applies::No("no include pattern matches".into()),
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if !self.include.is_empty() {
            m.serialize_entry("include", &self.include.patterns)?;
        }
        if !self.exclude.is_empty() {
            m.serialize_entry("exclude", &self.exclude.patterns)?;
        }
        if !self.project_exclude.is_empty() {
            m.serialize_entry("project_exclude", &self.project_exclude.patterns)?;
        }
        if !self.file_ignores.is_empty() {
            m.serialize_entry("per_file_ignores", &self.file_ignores.patterns)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(include: &[&str], exclude: &[&str], project: &[&str]) -> Scope {
        let p = |v: &[&str]| Patterns::new(v.iter().map(|s| s.to_string()).collect()).unwrap();
        Scope {
            include: p(include),
            exclude: p(exclude),
            project_exclude: p(project),
            file_ignores: Patterns::default(),
        }
    }

    #[test]
    fn patterns_read_as_a_gitignore_does() {
        let s = scope(&["app/"], &["**/test_*.py", "!app/test_keep.py"], &["gen/"]);
        assert!(s.applies(Some("app/x.py")));
        assert!(s.applies(Some("app/deep/y.py")));
        assert!(!s.applies(Some("tests/x.py")), "not included");
        assert!(!s.applies(Some("app/test_x.py")), "excluded");
        assert!(s.applies(Some("app/test_keep.py")), "taken back by !");
        assert!(!s.applies(Some("gen/app/x.py")));
        assert!(!s.applies(None), "outside the folder, with an include");
        assert_eq!(
            s.explain(Some("app/test_x.py")),
            Applies::No("its exclude `**/test_*.py` matches".into())
        );
        let anchored = scope(&[], &["/top.py"], &[]);
        assert!(!anchored.applies(Some("top.py")));
        assert!(anchored.applies(Some("sub/top.py")), "a leading / anchors");
        assert!(Scope::default().applies(None));
        assert!(Patterns::new(vec!["a/**{".into()]).is_err());
    }
}
