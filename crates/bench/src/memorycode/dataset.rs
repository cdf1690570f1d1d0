//! Building a MemoryCode dataset: conversation prompts from templates (`generate_prompt.py`).

use super::generate::python_json;
use anyhow::{bail, Context as _, Result};
use pivot_llm::memorycode_dataset_prompts::{preamble, session_prompt, Context, TemplateSession};
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
    let path = out.join(format!("prompt_{id}.json"));
    pivot_base::durable::write_atomic(&path, python_json(&file).as_bytes())?;
    Ok(path)
}

/// The original's conversation model settings (`generate_dialogue.py`: Cohere's
/// command-r-plus at temperature 0.9, p 0.9), sent as `temperature` and `top_p`.
pub const CONVERSE_TEMPERATURE: f64 = 0.9;
pub const CONVERSE_TOP_P: f64 = 0.9;

#[derive(Clone, Debug, Default)]
pub struct ConverseReport {
    pub requests: usize,
    pub cached: usize,
    pub written: Vec<PathBuf>,
    pub failures: Vec<String>,
}

/// `generate_dialogue.py` for every `prompt_N.json` of `prompts`: each session's text from the
/// model, written into `templates/dialogue_N.json` (`indent=2`, as the original rewrites it).
/// A dialogue file is rewritten only once all of its sessions are answered.
pub fn converse(
    client: &pivot_llm::Client,
    prompts: &Path,
    templates: &Path,
    sampling: pivot_llm::Sampling,
    workers: usize,
    progress: super::generate::ProgressFn,
) -> Result<ConverseReport> {
    use pivot_llm::memorycode_prompts::ChatPrompt;
    let rd = std::fs::read_dir(prompts)
        .with_context(|| format!("cannot read prompts folder {}", prompts.display()))?;
    let mut files: Vec<(u32, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| super::data::file_id(&e.path(), "prompt_").map(|i| (i, e.path())))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no prompt_N.json files in {}", prompts.display());
    }
    // Check everything first: nothing is sent for a run that cannot be written.
    let mut plan = Vec::new();
    let mut problems = Vec::new();
    for (id, pf) in &files {
        let tf = templates.join(format!("dialogue_{id}.json"));
        let (p, _): (Value, _) = super::data::read_json(pf)?;
        let (t, _): (Value, _) = match super::data::read_json(&tf) {
            Ok(x) => x,
            Err(e) => {
                problems.push(format!("template of {}: {e:#}", pf.display()));
                continue;
            }
        };
        let preamble = text(&p, "preamble", "").with_context(|| pf.display().to_string())?;
        let list = string_list(&p, "prompts", "").with_context(|| pf.display().to_string())?;
        let n = t
            .get("sessions")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if n == 0 {
            problems.push(format!("{}: no sessions", tf.display()));
            continue;
        }
        // The original zips sessions with prompts: the shorter list wins.
        let k = n.min(list.len());
        let chats: Vec<ChatPrompt> = (list.into_iter().take(k))
            .map(|prompt| ChatPrompt {
                preamble: preamble.clone(),
                prompt,
            })
            .collect();
        plan.push((tf, t, chats));
    }
    if !problems.is_empty() {
        bail!("bad input, nothing sent:\n  {}", problems.join("\n  "));
    }
    let all: Vec<ChatPrompt> = plan.iter().flat_map(|(_, _, c)| c.clone()).collect();
    let answers = super::generate::answer_all(
        client,
        all.len(),
        &|i| all[i].clone(),
        sampling,
        workers,
        progress,
    );
    let mut report = ConverseReport {
        requests: all.len(),
        ..ConverseReport::default()
    };
    let mut at = 0;
    for (tf, mut t, chats) in plan {
        let mine = &answers[at..at + chats.len()];
        at += chats.len();
        let mut texts = Vec::new();
        for (i, a) in mine.iter().enumerate() {
            match a {
                Some(Ok(c)) => {
                    report.cached += c.cached as usize;
                    texts.push(c.text.clone());
                }
                Some(Err(e)) => report
                    .failures
                    .push(format!("{}: session {i}: {e}", tf.display())),
                None => {}
            }
        }
        if texts.len() != chats.len() {
            report
                .failures
                .push(format!("{}: not written (answers missing)", tf.display()));
            continue;
        }
        if let Some(sessions) = t.get_mut("sessions").and_then(Value::as_array_mut) {
            for (s, text) in sessions.iter_mut().zip(texts) {
                if let Some(o) = s.as_object_mut() {
                    o.insert("text".into(), Value::String(text));
                }
            }
        }
        pivot_base::durable::write_atomic(&tf, python_json(&t).as_bytes())?;
        report.written.push(tf);
    }
    Ok(report)
}
