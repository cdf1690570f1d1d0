use super::*;
use crate::python::ObjectKind as K;
use serde_json::json;

/// The (kind, rule) pairs read from a sentence, as JSON rules.
fn pairs(sentence: &str) -> Vec<(K, serde_json::Value)> {
    match read(sentence) {
        Ok(r) => r.into_iter().map(|r| (r.kind, r.rule.to_json())).collect(),
        Err(e) => panic!("{sentence:?} not read: {e}"),
    }
}

fn one(sentence: &str) -> (K, serde_json::Value) {
    let p = pairs(sentence);
    assert_eq!(p.len(), 1, "{sentence:?}: {p:?}");
    p.into_iter().next().expect("one")
}

fn skipped(sentence: &str) -> String {
    match read(sentence) {
        Ok(r) => panic!("{sentence:?} read as {r:?}"),
        Err(e) => e,
    }
}

#[test]
fn memorycode_phrasings() {
    let cases: &[(&str, K, serde_json::Value)] = &[
        (
            "always start function names with 'a_'",
            K::Function,
            json!("^a_"),
        ),
        (
            "always start function argument names with 'e_'",
            K::FunctionArgument,
            json!("^e_"),
        ),
        (
            "always end attribute names with '_xt'",
            K::Attribute,
            json!(".*_xt$"),
        ),
        (
            "always end method names with '_md'",
            K::Method,
            json!(".*_md$"),
        ),
        (
            "always include the string 'chx' in variable names",
            K::Variable,
            json!(".*chx"),
        ),
        (
            "always use all UPPERCASE for class names",
            K::Class,
            json!("^[A-Z][A-Z0-9_]*$"),
        ),
        (
            "always use CamelCase for class names",
            K::Class,
            json!("^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$"),
        ),
        (
            "always use snake_case for class names",
            K::Class,
            json!("^[a-z_][a-z0-9_]*$"),
        ),
        (
            "always use annotations for functions",
            K::FunctionAnnotation,
            json!(true),
        ),
        (
            "always use annotations for methods",
            K::MethodAnnotation,
            json!(true),
        ),
        (
            "always include try statements in methods",
            K::MethodTry,
            json!(true),
        ),
        (
            "always include assert statements in functions",
            K::FunctionAssert,
            json!(true),
        ),
        (
            "always use docstrings in methods",
            K::MethodDocstring,
            json!(true),
        ),
        ("always add comments in your code", K::Comment, json!(true)),
        (
            "always import the 'secrets' module even if it is not used",
            K::Import,
            json!(["secrets", true]),
        ),
        (
            "always add the '@count_calls' decorator from the 'pedantic' module to all methods",
            K::MethodDecorator,
            json!(["count_calls", true]),
        ),
        (
            "always add the '@trace_class' decorator from the 'pedantic' module to all classes",
            K::ClassDecorator,
            json!(["trace_class", true]),
        ),
    ];
    for (s, kind, rule) in cases {
        assert_eq!(one(s), (*kind, rule.clone()), "{s}");
    }
    // Where the digit goes and how many: not said.
    let e = skipped("always include a single digit in function names");
    assert!(e.contains("digit"), "{e}");
}

#[test]
fn instruction_file_phrasings() {
    let cases: &[(&str, &[(K, serde_json::Value)])] = &[
        (
            "Use `snake_case` for function and variable names.",
            &[
                (K::Function, json!("^[a-z_][a-z0-9_]*$")),
                (K::Variable, json!("^[a-z_][a-z0-9_]*$")),
            ],
        ),
        (
            "**Always** prefix method names with `do_` (e.g. `do_run`).",
            &[(K::Method, json!("^do_"))],
        ),
        (
            "Class names must be PascalCase.",
            &[(K::Class, json!("^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$"))],
        ),
        (
            "Name classes in CapWords",
            &[(K::Class, json!("^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$"))],
        ),
        (
            "Function names should end with _fn",
            &[(K::Function, json!(".*_fn$"))],
        ),
        (
            "Attribute names are prefixed with `m_`.",
            &[(K::Attribute, json!("^m_"))],
        ),
        (
            "Use the `v_` prefix for variable names.",
            &[(K::Variable, json!("^v_"))],
        ),
        (
            "camelCase for method names",
            &[(K::Method, json!("^[a-z][a-zA-Z0-9]*$"))],
        ),
        (
            "Use snake_case for functions and variables, PascalCase for classes.",
            &[
                (K::Function, json!("^[a-z_][a-z0-9_]*$")),
                (K::Variable, json!("^[a-z_][a-z0-9_]*$")),
                (K::Class, json!("^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$")),
            ],
        ),
        (
            "Never import `pickle`.",
            &[(K::Import, json!(["pickle", false]))],
        ),
        (
            "Do not import the os.path module.",
            &[(K::Import, json!(["os.path", false]))],
        ),
        ("Do not import os.path.", &[]),
        (
            "`yaml` must not be imported.",
            &[(K::Import, json!(["yaml", false]))],
        ),
        (
            "Always use `import logging`.",
            &[(K::Import, json!(["logging", true]))],
        ),
        (
            "Decorate all functions and methods with `@timer`.",
            &[
                (K::FunctionDecorator, json!(["timer", true])),
                (K::MethodDecorator, json!(["timer", true])),
            ],
        ),
        (
            "Every class must be decorated with `@dataclass`.",
            &[(K::ClassDecorator, json!(["dataclass", true]))],
        ),
        (
            "Never use the `@staticmethod` decorator on methods.",
            &[(K::MethodDecorator, json!(["staticmethod", false]))],
        ),
        (
            "Every function must have a docstring.",
            &[(K::FunctionDocstring, json!(true))],
        ),
        (
            "All functions and methods should have docstrings.",
            &[
                (K::FunctionDocstring, json!(true)),
                (K::MethodDocstring, json!(true)),
            ],
        ),
        (
            "Use type hints in all methods.",
            &[(K::MethodAnnotation, json!(true))],
        ),
        (
            "Functions must never contain assert statements.",
            &[(K::FunctionAssert, json!(false))],
        ),
        (
            "Naming: use UPPER_CASE for class names.",
            &[(K::Class, json!("^[A-Z][A-Z0-9_]*$"))],
        ),
        (
            "Include at least one digit in variable names.",
            &[(K::Variable, json!(".*\\d"))],
        ),
        (
            "Start method names with `x_` or `y_`.",
            &[(K::Method, json!("^(?:x_|y_)"))],
        ),
        (
            "Start function names with an underscore.",
            &[(K::Function, json!("^_"))],
        ),
        (
            "Use the prefix `x_` for functions.",
            &[(K::Function, json!("^x_"))],
        ),
        (
            "Please ensure all functions have docstrings.",
            &[(K::FunctionDocstring, json!(true))],
        ),
        (
            "Make sure every method has a docstring.",
            &[(K::MethodDocstring, json!(true))],
        ),
        (
            "Methods must not be decorated with `@property`.",
            &[(K::MethodDecorator, json!(["property", false]))],
        ),
        (
            "Function names must start with `f_`, always.",
            &[(K::Function, json!("^f_"))],
        ),
    ];
    for (s, want) in cases {
        if want.is_empty() {
            // `os.path` unquoted: not a name the reader takes from plain words.
            assert!(read(s).is_err(), "{s} read as {:?}", read(s));
            continue;
        }
        assert_eq!(pairs(s), want.to_vec(), "{s}");
    }
}

#[test]
fn uncheckable_sentences_say_why() {
    let cases: &[(&str, &str)] = &[
        ("Prefix private methods with `_`.", "subset"),
        ("Use UPPER_CASE for constants.", "constants"),
        ("Use snake_case for module names.", "module"),
        ("Start method argument names with `a_`.", "method arguments"),
        ("Never start function names with `tmp_`.", "look-ahead"),
        ("Use camel case for variables.", "camel case"),
        ("Use kebab-case for function names.", "kebab"),
        (
            "Start function names with `x_` (e.g. `run`).",
            "example `run`",
        ),
        (
            "Use snake_case for functions (not `get_user`).",
            "counter-example",
        ),
        (
            "Annotate every function argument.",
            "not complete annotations",
        ),
        (
            "Add type hints to all function arguments.",
            "every argument",
        ),
        (
            "Use `from __future__ import annotations`.",
            "`from` imports",
        ),
        ("Public functions need docstrings.", "subset"),
        ("Classes must have docstrings.", "class docstrings"),
        ("Add comments to every function.", "per file"),
        ("Keep lines under 100 characters.", "layout"),
        ("Run pytest before committing.", "tests"),
        ("Use GitHub for version control.", "no rule form"),
        (
            "Add the `@retry(3)` decorator to all functions.",
            "arguments",
        ),
        ("Use docstrings.", "which objects"),
        ("never use a VPN when working remotely", "no rule form"),
        ("Use camelCase in JavaScript code.", "`JavaScript code`"),
        (
            "Use snake_case for functions but not for classes.",
            "condition (\"but",
        ),
        (
            "Use snake_case for variables unless they are constants.",
            "condition (\"unless",
        ),
        ("Start method names with `x_` and `y_`.", "naming rule"),
    ];
    for (s, why) in cases {
        let e = skipped(s);
        assert!(e.contains(why), "{s}: {e}");
    }
}

/// MemoryCode's fillers are instructions about everything but the code: none is read.
#[test]
fn memorycode_fillers_give_nothing() {
    for s in [
        "use Vim as the preferred IDE",
        "use Microsoft Teams for video calls",
        "always use a virtual environment",
        "never use the GPUs for training neural networks but use the TPUs instead",
        "always write long and descriptive commit messages",
        "use GitHub as the main version control system",
        "Do not commit directly to the dev branch",
        "always use a linter",
        "never use a formatter when writing code",
        "always use a pre-commit hook",
        "Use GitHub Copilot as the coding assistant",
        "never use a debugger but only print statements",
        "use two monitors when coding",
        "use Slack for communication",
        "always take a break every 50 minutes",
        "communicate with the team only when asked",
        "always set up CI/CD pipelines",
        "use Jira as the project management tool",
        "always do pair programming with a colleague",
        "use the company phone for work calls",
    ] {
        skipped(s);
    }
}

/// The case regexes give the dataset's own verdicts on every Python-name-like string up
/// to six characters over a small alphabet (the dataset's: MemoryCode's topics.json).
#[test]
fn case_regexes_agree_with_memorycode_on_names() {
    let pairs = [
        (
            "always use all UPPERCASE for class names",
            r"\b[A-Z][A-Z0-9_]*\b",
        ),
        (
            "always use CamelCase for class names",
            r"^[A-Z][a-z0-9]*((\d|[a-z])[A-Z\d]*[a-z0-9]*)*$",
        ),
        ("always use snake_case for class names", r"^[a-z0-9_]*$"),
    ];
    let alphabet = ['A', 'B', 'a', 'b', '0', '1', '_'];
    let mut names = vec![String::new()];
    let mut all = Vec::new();
    for _ in 0..6 {
        names = names
            .iter()
            .flat_map(|n| alphabet.iter().map(move |c| format!("{n}{c}")))
            .collect();
        all.extend(
            names
                .iter()
                .filter(|n| !n.starts_with(|c: char| c.is_ascii_digit()))
                .cloned(),
        );
    }
    for (sentence, theirs) in pairs {
        let mine = read(sentence).expect("read").remove(0).rule;
        let theirs = Rule::regex(theirs).expect("valid");
        for n in &all {
            assert_eq!(mine.matches(n), theirs.matches(n), "{sentence}: {n}");
        }
    }
}

const AGENTS: &str = "# Agents\n\nUse snake_case for function names. Run `make test` first.\n\n```\nnever import os\n```\n- Never import `pickle`.\n- Never import `pickle`!\n";

#[test]
fn a_file_gives_proposals_with_citations_and_skips_the_rest() {
    let got = import(&[Source {
        name: "AGENTS.md".into(),
        text: AGENTS.into(),
    }]);
    let summary: Vec<_> = got
        .proposed
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.sources
                    .iter()
                    .map(|c| c.at.to_string())
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("function-snake-case", vec!["AGENTS.md:3".to_string()]),
            ("method-snake-case", vec!["AGENTS.md:3".to_string()]),
            (
                "no-import-pickle",
                vec!["AGENTS.md:8".into(), "AGENTS.md:9".into()]
            ),
        ]
    );
    let skipped: Vec<_> = got
        .skipped
        .iter()
        .map(|s| (s.at.to_string(), s.text.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("AGENTS.md:1".to_string(), "# Agents"),
            ("AGENTS.md:3".into(), "Run `make test` first."),
            ("AGENTS.md:5-7".into(), "``` … (3 lines)"),
        ]
    );
    // The TOML loads as a pivots.toml, with the same pivots.
    let toml = got.to_toml();
    let ledger = Ledger::from_toml(&toml, "proposed").expect(&toml);
    assert_eq!(ledger.pivots.len(), 3);
    assert_eq!(ledger.pivots[2].versions[0].rule, got.proposed[2].rule);
    assert!(
        toml.contains("# AGENTS.md:8\n# AGENTS.md:9\n[[pivot]]\nid = \"no-import-pickle\""),
        "{toml}"
    );
}

#[test]
fn merge_keeps_the_file_skips_known_rules_and_renames_taken_ids() {
    let got = import(&[Source {
        name: "CLAUDE.md".into(),
        text: "Use snake_case for function names.\nNever import `pickle`.\nEvery function must have a docstring.\n".into(),
    }]);
    let existing = "# ours\n[[pivot]]\nid = \"no-import-pickle\"\n[[pivot.version]]\nkind = \"import\"\nrule = [\"pickle\", false]\n\n[[pivot]]\nid = \"function-docstring\"\n[[pivot.version]]\nkind = \"class\"\nrule = \"^C\"";
    let m = got.merge_into(existing, "pivots.toml").expect("merges");
    assert!(m.text.starts_with(existing));
    // In a team's file a function is also a method.
    assert_eq!(
        m.added,
        [
            "function-snake-case",
            "method-snake-case",
            "function-docstring-2",
            "method-docstring"
        ]
    );
    assert_eq!(
        m.already,
        [(
            "no-import-pickle".to_string(),
            "no-import-pickle".to_string()
        )]
    );
    assert_eq!(
        Ledger::from_toml(&m.text, "t").expect("loads").pivots.len(),
        6
    );
    // Not a pivots.toml: refused.
    assert!(got
        .merge_into("[package]\nname = \"x\"\n", "Cargo.toml")
        .is_err());
    // Empty: just the pivots.
    let fresh = got.merge_into("", "pivots.toml").expect("merges");
    assert_eq!(fresh.added.len(), 5);
}

#[test]
fn toml_strings_round_trip_and_never_hold_a_workflow_command() {
    for s in [
        "plain",
        "a \"quoted\" \\ back",
        "line\nbreak\t\u{1b}[31m",
        "##[error]x",
        "\u{202e}rtl",
    ] {
        let t = toml_string(s);
        assert!(!t.contains("##[") && !t.contains('\n'), "{t}");
        let v: toml::Value = toml::from_str(&format!("k = {t}")).expect(&t);
        assert_eq!(v["k"].as_str(), Some(s));
    }
}

/// Proposals of a team file, as (kind, rule JSON), and its skipped reasons.
fn team_file(text: &str) -> (Vec<(K, serde_json::Value)>, Vec<String>) {
    let got = import(&[Source {
        name: "AGENTS.md".into(),
        text: text.into(),
    }]);
    (
        got.proposed
            .iter()
            .map(|p| (p.kind, p.rule.to_json()))
            .collect(),
        got.skipped.iter().map(|s| s.reason.clone()).collect(),
    )
}

#[test]
fn headings_and_labels_give_context_in_a_team_file() {
    // A negating heading negates a bare imperative; a sentence with its own modal keeps it.
    let (p, _) =
        team_file("## Never\n\n- Import `pickle`\n- All functions should have type hints\n");
    assert_eq!(
        p,
        [
            (K::Import, json!(["pickle", false])),
            (K::FunctionAnnotation, json!(true)),
            (K::MethodAnnotation, json!(true)),
        ]
    );
    // Another language's section, a tests-only one, front matter: nothing read as Python.
    let (p, why) = team_file("### TypeScript\n\n- Use camelCase for function names\n\n### Tests\n\n- Every function must have a docstring\n");
    assert!(p.is_empty(), "{p:?}");
    assert!(why.iter().any(|w| w.contains("typescript")), "{why:?}");
    assert!(why.iter().any(|w| w.contains("tests only")), "{why:?}");
    let (p, why) = team_file("---\ndescription: style\nglobs: *.ts\nalwaysApply: false\n---\n- Use snake_case for functions.\n");
    assert!(
        p.is_empty() && why[0] == "front matter: not an instruction",
        "{why:?}"
    );
    // Under "NEVER:", a noun phrase is no instruction of its own.
    let (p, _) = team_file("NEVER:\n- Functions in camelCase\n");
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn team_files_mean_pep8_and_every_def() {
    let pascal = "^_*[A-Z][a-zA-Z0-9]*$";
    let (p, _) = team_file("- **Classes**: `PascalCase`\n- Private members take a leading `_`\n");
    assert_eq!(p, [(K::Class, json!(pascal))]);
    let rule = Rule::regex(pascal).expect("valid");
    for ok in ["MCPClient", "JSONEncoder", "_AgentAsTool", "Point3D"] {
        assert!(rule.matches(ok), "{ok}");
    }
    assert!(!rule.matches("snake_Case") && !rule.matches("lower"));
    // A variable rule leaves UPPER_CASE constants alone when the file says so.
    let (p, _) =
        team_file("- Functions and variables: `snake_case`\n- Constants: `UPPER_SNAKE_CASE`\n");
    let var = p
        .iter()
        .find(|(k, _)| *k == K::Variable)
        .expect("a variable rule");
    let var = Rule::from_json(&var.1).expect("valid");
    assert!(var.matches("max_size") && var.matches("MAX_SIZE") && !var.matches("maxSize"));
    assert_eq!(
        p.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        [K::Function, K::Method, K::Variable]
    );
    // Without a constants rule, a variable is snake_case or, as PEP 8 names type aliases
    // and TypeVars, CapWords.
    let (p, _) = team_file("Use snake_case for variables.\n");
    assert_eq!(
        p,
        [(
            K::Variable,
            json!("^(?:[a-z_][a-z0-9_]*|_*[A-Z][a-zA-Z0-9]*)$")
        )]
    );
    let var = Rule::from_json(&p[0].1).expect("valid");
    assert!(var.matches("JsonDict") && !var.matches("MAX_SIZE") && !var.matches("maxSize"));
    // Slash and comma lists, and the parts no kind selects listed without sinking the rest.
    for s in [
        "- **Variables/Functions**: `snake_case`",
        "snake_case for functions/variables, PascalCase for classes",
    ] {
        let (p, _) = team_file(s);
        let kinds: Vec<K> = p.iter().map(|(k, _)| *k).collect();
        assert!(
            kinds.contains(&K::Variable)
                && kinds.contains(&K::Function)
                && kinds.contains(&K::Method),
            "{s}: {p:?}"
        );
    }
    for s in [
        "Use type hints for all function signatures.",
        "Annotate all functions and methods with typehints",
        "Type hints for all function parameters and return types",
    ] {
        let (p, _) = team_file(s);
        assert_eq!(
            p,
            [
                (K::FunctionAnnotation, json!(true)),
                (K::MethodAnnotation, json!(true))
            ],
            "{s}"
        );
    }
    // Parameters alone are not every function annotated: `def main():` has none to annotate.
    let (p, _) = team_file("Use type hints for all function parameters.\n");
    assert!(p.is_empty(), "{p:?}");
    let (p, why) = team_file("Write docstrings for modules, classes, and functions.\n");
    assert_eq!(
        p,
        [
            (K::FunctionDocstring, json!(true)),
            (K::MethodDocstring, json!(true))
        ]
    );
    assert!(why.iter().any(|w| w.contains("module")), "{why:?}");
    assert!(
        why.iter().any(|w| w.contains("class docstrings")),
        "{why:?}"
    );
    let (p, _) = team_file("- Google-style docstrings on all functions\n");
    assert_eq!(
        p,
        [
            (K::FunctionDocstring, json!(true)),
            (K::MethodDocstring, json!(true))
        ]
    );
    // MemoryCode's sentence reader is unchanged: one kind, its own CamelCase regex.
    assert_eq!(
        one("Use CamelCase for class names."),
        (K::Class, json!("^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$"))
    );
    assert_eq!(pairs("Every function must have a docstring.").len(), 1);
}

#[test]
fn skip_reasons_name_the_rule_form_not_a_substring() {
    assert!(skipped("This is important for everyone.").starts_with("no rule form"));
    assert!(skipped("Handle edge cases carefully.").starts_with("no rule form"));
    assert!(skipped("Sort the imports.").starts_with("imports"));
}

#[test]
fn a_qualifier_of_the_first_part_holds_for_the_list() {
    // "public" has docstring and annotation kinds of its own; "private" has none.
    let (p, _) = team_file("- Docstrings on all public classes and functions\n");
    assert_eq!(
        p,
        [
            (K::PublicFunctionDocstring, json!(true)),
            (K::PublicMethodDocstring, json!(true)),
        ]
    );
    let (p, _) = team_file("- Use snake_case for public functions and variables\n");
    assert!(p.is_empty(), "{p:?}");
    let (p, _) = team_file("- Use snake_case for private functions and variables\n");
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn a_negation_inside_a_longer_label_does_not_negate_its_items() {
    for text in [
        "Follow these rules and don't skip them:\n- Import `logging`\n",
        "## Do's and Don'ts\n\n- Import `logging`\n",
    ] {
        let (p, _) = team_file(text);
        assert_eq!(p, [(K::Import, json!(["logging", true]))], "{text}");
    }
    for label in [
        "## Don't do this",
        "## Things to avoid",
        "## Anti-patterns (NEVER DO)",
        "## Do NOT",
        "**Never:**",
        "### What not to do",
    ] {
        let (p, _) = team_file(&format!("{label}\n\n- Import `pickle`\n"));
        assert_eq!(p, [(K::Import, json!(["pickle", false]))], "{label}");
    }
}

#[test]
fn two_features_in_one_team_sentence_are_read_each() {
    let (p, _) = team_file("- All functions must have docstrings and type hints.\n");
    assert_eq!(
        p,
        [
            (K::FunctionDocstring, json!(true)),
            (K::MethodDocstring, json!(true)),
            (K::FunctionAnnotation, json!(true)),
            (K::MethodAnnotation, json!(true)),
        ]
    );
    let (p, _) = team_file("- Type hints and docstrings for all public functions\n");
    assert_eq!(
        p,
        [
            (K::PublicFunctionAnnotation, json!(true)),
            (K::PublicMethodAnnotation, json!(true)),
            (K::PublicFunctionDocstring, json!(true)),
            (K::PublicMethodDocstring, json!(true)),
        ]
    );
}
