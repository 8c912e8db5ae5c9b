//! LLM provider codecs: one provider-neutral request in, one provider-neutral stream out.
//!
//! Each supported API — OpenAI Chat Completions (and every OpenAI-compatible server: Ollama,
//! vLLM, OpenRouter, Groq, DeepSeek), the OpenAI Responses API, Anthropic Messages and Google
//! Gemini — has its own module with two halves:
//!
//! - a request builder: [`ProviderConfig::build_request`] turns a [`ChatRequest`] into a plain
//!   [`HttpRequest`] (URL, headers with the credential, JSON body asking for a stream with usage);
//! - a streaming decoder, driven through [`StreamDecoder`]: the host pushes the response body's
//!   bytes as they arrive, in pieces split anywhere, and polls provider-neutral [`Delta`]s.
//!
//! One module goes the other way: `completions` serves the OpenAI Chat Completions API to a
//! client — its request body read with [`parse_completions_request`], the provider's deltas
//! written back as OpenAI chunks by a [`CompletionsWriter`] (the worker's
//! `POST /v1/chat/completions`).
//!
//! Nothing here does I/O: the worker sends the request with `fetch` and pumps the body, and the
//! tests replay recorded provider streams. Non-2xx answers become a [`ProviderError`] through
//! [`ProviderError::from_http`].
//!
//! ```text
//! let config = ProviderConfig::new(Provider::Anthropic, key, "claude-haiku-4-5");
//! let http = config.build_request(&request);            // host sends it
//! let mut decoder = config.decoder();
//! decoder.push(&bytes)?;                                // for each piece of the body
//! while let Some(delta) = decoder.poll() { /* ... */ }
//! decoder.finish()?;                                    // at the end of the body
//! while let Some(delta) = decoder.poll() { /* ... */ }
//! ```

mod anthropic;
mod completions;
mod decoder;
mod delta;
mod error;
mod gemini;
mod openai;
mod openai_responses;
mod request;
/// Shared with the MCP client, whose servers answer in event streams too.
pub(crate) mod sse;
mod workers_ai;

use alloc::string::String;
use core::fmt;

use serde::{Deserialize, Serialize};

pub use completions::{parse_completions_request, CompletionsRequest, CompletionsWriter};
pub use decoder::{fuzz_stream_decoder, StreamDecoder};
pub use delta::{Delta, FinishReason, REDACTED_REASONING};
pub use error::ProviderError;
pub use request::{ChatMessage, ChatRequest, HttpRequest, ToolCall, ToolDef, ToolResult};
pub use workers_ai::{
    workers_ai_rest_base, WORKERS_AI_DEFAULT_MAX_TOKENS, WORKERS_AI_DEFAULT_MODEL,
};

/// Anthropic requires `max_tokens` on every request; this is used when [`ChatRequest::max_tokens`]
/// is `None` — large enough for a long answer with tool calls, small enough for every model.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// Which wire API a provider speaks. This, not the vendor, decides the codec: Groq, DeepSeek,
/// OpenRouter, Ollama and vLLM all speak [`Provider::OpenAi`] at their own base URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Provider {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`) and every compatible server.
    #[serde(rename = "openai")]
    OpenAi,
    /// The OpenAI Responses API (`POST {base}/responses`), OpenAI's newer streaming API.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`POST {base}/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini (`POST {base}/models/{model}:streamGenerateContent?alt=sse`).
    #[serde(rename = "gemini")]
    Gemini,
    /// Cloudflare Workers AI: a deployed Worker's `AI` binding, or `POST {base}/{model}` on
    /// the REST API ([`workers_ai_rest_base`]).
    #[serde(rename = "workers-ai")]
    WorkersAi,
}

impl Provider {
    /// Every provider, for configuration help texts and exhaustive tests.
    pub const ALL: [Self; 5] = [
        Self::OpenAi,
        Self::OpenAiResponses,
        Self::Anthropic,
        Self::Gemini,
        Self::WorkersAi,
    ];

    /// The configuration name (`openai`, `openai-responses`, `anthropic`, `gemini`), as used in
    /// worker settings and in serde.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::WorkersAi => "workers-ai",
        }
    }

    /// Reads a configuration name (the inverse of [`Provider::as_str`], ignoring case).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(name.trim()))
    }

    /// The name shown to users in error messages. The OpenAI codec says "OpenAI-compatible API"
    /// because it may well be Groq or Ollama answering.
    #[must_use]
    pub fn display_name(self) -> &'static str {
        match self {
            Self::OpenAi => "OpenAI-compatible API",
            Self::OpenAiResponses => "OpenAI Responses API",
            Self::Anthropic => "Anthropic",
            Self::Gemini => "Gemini",
            Self::WorkersAi => "Workers AI",
        }
    }

    /// The vendor's own endpoint, API version included (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com/v1`, `https://generativelanguage.googleapis.com/v1beta`), so a
    /// base URL always ends where the per-call path begins — the convention OpenAI-compatible
    /// servers already follow (`http://localhost:11434/v1`).
    #[must_use]
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi | Self::OpenAiResponses => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            // Needs the account: see `workers_ai_rest_base`. (The binding needs no URL.)
            Self::WorkersAi => "https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai/run",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where and as whom to call a provider: the deployment's side of a model call.
///
/// Holds the API key, so its [`Debug`] output prints `api_key: "***"`; keys are Worker secrets
/// and must never reach a log, a frame or an error.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The wire API to speak.
    pub provider: Provider,
    /// Everything before the per-call path, API version included (see
    /// [`Provider::default_base_url`]); a trailing `/` is ignored.
    pub base_url: String,
    /// The credential. Empty means none is sent (a local Ollama or vLLM needs none).
    pub api_key: String,
    /// The model used when [`ChatRequest::model`] is empty.
    pub model: String,
}

impl ProviderConfig {
    /// A configuration for the vendor's own endpoint.
    #[must_use]
    pub fn new(provider: Provider, api_key: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            provider,
            base_url: String::from(provider.default_base_url()),
            api_key: api_key.into(),
            model: model.into(),
        }
    }

    /// The same configuration at another base URL: an OpenAI-compatible server, a proxy, or a
    /// test server.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The HTTP request for one streamed model call, in this provider's conventions.
    #[must_use]
    pub fn build_request(&self, request: &ChatRequest) -> HttpRequest {
        match self.provider {
            Provider::OpenAi => openai::build_request(self, request),
            Provider::OpenAiResponses => openai_responses::build_request(self, request),
            Provider::Anthropic => anthropic::build_request(self, request),
            Provider::Gemini => gemini::build_request(self, request),
            Provider::WorkersAi => workers_ai::build_request(self, request),
        }
    }

    /// A fresh decoder for the body of a response to [`ProviderConfig::build_request`].
    #[must_use]
    pub fn decoder(&self) -> StreamDecoder {
        StreamDecoder::new(self.provider)
    }

    /// The base URL without trailing slashes, ready for a path to be appended.
    fn base(&self) -> &str {
        let base = self.base_url.trim();
        let base = if base.is_empty() {
            self.provider.default_base_url()
        } else {
            base
        };
        base.trim_end_matches('/')
    }

    /// The model of this call: the request's, else the configured one.
    #[must_use]
    pub fn model_for<'a>(&'a self, request: &'a ChatRequest) -> &'a str {
        if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        }
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &"***")
            .field("model", &self.model)
            .finish()
    }
}

/// The headers every provider gets: JSON in, an event stream out.
/// Merges consecutive turns of one role into one message, as Anthropic and Gemini require (tool
/// results answering one assistant turn go back as one user message), drops turns with nothing
/// in them (both APIs reject an empty message), and writes each as `{"role": r, <key>: items}`.
pub(crate) fn merge_turns<'a>(
    turns: impl IntoIterator<Item = (&'a str, Vec<serde_json::Value>)>,
    key: &str,
) -> Vec<serde_json::Value> {
    let mut merged: Vec<(&str, Vec<serde_json::Value>)> = Vec::new();
    for (role, items) in turns {
        if items.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last_role, last_items)) if *last_role == role => last_items.extend(items),
            _ => merged.push((role, items)),
        }
    }
    merged
        .into_iter()
        .map(|(role, items)| {
            let mut m = serde_json::Map::new();
            m.insert("role".into(), role.into());
            m.insert(key.into(), serde_json::Value::Array(items));
            serde_json::Value::Object(m)
        })
        .collect()
}

fn json_headers() -> Vec<(String, String)> {
    alloc::vec![
        (
            String::from("content-type"),
            String::from("application/json")
        ),
        (String::from("accept"), String::from("text/event-stream")),
    ]
}
