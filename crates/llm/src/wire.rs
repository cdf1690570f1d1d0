//! The OpenAI-compatible endpoints' JSON, as types: the bodies we send (in the key order the
//! originals' clients send, since the request bytes are compared with theirs) and the parts
//! of the answers we read.

use serde::{Deserialize, Serialize};

/// One message of a chat request.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> Self {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// `POST /chat/completions` or `/completions` with the parameters the originals' clients
/// send (`dspy.OpenAI` and `dspy.HFClientVLLM` alike: `top_p` 1, both penalties 0, `n` 1).
/// Exactly one of `messages` (chat) and `prompt` (completions) is set.
#[derive(Debug, Serialize)]
pub struct CompletionRequest<'a> {
    pub model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<[ChatMessage; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<&'a str>,
    pub temperature: f64,
    pub max_tokens: u32,
    pub top_p: u8,
    pub frequency_penalty: u8,
    pub presence_penalty: u8,
    pub n: u8,
    /// Left out when empty: some endpoints reject an empty list.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub stop: &'a [String],
}

/// A chat request with the model, the messages and only the sampling parameters that are
/// set, in the order the `openai` Python package sends them.
#[derive(Debug, Serialize)]
pub struct MessagesRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
}

/// Cohere-style `POST /rerank`, as vLLM and text-embeddings-inference serve it.
#[derive(Debug, Serialize)]
pub struct RerankRequest<'a> {
    pub model: &'a str,
    pub query: &'a str,
    pub documents: &'a [String],
    pub top_n: usize,
    pub return_documents: bool,
}

/// The part of a completion answer we read: the first choice's text.
#[derive(Debug, Deserialize)]
pub struct CompletionResponse {
    #[serde(default)]
    pub choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
pub struct Choice {
    /// Chat: `message.content` (`null` for an empty answer).
    #[serde(default)]
    pub message: Option<ChoiceMessage>,
    /// Completions: `text`.
    #[serde(default)]
    pub text: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub struct ChoiceMessage {
    #[serde(default)]
    pub content: Option<serde_json::Value>,
}

/// A rerank answer: the documents' indices, best first.
#[derive(Debug, Deserialize)]
pub struct RerankResponse {
    pub results: Vec<RerankResult>,
}

#[derive(Debug, Deserialize)]
pub struct RerankResult {
    pub index: usize,
}

/// An endpoint's error answer, as OpenAI writes it (the loopback server's refusals).
#[derive(Debug, Serialize)]
pub struct ErrorReply {
    pub error: ErrorBody,
}

#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub message: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
}

impl ErrorReply {
    /// `{"error": {"message": ...}}` as text.
    pub fn text(message: impl Into<String>) -> String {
        ErrorReply {
            error: ErrorBody {
                message: message.into(),
                kind: None,
                code: None,
            },
        }
        .to_string()
    }
}

impl std::fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

/// A completion answer with one choice (the loopback server's): chat or text completion.
#[derive(Debug, Serialize)]
pub struct CompletionReply<'a> {
    pub id: &'static str,
    pub object: &'static str,
    pub choices: [ReplyChoice<'a>; 1],
}

#[derive(Debug, Serialize)]
pub struct ReplyChoice<'a> {
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<ReplyMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    pub finish_reason: &'static str,
}

#[derive(Debug, Serialize)]
pub struct ReplyMessage<'a> {
    pub role: &'static str,
    /// Null beside a tool call.
    pub content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<[ToolCallOut<'a>; 1]>,
}

/// A tool call the loopback model answers with (a coding agent's loop).
#[derive(Debug, Serialize)]
pub struct ToolCallOut<'a> {
    /// The call's place in a streamed delta (absent in a whole message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall<'a>,
}

#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    pub name: &'a str,
    /// The arguments' JSON, as a string (OpenAI's convention).
    pub arguments: String,
}

/// One event of a streamed answer (`"stream": true`): a `chat.completion.chunk` whose
/// choice carries a `delta`, or a `text_completion` chunk with its `text`.
#[derive(Debug, Serialize)]
pub struct ChunkReply<'a> {
    pub id: &'static str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: [ChunkChoice<'a>; 1],
}

#[derive(Debug, Serialize)]
pub struct ChunkChoice<'a> {
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<Delta<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    pub finish_reason: Option<&'static str>,
}

#[derive(Debug, Default, Serialize)]
pub struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<[ToolCallOut<'a>; 1]>,
}

impl<'a> CompletionReply<'a> {
    /// A chat answer (`choices[0].message`) or a text completion (`choices[0].text`).
    pub fn new(chat: bool, text: &'a str) -> Self {
        CompletionReply {
            id: "loopback",
            object: if chat {
                "chat.completion"
            } else {
                "text_completion"
            },
            choices: [ReplyChoice {
                index: 0,
                message: chat.then_some(ReplyMessage {
                    role: "assistant",
                    content: Some(text),
                    tool_calls: None,
                }),
                text: (!chat).then_some(text),
                finish_reason: "stop",
            }],
        }
    }
}

/// A rerank answer (the loopback server's).
#[derive(Debug, Serialize)]
pub struct RerankReply {
    pub id: &'static str,
    pub results: Vec<RankedDocument>,
}

#[derive(Debug, Serialize)]
pub struct RankedDocument {
    pub index: usize,
    pub relevance_score: f64,
    pub document: DocumentText,
}

#[derive(Debug, Serialize)]
pub struct DocumentText {
    pub text: String,
}
