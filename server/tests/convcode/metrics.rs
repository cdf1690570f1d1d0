//! Metrics on constructed result folders: live and static (ConvCodeBench) MRR, Recall and
//! Pass@1 derived by hand, missing and broken files named, and the tables printed as the
//! original prints them.

use super::{column, fixtures, write_eval};
use crate::support::cli::{output_retrying, EXE};
use pivot_bench::convcode::config::Layout;
use pivot_bench::convcode::metrics::{score, score_with, ScoreOptions, ScoreRequest};
use pivot_bench::convcode::table;
use std::path::{Path, PathBuf};

const T0_DIR: &str = "bigcodebench/sanitized_calibrated_samples/instruct";

/// Per-task statuses of turn `t` from "first turn it passes" style rules.
fn statuses(rules: &[&dyn Fn(usize) -> bool], t: usize) -> Vec<bool> {
    rules.iter().map(|r| r(t)).collect()
}

fn live_file(root: &Path, stem: &str, t: usize) -> PathBuf {
    let iter = if t > 1 {
        format!("_ITER={t}")
    } else {
        String::new()
    };
    root.join(format!(
        "results/v0.3.6/bigcodebench_org_m_{stem}{iter}_eval_results.json"
    ))
}

/// Live folder: four tasks.
///   X/0 solved at turn 0; X/1 first solved at turn 3 (CF_EF_FULL); X/2, X/3 never.
///   CF_SEF: X/1 passes only at turn 1 (a regression after), X/2 only at turn 10.
///   CF_EF_UNIT lacks its turn-5 file; CF_SNF has only turns 1-2; CF has nothing.
fn live_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_eval(
        &root
            .join(T0_DIR)
            .join("org--m--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json"),
        &[true, false, false, false],
    );
    let full: [&dyn Fn(usize) -> bool; 4] = [&|_| true, &|t| t >= 3, &|_| false, &|_| false];
    let sef: [&dyn Fn(usize) -> bool; 4] = [&|_| true, &|t| t == 1, &|t| t == 10, &|_| false];
    for t in 1..=10 {
        write_eval(&live_file(root, "CF_EF_FULL", t), &statuses(&full, t));
        write_eval(&live_file(root, "CF_SEF_by_gpt-4o", t), &statuses(&sef, t));
        if t != 5 {
            write_eval(&live_file(root, "CF_EF_UNIT", t), &statuses(&full, t));
        }
        if t <= 2 {
            write_eval(&live_file(root, "CF_SNF_by_gpt-4o", t), &statuses(&full, t));
        }
    }
    dir
}

#[test]
fn live_metrics_on_a_constructed_folder() {
    let dir = live_folder();
    let req = ScoreRequest {
        layout: Layout::new(dir.path(), "gpt-4o"),
        model: "org/m".into(),
        reference: None,
    };
    let s = score(&req, None).unwrap();
    assert_eq!(s.turns, (0..=10).collect::<Vec<_>>());

    // CF_EF_FULL: 1/4 solved until turn 2, 2/4 from turn 3 (turn 0 OR-ed in).
    let c = column(&s, "CF_EF_FULL");
    let expect: Vec<Option<f64>> = (0..=10)
        .map(|t| Some(if t >= 3 { 50.0 } else { 25.0 }))
        .collect();
    assert_eq!(c.pass_at_1, expect);
    // MRR = (1 + 1/4 + 0 + 0) / 4 = 0.3125 -> 31.25 -> half-to-even -> 31.2.
    assert_eq!(c.mrr, Some(31.2));
    assert_eq!(c.recall, Some(50.0));

    // CF_SEF: X/1 passes at turn 1 only, X/2 at turn 10 only.
    let c = column(&s, "CF_SEF");
    let expect: Vec<Option<f64>> = (0..=10)
        .map(|t| Some(if t == 1 || t == 10 { 50.0 } else { 25.0 }))
        .collect();
    assert_eq!(c.pass_at_1, expect);
    // MRR = (1 + 1/2 + 1/11 + 0) / 4 = 0.39772... -> 39.8; Recall = 3/4.
    assert_eq!(c.mrr, Some(39.8));
    assert_eq!(c.recall, Some(75.0));

    // A missing turn drops the configuration entirely.
    let c = column(&s, "CF_EF_UNIT");
    assert!(c.pass_at_1.iter().all(Option::is_none));
    assert_eq!(c.mrr, None);
    // w/ CF (absent) and w/ CF SNF (incomplete) repeat turn 0 everywhere.
    for code in ["CF", "CF_SNF"] {
        let c = column(&s, code);
        assert!(c.pass_at_1.iter().all(|v| *v == Some(25.0)), "{code}");
        assert_eq!((c.mrr, c.recall), (Some(25.0), Some(25.0)), "{code}");
    }

    let text = table::render_text(&s);
    let expected_table2 = "\
+---------+-------+--------------------+-----------+-----------+
| Metrics | w/ CF | w/ CF EF (full TC) | w/ CF SNF | w/ CF SEF |
+---------+-------+--------------------+-----------+-----------+
|   MRR   |  25.0 |        31.2        |    25.0   |    39.8   |
|  Recall |  25.0 |        50.0        |    25.0   |    75.0   |
+---------+-------+--------------------+-----------+-----------+
Table 2. MRR and Recall results of org/m on ConvCodeWorld.
";
    assert!(text.contains(expected_table2), "{text}");
    // Table 1: all nine labels; the dropped configuration is blank, turn 0 included.
    let header = "| Turn | w/ CF | w/ CF EF (partial TC) | w/ CF EF (full TC) | w/ CF SNF | w/ CF EF (partial TC) SNF | w/ CF EF (full TC) SNF | w/ CF SEF | w/ CF EF (partial TC) SEF | w/ CF EF (full TC) SEF |";
    assert!(text.contains(header), "{text}");
    let row3 = "|  3   |  25.0 |                       |        50.0        |    25.0   |                           |                        |    25.0   |                           |                        |";
    assert!(text.contains(row3), "{text}");
    assert!(text.contains(
        "Table 1. Pass@1 results of org/m on ConvCodeWorld for each turn.\n - CF: Compilation Feedback\n"
    ));
}

#[test]
fn static_metrics_with_the_reference_solving_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let t0 = |m: &str| {
        root.join(T0_DIR).join(format!(
            "{m}--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json"
        ))
    };
    // Reference R: solves X/1 at turn 0, X/2 from its live turn 2 on; its turn-10 file is absent.
    write_eval(&t0("ref--R"), &[false, true, false, false]);
    // Target T: its own turn 0 solves X/3; in the static replay it solves X/0 at turn 4 only.
    write_eval(&t0("t--T"), &[false, false, false, true]);
    let sdir = root.join("results/v0.3.6/static/bigcodebench_ref_R_CF_SEF_by_gpt-4o");
    for t in 1..=10 {
        let iter = if t > 1 {
            format!("_ITER={t}")
        } else {
            String::new()
        };
        if t <= 9 {
            write_eval(
                &root.join(format!(
                    "results/v0.3.6/bigcodebench_ref_R_CF_SEF_by_gpt-4o{iter}_eval_results.json"
                )),
                &[false, false, t >= 2, false],
            );
        }
        write_eval(
            &sdir.join(format!(
                "bigcodebench_t_T_CF_SEF_by_gpt-4o{iter}_eval_results.json"
            )),
            &[t == 4, false, false, false],
        );
    }
    // Another configuration whose reference lacks turn 5: dropped.
    let sdir2 = root.join("results/v0.3.6/static/bigcodebench_ref_R_CF_EF_FULL_SEF_by_gpt-4o");
    for t in 1..=10 {
        let iter = if t > 1 {
            format!("_ITER={t}")
        } else {
            String::new()
        };
        if t != 5 {
            write_eval(
                &root.join(format!("results/v0.3.6/bigcodebench_ref_R_CF_EF_FULL_SEF_by_gpt-4o{iter}_eval_results.json")),
                &[false; 4],
            );
        }
        write_eval(
            &sdir2.join(format!(
                "bigcodebench_t_T_CF_EF_FULL_SEF_by_gpt-4o{iter}_eval_results.json"
            )),
            &[true; 4],
        );
    }

    let req = ScoreRequest {
        layout: Layout::new(root, "gpt-4o"),
        model: "t/T".into(),
        reference: Some("ref/R".into()),
    };
    let s = score(&req, None).unwrap();
    assert_eq!(s.turns, (1..=10).collect::<Vec<_>>());
    let codes: Vec<&str> = s.columns.iter().map(|c| c.config.as_str()).collect();
    assert_eq!(
        codes,
        [
            "CF_EF_UNIT_SNF",
            "CF_EF_FULL_SNF",
            "CF_SEF",
            "CF_EF_UNIT_SEF",
            "CF_EF_FULL_SEF"
        ]
    );
    let c = column(&s, "CF_SEF");
    // Pass@1(t) = mean[s_t or r_0]: X/1 always (r_0), X/0 at turn 4.
    let expect: Vec<Option<f64>> = (1..=10)
        .map(|t| Some(if t == 4 { 50.0 } else { 25.0 }))
        .collect();
    assert_eq!(c.pass_at_1, expect);
    // MRR: X/0 -> T at turn 4 = 1/5; X/1 -> r_0 = 1; X/2 -> R's turn 2 = 1/3; X/3 -> T's turn 0 = 1.
    // (0.2 + 1 + 1/3 + 1) / 4 = 0.6333.. -> 63.3; every task found -> Recall 100.0.
    assert_eq!(c.mrr, Some(63.3));
    assert_eq!(c.recall, Some(100.0));
    // R's missing turn 10 is not needed, but it is reported.
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("CF_SEF") && n.contains("ITER=10") && n.contains("not needed")),
        "{:?}",
        s.notes
    );
    // R's missing turn 5 drops the other configuration.
    assert_eq!(column(&s, "CF_EF_FULL_SEF").mrr, None);

    let text = table::render_text(&s);
    assert!(text.contains(
        "Table 1. Pass@1 results of t/T on ConvCodeBench for each turn (ref. model: ref/R)."
    ));
    assert!(text
        .contains("Table 2. MRR and Recall results of t/T on ConvCodeBench (ref. model: ref/R)."));
    assert!(text.contains("| Metrics | w/ CF SEF |\n"), "{text}");
    assert!(text.contains("|   MRR   |    63.3   |\n"), "{text}");

    // Excluding the tasks T solves at its own turn 0 (X/3) from MRR and Recall, as the
    // original's --exclude_init_solved does; Pass@1 keeps every task (unchanged). By hand over
    // X/0, X/1, X/2: MRR (1/5 + 1 + 1/3) / 3 = 0.5111 -> 51.1; Recall 100.0.
    let exclude = ScoreOptions {
        exclude_init_solved: true,
    };
    let s = score_with(&req, None, exclude).unwrap();
    assert_eq!(s.excluded_tasks, ["X/3"]);
    let c = column(&s, "CF_SEF");
    assert_eq!(c.pass_at_1, expect, "Table 1 does not change");
    assert_eq!((c.mrr, c.recall), (Some(51.1), Some(100.0)));
    assert!(s.notes.iter().any(|n| n.contains("1 task(s) solved")));

    // The same through the command line.
    let out = output_retrying(
        std::process::Command::new(EXE)
            .args(["score", "convcode", "--results"])
            .arg(root)
            .args(["--model", "t/T", "--static", "--ref-model", "ref/R"])
            .args(["--exclude-init-solved", "--format", "json"]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["columns"][2]["config"], "CF_SEF");
    assert_eq!(v["columns"][2]["mrr"], 51.1);
    assert_eq!(v["columns"][2]["pass_at_1"][3], 50.0);
    assert_eq!(v["excluded_tasks"], serde_json::json!(["X/3"]));
}

#[test]
fn metrics_name_a_missing_turn0_file_and_a_broken_turn_file() {
    let dir = tempfile::tempdir().unwrap();
    let req = ScoreRequest {
        layout: Layout::new(dir.path(), "gpt-4o"),
        model: "org/m".into(),
        reference: None,
    };
    let err = score(&req, None).unwrap_err().to_string();
    assert!(
        err.contains("no turn-0 evaluation of model `org/m`")
            && err.contains("org--m--bigcodebench")
            && err.contains("`pivot-lsp convcode run --model org/m ...` makes it"),
        "{err}"
    );

    let dir = live_folder();
    std::fs::write(
        live_file(dir.path(), "CF_EF_FULL", 7),
        "{\"eval\": {\"X/0\": [{\"stat",
    )
    .unwrap();
    let req = ScoreRequest {
        layout: Layout::new(dir.path(), "gpt-4o"),
        model: "org/m".into(),
        reference: None,
    };
    let s = score(&req, None).unwrap();
    assert_eq!(column(&s, "CF_EF_FULL").mrr, None);
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("ITER=7") && n.contains("not valid JSON")),
        "{:?}",
        s.notes
    );
}

/// A gpt-4o-mini results folder in the original's layout (its turn-0 file is `openai`: the
/// original's `AZURE_OPENAI_MODEL_LIST`), statuses by a rule; configuration 8 is absent and 7
/// stops at turn 5. `turn0` names the backend in the turn-0 file name.
fn mini_folder(turn0: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for src in turn0 {
        let p = dir.path().join(format!(
            "{T0_DIR}/gpt-4o-mini--bigcodebench-instruct--{src}-0-1-sanitized-calibrated_eval_results.json"
        ));
        write_eval(&p, &(0..6).map(|k| k == 0).collect::<Vec<_>>());
    }
    let rule = |c: usize, t: usize, k: usize| k == 0 || (k * 2 <= t + c % 4 && k < 5);
    std::fs::create_dir_all(dir.path().join("results/v0.3.6")).unwrap();
    for (c, config) in pivot_bench::convcode::Config::all().iter().enumerate() {
        if c == 8 {
            continue;
        }
        let by = if config.verbal.is_some() {
            "_by_gpt-4o"
        } else {
            ""
        };
        for t in 1..=(if c == 7 { 5 } else { 10 }) {
            let iter = if t > 1 {
                format!("_ITER={t}")
            } else {
                String::new()
            };
            let name = format!(
                "results/v0.3.6/bigcodebench_gpt-4o-mini_{}{by}{iter}_eval_results.json",
                config.code()
            );
            let passes: Vec<bool> = (0..6).map(|k| rule(c, t, k)).collect();
            write_eval(&dir.path().join(name), &passes);
        }
    }
    dir
}

/// The tables and legend of a gpt-4o-mini folder in the original's layout, byte for byte as
/// the original's print_results.py printed them for the same folder
/// (fixtures/convcode/print_results_gpt-4o-mini.txt, `--option live`).
#[test]
fn gpt_4o_mini_tree_prints_as_the_original() {
    let want = std::fs::read_to_string(fixtures().join("print_results_gpt-4o-mini.txt")).unwrap();
    assert!(
        want.contains("\n - partial|full TC: test cases with partial|full Test Coverage \n"),
        "the legend line of the original, with its trailing space"
    );
    let dir = mini_folder(&["openai"]);
    let out = output_retrying(
        std::process::Command::new(EXE)
            .args(["score", "convcode", "--results"])
            .arg(dir.path())
            // The original's layout (the default table leaves out what was not run).
            .args(["--model", "gpt-4o-mini", "--format", "original"]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    // Our notes (what the tables leave unsaid) follow the tables; the tables themselves are
    // the original's, byte for byte.
    let (tables, notes) = match got.find("\nnote: ") {
        Some(i) => got.split_at(i + 1),
        None => (got.as_str(), ""),
    };
    assert!(notes.lines().all(|l| l.starts_with("note: ")), "{notes}");
    assert_eq!(tables.trim_end(), want.trim_end());

    // Results written under a list without gpt-4o-mini (`vllm` turn 0) are read too; when
    // both files exist the original's (`openai`) is read and the note says so.
    let vllm = mini_folder(&["vllm"]);
    let s = score(
        &ScoreRequest {
            layout: Layout::new(vllm.path(), "gpt-4o"),
            model: "gpt-4o-mini".into(),
            reference: None,
        },
        None,
    )
    .unwrap();
    assert_eq!(column(&s, "CF").pass_at_1[0], Some(16.7));
    assert!(s.notes.iter().all(|n| !n.contains("both")), "{:?}", s.notes);
    let both = mini_folder(&["openai", "vllm"]);
    let s = score(
        &ScoreRequest {
            layout: Layout::new(both.path(), "gpt-4o"),
            model: "gpt-4o-mini".into(),
            reference: None,
        },
        None,
    )
    .unwrap();
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("both `openai` and `vllm`") && n.contains("openai-0-1")),
        "{:?}",
        s.notes
    );
}

#[test]
fn score_cli_prints_json_and_markdown() {
    let dir = live_folder();
    let out = output_retrying(
        std::process::Command::new(EXE)
            .args(["convcode", "score", "--results"])
            .arg(dir.path())
            .args(["--model", "org/m", "--format", "json"]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mode"], "live");
    assert_eq!(v["columns"][2]["mrr"], 31.2);
    let out = output_retrying(
        std::process::Command::new(EXE)
            .args(["convcode", "score", "--results"])
            .arg(dir.path())
            .args(["--model", "org/m", "--format", "markdown"]),
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("| MRR | 25.0 | 31.2 | 25.0 | 39.8 |"), "{md}");
    let out = output_retrying(std::process::Command::new(EXE).args([
        "convcode",
        "score",
        "--results",
        "/nonexistent/folder",
        "--model",
        "m",
    ]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/folder"));
}
