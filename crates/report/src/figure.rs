//! A figure of the page: a chart, its caption, its table and the data behind it as CSV.

use serde::Serialize;

#[derive(Serialize)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A chart (SVG; empty for a table alone), its caption, its table (the text output's
/// rounding), notes, and the data behind it as CSV with a file name for the exports.
#[derive(Serialize)]
pub struct Figure {
    pub name: String,
    pub svg: String,
    pub caption: String,
    pub table: Table,
    pub notes: Vec<String>,
    pub csv: String,
}

impl Table {
    /// The table as CSV (for the figures whose table is their data).
    pub fn csv(&self) -> String {
        let header: Vec<&str> = self.header.iter().map(String::as_str).collect();
        super::csv::write(&header, &self.rows)
    }
}

/// A file-name-safe form of `s` (for export names).
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}
