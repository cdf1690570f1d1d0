//! `pivot-lsp report`: the page built from the bundled fixtures' scores is self-contained,
//! embeds its inputs unchanged, names every model, titles every chart, shows the text
//! output's numbers; bad inputs are refused by name; headless Chromium renders it without
//! any network request and the screenshot is not blank.

use crate::support;

use pivot_test_support::host::shared;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cli::{binary_in, ok, repo, EXE};
use support::files::copy_tree;
use support::lsp::Client;

/// Score files of the bundled fixtures: two MemoryCode models (the same outputs under two
/// names), the ConvCodeWorld fixture folder live, and the same folder as ConvCodeBench.
/// Returns (paths, model names, the text outputs of the same scorings).
fn fixture_scores(dir: &Path) -> (Vec<PathBuf>, Vec<&'static str>, Vec<String>) {
    let mut paths = Vec::new();
    let mut texts = Vec::new();
    let mc = |name: Option<&str>, format: &str| {
        let mut c = binary_in(&repo());
        c.args(["score", "memorycode", "--per-session", "--format", format]);
        if let Some(n) = name {
            c.args(["--model-name", n]);
        }
        ok(c.output().unwrap(), "score memorycode").stdout
    };
    for (file, name) in [
        ("mc-demo.json", None),
        ("mc-other.json", Some("other-model")),
    ] {
        let p = dir.join(file);
        std::fs::write(&p, mc(name, "json")).unwrap();
        paths.push(p);
    }
    texts.push(String::from_utf8(mc(None, "table")).unwrap());
    let cc = |extra: &[&str], format: &str| {
        let mut c = binary_in(&repo());
        c.args([
            "score",
            "convcode",
            "--results",
            "fixtures/lsp/convcode",
            "--model",
            "fixture/coder",
            "--format",
            format,
        ]);
        c.args(extra);
        ok(c.output().unwrap(), "score convcode").stdout
    };
    for (file, extra) in [
        ("ccw.json", &[][..]),
        (
            "ccb.json",
            &["--static", "--ref-model", "fixture/coder"][..],
        ),
    ] {
        let p = dir.join(file);
        std::fs::write(&p, cc(extra, "json")).unwrap();
        paths.push(p);
        texts.push(String::from_utf8(cc(extra, "table")).unwrap());
    }
    (
        paths,
        vec!["demo-model", "other-model", "fixture/coder"],
        texts,
    )
}

fn build_report(dir: &Path, inputs: &[PathBuf]) -> String {
    let out = dir.join("report.html");
    let mut c = binary_in(&repo());
    c.arg("report").args(inputs).arg("--output").arg(&out);
    c.args(["--title", "Fixture <report>"]);
    ok(c.output().unwrap(), "report");
    std::fs::read_to_string(out).unwrap()
}

/// The text of the `<script id="pivot-report-data">` element, and the page without it.
fn split_data(html: &str) -> (&str, String) {
    let open = r#"<script type="application/json" id="pivot-report-data">"#;
    let start = html.find(open).expect("data script present") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    (
        &html[start..end],
        format!("{}{}", &html[..start], &html[end..]),
    )
}

/// Every `src=`, `href=`, `url(`, `@import`, and every scheme'd URL outside the data.
fn external_references(page: &str) -> Vec<String> {
    let lower = page.to_lowercase();
    let mut found = Vec::new();
    for attr in [
        "src=",
        "href=",
        "xlink:href=",
        "action=",
        "poster=",
        "srcset=",
    ] {
        for (i, _) in lower.match_indices(attr) {
            let value = lower[i + attr.len()..].trim_start_matches(['"', '\'']);
            if !value.starts_with('#') {
                found.push(page[i..(i + 60).min(page.len())].to_string());
            }
        }
    }
    for needle in [
        "url(", "@import", "http:", "https:", "ftp:", "//cdn", "<link", "<iframe", "<img",
        "<object", "<embed",
    ] {
        if let Some(i) = lower.find(needle) {
            found.push(page[i..(i + 60).min(page.len())].to_string());
        }
    }
    found
}

#[test]
fn report_from_fixture_scores_is_self_contained_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, models, texts) = fixture_scores(dir.path());
    let html = build_report(dir.path(), &inputs);
    let (data, page) = split_data(&html);

    // The export script makes its downloads as `data:` addresses from the page itself; it
    // names no other address and asks for nothing (the Chromium tests record requests).
    let open = "<script id=\"pivot-report-export\">";
    let start = page.find(open).expect("the export script");
    let end = start + page[start..].find("</script>").unwrap();
    let script = &page[start..end];
    for banned in [
        "http",
        "fetch(",
        "XMLHttpRequest",
        "import(",
        "//cdn",
        "WebSocket",
    ] {
        assert!(!script.contains(banned), "the export script has {banned}");
    }
    let page = format!("{}{}", &page[..start], &page[end..]);
    let refs = external_references(&page);
    assert!(refs.is_empty(), "external references: {refs:?}");

    // The embedded data is the list of inputs, value for value.
    let embedded: Value = serde_json::from_str(data).unwrap();
    let given: Vec<Value> = inputs
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    assert_eq!(embedded, Value::Array(given.clone()));
    assert_eq!(given[0]["benchmark"], "memorycode");
    assert_eq!(given[1]["model"], "other-model");
    assert_eq!(given[2]["benchmark"], "convcodeworld");
    assert_eq!(given[3]["benchmark"], "convcodebench");

    for m in &models {
        assert!(page.contains(m), "model {m} not named in the page");
    }
    assert!(page.contains("<title>Fixture &lt;report&gt;</title>"));
    assert!(page.contains("ref. model: fixture/coder"));

    // Every chart is an inline <svg> whose first child is a non-empty <title>.
    let charts: Vec<&str> = page.split("<svg").skip(1).collect();
    // MemoryCode: history, session and instruction by dialogue length, macro, 2
    // per-session, by kind; ConvCodeWorld: Pass@1 of each of its 3 configurations (w/ CF
    // and w/ CF SNF repeat turn 0) across models, MRR and Recall across models, then the
    // run's own Pass@1 and MRR/Recall; ConvCodeBench: none (this replay has no results,
    // which the page says).
    assert_eq!(charts.len(), 7 + 7, "charts in the page");
    assert!(page.contains("No configuration has results in"));
    for c in &charts {
        let head = &c[..c.find("</title>").expect("chart without <title>")];
        let title = &head[head.find("><title>").expect("<title> first") + 8..];
        assert!(!title.trim().is_empty());
        assert!(c.contains("</svg>"));
    }

    // The tables hold the numbers the text outputs print, with the same rounding.
    for text in &texts {
        let mut numbers = 0;
        for tok in text.split(|c: char| c.is_whitespace() || c == '|') {
            let decimal = tok.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            });
            if decimal {
                numbers += 1;
                assert!(
                    page.contains(&format!(">{tok}<")),
                    "{tok} of the text output is in no table cell"
                );
            }
        }
        // The ConvCodeBench replay of the fixture folder has no results: blank tables.
        if !text.contains("ConvCodeBench") {
            assert!(numbers >= 4, "text output without numbers: {text}");
        }
    }

    // Provenance: each input's name and SHA-256.
    for p in &inputs {
        use sha2::Digest;
        let sha: String = sha2::Sha256::digest(std::fs::read(p).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(page.contains(&sha), "SHA-256 of {}", p.display());
        assert!(page.contains(&p.display().to_string()));
    }
    assert!(page.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn score_report_flag_writes_the_same_kind_of_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub/mc.html");
    let o = ok(
        binary_in(&repo())
            .args(["score", "memorycode", "--format", "json", "--report"])
            .arg(&out)
            .output()
            .unwrap(),
        "score --report",
    );
    let html = std::fs::read_to_string(&out).unwrap();
    let (data, _) = split_data(&html);
    let embedded: Value = serde_json::from_str(data).unwrap();
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(embedded, Value::Array(vec![printed]));
    assert!(html.contains("demo-model"));
}

#[test]
fn bad_inputs_are_refused_by_name_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _, _) = fixture_scores(dir.path());
    let good = std::fs::read_to_string(&inputs[0]).unwrap();
    let cases = [
        (
            "not-score.json",
            r#"{"hello": "world"}"#.to_string(),
            "not a score file",
        ),
        ("empty-list.json", "[]".to_string(), "empty JSON list"),
        ("empty.json", String::new(), "empty"),
        (
            "truncated.json",
            good[..good.len() / 2].to_string(),
            "truncated",
        ),
        ("list.json", format!("[{good}]"), "JSON list"),
    ];
    let out = dir.path().join("r.html");
    for (name, text, why) in &cases {
        let bad = dir.path().join(name);
        std::fs::write(&bad, text).unwrap();
        // Alone, and among valid inputs: refused either way, naming the bad file.
        for args in [
            vec![bad.clone()],
            vec![inputs[0].clone(), bad.clone(), inputs[2].clone()],
        ] {
            let o = binary_in(&repo())
                .arg("report")
                .args(&args)
                .arg("--output")
                .arg(&out)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains(name), "{name} not named: {err}");
            assert!(err.contains(why), "{name}: expected {why:?} in {err}");
            assert!(!err.contains("mc-demo.json"), "a valid input blamed: {err}");
            assert!(!out.exists(), "{name}: a report was written");
        }
    }
    let missing = dir.path().join("missing.json");
    let o = binary_in(&repo())
        .arg("report")
        .arg(&missing)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json"));
    // No inputs at all: a usage error from the argument parser.
    let o = binary_in(&repo())
        .args(["report", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("SCORES.json"));
}

/// Debian's chromium, when installed (scripts/test installs it).
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            let o = Command::new("sh")
                .args(["-c", &format!("command -v {b}")])
                .output()
                .ok()?;
            let p = String::from_utf8(o.stdout).ok()?;
            (o.status.success() && !p.trim().is_empty()).then(|| PathBuf::from(p.trim()))
        })
}

/// Run headless Chromium on `page`: (screenshot path, net log) or why it could not.
fn render(chrome: &Path, dir: &Path, page: &Path, tag: &str) -> Result<(PathBuf, Value), String> {
    let shot = dir.join(format!("{tag}.png"));
    let netlog = dir.join(format!("{tag}-net.json"));
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--window-size=1280,3000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join(format!("{tag}-profile")).display()
        ))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .map_err(|e| e.to_string())?;
    if !shot.exists() {
        return Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(5)
            .collect::<Vec<_>>()
            .join(" | "));
    }
    let log = std::fs::read_to_string(&netlog).map_err(|e| format!("no net log: {e}"))?;
    let log = serde_json::from_str(&log).map_err(|e| format!("unreadable net log: {e}"))?;
    Ok((shot, log))
}

/// URLs the page itself asked for. Chromium logs its own background requests too (update
/// checks, time, accounts: initiator "not an origin"); a page's requests carry the page's
/// site in their isolation key (`file://`) or have it as initiator.
fn page_requests(log: &Value) -> Vec<String> {
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64();
    assert!(start_job.is_some(), "net log without event types");
    let mut out = Vec::new();
    for e in log["events"].as_array().into_iter().flatten() {
        // Begin events carry the request's parameters; end events have none.
        if e["type"].as_u64() != start_job || e["params"]["url"].is_null() {
            continue;
        }
        let p = &e["params"];
        let browser = p["initiator"] == "not an origin"
            && !p["network_isolation_key"]
                .as_str()
                .unwrap_or("")
                .contains("file:");
        if !browser {
            out.push(p["url"].as_str().unwrap_or("?").to_string());
        }
    }
    out
}

#[test]
fn chromium_renders_the_page_offline_and_not_blank() {
    let Some(chrome) = chromium() else {
        pivot_test_support::test_skip::skip(
            "no chromium on PATH (scripts/test installs Debian's `chromium`): the report is not rendered",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _, _) = fixture_scores(dir.path());
    build_report(dir.path(), &inputs);

    // The control: a page that does load something (from a closed loopback port) is caught.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        r#"<html><body><img src="http://127.0.0.1:9/x.png">control</body></html>"#,
    )
    .unwrap();
    let (_, log) = match render(&chrome, dir.path(), &control, "control") {
        Ok(r) => r,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!(
                "{} cannot render here: {why}",
                chrome.display()
            ));
            return;
        }
    };
    assert_eq!(page_requests(&log), vec!["http://127.0.0.1:9/x.png"]);

    let (shot, log) = render(
        &chrome,
        dir.path(),
        &dir.path().join("report.html"),
        "report",
    )
    .expect("chromium rendered the control page but not the report");
    let asked = page_requests(&log);
    assert!(asked.is_empty(), "the page asked the network for {asked:?}");

    // The screenshot: 1280 px wide, and drawn (many non-white pixels, many colours).
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.width, 1280);
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let mut non_white = 0usize;
    let mut colours = std::collections::HashSet::new();
    for px in pixels.chunks(channels) {
        if px[..3].iter().any(|c| *c < 235) {
            non_white += 1;
        }
        colours.insert((px[0] >> 4, px[1] >> 4, px[2] >> 4));
    }
    let total = pixels.len() / channels;
    assert!(
        non_white * 50 > total,
        "screenshot nearly blank: {non_white} of {total} pixels drawn"
    );
    assert!(
        colours.len() > 20,
        "screenshot has {} colours",
        colours.len()
    );
    // Kept for a person to look at when PIVOT_REPORT_SHOT names a file.
    if let Ok(keep) = std::env::var("PIVOT_REPORT_SHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The editor command: `.pivot/report.html` in the workspace, its path returned; a bad
/// input is an error naming it, and the previous report stays as it was.
#[test]
fn lsp_report_open_writes_pivot_report_html() {
    let ws = tempfile::tempdir().unwrap();
    let (inputs, _, _) = fixture_scores(ws.path());
    let mut c = Client::start(ws.path());
    c.session_changed();
    let names: Vec<String> = inputs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let r = c
        .command(
            "pivot.report.open",
            json!({"inputs": names, "title": "From the editor"}),
        )
        .unwrap();
    let path = PathBuf::from(r["path"].as_str().unwrap());
    assert_eq!(path, ws.path().join(".pivot/report.html"));
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<title>From the editor</title>"));
    assert!(html.contains("fixture/coder"));

    std::fs::write(ws.path().join("bad.json"), "{\"macro\": ").unwrap();
    let e = c
        .command(
            "pivot.report.open",
            json!({"inputs": [names[0].clone(), "bad.json"]}),
        )
        .unwrap_err();
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("bad.json") && msg.contains("truncated"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), html);
    let e = c
        .command("pivot.report.open", json!({"inputs": []}))
        .unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("inputs"));
    c.shutdown();
}

/// `by_kind` against the reference dump: its instruction scorings (one pair per answer)
/// grouped by the pair's object kind: null is absent, any number is scored.
#[test]
fn by_kind_equals_the_reference_dump_grouped_by_kind() {
    use std::io::BufRead;
    let model = "command-r-plus";
    let Some(dump) = shared(
        &format!("memorycode/reference/{model}.outputs.jsonl.gz"),
        "by_kind not compared with the reference dump",
    ) else {
        return;
    };
    let shared = dump.parent().unwrap().parent().unwrap();
    let (report, _) = pivot_bench::memorycode::score_dirs::score_dirs(
        &shared.join("dataset"),
        &shared.join(format!("outputs/{model}")),
        pivot_bench::memorycode::score_dirs::Detail::ScoresOnly,
        &|| {},
    )
    .unwrap();
    let ours = report.to_json(false);
    assert_eq!(ours["model"], model);
    let mut want: std::collections::BTreeMap<String, (f64, u64, u64)> = Default::default();
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(&dump).unwrap());
    for line in std::io::BufReader::new(gz).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["k"] != "instruction" || v.get("p").is_none() {
            continue;
        }
        let e = want
            .entry(v["obj"].as_str().unwrap().to_string())
            .or_default();
        match v["score"].as_f64() {
            Some(s) => {
                e.0 += s;
                e.1 += 1;
            }
            None => e.2 += 1,
        }
    }
    let got = ours["by_kind"].as_object().unwrap();
    assert_eq!(got.len(), want.len(), "kinds: {:?}", got.keys());
    for (kind, (sum, count, absent)) in &want {
        let g = &got[kind];
        assert_eq!(g["count"].as_u64(), Some(*count), "{kind} count");
        assert_eq!(g["absent"].as_u64(), Some(*absent), "{kind} absent");
        if *count > 0 {
            let mean = g["mean"].as_f64().unwrap();
            assert!(
                (mean - sum / *count as f64).abs() < 1e-12,
                "{kind} mean {mean}"
            );
        } else {
            assert!(g["mean"].is_null());
        }
    }
    println!(
        "{model}: by_kind equals the reference dump for {} kinds",
        want.len()
    );
}

/// The page's HTML-escaped form of a text (as minijinja writes it there).
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn notes_coinciding_series_and_distinct_column_names_are_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _, texts) = fixture_scores(dir.path());
    let html = build_report(dir.path(), &inputs);
    let (_, page) = split_data(&html);
    // What `score convcode` prints under its tables (w/ CF and w/ CF SNF repeat turn 0).
    let ccw: Value = serde_json::from_slice(&std::fs::read(&inputs[2]).unwrap()).unwrap();
    let notes: Vec<&str> = ccw["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("repeat turn 0")),
        "{notes:?}"
    );
    for n in notes {
        assert!(
            page.contains(&escaped(n)),
            "note missing from the page: {n}"
        );
    }
    // Those two columns are equal at every turn: the page and the legend say so.
    assert!(
        page.contains("w/ CF and w/ CF SNF have the same value at every turn"),
        "no coincidence note"
    );
    assert!(
        page.contains("= w/ CF (same values)"),
        "legend lacks the coincidence"
    );
    // Every table's column names are distinct (the per-session index is not `session`).
    for head in page.split("<thead>").skip(1) {
        let head = &head[..head.find("</thead>").unwrap()];
        let names: Vec<&str> = head
            .split("<th scope=\"col\">")
            .skip(1)
            .map(|h| &h[..h.find("</th>").unwrap()])
            .collect();
        let unique: std::collections::BTreeSet<&&str> = names.iter().collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "repeated column names: {names:?}"
        );
    }
    assert!(page.contains("<th scope=\"col\">session number</th>"));
    // The text output's per-session table too.
    let header = texts[0]
        .lines()
        .find(|l| l.contains("short history") && l.contains("instruction") && l.contains("index"))
        .expect("per-session header in the text output");
    let cols: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let unique: std::collections::BTreeSet<&&str> = cols.iter().collect();
    assert_eq!(unique.len(), cols.len(), "{header}");
}

#[test]
fn a_shard_is_marked_and_long_model_names_are_whole() {
    let dir = tempfile::tempdir().unwrap();
    let long = "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo-with-a-long-suffix";
    let shard = dir.path().join("shard1.json");
    let o = ok(
        binary_in(&repo())
            .args(["score", "memorycode", "--shard", "1/2", "--format", "json"])
            .args(["--model-name", long])
            .output()
            .unwrap(),
        "score memorycode --shard",
    );
    std::fs::write(&shard, o.stdout).unwrap();
    let html = build_report(dir.path(), std::slice::from_ref(&shard));
    let (_, page) = split_data(&html);
    assert!(
        page.contains(&format!(
            "{} is shard 1 of 2 of a sharded run",
            shard.display()
        )),
        "shard not said"
    );
    assert!(page.contains("pivot-lsp merge"));
    assert!(
        page.contains(&format!("{long} [shard 1/2]")),
        "label without the shard"
    );
    // The legends wrap the long name instead of cutting it.
    assert!(!page.contains('…'), "something was cut with an ellipsis");
    let svgs: String = page
        .split("<svg")
        .skip(1)
        .map(|s| &s[..s.find("</svg>").unwrap()])
        .collect();
    let legend_text: String = svgs
        .split("<text")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            &t[..t.find("</text>").unwrap()]
        })
        .collect();
    assert!(
        legend_text.contains(&format!("{long}[shard 1/2]"))
            || legend_text.contains(&format!("{long} [shard 1/2]")),
        "the whole name is not in the legend's lines: {legend_text}"
    );
}

#[test]
fn without_output_the_report_goes_under_pivot_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _, _) = fixture_scores(dir.path());
    let cwd = dir.path().join("work");
    std::fs::create_dir(&cwd).unwrap();
    let o = ok(
        Command::new(EXE)
            .arg("report")
            .arg(&inputs[0])
            .current_dir(&cwd)
            .output()
            .unwrap(),
        "report without --output",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("wrote .pivot/report.html"), "{err}");
    assert!(err.contains("--output"), "{err}");
    assert!(cwd.join(".pivot/report.html").is_file());
    assert!(!cwd.join("report.html").exists());
    // This repository ignores that folder, so a report made in the checkout stays out of git.
    let ignore = std::fs::read_to_string(repo().join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "/.pivot/"), "{ignore}");
}

/// A ConvCodeWorld score file whose series would hide each other if drawn naively: a lone
/// point first (on the line of the next series), then two pairs of identical columns, the
/// second of each pair drawn solid over the first.
fn crafted_convcode(dir: &Path) -> PathBuf {
    let turns: Vec<u64> = (0..=10).collect();
    let rising: Vec<Value> = turns
        .iter()
        .map(|t| json!(10.0 + 8.0 * *t as f64))
        .collect();
    let flat: Vec<Value> = turns.iter().map(|_| json!(40.0)).collect();
    let lone: Vec<Value> = turns
        .iter()
        .map(|t| if *t == 5 { json!(50.0) } else { Value::Null })
        .collect();
    let col = |config: &str, label: &str, v: &Vec<Value>| json!({"config": config, "label": label, "complete": true, "pass_at_1": v, "mrr": null, "recall": null});
    let v = json!({
        "benchmark": "convcodeworld", "mode": "live", "model": "crafted/model",
        "turns": turns,
        "columns": [
            col("CF_SEF", "w/ CF SEF", &lone),
            col("CF_EF_FULL", "w/ CF EF (full TC)", &rising),
            col("CF_EF_UNIT", "w/ CF EF (partial TC)", &rising),
            col("CF", "w/ CF", &flat),
            col("CF_SNF", "w/ CF SNF", &flat),
        ],
        "excluded_tasks": [],
        "notes": [],
    });
    let p = dir.join("crafted.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn chromium_shows_every_series_even_identical_ones_and_a_lone_point() {
    let Some(chrome) = chromium() else {
        pivot_test_support::test_skip::skip(
            "no chromium on PATH (scripts/test installs Debian's `chromium`): series visibility not checked",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = crafted_convcode(dir.path());
    let html = build_report(dir.path(), std::slice::from_ref(&input));
    // The Pass@1 chart alone, at its own size in the top left corner, so that only its
    // pixels are counted (the page's rules and links use the same palette).
    // The run's own chart (one line per configuration), after the figures that put models
    // side by side (one line per model).
    let own = html
        .find("Each run on its own")
        .expect("the run's own figures");
    let start = own + html[own..].find("<svg").expect("a chart");
    let end = start + html[start..].find("</svg>").unwrap() + 6;
    let chart = dir.path().join("chart.html");
    std::fs::write(
        &chart,
        format!(
            "<html><body style=\"margin:0\">{}</body></html>",
            &html[start..end]
        ),
    )
    .unwrap();
    let (shot, _) = match render(&chrome, dir.path(), &chart, "series") {
        Ok(r) => r,
        Err(why) => {
            pivot_test_support::test_skip::skip(&format!(
                "{} cannot render here: {why}",
                chrome.display()
            ));
            return;
        }
    };
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let width = info.width as usize;
    // The series' colours (the report's palette, in series order).
    let colours: [(&str, [u8; 3]); 5] = [
        ("w/ CF SEF (one point)", [0x33, 0x22, 0x88]),
        ("w/ CF EF (full TC)", [0xCC, 0x66, 0x77]),
        ("w/ CF EF (partial TC)", [0x44, 0xAA, 0x99]),
        ("w/ CF", [0xDD, 0xCC, 0x77]),
        ("w/ CF SNF", [0x88, 0x22, 0x55]),
    ];
    // Per series: its pixels, and the pixel columns they are in. A line that shows spans
    // most of the plot's width; one hidden under another shows at most around its markers.
    let mut counts = [0usize; 5];
    let mut columns: Vec<std::collections::HashSet<usize>> = vec![Default::default(); 5];
    // The plot only: the legend panel (x from 800 of 1100) shows every colour anyway.
    for (i, px) in buf[..info.buffer_size()].chunks(channels).enumerate() {
        let x = i % width;
        if x >= 790 {
            continue;
        }
        for (k, (_, c)) in colours.iter().enumerate() {
            if px[..3].iter().zip(c).all(|(a, b)| a.abs_diff(*b) <= 24) {
                counts[k] += 1;
                columns[k].insert(x);
            }
        }
    }
    let spans: Vec<usize> = columns.iter().map(|c| c.len()).collect();
    println!("visible pixels per series: {counts:?}, in {spans:?} columns");
    let (name, _) = colours[0];
    assert!(
        counts[0] >= 100,
        "{name}: only {} pixels visible",
        counts[0]
    );
    for (k, (name, _)) in colours.iter().enumerate().skip(1) {
        assert!(
            spans[k] >= 250,
            "{name}: visible in only {} pixel columns of the plot ({spans:?})",
            spans[k]
        );
    }
}

#[test]
fn a_convcode_shard_folder_is_scored_and_shown_as_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("shard-2");
    copy_tree(&repo().join("fixtures/lsp/convcode"), &results);
    // The marker `convcode run --shard 2/3` leaves in its folder.
    let marker = json!({
        "k": 2, "n": 3, "problems": "humaneval", "task_ids": ["HumanEval/0"],
        "runs": [{"input": {
            "command": "convcode run", "model": "fixture/coder", "ref_model": null,
            "simulator": "gpt-4o", "configs": ["CF"], "turns": 1, "fix_quirks": false,
            "samples": null,
        }, "complete": true}],
    });
    std::fs::write(results.join("pivot-shard.json"), marker.to_string()).unwrap();
    let score = |format: &str| {
        ok(
            binary_in(&repo())
                .args([
                    "score",
                    "convcode",
                    "--model",
                    "fixture/coder",
                    "--format",
                    format,
                ])
                .arg("--results")
                .arg(&results)
                .output()
                .unwrap(),
            "score convcode of a shard folder",
        )
    };
    let v: Value = serde_json::from_slice(&score("json").stdout).unwrap();
    assert_eq!(v["shard"], json!({"k": 2, "n": 3}));
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("holds shard 2 of 3")),
        "{v}"
    );
    let table = String::from_utf8(score("table").stdout).unwrap();
    assert!(
        table.contains("note: ") && table.contains("holds shard 2 of 3"),
        "{table}"
    );
    let input = dir.path().join("ccw-shard.json");
    std::fs::write(&input, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let html = build_report(dir.path(), std::slice::from_ref(&input));
    let (_, page) = split_data(&html);
    assert!(
        page.contains("is shard 2 of 3 of a sharded run"),
        "no shard warning"
    );
    assert!(
        page.contains("fixture/coder [shard 2/3]"),
        "heading without the shard"
    );
    assert!(page.contains("pivot-lsp merge --results"));
}
