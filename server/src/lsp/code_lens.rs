//! `textDocument/codeLens`: "Run tests" on the entry point, and the last result ("3/7
//! passed") beside it; both run `pivot.tests.run` on the document.

use pivot_workspace::Workspace;
use serde_json::json;
use tower_lsp_server::ls_types::*;

pub fn code_lenses(ws: &Workspace, p: CodeLensParams) -> Option<Vec<CodeLens>> {
    let uri = p.text_document.uri;
    let key = uri.as_str();
    let doc = ws.docs.get(key)?;
    // Before any run: on the open ConvCodeWorld task's entry point, if its problem is loaded.
    let default = ws.replay.convcode().and_then(|c| {
        ws.resources
            .cached_problem(&ws.settings, &c.run.task)
            .map(|p| (c.run.task.clone(), p.entry_point))
    });
    let lens = ws.tests.lens(
        key,
        doc.text(),
        default.as_ref().map(|(t, e)| (t.as_str(), e.as_str())),
    )?;
    let line = lens.line as u32;
    let range = Range::new(Position::new(line, 0), Position::new(line, 0));
    let command = |title: String| Command {
        title,
        command: "pivot.tests.run".into(),
        arguments: Some(vec![json!({"uri": key, "task": lens.task})]),
    };
    let mut out = vec![CodeLens {
        range,
        command: Some(command("Run tests".into())),
        data: None,
    }];
    if let Some(s) = &lens.summary {
        out.push(CodeLens {
            range,
            command: Some(command(s.clone())),
            data: None,
        });
    }
    Some(out)
}
