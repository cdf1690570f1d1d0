//! `pivot-lsp extract`: the objects of one Python file, as MemoryCode's evaluator sees them.

use crate::python::{Module, ObjectKind};
use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use std::io::Read;
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
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .context("cannot read standard input")?;
        b
    } else {
        crate::bounded_read::read(&a.file)
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
    match a.format {
        ExtractFormat::Json => {
            println!("{}", serde_json::to_string_pretty(&to_json(&module, &src))?)
        }
        ExtractFormat::Table => print!("{}", to_table(&module, &src)),
    }
    Ok(0)
}

/// `{"syntax_error", "objects": {kind: entries}, "ranges": {kind: ranges}}`. Entries have
/// the reference's shapes: lists of strings, except `import`, a flat list of names.
pub fn to_json(module: &Module, src: &str) -> Value {
    let mut objects = Map::new();
    let mut ranges = Map::new();
    for kind in ObjectKind::ALL {
        let entries = module.objects.get(kind);
        let range = |s: &crate::python::Span| {
            let ((l0, c0), (l1, c1)) = s.utf16(src);
            json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1},
                   "start_byte": s.start_byte, "end_byte": s.end_byte})
        };
        let (objs, rngs): (Vec<Value>, Vec<Value>) = if kind == ObjectKind::Import {
            entries
                .iter()
                .map(|e| (json!(e.items[0].text), range(&e.items[0].span)))
                .unzip()
        } else {
            entries
                .iter()
                .map(|e| {
                    let texts: Vec<&str> = e.items.iter().map(|i| i.text.as_str()).collect();
                    let spans: Vec<Value> = e.items.iter().map(|i| range(&i.span)).collect();
                    (
                        json!(texts),
                        json!({"anchor": range(&e.anchor), "items": spans}),
                    )
                })
                .unzip()
        };
        objects.insert(kind.name().into(), Value::Array(objs));
        ranges.insert(kind.name().into(), Value::Array(rngs));
    }
    json!({
        "syntax_error": module.syntax_error.as_ref().map(|e| e.to_string()),
        "objects": objects,
        "ranges": ranges,
    })
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
    let mut found = Vec::new();
    for kind in ObjectKind::ALL {
        for e in module.objects.get(kind) {
            for item in &e.items {
                let ((l, c), _) = item.span.utf16(src);
                found.push((l, c, kind.name(), cell(&item.text)));
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
    out.push_str(&crate::bench::memorycode::report::render_table(&rows));
    out
}
