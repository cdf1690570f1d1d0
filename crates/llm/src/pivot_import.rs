//! `pivots import --model`: the sentences the deterministic reader left unread, asked of an
//! OpenAI-compatible model one at a time. Nothing the model says is taken on trust: its
//! rule must be in one of the rule forms, on an object kind that form applies to (a regex
//! compiles), and it must accept every example the model gives and reject every
//! counter-example (names for a regex, Python code checked as the editor checks it for the
//! other forms), with at least one of each. What passes is proposed for review, marked
//! `proposed = "model"`; what does not is listed with the reason.

use super::{ChatMessage, Client, Sampling};
use pivot_python::pivots::import::Reading;
use pivot_python::pivots::{check, Rule, Verdict};
use pivot_python::python::{Module, ObjectKind as K};
use rayon::prelude::*;
use serde_json::Value;

/// The request for one sentence.
pub fn prompt(sentence: &str) -> String {
    let kinds: Vec<&str> = K::ALL.iter().map(|k| k.name()).collect();
    format!(
        "You turn one coding instruction about Python code into a rule a checker verifies, \
or say that no rule form can check it.\n\n\
Object kinds: {kinds}. A function is a def outside a class; a method is a def inside a class \
(dunder methods are not methods; __init__'s self.x assignments are the attributes).\n\n\
Rule forms:\n\
- a regular expression (a JSON string) that every name of the kind must match at its start, \
as Python's re.match (add $ to anchor the end); kinds: function, method, class, variable, \
attribute, function argument (for function arguments and attributes only the first name of \
each function or __init__ is tested);\n\
- true or false: every object of the kind must have one, or none may; kinds: function \
docstring, method docstring, function try, method try, function assert, method assert, \
function annotation, method annotation (at least one annotation), function decorator, method \
decorator, class decorator, comment (the file has a # comment);\n\
- [\"name\", true] or [\"name\", false]: the decorator (function decorator, method decorator, \
class decorator; its last dotted name) or the module (import; `import name` statements only, \
not `from x import y`) must be present or absent.\n\n\
Answer with one JSON object and nothing else, either\n\
{{\"checkable\": true, \"kind\": \"<object kind>\", \"rule\": <rule>, \"examples\": [...], \
\"counter_examples\": [...]}}\n\
where, for a regular expression, examples are names that follow the instruction and \
counter_examples names that break it, and for the other forms, short Python modules that \
follow it and modules that break it (at least one of each); or\n\
{{\"checkable\": false, \"reason\": \"<why no rule form says it>\"}}\n\n\
Instruction: {sentence}",
        kinds = kinds.join(", ")
    )
}

/// Ask the model about each sentence (in parallel, as the client's concurrency allows):
/// the validated rules, or why there are none.
pub fn ask_all(client: &Client, sentences: &[&str]) -> Vec<Result<Vec<Reading>, String>> {
    sentences
        .par_iter()
        .map(|s| {
            let messages = [ChatMessage::new("user", &prompt(s))];
            let sampling = Sampling {
                temperature: Some(0.0),
                top_p: None,
            };
            match client.chat_messages(&messages, sampling) {
                Ok(c) => validate(&c.text),
                Err(e) => Err(format!("the model request failed: {e}")),
            }
        })
        .collect()
}

/// The model's answer, read and checked.
pub fn validate(answer: &str) -> Result<Vec<Reading>, String> {
    let rejected = |why: String| format!("the model's rule was rejected: {why}");
    let json = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => &answer[a..=b],
        _ => return Err(rejected("no JSON object in its answer".into())),
    };
    let v: Value =
        serde_json::from_str(json).map_err(|e| rejected(format!("unreadable JSON: {e}")))?;
    if v["checkable"] == Value::Bool(false) {
        let reason = v["reason"].as_str().unwrap_or("no reason given");
        return Err(format!("the model: not checkable: {reason}"));
    }
    if v["checkable"] != Value::Bool(true) {
        return Err(rejected("`checkable` is neither true nor false".into()));
    }
    let kind_name = v["kind"].as_str().unwrap_or("");
    let kind =
        K::from_name(kind_name).ok_or_else(|| rejected(format!("unknown kind {kind_name:?}")))?;
    let rule = Rule::from_json(&v["rule"]).map_err(|e| rejected(e.to_string()))?;
    let fits = match &rule {
        Rule::Regex { .. } => matches!(
            kind,
            K::Function | K::Method | K::Class | K::Variable | K::Attribute | K::FunctionArgument
        ),
        Rule::Presence(_) => !matches!(
            kind,
            K::Function
                | K::Method
                | K::Class
                | K::Variable
                | K::Attribute
                | K::FunctionArgument
                | K::Import
        ),
        Rule::Member { name, .. } => {
            matches!(
                kind,
                K::FunctionDecorator | K::MethodDecorator | K::ClassDecorator | K::Import
            ) && !name.is_empty()
        }
    };
    if !fits {
        return Err(rejected(format!(
            "a rule {} does not apply to `{kind}`",
            rule.describe()
        )));
    }
    let strings = |key: &str| -> Vec<String> {
        (v[key].as_array().into_iter().flatten())
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect()
    };
    let (examples, counter) = (strings("examples"), strings("counter_examples"));
    if examples.is_empty() || counter.is_empty() {
        return Err(rejected(
            "it needs at least one example and one counter-example".into(),
        ));
    }
    // A regex is matched against the names; code is checked, and must pass (an example) or
    // fail (a counter-example): code without the objects proves nothing.
    let verdict = |e: &str| -> Result<Verdict, String> {
        if let Rule::Regex { .. } = rule {
            return Ok(if rule.matches(e) {
                Verdict::Pass
            } else {
                Verdict::Fail
            });
        }
        let module = Module::parse(e);
        if module.syntax_error.is_some() {
            return Err(rejected(format!("its example {e:?} is not valid Python")));
        }
        Ok(check(&module, e, kind, &rule).verdict)
    };
    for e in &examples {
        let v = verdict(e)?;
        if v != Verdict::Pass {
            return Err(rejected(format!(
                "{} gives {v:?} on its own example {e:?}",
                rule.describe()
            )));
        }
    }
    for e in &counter {
        let v = verdict(e)?;
        if v != Verdict::Fail {
            return Err(rejected(format!(
                "{} gives {v:?} on its own counter-example {e:?}",
                rule.describe()
            )));
        }
    }
    Ok(vec![Reading {
        id: format!("model-{}", kind.name().replace(' ', "-")),
        kind,
        rule,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_rules_that_hold_on_their_own_examples_are_taken() {
        let ok = |v: Value| validate(&format!("```json\n{v}\n```"));
        let r = ok(
            json!({"checkable": true, "kind": "class", "rule": "^[A-Z][a-zA-Z0-9]{0,19}$",
            "examples": ["Order"], "counter_examples": ["AVeryLongClassNameThatNeverEnds"]}),
        )
        .expect("taken");
        assert_eq!((r[0].kind, r[0].id.as_str()), (K::Class, "model-class"));
        let r = ok(
            json!({"checkable": true, "kind": "import", "rule": ["pytest", true],
            "examples": ["import pytest\n"], "counter_examples": ["import os\n"]}),
        )
        .expect("taken");
        assert_eq!(
            r[0].rule,
            Rule::Member {
                name: "pytest".into(),
                value: true
            }
        );
        let refused = [
            (
                json!({"checkable": false, "reason": "about style"}),
                "not checkable: about style",
            ),
            (
                json!({"checkable": true, "kind": "variable", "rule": "^tbl_",
                "examples": ["tbl_orders"], "counter_examples": ["tbl_x"]}),
                "Pass on its own counter-example \"tbl_x\"",
            ),
            (
                json!({"checkable": true, "kind": "function", "rule": "^(",
                "examples": ["f"], "counter_examples": ["g"]}),
                "invalid regular expression",
            ),
            (
                json!({"checkable": true, "kind": "functions", "rule": "^f",
                "examples": ["f"], "counter_examples": ["g"]}),
                "unknown kind",
            ),
            (
                json!({"checkable": true, "kind": "function", "rule": "^f_"}),
                "at least one example",
            ),
            (
                json!({"checkable": true, "kind": "function docstring", "rule": "^x"}),
                "does not apply",
            ),
            (
                json!({"checkable": true, "kind": "function docstring", "rule": true,
                "examples": ["def f(:\n"], "counter_examples": ["def f(): pass\n"]}),
                "not valid Python",
            ),
            (
                json!({"checkable": true, "kind": "function docstring", "rule": true,
                "examples": ["def f(): pass\n"], "counter_examples": ["x = 1\n"]}),
                "Fail on its own example",
            ),
            (
                json!({"checkable": true, "kind": "function docstring", "rule": true,
                "examples": ["def f():\n    \"\"\"Doc.\"\"\"\n"], "counter_examples": ["x = 1\n"]}),
                "Absent on its own counter-example",
            ),
        ];
        for (answer, why) in refused {
            let e = ok(answer.clone()).expect_err(&answer.to_string());
            assert!(e.contains(why), "{answer}: {e}");
        }
        assert!(validate("no json here")
            .unwrap_err()
            .contains("no JSON object"));
    }
}
