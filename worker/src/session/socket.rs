//! What a session's object remembers about each socket across hibernation (its attachment), and
//! the rules that follow from it alone: whether it may approve, how its frames are encoded, its
//! allowance of frames a minute, and what it declared, to declare again on a link.
//!
//! Plain data, no runtime: the object reads and writes attachments (`mod.rs`), this decides.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_protocol::command::ClientTools;
use weft_protocol::event::ToolSpec;
use weft_protocol::{Dialect, Encoder, Event, Sequenced};

use super::fanout::salt;
use crate::access::Grant;

/// A socket's attachment. Kept under the runtime's 2 KB cap for attachments: the tools' schemas
/// are the only thing in it that grows with the client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SocketInfo {
    /// Stored as the dialect's name (`dialect_name`), the form attachments always had.
    #[serde(with = "dialect_name")]
    pub(super) dialect: Dialect,
    /// The session the socket connected to; empty: the object's own id names it.
    pub(super) session_id: String,
    /// Whether the client offered `weft.<dialect>`: it gets weft's extensions, and may answer
    /// approvals in any dialect. Without it, only what the dialect's documents define
    /// (`Encoder::original`).
    #[serde(default)]
    pub(super) weft: bool,
    /// The session a message that names none goes to: the last one a message on this socket
    /// named (see relay.rs); `None` is the socket's own.
    #[serde(default)]
    pub(super) current: Option<String>,
    /// Whether this socket said it answers approval requests (`client_tools` with
    /// `approvals: true`).
    pub(super) approvals: bool,
    /// Tools this socket runs itself.
    pub(super) tools: Vec<ClientTool>,
    /// Rate limiting: the current window's start (ms) and frames seen in it.
    pub(super) window_start: f64,
    pub(super) window_frames: u32,
    /// Runs that were already streaming when this socket connected: it gets their frames only
    /// once it resumes them, so a reconnecting client sees the missing frames, then the live
    /// ones, each once and in order.
    #[serde(default)]
    pub(super) not_following: Vec<String>,
    /// A per-user token's sessions: the only ones a message on this socket may name. `None`:
    /// any (no per-user token).
    #[serde(default)]
    pub(super) grant: Option<Grant>,
    /// Whom the sessions this socket creates count against (`SESSIONS_PER_MINUTE`), for the
    /// links it opens.
    #[serde(default)]
    pub(super) client: String,
}

/// A tool a client runs itself, as its attachment keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct ClientTool {
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) input_schema: Value,
    pub(super) read_only: bool,
}

impl From<ToolSpec> for ClientTool {
    fn from(spec: ToolSpec) -> Self {
        ClientTool {
            name: spec.name,
            description: spec.description,
            input_schema: spec.input_schema.to_value(),
            read_only: spec.read_only,
        }
    }
}

/// Where a socket's frame stands against `RATE_LIMIT_PER_MINUTE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Allowance {
    Within,
    /// The first frame over: it is answered with an error, once a minute.
    JustOver,
    /// Dropped without a word.
    Over,
}

impl SocketInfo {
    pub(super) fn new(dialect: Dialect, session_id: String, weft: bool) -> Self {
        SocketInfo {
            dialect,
            session_id,
            weft,
            current: None,
            approvals: false,
            tools: Vec::new(),
            window_start: 0.0,
            window_frames: 0,
            not_following: Vec::new(),
            grant: None,
            client: String::new(),
        }
    }

    /// specs/README, "Approvals": a socket whose protocol lets it answer (agentloop's own
    /// answer, AG-UI's `resume` in its input).
    pub(super) fn can_approve(&self) -> bool {
        let own = self.dialect.requests();
        self.weft || self.approvals || own.approvals || own.input
    }

    /// The encoder of a replay to this socket: the live salt, so it reproduces the ids the
    /// run's live frames had.
    pub(super) fn encoder(&self) -> Encoder {
        Encoder::for_socket(self.dialect, salt(), self.weft)
    }

    /// A reply that is not part of a run, as this socket's frames. `salt` is fresh per reply
    /// so that every agentloop reply has an `id` of its own.
    pub(super) fn reply_frames(&self, event: Event, salt: u64) -> Vec<String> {
        Encoder::for_socket(self.dialect, salt, self.weft).encode(&Sequenced::bare(event))
    }

    /// The session this socket's own messages go to: the one it connected to, else `home`.
    pub(super) fn session_or(&self, home: impl FnOnce() -> String) -> String {
        if self.session_id.is_empty() {
            home()
        } else {
            self.session_id.clone()
        }
    }

    /// Whether the socket gets the frames of `run_id` as they go out (it does unless the run
    /// was streaming when it connected and it has not resumed it).
    pub(super) fn follows(&self, run_id: &str) -> bool {
        !self.not_following.iter().any(|r| r == run_id)
    }

    pub(super) fn runs_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// Counts a frame at `now` (ms) against `limit` a minute: a window starts with the first
    /// frame more than a minute after the last window's start.
    pub(super) fn take_frame(&mut self, now: f64, limit: u32) -> Allowance {
        if now - self.window_start > 60_000.0 {
            self.window_start = now;
            self.window_frames = 0;
        }
        self.window_frames += 1;
        match self.window_frames.checked_sub(limit) {
            None | Some(0) => Allowance::Within,
            Some(1) => Allowance::JustOver,
            Some(_) => Allowance::Over,
        }
    }

    /// What the socket declared with `client_tools`, to declare again on a link.
    pub(super) fn declared_tools(&self) -> Option<ClientTools> {
        (self.approvals || !self.tools.is_empty()).then(|| ClientTools {
            tools: self
                .tools
                .iter()
                .map(|t| ToolSpec {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone().into(),
                    read_only: t.read_only,
                })
                .collect(),
            approvals: self.approvals,
        })
    }
}

/// Whether an approval the run asks for can be answered: by a socket that can approve, or by
/// an AI SDK page whose request is open (`page_listening`). With nobody, it is refused at once.
pub(super) fn someone_can_approve<'a>(
    mut sockets: impl Iterator<Item = &'a SocketInfo>,
    page_listening: bool,
) -> bool {
    sockets.any(SocketInfo::can_approve) || page_listening
}

/// `SocketInfo::dialect` as its name. No attachment outlives the build that wrote it (a deploy
/// closes every socket of a Durable Object), so a name this build does not know cannot be read
/// back; it is refused rather than read as loom.
mod dialect_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use weft_protocol::Dialect;

    pub(super) fn serialize<S: Serializer>(dialect: &Dialect, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(dialect.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Dialect, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Dialect::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format_args!("unknown dialect {name:?} in an attachment"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(dialect: Dialect, weft: bool) -> SocketInfo {
        SocketInfo::new(dialect, "s".into(), weft)
    }

    #[test]
    fn an_attachment_reads_back_in_the_form_it_always_had() {
        // As the build before the typed dialect wrote it.
        let stored = json!({
            "dialect": "agentloop", "session_id": "s", "weft": true, "current": "b",
            "approvals": false, "tools": [], "window_start": 5.0, "window_frames": 2,
            "not_following": ["run-1"], "grant": null, "client": "ip:1"
        });
        let read: SocketInfo = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(read.dialect, Dialect::Agentloop);
        assert_eq!(read.current.as_deref(), Some("b"));
        assert_eq!(serde_json::to_value(&read).unwrap(), stored);
        // The oldest attachments had no weft, current, not_following, grant or client.
        let oldest = json!({
            "dialect": "cueso", "session_id": "", "approvals": true, "tools": [],
            "window_start": 0.0, "window_frames": 0
        });
        let read: SocketInfo = serde_json::from_value(oldest).unwrap();
        assert_eq!(
            (read.dialect, read.weft, read.approvals),
            (Dialect::Cueso, false, true)
        );
    }

    #[test]
    fn an_unknown_dialect_is_refused_not_read_as_loom() {
        let mut stored = serde_json::to_value(info(Dialect::Loom, false)).unwrap();
        stored["dialect"] = json!("klingon");
        let err = serde_json::from_value::<SocketInfo>(stored).unwrap_err();
        assert!(
            err.to_string().contains("unknown dialect \"klingon\""),
            "{err}"
        );
    }

    #[test]
    fn who_may_approve() {
        for dialect in Dialect::ALL {
            // An original client approves only where its own documents have approvals.
            assert_eq!(
                info(dialect, false).can_approve(),
                matches!(dialect, Dialect::Agentloop | Dialect::Agui),
                "{dialect}"
            );
            assert!(info(dialect, true).can_approve(), "{dialect}");
            let mut declared = info(dialect, false);
            declared.approvals = true;
            assert!(declared.can_approve(), "{dialect}");
        }
        let cueso = info(Dialect::Cueso, false);
        let loom = info(Dialect::Loom, false);
        assert!(!someone_can_approve([&cueso, &loom].into_iter(), false));
        assert!(someone_can_approve([&cueso, &loom].into_iter(), true));
        let agentloop = info(Dialect::Agentloop, false);
        assert!(someone_can_approve([&cueso, &agentloop].into_iter(), false));
        assert!(!someone_can_approve(std::iter::empty(), false));
    }

    #[test]
    fn a_socket_gets_its_limit_then_one_warning_then_silence_until_the_next_minute() {
        let mut socket = info(Dialect::Loom, false);
        let t0 = 1_000_000.0;
        for n in 0..3 {
            assert_eq!(socket.take_frame(t0 + f64::from(n), 3), Allowance::Within);
        }
        assert_eq!(socket.take_frame(t0 + 10.0, 3), Allowance::JustOver);
        assert_eq!(socket.take_frame(t0 + 20.0, 3), Allowance::Over);
        assert_eq!(socket.take_frame(t0 + 60_000.0, 3), Allowance::Over);
        assert_eq!(socket.take_frame(t0 + 60_001.0, 3), Allowance::Within);
        assert_eq!(socket.window_frames, 1);
    }

    #[test]
    fn a_reply_is_in_the_sockets_dialect() {
        let pong = Event::Pong { id: "p".into() };
        let loom = info(Dialect::Loom, false).reply_frames(pong.clone(), 1);
        assert_eq!(loom.len(), 1);
        let frame: Value = serde_json::from_str(&loom[0]).unwrap();
        assert_eq!(frame["type"], "pong");
        assert_eq!(frame["id"], "p");
        // agentloop has no pong of its own: a weft client gets the extension frame, an
        // original one nothing.
        let weft = info(Dialect::Agentloop, true).reply_frames(pong.clone(), 1);
        let original = info(Dialect::Agentloop, false).reply_frames(pong, 1);
        assert_eq!(
            (weft.len(), original.len()),
            (1, 0),
            "{weft:?} {original:?}"
        );
    }

    #[test]
    fn what_a_socket_declared_is_declared_again_on_a_link() {
        let mut socket = info(Dialect::Cueso, true);
        assert_eq!(socket.declared_tools(), None);
        socket.tools.push(ClientTool::from(ToolSpec {
            name: "pick_color".into(),
            description: None,
            input_schema: json!({"type": "object"}).into(),
            read_only: true,
        }));
        let declared = socket.declared_tools().unwrap();
        assert!(!declared.approvals);
        assert_eq!(declared.tools[0].name, "pick_color");
        assert!(declared.tools[0].read_only);
        assert!(socket.runs_tool("pick_color") && !socket.runs_tool("web_fetch"));
        socket.tools.clear();
        socket.approvals = true;
        assert!(socket.declared_tools().unwrap().approvals);
    }
}
