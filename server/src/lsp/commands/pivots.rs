//! `pivot.pivots.active`, `add`, `remove`, `reload`: the pivots in force and the user's own.

use super::{Args, NoArgs, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::{Notify, Session};
use crate::lsp::sync::{reload_toml, reread_nested};
use pivot_python::pivots::Rule;
use pivot_python::python::ObjectKind;
use pivot_workspace::replies::{ActivePivot, ActivePivots, Reloaded};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

/// The active pivots: id, source, version, instruction text, object kind, rule, session.
pub fn active(b: &Session, _: NoArgs) -> Result<ActivePivots> {
    let ws = b.ws_read();
    let r = &ws.replay;
    let pivots = r
        .active()
        .iter()
        .map(|a| ActivePivot {
            id: a.pivot.id.clone(),
            origin: a.pivot.origin.clone(),
            version: a.version.version,
            text: a.version.text.clone(),
            kind: a.version.kind.name().to_string(),
            rule: a.version.rule.to_json(),
            description: a.version.rule.describe(),
            session: a.version.session,
        })
        .collect();
    Ok(ActivePivots {
        index: r.index(),
        count: r.count(),
        pivots,
    })
}

/// `pivot.pivots.add`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    id: Text,
    kind: Text,
    /// A rule in its JSON form (`Rule::from_json`).
    rule: Value,
    text: Option<String>,
    session: Option<usize>,
}

/// Add a version of a user pivot (saved in `.pivot/state.json`), given at `session`
/// (default: the current session).
pub async fn add(b: &Session, args: &Args<'_>, a: AddArgs) -> Result<ActivePivots> {
    let id = &*a.id;
    bounded(args, "id", id.len(), MAX_ID)?;
    let text = a.text.unwrap_or_default();
    bounded(args, "text", text.len(), MAX_TEXT)?;
    if a.rule.is_null() {
        return Err(args.error("missing argument `rule`"));
    }
    bounded(args, "rule", a.rule.to_string().len(), MAX_RULE)?;
    let kind_name = &*a.kind;
    let kind = ObjectKind::from_name(kind_name).ok_or_else(|| {
        let known: Vec<&str> = ObjectKind::every().map(|k| k.name()).collect();
        args.error(&format!(
            "unknown object kind {kind_name:?}; one of: {}",
            known.join(", ")
        ))
    })?;
    let rule = Rule::from_json(&a.rule).map_err(|e| args.error(&e.to_string()))?;
    let session = a.session;
    let before = b.session_key();
    {
        let mut ws = b.ws();
        if session.is_some_and(|s| s > MAX_SESSION.max(ws.replay.count())) {
            return Err(args.error(&format!(
                "`session` must be at most {} (the conversation has {} sessions)",
                MAX_SESSION.max(ws.replay.count()),
                ws.replay.count()
            )));
        }
        if ws.replay.user().pivots.len() >= MAX_USER_PIVOTS
            && !ws.replay.user().pivots.iter().any(|p| p.id == id)
        {
            return Err(args.error(&format!(
                "there are already {MAX_USER_PIVOTS} user pivots; remove some first"
            )));
        }
        let session = session.unwrap_or(ws.replay.index());
        ws.replay
            .add_user(id, session, text, kind, rule)
            .map_err(|e| args.error(&e))?;
    }
    b.after_change(Notify::IfMoved(before)).await;
    active(b, NoArgs {})
}

// Bounds on what a client can make the server hold and write into `.pivot/state.json`.
const MAX_ID: usize = 200;
const MAX_TEXT: usize = 10_000;
const MAX_RULE: usize = 10_000;
const MAX_SESSION: usize = 10_000;
const MAX_USER_PIVOTS: usize = 1_000;

fn bounded(args: &Args<'_>, key: &str, len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(args.error(&format!(
            "`{key}` is {len} bytes long; at most {max} are accepted"
        )));
    }
    Ok(())
}

/// `pivot.pivots.remove`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveArgs {
    id: Text,
}

pub async fn remove(b: &Session, args: &Args<'_>, a: RemoveArgs) -> Result<ActivePivots> {
    let id = &*a.id;
    let before = b.session_key();
    if !b.ws().replay.remove_user(id) {
        return Err(args.error(&format!("no user pivot `{id}`")));
    }
    b.after_change(Notify::IfMoved(before)).await;
    active(b, NoArgs {})
}

/// Re-read `pivots.toml`, and the pivots files of folders below the root.
pub async fn reload(b: &Session, _: NoArgs) -> Result<Reloaded> {
    // Republished once, by the root's reload (after a bad root file, at the next change).
    reread_nested(b).await;
    let n = reload_toml(b).await.map_err(request_failed)?;
    let info = b.ws_read().info();
    Ok(Reloaded {
        info,
        workspace_pivots: n,
    })
}
