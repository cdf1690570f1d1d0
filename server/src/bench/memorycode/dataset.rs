//! Building a MemoryCode dataset: conversation prompts from templates (`generate_prompt.py`).

use super::generate::python_json;
use crate::llm::memorycode_dataset_prompts::{preamble, session_prompt, Context, TemplateSession};
use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn text(v: &Value, key: &str, what: &str) -> Result<String> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => bail!("`{what}{key}` is missing or not a string"),
    }
}

fn string_list(v: &Value, key: &str, what: &str) -> Result<Vec<String>> {
    let list = v
        .get(key)
        .and_then(Value::as_array)
        .with_context(|| format!("`{what}{key}` is missing or not a list"))?;
    list.iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .with_context(|| format!("`{what}{key}` holds a non-string"))
        })
        .collect()
}

/// The prompt file of one template: `{"preamble", "prompts"}`.
pub fn prompt_file(template: &Value, published: bool) -> Result<Value> {
    let c = template.get("context").context("no `context`")?;
    let ctx = Context {
        mentor: text(c, "mentor", "context.")?,
        mentee: text(c, "mentee", "context.")?,
        company: text(c, "company", "context.")?,
        mentor_persona: text(c, "mentor_persona", "context.")?,
        mentee_persona: text(c, "mentee_persona", "context.")?,
    };
    let sessions = template
        .get("sessions")
        .and_then(Value::as_array)
        .context("no `sessions` list")?;
    let mut prompts = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let what = format!("sessions[{i}].");
        let session = TemplateSession {
            types: string_list(s, "type", &what)?,
            topics: string_list(s, "topic", &what)?,
            length: text(s, "session_length", &what)?,
        };
        prompts.push(Value::String(session_prompt(&ctx, &session, i, published)));
    }
    Ok(json!({"preamble": preamble(&ctx), "prompts": prompts}))
}

/// The conversation id of a template file, as the original takes it: the text between the
/// first `_` and the following `.` of the file name.
pub fn conversation_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let after = name.split('_').nth(1)?;
    Some(after.split('.').next().unwrap_or(after).to_string())
}

/// Write `OUT/prompt_N.json` for one template file; returns its path.
pub fn write_prompts(template: &Path, out: &Path, published: bool) -> Result<PathBuf> {
    let (v, _): (Value, _) = super::data::read_json(template)?;
    let file = prompt_file(&v, published).with_context(|| template.display().to_string())?;
    let id = conversation_id(template)
        .with_context(|| format!("{}: the name has no `_N` id", template.display()))?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join(format!("prompt_{id}.json"));
    std::fs::write(&path, python_json(&file))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
