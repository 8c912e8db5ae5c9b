//! Which server is on the other end, and what that changes: the one place where the client's
//! rules differ between weft and the original server of a dialect.
//!
//! weft serves everything the SDK can ask in every dialect (its extensions included); an
//! original serves its own document only, and the dialect's description
//! ([`Dialect::describe`], its `original` rules) says what that is. [`Peer`] joins the two, so the
//! connection asks "does the server resume?" instead of testing the dialect and the kind.
//!
//! How the kind is found (`server: "auto"`): the client offers `weft.<dialect>`. A server that
//! selects no subprotocol is an original — browsers fail such a handshake, so the client
//! connects again without offering one. A server that selects it is weft, except where the
//! original selects whatever comes first ([`Original::selects_offered_subprotocol`],
//! agentloop's Node `ws` server): there weft proves itself by answering a `ping` with its
//! `pong`, which only weft does in that dialect (the original answers "Unknown message type:
//! ping"). The probe costs one round trip on the first connect to such a server, and nothing
//! on later sockets: the kind found is kept for the life of the client.

use weft_protocol::dialect::{Original, TurnEnd};
use weft_protocol::text;
use weft_protocol::{Command, Dialect};

/// The `server` option: which server to expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerChoice {
    /// Find out on the first connect (see the module docs).
    #[default]
    Auto,
    /// A weft server: offer `weft.<dialect>` and use every extension.
    Weft,
    /// An original server: offer no subprotocol, speak only the dialect's document.
    Original,
}

impl ServerChoice {
    pub fn parse(s: &str) -> Option<ServerChoice> {
        match s {
            "auto" => Some(ServerChoice::Auto),
            "weft" => Some(ServerChoice::Weft),
            "original" => Some(ServerChoice::Original),
            _ => None,
        }
    }

    /// The kind it fixes before any connect, if it fixes one.
    pub fn known(self) -> Option<ServerKind> {
        match self {
            ServerChoice::Auto => None,
            ServerChoice::Weft => Some(ServerKind::Weft),
            ServerChoice::Original => Some(ServerKind::Original),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// weft: every request, resume, cancel, client tools, run ids on every frame.
    Weft,
    /// The dialect's original server: its document only.
    Original,
}

impl ServerKind {
    /// `"weft"` or `"original"`, as `client.server` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerKind::Weft => "weft",
            ServerKind::Original => "original",
        }
    }
}

/// The server on the other end: its dialect and kind, and every rule that follows from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub dialect: Dialect,
    pub kind: ServerKind,
}

impl Peer {
    fn original(self) -> bool {
        self.kind == ServerKind::Original
    }

    /// How the dialect's original server differs from weft.
    fn rules(self) -> Original {
        self.dialect.original()
    }

    /// Whether the server serves this request (whether the dialect can carry it at all is the
    /// encoder's to say).
    pub fn serves(self, command: &Command) -> bool {
        !self.original() || self.dialect.original_serves(command)
    }

    /// Whether a run cut by a dropped socket can be resumed on the next one (and a run
    /// started elsewhere followed): weft's `resume`.
    pub fn resumes(self) -> bool {
        !self.original()
    }

    /// Whether the socket may declare client tools and approvals (`client_tools`) and send
    /// their results.
    pub fn takes_client_tools(self) -> bool {
        !self.original()
    }

    /// Whether the server acknowledges approval answers and tool results with events naming
    /// their call (so unacknowledged ones are sent again on a new socket).
    pub fn acknowledges_answers(self) -> bool {
        !self.original()
    }

    /// Whether to send heartbeat pings now. Only where the server answers `ping`; and not
    /// while a run of ours streams on a server that answers one request at a time (original
    /// loom answers the ping after `run_end`, so a long silent tool call would look like a
    /// dead socket).
    pub fn heartbeat(self, running: bool) -> bool {
        let ping = Command::Ping { id: String::new() };
        self.serves(&ping) && !(running && self.answers_after_runs())
    }

    /// Whether a request sent while a run of ours streams is answered only after that run
    /// ends (original loom takes one request at a time). Its timeout then counts from the
    /// run's end: a run may take minutes, and the request is not lost meanwhile.
    pub fn answers_after_runs(self) -> bool {
        self.original() && self.rules().names_runs
    }

    /// Whether the first event of a run named by the server, whatever its type, belongs to our
    /// one run waiting to start. weft announces every run with `run_start` (and streams runs of
    /// other sockets too, which must not be taken); original loom never sends `run_start` and
    /// streams only the run this socket asked for, one at a time.
    pub fn adopts_any_first_event(self) -> bool {
        self.original() && self.rules().names_runs
    }

    /// Whether the client takes up the session the server named for a run that named none
    /// (see [`Original::names_sessions`]). weft's session is the socket's.
    pub fn names_sessions(self) -> bool {
        self.original() && self.rules().names_sessions
    }

    /// Whether the server streams other clients' turns to this socket too, each opened by its
    /// message (see [`Original::broadcasts_turns`]).
    pub fn broadcasts_turns(self) -> bool {
        self.original() && self.rules().broadcasts_turns
    }

    /// Whether an `error` from the server means it is closing the socket (see
    /// [`Original::closes_after_error`]).
    pub fn closes_after_error(self) -> bool {
        self.original() && self.rules().closes_after_error
    }

    /// Whether the server takes the runs of a socket one at a time in the order sent, so
    /// that a run it names itself, or one it names not at all, is the oldest of ours still
    /// open. weft streams runs side by side, each named.
    pub fn answers_in_order(self) -> bool {
        self.original()
    }

    /// How a turn ends, when the server does not say it with weft's `run_end`: `None` on weft
    /// (every dialect carries weft's end of run).
    pub fn turn_end(self) -> Option<TurnEnd> {
        self.original().then(|| self.rules().turn_end)
    }

    /// The method names for an `unsupported` error: why the server cannot serve this.
    pub fn why_not(self, what: &str) -> String {
        text::concat(&[
            what,
            " needs a weft server; the original ",
            self.dialect.as_str(),
            " server does not serve it (see \"Talking to the original servers\" in the \
             weft-sdk README)",
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weft_serves_everything_and_originals_their_document() {
        let ping = Command::Ping { id: "p".into() };
        let cancel = Command::Cancel { run_id: "r".into() };
        for dialect in Dialect::ALL {
            let weft = Peer {
                dialect,
                kind: ServerKind::Weft,
            };
            let original = Peer {
                dialect,
                kind: ServerKind::Original,
            };
            assert!(weft.serves(&ping) && weft.serves(&cancel) && weft.resumes());
            assert!(weft.heartbeat(true) && weft.turn_end().is_none());
            assert!(!original.serves(&cancel) && !original.resumes());
            assert!(!original.takes_client_tools() && !original.acknowledges_answers());
            assert_eq!(original.heartbeat(false), dialect == Dialect::Loom);
            assert!(!original.heartbeat(true));
            assert_eq!(original.adopts_any_first_event(), dialect == Dialect::Loom);
        }
    }

    #[test]
    fn the_option_parses() {
        assert_eq!(ServerChoice::parse("auto"), Some(ServerChoice::Auto));
        assert_eq!(
            ServerChoice::parse("original").and_then(ServerChoice::known),
            Some(ServerKind::Original)
        );
        assert_eq!(ServerChoice::parse("Weft"), None);
    }
}
