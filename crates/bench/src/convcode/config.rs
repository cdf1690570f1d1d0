//! The nine ConvCodeWorld feedback configurations, their labels, and the original's file layout;
//! and each of them with instruction feedback (`_IF`, this project's: the pivots in force checked
//! after the configuration's own feedback, see turn.rs), which the original has not.

use std::fmt;
use std::path::{Path, PathBuf};

/// Version folder the original writes its per-turn results under.
pub const VERSION_DIR: &str = "v0.3.6";
/// Dataset prefix of every per-turn file name (kept for layout compatibility, also for HumanEval).
pub const DATASET_NAME: &str = "bigcodebench";
/// The original's default feedback simulator.
pub const DEFAULT_SIMULATOR: &str = "gpt-4o";
/// Number of refinement turns after turn 0.
pub const MAX_TURNS: usize = 10;
/// Models whose turn-0 samples the original names `openai` (everything else is `vllm`): its
/// `AZURE_OPENAI_MODEL_LIST` (azure_open_ai.py), in its order.
pub const API_MODELS: [&str; 6] = [
    "gpt-4o",
    "gpt-4-turbo-2024-04-09",
    "gpt-4-0613",
    "gpt-4o-mini",
    "gpt-35-turbo-0613",
    "gpt-35-turbo-instruct-0914",
];

/// Test coverage of execution feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coverage {
    /// Only the first three test methods are visible (`UNIT`).
    Partial,
    /// All tests are visible (`FULL`).
    Full,
}

/// Who simulates the verbal feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expertise {
    Novice,
    Expert,
}

/// One feedback configuration; compilation feedback is always on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub execution: Option<Coverage>,
    pub verbal: Option<Expertise>,
    /// Instruction feedback: the turn's code checked against the pivots in force, and refined
    /// once more from the findings (`_IF`; not the original's).
    pub instruction: bool,
}

impl Config {
    /// All nine configurations in the order of the original's tables.
    pub fn all() -> [Config; 9] {
        use Coverage::*;
        use Expertise::*;
        let c = |execution, verbal| Config {
            execution,
            verbal,
            instruction: false,
        };
        [
            c(None, None),
            c(Some(Partial), None),
            c(Some(Full), None),
            c(None, Some(Novice)),
            c(Some(Partial), Some(Novice)),
            c(Some(Full), Some(Novice)),
            c(None, Some(Expert)),
            c(Some(Partial), Some(Expert)),
            c(Some(Full), Some(Expert)),
        ]
    }

    /// The original's nine, then each of them with instruction feedback (`CF_IF`, ...).
    pub fn every() -> Vec<Config> {
        let all = Config::all();
        let with_if = all.iter().map(|c| c.with_instruction());
        all.iter().copied().chain(with_if).collect()
    }

    /// This configuration with instruction feedback.
    pub fn with_instruction(self) -> Config {
        Config {
            instruction: true,
            ..self
        }
    }

    /// This configuration without instruction feedback: the original's, whose requests an
    /// `_IF` turn makes first.
    pub fn base(self) -> Config {
        Config {
            instruction: false,
            ..self
        }
    }

    /// The five configurations ConvCodeBench reports (verbal feedback with a failing signal possible).
    pub fn static_reported() -> Vec<Config> {
        Config::all()
            .into_iter()
            .filter(|c| {
                c.verbal.is_some()
                    && !(c.execution.is_none() && c.verbal == Some(Expertise::Novice))
            })
            .collect()
    }

    /// Option code as in file names, e.g. `CF_EF_UNIT_SNF`.
    pub fn code(&self) -> String {
        let mut s = String::from("CF");
        match self.execution {
            Some(Coverage::Partial) => s.push_str("_EF_UNIT"),
            Some(Coverage::Full) => s.push_str("_EF_FULL"),
            None => {}
        }
        match self.verbal {
            Some(Expertise::Novice) => s.push_str("_SNF"),
            Some(Expertise::Expert) => s.push_str("_SEF"),
            None => {}
        }
        if self.instruction {
            s.push_str("_IF");
        }
        s
    }

    /// Parse an option code (`CF_EF_FULL_SEF`); case-insensitive.
    pub fn parse(code: &str) -> Option<Config> {
        let up = code.trim().to_ascii_uppercase();
        Config::every().into_iter().find(|c| c.code() == up)
    }

    /// Column label of the original's tables, e.g. `w/ CF EF (full TC) SEF`.
    pub fn label(&self) -> String {
        let mut s = String::from("w/ CF");
        match self.execution {
            Some(Coverage::Partial) => s.push_str(" EF (partial TC)"),
            Some(Coverage::Full) => s.push_str(" EF (full TC)"),
            None => {}
        }
        match self.verbal {
            Some(Expertise::Novice) => s.push_str(" SNF"),
            Some(Expertise::Expert) => s.push_str(" SEF"),
            None => {}
        }
        if self.instruction {
            s.push_str(" IF");
        }
        s
    }

    /// `w/ CF` and `w/ CF SNF` never change turn-0 code, so the original repeats turn 0 for them.
    pub fn repeats_turn0(&self) -> bool {
        self.execution.is_none() && self.verbal != Some(Expertise::Expert) && !self.instruction
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

/// Parse a `--config` value: one option code, a comma-separated list, or `all` (the original's
/// nine; an `_IF` configuration is named).
pub fn parse_configs(spec: &str) -> anyhow::Result<Vec<Config>> {
    if spec.trim().eq_ignore_ascii_case("all") {
        return Ok(Config::all().to_vec());
    }
    let mut out = Vec::new();
    for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
        let c = Config::parse(part).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown configuration `{}`; expected one of {}, each with `_IF` for instruction \
                 feedback, or `all`",
                part.trim(),
                Config::all()
                    .iter()
                    .map(|c| c.code())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        anyhow::bail!("no configuration given");
    }
    Ok(out)
}

/// Where a results folder (the original's working directory) keeps each file.
#[derive(Clone, Debug)]
pub struct Layout {
    pub root: PathBuf,
    pub simulator: String,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>, simulator: impl Into<String>) -> Self {
        Layout {
            root: root.into(),
            simulator: simulator.into(),
        }
    }

    /// `vllm` or `openai`: the generation backend the original names turn-0 files after.
    pub fn turn0_source(model: &str) -> &'static str {
        if API_MODELS.contains(&model) {
            "openai"
        } else {
            "vllm"
        }
    }

    /// `{M--}--bigcodebench-instruct--{vllm|openai}-0-1` (greedy, one sample).
    fn turn0_header(model: &str) -> String {
        Layout::turn0_header_as(model, Layout::turn0_source(model))
    }

    fn turn0_header_as(model: &str, source: &str) -> String {
        format!(
            "{}--bigcodebench-instruct--{source}-0-1",
            model.replace('/', "--"),
        )
    }

    /// Turn-0 samples (`.jsonl`) of a model, where the original writes them.
    pub fn turn0_samples(&self, model: &str) -> PathBuf {
        self.turn0_samples_as(model, Layout::turn0_source(model))
    }

    fn turn0_samples_as(&self, model: &str, source: &str) -> PathBuf {
        self.root
            .join("bigcodebench/sanitized_calibrated_samples/instruct")
            .join(format!(
                "{}-sanitized-calibrated.jsonl",
                Layout::turn0_header_as(model, source)
            ))
    }

    /// The turn-0 samples to read: the file the original's model list names, or else the
    /// other backend's file when only that one exists (results written under another model
    /// list). When both exist the named one is read and the note says so.
    pub fn turn0_samples_found(&self, model: &str) -> (PathBuf, Option<String>) {
        let named = Layout::turn0_source(model);
        let other = if named == "openai" { "vllm" } else { "openai" };
        let first = self.turn0_samples_as(model, named);
        let second = self.turn0_samples_as(model, other);
        let has = |p: &Path| p.exists() || eval_path(p).exists();
        match (has(&first), has(&second)) {
            (false, true) => (second, None),
            (true, true) => {
                let note = format!(
                    "both `{named}` and `{other}` turn-0 files exist for {model}; read the `{named}` one ({})",
                    first.display()
                );
                (first, Some(note))
            }
            _ => (first, None),
        }
    }

    /// Raw (unsanitized) turn-0 generations, where BigCodeBench's `generate` leaves them.
    pub fn turn0_raw(&self, model: &str) -> PathBuf {
        self.root
            .join("bigcodebench")
            .join(format!("{}.jsonl", Layout::turn0_header(model)))
    }

    /// File stem `bigcodebench_{M}_{OPT}[_by_{SIM}][_ITER=i]` of a live or static turn.
    pub fn turn_stem(&self, model: &str, config: Config, turn: usize) -> String {
        let mut s = format!(
            "{DATASET_NAME}_{}_{}",
            model.replace('/', "_"),
            config.code()
        );
        if config.verbal.is_some() && model != self.simulator {
            s.push_str(&format!("_by_{}", self.simulator.replace('/', "_")));
        }
        if turn > 1 {
            s.push_str(&format!("_ITER={turn}"));
        }
        s
    }

    /// Folder of live per-turn files.
    pub fn live_dir(&self) -> PathBuf {
        self.root.join("results").join(VERSION_DIR)
    }

    /// Live turn `turn >= 1` log of a model.
    pub fn live_log(&self, model: &str, config: Config, turn: usize) -> PathBuf {
        self.live_dir()
            .join(format!("{}.jsonl", self.turn_stem(model, config, turn)))
    }

    /// Folder of static results of any target against reference `reference`.
    pub fn static_dir(&self, reference: &str, config: Config) -> PathBuf {
        self.live_dir()
            .join("static")
            .join(self.turn_stem(reference, config, 1))
    }

    /// Static turn `turn >= 1` log of target `model` against reference `reference`.
    pub fn static_log(&self, reference: &str, model: &str, config: Config, turn: usize) -> PathBuf {
        self.static_dir(reference, config)
            .join(format!("{}.jsonl", self.turn_stem(model, config, turn)))
    }
}

/// The evaluation results path that belongs to a `.jsonl` log.
pub fn eval_path(log: &Path) -> PathBuf {
    let s = log.to_string_lossy();
    let stem = s.strip_suffix(".jsonl").unwrap_or(&s);
    PathBuf::from(format!("{stem}_eval_results.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_labels_follow_the_original_order() {
        let codes: Vec<String> = Config::all().iter().map(|c| c.code()).collect();
        assert_eq!(
            codes,
            [
                "CF",
                "CF_EF_UNIT",
                "CF_EF_FULL",
                "CF_SNF",
                "CF_EF_UNIT_SNF",
                "CF_EF_FULL_SNF",
                "CF_SEF",
                "CF_EF_UNIT_SEF",
                "CF_EF_FULL_SEF"
            ]
        );
        assert_eq!(
            Config::parse("cf_ef_full_sef").unwrap().label(),
            "w/ CF EF (full TC) SEF"
        );
        let s: Vec<String> = Config::static_reported().iter().map(|c| c.code()).collect();
        assert_eq!(
            s,
            [
                "CF_EF_UNIT_SNF",
                "CF_EF_FULL_SNF",
                "CF_SEF",
                "CF_EF_UNIT_SEF",
                "CF_EF_FULL_SEF"
            ]
        );
    }

    #[test]
    fn file_names_match_the_original() {
        let l = Layout::new("/r", "gpt-4o");
        let sef = Config::parse("CF_SEF").unwrap();
        assert_eq!(
            l.live_log("org/m", sef, 1),
            PathBuf::from("/r/results/v0.3.6/bigcodebench_org_m_CF_SEF_by_gpt-4o.jsonl")
        );
        assert_eq!(
            eval_path(&l.live_log("gpt-4o", sef, 3)),
            PathBuf::from("/r/results/v0.3.6/bigcodebench_gpt-4o_CF_SEF_ITER=3_eval_results.json")
        );
        assert_eq!(
            l.turn0_samples("org/m"),
            PathBuf::from(
                "/r/bigcodebench/sanitized_calibrated_samples/instruct/org--m--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl"
            )
        );
        assert_eq!(
            l.turn0_raw("gpt-4o"),
            PathBuf::from("/r/bigcodebench/gpt-4o--bigcodebench-instruct--openai-0-1.jsonl")
        );
        assert_eq!(
            l.static_log("ref/R", "t/T", Config::parse("CF_EF_FULL").unwrap(), 2),
            PathBuf::from("/r/results/v0.3.6/static/bigcodebench_ref_R_CF_EF_FULL/bigcodebench_t_T_CF_EF_FULL_ITER=2.jsonl")
        );
        assert!(parse_configs("CF,bogus").is_err());
        assert_eq!(parse_configs("all").unwrap().len(), 9);
        let fi = Config::parse("cf_ef_full_if").unwrap();
        assert!(fi.instruction && fi.base() == Config::parse("CF_EF_FULL").unwrap());
        assert_eq!(fi.label(), "w/ CF EF (full TC) IF");
        assert_eq!(
            l.live_log("m", fi, 2),
            PathBuf::from("/r/results/v0.3.6/bigcodebench_m_CF_EF_FULL_IF_ITER=2.jsonl")
        );
        assert!(!Config::parse("CF_IF").unwrap().repeats_turn0());
        assert_eq!(Config::every().len(), 18);
        assert!(Config::parse("CF_IF_EF_FULL").is_none());
    }
}
