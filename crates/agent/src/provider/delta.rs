//! The provider-neutral pieces a streamed reply is decoded into.

use alloc::string::String;

use super::error::ProviderError;

/// One step of a streamed model reply, the same for every provider.
///
/// The engine folds these into the canonical events (`message_chunk`, `reasoning_chunk`,
/// `tool_call_chunk`, `tool_call`, `usage`, `llm_complete`), so a new provider only needs a
/// decoder, never a change downstream.
///
/// Invariants every decoder keeps, whatever the provider sent:
/// - every [`Delta::ToolCallStart`] is followed, later, by exactly one [`Delta::ToolCallEnd`] with
///   the same `index` and `id`, and every [`Delta::ToolCallArgs`] of a call lies between the two —
///   unless the reply breaks off ([`Delta::Error`], or [`StreamDecoder::finish`] reporting a cut):
///   a call whose arguments may be cut short is never ended, so it is never run;
/// - the `fragment`s of one call, concatenated, are its whole arguments string, and a call that
///   the provider sent without arguments gets the fragment `{}`, so the result always parses as
///   a JSON object when the model produced valid JSON;
/// - `index` counts the calls of this reply in the order they started, from 0 with no gaps —
///   not the provider's own index, which OpenAI-compatible gateways do not keep dense;
/// - empty text, reasoning and argument fragments are never emitted;
/// - at most one [`Delta::Finish`] and at most one [`Delta::Usage`] per reply. Usage may come
///   before or after `Finish`, as the provider sends it (OpenAI sends it after).
///
/// [`StreamDecoder::finish`]: super::StreamDecoder::finish
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// A piece of the visible reply. OpenAI refusals arrive here too: they are what the user
    /// should read.
    Text(String),
    /// A piece of the model's reasoning (OpenAI-compatible `reasoning` / `reasoning_content`,
    /// Anthropic thinking, Gemini thought parts), shown apart from the reply and never sent back
    /// as reply text. Anthropic's redacted thinking has no readable text and is shown as
    /// [`REDACTED_REASONING`].
    Reasoning(String),
    /// The model started a tool call. `id` is the provider's call id, or a stable synthetic one
    /// where the provider has none (Gemini); tool results are matched back to it.
    ToolCallStart {
        /// Position of this call among the calls of this reply, dense from 0.
        index: u32,
        /// The call id tool results refer to.
        id: String,
        /// The tool's name, as declared in the request.
        name: String,
    },
    /// A piece of a tool call's JSON arguments; pieces split JSON anywhere, so only the
    /// concatenation of all of a call's fragments is meaningful.
    ToolCallArgs {
        /// The `index` of the [`Delta::ToolCallStart`] this belongs to.
        index: u32,
        /// The next piece of the arguments string.
        fragment: String,
    },
    /// Opaque provider state that must be sent back with this call in the next request
    /// ([`ToolCall::signature`]): Gemini 3 rejects a conversation whose function calls lost their
    /// `thoughtSignature`.
    ///
    /// [`ToolCall::signature`]: super::ToolCall::signature
    ToolCallSignature {
        /// The `index` of the [`Delta::ToolCallStart`] this belongs to.
        index: u32,
        /// The opaque signature, to be echoed verbatim.
        signature: String,
    },
    /// The call's arguments are complete: the engine may validate them and run the tool
    /// without waiting for the end of the reply.
    ToolCallEnd {
        /// The `index` of the [`Delta::ToolCallStart`] this ends.
        index: u32,
        /// The call id, repeated so a consumer need not keep a map.
        id: String,
    },
    /// Token counts of this request and reply, for cost accounting and context estimation.
    /// `prompt_tokens` includes cached prompt tokens on every provider (Anthropic reports
    /// them apart; they are added in) and `completion_tokens` includes reasoning tokens.
    Usage {
        /// Tokens of the whole prompt (system, history, tools).
        prompt_tokens: u64,
        /// Tokens the model generated, reasoning included.
        completion_tokens: u64,
        /// The provider's total, or the sum when it reports none.
        total_tokens: u64,
    },
    /// Why the model stopped. Arrives once, after the reply's content and after every tool call
    /// has ended, so it is the engine's cue that the turn is complete.
    Finish(FinishReason),
    /// The provider reported an error inside an otherwise successful (HTTP 200) stream; the
    /// reply is incomplete. See [`ProviderError::is_retryable`].
    Error(ProviderError),
}

/// Shown as the reasoning of an Anthropic `redacted_thinking` block: the model did think, but its
/// thoughts were encrypted by the provider, and the user should see that time was spent.
pub const REDACTED_REASONING: &str = "[redacted thinking]";

/// Why a reply ended, in OpenAI's vocabulary (the one the OpenAI-compatible proxy speaks).
///
/// An open enum: a reason this crate does not know yet survives as [`FinishReason::Unknown`]
/// with the provider's own word, instead of being guessed into a known one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model finished its answer (OpenAI `stop`, Anthropic `end_turn` / `stop_sequence`,
    /// Gemini `STOP`).
    Stop,
    /// The output token limit cut the answer short (`length`, `max_tokens`, `MAX_TOKENS`).
    Length,
    /// The model wants tools run before it goes on (`tool_calls`, `tool_use`; Gemini says
    /// `STOP` but sent function calls).
    ToolCalls,
    /// A safety filter stopped or blocked the answer (`content_filter`, `refusal`, `SAFETY`, …).
    ContentFilter,
    /// Any other reason, as the provider spelled it (e.g. Anthropic `pause_turn`, Gemini
    /// `MALFORMED_FUNCTION_CALL`).
    Unknown(String),
}

impl FinishReason {
    /// The wire name, as OpenAI spells it; unknown reasons keep the provider's spelling.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            Self::ContentFilter => "content_filter",
            Self::Unknown(other) => other,
        }
    }

    /// Reads an OpenAI-vocabulary name (the inverse of [`FinishReason::as_str`]), so a stored or
    /// proxied reason round-trips.
    #[must_use]
    pub fn from_openai(name: &str) -> Self {
        match name {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "tool_calls" | "function_call" => Self::ToolCalls,
            "content_filter" => Self::ContentFilter,
            other => Self::Unknown(String::from(other)),
        }
    }
}

impl core::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}
