//! `pivot-lsp extract`: the objects of one Python file, as MemoryCode's evaluator sees them.
//! The file (or standard input) is read through the bounded reader; the JSON is streamed.

use anyhow::{Context, Result};
use pivot_python::python::span::Utf16Columns;
use pivot_python::python::{Module, ObjectKind, Span};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ExtractArgs {
    /// Python file to read, or `-` for standard input.
    #[arg(default_value = "-")]
    pub file: PathBuf,
    #[arg(long, value_enum, default_value_t = ExtractFormat::Json)]
    pub format: ExtractFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExtractFormat {
    Json,
    Table,
}

pub fn run(a: ExtractArgs) -> Result<i32> {
    let bytes = if a.file.as_os_str() == "-" {
        pivot_base::bounded_read::read_stdin().context("cannot read standard input")?
    } else {
        pivot_base::bounded_read::read(&a.file)
            .with_context(|| format!("cannot read {}", a.file.display()))?
    };
    let src = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 (at byte {})",
            a.file.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    let module = Module::parse(&src);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match a.format {
        ExtractFormat::Json => {
            // Written in small pieces: buffered before the `##[` filter sees them.
            let safe = crate::cli::shared::log_safe::JsonWriter::new(&mut out);
            let mut w = std::io::BufWriter::with_capacity(1 << 16, safe);
            write_json(&mut w, &module, &src)?;
            w.write_all(b"\n")?;
            w.flush()?;
        }
        ExtractFormat::Table => out.write_all(to_table(&module, &src).as_bytes())?,
    }
    out.flush()?;
    Ok(0)
}

/// `{"syntax_error", "objects": {kind: entries}, "ranges": {kind: ranges}}`. Entries have
/// the reference's shapes: lists of strings, except `import`, a flat list of names.
/// Written as it goes, in serde_json's pretty layout (no JSON tree in memory: 250,000
/// functions took gigabytes), with UTF-16 columns from one index of the text. Written by
/// hand rather than through `Serialize`: a range is one formatted write instead of forty
/// serializer calls (the output is about 3 KB per function).
pub fn write_json(w: &mut impl Write, module: &Module, src: &str) -> std::io::Result<()> {
    let cols = Utf16Columns::new(src);
    // Built in a String (whose formatting is std's compiled code) and written in large
    // pieces: per-token writes cost more than the formatting in a debug build.
    let mut b = String::with_capacity(1 << 17);
    let mut spill = |w: &mut dyn Write, b: &mut String, force: bool| -> std::io::Result<()> {
        if force || b.len() >= 1 << 16 {
            w.write_all(b.as_bytes())?;
            b.clear();
        }
        Ok(())
    };
    b.push_str("{\n  \"syntax_error\": ");
    match &module.syntax_error {
        Some(e) => json_str(&mut b, &e.to_string()),
        None => b.push_str("null"),
    }
    b.push_str(",\n  \"objects\": {");
    for (k, kind) in ObjectKind::ALL.into_iter().enumerate() {
        kind_key(&mut b, k, kind);
        let entries = module.objects.get(kind);
        list(w, &mut b, entries, 6, &mut spill, |b, e| {
            if kind == ObjectKind::Import {
                json_str(b, &e.items[0].text);
            } else {
                inner_list(b, &e.items, 8, |b, i| json_str(b, &i.text));
            }
        })?;
    }
    b.push_str("\n  },\n  \"ranges\": {");
    for (k, kind) in ObjectKind::ALL.into_iter().enumerate() {
        kind_key(&mut b, k, kind);
        let entries = module.objects.get(kind);
        list(w, &mut b, entries, 6, &mut spill, |b, e| {
            if kind == ObjectKind::Import {
                return range(b, &cols, &e.items[0].span, 6);
            }
            b.push_str("{\n        \"anchor\": ");
            range(b, &cols, &e.anchor, 8);
            b.push_str(",\n        \"items\": ");
            inner_list(b, &e.items, 10, |b, i| range(b, &cols, &i.span, 10));
            b.push_str("\n      }");
        })?;
    }
    b.push_str("\n  }\n}");
    spill(w, &mut b, true)
}

fn json_str(b: &mut String, s: &str) {
    // Serializing a str cannot fail.
    b.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// `\n    "kind name": ` (after a comma for all but the first).
fn kind_key(b: &mut String, k: usize, kind: ObjectKind) {
    b.push_str(if k == 0 { "\n    " } else { ",\n    " });
    json_str(b, kind.name());
    b.push_str(": ");
}

const SPACES: &str = "                                ";

/// A JSON list of `items` at `indent` spaces (`[]` when empty), spilled to `w` as it grows.
fn list<W: Write, T>(
    w: &mut W,
    b: &mut String,
    items: &[T],
    indent: usize,
    spill: &mut impl FnMut(&mut dyn Write, &mut String, bool) -> std::io::Result<()>,
    mut each: impl FnMut(&mut String, &T),
) -> std::io::Result<()> {
    if items.is_empty() {
        b.push_str("[]");
        return Ok(());
    }
    b.push('[');
    for (i, item) in items.iter().enumerate() {
        b.push_str(if i == 0 { "\n" } else { ",\n" });
        b.push_str(&SPACES[..indent]);
        each(b, item);
        spill(w, b, false)?;
    }
    b.push('\n');
    b.push_str(&SPACES[..indent - 2]);
    b.push(']');
    Ok(())
}

/// `list` within one entry (held whole: one function's arguments).
fn inner_list<T>(
    b: &mut String,
    items: &[T],
    indent: usize,
    mut each: impl FnMut(&mut String, &T),
) {
    if items.is_empty() {
        b.push_str("[]");
        return;
    }
    b.push('[');
    for (i, item) in items.iter().enumerate() {
        b.push_str(if i == 0 { "\n" } else { ",\n" });
        b.push_str(&SPACES[..indent]);
        each(b, item);
    }
    b.push('\n');
    b.push_str(&SPACES[..indent - 2]);
    b.push(']');
}

/// `{"start": {"line", "character"}, "end": {...}, "start_byte", "end_byte"}` at `indent`.
fn range(b: &mut String, cols: &Utf16Columns, s: &Span, indent: usize) {
    use std::fmt::Write as _;
    let ((l0, c0), (l1, c1)) = cols.span(s);
    let (i, i2, i4) = (
        &SPACES[..indent],
        &SPACES[..indent + 2],
        &SPACES[..indent + 4],
    );
    // Writing to a String cannot fail.
    let _ = write!(
        b,
        "{{\n{i2}\"start\": {{\n{i4}\"line\": {l0},\n{i4}\"character\": {c0}\n{i2}}},\n\
         {i2}\"end\": {{\n{i4}\"line\": {l1},\n{i4}\"character\": {c1}\n{i2}}},\n\
         {i2}\"start_byte\": {},\n{i2}\"end_byte\": {}\n{i}}}",
        s.start_byte, s.end_byte
    );
}

/// Longest object text shown in a table cell; longer ones end with an ellipsis.
const CELL_CHARS: usize = 60;

/// First line of `text`, cut to `CELL_CHARS` characters, with an ellipsis when anything was cut.
fn cell(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let cut: String = first.chars().take(CELL_CHARS).collect();
    if cut.len() < text.trim_end().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// One row per object (each item at its own 1-based line:col), in file order; kinds with
/// nothing found give no rows.
fn to_table(module: &Module, src: &str) -> String {
    let cols = Utf16Columns::new(src);
    let mut found = Vec::new();
    for kind in ObjectKind::ALL {
        for e in module.objects.get(kind) {
            for item in &e.items {
                let ((l, c), _) = cols.span(&item.span);
                // Object texts are the file's: escaped for a terminal or CI log.
                let text = crate::cli::shared::log_safe::text(&cell(&item.text)).into_owned();
                found.push((l, c, kind.name(), text));
            }
        }
    }
    // Stable: objects at one position keep the kinds' order.
    found.sort_by_key(|&(l, c, _, _)| (l, c));
    let mut rows = vec![vec!["line:col".to_string(), "kind".into(), "object".into()]];
    rows.extend(
        found
            .into_iter()
            .map(|(l, c, kind, text)| vec![format!("{}:{}", l + 1, c + 1), kind.into(), text]),
    );
    let mut out = match &module.syntax_error {
        Some(e) => format!("syntax error: {e}\n"),
        None => "syntax: ok\n".to_string(),
    };
    out.push_str(&pivot_bench::memorycode::report::render_table(&rows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    /// The JSON built as a tree, with columns counted per span (`Span::utf16`): what the
    /// streamed writer must equal, byte for byte.
    fn as_tree(module: &Module, src: &str) -> Value {
        let range = |s: &Span| {
            let ((l0, c0), (l1, c1)) = s.utf16(src);
            json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1},
                   "start_byte": s.start_byte, "end_byte": s.end_byte})
        };
        let (mut objects, mut ranges) = (Map::new(), Map::new());
        for kind in ObjectKind::ALL {
            let entries = module.objects.get(kind);
            let (o, r): (Vec<Value>, Vec<Value>) = entries
                .iter()
                .map(|e| {
                    if kind == ObjectKind::Import {
                        (json!(e.items[0].text), range(&e.items[0].span))
                    } else {
                        let texts: Vec<&str> = e.items.iter().map(|i| i.text.as_str()).collect();
                        let spans: Vec<Value> = e.items.iter().map(|i| range(&i.span)).collect();
                        (
                            json!(texts),
                            json!({"anchor": range(&e.anchor), "items": spans}),
                        )
                    }
                })
                .unzip();
            objects.insert(kind.name().into(), Value::Array(o));
            ranges.insert(kind.name().into(), Value::Array(r));
        }
        json!({
            "syntax_error": module.syntax_error.as_ref().map(|e| e.to_string()),
            "objects": objects,
            "ranges": ranges,
        })
    }

    #[test]
    fn streamed_json_equals_the_tree_built_json() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut sources = vec![
            "import os, sys as s\nfrom a import (b, c)\n# 名前 😀\n@deco\nclass Ä:\n    \"\"\"doc ü\"\"\"\n    def m(self, x: int = 'é') -> None:\n        assert x\n        try:\n            pass\n        except E:\n            pass\nv = {'😀': 1}\ndef f(a, b, *c, **d): return a\n"
                .to_string(),
            "def broken(:\n".to_string(),
        ];
        for f in [
            "python/syntax_cases.py",
            "python/reference_objects.py",
            "lsp/session_demo.py",
        ] {
            sources.push(std::fs::read_to_string(dir.join(f)).unwrap());
        }
        for src in &sources {
            let module = Module::parse(src);
            let mut streamed = Vec::new();
            write_json(&mut streamed, &module, src).unwrap();
            let tree = serde_json::to_string_pretty(&as_tree(&module, src)).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), tree);
        }
    }
}
