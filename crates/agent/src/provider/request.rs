//! The provider-neutral chat request and the plain HTTP request it becomes.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};
use weft_protocol::json::parse_f64;

use crate::read::{unknown_variant, Fields, FromValue, Read};

/// One model call, said once for every provider.
///
/// The engine builds this from the run's history; [`ProviderConfig::build_request`] maps it to
/// each provider's conventions, so nothing upstream knows which provider is configured.
///
/// [`ProviderConfig::build_request`]: super::ProviderConfig::build_request
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model to call; when empty, the configured [`ProviderConfig::model`] is used, so the
    /// engine can leave model choice to deployment.
    ///
    /// [`ProviderConfig::model`]: super::ProviderConfig::model
    #[serde(default)]
    pub model: String,
    /// Instructions that frame the whole conversation. Sent where each provider wants them:
    /// a `system` message (OpenAI), the top-level `system` (Anthropic), `systemInstruction`
    /// (Gemini), `instructions` (OpenAI Responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub messages: Vec<ChatMessage>,
    /// The tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
    /// Cap on generated tokens. Anthropic requires one, so it gets
    /// [`ANTHROPIC_DEFAULT_MAX_TOKENS`](super::ANTHROPIC_DEFAULT_MAX_TOKENS) when this is `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None` leaves the provider's default (some reasoning models accept
    /// no other value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// One turn of the conversation, in the three shapes every provider understands.
///
/// Serialized with a `role` tag so a run's history can be checkpointed as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// What the user said.
    User {
        /// Text only: the codecs send no images or files.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The visible reply; may be empty when the model only called tools.
        #[serde(default)]
        content: String,
        /// The tools the model called in this turn, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The outcome of one tool call, answering the assistant turn before it.
    Tool(ToolResult),
}

impl ChatMessage {
    /// A [`ChatMessage::User`], the most common turn, spelled short.
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant turn with text only.
    #[must_use]
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// A tool call the model made, as it goes back into the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id from [`Delta::ToolCallStart`](super::Delta::ToolCallStart); tool results refer
    /// to it.
    pub id: String,
    /// As declared in the request's [`ToolDef`]s: the host runs the tool, and the clients show
    /// the call, by this name.
    pub name: String,
    /// The arguments exactly as the model streamed them: a JSON object in text. Kept as text so
    /// a model's invalid JSON can be shown and answered rather than lost.
    pub arguments: String,
    /// Opaque provider state from [`Delta::ToolCallSignature`](super::Delta::ToolCallSignature),
    /// sent back verbatim (Gemini's `thoughtSignature`); other providers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The result of running one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// The tool's name: Gemini matches results to calls by name and order, having no ids.
    pub name: String,
    /// What the tool returned, or the error text.
    pub content: String,
    /// Whether the tool failed, so the model can tell a failure from an odd result.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    /// The content for APIs without an error flag on tool results (OpenAI chat and Responses):
    /// a failure says so in the text, so the model can tell it from an odd result.
    pub(crate) fn content_marking_errors(&self) -> String {
        if self.is_error {
            format!("Error: {}", self.content)
        } else {
            self.content.clone()
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDef {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it; the model reads this to decide.
    pub description: String,
    /// A JSON Schema `object` describing the arguments.
    pub input_schema: serde_json::Value,
}

/// An HTTP request for the host to send: the codecs stay free of any HTTP client, so the worker
/// sends it with `fetch` and tests just look at it.
///
/// Its [`Debug`] output masks the credential headers, since this struct carries the API key.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Always `POST` today; kept as data so the host needs no knowledge of the provider.
    pub method: String,
    /// The full URL, query included.
    pub url: String,
    /// Header names (lower-case) and values, including the credential.
    pub headers: Vec<(String, String)>,
    /// JSON text, serialized already: the host sends it as is.
    pub body: String,
}

impl HttpRequest {
    /// The value of the first header with this name, ignoring case.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Headers whose value is a credential and must never be printed.
pub(crate) fn is_secret_header(name: &str) -> bool {
    ["authorization", "x-api-key", "x-goog-api-key", "api-key"]
        .iter()
        .any(|secret| name.eq_ignore_ascii_case(secret))
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(String, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_list();
                for (name, value) in self.0 {
                    if is_secret_header(name) {
                        list.entry(&(name, "***"));
                    } else {
                        list.entry(&(name, value));
                    }
                }
                list.finish()
            }
        }
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("body", &self.body)
            .finish()
    }
}

/// A sampling temperature as JSON, written the way it was set: `0.7_f32` widened to `f64`
/// would print as `0.699999988079071`. `None` for NaN or infinity, which JSON cannot carry.
pub(crate) fn temperature_json(value: f32) -> Option<serde_json::Value> {
    let shortest = parse_f64(&format!("{value}"))?;
    serde_json::Number::from_f64(shortest).map(serde_json::Value::Number)
}

/// `temperature_json` reads its shortest decimal with the protocol's `parse_f64` where it used
/// `str::parse`: the two agree on every text `{}` writes for an `f32`, NaN and infinities too.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn temperatures_read_as_str_parse_read_them(value in any::<f32>()) {
            let text = format!("{value}");
            let core = text.parse::<f64>().ok().map(f64::to_bits);
            prop_assert_eq!(super::parse_f64(&text).map(f64::to_bits), core, "{}", text);
        }
    }
}

impl FromValue for ChatMessage {
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        let f = Fields::of("message", v)?;
        match f.req::<String>("role")?.as_str() {
            "user" => Ok(ChatMessage::User {
                content: f.req("content")?,
            }),
            "assistant" => Ok(ChatMessage::Assistant {
                content: f.or_default("content")?,
                tool_calls: f.or_default("tool_calls")?,
            }),
            "tool" => ToolResult::from_value(v).map(ChatMessage::Tool),
            other => Err(unknown_variant("message role", other)),
        }
    }
}

impl FromValue for ToolCall {
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        let f = Fields::of("tool call", v)?;
        Ok(ToolCall {
            id: f.req("id")?,
            name: f.req("name")?,
            arguments: f.req("arguments")?,
            signature: f.or_default("signature")?,
        })
    }
}

impl FromValue for ToolResult {
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        let f = Fields::of("tool result", v)?;
        Ok(ToolResult {
            call_id: f.req("call_id")?,
            name: f.req("name")?,
            content: f.req("content")?,
            is_error: f.or_default("is_error")?,
        })
    }
}

impl FromValue for ToolDef {
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        let f = Fields::of("tool", v)?;
        Ok(ToolDef {
            name: f.req("name")?,
            description: f.req("description")?,
            input_schema: f.req("input_schema")?,
        })
    }
}
