//! `textDocument/hover` on a name: the pivots governing it (text in workspace/hover_text.rs).

use super::convert;
use pivot_workspace::hover_text;
use pivot_workspace::Workspace;
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

pub fn hover(ws: &Workspace, p: HoverParams) -> Option<Hover> {
    let at = p.text_document_position_params;
    let doc = ws.docs.get(at.text_document.uri.as_str())?;
    let offset = doc.byte_of(convert::utf16(at.position));
    let r = &ws.replay;
    let path = at.text_document.uri.to_file_path();
    let (ledger, index, count) = ws.hover_ledger(path.as_deref());
    let (span, md) = hover_text::hover(
        doc.text(),
        doc.module(),
        &ledger,
        (index, count),
        |k| r.session_commit(k),
        offset,
    )?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: md,
        }),
        range: Some(convert::span_range(doc.text(), span)),
    })
}
