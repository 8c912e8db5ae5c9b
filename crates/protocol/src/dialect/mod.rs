//! The five socket dialects, and translation between each of them and the canonical model.
//!
//! Each dialect module holds the wire types of its documents and four translations:
//!
//! | side | direction | function |
//! |---|---|---|
//! | server | frame → [`Command`] | [`Dialect::decode_request`] |
//! | server | [`Sequenced`] → frames | [`Encoder::encode`] |
//! | client | [`Command`] → frame | [`Dialect::encode_request`] |
//! | client | frame → [`Sequenced`] events | [`Dialect::decode_server`] |
//!
//! What each canonical event becomes in each dialect is tabled in the module docs of
//! [`loom`], [`agentloop`], [`agentchat`], [`cueso`] and [`agui`]. Where a dialect has no frame for
//! something a client needs to rebuild the same transcript, weft sends an *extension frame*:
//! the canonical event's own JSON object (see [`extension`]); clients of the original protocols
//! ignore types they do not know.
//!
//! Every run frame carries the weft extension fields `run_id` and `event_id`. `event_id` counts
//! the frames of one run *in that dialect*, from 1, so every client sees a dense sequence and can
//! tell a real gap (resume from it) from an event its dialect does not carry.
//!
//! # The dup, tot and got agents in the other dialects
//!
//! Decision: their plan events (`tot_expand`, `tot_evaluate`, `tot_backtrack`, `got_plan`,
//! `got_node_start`, `got_node_complete`, `got_node_failed`, `got_expand`) are carried by loom,
//! and by AG-UI, which has carriers of its own for them (node spans as `STEP_*`, the plan events
//! as `CUSTOM weft:<type>`, which AG-UI clients pass by: [`agui`]'s docs); agentloop, agentchat
//! and cueso get these agents' work through the same translation as
//! react's — every model response as text (agentloop `response_item` messages, agentchat
//! `agent_message`, cueso `content_delta`/`message_complete`, the structured answers of the
//! plan steps included), the tool calls, results and approvals, and the reply. Why not map them
//! to agentloop `reasoning` items (or extension frames): the `Reassembler` would then show the
//! plan as the model's reasoning in one dialect and not in the others, where a run must
//! rebuild to the same transcript from every dialect; and clients of the original agentloop
//! would render the plan as model thoughts it is not. A client that wants the tree or the
//! graph speaks loom. This keeps every encoder as it was (the golden transcripts are
//! unchanged).
//!
//! The agents keep each model response's events contiguous and, for a GoT sub-task, in a node
//! span of its own (`execute_graph`), even while sub-tasks run side by side: agentloop keys a
//! message's id on its span, cueso's `content_delta` and agentchat's `agent_message` have no
//! message id at all, so interleaved responses could not be told apart (see the engine's docs
//! in `weft-agent`).

/// Calls one function of the dialect's codec (each dialect module's `CODEC`): `codec!(dialect,
/// decode_server(&obj))`; `codec!(dialect, built)` says whether this build has the dialect. A
/// `match` over every dialect — so a new one without a codec does not compile — whose arms call
/// each dialect's function directly: no table of function pointers that would link every
/// translation into every binary (the Worker never decodes a server's frames), and no indirect
/// call that would keep the codec from being inlined into the path of every frame.
///
/// This table is the one place where a dialect is left out of a build: each dialect is a Cargo
/// feature of its name (all on by default), and a dialect whose feature is off has, instead of
/// its codec, one that refuses every frame and request (`unsupported`) and writes nothing. The
/// choice is made at compile time (`const`), so none of the dialect's translations, nor its fast
/// path, is linked: the browser SDK's one-dialect builds carry only their own.
macro_rules! codec {
    ($dialect:expr, $($what:tt)+) => {
        $crate::dialect::in_build!(
            $dialect, $($what)+;
            Loom loom "loom",
            Agentloop agentloop "agentloop",
            Agentchat agentchat "agentchat",
            Cueso cueso "cueso",
            Agui agui "agui"
        )
    };
}

/// `codec!`'s table, expanded.
macro_rules! in_build {
    ($dialect:expr, built; $($variant:ident $module:ident $feature:tt),+) => {
        match $dialect {
            $($crate::dialect::Dialect::$variant => cfg!(feature = $feature),)+
        }
    };
    ($dialect:expr, $f:ident $args:tt; $($variant:ident $module:ident $feature:tt),+) => {
        match $dialect {
            $($crate::dialect::Dialect::$variant => (const {
                if cfg!(feature = $feature) {
                    $crate::dialect::$module::CODEC
                } else {
                    $crate::dialect::Codec {
                        decode_request: |_| Err($crate::dialect::left_out($crate::dialect::Dialect::$variant)),
                        encode_request: |_, _| Err($crate::dialect::left_out($crate::dialect::Dialect::$variant)),
                        decode_server: |_| Err($crate::dialect::left_out($crate::dialect::Dialect::$variant)),
                        encode: |_| {},
                        fast: |_| None,
                    }
                }
            }
            .$f) $args,)+
        }
    };
}
pub(crate) use in_build;

/// What a dialect left out of this build answers to everything (see `codec!`).
pub(crate) fn left_out(dialect: Dialect) -> Error {
    Error::Unsupported {
        dialect,
        what: "anything in a build that leaves it out",
    }
}

pub mod agentchat;
pub mod agentloop;
pub mod agui;
pub mod aisdk;
pub mod cueso;
mod description;
pub mod extension;
pub(crate) mod fast;
pub mod loom;
pub mod loom_app;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::Serialize;

use crate::command::Command;
use crate::event::{Event, Sequenced};
use crate::frame::{parse_object, Limits};
use crate::json::{Json, Object};
use crate::Error;

pub(crate) use description::Codec;
pub use description::{Description, Original, Requests, TurnEnd};

// What differs between the dialects is in each one's `Description` (`Dialect::describe`), not
// in `match`es on this enum. (Not in its doc comment: tsify copies that into the .d.ts.)
/// One of the five socket protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(type = "\"loom\" | \"agentloop\" | \"agentchat\" | \"cueso\" | \"agui\"")
)]
pub enum Dialect {
    /// hi-youichi/loom: `loom-websocket-api.md` + `loom-stream-protocol.md`; endpoint `GET /`.
    Loom,
    /// AgentLoop (codex ws-server): `agentloop-websocket.md`; endpoint `GET /agentloop`.
    Agentloop,
    /// Nova's agent chat loop: `agentchat-websocket.md`; endpoint `GET /ws`.
    Agentchat,
    /// Cueso: `cueso-websocket.md`; endpoint `GET /ws/chat`.
    Cueso,
    /// AG-UI (`@ag-ui/core` 1.0) over a WebSocket ([`agui::socket`] says its wire); endpoint
    /// `GET /agui` (`POST /agui` is its server-sent events, the HTTP track's).
    Agui,
}

impl Dialect {
    /// The dialect's name: `loom`, `agentloop`, `agentchat`, `cueso`, `agui`.
    pub fn as_str(self) -> &'static str {
        description::described!(self, name)
    }

    /// Whether this build speaks it: each dialect is a Cargo feature of its name (all on by
    /// default); one left out refuses every frame and request as `unsupported`.
    pub const fn built(self) -> bool {
        codec!(self, built)
    }

    /// The one dialect this build speaks, if it speaks one only (see [`Dialect::built`]): code
    /// that reads a dialect's rules through it has them at compile time in such a build, so
    /// what the other dialects' rules would need is not linked.
    pub const ONLY: Option<Dialect> = {
        let (mut only, mut built) = (None, 0);
        let mut i = 0;
        while i < Dialect::ALL.len() {
            if Dialect::ALL[i].built() {
                only = Some(Dialect::ALL[i]);
                built += 1;
            }
            i += 1;
        }
        if built == 1 {
            only
        } else {
            None
        }
    };

    /// Parses a dialect name.
    pub fn parse(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == name)
    }

    /// The path of the dialect's WebSocket endpoint on a weft server.
    pub fn endpoint(self) -> &'static str {
        description::described!(self, endpoint)
    }

    /// The dialect served at a request path, if any.
    pub fn from_endpoint(path: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.endpoint() == path)
    }

    /// The dialect named by a `Sec-WebSocket-Protocol` entry `weft.<dialect>`.
    pub fn from_subprotocol(protocol: &str) -> Option<Dialect> {
        let protocol = protocol.trim();
        Dialect::ALL
            .into_iter()
            .find(|d| d.subprotocol() == protocol)
    }

    /// Server side: one client frame (text, or binary holding UTF-8) to a command.
    pub fn decode_request(self, frame: &[u8], limits: Limits) -> Result<Command, Error> {
        let obj = parse_object(frame, limits)?;
        codec!(self, decode_request(&obj))
    }

    /// Client side: a command to the frame that asks for it in this dialect.
    ///
    /// `frame_id` is used where the dialect wants a unique id on every message (agentloop);
    /// other dialects ignore it.
    pub fn encode_request(self, command: &Command, frame_id: &str) -> Result<String, Error> {
        codec!(self, encode_request(command, frame_id))
    }

    /// Client side: one server frame to the canonical events it carries (often one, sometimes
    /// none, as for agentloop's `agent_finished`). `envelope.event_id` is the frame's own id.
    ///
    /// The deltas that make up most of a stream take a fast path (the private module `fast`) that gives the same
    /// events without building a JSON tree.
    pub fn decode_server(self, frame: &[u8], limits: Limits) -> Result<Vec<Sequenced>, Error> {
        if frame.len() <= limits.max_frame_bytes {
            if let Some(seq) = fast::decode_server(self, frame) {
                return Ok(alloc::vec![seq]);
            }
        }
        self.decode_server_general(frame, limits)
    }

    /// [`Dialect::decode_server`] through the JSON tree, for every frame.
    pub(crate) fn decode_server_general(
        self,
        frame: &[u8],
        limits: Limits,
    ) -> Result<Vec<Sequenced>, Error> {
        let obj = parse_object(frame, limits)?;
        codec!(self, decode_server(&obj))
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Server side: turns the canonical events of one run into the frames of one dialect.
///
/// Holds the only state encoding needs: how many frames of the run this dialect has sent (so
/// `event_id`s are dense), a salt for the UUIDs agentloop puts on every frame, and — for a
/// client of the original protocol — what it holds back until it is whole. Everything else
/// comes from the event itself, so replaying a run's log through a fresh encoder yields the very
/// frames sent live — which is what `resume` does.
///
/// # Original clients see only their own protocol
///
/// An encoder made with [`Encoder::original`] writes for a socket that did not offer
/// `weft.<dialect>` (specs/README, "Original clients see only their own protocol"): no extension
/// frame types, on loom only the stream protocol's §4.2 events, reasoning (agentloop
/// `reasoning`, agentchat `agent_thinking`) sent once per thought, whole, and agentloop's turn
/// shaped as its original client expects ([`agentloop`]'s module docs). Dropped events claim no
/// `event_id`, so its numbering stays dense too.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoder {
    dialect: Dialect,
    sent: u64,
    replies: u64,
    salt: u64,
    extensions: bool,
    /// Original clients: the reasoning of the thought under way, merged into its first chunk.
    thought: Option<Sequenced>,
    turn: Turn,
    /// AG-UI: what its events have opened (messages, calls, steps) and whether its AG-UI run
    /// is on.
    agui: agui::Encoder,
}

/// What an original agentloop client's turn needs remembered between events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Turn {
    /// An `agent_finished` went out since the last item: the turn may end.
    pub(crate) finished: bool,
    /// An `explain` was answered: the explanation's own end is not a finished response.
    pub(crate) explaining: bool,
    /// The assistant text so far does not end with a newline (the explanation must).
    pub(crate) line_open: bool,
}

impl Encoder {
    /// An encoder for one run (or for replies outside runs), for a socket that opted in to
    /// weft's extensions.
    ///
    /// `salt` seeds the UUID agentloop puts on every frame, derived from (salt, run id, the
    /// frame's `event_id`). What it must be is *the same* for a run's live frames and for its
    /// replay, so that a resume gives every frame the id it had live: a value fixed for the
    /// server (weft's worker uses one constant) does that without storing anything, and the
    /// run id already tells the runs of a session apart. Ids need to be unique only among what
    /// one socket receives, and a socket hears one session, so a value per session adds nothing.
    /// Frames outside runs have no run id and number from 1 in each encoder: give each such
    /// encoder a fresh random salt (weft's worker does, per reply).
    pub fn new(dialect: Dialect, salt: u64) -> Self {
        Encoder {
            dialect,
            sent: 0,
            replies: 0,
            salt,
            extensions: true,
            thought: None,
            turn: Turn::default(),
            agui: agui::Encoder::new(),
        }
    }

    /// An encoder for a client of the original protocol: only what the dialect's documents
    /// define (see the type's docs).
    pub fn original(dialect: Dialect, salt: u64) -> Self {
        Encoder {
            extensions: false,
            ..Encoder::new(dialect, salt)
        }
    }

    /// [`Encoder::new`] or [`Encoder::original`].
    pub fn for_socket(dialect: Dialect, salt: u64, extensions: bool) -> Self {
        if extensions {
            Encoder::new(dialect, salt)
        } else {
            Encoder::original(dialect, salt)
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether it writes weft's extensions.
    pub fn extensions(&self) -> bool {
        self.extensions
    }

    /// Run frames written so far: the `event_id` of the last one.
    pub fn frames_sent(&self) -> u64 {
        self.sent
    }

    /// The frames (JSON text) that carry this event in the dialect, possibly none.
    pub fn encode(&mut self, ev: &Sequenced) -> Vec<String> {
        let mut frames = Vec::new();
        if let Event::EventsLost { from } = ev.event {
            return self.lost(ev, from);
        }
        if !self.extensions && self.dialect.whole_thoughts() {
            if let Event::ReasoningChunk { content, .. } = &ev.event {
                match &mut self.thought {
                    Some(Sequenced {
                        event: Event::ReasoningChunk { content: whole, .. },
                        ..
                    }) => whole.push_str(content),
                    _ => self.thought = Some(ev.clone()),
                }
                return frames;
            }
            if let Some(thought) = self.thought.take() {
                self.write(&thought, &mut frames);
            }
        }
        self.write(ev, &mut frames);
        frames
    }

    /// [`Event::EventsLost`]: the hole is counted in this dialect's numbering too. Each lost
    /// event was a delta ([`Event::is_delta`]: at most one frame here), so skipping as many
    /// ids as the hole has canonical events passes every frame a client may have been sent.
    /// An original client gets nothing (it never resumes), and its numbering stays dense.
    fn lost(&mut self, ev: &Sequenced, from: u64) -> Vec<String> {
        let mut frames = Vec::new();
        if !self.extensions || ev.envelope.run_id.is_none() {
            return frames;
        }
        let hole = ev.envelope.event_id.unwrap_or(from).saturating_sub(from);
        let here = Sequenced {
            envelope: ev.envelope.clone(),
            event: Event::EventsLost {
                from: self.sent + 1,
            },
        };
        self.sent += hole;
        self.write(&here, &mut frames);
        frames
    }

    fn write(&mut self, ev: &Sequenced, frames: &mut Vec<String>) {
        let mut out = Out {
            frames: core::mem::take(frames),
            sent: &mut self.sent,
            replies: &mut self.replies,
            salt: self.salt,
            extensions: self.extensions,
            turn: &mut self.turn,
            agui: &mut self.agui,
            ev,
        };
        codec!(self.dialect, encode(&mut out));
        *frames = out.frames;
    }
}

/// Where a dialect encoder writes its frames: numbers run frames and serializes them.
pub(crate) struct Out<'a> {
    frames: Vec<String>,
    sent: &'a mut u64,
    replies: &'a mut u64,
    salt: u64,
    /// Whether the socket takes weft's extensions; see [`Encoder::original`].
    pub(crate) extensions: bool,
    pub(crate) turn: &'a mut Turn,
    pub(crate) agui: &'a mut agui::Encoder,
    pub(crate) ev: &'a Sequenced,
}

impl Out<'_> {
    /// The run this event belongs to, if any.
    pub(crate) fn run_id(&self) -> Option<&str> {
        self.ev.envelope.run_id.as_deref()
    }

    /// Claims the next `event_id` of the run (None outside runs).
    pub(crate) fn next_event_id(&mut self) -> Option<u64> {
        self.run_id()?;
        *self.sent += 1;
        Some(*self.sent)
    }

    /// A UUID-shaped id for the frame being written, unique per (salt, run, frame) and the
    /// same when the frame is replayed.
    pub(crate) fn frame_uuid(&mut self, event_id: Option<u64>) -> String {
        let (scope, n) = match (self.run_id(), event_id) {
            (Some(run), Some(id)) => (run, id),
            // Outside runs (replies, connection errors) a counter keeps them distinct.
            _ => {
                *self.replies += 1;
                ("", *self.replies)
            }
        };
        crate::uuid::derive(self.salt, scope.as_bytes(), n)
    }

    /// One frame already written.
    pub(crate) fn push_text(&mut self, frame: String) {
        self.frames.push(frame);
    }

    /// Serializes one frame.
    pub(crate) fn push<T: Serialize>(&mut self, frame: &T) {
        // Serializing our own wire structs cannot fail (string keys only; serde_json writes
        // non-finite floats as null); drop rather than panic if it ever does.
        if let Ok(s) = serde_json::to_string(frame) {
            self.frames.push(s);
        }
    }
}

/// Reads the `type` of a frame.
pub(crate) fn frame_type<'a>(obj: &'a Object<'_>) -> Result<&'a str, Error> {
    match obj.get("type") {
        Some(Json::String(t)) => Ok(t),
        _ => Err(Error::MissingType),
    }
}
