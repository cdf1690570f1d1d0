//! Closed documents' analyses, kept a while for an open of the same text: a headless client
//! (`score memorycode --via-lsp`) opens a model's answer for every session that asks about
//! it, and an editor reopens what it closed. Bounded in count and in bytes of text; the
//! oldest go first.

use super::document::{Closed, Document};
use std::collections::{HashMap, VecDeque};

const MAX_DOCS: usize = 4096;
/// An analysis takes a few times its text (the tree is not kept): this bounds the store to
/// tens of megabytes.
const MAX_TEXT_BYTES: usize = 8 << 20;

/// Kept analyses by arrival number, found by their text's hash: an open looks one up in
/// constant time (a scan of thousands of entries per open was measurable in `--via-lsp`).
#[derive(Default)]
pub struct ClosedDocs {
    items: HashMap<u64, Closed>,
    /// Arrival numbers by text hash, oldest first.
    by_hash: HashMap<u64, Vec<u64>>,
    /// Arrival numbers, oldest first; some may have been taken already (skipped when met).
    order: VecDeque<u64>,
    next: u64,
    bytes: usize,
}

impl ClosedDocs {
    pub fn keep(&mut self, c: Closed) {
        if c.text.len() > MAX_TEXT_BYTES / 4 {
            return;
        }
        let n = self.next;
        self.next += 1;
        self.bytes += c.text.len();
        self.by_hash.entry(c.hash).or_default().push(n);
        self.items.insert(n, c);
        self.order.push_back(n);
        while self.items.len() > MAX_DOCS || self.bytes > MAX_TEXT_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.remove(old);
        }
        // Taken entries leave their numbers behind: drop them once they outnumber the rest.
        if self.order.len() > 2 * self.items.len() + 64 {
            let items = &self.items;
            self.order.retain(|n| items.contains_key(n));
        }
    }

    /// The closed document whose text is `text` (the latest kept), taken out of the store.
    pub fn take(&mut self, text: &str) -> Option<Closed> {
        let hash = pivot_python::fasthash::of(text.as_bytes(), 0);
        let n = *self
            .by_hash
            .get(&hash)?
            .iter()
            .rev()
            .find(|n| self.items.get(n).is_some_and(|c| c.text == text))?;
        self.remove(n)
    }

    fn remove(&mut self, n: u64) -> Option<Closed> {
        let c = self.items.remove(&n)?;
        self.bytes -= c.text.len();
        if let Some(ns) = self.by_hash.get_mut(&c.hash) {
            ns.retain(|&m| m != n);
            if ns.is_empty() {
                self.by_hash.remove(&c.hash);
            }
        }
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
    use crate::document::{Change, Reparse, Utf16Pos};
    use crate::findings::{findings, Finding};
    use crate::sample as bench;
    use crate::Workspace;
    use pivot_python::pivots::Rule;
    use pivot_python::python::ObjectKind;

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
        let diags = |ws: &Workspace, key: &str| -> Vec<Finding> {
            // As the server's publish does: the document's diagnostics were shown.
            let doc = &ws.docs[key];
            doc.shown.store(true, std::sync::atomic::Ordering::Relaxed);
            findings(doc.text(), doc.module(), &ws.replay.active())
        };
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

    #[test]
    fn the_store_is_bounded_oldest_first_and_finds_each_text_it_holds() {
        let mut store = super::ClosedDocs::default();
        let text = |i: usize| format!("x{i} = {i}\n");
        let closed = |store: &mut super::ClosedDocs, t: String| {
            let d = store.open(t, 1);
            d.module();
            store.close(d);
        };
        let n = super::MAX_DOCS + 500;
        for i in 0..n {
            closed(&mut store, text(i));
        }
        assert_eq!(store.len(), super::MAX_DOCS);
        // The oldest went first; the rest are all found, each once.
        assert!(store.take(&text(0)).is_none());
        assert!(store.take(&text(499)).is_none());
        assert!(store.take(&text(500)).is_some());
        assert!(store.take(&text(500)).is_none(), "taken out");
        assert!(store.take(&text(n - 1)).is_some());
        assert_eq!(store.len(), super::MAX_DOCS - 2);
        // Two documents of one text, both closed: both kept.
        let (a, b) = (
            super::Document::new("y = 1\n".into(), 1),
            super::Document::new("y = 1\n".into(), 2),
        );
        a.module();
        b.module();
        store.close(a);
        store.close(b);
        assert!(store.take("y = 1\n").is_some());
        assert!(store.take("y = 1\n").is_some());
        assert!(store.take("y = 1\n").is_none());
        // Taking and keeping over and over does not grow the bookkeeping past its bound.
        for _ in 0..3 * super::MAX_DOCS {
            let d = store.open(text(1000), 1);
            d.module();
            store.close(d);
        }
        assert!(store.take(&text(1000)).is_some());
        assert!(store.order.len() <= 2 * store.items.len() + 64 + 1);
        assert_eq!(
            store.by_hash.values().map(Vec::len).sum::<usize>(),
            store.len()
        );
    }
}
