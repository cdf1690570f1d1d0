//! What the editor shows: diagnostics, hover and quick fixes as the sessions of a
//! conversation replay, incremental edits on lines with emoji and CJK (positions in UTF-16),
//! pivots.toml read and reloaded on save, and bracketed lines that CPython accepts.

use super::dialogue_1;
use crate::support::lsp::{file_uri, fixture, Client, Doc};
use pivot_python::pivots::{check, Rule, Verdict};
use pivot_python::python::{Module, ObjectKind};
use serde_json::{json, Value};

/// (start line, start col, end line, end col, code) of each diagnostic.
fn ranges(diags: &[Value]) -> Vec<(u64, u64, u64, u64, String)> {
    diags
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn r(l0: u64, c0: u64, l1: u64, c1: u64, code: &str) -> (u64, u64, u64, u64, String) {
    (l0, c0, l1, c1, code.to_string())
}

fn code_actions(c: &mut Client, doc: &Doc, needle: &str) -> Vec<Value> {
    c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": doc.uri}, "range": doc.range_of(needle), "context": {"diagnostics": []}}),
    )
    .unwrap()
    .as_array()
    .unwrap()
    .clone()
}

/// Apply the quick fix whose title starts with `title` and return the diagnostics after it.
fn apply_fix(c: &mut Client, doc: &mut Doc, needle: &str, title: &str) -> Vec<Value> {
    let actions = code_actions(c, doc, needle);
    let action = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with(title))
        .unwrap_or_else(|| panic!("no action {title:?} among {actions:#?}"));
    assert_eq!(action["kind"], "quickfix");
    let edits = action["edit"]["changes"][&doc.uri]
        .as_array()
        .unwrap()
        .clone();
    doc.edit(c, &edits);
    c.diagnostics(&doc.uri)
}

fn verdict(src: &str, kind: ObjectKind, rule: Value) -> Verdict {
    let m = Module::parse(src);
    check(&m, src, kind, &Rule::from_json(&rule).unwrap()).verdict
}

#[test]
fn replay_sessions_diagnostics_hover_and_quick_fixes() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1), "no conversation yet");

    let info = c
        .command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["count"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(c.session_changed(), (0, 3));

    let text = std::fs::read_to_string(fixture("fixtures/lsp/session_demo.py")).unwrap();
    let mut doc = Doc::open(&mut c, "demo.py", &text);
    // Session 0: mc-100 `^f_.*` on function names, mc-101 docstrings in functions.
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [r(5, 4, 5, 7, "mc-100"), r(10, 4, 10, 9, "mc-101")]
    );
    assert_eq!(d[0]["severity"], 2);
    assert_eq!(d[0]["source"], "pivot");
    let msg = d[0]["message"].as_str().unwrap();
    for part in [
        "`add`",
        "always start function names with 'f_'",
        "`^f_.*`",
        "session 0",
    ] {
        assert!(msg.contains(part), "{part:?} not in {msg:?}");
    }

    let hover = doc.hover(&mut c, "sub(");
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("**mc-100**") && md.contains("✓ satisfies it"),
        "{md}"
    );
    assert!(
        md.contains("**mc-101**") && md.contains("✗ breaks it (missing)"),
        "{md}"
    );
    assert_eq!(hover["range"], doc.range_of("f_sub"));

    let active = c.command("pivot.pivots.active", Value::Null).unwrap();
    let ids: Vec<&str> = active["pivots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mc-100", "mc-101"]);
    assert_eq!(active["pivots"][0]["rule"], "^f_.*");
    assert_eq!(active["pivots"][0]["session"], 0);

    let t = c
        .command("pivot.session.transcript", json!({"index": 2}))
        .unwrap();
    let md = t["markdown"].as_str().unwrap();
    let (changes, talk) = (
        md.find("**updated** `mc-100`").unwrap(),
        md.find("New convention").unwrap(),
    );
    assert!(changes < talk, "pivot changes come first:\n{md}");

    // Session 1 is a filler: same pivots, republished.
    let info = c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["moved"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(c.session_changed(), (1, 3));
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(5, 4, 5, 7, "mc-100"), r(10, 4, 10, 9, "mc-101")]
    );

    // Session 2: mc-100 becomes `.*_x$`, mc-102 asks for @timer on methods.
    c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (2, 3));
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [
            r(1, 8, 1, 13, "mc-102"),
            r(5, 4, 5, 7, "mc-100"),
            r(10, 4, 10, 9, "mc-100"),
            r(10, 4, 10, 9, "mc-101"),
        ]
    );
    let msg = d[1]["message"].as_str().unwrap();
    assert!(
        msg.contains("always end function names with '_x'") && msg.contains("session 2"),
        "{msg}"
    );

    // At the last session `next` stays put and sends nothing.
    let info = c.command("pivot.session.next", Value::Null).unwrap();
    assert_eq!(
        (info["index"].as_u64(), info["moved"].as_bool()),
        (Some(2), Some(false))
    );
    c.assert_quiet(200);

    // Quick fixes, each re-checked with the core.
    let d = apply_fix(&mut c, &mut doc, "add(", "Rename `add` to `add_x`");
    assert!(!ranges(&d).contains(&r(5, 4, 5, 7, "mc-100")));
    assert_eq!(d.len(), 3);
    assert!(doc.text.contains("def add_x(a, b):"));

    let d = apply_fix(
        &mut c,
        &mut doc,
        "count",
        "Add `@timer` and `from pedantic import timer`",
    );
    assert!(doc
        .text
        .starts_with("from pedantic import timer\nclass Counter:\n    @timer\n    def count"));
    assert_eq!(
        verdict(
            &doc.text,
            ObjectKind::MethodDecorator,
            json!(["timer", true])
        ),
        Verdict::Pass
    );
    // Everything below moved down two lines.
    assert_eq!(
        ranges(&d),
        [r(12, 4, 12, 9, "mc-100"), r(12, 4, 12, 9, "mc-101")]
    );

    apply_fix(&mut c, &mut doc, "f_sub", "Rename `f_sub` to `f_sub_x`");
    let d = apply_fix(&mut c, &mut doc, "f_sub_x", "Add a docstring to `f_sub_x`");
    assert_eq!(d, Vec::<Value>::new(), "every pivot holds: {}", doc.text);
    assert_eq!(
        verdict(&doc.text, ObjectKind::Function, json!(".*_x$")),
        Verdict::Pass
    );
    assert_eq!(
        verdict(&doc.text, ObjectKind::FunctionDocstring, json!(true)),
        Verdict::Pass
    );

    // The server's text is the editor's.
    let seen = c
        .command("pivot.document.inspect", json!({"uri": doc.uri}))
        .unwrap();
    assert_eq!(seen["text"], doc.text.as_str());
    assert_eq!(seen["version"], doc.version);
    c.shutdown();
}

#[test]
fn incremental_edits_on_lines_with_emoji_and_cjk() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    c.command(
        "pivot.pivots.add",
        json!({"id": "v", "kind": "variable", "rule": "^v_", "text": "start variable names with v_"}),
    )
    .unwrap();
    let mut doc = Doc::open(
        &mut c,
        "emoji.py",
        "x = \"😀\"; y_名 = 1  # 名前 😀\nz = 2\n",
    );
    // `x = "😀"; ` is 10 UTF-16 units (the emoji counts 2); `y_名` is 3.
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(0, 0, 0, 1, "v"), r(0, 10, 0, 13, "v"), r(1, 0, 1, 1, "v")]
    );

    let at = |l, ch| json!({"line": l, "character": ch});
    let ins =
        |l, ch, t: &str| json!({"range": {"start": at(l, ch), "end": at(l, ch)}, "newText": t});
    doc.edit(&mut c, &[ins(0, 10, "v_")]);
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(0, 0, 0, 1, "v"), r(1, 0, 1, 1, "v")]
    );

    // Two changes in one notification: the emoji (2 units) becomes two CJK chars, and z
    // gets its prefix; the hover range after them is in UTF-16 units.
    let emoji = json!({"range": {"start": at(0, 5), "end": at(0, 7)}, "newText": "名前"});
    doc.edit(&mut c, &[emoji, ins(1, 0, "v_")]);
    assert!(
        doc.text
            .starts_with("x = \"名前\"; v_y_名 = 1  # 名前 😀\nv_z = 2\n"),
        "{}",
        doc.text
    );
    let d = c.diagnostics(&doc.uri);
    assert_eq!(ranges(&d), [r(0, 0, 0, 1, "v")]);
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": doc.uri}, "position": at(0, 12)}),
        )
        .unwrap();
    assert_eq!(
        hover["range"],
        json!({"start": at(0, 10), "end": at(0, 15)})
    );

    // A newline typed after the emoji comment, then a fix on the first line.
    doc.edit(&mut c, &[ins(0, 28, "\nw😀 = 3")]);
    let d = c.diagnostics(&doc.uri);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["source"], "python", "an emoji is no identifier: {d:?}");
    let del = json!({"range": {"start": at(1, 1), "end": at(1, 3)}, "newText": ""});
    doc.edit(&mut c, &[del, ins(0, 0, "v_")]);
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), [r(1, 0, 1, 1, "v")]);

    let seen = c
        .command("pivot.document.inspect", json!({"uri": doc.uri}))
        .unwrap();
    assert_eq!(seen["text"], doc.text.as_str());
    c.shutdown();
}

#[test]
fn workspace_pivots_toml_is_read_and_reloaded_on_save() {
    let root = tempfile::tempdir().unwrap();
    let ws = fixture("fixtures/lsp/workspace");
    for f in ["pivots.toml", "inventory.py"] {
        std::fs::copy(ws.join(f), root.path().join(f)).unwrap();
    }
    let mut c = Client::in_memory(root.path());
    // No conversation: the latest session of pivots.toml is current.
    assert_eq!(c.session_changed(), (1, 2));
    let text = std::fs::read_to_string(root.path().join("inventory.py")).unwrap();
    let doc = Doc::open(&mut c, "inventory.py", &text);
    let d = c.diagnostics(&doc.uri);
    assert_eq!(
        ranges(&d),
        [
            r(0, 0, 0, 31, "imports"),
            r(4, 6, 4, 15, "classes"),
            r(9, 4, 9, 13, "fn-prefix")
        ]
    );
    c.command("pivot.session.previous", Value::Null).unwrap();
    assert_eq!(c.session_changed(), (0, 2));
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(4, 6, 4, 15, "classes"), r(9, 4, 9, 13, "fn-prefix")]
    );

    // Edit and save pivots.toml: the class rule goes, diagnostics follow.
    let toml = root.path().join("pivots.toml");
    let edited = std::fs::read_to_string(&toml)
        .unwrap()
        .replace(
            "[[pivot]]\nid = \"classes\"",
            "[[pivot]]\nid = \"classes-off\"",
        )
        .replace("rule = \"^[A-Z][a-zA-Z0-9]*$\"", "rule = \".*\"");
    std::fs::write(&toml, edited).unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": file_uri(&toml)}}),
    );
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(9, 4, 9, 13, "fn-prefix")]
    );

    // A broken pivots.toml is shown and the pivots read before stay.
    std::fs::write(
        &toml,
        "[[pivot]]\nid = \"x\"\n[[pivot.version]]\nkind = \"fn\"\nrule = true\n",
    )
    .unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": file_uri(&toml)}}),
    );
    let shown = c.expect("window/showMessage");
    let msg = shown["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("pivots.toml") && msg.contains("unknown object kind \"fn\""),
        "{msg}"
    );
    c.assert_quiet(200);
    c.shutdown();
}

#[test]
fn a_bracketed_line_indented_less_than_its_block_is_no_syntax_error_in_the_editor() {
    // CPython ignores indentation inside brackets; tree-sitter reads `  2)` as a dedent.
    // `check` and the scorer re-parse such a text with the bracketed lines joined; the
    // editor's document must give the same verdict, on open and after edits.
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    assert_eq!(c.session_changed(), (0, 1));
    let text = "def compute():\n    x = (1 +\n  2)\n    return x\n\n\ndef other():\n    return 1\n";
    let mut doc = Doc::open(&mut c, "joined.py", text);
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    // An edit elsewhere (the fast path's territory) and one on the bracketed line itself.
    let at = doc.at("return 1");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "y = 2\n    "})],
    );
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    let at = doc.at("2)");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "3 + "})],
    );
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), vec![]);
    // A real error is still one.
    let at = doc.at("return x");
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at, "end": at}, "newText": "return ("})],
    );
    let d = ranges(&c.diagnostics(&doc.uri));
    assert_eq!(d.len(), 1, "{d:?}");
    c.shutdown();
}

/// `didChange` only edits the text; the analysis and the publish follow in the background.
/// A burst of edits typed faster than they are analysed: a request sent right after the last
/// edit reads that edit, the publishes come in version order, and the last one is the last
/// edit's, with no stale publish after it.
#[test]
fn a_burst_of_edits_publishes_in_order_and_requests_read_the_last_edit() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::in_memory(root.path());
    c.session_changed();
    c.command("pivot.conversation.open", json!({"path": dialogue_1()}))
        .unwrap();
    c.session_changed();
    // Session 0: mc-100 `^f_.*` on function names.
    let mut doc = Doc::open(
        &mut c,
        "burst.py",
        "def g(x):\n    \"\"\"Doc.\"\"\"\n    return x\n",
    );
    assert_eq!(ranges(&c.diagnostics(&doc.uri)), [r(0, 4, 0, 5, "mc-100")]);
    let at = |col: u64| json!({"line": 0, "character": col});
    for _ in 0..40 {
        doc.edit(
            &mut c,
            &[json!({"range": {"start": at(4), "end": at(4)}, "newText": "a"})],
        );
    }
    doc.edit(
        &mut c,
        &[json!({"range": {"start": at(4), "end": at(4)}, "newText": "f_"})],
    );
    let last = doc.version;
    let hover = doc.hover(&mut c, "g(x)");
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("**mc-100**") && md.contains("✓ satisfies it"),
        "{md}"
    );
    assert_eq!(
        hover["range"],
        doc.range_of(&format!("f_{}g", "a".repeat(40)))
    );
    let mut versions = Vec::new();
    while versions.last() != Some(&last) {
        let m = c.expect("textDocument/publishDiagnostics");
        assert_eq!(m["params"]["uri"], doc.uri.as_str());
        let v = m["params"]["version"].as_i64().unwrap();
        let n = m["params"]["diagnostics"].as_array().unwrap().len();
        assert_eq!(n, usize::from(v != last), "version {v}: {m}");
        versions.push(v);
    }
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(
        c.count("textDocument/publishDiagnostics", 300),
        0,
        "after {versions:?}"
    );
    eprintln!(
        "{} edits, {} publishes: {versions:?}",
        last - 1,
        versions.len()
    );
    c.shutdown();
}

#[test]
fn a_scoped_pivot_and_the_suppress_on_this_line_quick_fix() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("tests")).unwrap();
    std::fs::write(
        root.path().join("pivots.toml"),
        "[[pivot]]\nid = \"fn-prefix\"\nexclude = [\"tests/\"]\n[[pivot.version]]\nkind = \"function\"\nrule = \"^f_\"\n",
    )
    .unwrap();
    let mut c = Client::in_memory(root.path());
    c.session_changed();
    let src = "def add(a, b):\n    return a + b\n";
    // Out of the pivot's scope: nothing to show.
    let test = Doc::open(&mut c, "tests/test_add.py", src);
    assert_eq!(c.diagnostics(&test.uri), Vec::<Value>::new());
    let mut doc = Doc::open(&mut c, "calc.py", src);
    assert_eq!(
        ranges(&c.diagnostics(&doc.uri)),
        [r(0, 4, 0, 7, "fn-prefix")]
    );
    let actions = code_actions(&mut c, &doc, "add(");
    let suppress = actions
        .iter()
        .find(|a| a["title"] == "Suppress `fn-prefix` on this line")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_eq!(
        suppress["isPreferred"], false,
        "the rename stays the preferred fix"
    );
    let d = apply_fix(&mut c, &mut doc, "add(", "Suppress `fn-prefix`");
    assert_eq!(d, Vec::<Value>::new(), "{}", doc.text);
    assert!(
        doc.text
            .starts_with("def add(a, b):  # pivot: ignore[fn-prefix]\n"),
        "{}",
        doc.text
    );
    c.shutdown();
}
