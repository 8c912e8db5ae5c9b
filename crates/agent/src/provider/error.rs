//! The one error type of the provider codecs, for HTTP errors and in-stream errors alike.

use alloc::string::{String, ToString};
use core::fmt;

use serde_json::Value;

use super::Provider;

/// Something went wrong talking to an LLM provider, with a message a user can act on.
///
/// One type for every provider and for both places an error can surface — a non-2xx answer
/// ([`ProviderError::from_http`]) and an error event inside a 200 stream — so the engine has a
/// single retry policy ([`ProviderError::is_retryable`]) and a single way to show it.
///
/// No variant ever holds an API key: nothing here is built from the request, and provider
/// messages that echo a key (OpenAI's "Incorrect API key provided: sk-…") are scrubbed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderError {
    /// The provider answered with a non-2xx status.
    Http {
        /// Who answered.
        provider: Provider,
        /// Non-2xx; with `code` it decides whether a retry can help
        /// ([`ProviderError::is_retryable`]).
        status: u16,
        /// The provider's machine-readable error code or type, e.g. `invalid_api_key`,
        /// `overloaded_error`, `RESOURCE_EXHAUSTED`.
        code: Option<String>,
        /// The provider's own human-readable message, scrubbed of keys; empty if it sent none.
        message: String,
        /// How long the provider asked us to wait (`retry-after`, `retry-after-ms`, or Gemini's
        /// `RetryInfo.retryDelay`), rounded up to whole seconds.
        retry_after_secs: Option<u64>,
    },
    /// The provider reported an error inside a stream that had started fine.
    Stream {
        /// Who reported it.
        provider: Provider,
        /// The status the provider put in the error object, if any (OpenRouter `code: 400`,
        /// Groq `status_code`, Gemini `code`).
        status: Option<u16>,
        /// The provider's machine-readable error code or type.
        code: Option<String>,
        /// The provider's own message, scrubbed of keys.
        message: String,
    },
    /// A stream event that should hold JSON did not parse: the body is garbled or not from
    /// this provider. The event was skipped; the decoder stays usable.
    Malformed {
        /// The provider whose stream this was.
        provider: Provider,
        /// What was wrong, for a bug report.
        detail: String,
    },
    /// The body ended before the provider's end-of-reply signal: the connection was cut.
    Truncated {
        /// The provider whose stream this was.
        provider: Provider,
    },
}

/// Longest provider message kept, in bytes: enough for any real explanation, short enough that
/// an HTML error page does not flood a frame or a log.
const MAX_MESSAGE_BYTES: usize = 600;

impl ProviderError {
    /// Reads a non-2xx provider answer: its status, its headers (for `retry-after`) and its
    /// body (for the provider's own message, in any provider's error JSON shape).
    ///
    /// Never fails: an unreadable body still gives an error that names the status.
    #[must_use]
    pub fn from_http<K, V>(
        provider: Provider,
        status: u16,
        headers: impl IntoIterator<Item = (K, V)>,
        body: impl AsRef<[u8]>,
    ) -> Self
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let text = String::from_utf8_lossy(body.as_ref());
        let parsed = serde_json::from_str::<Value>(&text).ok();
        let info = parsed.as_ref().and_then(ErrorInfo::from_value);
        let (message, code, body_retry) = match info {
            Some(info) => (info.message, info.code, info.retry_after_secs),
            None => (snippet(&text), None, None),
        };
        let retry_after_secs = retry_after_from_headers(headers).or(body_retry);
        Self::Http {
            provider,
            status,
            code,
            message: scrub_secrets(&message),
            retry_after_secs,
        }
    }

    /// Builds the in-stream error from a provider's error JSON (`{"error": {...}}` or the bare
    /// inner object), for the decoders.
    pub(crate) fn from_stream_value(provider: Provider, value: &Value) -> Self {
        let info = ErrorInfo::from_value(value).unwrap_or_default();
        let message = if info.message.is_empty() {
            String::from("(no message)")
        } else {
            info.message
        };
        Self::Stream {
            provider,
            status: info.status,
            code: info.code,
            message: scrub_secrets(&message),
        }
    }

    /// An in-stream error that came as plain text rather than JSON.
    pub(crate) fn from_stream_text(provider: Provider, text: &str) -> Self {
        Self::Stream {
            provider,
            status: None,
            code: None,
            message: scrub_secrets(&snippet(text)),
        }
    }

    pub(crate) fn malformed(provider: Provider, detail: impl fmt::Display) -> Self {
        Self::Malformed {
            provider,
            detail: detail.to_string(),
        }
    }

    /// The provider this error came from.
    #[must_use]
    pub fn provider(&self) -> Provider {
        match self {
            Self::Http { provider, .. }
            | Self::Stream { provider, .. }
            | Self::Malformed { provider, .. }
            | Self::Truncated { provider } => *provider,
        }
    }

    /// The HTTP status, or the status the provider put inside an in-stream error.
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            Self::Stream { status, .. } => *status,
            Self::Malformed { .. } | Self::Truncated { .. } => None,
        }
    }

    /// Whether sending the same request again may succeed: rate limits, overload (Anthropic
    /// 529, Gemini `UNAVAILABLE`), server errors and cut connections are; a bad key, an unknown
    /// model, an invalid request or an exhausted quota are not.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http { status, code, .. } => retryable(Some(*status), code.as_deref()),
            Self::Stream { status, code, .. } => retryable(*status, code.as_deref()),
            Self::Malformed { .. } => false,
            Self::Truncated { .. } => true,
        }
    }

    /// How many seconds the provider asked us to wait before retrying, if it said.
    #[must_use]
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Self::Http {
                retry_after_secs, ..
            } => *retry_after_secs,
            _ => None,
        }
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http {
                provider,
                status,
                code,
                message,
                retry_after_secs,
            } => {
                write!(f, "{} answered HTTP {status}", provider.display_name())?;
                if let Some(code) = code {
                    write!(f, " ({code})")?;
                }
                if message.is_empty() {
                    f.write_str(" without an error message.")?;
                } else {
                    f.write_str(": ")?;
                    write_sentence(f, message)?;
                }
                let hint = match status {
                    401 | 403 => {
                        Some("Check the API key (and that it may use this model and endpoint).")
                    }
                    404 => Some("Check the model name and the base URL."),
                    413 => Some(
                        "The request is too large: shorten the conversation or the tool output.",
                    ),
                    _ if is_quota(code.as_deref()) => {
                        Some("The account is out of quota: check its plan and billing.")
                    }
                    _ => None,
                };
                if let Some(hint) = hint {
                    write!(f, " {hint}")?;
                } else if retryable(Some(*status), code.as_deref()) {
                    match retry_after_secs {
                        Some(secs) => write!(f, " This is temporary: retry in {secs} s.")?,
                        None => f.write_str(" This is temporary: retry in a moment.")?,
                    }
                }
                Ok(())
            }
            Self::Stream {
                provider,
                status,
                code,
                message,
            } => {
                write!(
                    f,
                    "{} reported an error mid-stream",
                    provider.display_name()
                )?;
                match (status, code) {
                    (Some(status), Some(code)) => write!(f, " ({status} {code})")?,
                    (Some(status), None) => write!(f, " ({status})")?,
                    (None, Some(code)) => write!(f, " ({code})")?,
                    (None, None) => {}
                }
                f.write_str(": ")?;
                write_sentence(f, message)?;
                if retryable(*status, code.as_deref()) {
                    f.write_str(" The reply is incomplete; this is temporary: retry in a moment.")?;
                } else {
                    f.write_str(" The reply is incomplete.")?;
                }
                Ok(())
            }
            Self::Malformed { provider, detail } => write!(
                f,
                "{} sent a stream event that is not valid JSON ({detail}); the event was \
                 skipped. Check that the base URL serves the `{}` API.",
                provider.display_name(),
                provider.as_str()
            ),
            Self::Truncated { provider } => write!(
                f,
                "The {} stream ended before the reply was complete (the connection was cut); \
                 retry the request.",
                provider.display_name()
            ),
        }
    }
}

impl core::error::Error for ProviderError {}

/// Writes a provider's message as a sentence: trimmed, ending in one stop mark.
fn write_sentence(f: &mut fmt::Formatter<'_>, message: &str) -> fmt::Result {
    let message = message.trim();
    f.write_str(message)?;
    if message.ends_with(['.', '!', '?', '…']) {
        Ok(())
    } else {
        f.write_str(".")
    }
}

/// What the error JSON of any provider says, read leniently: this only feeds a message.
#[derive(Default)]
struct ErrorInfo {
    message: String,
    code: Option<String>,
    status: Option<u16>,
    retry_after_secs: Option<u64>,
}

impl ErrorInfo {
    /// Understands `{"error": {...}}` (OpenAI, Anthropic, Gemini, Groq, OpenRouter),
    /// `[{"error": {...}}]` (Gemini streaming endpoints), `{"error": "text"}` (Ollama),
    /// and a bare object with `message` / `detail` (vLLM, Responses `error` events).
    fn from_value(value: &Value) -> Option<Self> {
        let value = match value {
            Value::Array(items) => items.first()?,
            Value::String(text) if !text.trim().is_empty() => {
                return Some(Self {
                    message: text.clone(),
                    ..Self::default()
                })
            }
            other => other,
        };
        let object = value.as_object()?;
        // Cloudflare's API envelope: `{"errors": [{"code": 5007, "message": "..."}], "success": false}`.
        if let Some(first) = object
            .get("errors")
            .and_then(Value::as_array)
            .and_then(|errors| errors.first())
        {
            return Self::from_value(first);
        }
        match object.get("error") {
            Some(Value::Object(inner)) => Some(Self::from_object(inner)),
            Some(Value::String(text)) => Some(Self {
                message: text.clone(),
                ..Self::default()
            }),
            _ => {
                let info = Self::from_object(object);
                let has_detail = object.get("detail").and_then(Value::as_str);
                if info.message.is_empty() && has_detail.is_none() {
                    return None;
                }
                Some(Self {
                    message: if info.message.is_empty() {
                        has_detail.map(String::from).unwrap_or_default()
                    } else {
                        info.message
                    },
                    ..info
                })
            }
        }
    }

    fn from_object(object: &serde_json::Map<String, Value>) -> Self {
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(String::from);
        let number = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| (100..=599).contains(n))
        };
        // A number that is no HTTP status is the provider's own code (Workers AI's `5007`).
        let numeric_code = object
            .get("code")
            .and_then(Value::as_u64)
            .filter(|n| !(100..=599).contains(n))
            .map(|n| n.to_string());
        let code = text("code")
            .or(numeric_code)
            .or_else(|| text("status"))
            .or_else(|| text("type"))
            .filter(|c| !c.is_empty());
        let status = number("code")
            .or_else(|| number("status_code"))
            .or_else(|| number("status"));
        Self {
            message: text("message").unwrap_or_default(),
            code,
            status,
            retry_after_secs: gemini_retry_delay(object.get("details")),
        }
    }
}

/// Gemini puts the wait into `details: [{"@type": "...RetryInfo", "retryDelay": "37s"}]`.
fn gemini_retry_delay(details: Option<&Value>) -> Option<u64> {
    details?
        .as_array()?
        .iter()
        .filter_map(|d| d.get("retryDelay")?.as_str())
        .find_map(|delay| parse_seconds(delay.strip_suffix('s')?))
}

fn retry_after_from_headers<K, V>(headers: impl IntoIterator<Item = (K, V)>) -> Option<u64>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut secs = None;
    let mut millis = None;
    for (name, value) in headers {
        let name = name.as_ref();
        if name.eq_ignore_ascii_case("retry-after") {
            // An HTTP-date form needs a clock to interpret, which this crate does not have.
            secs = parse_seconds(value.as_ref().trim());
        } else if name.eq_ignore_ascii_case("retry-after-ms") {
            millis = parse_seconds(value.as_ref().trim()).map(|ms| ms.div_ceil(1000));
        }
    }
    millis.or(secs)
}

/// Parses `12`, or `1.5` rounded up, without floats (no `f64` parsing on untrusted text).
fn parse_seconds(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let round_up = frac.bytes().any(|b| b != b'0');
    Some(whole.saturating_add(u64::from(round_up)))
}

fn is_quota(code: Option<&str>) -> bool {
    matches!(
        code,
        // 3036: Workers AI's daily free allocation is used up.
        Some("insufficient_quota" | "billing_hard_limit_reached" | "billing_error" | "3036")
    )
}

fn retryable(status: Option<u16>, code: Option<&str>) -> bool {
    if is_quota(code) {
        return false;
    }
    let code_says = matches!(
        code,
        Some(
            "overloaded_error"
                | "api_error"
                | "server_error"
                | "rate_limit_error"
                | "rate_limit_exceeded"
                | "UNAVAILABLE"
                | "RESOURCE_EXHAUSTED"
                | "INTERNAL"
                | "DEADLINE_EXCEEDED"
                | "timeout"
        )
    );
    code_says || matches!(status, Some(408 | 409 | 429 | 500..=599))
}

/// A short, single-line excerpt of a body that is not JSON (an HTML error page from a gateway).
pub(crate) fn snippet(text: &str) -> String {
    let mut out = String::new();
    for word in text.split_whitespace() {
        if out.len() + word.len() + 1 > 200 {
            out.push('…');
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Replaces anything shaped like an API key (`sk-…`, `sk-ant-…`, Google's `AIza…`) with `***`
/// and caps the length, because provider messages sometimes quote the key they rejected.
pub(crate) fn scrub_secrets(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE_BYTES + 8));
    let mut rest = message;
    while let Some(ch) = rest.chars().next() {
        let at_word_start = out
            .chars()
            .next_back()
            .is_none_or(|prev| !prev.is_ascii_alphanumeric());
        if at_word_start && (rest.starts_with("sk-") || rest.starts_with("AIza")) {
            let len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*'))
                .count();
            if len >= 12 {
                out.push_str("***");
                rest = rest.get(len..).unwrap_or("");
                continue;
            }
        }
        if out.len() >= MAX_MESSAGE_BYTES {
            out.push('…');
            break;
        }
        out.push(ch);
        rest = rest.get(ch.len_utf8()..).unwrap_or("");
    }
    out
}
