//! The conversation prompts MemoryCode's `generate_prompt.py` writes for a template, byte for
//! byte, quirks included: it says "They had {i+1} conversations before" (one too many),
//! writes "medium-length", lowercases filler topics only, and its `"instruction" in type` test
//! also counts `filler-instruction-*` topics as coding instructions (so they are asked for
//! twice). `published` reproduces the earlier version that made the prompt files published
//! with the dataset: filler instructions are left out of the coding-instruction list.

/// The context fields a template's prompts use.
#[derive(Clone, Debug)]
pub struct Context {
    pub mentor: String,
    pub mentee: String,
    pub company: String,
    pub mentor_persona: String,
    pub mentee_persona: String,
}

/// One template session: parallel `type` and `topic` lists and its length word.
#[derive(Clone, Debug)]
pub struct TemplateSession {
    pub types: Vec<String>,
    pub topics: Vec<String>,
    pub length: String,
}

/// The system preamble, personas with `[mentor]` / `[mentee]` filled in.
pub fn preamble(c: &Context) -> String {
    let mentor_persona = c.mentor_persona.replace("[mentor]", &c.mentor);
    let mentee_persona = c.mentee_persona.replace("[mentee]", &c.mentee);
    let (mentor, mentee, company) = (&c.mentor, &c.mentee, &c.company);
    format!(
        "\n    ## Task and Context\n    You are a helpful and obedient AI that follows its system prompt and takes it very seriously. Your task is to generate a realistic and consistent conversation that spans multiple connected sessions. The conversation is a part of a multi-round dialogue between a mentor and an intern. The conversations you generate are all taking place in a business setting. \n    {mentor} is a mentor in a big software company called {company}. {mentee} is a new employee. They are both part of the software engineering team of the company.\n    {mentor_persona}\n    {mentee_persona} \n    The main programming language used in the company is Python.\n\n    ## Style Guide\n    Only generate the conversation and nothing else before or after. Do not add numbers before each turn. Do not add quotes to the conversation turns. Use a professional and formal tone. The conversation flow should be natural and smooth. When switching topics, do it in a smooth way. There are no special characters between the turns. The conversations are dialogues and not narrations of events.\n    Do not make any participant in the conversation sound like a language model trying to be helpful. Make them sound as human as possible.\n    It is the mentor that leads the conversation. When {mentor} the mentor gives coding instructions, they do not provide examples. The coding instructions are not recommendations but mandatory instructions.\n    "
    )
}

/// Python's `str.lower()` for the filler topics (Unicode lowercase, as Rust's).
fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// The prompt of session `session_id` (from 0).
pub fn session_prompt(
    c: &Context,
    s: &TemplateSession,
    session_id: usize,
    published: bool,
) -> String {
    let (mentor, mentee) = (&c.mentor, &c.mentee);
    let length = if s.length == "medium" {
        "medium-length".to_string()
    } else {
        s.length.clone()
    };
    let mut p = format!("Generate a {length} conversation between {mentor} and {mentee}. ");
    if session_id == 0 {
        p += "This is their first conversation and the first time they meet each other. ";
    } else {
        p += &format!(
            "This is not their first conversation. They had {} conversations before. ",
            session_id + 1
        );
    }
    let pairs: Vec<(&str, &str)> = (s.topics.iter().zip(&s.types))
        .map(|(t, k)| (t.as_str(), k.as_str()))
        .collect();
    let fillers: Vec<_> = pairs
        .iter()
        .filter(|(_, k)| *k == "filler-add" || *k == "filler-update")
        .collect();
    let filler_instructions: Vec<_> = pairs
        .iter()
        .filter(|(_, k)| k.contains("filler-instruction"))
        .collect();
    let instructions: Vec<_> = pairs
        .iter()
        .filter(|(_, k)| {
            k.contains("instruction") && !(published && k.contains("filler-instruction"))
        })
        .collect();
    for (i, (topic, kind)) in fillers.iter().enumerate() {
        if i == 0 {
            p += &format!("They talk about {}. ", lower(topic));
        } else {
            p += &format!("They also talk about {}. ", lower(topic));
        }
        if *kind == "filler-update" {
            p += "They had a previous conversation about this before. ";
        }
    }
    for (topic, kind) in &filler_instructions {
        if kind.contains("filler-instruction-add") {
            p += &format!("{mentor} wants {mentee} to {topic}. ");
        } else if kind.contains("filler-instruction-update") {
            p += &format!("{mentor} is updating a previous information given to {mentee}. ");
            p += &format!("{mentor} now wants {mentee} to {topic}. ");
        }
    }
    if !instructions.is_empty() {
        if !fillers.is_empty() {
            p += "After that, ";
        }
        p += &format!("{mentor} gives some specific coding instructions to {mentee}. ");
    }
    for (topic, kind) in &instructions {
        if kind.contains("instruction-add") {
            p += &format!("{mentor} wants {mentee} to {topic}. ");
        } else if kind.contains("instruction-update") {
            p += &format!("{mentor} is updating a previous information given to {mentee}: ");
            p += &format!("{mentor} now wants {mentee} to {topic}. ");
        }
    }
    if !instructions.is_empty() {
        p += &format!("{mentor} does not provide examples of correct code following the instructions. They do not show how to implement the instructions. {mentor} never says 'for example'. ");
        p += &format!("{mentor} does not give any other coding instructions. {mentee} only acknowledges the instructions and does not ask any questions. ");
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        Context {
            mentor: "Ana".into(),
            mentee: "Ben".into(),
            company: "Co".into(),
            mentor_persona: "[mentor] is kind.".into(),
            mentee_persona: "[mentee] is eager.".into(),
        }
    }

    /// Derived by hand from generate_prompt.py: the quirks and the published variant.
    #[test]
    fn quirks_and_published() {
        let s = TemplateSession {
            types: vec!["filler-add".into(), "filler-instruction-add".into()],
            topics: vec!["Code Reviews".into(), "use Git".into()],
            length: "medium".into(),
        };
        let code = session_prompt(&ctx(), &s, 1, false);
        assert_eq!(code, "Generate a medium-length conversation between Ana and Ben. This is not their first conversation. They had 2 conversations before. They talk about code reviews. Ana wants Ben to use Git. After that, Ana gives some specific coding instructions to Ben. Ana wants Ben to use Git. Ana does not provide examples of correct code following the instructions. They do not show how to implement the instructions. Ana never says 'for example'. Ana does not give any other coding instructions. Ben only acknowledges the instructions and does not ask any questions. ");
        let published = session_prompt(&ctx(), &s, 1, true);
        assert_eq!(published, "Generate a medium-length conversation between Ana and Ben. This is not their first conversation. They had 2 conversations before. They talk about code reviews. Ana wants Ben to use Git. ");
        assert!(preamble(&ctx()).contains("\n    Ana is kind.\n    Ben is eager. \n"));
    }
}
