//! A ConvCodeWorld results folder (the original's layout, spec §2) seen as a conversation for
//! one task and one configuration: each turn is a session holding the code written at that
//! turn, the feedback that was fed in for it (about the previous turn's code) and the code's
//! evaluation, with a markdown transcript per turn.

use super::config::{eval_path, Config, Layout, DEFAULT_SIMULATOR, MAX_TURNS};
use super::evaluate::{load_eval, save_atomic};
use super::records::{read_log, sample_line, Appender};
use super::turn::TurnRecord;
use anyhow::{bail, Context, Result};
use pivot_exec::{EvalResult, EvalResults, Problem, Status};
use std::path::{Path, PathBuf};

/// Where turn-0 samples live inside a results folder.
const TURN0_DIR: &str = "bigcodebench/sanitized_calibrated_samples/instruct";
const TURN0_SUFFIX: &str = "-0-1-sanitized-calibrated.jsonl";

/// What to open.
#[derive(Clone, Debug, Default)]
pub struct OpenRequest {
    /// The original's working directory (holds `bigcodebench/` and `results/`).
    pub root: PathBuf,
    pub task: String,
    /// Default: the first configuration (table order) with logs for this task.
    pub config: Option<Config>,
    /// Default: the only model with turn-0 samples in the folder.
    pub model: Option<String>,
    /// Default: read from the `_by_{SIM}` part of the file names.
    pub simulator: Option<String>,
    /// Play as this model: its turn 0 for the task is seeded from `model`'s turn 0 (record
    /// and evaluation) when it has none, and the conversation is the player's.
    pub player: Option<String>,
}

/// One turn of the task.
#[derive(Clone, Debug)]
pub struct Turn {
    pub turn: usize,
    pub record: TurnRecord,
    /// The log holding the record.
    pub log: PathBuf,
    /// The code's evaluation, when the turn's eval file has it.
    pub eval: Option<EvalResult>,
}

/// One task of one configuration of one model, turn by turn.
#[derive(Clone, Debug)]
pub struct ConvRun {
    pub layout: Layout,
    pub model: String,
    pub config: Config,
    pub task: String,
    /// Turns with a record for the task, in turn order (gaps are missing turns).
    pub turns: Vec<Turn>,
    /// Configurations with logs for this model in the folder.
    pub configs: Vec<Config>,
    /// Things the reader should know (missing turns, unreadable eval files).
    pub notes: Vec<String>,
}

/// A per-turn log found in `results/v0.3.6`.
#[derive(Clone, Debug, PartialEq)]
struct FoundLog {
    config: Config,
    simulator: Option<String>,
    turn: usize,
}

/// Models with turn-0 samples in `root` (file names give `/` as `--`).
pub fn models(root: &Path) -> Vec<String> {
    let dir = root.join(TURN0_DIR);
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(TURN0_SUFFIX)?;
            let m = stem
                .strip_suffix("--bigcodebench-instruct--openai")
                .or_else(|| stem.strip_suffix("--bigcodebench-instruct--vllm"))?;
            Some(m.replace("--", "/"))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Parses a live log's file name for `model`: `bigcodebench_{M}_{OPT}[_by_{SIM}][_ITER=i].jsonl`.
fn parse_log_name(name: &str, model: &str) -> Option<FoundLog> {
    let prefix = format!("bigcodebench_{}_", model.replace('/', "_"));
    let rest = name.strip_prefix(&prefix)?.strip_suffix(".jsonl")?;
    let (rest, turn) = match rest.rsplit_once("_ITER=") {
        Some((r, n)) => (r, n.parse::<usize>().ok().filter(|&t| t > 1)?),
        None => (rest, 1),
    };
    let (code, simulator) = match rest.split_once("_by_") {
        Some((c, s)) => (c, Some(s.to_string())),
        None => (rest, None),
    };
    let config = Config::parse(code).filter(|c| c.code() == code)?;
    Some(FoundLog {
        config,
        simulator,
        turn,
    })
}

fn scan_logs(layout: &Layout, model: &str) -> Vec<FoundLog> {
    std::fs::read_dir(layout.live_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| parse_log_name(&e.file_name().to_string_lossy(), model))
        .collect()
}

fn eval_of(path: &Path, task: &str, notes: &mut Vec<String>) -> Option<EvalResult> {
    let eval = eval_path(path);
    if !eval.exists() {
        return None;
    }
    match load_eval(&eval) {
        Ok(mut m) => m.remove(task),
        Err(e) => {
            notes.push(format!("{e:#}"));
            None
        }
    }
}

fn pick_model(root: &Path, given: Option<&str>) -> Result<String> {
    if let Some(m) = given {
        return Ok(m.to_string());
    }
    let found = models(root);
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "{}: no turn-0 samples under {TURN0_DIR}/ (is this a ConvCodeWorld results folder?)",
            root.display()
        ),
        many => bail!(
            "{}: several models have results ({}); say which with \"model\"",
            root.display(),
            many.join(", ")
        ),
    }
}

impl ConvRun {
    pub fn open(req: &OpenRequest) -> Result<ConvRun> {
        if !req.root.is_dir() {
            bail!("results folder {} does not exist", req.root.display());
        }
        let source = pick_model(&req.root, req.model.as_deref())?;
        let model = match &req.player {
            Some(p) => {
                seed_player(&req.root, &source, p, &req.task)?;
                p.clone()
            }
            None => source.clone(),
        };
        let probe = Layout::new(&req.root, DEFAULT_SIMULATOR);
        let mut found = scan_logs(&probe, &model);
        // A new player takes its defaults (configuration, simulator) from the model it follows.
        let fresh = found.is_empty() && model != source;
        if fresh {
            found = scan_logs(&probe, &source);
        }
        let mut configs: Vec<Config> = Config::every()
            .into_iter()
            .filter(|c| found.iter().any(|f| f.config == *c))
            .collect();
        let config = match (req.config, configs.first()) {
            (Some(c), _) => c,
            (None, Some(c)) => *c,
            (None, None) => bail!(
                "{}: no per-turn logs of {model} under results/{}; give \"config\" to start one",
                req.root.display(),
                super::config::VERSION_DIR
            ),
        };
        if fresh {
            configs = vec![config];
        } else if !configs.contains(&config) {
            configs.push(config);
        }
        let simulator = match &req.simulator {
            Some(s) => s.clone(),
            None => found
                .iter()
                .filter(|f| f.config == config)
                .find_map(|f| f.simulator.clone())
                .unwrap_or_else(|| {
                    // No `_by_` part in an existing verbal run: the model was its own simulator.
                    if !fresh && config.verbal.is_some() && found.iter().any(|f| f.config == config)
                    {
                        model.clone()
                    } else {
                        DEFAULT_SIMULATOR.to_string()
                    }
                }),
        };
        let mut run = ConvRun {
            layout: Layout::new(&req.root, simulator),
            model,
            config,
            task: req.task.clone(),
            turns: Vec::new(),
            configs,
            notes: Vec::new(),
        };
        run.reload()?;
        if run.turns.is_empty() {
            bail!(
                "task {} has no record for {} in {} (turn 0: {}){}",
                run.task,
                run.model,
                req.root.display(),
                run.layout.turn0_samples_found(&run.model).0.display(),
                known_tasks_hint(&run.layout.turn0_samples_found(&run.model).0)
            );
        }
        Ok(run)
    }

    /// The log of turn `t` (0 = the turn-0 samples).
    pub fn log_path(&self, t: usize) -> PathBuf {
        if t == 0 {
            self.layout.turn0_samples_found(&self.model).0
        } else {
            self.layout.live_log(&self.model, self.config, t)
        }
    }

    /// Re-reads the task's turns from disk.
    pub fn reload(&mut self) -> Result<()> {
        let mut turns = Vec::new();
        let mut notes = Vec::new();
        for t in 0..=MAX_TURNS {
            let path = self.log_path(t);
            if !path.exists() {
                continue;
            }
            let log = read_log(&path)?;
            if let Some(n) = log.repaired {
                notes.push(n);
            }
            let Some(record) = log.records.into_iter().find(|r| r.task_id == self.task) else {
                continue;
            };
            let eval = eval_of(&path, &self.task, &mut notes);
            turns.push(Turn {
                turn: t,
                record,
                log: path,
                eval,
            });
        }
        let last = turns.last().map_or(0, |t| t.turn);
        for t in 0..last {
            if !turns.iter().any(|x| x.turn == t) {
                notes.push(format!(
                    "turn {t} of {} is missing ({} has no record for it)",
                    self.task,
                    self.log_path(t).display()
                ));
            }
        }
        self.turns = turns;
        self.notes = notes;
        Ok(())
    }

    pub fn session_count(&self) -> usize {
        self.turns.len()
    }

    /// The turn after the last recorded one, if the run has room for it.
    pub fn next_turn(&self) -> Option<usize> {
        let next = self.turns.last().map_or(0, |t| t.turn + 1);
        (1..=MAX_TURNS).contains(&next).then_some(next)
    }

    /// Markdown for session `k`: the feedback fed in at that turn, the code, the evaluation.
    pub fn transcript(&self, k: usize, problem: Option<&Problem>) -> Option<String> {
        let t = self.turns.get(k)?;
        let mut md = format!(
            "# {} · turn {} of {MAX_TURNS}\n\n{} ({}), model `{}`\n\n",
            self.task,
            t.turn,
            self.config.label(),
            self.config.code(),
            self.model
        );
        if t.turn == 0 {
            md.push_str("## Task\n\n");
            match problem
                .map(|p| p.instruct_prompt.trim())
                .filter(|s| !s.is_empty())
            {
                Some(p) => md.push_str(&format!("{p}\n\n")),
                None => md.push_str("Turn 0 is the model's first answer to the task.\n\n"),
            }
        } else {
            md.push_str(&feedback_section(
                t,
                k.checked_sub(1).and_then(|i| self.turns.get(i)),
            ));
        }
        md.push_str(&format!(
            "## Code (turn {})\n\n```python\n{}\n```\n\n## Evaluation\n\n",
            t.turn,
            t.record.solution.trim_end()
        ));
        md.push_str(&evaluation_text(t.eval.as_ref()));
        Some(md)
    }
}

fn feedback_section(t: &Turn, previous: Option<&Turn>) -> String {
    let r = &t.record;
    let about = previous.map_or("the previous".to_string(), |p| {
        format!("the turn-{}", p.turn)
    });
    let mut md = format!("## Feedback given at this turn (about {about} code)\n\n");
    let blocks = [
        ("Compilation feedback", &r.compilation_feedback, true),
        ("Execution feedback", &r.execution_feedback, true),
        ("Verbal feedback", &r.user_feedback, false),
        // `_IF` turns: about the code the turn's own feedback left.
        ("Instruction feedback", &r.instruction_feedback, true),
    ];
    let mut any = false;
    for (title, text, fenced) in blocks {
        let Some(text) = text else { continue };
        any = true;
        if fenced {
            md.push_str(&format!(
                "### {title}\n\n```text\n{}\n```\n\n",
                text.trim_end()
            ));
        } else {
            md.push_str(&format!("### {title}\n\n{}\n\n", text.trim_end()));
        }
    }
    if !any {
        let solved = previous
            .and_then(|p| p.eval.as_ref())
            .is_some_and(EvalResult::passed);
        md.push_str(if solved {
            "None: the previous code already passed, so it was carried forward unchanged.\n\n"
        } else {
            "None recorded at this turn.\n\n"
        });
    }
    md
}

fn evaluation_text(eval: Option<&EvalResult>) -> String {
    match eval {
        None => "Not evaluated (no evaluation results for this turn).\n".to_string(),
        Some(e) if e.status == Status::Pass => "**pass**: every test passed.\n".to_string(),
        Some(e) if e.details.is_empty() => format!("**{}**\n", e.status),
        Some(e) => {
            let names: Vec<&str> = e.details.iter().map(|(n, _)| n).collect();
            let mut md = format!("**{}**: failing: {}\n\n", e.status, names.join(", "));
            for (name, tb) in e.details.iter() {
                md.push_str(&format!(
                    "<details><summary>{name}</summary>\n\n```text\n{}\n```\n\n</details>\n\n",
                    tb.trim_end()
                ));
            }
            md
        }
    }
}

fn known_tasks_hint(turn0: &Path) -> String {
    let Ok(log) = read_log(turn0) else {
        return String::new();
    };
    let ids: Vec<&str> = log
        .records
        .iter()
        .map(|r| r.task_id.as_str())
        .take(5)
        .collect();
    if ids.is_empty() {
        String::new()
    } else {
        format!("; tasks there include {}", ids.join(", "))
    }
}

/// Gives `player` the task's turn 0 of `source` (record and evaluation) unless it has one.
fn seed_player(root: &Path, source: &str, player: &str, task: &str) -> Result<()> {
    if player == source {
        return Ok(());
    }
    let layout = Layout::new(root, DEFAULT_SIMULATOR);
    let dest = layout.turn0_samples(player);
    if read_log(&dest)?.records.iter().any(|r| r.task_id == task) {
        return Ok(());
    }
    let from = layout.turn0_samples_found(source).0;
    let log = read_log(&from)?;
    let Some(rec) = log.records.iter().find(|r| r.task_id == task) else {
        bail!(
            "task {task} has no turn-0 sample in {}{}",
            from.display(),
            known_tasks_hint(&from)
        );
    };
    Appender::open(&dest)?.append(&sample_line(&rec.task_id, &rec.solution))?;
    let mut notes = Vec::new();
    if let Some(e) = eval_of(&from, task, &mut notes) {
        put_eval(&eval_path(&dest), e, "")?;
    }
    Ok(())
}

/// Inserts (or replaces) one task's result in an eval-results file, keeping the others. An
/// unreadable file is an error, never overwritten.
/// `_sandbox` is kept for callers; the results tree no longer records it (BigCodeBench's shape).
pub fn put_eval(path: &Path, result: EvalResult, _sandbox: &str) -> Result<()> {
    let mut file = if path.exists() {
        EvalResults::load(path).with_context(|| {
            format!(
                "{} is unreadable; not overwriting it (fix or remove it)",
                path.display()
            )
        })?
    } else {
        EvalResults::default()
    };
    // The results tree holds BigCodeBench's shape only: no summary, its date format.
    file.eval.insert(result.task_id.clone(), vec![result]);
    file.summary = None;
    file.date = super::evaluate::bigcodebench_date();
    save_atomic(&file, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convcode::records::record_line;
    use pivot_exec::Details;

    fn rec(task: &str, solution: &str, t: usize, fe: Option<&str>) -> TurnRecord {
        TurnRecord {
            task_id: task.into(),
            solution: solution.into(),
            compilation_feedback: Some("No syntax errors".into()),
            execution_feedback: fe.map(str::to_string),
            user_feedback: None,
            log: None,
            iteration: t,
            instruction_feedback: None,
        }
    }

    fn eval(task: &str, pass: bool) -> EvalResult {
        EvalResult {
            task_id: task.into(),
            solution: String::new(),
            status: if pass { Status::Pass } else { Status::Fail },
            details: if pass {
                Details::default()
            } else {
                Details(vec![(
                    "test_case_1".into(),
                    "Traceback\nAssertionError".into(),
                )])
            },
            tamper: Vec::new(),
            tamper_check: None,
            output: String::new(),
        }
    }

    /// Model `org/m`, config CF_EF_FULL: H/1 fails at turns 0 and 1 and passes at turn 2 (turn
    /// 3 missing for H/1); H/2 passes at turn 0.
    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path(), DEFAULT_SIMULATOR);
        let cfg = Config::parse("CF_EF_FULL").unwrap();
        let t0 = l.turn0_samples("org/m");
        std::fs::create_dir_all(t0.parent().unwrap()).unwrap();
        std::fs::write(
            &t0,
            format!(
                "{}\n{}\n",
                sample_line("H/1", "c0"),
                sample_line("H/2", "ok")
            ),
        )
        .unwrap();
        put_eval(&eval_path(&t0), eval("H/1", false), "").unwrap();
        put_eval(&eval_path(&t0), eval("H/2", true), "").unwrap();
        for (t, code, pass) in [(1, "c1", false), (2, "c2", true), (4, "c2", true)] {
            let p = l.live_log("org/m", cfg, t);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let fe = (t == 1).then_some("TEST_CASE_1\nTraceback\n");
            std::fs::write(&p, record_line(&rec("H/1", code, t, fe)) + "\n").unwrap();
            put_eval(&eval_path(&p), eval("H/1", pass), "").unwrap();
        }
        dir
    }

    #[test]
    fn log_names_parse_back() {
        let l = Layout::new("/r", "gpt-4o");
        for c in Config::all() {
            for t in [1, 2, 10] {
                let p = l.live_log("org/m_x", c, t);
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                let f = parse_log_name(&name, "org/m_x").unwrap();
                assert_eq!((f.config, f.turn), (c, t), "{name}");
                assert_eq!(f.simulator.is_some(), c.verbal.is_some(), "{name}");
            }
        }
        assert!(parse_log_name("bigcodebench_m_CF_eval_results.json", "m").is_none());
        assert!(parse_log_name("bigcodebench_m_CF_EF_BOGUS.jsonl", "m").is_none());
        assert!(parse_log_name("bigcodebench_other_CF.jsonl", "m").is_none());
    }

    #[test]
    fn opens_a_task_as_turns_with_feedback_and_evaluation() {
        let dir = folder();
        let run = ConvRun::open(&OpenRequest {
            root: dir.path().into(),
            task: "H/1".into(),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(run.model, "org/m");
        assert_eq!(run.config.code(), "CF_EF_FULL");
        let turns: Vec<usize> = run.turns.iter().map(|t| t.turn).collect();
        assert_eq!(turns, [0, 1, 2, 4]);
        assert!(
            run.notes.iter().any(|n| n.contains("turn 3")),
            "{:?}",
            run.notes
        );
        assert_eq!(run.next_turn(), Some(5));
        let md1 = run.transcript(1, None).unwrap();
        assert!(md1.contains("about the turn-0 code"), "{md1}");
        assert!(md1.contains("TEST_CASE_1"), "{md1}");
        assert!(md1.contains("```python\nc1\n```"), "{md1}");
        assert!(md1.contains("**fail**: failing: test_case_1"), "{md1}");
        let md2 = run.transcript(2, None).unwrap();
        assert!(md2.contains("**pass**"), "{md2}");
        assert!(run.transcript(4, None).is_none());
        let e = ConvRun::open(&OpenRequest {
            root: dir.path().into(),
            task: "H/9".into(),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("H/9") && e.contains("H/1, H/2"), "{e}");
    }

    #[test]
    fn a_player_starts_from_the_models_turn_zero() {
        let dir = folder();
        let run = ConvRun::open(&OpenRequest {
            root: dir.path().into(),
            task: "H/1".into(),
            player: Some("me".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(run.model, "me");
        assert_eq!(run.turns.len(), 1);
        assert_eq!(run.turns[0].record.solution, "c0");
        assert_eq!(
            run.turns[0].eval.as_ref().map(|e| e.status),
            Some(Status::Fail)
        );
        assert_eq!(run.next_turn(), Some(1));
        assert_eq!(models(dir.path()), ["me", "org/m"]);
        // Seeding twice does not duplicate the record.
        let again = ConvRun::open(&OpenRequest {
            root: dir.path().into(),
            task: "H/1".into(),
            model: Some("org/m".into()),
            player: Some("me".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(again.turns.len(), 1);
        let log = read_log(&run.log_path(0)).unwrap();
        assert_eq!(log.records.len(), 1);
    }

    #[test]
    fn unreadable_eval_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x_eval_results.json");
        std::fs::write(&p, "{broken").unwrap();
        let e = put_eval(&p, eval("H/1", true), "").unwrap_err();
        assert!(format!("{e:#}").contains("not overwriting"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{broken");
    }
}

#[cfg(test)]
mod fixture_tests {
    use super::*;
    use crate::convcode::play::rescore;

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/lsp/convcode")
    }

    #[test]
    fn the_editor_fixture_opens_and_scores_as_derived_by_hand() {
        let run = ConvRun::open(&OpenRequest {
            root: fixture(),
            task: "HumanEval/2".into(),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(run.model, "fixture/coder");
        assert_eq!(run.config.code(), "CF_EF_FULL_SEF");
        assert_eq!(run.layout.simulator, "gpt-4o");
        assert_eq!(run.session_count(), 11);
        assert!(run.notes.is_empty(), "{:?}", run.notes);
        let passes: Vec<bool> = run
            .turns
            .iter()
            .map(|t| t.eval.as_ref().unwrap().passed())
            .collect();
        assert_eq!(passes[..3], [false, false, true]);
        let md = run.transcript(1, None).unwrap();
        assert!(
            md.contains("### Verbal feedback\n\nThe function returns the integer part"),
            "{md}"
        );
        assert!(md.contains("TEST_CASE_1\nTraceback"), "{md}");
        let md = run.transcript(3, None).unwrap();
        assert!(md.contains("carried forward"), "{md}");
        let scores = rescore(&run.layout, &run.model, Path::new("python3")).unwrap();
        let col = scores
            .columns
            .iter()
            .find(|c| c.config == "CF_EF_FULL_SEF")
            .unwrap();
        assert!(col.complete);
        assert_eq!((col.mrr, col.recall), (Some(44.4), Some(66.7)));
        assert_eq!(col.pass_at_1[1..3], [Some(33.3), Some(66.7)]);
    }
}
