//! ConvCodeWorld's prompts, byte for byte (spec §1.3, §1.4): the four refiner signatures, the
//! expert and novice feedback simulators with their one-shot examples, and the parsing of
//! their answers (§1.5).

use super::dspy::{Field, Signature};
use regex::Regex;
use std::sync::OnceLock;

pub const EXPERT_FEEDBACK_EXAMPLE: &str = include_str!("examples/expert.txt");
pub const NOVICE_FEEDBACK_EXAMPLE: &str = include_str!("examples/novice.txt");
pub const EXECUTION_EXPERT_FEEDBACK_EXAMPLE: &str = include_str!("examples/execution_expert.txt");
pub const EXECUTION_NOVICE_FEEDBACK_EXAMPLE: &str = include_str!("examples/execution_novice.txt");

/// The LM calls of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    RefineFromCompilationFeedback,
    RefineFromExecutionFeedback,
    RefineFromUserFeedback,
    RefineFromExecutionUserFeedback,
    SimulateUserFeedback,
    ExecutionSimulateUserFeedback,
    SimulateNoviceFeedback,
    ExecutionSimulateNoviceFeedback,
    /// Instruction feedback (`_IF` configurations; not the original's): the pivots in force
    /// that the code breaks, in a refiner signature shaped like the original's.
    RefineFromInstructionFeedback,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::RefineFromCompilationFeedback,
        Kind::RefineFromExecutionFeedback,
        Kind::RefineFromUserFeedback,
        Kind::RefineFromExecutionUserFeedback,
        Kind::SimulateUserFeedback,
        Kind::ExecutionSimulateUserFeedback,
        Kind::SimulateNoviceFeedback,
        Kind::ExecutionSimulateNoviceFeedback,
        Kind::RefineFromInstructionFeedback,
    ];

    /// The original's mode name.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::RefineFromCompilationFeedback => "refine_from_compilation_feedback",
            Kind::RefineFromExecutionFeedback => "refine_from_execution_feedback",
            Kind::RefineFromUserFeedback => "refine_from_user_feedback",
            Kind::RefineFromExecutionUserFeedback => "refine_from_execution_user_feedback",
            Kind::SimulateUserFeedback => "simulate_user_feedback",
            Kind::ExecutionSimulateUserFeedback => "execution_simulate_user_feedback",
            Kind::SimulateNoviceFeedback => "simulate_novice_feedback",
            Kind::ExecutionSimulateNoviceFeedback => "execution_simulate_novice_feedback",
            Kind::RefineFromInstructionFeedback => "refine_from_instruction_feedback",
        }
    }

    pub fn is_simulation(&self) -> bool {
        matches!(
            self,
            Kind::SimulateUserFeedback
                | Kind::ExecutionSimulateUserFeedback
                | Kind::SimulateNoviceFeedback
                | Kind::ExecutionSimulateNoviceFeedback
        )
    }

    /// Input field keys in prompt order.
    pub fn input_keys(&self) -> &'static [&'static str] {
        match self {
            Kind::RefineFromCompilationFeedback => {
                &["input", "previous_code", "compilation_feedback"]
            }
            Kind::RefineFromExecutionFeedback => &["input", "previous_code", "execution_feedback"],
            Kind::RefineFromUserFeedback => &["input", "previous_code", "user_feedback"],
            Kind::RefineFromExecutionUserFeedback => &[
                "input",
                "previous_code",
                "execution_feedback",
                "user_feedback",
            ],
            Kind::SimulateUserFeedback => &["input", "ground_truth_code", "previous_code"],
            Kind::ExecutionSimulateUserFeedback => &[
                "input",
                "ground_truth_code",
                "previous_code",
                "execution_feedback",
            ],
            Kind::SimulateNoviceFeedback => &["input", "previous_code", "compilation_feedback"],
            Kind::ExecutionSimulateNoviceFeedback => &[
                "input",
                "previous_code",
                "compilation_feedback",
                "execution_feedback",
            ],
            Kind::RefineFromInstructionFeedback => {
                &["input", "previous_code", "instruction_feedback"]
            }
        }
    }

    /// Key of the answer field.
    pub fn output_key(&self) -> &'static str {
        if self.is_simulation() {
            "user_feedback"
        } else {
            "generated_code"
        }
    }
}

const CODE: &str = "python code";

fn input_field(key: &'static str) -> Field {
    let (prefix, desc) = match key {
        "input" => ("Input:", "${input}".to_string()),
        "previous_code" => (
            "Previous Code:",
            format!("previously-generated {CODE} that errored"),
        ),
        "compilation_feedback" => (
            "Compilation Feedback:",
            format!("error message from previously-generated {CODE}"),
        ),
        "execution_feedback" => (
            "Execution Feedback:",
            format!("error message from previously-generated {CODE}"),
        ),
        "user_feedback" => (
            "User Feedback:",
            format!("(Simulated) User feedback from previously-generated {CODE}"),
        ),
        "instruction_feedback" => (
            "Instruction Feedback:",
            format!("instructions in force that previously-generated {CODE} breaks"),
        ),
        "ground_truth_code" => (
            "Ground Truth Code:",
            format!("Ground truth {CODE} to simulate user intention"),
        ),
        other => (other, format!("${{{other}}}")),
    };
    Field {
        key,
        prefix: prefix.into(),
        desc,
        verbatim: true,
    }
}

fn example(kind: Kind) -> &'static str {
    match kind {
        Kind::SimulateUserFeedback => EXPERT_FEEDBACK_EXAMPLE,
        Kind::ExecutionSimulateUserFeedback => EXECUTION_EXPERT_FEEDBACK_EXAMPLE,
        Kind::SimulateNoviceFeedback => NOVICE_FEEDBACK_EXAMPLE,
        Kind::ExecutionSimulateNoviceFeedback => EXECUTION_NOVICE_FEEDBACK_EXAMPLE,
        _ => "",
    }
}

fn instructions(kind: Kind, fix_quirks: bool) -> String {
    let names = |keys: &[&str]| {
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let inputs = names(kind.input_keys());
    let refine = || {
        [
            format!("You are given {inputs} due to an error in previous code."),
            "Your task is to correct the error and provide the new `generated_code`.".to_string(),
        ]
        .join("\n")
    };
    match kind {
        Kind::RefineFromCompilationFeedback
        | Kind::RefineFromUserFeedback
        | Kind::RefineFromExecutionUserFeedback
        | Kind::RefineFromInstructionFeedback => refine(),
        // The original never lists this mode among the refiners, so it falls through to the
        // "answer" instruction (a bug; `--fix-quirks` gives it the refiner's instruction).
        Kind::RefineFromExecutionFeedback if fix_quirks => refine(),
        Kind::RefineFromExecutionFeedback => format!("Return the final code {inputs} in markdown format."),
        Kind::SimulateUserFeedback | Kind::ExecutionSimulateUserFeedback => [
            format!("You are given {inputs} to simulate user feedback that compares the `previous_code` and the `ground_truth_code`."),
            "Your task is to provide the simulated `user_feedback` that highlights specific areas where the `previous_code` deviates from the `ground_truth_code` and suggests improvements or corrections.".to_string(),
            "- You SHOULD NOT leak `ground_truth_code` in the simulated user feedback.".to_string(),
            "- Do not generate updated code.".to_string(),
            "- Do not reveal that you can access the `ground_truth_code`. Only indirect information is allowed.".to_string(),
        ]
        .join("\n"),
        Kind::SimulateNoviceFeedback | Kind::ExecutionSimulateNoviceFeedback => {
            let feedback: Vec<&str> =
                kind.input_keys().iter().copied().filter(|k| k.contains("feedback")).collect();
            [
                format!("You are given {inputs} due to an error in previous code."),
                // The double space is the original's.
                "Your task is to provide the simulated `user_feedback` that  to simulate user feedback that specifies the problem in the `previous_code`.".to_string(),
                "- Do not generate updated code.".to_string(),
                "- Note that the `previous_code` is generated by an LLM, not by the user that you are simulating.".to_string(),
                format!("- Ensure that the `user_feedback` only includes information derived from {}, without any additional details.", names(&feedback)),
            ]
            .join("\n")
        }
    }
}

/// The DSPy ChainOfThought signature of one call.
pub fn signature(kind: Kind, fix_quirks: bool) -> Signature {
    let inputs = kind.input_keys().iter().map(|k| input_field(k)).collect();
    let out_key = kind.output_key();
    let rationale = Field {
        key: "rationale",
        prefix: "Reasoning: Let's think step by step in order to".into(),
        desc: format!("${{produce the {out_key}}}. We ..."),
        verbatim: false,
    };
    let answer = if kind.is_simulation() {
        Field {
            key: "user_feedback",
            prefix: "User Feedback:".into(),
            desc: format!(
                "(Simulated) User feedback from previously-generated {CODE}\n---\n\n{}",
                example(kind)
            ),
            verbatim: true,
        }
    } else {
        Field {
            key: "generated_code",
            prefix: "Code:".into(),
            desc: format!("{CODE} that satisfies user requirements"),
            verbatim: true,
        }
    };
    Signature {
        instructions: instructions(kind, fix_quirks),
        inputs,
        outputs: vec![rationale, answer],
    }
}

/// Values of the input fields a call may use (absent ones are `None`).
#[derive(Clone, Debug, Default)]
pub struct Inputs<'a> {
    pub input: Option<&'a str>,
    pub previous_code: Option<&'a str>,
    pub compilation_feedback: Option<&'a str>,
    pub execution_feedback: Option<&'a str>,
    pub user_feedback: Option<&'a str>,
    pub ground_truth_code: Option<&'a str>,
    pub instruction_feedback: Option<&'a str>,
}

impl<'a> Inputs<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        match key {
            "input" => self.input,
            "previous_code" => self.previous_code,
            "compilation_feedback" => self.compilation_feedback,
            "execution_feedback" => self.execution_feedback,
            "user_feedback" => self.user_feedback,
            "ground_truth_code" => self.ground_truth_code,
            "instruction_feedback" => self.instruction_feedback,
            _ => None,
        }
    }
}

/// One call of `kind` as DSPy 2.4.12 makes it ([`crate::dspy::Signature::generate`]):
/// the prompt, and continuations while the answer lacks the output field. `lm` answers a
/// prompt with an optional `max_tokens` (`None`: the configured `lm_max_tokens`).
pub fn generate(
    kind: Kind,
    inputs: &Inputs,
    fix_quirks: bool,
    lm_max_tokens: u32,
    lm: &mut crate::dspy::AskFn,
) -> Result<crate::dspy::Generated, crate::dspy::GenerateError> {
    let sig = signature(kind, fix_quirks);
    let values: Vec<Option<&str>> = kind.input_keys().iter().map(|k| inputs.get(k)).collect();
    sig.generate(&values, lm_max_tokens, lm)
}

/// The output field's value after [`generate`] (`None` only if it never got one).
pub fn output(kind: Kind, generated: &crate::dspy::Generated) -> Option<String> {
    signature(kind, false)
        .value(generated, kind.output_key())
        .map(str::to_string)
}

/// The prompt of one call.
pub fn render(kind: Kind, inputs: &Inputs, fix_quirks: bool) -> String {
    let sig = signature(kind, fix_quirks);
    let values: Vec<Option<&str>> = kind.input_keys().iter().map(|k| inputs.get(k)).collect();
    sig.render(&values)
}

/// The answer field of a completion, `None` when the LM did not produce it.
pub fn answer(kind: Kind, completion: &str) -> Option<String> {
    signature(kind, false)
        .extract(completion)
        .into_iter()
        .find(|(k, _)| *k == kind.output_key())
        .map(|(_, v)| v)
}

fn python_block() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"(?s)```python[ \n](.*?)[ \n]```?").expect("static regex"))
}

fn any_block() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"(?s)```[ \n](.*?)[ \n]```?").expect("static regex"))
}

/// The original's `parse_code` on a `generated_code` answer (§1.5): cut at the field
/// separator and (quirk) at the first double blank line, take the first fenced block, drop
/// stray fences. An empty block yields the cut text itself, as the original does.
pub fn parse_code(generated: &str, fix_quirks: bool) -> String {
    let mut code = generated.split("\n\n---\n\n").next().unwrap_or("");
    if !fix_quirks {
        code = code.split("\n\n\n").next().unwrap_or("");
    }
    let block = python_block()
        .captures(code)
        .or_else(|| any_block().captures(code))
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
        .unwrap_or(code)
        .replace("```", "");
    if block.is_empty() {
        code.to_string()
    } else {
        block
    }
}

/// The original's post-processing of simulated feedback: cut at `---` and at the first double
/// blank line; the expert's is also cut before the first code fence.
pub fn clean_user_feedback(text: &str, expert: bool) -> String {
    let t = text.split("---").next().unwrap_or("");
    let t = t.split("\n\n\n").next().unwrap_or("");
    if expert {
        t.split("\n```").next().unwrap_or("").to_string()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_extraction_follows_the_original() {
        assert_eq!(parse_code("```python\nx = 1\n```", false), "x = 1");
        assert_eq!(parse_code("text\n```\ny = 2\n```\nmore", false), "y = 2");
        assert_eq!(parse_code("z = 3", false), "z = 3");
        // Quirk: a double blank line ends the answer before the fence closes.
        let two = "```python\na = 1\n\n\nb = 2\n```";
        assert_eq!(
            parse_code(two, false),
            "```python\na = 1".replace("```", "")
        );
        assert_eq!(parse_code(two, true), "a = 1\n\n\nb = 2");
        assert_eq!(clean_user_feedback("tip\n```\ncode\n```", true), "tip");
        assert_eq!(
            clean_user_feedback("tip\n```\ncode\n```", false),
            "tip\n```\ncode\n```"
        );
        assert_eq!(clean_user_feedback("a---b", false), "a");
    }

    #[test]
    fn novice_instruction_lists_only_feedback_inputs() {
        let s = signature(Kind::ExecutionSimulateNoviceFeedback, false);
        assert!(s.instructions.ends_with(
            "derived from `compilation_feedback`, `execution_feedback`, without any additional details."
        ));
    }
}
