//! A dialect, described once: everything that differs between dialects, as one `const` value
//! per dialect module (`loom::DIALECT`, `agentloop::DIALECT`, …), the way rustls keeps each
//! protocol version's differences in one `SupportedProtocolVersion` (STYLE 17). Next to it the
//! module has its codec (`CODEC`: its four translations and its fast path), which the
//! dialect module's `codec!` calls.
//!
//! Why the codec is a value of its own and not a field of the description: a description is
//! read at run time (the worker looks dialects up by endpoint and subprotocol, in a loop over
//! all of them), so every function a description points to stays linked into every binary that
//! reads one. With the codec inside, the Worker — which never decodes a server's frames nor
//! encodes a client's request — linked the client's decoders and fast path too: +15.7 KiB of
//! gzipped upload (measured with `wrangler deploy --dry-run`, 478.5 → 494.2 KiB). Called by a
//! `match` whose arms call each dialect's function directly, a codec function is linked only
//! where it is called, and inlined there as before.
//!
//! The worker, the SDK and the demo (through the SDK's `dialectInfo()`) ask the description,
//! a rule at a time ([`Dialect::requests`], [`Dialect::original`], …; [`Dialect::describe`] says
//! why not whole), instead of testing which dialect they speak. Every rule is a field that must be given, so a
//! dialect that forgets one does not compile (see [`Description`]); [`Dialect::ALL`], the
//! golden loops and the spec-example extraction are built from the list of descriptions.
//!
//! What the rules say about the *original* server and clients of each dialect is what was
//! observed (`specs/ORIGINALS.md`): for a client that may be talking to an original server
//! instead of weft, and for weft serving an original client (a socket that did not offer
//! `weft.<dialect>`). weft serves every request of every dialect plus its extensions (`resume`,
//! `cancel`, `client_tools`, `tool_result`, `ping` everywhere) and marks every run frame with
//! `run_id` and `event_id`; the original servers serve only their own document, name runs their
//! own way (or not at all) and end a turn with their own frame.

use alloc::string::String;
use alloc::vec::Vec;

use super::fast::Delta;
use super::{agentchat, agentloop, agui, cueso, loom, Dialect, Out};
use crate::command::Command;
use crate::json::{Object, Reader};
use crate::{Error, Event, Sequenced};

/// One dialect: its names, its endpoint and every rule in which it differs from the others.
///
/// Every field is required, so a description that forgets a rule does not compile. This one
/// has them all (it borrows loom's variant, standing in for a new dialect's):
///
/// ```
/// use weft_protocol::dialect::{Description, Original, Requests, TurnEnd};
/// use weft_protocol::Dialect;
///
/// const NEW: Description = Description {
///     dialect: Dialect::Loom,
///     name: "new",
///     endpoint: "/new",
///     subprotocol: "weft.new",
///     documents: &["new-websocket.md"],
///     requests: Requests { ping: false, tools: false, history: false, context: false, approvals: false, app: false, input: false },
///     reports_context: false,
///     asks_approval: false,
///     carries_plans: false,
///     run_options: false,
///     whole_thoughts: false,
///     error_text: |_| None,
///     no_pending_approval_text: "no approval is pending",
///     original: Original {
///         selects_offered_subprotocol: false,
///         names_runs: false,
///         names_sessions: false,
///         broadcasts_turns: false,
///         closes_after_error: false,
///         turn_end: TurnEnd::RunEnd,
///     },
/// };
/// assert_eq!(NEW.name, "new");
/// ```
///
/// and the same without `original.turn_end` fails to compile, for want of that field (E0063,
/// "missing field"; a test holds the two examples equal but for that line and the assert):
///
/// ```compile_fail
/// use weft_protocol::dialect::{Description, Original, Requests, TurnEnd};
/// use weft_protocol::Dialect;
///
/// const NEW: Description = Description {
///     dialect: Dialect::Loom,
///     name: "new",
///     endpoint: "/new",
///     subprotocol: "weft.new",
///     documents: &["new-websocket.md"],
///     requests: Requests { ping: false, tools: false, history: false, context: false, approvals: false, app: false, input: false },
///     reports_context: false,
///     asks_approval: false,
///     carries_plans: false,
///     run_options: false,
///     whole_thoughts: false,
///     error_text: |_| None,
///     no_pending_approval_text: "no approval is pending",
///     original: Original {
///         selects_offered_subprotocol: false,
///         names_runs: false,
///         names_sessions: false,
///         broadcasts_turns: false,
///         closes_after_error: false,
///     },
/// };
/// ```
///
/// A new variant of [`Dialect`] without a description, or without a codec, does not compile
/// either: [`Dialect::describe`] and the dialect module's `codec!` match every variant.
#[derive(Debug, Clone, Copy)]
pub struct Description {
    /// The variant it describes.
    pub dialect: Dialect,
    /// Its name (`loom`, `agentloop`, …): the `dialect` option of the SDK, the TypeScript
    /// `Dialect` union, the fixtures' folder.
    pub name: &'static str,
    /// The path of its WebSocket endpoint on a weft server.
    pub endpoint: &'static str,
    /// The `Sec-WebSocket-Protocol` entry with which a client opts in to weft's extensions.
    pub subprotocol: &'static str,
    /// Its documents in `specs/`, whose JSON examples `scripts/extract-spec-examples.py`
    /// collects into `tests/fixtures/spec-examples.jsonl`. None for AG-UI, whose reference is
    /// `@ag-ui/core`'s schemas: its suites check weft's events against that package itself.
    pub documents: &'static [&'static str],
    /// The requests its documents have besides `run`: what its original server serves, and
    /// what weft serves on its sockets beyond the extensions every dialect has.
    pub requests: Requests,
    /// Whether its runs report the context window as they go (`context_info` frames).
    /// agentloop's document has them; loom carries every canonical event. agentchat and cueso
    /// have no such frame, so a client there asks for it (`contextInfo()` on an agentloop
    /// socket of the same session) when it wants it.
    pub reports_context: bool,
    /// Whether every socket of it is asked to approve tool calls. loom and agentloop documents
    /// carry `tool_approval`, so their clients expect it; agentchat and cueso have no approval
    /// frames, and a socket of theirs is asked only once it opts in with
    /// `client_tools {approvals: true}`, which their original clients never send.
    pub asks_approval: bool,
    /// Whether it carries the agents' plans: the node spans (`node_enter`/`node_exit`) and the
    /// dup, tot and got plan events (`tot_*`, `got_*`). Only loom does; the others carry these
    /// agents' work as text (see the [`dialect`](super) module docs).
    pub carries_plans: bool,
    /// Whether its `run` request carries weft's run options beyond the message and the agent
    /// (working folder, adaptive graph of thoughts, `verbose` snapshots): loom's does; the
    /// others' documents have no place for them, so their encoders leave them out.
    pub run_options: bool,
    /// Whether an original client of it shows each reasoning frame as a thought of its own
    /// (agentloop's CLI prints a "Reasoning:" block per item, Nova's dashboard a card per
    /// `agent_thinking`), so it must get each thought once, whole.
    pub whole_thoughts: bool,
    /// The original server's own words for a request it could not decode, where they are known
    /// (its clients and tests match on them); `None` keeps the error's own message. See
    /// [`Dialect::error_text`].
    pub error_text: fn(&Error) -> Option<String>,
    /// What an approval answer that finds nothing pending is told, in the original server's
    /// words where it has them.
    pub no_pending_approval_text: &'static str,
    /// How its original server differs from weft.
    pub original: Original,
}

/// The requests a dialect's documents have besides `run` (each one a request of weft's SDK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requests {
    /// `ping` (loom). weft answers it in every dialect.
    pub ping: bool,
    /// The tool queries `tools_list` and `tool_show` (loom).
    pub tools: bool,
    /// The stored history, `user_messages` (loom).
    pub history: bool,
    /// The context window, `context_info` and `manual_compact` (agentloop).
    pub context: bool,
    /// An answer to an approval request (agentloop's `approval_response`, which names no call:
    /// it answers the pending request). weft takes an answer naming its call everywhere.
    pub approvals: bool,
    /// The requests of loom's newer web app, past our spec (`list_models`, `agent_list`,
    /// `workspace_*`, `cancel_run`): weft serves them, the spec's server does not.
    pub app: bool,
    /// A whole turn in one frame (AG-UI's `RunAgentInput`): the page's tools, its answers to
    /// interrupts (each naming its call) and its tools' results, or a new message, read into a
    /// [`Command::Batch`]. Such a client answers approvals without weft's extensions.
    pub input: bool,
}

/// How the original server of a dialect differs from weft, where a client must know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Original {
    /// Whether it, offered `weft.<dialect>` as a WebSocket subprotocol, selects it anyway.
    /// agentloop's (Node `ws`) selects the first protocol offered, so there a selected
    /// subprotocol does not prove a weft server; the others select none, and browsers and Node
    /// fail a handshake that offered one.
    pub selects_offered_subprotocol: bool,
    /// Whether it names each run itself and handles one request per socket at a time (loom:
    /// `run-<uuid>`, whatever id the client asked for; a `ping` sent during a run is answered
    /// after its `run_end`). A client then takes the first run it hears of after its `run`
    /// request as that run, and expects no prompt answer to anything while a run streams.
    pub names_runs: bool,
    /// Whether it names the session of a message that names none, and a client names it from
    /// then on to stay in that conversation. cueso's answers `session_id: null` with
    /// `session_created` and a fresh id, which its web app sends in every later message; sent
    /// `null` again, the next message would start a new session with no history. (loom's
    /// envelope `session_id` is the run's own id; agentchat and agentloop name no session.)
    pub names_sessions: bool,
    /// Whether it sends every client's turn to every socket, starting with the turn's message
    /// (agentchat's `user_message`: Nova broadcasts each event to all its sockets). A client
    /// then tells its own turn by that message, and another client's turn, which carries no id,
    /// must not become its run.
    pub broadcasts_turns: bool,
    /// Whether it closes the socket right after an `error` frame (cueso: any exception, a frame
    /// it cannot validate included). A client then sends nothing more on that socket: it would
    /// be lost with it.
    pub closes_after_error: bool,
    /// How it closes a turn.
    pub turn_end: TurnEnd,
}

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

/// A dialect's four translations (the table in the [`dialect`](super) module docs) and its
/// fast path for stream deltas: each dialect module's `CODEC`, called through `codec!`.
#[derive(Clone, Copy)]
pub(crate) struct Codec {
    /// Server side: a client frame's object to a command.
    pub(crate) decode_request: fn(&Object<'_>) -> Result<Command, Error>,
    /// Client side: a command to its frame; the `&str` is a unique frame id for the dialects
    /// that want one on every message (agentloop).
    pub(crate) encode_request: fn(&Command, &str) -> Result<String, Error>,
    /// Client side: a server frame's object to the events it carries.
    pub(crate) decode_server: fn(&Object<'_>) -> Result<Vec<Sequenced>, Error>,
    /// Server side: one event to the frames that carry it.
    pub(crate) encode: fn(&mut Out<'_>),
    /// Client side: a stream delta read in place ([`super::fast`]), or `None` for the general
    /// path.
    pub(crate) fast: for<'a> fn(&mut Reader<'a>) -> Option<Delta<'a>>,
}

/// One field of the dialect's description, read at run time: `described!(dialect, requests)`. A
/// `match` whose arms are each description's field, each evaluated at compile time (`const`),
/// so that only that field of each is linked (a small table), not every description whole
/// with its strings and functions.
macro_rules! described {
    ($dialect:expr, $field:ident) => {
        match $dialect {
            $crate::dialect::Dialect::Loom => const { $crate::dialect::loom::DIALECT.$field },
            $crate::dialect::Dialect::Agentloop => {
                const { $crate::dialect::agentloop::DIALECT.$field }
            }
            $crate::dialect::Dialect::Agentchat => {
                const { $crate::dialect::agentchat::DIALECT.$field }
            }
            $crate::dialect::Dialect::Cueso => const { $crate::dialect::cueso::DIALECT.$field },
            $crate::dialect::Dialect::Agui => const { $crate::dialect::agui::DIALECT.$field },
        }
    };
}
pub(crate) use described;

/// Every dialect's description, in a stable order: [`Dialect::ALL`] is built from it.
const DESCRIPTIONS: [Description; 5] = [
    loom::DIALECT,
    agentloop::DIALECT,
    agentchat::DIALECT,
    cueso::DIALECT,
    agui::DIALECT,
];

/// Whether `d` describes `dialect` and is one of [`DESCRIPTIONS`]: evaluated at compile time
/// for every arm of [`Dialect::describe`], so a description missing from the list, or filed
/// under another variant, does not compile.
const fn listed(dialect: Dialect, d: Description) -> Description {
    assert!(
        d.dialect as u8 == dialect as u8,
        "a description under another variant"
    );
    let mut i = 0;
    while i < DESCRIPTIONS.len() {
        if DESCRIPTIONS[i].dialect as u8 == dialect as u8 {
            return d;
        }
        i += 1;
    }
    panic!("a dialect missing from DESCRIPTIONS")
}

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; DESCRIPTIONS.len()] = {
        let mut all = [Dialect::Loom; DESCRIPTIONS.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = DESCRIPTIONS[i].dialect;
            i += 1;
        }
        all
    };

    /// Its description: everything in which it differs from the other dialects, at once (the
    /// tests, the spec-example extraction, a reader that wants it whole).
    ///
    /// Code that reads a rule at run time asks that rule's method below instead ([`Dialect::
    /// requests`], [`Dialect::original`], …), which reads that one field of each description:
    /// a description taken whole at run time links every description whole, strings, documents
    /// and functions included (1 KB of the SDK's wasm data, 1.8 KB gzip).
    pub const fn describe(self) -> Description {
        match self {
            Dialect::Loom => const { listed(Dialect::Loom, loom::DIALECT) },
            Dialect::Agentloop => const { listed(Dialect::Agentloop, agentloop::DIALECT) },
            Dialect::Agentchat => const { listed(Dialect::Agentchat, agentchat::DIALECT) },
            Dialect::Cueso => const { listed(Dialect::Cueso, cueso::DIALECT) },
            Dialect::Agui => const { listed(Dialect::Agui, agui::DIALECT) },
        }
    }

    /// Its `Sec-WebSocket-Protocol` entry ([`Description::subprotocol`]).
    pub fn subprotocol(self) -> &'static str {
        described!(self, subprotocol)
    }

    /// The requests its documents have besides `run` ([`Description::requests`]).
    pub fn requests(self) -> Requests {
        described!(self, requests)
    }

    /// How its original server differs from weft ([`Description::original`]).
    pub fn original(self) -> Original {
        described!(self, original)
    }

    /// Whether its runs report the context window ([`Description::reports_context`]).
    pub fn reports_context(self) -> bool {
        described!(self, reports_context)
    }

    /// Whether every socket of it is asked to approve tool calls
    /// ([`Description::asks_approval`]).
    pub fn asks_approval(self) -> bool {
        described!(self, asks_approval)
    }

    /// Whether it carries the agents' plans ([`Description::carries_plans`]).
    pub fn carries_plans(self) -> bool {
        described!(self, carries_plans)
    }

    /// Whether its `run` carries weft's run options ([`Description::run_options`]).
    pub fn run_options(self) -> bool {
        described!(self, run_options)
    }

    /// Whether an original client of it gets each thought once, whole
    /// ([`Description::whole_thoughts`]).
    pub fn whole_thoughts(self) -> bool {
        described!(self, whole_thoughts)
    }

    /// What an approval answer that finds nothing pending is told
    /// ([`Description::no_pending_approval_text`]).
    pub fn no_pending_approval_text(self) -> &'static str {
        described!(self, no_pending_approval_text)
    }

    /// Whether weft serves this request on a socket of this dialect: every request the
    /// dialect's document has, plus weft's extensions (`ping`, `resume`, `cancel`,
    /// `client_tools`, `add_mcp_server`, `tool_result`, an approval answer naming its call)
    /// everywhere. The rest
    /// belongs to one document alone ([`Description::requests`]). The dialect's encoder refuses
    /// exactly what this refuses.
    pub fn serves(self, command: &Command) -> bool {
        let own = self.requests();
        match command {
            Command::Run(_)
            | Command::Ping { .. }
            | Command::Resume(_)
            | Command::Cancel { .. }
            | Command::ClientTools(_)
            | Command::AddMcpServer(_)
            | Command::ToolResult(_) => true,
            // Only a document with its own answer answers "the pending request" without naming it.
            Command::ApprovalResponse(d) => d.call_id.is_some() || own.approvals,
            Command::ToolsList(_) | Command::ToolShow(_) => own.tools,
            Command::UserMessages(_) => own.history,
            Command::ContextInfo { .. } | Command::Compact { .. } => own.context,
            Command::LoomApp(_) => own.app,
            Command::Batch { .. } => own.input,
        }
    }

    /// Whether the original server serves this request: only what its document has. A request
    /// outside it is refused (agentloop, agentchat, loom answer an `error`; cueso closes the
    /// socket), so a client must not send one.
    pub fn original_serves(self, command: &Command) -> bool {
        let own = self.requests();
        match command {
            Command::Run(_) => true,
            Command::Ping { .. } => own.ping,
            Command::ToolsList(_) | Command::ToolShow(_) => own.tools,
            Command::UserMessages(_) => own.history,
            // agentloop's own approval message; it answers the one pending request, whatever
            // call id comes with it.
            Command::ApprovalResponse(_) => own.approvals,
            // AG-UI's `RunAgentInput`, whatever it asks. (Its answers and tool results alone
            // are weft's requests: a client writes them so, see `agui`'s socket docs.)
            Command::Batch { .. } => own.input,
            Command::ContextInfo { .. } | Command::Compact { .. } => own.context,
            Command::ToolResult(_)
            | Command::ClientTools(_)
            | Command::AddMcpServer(_)
            | Command::Resume(_)
            | Command::Cancel { .. }
            | Command::LoomApp(_) => false,
        }
    }

    /// Whether this event closes an LLM response: the step in which the server starts the
    /// response's tool calls, so a client tool that needs no approval is due then. Every
    /// dialect reports the response's usage in that step, and its completion when it has text
    /// (agentchat sends no completion for a response without text, only the usage), so this is
    /// the same everywhere and no rule of the description.
    pub fn ends_response(self, event: &Event) -> bool {
        matches!(event, Event::LlmComplete { .. } | Event::Usage(_))
    }

    /// The text of the `error` frame that answers a request this endpoint could not decode:
    /// the original server's own wording where it is known ([`Description::error_text`]), else
    /// the error's own message. The `code` stays [`Error::code`].
    pub fn error_text(self, e: &Error) -> String {
        (described!(self, error_text))(e).unwrap_or_else(|| e.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{ClientTools, Resume, RunCommand};

    /// The `compile_fail` example of [`Description`] is the compiling one without its
    /// `turn_end` line (and the closing assert), so it fails for that missing field and for
    /// nothing else.
    #[test]
    fn the_example_that_must_not_compile_only_lacks_a_rule() {
        let source = include_str!("description.rs");
        let examples: Vec<Vec<&str>> = source
            .split("/// ```")
            .skip(1)
            .step_by(2)
            .take(2)
            .map(|block| {
                block
                    .lines()
                    .skip(1)
                    .map(|l| l.trim().trim_start_matches("///").trim())
                    .collect()
            })
            .collect();
        let [compiles, fails] = [&examples[0], &examples[1]];
        let missing: Vec<&str> = compiles
            .iter()
            .filter(|l| !fails.contains(l))
            .copied()
            .collect();
        assert_eq!(
            missing,
            [
                "turn_end: TurnEnd::RunEnd,",
                "assert_eq!(NEW.name, \"new\");"
            ]
        );
        assert!(fails.iter().all(|l| compiles.contains(l)));
        assert!(source.contains("/// ```compile_fail\n"));
    }

    #[test]
    fn every_description_is_its_own_and_distinct() {
        for (i, d) in Dialect::ALL.into_iter().enumerate() {
            let desc = d.describe();
            assert_eq!(desc.dialect, d);
            assert_eq!(desc.subprotocol, alloc::format!("weft.{}", desc.name));
            assert!(desc.endpoint.starts_with('/'), "{d}");
            // AG-UI's reference is a package's schemas, not a document (see `documents`).
            assert!(!desc.documents.is_empty() || d == Dialect::Agui, "{d}");
            for other in &Dialect::ALL[i + 1..] {
                let o = other.describe();
                assert!(
                    o.name != desc.name && o.endpoint != desc.endpoint,
                    "{d} {other}"
                );
                assert!(o.documents.iter().all(|doc| !desc.documents.contains(doc)));
            }
        }
    }

    #[test]
    fn only_loom_originals_answer_ping_and_none_resumes() {
        let ping = Command::Ping { id: "p".into() };
        let resume = Command::Resume(Resume {
            run_id: "r".into(),
            after_event_id: 0,
        });
        let tools = Command::ClientTools(ClientTools {
            tools: Vec::new(),
            approvals: true,
        });
        for d in Dialect::ALL {
            assert_eq!(d.original_serves(&ping), d == Dialect::Loom, "{d}");
            assert!(!d.original_serves(&resume), "{d}");
            assert!(!d.original_serves(&tools), "{d}");
            assert!(!d.original_serves(&Command::Cancel { run_id: "r".into() }));
            let add = every_command().pop().unwrap();
            assert!(d.serves(&add) && !d.original_serves(&add), "{d}");
        }
        assert!(Dialect::Agentloop.original_serves(&Command::Compact { id: None }));
        assert!(!Dialect::Cueso.original_serves(&Command::Compact { id: None }));
    }

    /// A build that leaves dialects out (scripts/test runs this with one dialect feature): each
    /// one left out refuses every request and frame as `unsupported` and writes nothing; the
    /// ones built still speak. Compiled only in such a build: in the default one every dialect
    /// is built, and `every_dialect_is_built_by_default` holds that.
    #[cfg(not(all(
        feature = "loom",
        feature = "agentloop",
        feature = "agentchat",
        feature = "cueso",
        feature = "agui"
    )))]
    #[test]
    fn a_dialect_left_out_refuses_everything() {
        let (built, left_out): (Vec<Dialect>, Vec<Dialect>) =
            Dialect::ALL.into_iter().partition(|d| d.built());
        assert!(!built.is_empty() && !left_out.is_empty(), "{built:?}");
        let run = Command::Run(RunCommand {
            message: "hi".into(),
            ..RunCommand::default()
        });
        let unsupported = |e: Error| matches!(e, Error::Unsupported { .. });
        for d in left_out {
            let err = d.encode_request(&run, "f").unwrap_err();
            assert!(
                err.message().contains(d.as_str()) && unsupported(err),
                "{d}"
            );
            let frame = br#"{"type":"run_end","reply":"hi","id":"r"}"#;
            let limits = crate::Limits::default();
            assert!(
                d.decode_server(frame, limits).is_err_and(unsupported),
                "{d}"
            );
            assert!(
                d.decode_request(frame, limits).is_err_and(unsupported),
                "{d}"
            );
            let chunk = Event::MessageChunk {
                content: "hi".into(),
                id: "m".into(),
            };
            assert!(!carried(d, chunk), "{d}");
        }
        for d in built {
            let frame = d.encode_request(&run, "f").unwrap();
            let back = d.decode_request(frame.as_bytes(), crate::Limits::default());
            assert!(matches!(back, Ok(Command::Run(_))), "{d}: {back:?}");
        }
    }

    #[cfg(all(
        feature = "loom",
        feature = "agentloop",
        feature = "agentchat",
        feature = "cueso",
        feature = "agui"
    ))]
    #[test]
    fn every_dialect_is_built_by_default() {
        assert!(Dialect::ALL.into_iter().all(Dialect::built));
    }

    /// Every command, with an approval answer that names its call and one that does not.
    fn every_command() -> Vec<Command> {
        use crate::command::{
            ApprovalDecision, ToolFormat, ToolResult, ToolShowQuery, ToolsQuery, UserMessagesQuery,
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
                tools: Vec::new(),
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
            Command::AddMcpServer(crate::command::AddMcpServer {
                id: "a".into(),
                name: "docs".into(),
                url: "https://mcp.example/mcp".into(),
                headers: Default::default(),
            }),
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

    /// Whether `d`'s encoder sends anything for `event` inside a run, on a weft socket.
    fn carried(d: Dialect, event: Event) -> bool {
        let mut seq = Sequenced::bare(event);
        seq.envelope.run_id = Some("r".into());
        !crate::Encoder::new(d, 7).encode(&seq).is_empty()
    }

    #[test]
    fn reports_context_is_what_the_encoders_send() {
        let info = Sequenced::bare(Event::ContextInfo {
            token_count: 10,
            usage_percent: 1.0,
            transcript_length: 2,
            max_tokens: 8000,
            strategy: "s".into(),
        });
        for d in Dialect::ALL {
            let frames = crate::Encoder::new(d, 7).encode(&info);
            assert_eq!(
                d.describe().reports_context,
                !frames.is_empty(),
                "{d}: {frames:?}"
            );
        }
    }

    #[test]
    fn carries_plans_is_what_the_encoders_send() {
        for d in Dialect::ALL {
            let plans = d.describe().carries_plans;
            let node = Event::NodeEnter { id: "think".into() };
            assert_eq!(carried(d, node), plans, "{d}");
            let tree = Event::TotExpand {
                candidates: alloc::vec!["a".into()],
            };
            assert_eq!(carried(d, tree), plans, "{d}");
        }
    }

    #[test]
    fn run_options_are_what_the_request_carries_through() {
        let run = RunCommand {
            message: "hi".into(),
            working_folder: Some("/w".into()),
            got_adaptive: Some(true),
            verbose: Some(true),
            ..RunCommand::default()
        };
        for d in Dialect::ALL {
            let frame = d.encode_request(&Command::Run(run.clone()), "f").unwrap();
            let Command::Run(back) = d
                .decode_request(frame.as_bytes(), crate::Limits::default())
                .unwrap()
            else {
                panic!("{d}: {frame}")
            };
            let options = |r: &RunCommand| (r.working_folder.clone(), r.got_adaptive, r.verbose);
            let kept = options(&back) == options(&run);
            let dropped = options(&back) == (None, None, None);
            assert!(kept || dropped, "{d}: {frame}");
            assert_eq!(d.describe().run_options, kept, "{d}: {frame}");
        }
    }

    #[test]
    fn only_agentloop_echoes_a_subprotocol_and_only_loom_names_runs() {
        let echoes: Vec<_> = Dialect::ALL
            .into_iter()
            .filter(|d| d.describe().original.selects_offered_subprotocol)
            .collect();
        assert_eq!(echoes, [Dialect::Agentloop]);
        assert!(Dialect::Loom.describe().original.names_runs);
        assert_eq!(
            Dialect::Agentchat.describe().original.turn_end,
            TurnEnd::Reply
        );
    }
}
