//! The fast path for the frames a stream is made of: text, reasoning and tool-argument deltas,
//! and usage counts (and agentchat's whole tool calls and results, which it has instead of
//! deltas).
//!
//! Nearly every frame of a reply is one of a few small, flat shapes (loom `message_chunk`,
//! `reasoning_chunk` and `tool_call_chunk` inside `run_stream_event`; cueso `content_delta` and
//! `tool_call_delta`; agentloop `response_item` messages and reasoning; agentchat
//! `agent_message`, `agent_thinking`, `tool_call` and `tool_result`; the `usage` extension
//! frame of the three that have one). The general path builds a (borrowed) JSON tree of the
//! frame and reads the event out of it; this module reads these shapes member by member in one
//! pass, so the reassembler can append a delta's text without building the event at all.
//!
//! It only ever answers for a frame it understands completely: anything else — another type,
//! an unknown or repeated key, a `null`, a number that is not a plain whole number, a string
//! the JSON reader rejects, invalid UTF-8 — returns `None` and the frame takes the general
//! path, which decides what it means or which error it is. Both read strings and numbers with
//! the same [`Reader`], and where this path answers, the answer is what the general one gives
//! (the tests hold every frame of the golden transcripts and a corpus of variations to that,
//! and so does the fuzz target `decode_reassemble`).

mod scan;

use alloc::borrow::Cow;
use alloc::string::String;

use crate::json::Reader;

use super::extension::parse_arguments;
use super::Dialect;
use crate::event::{Envelope, Event, Sequenced, Usage};
use crate::names::FinishReason;

/// Decodes `frame` if it is one of the shapes this path knows; `None` sends it down the general
/// path.
pub(crate) fn decode_server(dialect: Dialect, frame: &[u8]) -> Option<Sequenced> {
    read(dialect, frame).map(Delta::into_sequenced)
}

/// Reads `frame` in place if it is one of the shapes this path knows. The reassembler applies
/// such a delta without building its event when nobody asked for events: then nothing of the
/// frame is copied but the text it appends.
pub(crate) fn read(dialect: Dialect, frame: &[u8]) -> Option<Delta<'_>> {
    let text = core::str::from_utf8(frame).ok()?;
    let mut s = Reader::new(text);
    let delta = codec!(dialect, fast(&mut s));
    s.ws();
    delta.filter(|_| s.at == s.t.len())
}

/// One delta frame, its strings borrowed from the frame wherever they had no escapes.
#[derive(Debug)]
pub(crate) struct Delta<'a> {
    pub run_id: Option<Cow<'a, str>>,
    pub event_id: Option<u64>,
    session_id: Option<Cow<'a, str>>,
    node_id: Option<Cow<'a, str>>,
    pub body: Body<'a>,
}

/// What a [`Delta`] adds: text (or reasoning) to the open message, or arguments to a call —
/// applied in place — or another event, which the reassembler applies as it is.
#[derive(Debug)]
pub(crate) enum Body<'a> {
    Text {
        content: Cow<'a, str>,
        /// The message id (loom); empty where the dialect has none.
        id: Cow<'a, str>,
        reasoning: bool,
    },
    Arguments {
        call_id: Option<Cow<'a, str>>,
        name: Option<Cow<'a, str>>,
        delta: Cow<'a, str>,
    },
    /// Any other event, built straight from the frame.
    Event(Event),
}

impl<'a> Delta<'a> {
    /// A frame of a dialect whose only envelope is weft's `run_id` and `event_id` beside its own
    /// fields (all but loom).
    fn stamped(run_id: Option<Cow<'a, str>>, event_id: Option<u64>, body: Body<'a>) -> Self {
        Delta {
            run_id,
            event_id,
            session_id: None,
            node_id: None,
            body,
        }
    }
}

impl Delta<'_> {
    /// The canonical event, exactly as the general path decodes the frame.
    pub fn into_sequenced(self) -> Sequenced {
        let event = match self.body {
            Body::Text {
                content,
                id,
                reasoning: false,
            } => Event::MessageChunk {
                content: content.into_owned(),
                id: id.into_owned(),
            },
            Body::Text {
                content,
                id,
                reasoning: true,
            } => Event::ReasoningChunk {
                content: content.into_owned(),
                id: id.into_owned(),
            },
            Body::Arguments {
                call_id,
                name,
                delta,
            } => Event::ToolCallChunk {
                call_id: owned(call_id),
                name: owned(name),
                arguments_delta: delta.into_owned(),
            },
            Body::Event(event) => event,
        };
        Sequenced {
            envelope: Envelope {
                session_id: owned(self.session_id),
                node_id: owned(self.node_id),
                event_id: self.event_id,
                run_id: owned(self.run_id),
            },
            event,
        }
    }
}

/// The fields these shapes may carry, each read at most once.
#[derive(Default)]
struct Slots<'a> {
    kind: Option<Cow<'a, str>>,
    content: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    run_id: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    node_id: Option<Cow<'a, str>>,
    event_id: Option<u64>,
    call_id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    arguments_delta: Option<Cow<'a, str>>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

impl Slots<'_> {
    /// Reads a member of the `usage` extension frame; `None` for any other key.
    fn usage_member(&mut self, s: &mut Reader<'_>, key: &str) -> Option<()> {
        match key {
            "prompt_tokens" => put(&mut self.prompt_tokens, s.uint()?),
            "completion_tokens" => put(&mut self.completion_tokens, s.uint()?),
            "total_tokens" => put(&mut self.total_tokens, s.uint()?),
            _ => None,
        }
    }

    /// The usage counts, when all three were read and nothing of another shape was.
    fn usage(&self) -> Option<Usage> {
        if self.content.is_some()
            || self.id.is_some()
            || self.call_id.is_some()
            || self.name.is_some()
            || self.arguments_delta.is_some()
        {
            return None;
        }
        Some(Usage {
            prompt_tokens: self.prompt_tokens?,
            completion_tokens: self.completion_tokens?,
            total_tokens: self.total_tokens?,
        })
    }

    /// Whether a member of the usage frame was read (so the frame is no other shape).
    fn has_usage(&self) -> bool {
        self.prompt_tokens.is_some()
            || self.completion_tokens.is_some()
            || self.total_tokens.is_some()
    }
}

/// Stores a value in an empty slot; a repeated key declines the frame (the general path decides
/// which occurrence counts).
#[inline(always)]
fn put<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

fn owned(s: Option<Cow<'_, str>>) -> Option<String> {
    s.map(Cow::into_owned)
}

/// `{"type":"run_stream_event","id":…,"event":{"type":"message_chunk"|"reasoning_chunk"|
/// "tool_call_chunk"|"usage",…}}`.
pub(crate) fn loom<'a>(s: &mut Reader<'a>) -> Option<Delta<'a>> {
    let mut kind = None;
    let mut run_id = None;
    let mut inner = None;
    s.object(|s, key| match key {
        "type" => put(&mut kind, s.str()?),
        "id" => put(&mut run_id, s.str()?),
        "event" => {
            let mut slots = Slots::default();
            s.object(|s, key| match key {
                "type" => put(&mut slots.kind, s.str()?),
                "content" => put(&mut slots.content, s.str()?),
                "id" => put(&mut slots.id, s.str()?),
                "session_id" => put(&mut slots.session_id, s.str()?),
                "node_id" => put(&mut slots.node_id, s.str()?),
                "event_id" => put(&mut slots.event_id, s.uint()?),
                "call_id" => put(&mut slots.call_id, s.str()?),
                "name" => put(&mut slots.name, s.str()?),
                "arguments_delta" => put(&mut slots.arguments_delta, s.str()?),
                k => slots.usage_member(s, k),
            })?;
            put(&mut inner, slots)
        }
        _ => None,
    })?;
    if kind.as_deref() != Some("run_stream_event") {
        return None;
    }
    let e = inner?;
    let body = match e.kind.as_deref()? {
        "usage" => Body::Event(Event::Usage(e.usage()?)),
        _ if e.has_usage() => return None,
        k @ ("message_chunk" | "reasoning_chunk") => {
            if e.call_id.is_some() || e.name.is_some() || e.arguments_delta.is_some() {
                return None;
            }
            Body::Text {
                reasoning: k == "reasoning_chunk",
                content: e.content?,
                id: e.id?,
            }
        }
        "tool_call_chunk" => {
            if e.content.is_some() || e.id.is_some() {
                return None;
            }
            Body::Arguments {
                call_id: e.call_id,
                name: e.name,
                delta: e.arguments_delta?,
            }
        }
        _ => return None,
    };
    Some(Delta {
        run_id: Some(run_id?),
        event_id: e.event_id,
        session_id: e.session_id,
        node_id: e.node_id,
        body,
    })
}

/// `{"type":"content_delta","content":…,"role":…}` and
/// `{"type":"tool_call_delta","tool_call":{"id":…,"name":…,"input_json":…}}`, with the
/// extension fields `run_id` and `event_id`.
pub(crate) fn cueso<'a>(s: &mut Reader<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut role = None;
    let mut call = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.str()?),
        "content" => put(&mut slots.content, s.str()?),
        "role" => put(&mut role, s.str()?),
        "run_id" => put(&mut slots.run_id, s.str()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        "tool_call" => {
            let mut c = Slots::default();
            let mut input_null = None;
            s.object(|s, key| match key {
                "id" => put(&mut c.call_id, s.str()?),
                "name" => put(&mut c.name, s.str()?),
                "input_json" => put(&mut c.arguments_delta, s.str()?),
                // The first delta of a call announces it with `"input": null`; not read.
                "input" => put(&mut input_null, s.null()?),
                _ => None,
            })?;
            put(&mut call, c)
        }
        k => slots.usage_member(s, k),
    })?;
    if slots.has_usage() {
        return (slots.kind.as_deref()? == "usage" && role.is_none() && call.is_none())
            .then(|| usage_frame(&slots))
            .flatten();
    }
    let body = match slots.kind.as_deref()? {
        "content_delta" if call.is_none() => Body::Text {
            content: slots.content?,
            id: Cow::Borrowed(""),
            reasoning: false,
        },
        "tool_call_delta" if slots.content.is_none() && role.is_none() => {
            let c = call?;
            Body::Arguments {
                call_id: c.call_id,
                name: c.name,
                delta: c.arguments_delta.unwrap_or_default(),
            }
        }
        _ => return None,
    };
    Some(Delta::stamped(slots.run_id, slots.event_id, body))
}

/// AG-UI's deltas: `TEXT_MESSAGE_CONTENT`, `REASONING_MESSAGE_CONTENT` (`messageId`, `delta`)
/// and `TOOL_CALL_ARGS` (`toolCallId`, `delta`), with weft's `run_id` and `event_id`.
pub(crate) fn agui<'a>(s: &mut Reader<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.str()?),
        "delta" => put(&mut slots.content, s.str()?),
        "messageId" => put(&mut slots.id, s.str()?),
        "toolCallId" => put(&mut slots.call_id, s.str()?),
        "run_id" => put(&mut slots.run_id, s.str()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        _ => None,
    })?;
    let body = match (slots.kind.as_deref()?, slots.id, slots.call_id) {
        ("TEXT_MESSAGE_CONTENT", Some(id), None) => Body::Text {
            content: slots.content?,
            id,
            reasoning: false,
        },
        ("REASONING_MESSAGE_CONTENT", Some(id), None) => Body::Text {
            content: slots.content?,
            id,
            reasoning: true,
        },
        ("TOOL_CALL_ARGS", None, Some(call_id)) => Body::Arguments {
            call_id: Some(call_id),
            name: None,
            delta: slots.content?,
        },
        _ => return None,
    };
    Some(Delta::stamped(slots.run_id, slots.event_id, body))
}

/// The `usage` extension frame, `{"type":"usage","prompt_tokens":…,"completion_tokens":…,
/// "total_tokens":…,"run_id":…,"event_id":…}`, from the slots its reader filled.
fn usage_frame<'a>(slots: &Slots<'a>) -> Option<Delta<'a>> {
    Some(Delta::stamped(
        slots.run_id.clone(),
        slots.event_id,
        Body::Event(Event::Usage(slots.usage()?)),
    ))
}

/// `{"id":…,"type":"response_item","payload":{"type":"message","id":…,"role":"assistant",
/// "content":[{"type":…,"text":…},…]},"run_id":…,"event_id":…}`, a `reasoning` item the same
/// without `role` (and with an optional `duration_ms`), and the `usage` extension frame.
pub(crate) fn agentloop<'a>(s: &mut Reader<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut frame_id = None;
    let mut item = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.str()?),
        // Every agentloop frame has a unique id; nothing reads it back.
        "id" => put(&mut frame_id, s.str()?),
        "run_id" => put(&mut slots.run_id, s.str()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        "payload" => put(&mut item, response_item(s)?),
        k => slots.usage_member(s, k),
    })?;
    if slots.has_usage() {
        return (slots.kind.as_deref()? == "usage" && item.is_none() && frame_id.is_none())
            .then(|| usage_frame(&slots))
            .flatten();
    }
    if slots.kind.as_deref()? != "response_item" {
        return None;
    }
    let (reasoning, content) = item?;
    Some(Delta::stamped(
        slots.run_id,
        slots.event_id,
        Body::Text {
            content,
            id: Cow::Borrowed(""),
            reasoning,
        },
    ))
}

/// The payload of an assistant `message` or a `reasoning` item: whether it is reasoning, and
/// its text (the `text` of every content part, joined, as the general path reads it).
fn response_item<'a>(s: &mut Reader<'a>) -> Option<(bool, Cow<'a, str>)> {
    let mut kind = None;
    let mut id = None;
    let mut role = None;
    let mut duration = None;
    let mut content: Option<Cow<'a, str>> = None;
    s.object(|s, key| match key {
        "type" => put(&mut kind, s.str()?),
        "id" => put(&mut id, s.str()?),
        "role" => put(&mut role, s.str()?),
        "duration_ms" => put(&mut duration, s.uint()?),
        "content" => {
            let mut text: Option<Cow<'a, str>> = None;
            s.array(|s| {
                let mut part_type = None;
                let mut part_text = None;
                s.object(|s, key| match key {
                    "type" => put(&mut part_type, s.str()?),
                    "text" => put(&mut part_text, s.str()?),
                    _ => None,
                })?;
                if let Some(t) = part_text {
                    text = Some(match text.take() {
                        None => t,
                        Some(before) => Cow::Owned(before.into_owned() + &t),
                    });
                }
                Some(())
            })?;
            put(&mut content, text.unwrap_or_default())
        }
        _ => None,
    })?;
    let reasoning = match (kind.as_deref()?, role.as_deref()) {
        ("message", Some("assistant") | None) if duration.is_none() => false,
        ("reasoning", None) => true,
        _ => return None,
    };
    Some((reasoning, content.unwrap_or_default()))
}

/// `{"type":"agent_message","message":…}`, `{"type":"agent_thinking","reasoning":…}`, the
/// `usage` extension frame, `{"type":"tool_call","tool_name":…,"tool_args":…,"call_id":…}`
/// and `{"type":"tool_result","tool_name":…,"result":…,"success":…,"call_id":…}`, each with
/// `run_id` and `event_id`. The dialect has no deltas of calls: its whole calls and results are
/// most of what is left of a stream, and each is read here without a tree.
pub(crate) fn agentchat<'a>(s: &mut Reader<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut message = None;
    let mut reasoning = None;
    let mut success = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.str()?),
        "message" => put(&mut message, s.str()?),
        "reasoning" => put(&mut reasoning, s.str()?),
        "run_id" => put(&mut slots.run_id, s.str()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        "call_id" => put(&mut slots.call_id, s.str()?),
        "tool_name" => put(&mut slots.name, s.str()?),
        "tool_args" => put(&mut slots.arguments_delta, s.str()?),
        "result" => put(&mut slots.content, s.str()?),
        "success" => put(&mut success, s.bool()?),
        k => slots.usage_member(s, k),
    })?;
    // Each shape takes only its own fields: a frame with any other is the general path's.
    let tool = slots.call_id.is_some()
        || slots.name.is_some()
        || slots.arguments_delta.is_some()
        || slots.content.is_some()
        || success.is_some();
    let body = match (slots.kind.as_deref()?, message, reasoning) {
        ("usage", None, None) if success.is_none() => return usage_frame(&slots),
        _ if slots.has_usage() => return None,
        ("tool_call", None, None) if slots.content.is_none() && success.is_none() => {
            Body::Event(Event::ToolCall {
                call_id: owned(slots.call_id),
                name: slots.name?.into_owned(),
                arguments: parse_arguments(&slots.arguments_delta?),
            })
        }
        ("tool_result", None, None) if slots.arguments_delta.is_none() => {
            Body::Event(Event::ToolEnd {
                call_id: owned(slots.call_id),
                name: slots.name?.into_owned(),
                result: slots.content?.into_owned(),
                is_error: !success?,
            })
        }
        _ if tool => return None,
        ("agent_message", Some(content), None) => Body::Event(Event::LlmComplete {
            content: content.into_owned(),
            tool_calls: alloc::vec::Vec::new(),
            finish_reason: FinishReason::Stop,
        }),
        ("agent_thinking", None, Some(content)) => Body::Text {
            content,
            id: Cow::Borrowed(""),
            reasoning: true,
        },
        _ => return None,
    };
    Some(Delta::stamped(slots.run_id, slots.event_id, body))
}

#[cfg(test)]
mod tests;
