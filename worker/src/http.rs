//! The HTTP stream track: dialects whose turn is one HTTP request answered by a stream of the
//! run's events (the AI SDK's `useChat`), as one kind of client of the session beside its
//! sockets.
//!
//! What an HTTP dialect brings is one [`HttpDialect`] value: how its request reads (into the
//! session it names and the canonical [`Command`]s it asks), and an [`HttpEncoder`] per
//! request that writes the run's sequenced events as the stream's bytes, ends a turn the run
//! pauses in, and ends the stream. Its routes are rows of [`ROUTES`]. The rest — auth, origin
//! and CORS, handing the turn to the session's object, the stream's life there
//! (`session/http.rs`) — is the same for every one of them.
//!
//! Adding an HTTP dialect (AG-UI's `POST /agui` was the second): its protocol module (a
//! request reader, an encoder of the run's events), and here its [`HttpDialect`] value with its
//! [`HttpEncoder`], its entry in [`DIALECTS`] and its rows in [`ROUTES`].
//!
//! The Worker reads a request's body once, to learn the session it names; its object gets the
//! commands read from it, each as a loom frame on a line of its own ([`Turn::encode`]): a few
//! small frames rather than the whole conversation the AI SDK sends with every turn.

use weft_protocol::command::{Command, RunCommand};
use weft_protocol::dialect::{agui, aisdk};
use weft_protocol::{Agent, Dialect, Limits, Sequenced};
use worker::Method;

/// One request's stream of a run, in its dialect.
pub trait HttpEncoder: std::fmt::Debug {
    /// The bytes that carry one event of the run (none for one the dialect does not show).
    fn encode(&mut self, ev: &Sequenced) -> Vec<u8>;
    /// Whether the run's end went out: the stream has nothing more to say.
    fn is_finished(&self) -> bool;
    /// The bytes that end the turn while the run waits for the page (an approval, a tool's
    /// output): the page answers in its next request.
    fn pause(&mut self) -> Vec<u8>;
    /// The bytes that end the stream with an error before its run ended.
    fn error(&mut self, message: &str) -> Vec<u8>;
    /// The stream's last bytes.
    fn end(&self) -> &'static [u8];
}

/// What one HTTP dialect brings to the track.
#[derive(Debug)]
pub struct HttpDialect {
    /// Its name in the internal URL a turn reaches the session at.
    pub name: &'static str,
    /// The most a request body may hold.
    pub max_body_bytes: usize,
    /// Reads a request body.
    pub decode: fn(&[u8], Limits) -> Result<Turn, weft_protocol::Error>,
    /// A stream's encoder, fresh for each request, for the session it streams (AG-UI names
    /// it in every run's first and last event).
    pub encoder: fn(session: &str) -> Box<dyn HttpEncoder>,
    /// The headers of its stream's response.
    pub headers: &'static [(&'static str, &'static str)],
}

impl PartialEq for HttpDialect {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Every HTTP dialect, for the session's object to find by name.
pub const DIALECTS: &[&HttpDialect] = &[&AISDK, &AGUI];

/// The dialect named `name` in an internal URL.
pub fn dialect(name: &str) -> Option<&'static HttpDialect> {
    DIALECTS.iter().copied().find(|d| d.name == name)
}

/// What a request asks of its session.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The session it names (the AI SDK's chat id, AG-UI's `threadId`).
    pub session: String,
    /// What it asks, in order.
    pub commands: Vec<Command>,
}

impl Turn {
    /// The commands as the session's object gets them: a loom frame a line (a frame is one
    /// line of JSON). `Err`: a command loom cannot carry, which no HTTP dialect produces.
    ///
    /// loom's `run` always names its agent, so a run that names none is given
    /// `default_agent` (the operator's `DEFAULT_AGENT`) here: the session's choice for a run
    /// that names none would be the same agent.
    pub fn encode(&self, default_agent: &str) -> Result<String, weft_protocol::Error> {
        let frames = self
            .commands
            .iter()
            .map(|c| match c {
                Command::Run(run) if run.agent.is_none() => {
                    let run = RunCommand {
                        agent: Some(Agent::from(default_agent)),
                        ..run.clone()
                    };
                    Dialect::Loom.encode_request(&Command::Run(run), "")
                }
                _ => Dialect::Loom.encode_request(c, ""),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(frames.join("\n"))
    }

    /// Reads [`Turn::encode`]'s lines back.
    pub fn decode_commands(
        text: &str,
        limits: Limits,
    ) -> Result<Vec<Command>, weft_protocol::Error> {
        text.lines()
            .filter(|line| !line.is_empty())
            .map(|line| Dialect::Loom.decode_request(line.as_bytes(), limits))
            .collect()
    }
}

/// What a route does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A turn: the request's commands go to the session, the run's events come back.
    Turn,
    /// The session's running turn again, from its start, then live (204 when none runs).
    Replay,
}

/// Where a route is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutePath {
    /// This path; the session is named in the body.
    Exact(&'static str),
    /// A path of the prefix, the session's id, and the suffix.
    Around(&'static str, &'static str),
}

/// One HTTP route of the track.
#[derive(Debug)]
pub struct Route {
    pub method: Method,
    pub path: RoutePath,
    pub dialect: &'static HttpDialect,
    pub action: Action,
}

/// Every HTTP route of the track.
pub const ROUTES: &[Route] = &[
    Route {
        method: Method::Post,
        path: RoutePath::Exact("/api/chat"),
        dialect: &AISDK,
        action: Action::Turn,
    },
    Route {
        method: Method::Get,
        path: RoutePath::Around("/api/chat/", "/stream"),
        dialect: &AISDK,
        action: Action::Replay,
    },
    Route {
        method: Method::Post,
        path: RoutePath::Exact("/agui"),
        dialect: &AGUI,
        action: Action::Turn,
    },
    // A reloaded page's reattach: `HttpAgent` 1.0 has no `connect()` of its own; a subclass
    // whose `connect()` reads this gets the thread's running run (README, "With AG-UI").
    Route {
        method: Method::Get,
        path: RoutePath::Around("/agui/", "/stream"),
        dialect: &AGUI,
        action: Action::Replay,
    },
];

impl RoutePath {
    /// `Some` when `path` is this route's: the session's id it names, if it names one.
    fn matches(self, path: &str) -> Option<Option<&str>> {
        match self {
            RoutePath::Exact(p) => (p == path).then_some(None),
            RoutePath::Around(prefix, suffix) => path
                .strip_prefix(prefix)?
                .strip_suffix(suffix)
                .filter(|id| !id.is_empty() && !id.contains('/'))
                .map(Some),
        }
    }
}

/// The route of a request, and the session its path names, if it names one.
pub fn route<'p>(method: &Method, path: &'p str) -> Option<(&'static Route, Option<&'p str>)> {
    ROUTES.iter().find_map(|r| {
        let named = r.path.matches(path)?;
        (r.method == *method).then_some((r, named))
    })
}

/// Whether `path` is a route of the track, by any method (a browser's CORS preflight).
pub fn is_route(path: &str) -> bool {
    ROUTES.iter().any(|r| r.path.matches(path).is_some())
}

/// The AI SDK's UI message stream (`weft_protocol::dialect::aisdk`), for `useChat`.
pub const AISDK: HttpDialect = HttpDialect {
    name: "aisdk",
    // The whole conversation comes with every turn.
    max_body_bytes: 16 * 1024 * 1024,
    decode: |body, limits| {
        let chat = aisdk::decode_request(body, limits)?;
        Ok(Turn {
            session: chat.chat_id,
            commands: chat.commands,
        })
    },
    encoder: |_| Box::new(AisdkEncoder(aisdk::Encoder::new())),
    headers: &[
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        aisdk::STREAM_HEADER,
    ],
};

/// UI message chunks, each a server-sent event.
#[derive(Debug)]
struct AisdkEncoder(aisdk::Encoder);

fn sse_events(chunks: Vec<String>) -> Vec<u8> {
    chunks
        .iter()
        .flat_map(|c| aisdk::sse(c).into_bytes())
        .collect()
}

impl HttpEncoder for AisdkEncoder {
    fn encode(&mut self, ev: &Sequenced) -> Vec<u8> {
        sse_events(self.0.encode(ev))
    }

    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    fn pause(&mut self) -> Vec<u8> {
        sse_events(self.0.pause())
    }

    fn error(&mut self, message: &str) -> Vec<u8> {
        let chunk = serde_json::json!({ "type": "error", "errorText": message });
        sse_events(vec![chunk.to_string()])
    }

    fn end(&self) -> &'static [u8] {
        aisdk::DONE.as_bytes()
    }
}

/// AG-UI (`weft_protocol::dialect::agui`), for `HttpAgent` from `@ag-ui/client`: a
/// `RunAgentInput` in, the run's AG-UI events out as server-sent events.
pub const AGUI: HttpDialect = HttpDialect {
    name: "agui",
    // The whole conversation comes with every run, as with the AI SDK.
    max_body_bytes: 16 * 1024 * 1024,
    decode: |body, limits| {
        let request = agui::decode_request(body, limits)?;
        Ok(Turn {
            session: request.input.thread_id,
            commands: request.commands,
        })
    },
    encoder: |session| Box::new(AguiEncoder(agui::Encoder::for_thread(session))),
    headers: agui::STREAM_HEADERS,
};

/// AG-UI events, each a server-sent event.
#[derive(Debug)]
struct AguiEncoder(agui::Encoder);

fn agui_events(events: Vec<agui::AguiEvent>) -> Vec<u8> {
    events
        .iter()
        .flat_map(|e| agui::sse(&e.to_json()).into_bytes())
        .collect()
}

impl HttpEncoder for AguiEncoder {
    fn encode(&mut self, ev: &Sequenced) -> Vec<u8> {
        agui_events(self.0.encode(ev))
    }

    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    fn pause(&mut self) -> Vec<u8> {
        agui_events(self.0.pause())
    }

    fn error(&mut self, message: &str) -> Vec<u8> {
        agui_events(self.0.error(message))
    }

    fn end(&self) -> &'static [u8] {
        // An AG-UI stream simply ends after its run's last event.
        b""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::command::{ApprovalDecision, ClientTools, RunCommand, ToolResult};
    use weft_protocol::event::ToolSpec;
    use weft_protocol::{Agent, Review};

    #[test]
    fn each_route_is_found_by_method_and_path() {
        let (turn, named) = route(&Method::Post, "/api/chat").expect("the AI SDK's turn");
        assert_eq!(
            (turn.dialect.name, turn.action, named),
            ("aisdk", Action::Turn, None)
        );
        let (replay, named) = route(&Method::Get, "/api/chat/chat-7/stream").expect("its replay");
        assert_eq!((replay.action, named), (Action::Replay, Some("chat-7")));
        assert!(route(&Method::Get, "/api/chat").is_none());
        assert!(route(&Method::Post, "/api/chat/chat-7/stream").is_none());
        assert!(route(&Method::Get, "/api/chat//stream").is_none());
        assert!(route(&Method::Get, "/api/chat/a/b/stream").is_none());
        assert!(is_route("/api/chat") && is_route("/api/chat/x/stream"));
        assert!(!is_route("/api/chats"));
        let (agui, named) = route(&Method::Post, "/agui").expect("AG-UI's run");
        assert_eq!(
            (agui.dialect.name, agui.action, named),
            ("agui", Action::Turn, None)
        );
        assert!(route(&Method::Get, "/agui").is_none() && is_route("/agui"));
        let (reattach, named) = route(&Method::Get, "/agui/thread-9/stream").expect("its reattach");
        assert_eq!(
            (reattach.dialect.name, reattach.action, named),
            ("agui", Action::Replay, Some("thread-9"))
        );
        assert_eq!(dialect("agui"), Some(&AGUI));
        assert_eq!(dialect("aisdk"), Some(&AISDK));
        assert_eq!(dialect("loom"), None);
    }

    /// Whatever an HTTP dialect reads reaches the session's object as it was read.
    #[test]
    fn a_turn_reaches_the_session_as_it_was_read() {
        let commands = vec![
            Command::ClientTools(ClientTools {
                tools: vec![ToolSpec {
                    name: "pick_color".into(),
                    description: Some("asks the user".into()),
                    input_schema: serde_json::json!({"type": "object"}).into(),
                    read_only: true,
                }],
                approvals: true,
            }),
            Command::Run(RunCommand {
                message: "line one\nline two".into(),
                agent: Some(Agent::Unknown("plan-and-solve".into())),
                thread_id: Some("chat-1".into()),
                ..RunCommand::default()
            }),
            Command::ApprovalResponse(ApprovalDecision {
                call_id: Some("c1".into()),
                review: Review::NoContinue,
                custom_deny_message: Some("not now".into()),
                explanation: None,
            }),
            Command::ToolResult(ToolResult {
                call_id: "c2".into(),
                result: "{\"color\": \"red\"}".into(),
                is_error: true,
            }),
        ];
        let turn = Turn {
            session: "chat-1".into(),
            commands: commands.clone(),
        };
        let text = turn.encode("react").expect("loom carries every command");
        assert_eq!(text.lines().count(), 4);
        let limits = Limits {
            max_frame_bytes: AISDK.max_body_bytes,
        };
        assert_eq!(Turn::decode_commands(&text, limits), Ok(commands));
        assert_eq!(Turn::decode_commands("", limits), Ok(Vec::new()));
        assert!(Turn::decode_commands("{\"type\": \"run\"}", limits).is_err());
    }

    #[test]
    fn the_ai_sdk_stream_is_server_sent_events() {
        let mut encoder = (AISDK.encoder)("chat-1");
        let error = String::from_utf8(encoder.error("boom")).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(
                error
                    .strip_prefix("data: ")
                    .and_then(|e| e.strip_suffix("\n\n"))
                    .unwrap()
            )
            .unwrap(),
            serde_json::json!({"type": "error", "errorText": "boom"})
        );
        assert_eq!(encoder.end(), b"data: [DONE]\n\n");
        assert!(!encoder.is_finished());
    }

    /// AG-UI's threadId is the session; its stream's error is a RUN_ERROR event, and the
    /// stream ends with nothing after the run's last event.
    #[test]
    fn an_agui_run_is_its_thread_s_turn() {
        let body = br#"{"threadId":"thread-9","runId":"r","messages":[{"id":"u","role":"user","content":"hi"}]}"#;
        let limits = Limits {
            max_frame_bytes: AGUI.max_body_bytes,
        };
        let turn = (AGUI.decode)(body, limits).expect("a RunAgentInput");
        assert_eq!(turn.session, "thread-9");
        assert!(matches!(&turn.commands[..], [Command::Run(r)] if r.message == "hi"));
        assert!((AGUI.decode)(br#"{"runId":"r","messages":[]}"#, limits).is_err());
        let mut encoder = (AGUI.encoder)("thread-9");
        let error = String::from_utf8(encoder.error("boom")).unwrap();
        let event: serde_json::Value = serde_json::from_str(
            error
                .strip_prefix("data: ")
                .and_then(|e| e.strip_suffix("\n\n"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            event,
            serde_json::json!({"type": "RUN_ERROR", "message": "boom"})
        );
        assert!(encoder.is_finished());
        assert!(encoder.end().is_empty());
        assert!(AGUI
            .headers
            .contains(&("content-type", "text/event-stream")));
    }
}
