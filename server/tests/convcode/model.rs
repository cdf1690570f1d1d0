//! What goes to the model and what comes back: the prompts against golden files written by
//! hand (fixtures/convcode/golden/), answers parsed as DSPy and the original parse them, and
//! the model client against the loopback server (retries, malformed answers, the cache).

use super::golden;

#[test]
fn prompts_match_the_golden_files_byte_for_byte() {
    use pivot_llm::prompts::{render, Inputs, Kind};
    let input = "Write f.\nYou should write self-contained code starting with:\n```\ndef f():\n```";
    let prev = "def f(:\n    return 1";
    let cf = "Traceback (most recent call last):\n  File \"tmp.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax";
    let ef = "TEST_CASE_1\nTraceback (most recent call last):\n  File \"__test__.py\", line 9, in test_case_1\nAssertionError: 2 != 1\n";
    let fenced = format!("```\n{prev}\n```");
    let gt = "```\ndef f():\n    return 1\n```";
    let base = Inputs {
        input: Some(input),
        previous_code: Some(prev),
        ..Inputs::default()
    };
    let cases: Vec<(&str, Kind, Inputs, bool)> = vec![
        (
            "refine_from_compilation_feedback.txt",
            Kind::RefineFromCompilationFeedback,
            Inputs {
                compilation_feedback: Some(cf),
                ..base.clone()
            },
            false,
        ),
        (
            "refine_from_execution_feedback.txt",
            Kind::RefineFromExecutionFeedback,
            Inputs {
                execution_feedback: Some(ef),
                ..base.clone()
            },
            false,
        ),
        (
            "refine_from_execution_feedback_fixed.txt",
            Kind::RefineFromExecutionFeedback,
            Inputs {
                execution_feedback: Some(ef),
                ..base.clone()
            },
            true,
        ),
        (
            "refine_from_user_feedback.txt",
            Kind::RefineFromUserFeedback,
            Inputs {
                user_feedback: Some("Close the parenthesis."),
                ..base.clone()
            },
            false,
        ),
        (
            "refine_from_user_feedback_none.txt",
            Kind::RefineFromUserFeedback,
            base.clone(),
            false,
        ),
        (
            "refine_from_execution_user_feedback.txt",
            Kind::RefineFromExecutionUserFeedback,
            Inputs {
                execution_feedback: Some(ef),
                user_feedback: Some("Return 1."),
                ..base.clone()
            },
            false,
        ),
        (
            "simulate_user_feedback.txt",
            Kind::SimulateUserFeedback,
            Inputs {
                previous_code: Some(&fenced),
                ground_truth_code: Some(gt),
                compilation_feedback: Some(cf),
                ..base.clone()
            },
            false,
        ),
        (
            "execution_simulate_novice_feedback.txt",
            Kind::ExecutionSimulateNoviceFeedback,
            Inputs {
                previous_code: Some(&fenced),
                compilation_feedback: Some("No syntax errors"),
                execution_feedback: Some(ef),
                ground_truth_code: Some(gt),
                ..base.clone()
            },
            false,
        ),
    ];
    for (file, kind, inputs, fix) in cases {
        let got = render(kind, &inputs, fix);
        let want = golden(file);
        if got != want {
            let at = got
                .chars()
                .zip(want.chars())
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "{file}: differs at char {at}:\n got: {:?}\nwant: {:?}",
                got.chars()
                    .skip(at.saturating_sub(40))
                    .take(120)
                    .collect::<String>(),
                want.chars()
                    .skip(at.saturating_sub(40))
                    .take(120)
                    .collect::<String>()
            );
        }
    }
}

#[test]
fn answers_are_parsed_like_dspy_and_the_original() {
    use pivot_llm::prompts::{answer, clean_user_feedback, parse_code, Kind};
    let completion =
        " produce the generated_code. We fix it.\n\nCode: ```python\ndef f():\n    return 1\n```";
    let a = answer(Kind::RefineFromCompilationFeedback, completion).unwrap();
    assert_eq!(parse_code(&a, false), "def f():\n    return 1");
    assert_eq!(
        answer(Kind::RefineFromCompilationFeedback, "I would rather not."),
        None
    );
    let fb = " produce the user_feedback. ...\n\nUser Feedback: 1. **Bug**: off by one.\n```python\nx\n```\n\n\nrest";
    let raw = answer(Kind::SimulateUserFeedback, fb).unwrap();
    assert_eq!(clean_user_feedback(&raw, true), "1. **Bug**: off by one.");
    assert_eq!(
        clean_user_feedback(&raw, false),
        "1. **Bug**: off by one.\n```python\nx\n```"
    );
}

/// The model client against the loopback server.
#[test]
fn client_retries_transient_failures_and_reports_the_rest() {
    use pivot_llm::loopback::{Answer, Failure, LoopbackServer, Rule, Script};
    use pivot_llm::{Cache, Client, ClientConfig, EndpointKind, LlmError};
    use std::time::Duration;
    let rule = |name: &str, answer: Answer, fail_first: Vec<Failure>| Rule {
        name: name.into(),
        contains: vec![name.into()],
        not_contains: vec![],
        endpoint: None,
        ends_with: None,
        body_contains: vec![],
        turns: vec![],
        answer,
        fail_first,
    };
    let fail = |status: Option<u16>, stall_ms: Option<u64>| Failure { status, stall_ms };
    let script = Script {
        api_key: None,
        rules: vec![
            rule(
                "flaky",
                Answer {
                    reply: Some("fine".into()),
                    ..Answer::default()
                },
                vec![
                    fail(Some(429), None),
                    fail(Some(502), None),
                    fail(None, Some(1500)),
                ],
            ),
            rule(
                "garbled",
                Answer {
                    body: Some("<html>oops".into()),
                    ..Answer::default()
                },
                vec![],
            ),
            rule(
                "gone",
                Answer {
                    status: Some(404),
                    ..Answer::default()
                },
                vec![],
            ),
        ],
        default: Answer::default(),
    };
    let server = LoopbackServer::start(script).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ClientConfig::new(server.base_url(), "m");
    cfg.timeout = Duration::from_millis(500);
    cfg.retries = 3;
    cfg.backoff = Duration::from_millis(5);
    cfg.cache = Some(Cache::new(dir.path()));
    let client = Client::new(cfg.clone()).unwrap();

    // 429, 502 and a stall past the timeout, then the answer; the second ask is from the cache.
    assert_eq!(client.complete("flaky").unwrap().text, "fine");
    assert_eq!(server.seen().len(), 4);
    let again = client.complete("flaky").unwrap();
    assert!(again.cached);
    assert_eq!(server.seen().len(), 4);

    // Not JSON: retried, then named as malformed.
    match client.complete("garbled") {
        Err(LlmError::Malformed { reason, .. }) => assert!(reason.contains("not JSON"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server
            .seen()
            .iter()
            .filter(|s| s.prompt == "garbled")
            .count(),
        4
    );
    // 404 is not retried.
    assert!(matches!(
        client.complete("gone"),
        Err(LlmError::Http { status: 404, .. })
    ));
    assert_eq!(
        server.seen().iter().filter(|s| s.prompt == "gone").count(),
        1
    );

    // Raw completions endpoint: the prompt is sent as is.
    let raw = Client::new(ClientConfig {
        kind: EndpointKind::Completions,
        cache: None,
        ..cfg.clone()
    })
    .unwrap();
    assert_eq!(raw.complete("flaky").unwrap().text, "fine");
    assert_eq!(server.seen().last().unwrap().endpoint, "completions");

    // Offline: cache only, and a miss names the model and the prompt.
    let offline = Client::new(ClientConfig {
        offline: true,
        ..cfg
    })
    .unwrap();
    assert_eq!(offline.complete("flaky").unwrap().text, "fine");
    let e = offline.complete("never asked").unwrap_err().to_string();
    assert!(
        e.contains("offline: no cached answer of m (chat)") && e.contains("never asked"),
        "{e}"
    );
}
