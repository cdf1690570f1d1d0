//! MemoryCode's model-output prompts (`generate_model_output.py`), byte for byte: the
//! preambles keep the leading newline and the four-space indentation the original's
//! triple-quoted f-strings have, and placeholders are filled with `str.replace` in the
//! original's order (mentor, then the query, then the sessions), so a mentor name that
//! contains `[eval_query]` is treated exactly as the original treats it.

/// The instruction-only and instructions-chain preamble. Note the space after `answer.`.
pub const STYLE_PREAMBLE: &str = "\n    ## Style Guide\n    Do not acknowledge. Only generate Python code and nothing else before or after. Do not explain the code. Do not ask for more information but directly give the answer. \n    ";

const INSTRUCTION_PROMPT: &str = "Write a [eval_query]. Do not provide example usage. Follow this coding style guide when writing the code: [instruction_topic].";

const DIALOGUE_PROMPT: &str = "This is a thread of dialogues between you and your mentor [mentor]:\n [session] \nBased on information provided, write a [eval_query]. Do not provide example usage. You must follow all the latest coding guidelines provided by your mentor, including any possible updates.";

const CHAIN_PROMPT: &str = "This is a list of coding guidelines: [instruction_topic]. Some guidelines might have been updated. You must follow all the latest versions of the guidelines. Write a [eval_query]. Do not provide example usage.";

/// One chat request: `[system: preamble, user: prompt]`, as `openai_model_generate` sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatPrompt {
    pub preamble: String,
    pub prompt: String,
}

/// The session, history and RAG preamble (no space after `answer.`).
pub fn dialogue_preamble(mentee: &str, company: &str, mentor: &str) -> String {
    format!(
        "\n    ## Task and Context\n    You are {mentee}, a new software engineer at {company}. Your mentor {mentor} has given you specific coding guidelines that you must follow.\n\n    ## Style Guide\n    Do not acknowledge. Only generate Python code and nothing else before or after. Do not explain the code. Do not ask for more information but directly give the answer.\n    "
    )
}

/// `generate_model_output_instruction`: one version of one instruction.
pub fn instruction(eval_query: &str, instruction_topic: &str) -> ChatPrompt {
    ChatPrompt {
        preamble: STYLE_PREAMBLE.to_string(),
        prompt: INSTRUCTION_PROMPT
            .replace("[eval_query]", eval_query)
            .replace("[instruction_topic]", instruction_topic),
    }
}

/// Session, history and RAG prompts share one template; `sessions` is one session's text,
/// the joined history ([`join_sessions`]) or the retrieved chunks.
pub fn dialogue(preamble: &str, mentor: &str, eval_query: &str, sessions: &str) -> ChatPrompt {
    ChatPrompt {
        preamble: preamble.to_string(),
        prompt: DIALOGUE_PROMPT
            .replace("[mentor]", mentor)
            .replace("[eval_query]", eval_query)
            .replace("[session]", sessions),
    }
}

/// `generate_model_output_instructions_chain`: the instruction topics joined by `, `.
pub fn instructions_chain(eval_query: &str, topics: &[String]) -> ChatPrompt {
    ChatPrompt {
        preamble: STYLE_PREAMBLE.to_string(),
        prompt: CHAIN_PROMPT
            .replace("[eval_query]", eval_query)
            .replace("[instruction_topic]", &topics.join(", ")),
    }
}

/// The history (and RAG) separator: `"\n\n Session {i} \n\n" + text` for each session, `i`
/// counted from 0.
pub fn join_sessions<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, t) in texts.into_iter().enumerate() {
        out.push_str(&format!("\n\n Session {i} \n\n"));
        out.push_str(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_in_the_original_order() {
        // The mentor's name is substituted first, so a placeholder inside it is filled too.
        let p = dialogue("p", "[eval_query]", "Q", "S");
        assert!(p
            .prompt
            .starts_with("This is a thread of dialogues between you and your mentor Q:\n S \n"));
        assert_eq!(
            join_sessions(["a", "b"]),
            "\n\n Session 0 \n\na\n\n Session 1 \n\nb"
        );
        assert!(STYLE_PREAMBLE.contains("answer. \n"));
        assert!(dialogue_preamble("A", "B", "C").ends_with("answer.\n    "));
    }
}
