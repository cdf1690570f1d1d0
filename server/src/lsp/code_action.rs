//! `textDocument/codeAction`: quick fixes for the pivot findings in the requested range,
//! recomputed from the document as it is now (fixes in workspace/fixes.rs).

use super::convert;
use pivot_workspace::fixes::{fixes, Fix};
use pivot_workspace::suppress::suppress_fix;
use pivot_workspace::Workspace;
use std::collections::HashMap;
use tower_lsp_server::ls_types::*;

pub fn code_actions(ws: &Workspace, p: CodeActionParams) -> Option<CodeActionResponse> {
    if let Some(only) = &p.context.only {
        if !only.iter().any(|k| k.as_str().starts_with("quickfix")) {
            return None;
        }
    }
    let uri = p.text_document.uri;
    let doc = ws.docs.get(uri.as_str())?;
    let (lo, hi) = (
        doc.byte_of(convert::utf16(p.range.start)),
        doc.byte_of(convert::utf16(p.range.end)),
    );
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let mut actions = Vec::new();
    let path = uri.to_file_path();
    for f in ws.doc_findings(path.as_deref(), doc) {
        let s = f.span();
        if s.start_byte > hi || s.end_byte < lo {
            continue;
        }
        let mut offered: Vec<(Fix, bool)> = fixes(doc.text(), doc.tree(), &f)
            .into_iter()
            .map(|x| (x, true))
            .collect();
        // After the fixes that make the code follow the pivot: the way out when it must
        // not (never the preferred one).
        offered.extend(suppress_fix(doc.text(), &f).map(|x| (x, false)));
        for (fix, preferred) in offered {
            let edits = fix
                .edits
                .iter()
                .map(|e| convert::text_edit(doc, e))
                .collect();
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert::diagnostic(
                    doc.text(),
                    &f,
                    ws.settings.pivot_severity,
                )]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(preferred),
                ..CodeAction::default()
            }));
        }
    }
    Some(actions)
}
