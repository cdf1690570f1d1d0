//! Dialogue templates with the structure and sampling rules of MemoryCode's
//! `generate_template.py`. The original draws from Python's unseeded `random`, so its files
//! cannot be reproduced; these make the same calls in the same order on CPython's own
//! generator (`bench::pyrandom`), seeded per template: template `id` of a run seeded `seed`
//! draws what Python's `random.seed(template_seed(seed, id))` would. Where the original
//! iterates a Python set (hash order; for its strings, different in every process), this
//! takes sorted or first-seen order, which every uniform draw makes equivalent; where the
//! original would crash on an exhausted pool (an `IndexError` in `random.choice`, a
//! `ValueError` in `random.sample`), this falls back to the other pool, skips the draw or
//! samples what there is.

use crate::pyrandom::PyRandom;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The original's command-line parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateParams {
    pub n_session_min: usize,
    pub n_session_max: usize,
    pub proportion_with_instruction_min: f64,
    pub proportion_with_instruction_max: f64,
    pub instruction_only_min: usize,
    pub instruction_only_max: usize,
    pub instructions_per_session_min: usize,
    pub instructions_per_session_max: usize,
    pub instruction_update_rate_min: f64,
    pub instruction_update_rate_max: f64,
    pub max_update_per_filler: usize,
    pub filler_instruction_rate_min: f64,
    pub filler_instruction_rate_max: f64,
    pub filler_instruction_update_rate_min: f64,
    pub filler_instruction_update_rate_max: f64,
}

/// `scripts/generate_dataset.sh`'s parameters for `n` sessions.
pub fn dataset_params(n: usize) -> TemplateParams {
    let mut p = TemplateParams {
        n_session_min: n,
        n_session_max: n,
        proportion_with_instruction_min: 0.5,
        proportion_with_instruction_max: 0.7,
        instruction_only_min: 0,
        instruction_only_max: 2,
        instructions_per_session_min: 1,
        instructions_per_session_max: 2,
        instruction_update_rate_min: 0.3,
        instruction_update_rate_max: 0.7,
        max_update_per_filler: 3,
        filler_instruction_rate_min: 0.5,
        filler_instruction_rate_max: 0.7,
        filler_instruction_update_rate_min: 0.5,
        filler_instruction_update_rate_max: 0.8,
    };
    if n == 1 {
        p.proportion_with_instruction_min = 1.0;
    }
    if n < 6 {
        p.proportion_with_instruction_max = 1.0;
        p.instruction_only_max = 1;
    }
    if n >= 20 {
        p.instruction_only_max = n / 5;
    }
    if n >= 50 {
        p.instruction_update_rate_max = 0.5;
    }
    p
}

/// The session counts of `generate_dataset.sh`, 30 templates each, ids from 1 in this order.
pub const DATASET_SESSION_COUNTS: [usize; 12] = [1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 100];

/// `random.randint(a, b)` over sizes; an error where Python raises one (`a > b`).
fn randint(rng: &mut PyRandom, a: usize, b: usize) -> Result<usize> {
    let (lo, hi) = (i64::try_from(a)?, i64::try_from(b)?);
    match rng.randint(lo, hi) {
        Some(v) => Ok(v as usize),
        None => bail!("empty range {a}..={b}"),
    }
}

struct Instruction {
    eval_query: String,
    shuffle: bool,
    /// (update id, text, regex) not used yet.
    text_regex: Vec<(usize, String, Value)>,
}

fn topics_part<'a>(topics: &'a Value, key: &str) -> Result<&'a Vec<Value>> {
    topics
        .get(key)
        .and_then(Value::as_array)
        .with_context(|| format!("topics: no `{key}` list"))
}

/// A dialogue's structure: what a template (`dialogue_{id}.json` before its text is
/// generated) holds, and what [`check_constraints`] reads of a shipped dialogue (whose other
/// keys, such as a session's `text`, are left aside). Keys in the original's order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Template {
    /// The topics' context, with the mentor's and mentee's personas.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// Per session, the instructions given in it.
    #[serde(default)]
    pub instructions: Vec<InstructionSlot>,
    /// Per session, its filler's id, or -1 for an instruction-only session.
    #[serde(default)]
    pub fillers: Vec<i64>,
    #[serde(default)]
    pub sessions: Vec<TemplateSession>,
}

/// A session's entry in `instructions`: `[-1]` when it gives none, else its
/// `[instruction id, update index]` pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InstructionSlot {
    None([i64; 1]),
    Given(Vec<(i64, usize)>),
}

impl InstructionSlot {
    const NONE: InstructionSlot = InstructionSlot::None([-1]);

    fn count(&self) -> usize {
        match self {
            InstructionSlot::None(_) => 0,
            InstructionSlot::Given(ids) => ids.len(),
        }
    }
}

/// One session of a template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TemplateSession {
    /// `filler-add`, `instruction-update`, ...: one per topic.
    #[serde(rename = "type", default)]
    pub types: Vec<String>,
    #[serde(default)]
    pub topic: Vec<String>,
    /// The checkable rules of the instructions given in the session, as the topics file
    /// writes them (`[object, regex]` or `[object, [name, flag]]`).
    #[serde(default)]
    pub session_regex: Vec<Value>,
    /// The latest rule of every instruction given so far.
    #[serde(default)]
    pub history_regex: Vec<Value>,
    #[serde(default)]
    pub session_eval_query: Vec<String>,
    #[serde(default)]
    pub history_eval_query: Vec<String>,
    /// `short`, `medium` or `long`.
    #[serde(default)]
    pub session_length: Value,
}

pub fn generate_template(
    topics: &Value,
    p: &TemplateParams,
    rng: &mut PyRandom,
) -> Result<Template> {
    if p.proportion_with_instruction_min <= 0.0 || p.proportion_with_instruction_max > 1.0 {
        bail!("the proportion of sessions with instructions must be in (0, 1]");
    }
    if p.n_session_min == 0 || p.n_session_min > p.n_session_max {
        bail!(
            "bad session count range {}..{}",
            p.n_session_min,
            p.n_session_max
        );
    }
    const LENGTHS: [&str; 3] = ["short", "medium", "long"];
    let n = randint(rng, p.n_session_min, p.n_session_max)?;
    let lengths = rng.choices(&LENGTHS, n).context("no session lengths")?;
    let proportion = rng.uniform(
        p.proportion_with_instruction_min,
        p.proportion_with_instruction_max,
    );
    let n_with = ((n as f64) * proportion) as usize;
    let positions = rng
        .sample(&(0..n).collect::<Vec<_>>(), n_with)
        .context("more sessions with instructions than sessions")?;
    let n_only = randint(rng, p.instruction_only_min, p.instruction_only_max)?;
    let only: Vec<usize> = rng
        .sample(&positions, n_only.min(positions.len()))
        .unwrap_or_default();
    let mut per_session: BTreeMap<usize, usize> = BTreeMap::new();
    for &s in &positions {
        let k = randint(
            rng,
            p.instructions_per_session_min,
            p.instructions_per_session_max,
        )?;
        per_session.insert(s, k);
    }
    let update_rate = rng.uniform(p.instruction_update_rate_min, p.instruction_update_rate_max);
    let inst = sample_instructions(topics, n, &positions, &per_session, update_rate, rng)?;
    let filler_rate = rng.uniform(p.filler_instruction_rate_min, p.filler_instruction_rate_max);
    let filler_update_rate = rng.uniform(
        p.filler_instruction_update_rate_min,
        p.filler_instruction_update_rate_max,
    );
    let fill = sample_fillers(
        topics,
        n,
        p.max_update_per_filler,
        &only,
        filler_rate,
        filler_update_rate,
        rng,
    )?;

    let mut sessions = Vec::new();
    for (s, length) in lengths.iter().enumerate() {
        let mut types = Vec::new();
        let mut topic = Vec::new();
        if let Some((t, text)) = &fill.sessions[s] {
            types.push(t.clone());
            topic.push(text.clone());
        }
        if positions.contains(&s) {
            types.extend(inst.types[s].iter().cloned());
            topic.extend(inst.texts[s].iter().cloned());
        }
        sessions.push(TemplateSession {
            types,
            topic,
            session_regex: inst.regex[s].clone(),
            history_regex: inst.history_regex[s].clone(),
            session_eval_query: inst.eval[s].clone(),
            history_eval_query: inst.history_eval[s].clone(),
            session_length: Value::from(**length),
        });
    }
    let contexts = topics_part(topics, "contexts")?;
    let mut context = rng
        .choice(contexts)
        .context("topics: `contexts` is empty")?
        .as_object()
        .cloned()
        .context("topics: a context is not an object")?;
    for role in ["mentor", "mentee"] {
        let list = topics
            .pointer(&format!("/personas/{role}"))
            .and_then(Value::as_array)
            .with_context(|| format!("topics: no `personas.{role}` list"))?;
        let persona = rng
            .choice(list)
            .with_context(|| format!("topics: `personas.{role}` is empty"))?;
        context.insert(format!("{role}_persona"), persona.clone());
    }
    Ok(Template {
        context,
        instructions: inst.template,
        fillers: fill.template,
        sessions,
    })
}

struct Sampled {
    template: Vec<InstructionSlot>,
    types: Vec<Vec<String>>,
    texts: Vec<Vec<String>>,
    regex: Vec<Vec<Value>>,
    history_regex: Vec<Vec<Value>>,
    eval: Vec<Vec<String>>,
    history_eval: Vec<Vec<String>>,
}

fn sample_instructions(
    topics: &Value,
    n: usize,
    positions: &[usize],
    per_session: &BTreeMap<usize, usize>,
    update_rate: f64,
    rng: &mut PyRandom,
) -> Result<Sampled> {
    let mut pool: BTreeMap<i64, Instruction> = BTreeMap::new();
    let mut by_type: Vec<(String, Vec<i64>)> = Vec::new();
    for (i, x) in topics_part(topics, "instructions")?.iter().enumerate() {
        let id = x
            .get("id")
            .and_then(Value::as_i64)
            .with_context(|| format!("topics: instructions[{i}] has no integer id"))?;
        let texts = x
            .get("text")
            .and_then(Value::as_array)
            .with_context(|| format!("topics: instruction {id} has no `text` list"))?;
        let regexes = x
            .get("regex")
            .and_then(Value::as_array)
            .with_context(|| format!("topics: instruction {id} has no `regex` list"))?;
        if texts.is_empty() {
            // The original's `text_regex.pop` would raise `IndexError` on it.
            bail!("topics: instruction {id} has no text");
        }
        let kind = regexes
            .first()
            .and_then(|r| r.get(0))
            .and_then(Value::as_str)
            .with_context(|| format!("topics: instruction {id} has no regex"))?
            .to_string();
        match by_type.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, ids)) => ids.push(id),
            None => by_type.push((kind, vec![id])),
        }
        pool.insert(
            id,
            Instruction {
                eval_query: x
                    .get("eval_query")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                shuffle: x
                    .get("shuffle_updates")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                text_regex: texts
                    .iter()
                    .zip(regexes)
                    .enumerate()
                    .map(|(u, (t, r))| (u, t.as_str().unwrap_or("").to_string(), r.clone()))
                    .collect(),
            },
        );
    }
    // The instructions that can be updated (the original's `range(6, 16)`).
    let with_updates: Vec<i64> = (6..16).collect();
    let mut out = Sampled {
        template: Vec::new(),
        types: Vec::new(),
        texts: Vec::new(),
        regex: Vec::new(),
        history_regex: Vec::new(),
        eval: Vec::new(),
        history_eval: Vec::new(),
    };
    let mut latest = Map::new();
    let mut history_eval: Vec<String> = Vec::new();
    let mut updatable: BTreeSet<i64> = BTreeSet::new();
    for s in 0..n {
        if !positions.contains(&s) {
            out.template.push(InstructionSlot::NONE);
            out.types.push(Vec::new());
            out.texts.push(Vec::new());
            out.regex.push(Vec::new());
            out.history_regex.push(latest.values().cloned().collect());
            out.eval.push(Vec::new());
            out.history_eval.push(history_eval.clone());
            continue;
        }
        let mut seen: BTreeSet<i64> = BTreeSet::new();
        let (mut ids, mut texts, mut types, mut evals) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut regexes = Map::new();
        for _ in 0..per_session[&s] {
            let mut selected = BTreeSet::new();
            for (_, of_type) in &by_type {
                let live: Vec<i64> = of_type
                    .iter()
                    .copied()
                    .filter(|i| pool.contains_key(i))
                    .collect();
                if let Some(&i) = rng.choice(&live) {
                    selected.insert(i);
                }
            }
            let insertion: Vec<i64> = selected
                .iter()
                .copied()
                .filter(|i| !updatable.contains(i) && !seen.contains(i))
                .collect();
            let update: Vec<i64> = updatable
                .iter()
                .copied()
                .filter(|i| !seen.contains(i))
                .collect();
            let (id, kind) = if rng.random() < update_rate || insertion.is_empty() {
                if let Some(&i) = rng.choice(&update) {
                    (i, "instruction-update")
                } else {
                    let fresh: Vec<i64> = with_updates
                        .iter()
                        .copied()
                        .filter(|i| pool.contains_key(i) && !updatable.contains(i))
                        .collect();
                    match rng
                        .choice(&fresh)
                        .or_else(|| rng.choice(&insertion))
                        .copied()
                    {
                        Some(i) => {
                            updatable.insert(i);
                            (i, "instruction-add")
                        }
                        None => continue,
                    }
                }
            } else {
                let Some(&i) = rng.choice(&insertion) else {
                    continue;
                };
                if with_updates.contains(&i) {
                    updatable.insert(i);
                }
                (i, "instruction-add")
            };
            seen.insert(id);
            let Some(ins) = pool.get_mut(&id) else {
                continue;
            };
            let at = if ins.shuffle {
                randint(rng, 0, ins.text_regex.len() - 1)?
            } else {
                0
            };
            let (u, text, regex) = ins.text_regex.remove(at);
            ids.push((id, u));
            texts.push(text);
            types.push(kind.to_string());
            regexes.insert(id.to_string(), regex);
            evals.push(ins.eval_query.clone());
            if ins.text_regex.is_empty() {
                pool.remove(&id);
                updatable.remove(&id);
            }
        }
        for (k, v) in &regexes {
            latest.insert(k.clone(), v.clone());
        }
        for e in &evals {
            if !history_eval.contains(e) {
                history_eval.push(e.clone());
            }
        }
        out.template.push(InstructionSlot::Given(ids));
        out.types.push(types);
        out.texts.push(texts);
        out.regex.push(regexes.values().cloned().collect());
        out.history_regex.push(latest.values().cloned().collect());
        out.eval.push(evals);
        out.history_eval.push(history_eval.clone());
    }
    Ok(out)
}

struct Fillers {
    template: Vec<i64>,
    /// Per session: (type, topic), or None for an instruction-only session.
    sessions: Vec<Option<(String, String)>>,
}

fn sample_fillers(
    topics: &Value,
    n: usize,
    max_update: usize,
    only: &[usize],
    filler_rate: f64,
    update_rate: f64,
    rng: &mut PyRandom,
) -> Result<Fillers> {
    let all = topics_part(topics, "fillers")?;
    let mut left: Vec<(i64, usize)> = Vec::new();
    let mut text_of: BTreeMap<i64, String> = BTreeMap::new();
    let drawn = rng
        .choices(all, n.saturating_sub(only.len()))
        .context("topics: `fillers` is empty")?;
    for f in drawn {
        let id = f
            .get("id")
            .and_then(Value::as_i64)
            .context("topics: a filler has no integer id")?;
        text_of.insert(
            id,
            f.get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        );
        if !left.iter().any(|(i, _)| *i == id) {
            left.push((id, max_update));
        }
    }
    let mut fi: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for x in topics_part(topics, "fillers_instruction")? {
        let id = x
            .get("id")
            .and_then(Value::as_i64)
            .context("topics: a filler instruction has no integer id")?;
        let texts = x
            .get("text")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        fi.insert(id, texts);
    }
    let mut seen_fillers = BTreeSet::new();
    let mut updatable: BTreeSet<i64> = BTreeSet::new();
    let mut out = Fillers {
        template: Vec::new(),
        sessions: Vec::new(),
    };
    for s in 0..n {
        if only.contains(&s) {
            out.template.push(-1);
            out.sessions.push(None);
            continue;
        }
        if rng.random() < filler_rate && !left.is_empty() {
            // `random.choice(list(filler_n_update.keys()))`: the fillers left, first seen first.
            let k = rng.randbelow(left.len() as u64) as usize;
            let id = left[k].0;
            left[k].1 -= 1;
            if left[k].1 == 0 {
                left.remove(k);
            }
            let kind = if seen_fillers.insert(id) {
                "filler-add"
            } else {
                "filler-update"
            };
            out.template.push(id);
            out.sessions.push(Some((kind.into(), text_of[&id].clone())));
            continue;
        }
        let insertion: Vec<i64> = fi.keys().copied().collect();
        let update: Vec<i64> = updatable.iter().copied().collect();
        let (id, kind) = if !update.is_empty() && rng.random() < update_rate {
            (
                rng.choice(&update).copied().unwrap_or_default(),
                "filler-instruction-update",
            )
        } else {
            let Some(&id) = rng.choice(&insertion) else {
                bail!("topics: the filler instructions ran out");
            };
            updatable.insert(id);
            (id, "filler-instruction-add")
        };
        let texts = fi.get_mut(&id).context("filler instruction vanished")?;
        let text = texts.pop().unwrap_or_default();
        if texts.is_empty() {
            fi.remove(&id);
            updatable.remove(&id);
        }
        out.template.push(id);
        out.sessions.push(Some((kind.into(), text)));
    }
    Ok(out)
}

/// The constraints `params` impose on a dialogue's structure (a template or a shipped
/// dialogue): one message per violation.
pub fn check_constraints(d: &Template, p: &TemplateParams) -> Vec<String> {
    let mut bad = Vec::new();
    let (sessions, instructions, fillers) = (&d.sessions, &d.instructions, &d.fillers);
    let n = sessions.len();
    if n < p.n_session_min || n > p.n_session_max {
        bad.push(format!(
            "{n} sessions, not in {}..={}",
            p.n_session_min, p.n_session_max
        ));
    }
    if instructions.len() != n || fillers.len() != n {
        bad.push("`instructions` / `fillers` not one per session".into());
        return bad;
    }
    let with: Vec<usize> = (0..n)
        .filter(|&i| instructions[i] != InstructionSlot::NONE)
        .collect();
    let lo = (n as f64 * p.proportion_with_instruction_min) as usize;
    let hi = (n as f64 * p.proportion_with_instruction_max) as usize;
    if with.len() < lo || with.len() > hi {
        bad.push(format!(
            "{} instruction sessions, not in {lo}..={hi}",
            with.len()
        ));
    }
    let only: Vec<usize> = (0..n).filter(|&i| fillers[i] == -1).collect();
    if only.len() > p.instruction_only_max || only.len() < p.instruction_only_min.min(with.len()) {
        bad.push(format!(
            "{} instruction-only sessions, not in {}..={}",
            only.len(),
            p.instruction_only_min,
            p.instruction_only_max
        ));
    }
    let mut filler_uses: BTreeMap<String, usize> = BTreeMap::new();
    for (i, s) in sessions.iter().enumerate() {
        let types: Vec<&str> = s.types.iter().map(String::as_str).collect();
        let n_inst = types
            .iter()
            .filter(|t| t.starts_with("instruction-"))
            .count();
        if with.contains(&i) {
            if n_inst < p.instructions_per_session_min || n_inst > p.instructions_per_session_max {
                bad.push(format!("session {i}: {n_inst} instructions"));
            }
            let ids = instructions[i].count();
            if ids != n_inst || s.session_eval_query.len() != n_inst {
                bad.push(format!(
                    "session {i}: instructions, types and eval queries disagree"
                ));
            }
        } else if n_inst != 0 {
            bad.push(format!(
                "session {i}: instructions in a session without any"
            ));
        }
        if only.contains(&i) {
            if !with.contains(&i) {
                bad.push(format!("session {i}: neither filler nor instruction"));
            }
        } else if types.first().is_none_or(|t| !t.starts_with("filler-")) {
            bad.push(format!("session {i}: no filler first"));
        }
        let topics: Vec<&str> = s.topic.iter().map(String::as_str).collect();
        for (t, topic) in types.iter().zip(&topics) {
            match *t {
                "filler-add" | "filler-update" => {
                    let c = filler_uses.entry(topic.to_string()).or_default();
                    *c += 1;
                    if (*t == "filler-add") != (*c == 1) {
                        bad.push(format!("session {i}: {t} of a filler used {c} times"));
                    }
                }
                "instruction-add"
                | "filler-instruction-add"
                | "instruction-update"
                | "filler-instruction-update" => {}
                other => bad.push(format!("session {i}: unknown type {other:?}")),
            }
        }
        if !["short", "medium", "long"].contains(&s.session_length.as_str().unwrap_or("")) {
            bad.push(format!("session {i}: session_length {}", s.session_length));
        }
    }
    for (topic, c) in filler_uses {
        if c > p.max_update_per_filler {
            bad.push(format!("filler {topic:?} used {c} times"));
        }
    }
    bad
}

/// The seed of template `id` in a run seeded `seed` (its generator is Python's
/// `random.Random` of this number): each template can be regenerated alone.
pub fn template_seed(seed: u64, id: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id as u64
}

/// `generate_dataset.sh`'s template plan: (id, parameters), 30 templates per session count.
pub fn dataset_plan() -> Vec<(usize, TemplateParams)> {
    let mut out = Vec::new();
    for n in DATASET_SESSION_COUNTS {
        for _ in 0..30 {
            out.push((out.len() + 1, dataset_params(n)));
        }
    }
    out
}

/// Write `OUT/dialogue_{id}.json` for each planned template (`indent=1`, as the original).
pub fn write_templates(
    topics: &Value,
    plan: &[(usize, TemplateParams)],
    seed: u64,
    out: &std::path::Path,
) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut written = Vec::new();
    for (id, p) in plan {
        let mut rng = PyRandom::new(template_seed(seed, *id).into());
        let t = generate_template(topics, p, &mut rng).with_context(|| format!("template {id}"))?;
        let path = out.join(format!("dialogue_{id}.json"));
        let t = serde_json::to_value(&t)?;
        pivot_base::durable::write_atomic(
            &path,
            super::generate::python_json_indent(&t, 1).as_bytes(),
        )?;
        written.push(path);
    }
    Ok(written)
}
