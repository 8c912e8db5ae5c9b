//! What the *original* server and clients of each dialect do, as observed (`specs/ORIGINALS.md`):
//! for a client that may be talking to an original server instead of weft, and for weft serving
//! an original client (a socket that did not offer `weft.<dialect>`).
//!
//! weft serves every request of every dialect plus its extensions (`resume`, `cancel`,
//! `client_tools`, `tool_result`, `ping` everywhere) and marks every run frame with `run_id` and
//! `event_id`. The original servers serve only their own document, name runs their own way (or
//! not at all) and end a turn with their own frame. These rules differ by dialect, so they are
//! methods of [`Dialect`] (STYLE 17): a client asks them instead of testing the dialect.

use alloc::string::String;

use crate::command::Command;
use crate::dialect::{agentchat, Dialect};
use crate::{Error, Event};

/// The frame with which an original server closes a turn, as the canonical event it decodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// Its own end-of-run frame, sent once: loom `run_end`, cueso `final` ([`crate::Event::RunEnd`]).
    RunEnd,
    /// agentchat has no end-of-run frame: the turn's one `agent_message`
    /// ([`crate::Event::LlmComplete`] with text) is its end.
    Reply,
    /// agentloop's `loading_state {loading: false}` ([`crate::Event::RunEnd`] without a reply),
    /// which it may send twice, and which a previous connection's loop may still send on a new
    /// socket: only the first after the turn's `loading_state {loading: true}` counts, and the
    /// reply is the turn's last assistant message.
    LoadingStateOff,
}

impl Dialect {
    /// Whether weft serves this request on a socket of this dialect: every request the
    /// dialect's document has, plus weft's extensions (`ping`, `resume`, `cancel`,
    /// `client_tools`, `tool_result`, an approval answer naming its call) everywhere. The rest
    /// belongs to one document alone: the tool and history queries to loom's, the context
    /// requests to agentloop's. The dialect's encoder refuses exactly what this refuses.
    pub fn serves(self, command: &Command) -> bool {
        match command {
            Command::Run(_)
            | Command::Ping { .. }
            | Command::Resume(_)
            | Command::Cancel { .. }
            | Command::ClientTools(_)
            | Command::ToolResult(_) => true,
            // Only agentloop's own message answers "the pending request" without naming it.
            Command::ApprovalResponse(d) => d.call_id.is_some() || self == Dialect::Agentloop,
            // The web app's requests: loom's newer server's, after the spec.
            Command::ToolsList(_)
            | Command::ToolShow(_)
            | Command::UserMessages(_)
            | Command::LoomApp(_) => self == Dialect::Loom,
            Command::ContextInfo { .. } | Command::Compact { .. } => self == Dialect::Agentloop,
        }
    }

    /// Whether a run in this dialect reports the context window as it goes (`context_info`
    /// frames). agentloop's document has them; loom carries every canonical event. agentchat
    /// and cueso have no such frame, so a client there asks for it (`contextInfo()` on an
    /// agentloop socket of the same session) when it wants it.
    pub fn reports_context(self) -> bool {
        matches!(self, Dialect::Loom | Dialect::Agentloop)
    }

    /// Whether every socket of this dialect is asked to approve tool calls. loom and agentloop
    /// documents carry `tool_approval`, so their clients expect it; agentchat and cueso have no
    /// approval frames, and a socket of theirs is asked only once it opts in with
    /// `client_tools {approvals: true}`, which their original clients never send.
    pub fn approves_without_opt_in(self) -> bool {
        matches!(self, Dialect::Loom | Dialect::Agentloop)
    }

    /// Whether this event closes an LLM response: the step in which the server starts the
    /// response's tool calls, so a client tool that needs no approval is due then. Every
    /// dialect reports the response's usage in that step, and its completion when it has text;
    /// agentchat sends no completion for a response without text, only the usage.
    pub fn ends_response(self, event: &Event) -> bool {
        matches!(event, Event::LlmComplete { .. } | Event::Usage(_))
    }

    /// Whether the dialect's own documents let a client answer an approval request, so every
    /// socket of it can approve (agentloop's `approval_response`). loom documents
    /// `tool_approval` but no answer to it; agentchat and cueso have no approvals at all: their
    /// sockets approve only once they opt in (specs/README, "Approvals").
    pub fn documents_approvals(self) -> bool {
        matches!(self, Dialect::Agentloop)
    }

    /// Whether an original client of this dialect shows each reasoning frame as a thought of
    /// its own (agentloop's CLI prints a "Reasoning:" block per item, Nova's dashboard a card
    /// per `agent_thinking`), so it must get each thought once, whole.
    pub fn sends_whole_thoughts(self) -> bool {
        matches!(self, Dialect::Agentloop | Dialect::Agentchat)
    }

    /// The text of the `error` frame that answers a request this endpoint could not decode:
    /// the original server's own wording where it is known (its clients and tests match on
    /// it), else the error's own message. The `code` stays [`Error::code`].
    pub fn error_text(self, e: &Error) -> String {
        match (self, e) {
            (Dialect::Agentloop | Dialect::Agentchat, Error::UnknownType { kind, .. }) => {
                alloc::format!("Unknown message type: {kind}")
            }
            (Dialect::Agentchat, Error::Invalid { reason, .. })
                if reason == agentchat::EMPTY_MESSAGE =>
            {
                String::from(agentchat::EMPTY_MESSAGE)
            }
            (
                Dialect::Agentloop,
                Error::InvalidJson { .. }
                | Error::NotAnObject { .. }
                | Error::MissingType
                | Error::Field { .. }
                | Error::InvalidUtf8 { .. },
            ) => String::from("Invalid message format"),
            _ => alloc::string::ToString::to_string(e),
        }
    }

    /// What an approval answer that finds nothing pending is told, in the original server's
    /// words where it has them.
    pub fn no_pending_approval_text(self) -> &'static str {
        match self {
            Dialect::Agentloop => "No pending approval request",
            _ => "no approval is pending",
        }
    }

    /// Whether the original server, offered `weft.<dialect>` as a WebSocket subprotocol, selects
    /// it anyway. agentloop's (Node `ws`) selects the first protocol offered, so there a
    /// selected subprotocol does not prove a weft server; the others select none, and
    /// browsers and Node fail a handshake that offered one.
    pub fn original_selects_offered_subprotocol(self) -> bool {
        matches!(self, Dialect::Agentloop)
    }

    /// Whether the original server serves this request: only what its document has. A request
    /// outside it is refused (agentloop, agentchat, loom answer an `error`; cueso closes the
    /// socket), so a client must not send one.
    pub fn original_serves(self, command: &Command) -> bool {
        match command {
            Command::Run(_) => true,
            Command::Ping { .. }
            | Command::ToolsList(_)
            | Command::ToolShow(_)
            | Command::UserMessages(_) => self == Dialect::Loom,
            // agentloop's own approval message; it answers the one pending request, whatever
            // call id comes with it.
            Command::ApprovalResponse(_)
            | Command::ContextInfo { .. }
            | Command::Compact { .. } => self == Dialect::Agentloop,
            // The spec's loom server has no web-app requests (its newer one does).
            Command::ToolResult(_)
            | Command::ClientTools(_)
            | Command::Resume(_)
            | Command::Cancel { .. }
            | Command::LoomApp(_) => false,
        }
    }

    /// Whether the original server names each run itself and handles one request per socket
    /// at a time (loom: `run-<uuid>`, whatever id the client asked for; a `ping` sent during a
    /// run is answered after its `run_end`). A client then takes the first run it hears of
    /// after its `run` request as that run, and expects no prompt answer to anything while a
    /// run streams.
    pub fn original_names_runs(self) -> bool {
        matches!(self, Dialect::Loom)
    }

    /// Whether the original server names the session of a message that names none, and a
    /// client names it from then on to stay in that conversation. cueso's answers
    /// `session_id: null` with `session_created` and a fresh id, which its web app sends in
    /// every later message; sent `null` again, the next message would start a new session with
    /// no history. (loom's envelope `session_id` is the run's own id; agentchat and agentloop
    /// name no session.)
    pub fn original_names_sessions(self) -> bool {
        matches!(self, Dialect::Cueso)
    }

    /// Whether the original server sends every client's turn to every socket, starting with
    /// the turn's message (agentchat's `user_message`: Nova broadcasts each event to all its
    /// sockets). A client then tells its own turn by that message, and another client's turn,
    /// which carries no id, must not become its run.
    pub fn original_broadcasts_turns(self) -> bool {
        matches!(self, Dialect::Agentchat)
    }

    /// Whether the original server closes the socket right after an `error` frame (cueso: any
    /// exception, a frame it cannot validate included). A client then sends nothing more on
    /// that socket: it would be lost with it.
    pub fn original_closes_after_error(self) -> bool {
        matches!(self, Dialect::Cueso)
    }

    /// How the original server closes a turn.
    pub fn original_turn_end(self) -> TurnEnd {
        match self {
            Dialect::Loom | Dialect::Cueso => TurnEnd::RunEnd,
            Dialect::Agentchat => TurnEnd::Reply,
            Dialect::Agentloop => TurnEnd::LoadingStateOff,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{ClientTools, Resume};

    #[test]
    fn only_loom_originals_answer_ping_and_none_resumes() {
        let ping = Command::Ping { id: "p".into() };
        let resume = Command::Resume(Resume {
            run_id: "r".into(),
            after_event_id: 0,
        });
        let tools = Command::ClientTools(ClientTools {
            tools: alloc::vec::Vec::new(),
            approvals: true,
        });
        for d in Dialect::ALL {
            assert_eq!(d.original_serves(&ping), d == Dialect::Loom, "{d}");
            assert!(!d.original_serves(&resume), "{d}");
            assert!(!d.original_serves(&tools), "{d}");
            assert!(!d.original_serves(&Command::Cancel { run_id: "r".into() }));
        }
        assert!(Dialect::Agentloop.original_serves(&Command::Compact { id: None }));
        assert!(!Dialect::Cueso.original_serves(&Command::Compact { id: None }));
    }

    /// Every command, with an approval answer that names its call and one that does not.
    fn every_command() -> alloc::vec::Vec<Command> {
        use crate::command::{
            ApprovalDecision, RunCommand, ToolFormat, ToolResult, ToolShowQuery, ToolsQuery,
            UserMessagesQuery,
        };
        use crate::Review;
        let answer = |call_id: Option<&str>| {
            Command::ApprovalResponse(ApprovalDecision {
                call_id: call_id.map(String::from),
                review: Review::Yes,
                custom_deny_message: None,
                explanation: None,
            })
        };
        alloc::vec![
            Command::Run(RunCommand {
                message: "hi".into(),
                ..RunCommand::default()
            }),
            Command::Ping { id: "p".into() },
            Command::Resume(Resume {
                run_id: "r".into(),
                after_event_id: 0,
            }),
            Command::Cancel { run_id: "r".into() },
            Command::ClientTools(ClientTools {
                tools: alloc::vec::Vec::new(),
                approvals: true,
            }),
            Command::ToolResult(ToolResult {
                call_id: "c".into(),
                result: "ok".into(),
                is_error: false,
            }),
            answer(Some("c")),
            answer(None),
            Command::ToolsList(ToolsQuery {
                id: "t".into(),
                working_folder: None,
                thread_id: None,
            }),
            Command::ToolShow(ToolShowQuery {
                id: "t".into(),
                name: "clock".into(),
                output: Some(ToolFormat::Json),
                working_folder: None,
                thread_id: None,
            }),
            Command::UserMessages(UserMessagesQuery {
                id: "m".into(),
                thread_id: "s".into(),
                before: None,
                limit: None,
            }),
            Command::ContextInfo { id: None },
            Command::Compact { id: None },
        ]
    }

    #[test]
    fn serves_is_what_the_encoders_carry() {
        for d in Dialect::ALL {
            for c in every_command() {
                let encoded = d.encode_request(&c, "f");
                assert_eq!(
                    d.serves(&c),
                    encoded.is_ok(),
                    "{d} {}: {encoded:?}",
                    c.kind()
                );
            }
        }
    }

    #[test]
    fn reports_context_is_what_the_encoders_send() {
        let info = crate::Sequenced::bare(Event::ContextInfo {
            token_count: 10,
            usage_percent: 1.0,
            transcript_length: 2,
            max_tokens: 8000,
            strategy: "s".into(),
        });
        for d in Dialect::ALL {
            let frames = crate::Encoder::new(d, 7).encode(&info);
            assert_eq!(d.reports_context(), !frames.is_empty(), "{d}: {frames:?}");
        }
    }

    #[test]
    fn only_agentloop_echoes_a_subprotocol_and_only_loom_names_runs() {
        let echoes: alloc::vec::Vec<_> = Dialect::ALL
            .into_iter()
            .filter(|d| d.original_selects_offered_subprotocol())
            .collect();
        assert_eq!(echoes, [Dialect::Agentloop]);
        assert!(Dialect::Loom.original_names_runs());
        assert_eq!(Dialect::Agentchat.original_turn_end(), TurnEnd::Reply);
    }
}
