//! The prompt format of DSPy 2.4 (`TemplateV2` via `signature_to_template`), which the original
//! uses for both the refiner and the feedback simulator, and its output-field extraction.
//!
//! A prompt is `instructions`, then `Follow the following format.` with one `Prefix: description`
//! line per field, then the filled-in input fields, joined by `\n\n---\n\n`. With more than three
//! fields (always the case here) fields are separated by a blank line, and a value containing a
//! newline starts on the line after its prefix.
//!
//! [`Signature::generate`] is DSPy 2.4.12's `dsp.primitives.predict._generate`: when an answer
//! stops before the last output field, DSPy asks again with the prompt completed by the fields
//! it did get, ending at the next missing prefix, with half the `max_tokens`; three calls at
//! most, then an `AssertionError`.

use super::client::LlmError;

/// `_generate`'s default `max_depth`: the first call and at most two continuations.
pub const MAX_DEPTH: usize = 2;

/// A model as DSPy calls it: a prompt and an optional `max_tokens` for this call.
pub type AskFn<'a> = dyn FnMut(&str, Option<u32>) -> Result<String, LlmError> + 'a;

/// One call DSPy made to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub prompt: String,
    pub completion: String,
    /// `None`: the model's configured `max_tokens`; continuations halve it.
    pub max_tokens: Option<u32>,
}

/// What [`Signature::generate`] produced: every field's value and the calls made.
#[derive(Clone, Debug)]
pub struct Generated {
    pub values: Vec<Option<String>>,
    pub calls: Vec<Call>,
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{source}")]
    Lm {
        #[source]
        source: LlmError,
        /// Calls answered before the failing one.
        calls: Vec<Call>,
    },
    /// Three answers and the output fields are still not all there: DSPy raises
    /// `AssertionError` (`assert max_depth > 0`).
    #[error("the model's answers never reached the last output field ({} calls)", calls.len())]
    Incomplete { calls: Vec<Call> },
}

/// One field of a signature.
#[derive(Clone, Debug)]
pub struct Field {
    /// Field name (`previous_code`); values are looked up by it.
    pub key: &'static str,
    /// Prefix without trailing space (`Previous Code:`).
    pub prefix: String,
    pub desc: String,
    /// `format=str`: the value is inserted verbatim. Otherwise DSPy collapses whitespace.
    pub verbatim: bool,
}

/// Input fields, then the outputs (for ChainOfThought: the rationale, then the answer).
#[derive(Clone, Debug)]
pub struct Signature {
    pub instructions: String,
    pub inputs: Vec<Field>,
    pub outputs: Vec<Field>,
}

/// Python's `str.isspace()` for one character: Unicode whitespace plus the ASCII separators
/// U+001C..U+001F, which Rust does not count.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// DSPy's default handler for fields without `format`: `' '.join(x.split())`.
fn collapse_ws(s: &str) -> String {
    s.split(is_py_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Python's `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

impl Signature {
    fn fields(&self) -> impl Iterator<Item = &Field> {
        self.inputs.iter().chain(self.outputs.iter())
    }

    /// `TemplateV2.query`: render the fields that have a value. `values[i]` belongs to
    /// `fields()[i]`; `None` means absent (DSPy skips the field).
    fn query(&self, values: &[Option<String>]) -> String {
        let fields: Vec<&Field> = self.fields().collect();
        let mut values: Vec<Option<String>> = values.to_vec();
        values.resize(fields.len(), None);
        let has: Vec<bool> = values
            .iter()
            .map(|v| v.as_deref().is_some_and(|s| !s.is_empty()))
            .collect();
        // The first field after the last one with a value is rendered empty (the cue for the LM).
        for i in 1..has.len() {
            if has[i - 1] && !has[i..].iter().any(|h| *h) {
                values[i] = Some(String::new());
                break;
            }
        }
        let mut parts = Vec::new();
        for (f, v) in fields.iter().zip(values.iter()) {
            let Some(v) = v else { continue };
            let formatted = if f.verbatim {
                v.clone()
            } else {
                collapse_ws(v)
            };
            let sep = if formatted.contains('\n') { "\n" } else { " " };
            parts.push(format!("{}{sep}{formatted}", f.prefix));
        }
        parts.retain(|p| !p.is_empty());
        // More than three fields: the "augmented" layout with blank lines between fields.
        let joiner = if fields.len() > 3 || fields.iter().any(|f| f.desc.contains('\n')) {
            "\n\n"
        } else {
            "\n"
        };
        parts.join(joiner)
    }

    fn guidelines(&self) -> String {
        let descs: Vec<Option<String>> = self.fields().map(|f| Some(f.desc.clone())).collect();
        format!("Follow the following format.\n\n{}", self.query(&descs))
    }

    /// The full prompt for the given input values (in `inputs` order; `None` = absent).
    pub fn render(&self, inputs: &[Option<&str>]) -> String {
        let values: Vec<Option<String>> = inputs.iter().map(|v| v.map(str::to_string)).collect();
        self.assemble(&values)
    }

    /// Instructions, guidelines and the query part, stripped and joined as DSPy 2.4 joins them.
    fn assemble(&self, values: &[Option<String>]) -> String {
        let parts = [
            self.instructions.clone(),
            self.guidelines(),
            self.query(values),
        ];
        let joined = parts
            .iter()
            .map(|p| py_strip(p))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n---\n\n");
        py_strip(&joined).to_string()
    }

    /// `Template.__call__` on a full example (`values[i]` belongs to `fields()[i]`): the last
    /// field is dropped (DSPy deletes the output it is asking for), the rest rendered.
    fn prompt_for(&self, values: &[Option<String>]) -> String {
        let mut values = values.to_vec();
        if let Some(last) = values.last_mut() {
            *last = None;
        }
        self.assemble(&values)
    }

    /// `Template.extract`: fill the fields from the first one without a value (`None`)
    /// onwards from the completion, splitting at `\n<NextPrefix>`.
    fn extract_into(&self, values: &[Option<String>], completion: &str) -> Vec<Option<String>> {
        let fields: Vec<&Field> = self.fields().collect();
        let clean = |s: &str| py_strip(py_strip(s).trim_end_matches('-')).to_string();
        let mut out = values.to_vec();
        out.resize(fields.len(), None);
        let n = fields.len();
        let mut idx = out.iter().position(Option::is_none).unwrap_or(n);
        idx = idx.min(n.saturating_sub(1));
        let mut raw = py_strip(completion).to_string();
        while !raw.is_empty() && idx < n {
            if idx + 1 < n {
                let next = format!("\n{}", fields[idx + 1].prefix);
                match raw.find(&next) {
                    Some(off) => {
                        out[idx] = Some(clean(&raw[..off]));
                        raw = clean(&raw[off + next.len()..]);
                        idx += 1;
                    }
                    None => {
                        out[idx] = Some(clean(&raw));
                        break;
                    }
                }
            } else {
                out[idx] = Some(clean(&raw));
                break;
            }
        }
        out
    }

    /// DSPy 2.4.12's `Predict` on this signature: one call, and while the answer stops before
    /// the last output field, a continuation (`_generate`'s recursion, `max_depth` 2). `lm`
    /// answers a prompt with an optional `max_tokens` (`None`: the model's configured one,
    /// `lm_max_tokens`). Returns every field's value (inputs, then outputs) and the calls.
    pub fn generate(
        &self,
        inputs: &[Option<&str>],
        lm_max_tokens: u32,
        lm: &mut AskFn,
    ) -> Result<Generated, GenerateError> {
        let n = self.inputs.len() + self.outputs.len();
        let mut values: Vec<Option<String>> =
            inputs.iter().map(|v| v.map(str::to_string)).collect();
        values.resize(n, None);
        let mut calls: Vec<Call> = Vec::new();
        let mut max_tokens: Option<u32> = None;
        for depth in (0..=MAX_DEPTH).rev() {
            let prompt = self.prompt_for(&values);
            let completion = match lm(&prompt, max_tokens) {
                Ok(c) => c,
                Err(source) => return Err(GenerateError::Lm { source, calls }),
            };
            let mut got = self.extract_into(&values, &completion);
            calls.push(Call {
                prompt,
                completion,
                max_tokens,
            });
            // DSPy keeps the completion "that has gone farthest": the field after the last one
            // with a value is the first missing one.
            let complete = got.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
            if complete == n {
                return Ok(Generated { values: got, calls });
            }
            if depth == 0 {
                break;
            }
            got[complete] = Some(String::new());
            // `min(max(75, max_tokens // 2), max_tokens)`, from the model's setting the first time.
            let current = max_tokens.unwrap_or(lm_max_tokens);
            max_tokens = Some((current / 2).max(75).min(current));
            values = got;
        }
        Err(GenerateError::Incomplete { calls })
    }

    /// The value of a field after [`Signature::generate`].
    pub fn value<'g>(&self, generated: &'g Generated, key: &str) -> Option<&'g str> {
        self.fields()
            .position(|f| f.key == key)
            .and_then(|i| generated.values.get(i))
            .and_then(|v| v.as_deref())
    }

    /// `TemplateV2.extract`: split a completion into the output fields at `\n<NextPrefix>`.
    /// Returns `(key, value)` for each output field found, in order.
    pub fn extract(&self, completion: &str) -> Vec<(&'static str, String)> {
        // DSPy (release >= 20231003) strips, then drops trailing dashes, then strips again.
        let clean = |s: &str| py_strip(py_strip(s).trim_end_matches('-')).to_string();
        let mut out = Vec::new();
        let mut raw = py_strip(completion).to_string();
        let mut idx = 0;
        while !raw.is_empty() && idx < self.outputs.len() {
            if idx + 1 < self.outputs.len() {
                let next = format!("\n{}", self.outputs[idx + 1].prefix);
                match raw.find(&next) {
                    Some(off) => {
                        out.push((self.outputs[idx].key, clean(&raw[..off])));
                        raw = clean(&raw[off + next.len()..]);
                        idx += 1;
                    }
                    None => {
                        out.push((self.outputs[idx].key, clean(&raw)));
                        break;
                    }
                }
            } else {
                out.push((self.outputs[idx].key, clean(&raw)));
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig() -> Signature {
        let f = |key, prefix: &str, desc: &str| Field {
            key,
            prefix: prefix.into(),
            desc: desc.into(),
            verbatim: true,
        };
        Signature {
            instructions: "Do it.".into(),
            inputs: vec![
                f("input", "Input:", "${input}"),
                f("a", "A:", "the a"),
                f("b", "B:", "the b"),
            ],
            outputs: vec![
                Field {
                    key: "rationale",
                    prefix: "Reasoning: Let's think step by step in order to".into(),
                    desc: "${produce the out}. We ...".into(),
                    verbatim: false,
                },
                f("out", "Out:", "the out"),
            ],
        }
    }

    #[test]
    fn absent_trailing_input_becomes_the_empty_cue() {
        let p = sig().render(&[Some("x"), Some("two\nlines"), None]);
        assert!(p.ends_with("Input: x\n\nA:\ntwo\nlines\n\nB:"), "{p}");
        let p = sig().render(&[Some("x"), Some("y"), Some("z")]);
        assert!(
            p.ends_with("B: z\n\nReasoning: Let's think step by step in order to"),
            "{p}"
        );
    }

    /// Python's `strip()` / `split()` also treat U+001C..U+001F as whitespace.
    #[test]
    fn python_whitespace() {
        assert_eq!(py_strip("\u{1f}x\u{1e} "), "x");
        assert_eq!(collapse_ws(" a\u{1c}b \n c"), "a b c");
    }

    #[test]
    fn extraction_splits_at_the_next_prefix() {
        let s = sig();
        let got = s.extract(" produce it. We go.\n\nOut: 42\n---");
        assert_eq!(
            got,
            vec![
                ("rationale", "produce it. We go.".to_string()),
                ("out", "42".to_string())
            ]
        );
        let got = s.extract("no answer field here");
        assert_eq!(got.len(), 1);
    }
    /// A scripted model: answers in order, records (prompt, max_tokens).
    type Asked = std::cell::RefCell<Vec<(String, Option<u32>)>>;

    fn scripted(answers: &[&str]) -> (Vec<String>, Asked) {
        (
            answers.iter().map(|a| a.to_string()).collect(),
            std::cell::RefCell::new(Vec::new()),
        )
    }

    #[test]
    fn continuation_keeps_the_reasoning_and_halves_max_tokens() {
        let s = sig();
        let (answers, log) = scripted(&[" produce it. No field.", " 42"]);
        let mut i = 0;
        let g = s
            .generate(&[Some("x"), Some("y"), Some("z")], 2048, &mut |p, mt| {
                log.borrow_mut().push((p.to_string(), mt));
                i += 1;
                Ok(answers[i - 1].clone())
            })
            .unwrap();
        let log = log.into_inner();
        assert_eq!(log.len(), 2);
        assert_eq!(log[0].1, None);
        assert_eq!(log[1].1, Some(1024));
        assert!(log[1].0.ends_with(
            "B: z\n\nReasoning: Let's think step by step in order to produce it. No field.\n\nOut:"
        ));
        assert_eq!(s.value(&g, "out"), Some("42"));
        assert_eq!(g.calls.len(), 2);
    }

    #[test]
    fn an_absent_input_takes_the_whole_answer_then_the_rest_is_asked() {
        let s = sig();
        let (answers, log) = scripted(&["Out: first", "so. Out: second"]);
        let mut i = 0;
        let g = s
            .generate(&[Some("x"), Some("y"), None], 2048, &mut |p, mt| {
                log.borrow_mut().push((p.to_string(), mt));
                i += 1;
                Ok(answers[i - 1].clone())
            })
            .unwrap();
        let log = log.into_inner();
        assert!(log[0].0.ends_with("A: y\n\nB:"));
        assert!(log[1]
            .0
            .ends_with("B: Out: first\n\nReasoning: Let's think step by step in order to"));
        // The rationale stays "" and the continuation's whole text is the last field.
        assert_eq!(s.value(&g, "rationale"), Some(""));
        assert_eq!(s.value(&g, "out"), Some("so. Out: second"));
    }

    #[test]
    fn three_empty_answers_are_dspys_assertion_error() {
        let s = sig();
        let mut seen = Vec::new();
        let e = s
            .generate(&[Some("x"), Some("y"), None], 2048, &mut |_, mt| {
                seen.push(mt);
                Ok(String::new())
            })
            .unwrap_err();
        let GenerateError::Incomplete { calls } = e else {
            panic!("{e:?}")
        };
        assert_eq!(seen, [None, Some(1024), Some(512)]);
        assert_eq!(calls.len(), 3);
    }
}
