//! MemoryCode's file formats: `dialogue_N.json`, `output_N.json`, `topics.json`.
//! A malformed file is an error that names the file and the JSON path of the problem.

use anyhow::{Context, Result};
use pivot_python::pivots::Rule;
use pivot_python::python::ObjectKind;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One `[object, rule]` pair of a session's regex list.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "(String, Value)")]
pub struct Pair {
    pub kind: ObjectKind,
    pub rule: Rule,
}

impl TryFrom<(String, Value)> for Pair {
    type Error = String;
    fn try_from((kind, rule): (String, Value)) -> Result<Pair, String> {
        Ok(Pair {
            kind: ObjectKind::from_name(&kind)
                .ok_or_else(|| format!("unknown object kind {kind:?}"))?,
            rule: Rule::from_json(&rule).map_err(|e| e.to_string())?,
        })
    }
}

/// One session of a dialogue file as the benchmark ships it. The one reader of that format:
/// scoring, the generator ([`super::generate::GenDialogue`]), the ledger and the editor's
/// timeline all read it (the dataset builder's templates, a stage before the text, are
/// `templates.rs`'s).
/// Keys the editor can do without (a hand-written dialogue of a test or a bug report often
/// has only `type`, `topic` and the regex lists) default to empty; the generator, which
/// needs them, refuses a dialogue without them and names the session.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Session {
    #[serde(rename = "type", default, deserialize_with = "shrunk")]
    pub types: Vec<String>,
    #[serde(default, deserialize_with = "shrunk")]
    pub topic: Vec<String>,
    #[serde(default, deserialize_with = "shrunk")]
    pub session_regex: Vec<Pair>,
    #[serde(default, deserialize_with = "shrunk")]
    pub history_regex: Vec<Pair>,
    /// `None` when the key is absent or `null` (the generator says which session lacks it).
    #[serde(default, deserialize_with = "shrunk_opt")]
    pub session_eval_query: Option<Vec<String>>,
    #[serde(default, deserialize_with = "shrunk_opt")]
    pub history_eval_query: Option<Vec<String>>,
    /// Not used in scoring; kept so that this struct states the whole session format (the
    /// dataset builder reads it from the template's JSON, `dataset.rs`).
    #[serde(default)]
    pub session_length: Option<String>,
    /// The session's transcript; `None` when the key is absent.
    #[serde(default)]
    pub text: Option<String>,
}

impl Session {
    /// The transcript, empty when the file has none.
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }
}

/// The dialogue's `context`: who talks, at which company (its other keys, the personas,
/// only shaped the dialogue's text). Each is `None` when absent or not a string: only the
/// generator needs them, and it names the one missing; the editor opens the dialogue
/// whatever its context holds.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(from = "Value")]
pub struct DialogueContext {
    pub mentor: Option<String>,
    pub mentee: Option<String>,
    pub company: Option<String>,
}

impl From<Value> for DialogueContext {
    fn from(v: Value) -> DialogueContext {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        DialogueContext {
            mentor: text("mentor"),
            mentee: text("mentee"),
            company: text("company"),
        }
    }
}

/// One session's entry of the dialogue's `instructions`: the `[pivot_id, version]` pairs it
/// gives, in order; the file's `[-1]` (no pivot) reads as none. Read leniently, as the
/// editor always has: a pair that is not two integers is left out, and `malformed` says so,
/// for the generator, which refuses such a dialogue, to name it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Value")]
pub struct SessionPivots {
    pub pairs: Vec<(i64, i64)>,
    pub malformed: bool,
}

impl From<Value> for SessionPivots {
    fn from(v: Value) -> SessionPivots {
        let Value::Array(items) = v else {
            return SessionPivots {
                pairs: Vec::new(),
                malformed: true,
            };
        };
        if let [only] = items.as_slice() {
            if only.as_i64() == Some(-1) {
                return SessionPivots::default();
            }
        }
        let mut out = SessionPivots::default();
        for item in &items {
            match item.as_array().map(Vec::as_slice) {
                Some([a, b]) => match (a.as_i64(), b.as_i64()) {
                    (Some(a), Some(b)) => out.pairs.push((a, b)),
                    _ => out.malformed = true,
                },
                _ => out.malformed = true,
            }
        }
        out.pairs.shrink_to_fit();
        out
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Dialogue {
    #[serde(skip)]
    pub id: u32,
    /// `None` when the key is absent (the generator needs it and says so).
    #[serde(default)]
    pub context: Option<DialogueContext>,
    /// Per session: the pivots it gives (the file's `[[pivot_id, version], ...]` or `[-1]`).
    /// `None` when the key is absent.
    #[serde(default, deserialize_with = "shrunk_opt")]
    pub instructions: Option<Vec<SessionPivots>>,
    pub sessions: Vec<Session>,
}

impl Dialogue {
    /// The pivots session `s` gives (none past the end of `instructions`).
    pub fn pivots_at(&self, s: usize) -> &[(i64, i64)] {
        (self.instructions.as_deref())
            .and_then(|i| i.get(s))
            .map_or(&[], |p| &p.pairs)
    }
}

/// A list read without spare room: serde grows a list of unknown length to four places,
/// and a dialogue holds six lists per session (100,000 sessions: a third of its memory).
/// Each is shrunk as soon as it is read, so the spare room never adds up.
fn shrunk<'de, D, T>(d: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut v = Vec::<T>::deserialize(d)?;
    v.shrink_to_fit();
    Ok(v)
}

/// [`shrunk`] for a list that may be absent or `null`.
fn shrunk_opt<'de, D, T>(d: D) -> std::result::Result<Option<Vec<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut v = Option::<Vec<T>>::deserialize(d)?;
    if let Some(v) = &mut v {
        v.shrink_to_fit();
    }
    Ok(v)
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct SessionOutput {
    #[serde(default)]
    pub session_model_output: Vec<String>,
    #[serde(default)]
    pub instruction_model_output: Vec<String>,
    #[serde(default)]
    pub history_model_output: Vec<String>,
    /// `generate --modes instructions-chain`: the last session's history queries after the
    /// list of instructions alone (the original names the key `instructions_only_...`).
    /// `None` when the file has no such key (the original evaluator reads neither key).
    #[serde(default)]
    pub instructions_only_model_output: Option<Vec<String>>,
    /// `generate --modes rag`: the last session's history queries after retrieved sessions.
    #[serde(default)]
    pub rag_model_output: Option<Vec<String>>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ModelOutput {
    pub sessions: Vec<SessionOutput>,
    /// Problems found while reading that did not stop the read (e.g. invalid UTF-8).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// One entry of `topics.json`'s pivot catalogue.
#[derive(Clone, Debug, Deserialize)]
pub struct TopicInstruction {
    pub id: i64,
    pub text: Vec<String>,
    /// `regex` and `eval_query` are read by no one here (the ledger needs the texts); they
    /// stay so that a catalogue with malformed rules is refused when it is loaded, and so
    /// that this struct states the format.
    pub regex: Vec<Pair>,
    #[serde(default)]
    pub eval_query: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Topics {
    pub instructions: Vec<TopicInstruction>,
}

/// Read and deserialize a JSON file; errors name the file and the JSON path.
/// Invalid UTF-8 is replaced (U+FFFD) and reported in the returned warning, not fatal.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<(T, Option<String>)> {
    let bytes = pivot_base::bounded_read::read(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let (text, warning) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let t = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let w = format!(
                "{}: invalid UTF-8 at byte {at}; bad bytes were replaced with U+FFFD",
                path.display()
            );
            (t, Some(w))
        }
    };
    // Path tracking slows every read down; it is only needed to explain a failure.
    if let Ok(value) = serde_json::from_str(&text) {
        return Ok((value, warning));
    }
    let mut de = serde_json::Deserializer::from_str(&text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let p = e.path().to_string();
        anyhow::anyhow!("{}: at JSON path {}: {}", path.display(), p, e.inner())
    })?;
    // As Python's json.load: data after the value ("Extra data") is an error.
    de.end()
        .with_context(|| format!("{}: data after the JSON value", path.display()))?;
    Ok((value, warning))
}

/// `N` of a file named `{prefix}N.json`.
pub fn file_id(path: &Path, prefix: &str) -> Option<u32> {
    path.file_name()?
        .to_str()?
        .strip_prefix(prefix)?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// What scoring reads of a dialogue file: the sessions' pairs. The transcripts, most of
/// the file, are checked as JSON but not copied.
#[derive(Deserialize)]
struct DialoguePairs {
    sessions: Vec<SessionPairs>,
}

#[derive(Deserialize)]
struct SessionPairs {
    #[serde(default)]
    session_regex: Vec<Pair>,
    #[serde(default)]
    history_regex: Vec<Pair>,
}

/// A dialogue file read as `T`: unlike answers, dialogues must be valid UTF-8.
fn read_dialogue<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let (d, warning) = read_json(path)?;
    if let Some(w) = warning {
        anyhow::bail!("{w} (dialogue files must be UTF-8)");
    }
    Ok(d)
}

impl Dialogue {
    pub fn load(path: &Path) -> Result<Dialogue> {
        let mut d: Dialogue = read_dialogue(path)?;
        d.id = file_id(path, "dialogue_").unwrap_or(0);
        Ok(d)
    }

    /// A dialogue with only what scoring needs: each session's `session_regex` and
    /// `history_regex` (everything else empty).
    pub fn load_pairs(path: &Path) -> Result<Dialogue> {
        let d: DialoguePairs = read_dialogue(path)?;
        let sessions = (d.sessions.into_iter())
            .map(|s| Session {
                session_regex: s.session_regex,
                history_regex: s.history_regex,
                ..Session::default()
            })
            .collect();
        Ok(Dialogue {
            id: file_id(path, "dialogue_").unwrap_or(0),
            context: None,
            instructions: None,
            sessions,
        })
    }
}

impl ModelOutput {
    pub fn load(path: &Path) -> Result<ModelOutput> {
        let (mut o, warning): (ModelOutput, _) = read_json(path)?;
        o.warnings.extend(warning);
        Ok(o)
    }
}

impl Topics {
    pub fn load(path: &Path) -> Result<Topics> {
        Ok(read_json(path)?.0)
    }
}

/// A file left out, with the reason.
pub type Ignored = (u32, String);

/// Splits `files` (sorted by id) into one file per id and the others: `dialogue_007.json`
/// and `dialogue_7.json` are both dialogue 7; the one spelt `dialogue_7.json` is kept (else
/// the first), and each other one is returned with the reason it was not used.
pub fn one_file_per_id(files: Vec<(u32, PathBuf)>) -> (Vec<(u32, PathBuf)>, Vec<Ignored>) {
    let mut kept: Vec<(u32, PathBuf)> = Vec::new();
    let mut ignored = Vec::new();
    for (id, p) in files {
        let canonical = |p: &Path| p.file_name() == Some(format!("dialogue_{id}.json").as_ref());
        match kept.last_mut() {
            Some((k, kp)) if *k == id => {
                let other = if canonical(&p) {
                    std::mem::replace(kp, p)
                } else {
                    p
                };
                ignored.push((
                    id,
                    format!(
                        "{} is also dialogue {id}; only {} is scored",
                        other.display(),
                        kp.display()
                    ),
                ));
            }
            _ => kept.push((id, p)),
        }
    }
    (kept, ignored)
}

/// The dialogue files of a dataset folder, sorted by id.
pub fn dialogue_files(dir: &Path) -> Result<Vec<(u32, PathBuf)>> {
    let rd = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read dataset folder {}", dir.display()))?;
    let mut files: Vec<(u32, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            file_id(&p, "dialogue_").map(|id| (id, p))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("no dialogue_N.json files in {}", dir.display());
    }
    Ok(files)
}
