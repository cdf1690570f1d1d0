//! `pivot-lsp memorycode generate` against the loopback model server: the requests and files
//! equal those MemoryCode's own generate_model_output.py made for the bundled fixtures
//! (fixtures/memorycode/golden, recorded by record_original.py there), resume after a failure,
//! `--offline`, and bad input.

use crate::support;

use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_test_support::host::shared;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{repo, stderr, EXE};
use support::lsp::Client;

/// The golden run's one answer (record_original.py's REPLY).
const REPLY: &str = "```python\ndef f_answer_x():\n    pass\n```";

fn fixtures() -> PathBuf {
    repo().join("fixtures/memorycode")
}

fn server(script: Value) -> LoopbackServer {
    LoopbackServer::start(serde_json::from_value::<Script>(script).unwrap()).unwrap()
}

fn generate(args: &[&str], out: &Path) -> Output {
    let fx = fixtures();
    let mut cmd = Command::new(EXE);
    cmd.args(["memorycode", "generate", "--dataset"])
        .arg(fx.join("dataset"))
        .arg("--topics")
        .arg(fx.join("topics.json"))
        .arg("--out")
        .arg(out)
        .args(["--retries", "0", "--backoff", "0"])
        .args(args)
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-golden");
    cmd.output().unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every request body, byte for byte and in order, and every output file, byte for byte, as
/// the original made them (one request at a time, as the original sends them).
#[test]
fn requests_and_files_equal_the_originals() {
    let srv = server(json!({"default": {"reply": REPLY}}));
    let out = tempfile::tempdir().unwrap();
    let o = generate(
        &[
            "--model",
            "gpt-4o",
            "--base-url",
            &srv.base_url(),
            "--concurrency",
            "1",
            "--modes",
            "instruction,session,history,instructions-chain",
        ],
        out.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let golden = fixtures().join("golden");
    let want: Vec<Value> = read(&golden.join("requests.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen = srv.seen();
    assert_eq!(seen.len(), want.len(), "number of requests");
    for (i, (s, w)) in seen.iter().zip(&want).enumerate() {
        assert_eq!(w["path"], "/v1/chat/completions");
        assert_eq!(s.endpoint, "chat");
        let got = String::from_utf8(s.raw.clone()).unwrap();
        assert_eq!(got, w["body"].as_str().unwrap(), "request {i} differs");
    }
    assert_eq!(
        read(&out.path().join("instruction/gpt-4o.json")),
        read(&golden.join("original/instruction_gpt-4o.json"))
    );
    for id in [1, 2, 211] {
        let ours: Value =
            serde_json::from_str(&read(&out.path().join(format!("gpt-4o/output_{id}.json"))))
                .unwrap();
        // The three steps' file: ours also holds the chain's key, so compare without it.
        let mut three = ours.clone();
        for s in three["sessions"].as_array_mut().unwrap() {
            s.as_object_mut()
                .unwrap()
                .remove("instructions_only_model_output");
        }
        let text = serde_json::to_string_pretty(&three).unwrap();
        assert_eq!(
            text,
            read(&golden.join(format!("original/gpt-4o/output_{id}.json"))),
            "output_{id}.json"
        );
        let chain: Value = serde_json::from_str(&read(
            &golden.join(format!("original/chain/gpt-4o/output_{id}.json")),
        ))
        .unwrap();
        for (a, b) in ours["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .zip(chain["sessions"].as_array().unwrap())
        {
            assert_eq!(
                a["instructions_only_model_output"],
                b["instructions_only_model_output"]
            );
        }
    }
    // What `score memorycode` reads.
    let score = Command::new(EXE)
        .args(["score", "memorycode", "--format", "json", "--dataset"])
        .arg(fixtures().join("dataset"))
        .arg("--outputs")
        .arg(out.path().join("gpt-4o"))
        .output()
        .unwrap();
    assert!(score.status.success(), "{}", stderr(&score));
    // The chain's answers, under the key generate wrote, are scored (by the History scorer).
    let v: Value = serde_json::from_slice(&score.stdout).unwrap();
    let chain = &v["modes"]["instructions chain"];
    assert_eq!(chain["output_key"], "instructions_only_model_output");
    assert_eq!(chain["dialogues"], 3, "{chain}");
    assert!(v["modes"].get("rag").is_none(), "rag was not generated");
}

/// A request that fails leaves its dialogue unwritten and the rest written; the rerun sends
/// only what is missing and ends with the files of an uninterrupted run; a third run sends
/// nothing and rewrites nothing.
#[test]
fn resumes_after_a_failure() {
    let clean_srv = server(json!({"default": {"reply": REPLY}}));
    let clean = tempfile::tempdir().unwrap();
    let o = generate(
        &["--model", "org/m", "--base-url", &clean_srv.base_url()],
        clean.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let total = clean_srv.seen().len();
    // As many as the original's three steps sent (its recorded run, without the chain's).
    let original = read(&fixtures().join("golden/requests.jsonl"))
        .lines()
        .filter(|l| !l.contains("This is a list of coding guidelines"))
        .count();
    assert_eq!(total, original);

    let failing = server(json!({
        "rules": [{"name": "boom", "contains": ["checks a palindrome"], "status": 400}],
        "default": {"reply": REPLY}}));
    let out = tempfile::tempdir().unwrap();
    let o = generate(
        &["--model", "org/m", "--base-url", &failing.base_url()],
        out.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("history query 1"), "{err}");
    assert!(err.contains("HTTP 400"), "{err}");
    assert!(!out.path().join("m/output_1.json").exists());
    assert!(out.path().join("m/output_2.json").exists());

    let good = server(json!({"default": {"reply": REPLY}}));
    let o = generate(
        &["--model", "org/m", "--base-url", &good.base_url()],
        out.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        good.seen().len(),
        1,
        "only the failed request is sent again"
    );
    for f in [
        "instruction/m.json",
        "m/output_1.json",
        "m/output_2.json",
        "m/output_211.json",
    ] {
        assert_eq!(
            read(&out.path().join(f)),
            read(&clean.path().join(f)),
            "{f}"
        );
    }
    let o = generate(
        &["--model", "org/m", "--base-url", &good.base_url()],
        out.path(),
    );
    assert!(o.status.success());
    assert_eq!(good.seen().len(), 1);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("0 files written, 4 unchanged"), "{stdout}");
}

#[test]
fn offline_names_what_is_missing() {
    let out = tempfile::tempdir().unwrap();
    let o = generate(
        &["--model", "m", "--offline", "--modes", "instruction"],
        out.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("offline: no cached answer of m"), "{err}");
    assert!(
        err.contains("instruction 100.0") && err.contains("Write a function that adds two numbers"),
        "{err}"
    );
    assert!(!out.path().join("instruction/m.json").exists());
}

#[test]
fn unreachable_endpoint_and_rejected_key() {
    let out = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let o = generate(&["--model", "m", "--base-url", &url], out.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("cannot reach the model endpoint"),
        "{}",
        stderr(&o)
    );

    // Earlier outputs survive a run whose key is rejected.
    let ok = server(json!({"default": {"reply": REPLY}}));
    assert!(
        generate(&["--model", "m", "--base-url", &ok.base_url()], out.path())
            .status
            .success()
    );
    let before = read(&out.path().join("m/output_1.json"));
    let locked = server(json!({"api_key": "sk-other", "default": {"reply": "x"}}));
    let fresh = tempfile::tempdir().unwrap();
    let cache = fresh.path().join("cache");
    let o = generate(
        &[
            "--model",
            "m",
            "--base-url",
            &locked.base_url(),
            "--cache",
            cache.to_str().unwrap(),
        ],
        out.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("rejected the API key (HTTP 401)"),
        "{}",
        stderr(&o)
    );
    // Stops at the first rejection: at most the requests already in flight (--concurrency 4).
    let sent = locked.seen().len();
    assert!((1..=4).contains(&sent), "{sent} requests after a 401");
    assert_eq!(read(&out.path().join("m/output_1.json")), before);
}

fn copy_dataset(edit: impl Fn(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("dataset")).unwrap();
    let mut d: Value =
        serde_json::from_str(&read(&fixtures().join("dataset/dialogue_1.json"))).unwrap();
    edit(&mut d);
    std::fs::write(
        dir.path().join("dataset/dialogue_1.json"),
        serde_json::to_string(&d).unwrap(),
    )
    .unwrap();
    dir
}

fn generate_on(dataset: &Path, topics: &Path, url: &str, out: &Path) -> Output {
    Command::new(EXE)
        .args(["memorycode", "generate", "--model", "m", "--base-url", url])
        .arg("--dataset")
        .arg(dataset)
        .arg("--topics")
        .arg(topics)
        .arg("--out")
        .arg(out)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

#[test]
fn bad_dialogues_and_topics_stop_before_any_request() {
    let srv = server(json!({"default": {"reply": REPLY}}));
    let topics = fixtures().join("topics.json");
    let no_query = copy_dataset(|d| {
        d["sessions"][2]
            .as_object_mut()
            .unwrap()
            .remove("session_eval_query");
    });
    let out = tempfile::tempdir().unwrap();
    let o = generate_on(
        &no_query.path().join("dataset"),
        &topics,
        &srv.base_url(),
        out.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("dialogue_1.json: session 2 has no `session_eval_query`"),
        "{err}"
    );
    assert!(err.contains("nothing written"), "{err}");

    // A topics file without instruction 102 (dialogue 1, session 2 names 102.0).
    let mut t: Value = serde_json::from_str(&read(&topics)).unwrap();
    t["instructions"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["id"] != 102);
    let short = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(short.path(), t.to_string()).unwrap();
    let o = generate_on(
        &fixtures().join("dataset"),
        short.path(),
        &srv.base_url(),
        out.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(
            "dialogue_1.json: session 2 names instruction 102.0, which the topics file lacks"
        ),
        "{err}"
    );
    assert_eq!(
        srv.seen().len(),
        0,
        "no request before the input is checked"
    );
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

/// The original's generate_prompt.py, run here (with a stub `fire`) on `templates`, against
/// `pivot-lsp memorycode prompts`: every file byte for byte. `None` when Python or the
/// original is missing.
fn prompts_match_original(templates: &Path) -> Option<usize> {
    let code = shared(
        "originals/memorycode/code",
        "prompts not compared with the original's",
    )?;
    let stub = tempfile::tempdir().unwrap();
    std::fs::write(
        stub.path().join("fire.py"),
        "def Fire(*a, **k):\n    pass\n",
    )
    .unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let script = "import glob, os, sys\nimport generate_prompt as g\nfor f in sorted(glob.glob(os.path.join(sys.argv[1], 'dialogue_*.json'))):\n    g.generate_prompt(f, sys.argv[2])\n";
    let py = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(templates)
        .arg(theirs.path())
        .env(
            "PYTHONPATH",
            format!("{}:{}", stub.path().display(), code.display()),
        )
        .output();
    match py {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!("the original failed: {}", stderr(&o)),
        Err(e) => {
            pivot_test_support::test_skip::skip(&format!("cannot run python3: {e}"));
            return None;
        }
    }
    let ours = tempfile::tempdir().unwrap();
    let o = Command::new(EXE)
        .args(["memorycode", "prompts", "--template"])
        .arg(templates)
        .arg("--out")
        .arg(ours.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut n = 0;
    for e in std::fs::read_dir(theirs.path()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        assert_eq!(
            read(&ours.path().join(name)),
            read(&p),
            "{}",
            name.to_string_lossy()
        );
        n += 1;
    }
    assert_eq!(std::fs::read_dir(ours.path()).unwrap().count(), n);
    Some(n)
}

/// Templates derived from the bundled fixture dialogues (personas added; the original needs them).
#[test]
fn prompts_equal_the_originals_on_fixture_templates() {
    let dir = tempfile::tempdir().unwrap();
    for id in [1, 2, 211] {
        let mut d: Value = serde_json::from_str(&read(
            &fixtures().join(format!("dataset/dialogue_{id}.json")),
        ))
        .unwrap();
        d["context"]["mentor_persona"] = json!("[mentor] is patient. Café ☕ first.");
        d["context"]["mentee_persona"] = json!("[mentee] is eager.");
        std::fs::write(
            dir.path().join(format!("dialogue_{id}.json")),
            d.to_string(),
        )
        .unwrap();
    }
    if let Some(n) = prompts_match_original(dir.path()) {
        assert_eq!(n, 3);
    }
}

/// The 360 shipped dialogues are templates plus text: the original's prompts for all of them.
#[test]
fn prompts_equal_the_originals_on_the_shipped_dataset() {
    let Some(data) = shared(
        "memorycode/dataset",
        "prompts not compared on the shipped dialogues",
    ) else {
        return;
    };
    if let Some(n) = prompts_match_original(&data) {
        assert_eq!(n, 360);
    }
}

/// Prompts, then conversations: each session's text from the model, written into the
/// template; the requests carry the original's preamble and prompts and its sampling
/// (temperature 0.9, top_p 0.9 for Cohere's p).
#[test]
fn converse_writes_each_sessions_text_into_the_templates() {
    let dir = tempfile::tempdir().unwrap();
    let templates = dir.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    let mut d: Value =
        serde_json::from_str(&read(&fixtures().join("dataset/dialogue_1.json"))).unwrap();
    d["context"]["mentor_persona"] = json!("[mentor] is patient.");
    d["context"]["mentee_persona"] = json!("[mentee] is eager.");
    for s in d["sessions"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("text");
    }
    std::fs::write(templates.join("dialogue_1.json"), d.to_string()).unwrap();
    let bin = EXE;
    let prompts = dir.path().join("prompts");
    let o = Command::new(bin)
        .args(["memorycode", "prompts", "--template"])
        .arg(&templates)
        .arg("--out")
        .arg(&prompts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let srv = server(json!({"default": {"reply": "Ana: Hello.\n\nBen: Hi."}}));
    let o = Command::new(bin)
        .args(["memorycode", "converse", "--model", "conv", "--base-url"])
        .arg(srv.base_url())
        .arg("--prompts")
        .arg(&prompts)
        .arg("--templates")
        .arg(&templates)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let written: Value = serde_json::from_str(&read(&templates.join("dialogue_1.json"))).unwrap();
    let p: Value = serde_json::from_str(&read(&prompts.join("prompt_1.json"))).unwrap();
    let seen = srv.seen();
    assert_eq!(seen.len(), 3);
    for (i, s) in written["sessions"].as_array().unwrap().iter().enumerate() {
        assert_eq!(s["text"], "Ana: Hello.\n\nBen: Hi.");
        assert_eq!(s["type"], d["sessions"][i]["type"]);
    }
    let mut asked: Vec<String> = seen
        .iter()
        .map(|s| {
            assert_eq!(s.body["messages"][0]["content"], p["preamble"]);
            assert_eq!(s.body["temperature"], 0.9);
            assert_eq!(s.body["top_p"], 0.9);
            s.prompt.clone()
        })
        .collect();
    let mut want: Vec<String> = p["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    asked.sort();
    want.sort();
    assert_eq!(asked, want);
}

/// RAG: the reranker gets every session of the dialogue and as many `top_n` as it has
/// instruction sessions; the prompt holds the picked sessions in chronological order,
/// renumbered from 0, under `rag_model_output` of the last session.
#[test]
fn rag_asks_the_reranker_and_keeps_chronological_order() {
    let srv = server(json!({"default": {"reply": REPLY}}));
    let out = tempfile::tempdir().unwrap();
    let o = generate(
        &[
            "--model",
            "m",
            "--base-url",
            &srv.base_url(),
            "--reranker-url",
            &srv.base_url(),
            "--modes",
            "rag",
            "--dialogues",
            "1",
        ],
        out.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let d: Value =
        serde_json::from_str(&read(&fixtures().join("dataset/dialogue_1.json"))).unwrap();
    let texts: Vec<&str> = d["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    let seen = srv.seen();
    let reranks: Vec<_> = seen.iter().filter(|s| s.endpoint == "rerank").collect();
    let chats: Vec<_> = seen.iter().filter(|s| s.endpoint == "chat").collect();
    assert_eq!(
        reranks.len(),
        3,
        "one per history query of the last session"
    );
    assert_eq!(chats.len(), 3);
    for r in &reranks {
        assert_eq!(
            r.body["top_n"], 2,
            "dialogue 1 has two instruction sessions"
        );
        assert_eq!(r.body["model"], "rerank-english-v3.0");
        assert_eq!(r.body["documents"], json!(texts));
    }
    for c in &chats {
        let p = &c.prompt;
        let s0 = p.find("\n\n Session 0 \n\n").expect("renumbered from 0");
        let s1 = p.find("\n\n Session 1 \n\n").expect("two sessions");
        assert!(s0 < s1 && !p.contains(" Session 2 "), "{p}");
        // Chronological: whichever two were picked appear in dialogue order.
        let at: Vec<usize> = texts.iter().filter_map(|t| p.find(t)).collect();
        assert_eq!(at.len(), 2, "{p}");
        assert!(at[0] < at[1]);
    }
    let file: Value = serde_json::from_str(&read(&out.path().join("m/output_1.json"))).unwrap();
    let sessions = file["sessions"].as_array().unwrap();
    assert_eq!(sessions[2]["rag_model_output"].as_array().unwrap().len(), 3);
    assert_eq!(sessions[0]["rag_model_output"], json!([]));
}

/// The editor command: generation for the open conversation with `$/progress`, then
/// `pivot.outputs.check` on the file it names.
#[test]
fn editor_command_generates_for_the_open_conversation() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path());
    c.session_changed();
    let dialogue = fixtures().join("dataset/dialogue_1.json");
    c.command("pivot.conversation.open", json!({"path": dialogue}))
        .unwrap();
    c.session_changed();
    let out = root.path().join("gen");
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "pivot.memorycode.generate", "workDoneToken": "gen-1",
                   "arguments": [{"model": "org/loop", "out": out,
                                  "loopback": fixtures().join("loopback.json")}]}),
        )
        .unwrap();
    let begin = c.expect("$/progress");
    assert_eq!(begin["params"]["token"], "gen-1");
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(c.expect("$/progress")["params"]["value"]["kind"], "end");
    // The fixture topics' 10 instruction versions (9 instructions, one with an update), then
    // dialogue 1's 4 session and 3 history queries.
    assert_eq!(r["requests"], 10 + 4 + 3, "{r}");
    assert_eq!(r["failures"], json!([]));
    let output = r["output"].as_str().unwrap();
    assert!(output.ends_with("gen/loop/output_1.json"), "{output}");
    let checked = c
        .command("pivot.outputs.check", json!({"path": output}))
        .unwrap();
    // Verdicts for the generated answers: 4 session, 4 instruction and 3 history answers.
    assert_eq!(
        checked["answers"].as_array().unwrap().len(),
        11,
        "{checked}"
    );
    assert!(checked["scores"]["history"][2].is_number(), "{checked}");

    // Without an endpoint: a clear error naming the arguments.
    let err = c
        .command(
            "pivot.memorycode.generate",
            json!({"model": "m", "out": out}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("baseUrl"), "{err}");
    c.shutdown();
}

/// generate_dataset.sh's parameters for dialogue `id` (30 per session count, in order).
fn plan_params(id: usize) -> pivot_bench::memorycode::templates::TemplateParams {
    use pivot_bench::memorycode::templates::{dataset_params, DATASET_SESSION_COUNTS};
    dataset_params(DATASET_SESSION_COUNTS[(id - 1) / 30])
}

/// Every constraint the original's parameters impose holds for the 360 shipped dialogues
/// (which checks the checker) and for the 360 templates `memorycode templates` writes; the
/// same seed gives the same files.
#[test]
fn templates_meet_the_constraints_the_shipped_dialogues_meet() {
    use pivot_bench::memorycode::templates::{check_constraints, Template};
    let Some(shared) = shared(
        "memorycode",
        "templates not checked against the shipped dialogues' constraints",
    ) else {
        return;
    };
    let mut problems = Vec::new();
    for id in 1..=360 {
        let d: Value =
            serde_json::from_str(&read(&shared.join(format!("dataset/dialogue_{id}.json"))))
                .unwrap();
        let d: Template = serde_json::from_value(d).unwrap();
        for p in check_constraints(&d, &plan_params(id)) {
            problems.push(format!("shipped dialogue_{id}: {p}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let out = tempfile::tempdir().unwrap();
    let run = |dir: &Path| {
        let o = Command::new(EXE)
            .args(["memorycode", "templates", "--seed", "7", "--topics"])
            .arg(shared.join("topics.json"))
            .arg("--out")
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run(out.path());
    let mut fillers = 0;
    for id in 1..=360 {
        let d: Value =
            serde_json::from_str(&read(&out.path().join(format!("dialogue_{id}.json")))).unwrap();
        let typed: Template = serde_json::from_value(d.clone()).unwrap();
        for p in check_constraints(&typed, &plan_params(id)) {
            problems.push(format!("our dialogue_{id}: {p}"));
        }
        fillers += d["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| {
                s["type"][0]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("filler-instruction")
            })
            .count();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(fillers > 0, "no filler instructions drawn");
    let again = tempfile::tempdir().unwrap();
    run(again.path());
    for id in [1, 100, 360] {
        let f = format!("dialogue_{id}.json");
        assert_eq!(
            read(&out.path().join(&f)),
            read(&again.path().join(&f)),
            "{f}"
        );
    }
}
