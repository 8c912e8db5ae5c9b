//! What the *original* server of each dialect does, as observed (`specs/ORIGINALS.md`), for a
//! client that may be talking to one instead of weft.
//!
//! weft serves every request of every dialect plus its extensions (`resume`, `cancel`,
//! `client_tools`, `tool_result`, `ping` everywhere) and marks every run frame with `run_id` and
//! `event_id`. The original servers serve only their own document, name runs their own way (or
//! not at all) and end a turn with their own frame. These rules differ by dialect, so they are
//! methods of [`Dialect`] (STYLE 17): a client asks them instead of testing the dialect.

use crate::command::Command;
use crate::dialect::Dialect;

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
            Command::ToolResult(_)
            | Command::ClientTools(_)
            | Command::Resume(_)
            | Command::Cancel { .. } => false,
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
