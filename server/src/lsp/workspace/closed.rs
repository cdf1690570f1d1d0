//! Closed documents' analyses, kept a while for an open of the same text: a headless client
//! (`score memorycode --via-lsp`) opens a model's answer for every session that asks about
//! it, and an editor reopens what it closed. Bounded in count and in bytes of text; the
//! oldest go first.

use super::document::{Closed, Document};
use std::collections::VecDeque;

const MAX_DOCS: usize = 4096;
/// An analysis takes a few times its text (the tree is not kept): this bounds the store to
/// tens of megabytes.
const MAX_TEXT_BYTES: usize = 8 << 20;

#[derive(Default)]
pub struct ClosedDocs {
    items: VecDeque<Closed>,
    bytes: usize,
}

impl ClosedDocs {
    pub fn keep(&mut self, c: Closed) {
        if c.text.len() > MAX_TEXT_BYTES / 4 {
            return;
        }
        self.bytes += c.text.len();
        self.items.push_back(c);
        while self.items.len() > MAX_DOCS || self.bytes > MAX_TEXT_BYTES {
            if let Some(old) = self.items.pop_front() {
                self.bytes -= old.text.len();
            }
        }
    }

    /// The closed document whose text is `text`, taken out of the store.
    pub fn take(&mut self, text: &str) -> Option<Closed> {
        let hash = crate::fasthash::of(text.as_bytes(), 0);
        let i = self
            .items
            .iter()
            .rposition(|c| c.hash == hash && c.text == text)?;
        let c = self.items.remove(i)?;
        self.bytes -= c.text.len();
        Some(c)
    }

    /// A document opened with `text`: the analysis of an identical closed text if one is
    /// kept, else a fresh document analysed on first use.
    pub fn open(&mut self, text: String, version: i32) -> Document {
        match self.take(&text) {
            Some(c) => Document::reopened(c, version),
            None => Document::new(text, version),
        }
    }

    /// A document closed: its analysis is kept for a later open of the same text.
    pub fn close(&mut self, doc: Document) {
        if let Some(c) = doc.into_closed() {
            self.keep(c);
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::lsp::workspace::document::{Change, Reparse, Utf16Pos};
    use crate::lsp::workspace::Workspace;
    use crate::lsp::{bench, publish};
    use crate::pivots::Rule;
    use crate::python::ObjectKind;

    #[test]
    fn a_reopened_text_comes_back_analysed_and_edits_as_a_fresh_one() {
        let mut ws = Workspace::default();
        for (id, kind, rule) in bench::PIVOTS {
            let kind = ObjectKind::from_name(kind).unwrap();
            let rule = Rule::from_json(&serde_json::from_str(rule).unwrap()).unwrap();
            ws.replay
                .add_user(id, 0, String::new(), kind, rule)
                .unwrap();
        }
        let text = bench::sample_module(60);
        let diags = |ws: &Workspace, key: &str| publish::for_doc(ws, key).unwrap().diagnostics;
        ws.open("file:///a.py".into(), text.clone(), 1);
        assert!(
            ws.docs["file:///a.py"].is_pending(),
            "opened, not yet analysed"
        );
        let first = diags(&ws, "file:///a.py");
        assert!(!first.is_empty());
        assert!(
            ws.close("file:///a.py"),
            "its diagnostics were shown: to clear"
        );
        assert_eq!(ws.closed.len(), 1);
        ws.open("file:///never.py".into(), "x = 1\n".into(), 1);
        assert!(
            !ws.close("file:///never.py"),
            "nothing shown, nothing to clear"
        );
        // Another text does not take it; the same text does, under another name.
        ws.open("file:///b.py".into(), format!("{text}\n"), 1);
        assert!(ws.docs["file:///b.py"].is_pending());
        ws.open("file:///c.py".into(), text.clone(), 7);
        assert!(ws.closed.is_empty());
        let c = &ws.docs["file:///c.py"];
        assert!(!c.is_pending() && c.version == 7);
        assert_eq!(diags(&ws, "file:///c.py"), first);
        // Edits after a reopen (no tree kept) equal the same edits of a fresh document.
        let at = Utf16Pos { line: 4, col: 4 };
        let edit = [Change {
            range: Some((at, at)),
            text: "x".into(),
        }];
        ws.open("file:///d.py".into(), text.clone(), 1);
        for key in ["file:///c.py", "file:///d.py"] {
            ws.docs
                .get_mut(key)
                .unwrap()
                .apply(&edit, 8, Reparse::Incremental);
        }
        assert_eq!(diags(&ws, "file:///c.py"), diags(&ws, "file:///d.py"));
        assert_eq!(
            ws.docs["file:///c.py"].tree().root_node().to_sexp(),
            ws.docs["file:///d.py"].tree().root_node().to_sexp()
        );
    }
}
