//! The report's figures with models side by side (issue 47): two models of each benchmark,
//! MemoryCode's scores by dialogue length with bootstrap bands and counts, ConvCodeWorld /
//! ConvCodeBench Pass@1 per configuration (turn 0 included), MRR / Recall tables with models
//! as rows, the ConvCodeBench - ConvCodeWorld gap, and every figure's exports. The CSVs are
//! snapshot-tested; the page is rendered in Debian's Chromium through playwright-core.

use crate::support;

use pivot_bench::convcode::config::{eval_path, Layout};
use pivot_bench::convcode::Config;
use pivot_test_support::host::{find_program, shared};
use pivot_test_support::test_skip::skip;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cli::{binary_in, ok, repo, target_dir, EXE};

const REF: &str = "org/ref";
const MODELS: [&str; 2] = ["org/model-a", "org/model-b"];
const TASKS: usize = 6;

fn write_eval(path: &Path, passes: impl Fn(usize) -> bool) {
    let mut eval = serde_json::Map::new();
    for k in 0..TASKS {
        let id = format!("X/{k}");
        eval.insert(
            id.clone(),
            json!([{"task_id": id, "solution": "def task_func():\n    return 1\n",
                    "status": if passes(k) { "pass" } else { "fail" }, "details": {}}]),
        );
    }
    support::files::write(
        path,
        &json!({"date": "2026-12-02 06:00", "eval": eval}).to_string(),
    );
}

/// A results folder in the original's layout, written by rule: a reference model and two
/// models, every configuration live (turns 0-10), and both models replayed statically on
/// the reference's conversations (ConvCodeBench's configurations). Task k passes from a turn
/// that grows with k and differs by model and configuration, so the curves differ.
fn convcode_tree(root: &Path) {
    let layout = Layout::new(root, "gpt-4o");
    let first_pass = |m: usize, c: usize, k: usize, bonus: usize| -> usize {
        // Turn at which task k first passes (11: never).
        if k < 1 + m % 2 {
            0
        } else {
            (k * (2 + m) + c % 3).saturating_sub(bonus).min(11)
        }
    };
    for (m, model) in std::iter::once(REF).chain(MODELS).enumerate() {
        write_eval(&eval_path(&layout.turn0_samples(model)), |k| {
            first_pass(m, 0, k, 0) == 0
        });
        for (c, config) in Config::all().into_iter().enumerate() {
            for t in 1..=10 {
                write_eval(&eval_path(&layout.live_log(model, config, t)), |k| {
                    first_pass(m, c, k, 0) <= t
                });
            }
        }
    }
    for (m, model) in MODELS.iter().enumerate() {
        for (c, config) in Config::static_reported().into_iter().enumerate() {
            for t in 1..=10 {
                write_eval(&eval_path(&layout.static_log(REF, model, config, t)), |k| {
                    first_pass(m + 1, c, k, 2) <= t
                });
            }
        }
    }
}

/// Score files of the rule-made ConvCode folder: both models live, then both replayed.
fn convcode_scores(dir: &Path) -> Vec<PathBuf> {
    let root = dir.join("convcode");
    convcode_tree(&root);
    let mut paths = Vec::new();
    for stat in [false, true] {
        for m in MODELS {
            let mut c = Command::new(EXE);
            c.args(["score", "convcode", "--results"])
                .arg(&root)
                .args(["--model", m, "--format", "json"]);
            if stat {
                c.args(["--static", "--ref-model", REF]);
            }
            let out = ok(c.output().unwrap(), "score convcode").stdout;
            let p = dir.join(format!(
                "{}-{}.json",
                if stat { "ccb" } else { "ccw" },
                m.replace('/', "_")
            ));
            std::fs::write(&p, out).unwrap();
            paths.push(p);
        }
    }
    paths
}

/// `score memorycode --format json` of an outputs folder, written to `dir/<name>.json`.
fn memorycode_score(dir: &Path, dataset: &Path, outputs: &Path, name: &str) -> PathBuf {
    let out = Command::new(EXE)
        .args(["score", "memorycode", "--format", "json", "--dataset"])
        .arg(dataset)
        .arg("--outputs")
        .arg(outputs)
        .output()
        .unwrap();
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, ok(out, "score memorycode").stdout).unwrap();
    p
}

fn build(dir: &Path, inputs: &[PathBuf]) -> (PathBuf, String) {
    let out = dir.join("report.html");
    let mut c = binary_in(&repo());
    c.arg("report").args(inputs).arg("--output").arg(&out);
    c.env("SOURCE_DATE_EPOCH", "1764655200");
    ok(c.output().unwrap(), "report");
    let html = std::fs::read_to_string(&out).unwrap();
    (out, html)
}

/// HTML attribute text back to its characters (the page escapes `& < > " '`).
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Every figure's (name, CSV), in page order.
fn csvs(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in html.split("<figure id=\"fig-").skip(1) {
        let attr = |name: &str| {
            let start = part.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            let end = start + part[start..].find('"').unwrap();
            unescape(&part[start..end])
        };
        out.push((attr("data-name"), attr("data-csv")));
    }
    out
}

fn fixture_memorycode(dir: &Path) -> Vec<PathBuf> {
    let fx = repo().join("fixtures/memorycode");
    ["model-a", "model-b"]
        .iter()
        .map(|m| memorycode_score(dir, &fx.join("dataset"), &fx.join("modes").join(m), m))
        .collect()
}

/// The data behind every figure, as the CSV buttons save it, for the bundled MemoryCode
/// fixtures' two models (instructions chain and RAG included) and the rule-made ConvCode
/// folder's two models: a snapshot (`cargo insta review` after a deliberate change).
#[test]
fn every_figure_s_csv_is_as_snapshotted() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = fixture_memorycode(dir.path());
    inputs.extend(convcode_scores(dir.path()));
    let (_, html) = build(dir.path(), &inputs);
    let figures = csvs(&html);
    let names: Vec<&str> = figures.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "memorycode-history-by-length",
        "memorycode-instructions-chain-by-length",
        "memorycode-rag-by-length",
        "convcodeworld-pass-at-1-cf_ef_full_sef",
        "convcodebench-pass-at-1-cf_ef_full_sef",
        "convcodeworld-mrr",
        "convcodebench-recall",
        "convcodebench-minus-convcodeworld",
    ] {
        assert!(names.contains(&want), "{want} not among {names:?}");
    }
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "figure names repeat: {names:?}");
    let mut text = String::new();
    for (name, csv) in &figures {
        assert!(csv.lines().count() >= 2, "{name}: no data rows");
        text.push_str(&format!("== {name}\n{csv}\n"));
    }
    // File names differ per run (temporary folders); the model labels do not.
    insta::assert_snapshot!("report_figure_csvs", text);

    // ConvCodeBench's turn 0 is the reference model's own turn-0 Pass@1, as its live score
    // has it in Table 1's first row.
    let out = Command::new(EXE)
        .args(["score", "convcode", "--results"])
        .arg(dir.path().join("convcode"))
        .args(["--model", REF, "--format", "json"])
        .output()
        .unwrap();
    let live: Value = serde_json::from_slice(&ok(out, "score convcode").stdout).unwrap();
    let ccb: Value = serde_json::from_slice(&std::fs::read(&inputs[4]).unwrap()).unwrap();
    assert_eq!(ccb["benchmark"], "convcodebench");
    assert_eq!(
        ccb["turn0"]["reference_pass_at_1"],
        live["columns"][0]["pass_at_1"][0]
    );
    let want = format!(
        "org/model-a,CF_EF_FULL_SEF,w/ CF EF (full TC) SEF,0,{}",
        live["columns"][0]["pass_at_1"][0]
    );
    let (_, pass) = (figures.iter())
        .find(|(n, _)| n == "convcodebench-pass-at-1-cf_ef_full_sef")
        .unwrap();
    assert!(pass.contains(&want), "{want} not in {pass}");
}

/// Per dialogue length: how many dialogues have a score in `metric` (the History row's one
/// value, else any session's), counted from the score file itself.
fn dialogues_per_length(score: &Value, metric: &str) -> std::collections::BTreeMap<usize, usize> {
    let mut n = std::collections::BTreeMap::new();
    for row in score["dialogues"].as_object().unwrap().values() {
        let r = row[metric].as_array().unwrap();
        if r.iter().any(|v| v.is_f64()) {
            *n.entry(r.len()).or_insert(0) += 1;
        }
    }
    n
}

/// playwright-core from npm (the version editors/vscode pins), installed once under the
/// target folder; `None` (with the reason) when npm cannot install it.
fn playwright_core() -> Result<PathBuf, String> {
    let prefix = target_dir().join("report-node");
    let pkg = prefix.join("node_modules/playwright-core");
    if pkg.join("package.json").exists() {
        return Ok(pkg);
    }
    let npm = find_program("npm", &[]).ok_or("no npm on PATH")?;
    let o = Command::new(npm)
        .args([
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&prefix)
        .arg("playwright-core@1.65.1")
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() || !pkg.join("package.json").exists() {
        return Err(format!(
            "npm install playwright-core failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    Ok(pkg)
}

fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

fn cells(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// The page for two real MemoryCode models (../shared) and two ConvCode models, opened in
/// Chromium: no request leaves the page; each MemoryCode score has one chart with both
/// models' lines and bands and the count of dialogues per point, the counts those of the
/// score files; the ConvCode charts start at turn 0 for both benchmarks; the MRR / Recall
/// tables have a row per model; the gap is ConvCodeBench minus ConvCodeWorld; every export
/// button saves its file (CSV = the figure's data, SVG standalone, PNG at twice the size).
/// Screenshots and downloads are kept under target/report-screenshots.
#[test]
fn chromium_shows_two_models_of_each_benchmark_with_counts_and_bands() {
    let Some(mc) = shared("memorycode", "the report of two real MemoryCode models") else {
        return;
    };
    let Some(chromium) = find_program("chromium", &["/usr/bin"]) else {
        skip("no chromium (apt-get install chromium): the report is not rendered");
        return;
    };
    let Some(node) = find_program("node", &[]) else {
        skip("no node on PATH: the report is not rendered");
        return;
    };
    let pw = match playwright_core() {
        Ok(p) => p,
        Err(why) => {
            skip(&format!("{why}: the report is not rendered"));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let models = ["gpt-4o", "command-r-plus"];
    let mut inputs: Vec<PathBuf> = std::thread::scope(|s| {
        let jobs: Vec<_> = models
            .iter()
            .map(|m| {
                let (d, mc) = (dir.path(), &mc);
                s.spawn(move || {
                    memorycode_score(d, &mc.join("dataset"), &mc.join("outputs").join(m), m)
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    let scores: Vec<Value> = inputs
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    inputs.extend(convcode_scores(dir.path()));
    let (page, _) = build(dir.path(), &inputs);

    let shots = target_dir().join("report-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    let o = Command::new(node)
        .arg(repo().join("tests/report/render_report.js"))
        .arg(&pw)
        .arg(&chromium)
        .arg(&page)
        .arg(&shots)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "render_report.js: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["requests"], json!([]), "the page asked the network");
    assert_eq!(r["errors"], json!([]), "script errors");
    let figures = r["figures"].as_array().unwrap();
    let fig = |name: &str| {
        figures
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name}"))
    };
    // The palette's first two colours: the two models' series.
    let colours = ["#332288", "#CC6677"];

    for (metric, row) in [
        ("history", "history"),
        ("session", "session"),
        ("instruction", "instruction"),
    ] {
        let f = fig(&format!("memorycode-{metric}-by-length"));
        let svg = &f["svg"];
        assert_eq!(svg["shown"], true);
        let texts = cells(&svg["texts"]);
        for m in models {
            assert!(texts.iter().any(|t| t == m), "{metric}: legend without {m}");
        }
        for c in colours {
            let lines = svg["lines"].as_array().unwrap();
            assert!(
                lines.iter().any(|l| l == c),
                "{metric}: no line of colour {c}"
            );
            // Bands are the translucent polygons (the triangle markers are opaque ones).
            let translucent = |b: &&Value| {
                b["opacity"]
                    .as_str()
                    .is_some_and(|o| o.parse::<f64>().unwrap() < 0.5)
            };
            let bands = (svg["bands"].as_array().unwrap().iter())
                .filter(|b| b["fill"] == c)
                .filter(translucent)
                .count();
            assert!(bands >= 1, "{metric}: no band of colour {c}");
        }
        assert!(f["caption"].as_str().unwrap().contains("bootstrap"));
        // The table (as a screen reader reads it): per length, each model's mean, interval
        // and count; the counts are the score files' own, and the chart writes them.
        let header = cells(&f["header"]);
        let rows = f["rows"].as_array().unwrap();
        for (i, m) in models.iter().enumerate() {
            let col = header.iter().position(|h| *h == format!("{m}: n")).unwrap();
            let want = dialogues_per_length(&scores[i], row);
            assert_eq!(rows.len(), want.len(), "{metric}: one row per length");
            for r in rows {
                let r = cells(r);
                let len: usize = r[0].parse().unwrap();
                assert_eq!(
                    r[col].parse::<usize>().unwrap(),
                    want[&len],
                    "{metric} {m} {len}"
                );
                let mean: f64 = r[col - 2].parse().unwrap();
                let ci = r[col - 1].trim_matches(['[', ']']);
                let (lo, hi) = ci.split_once(", ").unwrap();
                let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
                assert!(
                    lo <= mean && mean <= hi,
                    "{metric} {m} {len}: {lo} {mean} {hi}"
                );
                assert!(
                    hi - lo < 0.6,
                    "{metric} {m} {len}: band [{lo}, {hi}] too wide"
                );
            }
            // 30 dialogues per length in MemoryCode: the chart's labels say so.
            assert!(
                texts.iter().any(|t| t.starts_with("n=30")),
                "{metric}: no count label"
            );
        }
        // History falls with the length of the dialogue, for both models.
        if metric == "history" {
            for (i, m) in models.iter().enumerate() {
                let col = 1 + 3 * i;
                let first: f64 = cells(&rows[0])[col].parse().unwrap();
                let last: f64 = cells(rows.last().unwrap())[col].parse().unwrap();
                assert!(last < first - 0.3, "{m}: history {first} -> {last}");
            }
        }
    }
    let labels: Vec<String> = MODELS.iter().map(|m| m.to_string()).collect();
    for bench in ["convcodeworld", "convcodebench"] {
        let f = fig(&format!("{bench}-pass-at-1-cf_ef_full_sef"));
        let header = cells(&f["header"]);
        assert_eq!(header[1..], labels[..], "{bench}: one column per model");
        let rows = f["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 11, "{bench}: turns 0-10");
        let turn0 = cells(&rows[0]);
        assert_eq!(turn0[0], "0");
        assert!(
            turn0[1..].iter().all(|c| !c.is_empty()),
            "{bench}: turn 0 {turn0:?}"
        );
        for m in MODELS {
            assert!(cells(&f["svg"]["texts"]).iter().any(|t| t == m));
        }
        for metric in ["mrr", "recall"] {
            let f = fig(&format!("{bench}-{metric}"));
            let rows: Vec<Vec<String>> = f["rows"].as_array().unwrap().iter().map(cells).collect();
            let firsts: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
            assert_eq!(
                firsts,
                labels.iter().collect::<Vec<_>>(),
                "{bench} {metric}: a row per model"
            );
            assert_eq!(cells(&f["header"])[0], "Model");
        }
    }
    // The gap: ConvCodeBench's MRR minus ConvCodeWorld's, per model and configuration.
    let gap = fig("convcodebench-minus-convcodeworld");
    let rows: Vec<Vec<String>> = gap["rows"].as_array().unwrap().iter().map(cells).collect();
    assert_eq!(rows.len(), 2 * Config::static_reported().len());
    for r in &rows {
        let (w, b, g): (f64, f64, f64) = (
            r[2].parse().unwrap(),
            r[3].parse().unwrap(),
            r[4].parse().unwrap(),
        );
        assert!((b - w - g).abs() < 0.051, "{r:?}");
    }

    // Every export button saved its file.
    let downloads = &r["downloads"];
    for f in figures {
        let name = f["name"].as_str().unwrap();
        let d = &downloads[name];
        let csv = std::fs::read_to_string(d["csv"].as_str().unwrap()).unwrap();
        assert_eq!(csv, f["csv"].as_str().unwrap(), "{name}: CSV download");
        if f["svg"].is_null() {
            assert!(d.get("svg").is_none());
            continue;
        }
        let svg = std::fs::read_to_string(d["svg"].as_str().unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"), "{name}");
        assert!(
            svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{name}: {}",
            &svg[..200]
        );
        let (w, h) = png_size(Path::new(d["png"].as_str().unwrap()));
        let want = (
            2 * f["svg"]["width"].as_u64().unwrap() as u32,
            2 * f["svg"]["height"].as_u64().unwrap() as u32,
        );
        assert_eq!((w, h), want, "{name}: PNG at twice the chart's size");
    }
    println!("screenshots and downloads: {}", shots.display());
}

/// The bands are what the caption says: Python, given a point's dialogue scores in id order,
/// `random.Random(2025).choices` 2,000 times and numpy-style linear quantiles, finds the
/// CSV's interval (to rounding: Python's `sum` is compensated).
#[test]
fn bands_are_redone_in_python_from_the_method_stated() {
    let Some(mc) = shared("memorycode", "bands recomputed on a real model's scores") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = memorycode_score(
        dir.path(),
        &mc.join("dataset"),
        &mc.join("outputs/command-r-plus"),
        "command-r-plus",
    );
    let score: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let (_, html) = build(dir.path(), &[p]);
    let csv = csvs(&html)
        .into_iter()
        .find(|(n, _)| n == "memorycode-history-by-length")
        .unwrap()
        .1;
    // Dialogue ids are the keys of "dialogues", in numeric order.
    let mut checked = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let len: usize = f[2].parse().unwrap();
        let values: Vec<f64> = (score["dialogues"].as_object().unwrap().values())
            .map(|r| r["history"].as_array().unwrap())
            .filter(|r| r.len() == len)
            .filter_map(|r| r.iter().find_map(Value::as_f64))
            .collect();
        assert_eq!(values.len(), f[3].parse::<usize>().unwrap(), "{line}");
        let program = format!(
            "import random\nxs = {values:?}\nr = random.Random(2025)\n\
             ms = sorted(sum(p) / len(p) for p in (r.choices(xs, k=len(xs)) for _ in range(2000)))\n\
             def q(a):\n    pos = a * (len(ms) - 1); i = int(pos); fr = pos - i\n    \
             return ms[i] + (ms[i + 1] - ms[i]) * fr if fr > 0 else ms[i]\n\
             print(repr(q(0.025)), repr(q(0.975)))\n"
        );
        let o = Command::new(pivot_test_support::host::python())
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8(o.stdout).unwrap();
        let (lo, hi) = out.trim().split_once(' ').unwrap();
        for (py, ours) in [(lo, f[5]), (hi, f[6])] {
            let (py, ours): (f64, f64) = (py.parse().unwrap(), ours.parse().unwrap());
            assert!(
                (py - ours).abs() < 1e-9,
                "{line}: python {py}, report {ours}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 12, "one row per dialogue length");
}
