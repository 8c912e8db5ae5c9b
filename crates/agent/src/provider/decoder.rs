//! The sans-IO streaming decoder every provider shares: bytes in, [`Delta`]s out.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::anthropic::MessagesStream;
use super::delta::{Delta, FinishReason};
use super::error::ProviderError;
use super::gemini::GenerateStream;
use super::openai::ChatStream;
use super::openai_responses::ResponsesStream;
use super::sse::{SseItem, SseParser, MAX_EVENT_BYTES};
use super::workers_ai::WorkersAiStream;
use super::Provider;

/// Decodes one streamed provider response into provider-neutral [`Delta`]s.
///
/// Sans-IO, in the manner of quinn-proto: the host owns the connection and calls
/// [`push`](Self::push) with each piece of the body as it arrives — pieces may split anything,
/// a UTF-8 character or a `\r\n` included — then drains [`poll`](Self::poll); at the end of the
/// body it calls [`finish`](Self::finish) and drains once more. The decoder never blocks, holds
/// back at most one incomplete event (and drops any event over 16 MiB), and never panics on any
/// input.
///
/// Unknown event types are skipped (providers add them all the time); an event that should be
/// JSON and is not is reported by `push` and skipped, and the decoder stays usable.
#[derive(Debug)]
pub struct StreamDecoder {
    provider: Provider,
    sse: SseParser,
    /// Framed items waiting to be decoded; kept to reuse its allocation.
    items: Vec<SseItem>,
    codec: Codec,
    out: DeltaQueue,
    finished: bool,
}

/// The per-provider half of the decoder.
#[derive(Debug)]
enum Codec {
    OpenAi(ChatStream),
    OpenAiResponses(ResponsesStream),
    Anthropic(MessagesStream),
    Gemini(GenerateStream),
    WorkersAi(WorkersAiStream),
}

impl StreamDecoder {
    /// A decoder for one response body from `provider`.
    #[must_use]
    pub fn new(provider: Provider) -> Self {
        let codec = match provider {
            Provider::OpenAi => Codec::OpenAi(ChatStream::default()),
            Provider::OpenAiResponses => Codec::OpenAiResponses(ResponsesStream::default()),
            Provider::Anthropic => Codec::Anthropic(MessagesStream::default()),
            Provider::Gemini => Codec::Gemini(GenerateStream::default()),
            Provider::WorkersAi => Codec::WorkersAi(WorkersAiStream::default()),
        };
        Self {
            provider,
            sse: SseParser::default(),
            items: Vec::new(),
            codec,
            out: DeltaQueue::default(),
            finished: false,
        }
    }

    /// The provider this decoder reads.
    #[must_use]
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Feeds the next piece of the response body.
    ///
    /// Every complete event in it is decoded, even after a bad one; the error returned is the
    /// first [`ProviderError::Malformed`] among them. Deltas decoded before and after it are
    /// queued either way, so the output never depends on how the body was split. Bytes pushed
    /// after [`finish`](Self::finish) are ignored.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), ProviderError> {
        if self.finished {
            return Ok(());
        }
        self.sse.push(bytes, &mut self.items);
        self.decode_items()
    }

    /// The next decoded delta, in stream order.
    #[must_use]
    pub fn poll(&mut self) -> Option<Delta> {
        self.out.queue.pop_front()
    }

    /// The next decoded delta with the deltas queued right behind it that continue it appended:
    /// text to text, reasoning to reasoning, argument fragments of the same call to each other.
    ///
    /// A consumer that drains the queue after every [`push`](Self::push) gets one delta per
    /// kind per read: when a read holds several of the provider's events (a provider or proxy
    /// that packs them, TCP segments that pile up), forwarding each as its own event would cost
    /// an event, a log row and a send apiece for nothing; a read that holds one token (what
    /// the scripted LLM's chunked writes give under workerd, measured) changes nothing. The
    /// concatenation of what this returns equals what [`poll`](Self::poll) would.
    #[must_use]
    pub fn poll_merged(&mut self) -> Option<Delta> {
        let mut first = self.out.queue.pop_front()?;
        while let Some(next) = self.out.queue.front() {
            let tail = match (&mut first, next) {
                (Delta::Text(a), Delta::Text(b)) | (Delta::Reasoning(a), Delta::Reasoning(b)) => {
                    a.push_str(b);
                    true
                }
                (
                    Delta::ToolCallArgs { index, fragment },
                    Delta::ToolCallArgs {
                        index: next_index,
                        fragment: more,
                    },
                ) if index == next_index => {
                    fragment.push_str(more);
                    true
                }
                _ => false,
            };
            if !tail {
                break;
            }
            self.out.queue.pop_front();
        }
        Some(first)
    }

    /// Ends the body: decodes what was held back waiting for more bytes (an unterminated last
    /// line, Gemini's trailing error object, Gemini's finish reason and usage).
    ///
    /// Returns [`ProviderError::Truncated`] when the body ended before the provider's end of
    /// reply (`[DONE]` or a finish reason, `message_stop`, `finishReason`, `response.completed`)
    /// and no error event explained why. Drain [`poll`](Self::poll) afterwards in every case:
    /// what did arrive is still there. Calling it again does nothing.
    pub fn finish(&mut self) -> Result<(), ProviderError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        self.sse.finish(&mut self.items);
        let decoded = self.decode_items();
        match &mut self.codec {
            Codec::Gemini(gemini) => gemini.on_end(&mut self.out),
            Codec::WorkersAi(workers_ai) => workers_ai.on_end(&mut self.out),
            _ => {}
        }
        if !self.is_complete() {
            return Err(ProviderError::Truncated {
                provider: self.provider,
            });
        }
        decoded
    }

    /// Whether the provider has signalled the end of its reply (or reported an error), so the
    /// host may stop reading even if the connection lingers.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.out.error_reported
            || match &self.codec {
                Codec::OpenAi(c) => c.is_complete(),
                Codec::OpenAiResponses(c) => c.is_complete(),
                Codec::Anthropic(c) => c.is_complete(),
                Codec::Gemini(c) => c.is_complete(),
                Codec::WorkersAi(c) => c.is_complete(),
            }
    }

    fn decode_items(&mut self) -> Result<(), ProviderError> {
        let mut first_error = None;
        for item in self.items.drain(..) {
            let result = match item {
                SseItem::Event { event, data } => {
                    let out = &mut self.out;
                    match &mut self.codec {
                        Codec::OpenAi(c) => c.on_event(&event, &data, out),
                        Codec::OpenAiResponses(c) => c.on_event(&data, out),
                        Codec::Anthropic(c) => c.on_event(&data, out),
                        Codec::Gemini(c) => c.on_event(&data, out),
                        Codec::WorkersAi(c) => c.on_event(&data, out),
                    }
                }
                SseItem::Stray(text) => {
                    on_stray(self.provider, &text, &mut self.out);
                    Ok(())
                }
                SseItem::Oversized => Err(ProviderError::malformed(
                    self.provider,
                    format_args!("an event exceeded {} MiB", MAX_EVENT_BYTES >> 20),
                )),
            };
            if let Err(error) = result {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Fuzzing entry point (a `cargo fuzz` target calls it; see STYLE.md): decodes `data` as the
/// body of the provider its first byte picks, in pieces cut where its second byte says, and
/// checks the [`Delta`] invariants. Panics only if the decoder broke one — never on the input.
pub fn fuzz_stream_decoder(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let provider = Provider::ALL[usize::from(pick) % Provider::ALL.len()];
    let (step, body) = match rest.split_first() {
        Some((&step, body)) => (usize::from(step).max(1), body),
        None => (1, rest),
    };
    let mut decoder = StreamDecoder::new(provider);
    let mut deltas = Vec::new();
    for piece in body.chunks(step) {
        let _ = decoder.push(piece);
        deltas.extend(core::iter::from_fn(|| decoder.poll()));
    }
    let _ = decoder.finish();
    deltas.extend(core::iter::from_fn(|| decoder.poll()));

    // Every call starts once with the next index, gets arguments only while open, ends once.
    let mut open: Vec<bool> = Vec::new();
    let (mut usages, mut finishes) = (0, 0);
    for delta in &deltas {
        match delta {
            Delta::ToolCallStart { index, .. } => {
                assert_eq!(
                    usize::try_from(*index).ok(),
                    Some(open.len()),
                    "dense index"
                );
                open.push(true);
            }
            Delta::ToolCallArgs { index, fragment } => {
                assert!(!fragment.is_empty(), "empty fragment");
                assert!(slot(&open, *index), "arguments outside an open call");
            }
            Delta::ToolCallSignature { index, .. } => {
                assert!(slot(&open, *index), "signature outside an open call");
            }
            Delta::ToolCallEnd { index, .. } => {
                assert!(slot(&open, *index), "end of a call that is not open");
                if let Some(flag) = usize::try_from(*index).ok().and_then(|i| open.get_mut(i)) {
                    *flag = false;
                }
            }
            Delta::Text(t) | Delta::Reasoning(t) => assert!(!t.is_empty(), "empty text"),
            Delta::Usage { .. } => usages += 1,
            Delta::Finish(_) => {
                finishes += 1;
                assert!(open.iter().all(|o| !o), "a call is open at Finish");
            }
            Delta::Error(_) => {}
        }
    }
    assert!(
        usages <= 1 && finishes <= 1,
        "usage or finish reported twice"
    );
}

fn slot(open: &[bool], index: u32) -> bool {
    usize::try_from(index)
        .ok()
        .and_then(|i| open.get(i))
        .copied()
        .unwrap_or(false)
}

/// Text outside any SSE field is ignored unless it is a provider error object: Gemini appends
/// one, pretty-printed and without `data:`, when a stream fails midway.
fn on_stray(provider: Provider, text: &str, out: &mut DeltaQueue) {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let first = match &value {
        Value::Array(items) => items.first(),
        other => Some(other),
    };
    if first.is_some_and(|v| v.get("error").is_some_and(|e| !e.is_null())) {
        out.error(ProviderError::from_stream_value(provider, &value));
    }
}

/// Parses an event's JSON, naming the provider when it is not JSON.
pub(crate) fn parse_json<'a, T: serde::Deserialize<'a>>(
    provider: Provider,
    data: &'a str,
) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|e| ProviderError::malformed(provider, e))
}

/// The deltas decoded so far, plus the tool-call bookkeeping that keeps [`Delta`]'s invariants
/// (dense indices, exactly one end per call, `{}` for calls without arguments) in one place
/// instead of in every provider.
#[derive(Debug, Default)]
pub(crate) struct DeltaQueue {
    queue: VecDeque<Delta>,
    /// One slot per call started, by dense index.
    calls: Vec<CallSlot>,
    error_reported: bool,
    usage_sent: bool,
    finish_sent: bool,
}

#[derive(Debug)]
struct CallSlot {
    id: String,
    open: bool,
    has_args: bool,
}

impl DeltaQueue {
    pub(crate) fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.queue.push_back(Delta::Text(String::from(text)));
        }
    }

    pub(crate) fn reasoning(&mut self, text: &str) {
        if !text.is_empty() {
            self.queue.push_back(Delta::Reasoning(String::from(text)));
        }
    }

    /// Starts a call and returns its dense index.
    pub(crate) fn start_call(&mut self, id: String, name: String) -> u32 {
        let index = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        self.calls.push(CallSlot {
            id: id.clone(),
            open: true,
            has_args: false,
        });
        self.queue
            .push_back(Delta::ToolCallStart { index, id, name });
        index
    }

    /// How many calls this reply has started.
    pub(crate) fn call_count(&self) -> usize {
        self.calls.len()
    }

    pub(crate) fn call_args(&mut self, index: u32, fragment: &str) {
        if fragment.is_empty() {
            return;
        }
        if let Some(slot) = self.open_slot(index) {
            slot.has_args = true;
            self.queue.push_back(Delta::ToolCallArgs {
                index,
                fragment: String::from(fragment),
            });
        }
    }

    /// Whether any argument fragment was emitted for this call.
    pub(crate) fn call_has_args(&self, index: u32) -> bool {
        slot_index(index)
            .and_then(|i| self.calls.get(i))
            .is_some_and(|slot| slot.has_args)
    }

    pub(crate) fn call_signature(&mut self, index: u32, signature: &str) {
        if signature.is_empty() || self.open_slot(index).is_none() {
            return;
        }
        self.queue.push_back(Delta::ToolCallSignature {
            index,
            signature: String::from(signature),
        });
    }

    /// Ends a call once; a call that got no arguments gets `{}` first.
    pub(crate) fn end_call(&mut self, index: u32) {
        let Some(slot) = self.open_slot(index) else {
            return;
        };
        slot.open = false;
        let needs_empty_object = !slot.has_args;
        let id = slot.id.clone();
        if needs_empty_object {
            self.queue.push_back(Delta::ToolCallArgs {
                index,
                fragment: String::from("{}"),
            });
        }
        self.queue.push_back(Delta::ToolCallEnd { index, id });
    }

    /// Ends every call still open: the provider said the reply is over.
    pub(crate) fn end_open_calls(&mut self) {
        for index in 0..self.calls.len() {
            if let Ok(index) = u32::try_from(index) {
                self.end_call(index);
            }
        }
    }

    pub(crate) fn usage(&mut self, prompt: u64, completion: u64, total: Option<u64>) {
        if self.usage_sent {
            return;
        }
        self.usage_sent = true;
        self.queue.push_back(Delta::Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: total.unwrap_or_else(|| prompt.saturating_add(completion)),
        });
    }

    /// Reports why the reply ended, once; open calls end first, since a finished reply has no
    /// more arguments to send.
    pub(crate) fn finish(&mut self, reason: FinishReason) {
        self.end_open_calls();
        if self.finish_sent {
            return;
        }
        self.finish_sent = true;
        self.queue.push_back(Delta::Finish(reason));
    }

    /// Reports an in-stream error. Open calls are left open on purpose: their arguments may be
    /// cut short, and an end would tell the engine to run them.
    pub(crate) fn error(&mut self, error: ProviderError) {
        self.error_reported = true;
        self.queue.push_back(Delta::Error(error));
    }

    pub(crate) fn error_reported(&self) -> bool {
        self.error_reported
    }

    fn open_slot(&mut self, index: u32) -> Option<&mut CallSlot> {
        slot_index(index)
            .and_then(|i| self.calls.get_mut(i))
            .filter(|slot| slot.open)
    }
}

fn slot_index(index: u32) -> Option<usize> {
    usize::try_from(index).ok()
}
