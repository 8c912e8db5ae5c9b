//! A socket's frame on its way in: decoded in the socket's dialect, held to what an original
//! client may ask, routed (relay.rs) and held to the token's sessions; `client_tools` is taken
//! into the socket's attachment. What is left is a command for this session or another one.
//!
//! Plain data, no runtime: the object stores the attachment and carries out the verdict
//! (`mod.rs`, `commands.rs`).

use weft_protocol::command::ClientTools;
use weft_protocol::{Command, Event, Limits};

use super::error_event;
use super::socket::{ClientTool, SocketInfo};
use crate::relay::{self, Route};

/// What becomes of a frame.
#[derive(Debug, PartialEq)]
pub(super) enum Inbound {
    /// Refused: the socket is answered with this error, and nothing else happens.
    Refuse(Event),
    /// The socket declared its tools (taken into its attachment): the frame goes on to every
    /// session it reaches through a link, as it came (a link opened later declares them first).
    Declared,
    /// A command for this session.
    Here(Command),
    /// A command for the session named, carried there over the socket's link as it came.
    There(String),
}

/// Reads one frame of a socket whose own session is `home`. `info` is updated with what the
/// frame changes (the session it names, the tools it declares); the bool says whether it was,
/// so the attachment is stored again.
pub(super) fn read(
    info: &mut SocketInfo,
    home: &str,
    bytes: &[u8],
    limits: Limits,
) -> (Inbound, bool) {
    let dialect = info.dialect;
    // Every refusal answers the request, so it carries the request's id where it has one.
    let id = || weft_protocol::request_id(bytes, limits);
    let command = match dialect.decode_request(bytes, limits) {
        Ok(command) => command,
        Err(e) => {
            let message = dialect.error_text(&e);
            return (
                Inbound::Refuse(error_event(&message, e.code(), id())),
                false,
            );
        }
    };
    if !info.weft && matches!(command, Command::Ping { .. }) && !dialect.original_serves(&command) {
        // ping is a weft extension outside loom, and its pong an extension frame: a client
        // of the original protocol gets what the original server says to an unknown type.
        let unknown = weft_protocol::Error::UnknownType {
            dialect,
            kind: "ping".into(),
        };
        let message = dialect.error_text(&unknown);
        let refusal = error_event(&message, unknown.code(), id());
        return (Inbound::Refuse(refusal), false);
    }
    let route = match relay::route(home, info.current.as_deref(), &command) {
        Ok(route) => route,
        Err(message) => {
            let refusal = error_event(&message, "invalid_request", id());
            return (Inbound::Refuse(refusal), false);
        }
    };
    if let (Route::There(named), Some(grant)) = (&route, &info.grant) {
        if !grant.allows(named) {
            let message = format!("this token ({}) may not use session {named}", grant.sub);
            return (
                Inbound::Refuse(error_event(&message, "forbidden", id())),
                false,
            );
        }
    }
    let mut changed = false;
    // An AG-UI input declares the page's tools along with what it asks: taken in here, as a
    // `client_tools` frame is (when the input goes to another session, that one takes them).
    let command = match (command, &route) {
        (Command::Batch { commands }, Route::Here) => {
            let mut rest = Vec::with_capacity(commands.len());
            for c in commands {
                match c {
                    Command::ClientTools(tools) => {
                        declare(info, tools);
                        changed = true;
                    }
                    other => rest.push(other),
                }
            }
            match rest.len() {
                1 => rest.remove(0),
                _ => Command::Batch { commands: rest },
            }
        }
        (command, _) => command,
    };
    if let Some(named) = command.session() {
        let current = (named != home).then(|| named.to_string());
        if info.current != current {
            info.current = current;
            changed = true;
        }
    }
    if let Command::ClientTools(tools) = command {
        declare(info, tools);
        return (Inbound::Declared, true);
    }
    let inbound = match route {
        Route::Here => Inbound::Here(command),
        Route::There(session) => Inbound::There(session),
    };
    (inbound, changed)
}

/// Takes a socket's declared tools into its attachment: they replace the ones it declared
/// before; approvals, once said, stay.
fn declare(info: &mut SocketInfo, tools: ClientTools) {
    info.approvals |= tools.approvals;
    info.tools = tools.tools.into_iter().map(ClientTool::from).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Grant;
    use weft_protocol::command::{ClientTools, RunCommand};
    use weft_protocol::event::ToolSpec;
    use weft_protocol::Dialect;

    const LIMITS: Limits = Limits {
        max_frame_bytes: 1 << 20,
    };

    fn frame(dialect: Dialect, command: &Command) -> Vec<u8> {
        dialect.encode_request(command, "1").unwrap().into_bytes()
    }

    fn run_in(thread: Option<&str>) -> Command {
        Command::Run(RunCommand {
            message: "hi".into(),
            thread_id: thread.map(String::from),
            ..RunCommand::default()
        })
    }

    fn refusal_code(inbound: &Inbound) -> (&str, &str) {
        match inbound {
            Inbound::Refuse(Event::Error { message, code, .. }) => {
                (code.as_deref().unwrap_or(""), message.as_str())
            }
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_frame_that_does_not_decode_is_answered_in_the_dialects_words() {
        let mut info = SocketInfo::new(Dialect::Agentloop, "s".into(), false);
        let (inbound, changed) = read(&mut info, "s", b"{not json", LIMITS);
        assert_eq!(refusal_code(&inbound).1, "Invalid message format");
        assert!(!changed);
        let mut info = SocketInfo::new(Dialect::Agentchat, "s".into(), false);
        let (inbound, _) = read(&mut info, "s", br#"{"type":"dance"}"#, LIMITS);
        assert_eq!(refusal_code(&inbound).1, "Unknown message type: dance");
    }

    #[test]
    fn a_refused_request_is_answered_with_its_id() {
        // The original loom: `{"type":"error","id":"u3","error":"thread_id is required"}`.
        let mut info = SocketInfo::new(Dialect::Loom, "s".into(), false);
        let bytes = br#"{"type":"user_messages","id":"u3","thread_id":""}"#;
        let (inbound, _) = read(&mut info, "s", bytes, LIMITS);
        let Inbound::Refuse(Event::Error { message, id, .. }) = inbound else {
            panic!("not refused: {inbound:?}");
        };
        assert!(message.ends_with("thread_id is required"), "{message}");
        assert_eq!(id.as_deref(), Some("u3"));
        let mut info = SocketInfo::new(Dialect::Loom, "user-1/a".into(), true);
        info.grant = Some(Grant {
            sub: "ann".into(),
            sessions: vec!["user-1/*".into()],
        });
        let bytes = br#"{"type":"user_messages","id":"u4","thread_id":"user-2/x"}"#;
        let (inbound, _) = read(&mut info, "user-1/a", bytes, LIMITS);
        assert!(
            matches!(inbound, Inbound::Refuse(Event::Error { id: Some(ref id), .. }) if id == "u4")
        );
    }

    #[test]
    fn ping_is_for_weft_clients_and_loom_only() {
        let ping = Command::Ping { id: "p".into() };
        for dialect in Dialect::ALL {
            let bytes = frame(dialect, &ping);
            let mut weft = SocketInfo::new(dialect, "s".into(), true);
            assert_eq!(
                read(&mut weft, "s", &bytes, LIMITS).0,
                Inbound::Here(ping.clone())
            );
            let mut original = SocketInfo::new(dialect, "s".into(), false);
            let (inbound, _) = read(&mut original, "s", &bytes, LIMITS);
            if dialect == Dialect::Loom {
                assert_eq!(inbound, Inbound::Here(ping.clone()));
            } else {
                assert_eq!(refusal_code(&inbound).0, "unknown_type", "{dialect}");
            }
        }
    }

    #[test]
    fn a_message_naming_another_session_goes_there_and_the_next_follows_it() {
        let mut info = SocketInfo::new(Dialect::Loom, "a".into(), true);
        let (inbound, changed) = read(
            &mut info,
            "a",
            &frame(Dialect::Loom, &run_in(Some("b"))),
            LIMITS,
        );
        assert_eq!((inbound, changed), (Inbound::There("b".into()), true));
        assert_eq!(info.current.as_deref(), Some("b"));
        let cancel = Command::Cancel {
            run_id: "run-1".into(),
        };
        let (inbound, changed) = read(&mut info, "a", &frame(Dialect::Loom, &cancel), LIMITS);
        assert_eq!((inbound, changed), (Inbound::There("b".into()), false));
        // Naming its own session again brings it home.
        let (inbound, changed) = read(
            &mut info,
            "a",
            &frame(Dialect::Loom, &run_in(Some("a"))),
            LIMITS,
        );
        assert!(matches!(inbound, Inbound::Here(Command::Run(_))));
        assert!(changed);
        assert_eq!(info.current, None);
    }

    #[test]
    fn a_token_reaches_only_its_sessions() {
        let mut info = SocketInfo::new(Dialect::Loom, "user-1/a".into(), true);
        info.grant = Some(Grant {
            sub: "ann".into(),
            sessions: vec!["user-1/*".into()],
        });
        let bytes = frame(Dialect::Loom, &run_in(Some("user-2/x")));
        let (inbound, changed) = read(&mut info, "user-1/a", &bytes, LIMITS);
        assert_eq!(
            refusal_code(&inbound),
            ("forbidden", "this token (ann) may not use session user-2/x")
        );
        assert!(!changed);
        assert_eq!(info.current, None, "a refused message names nothing");
        let bytes = frame(Dialect::Loom, &run_in(Some("user-1/b")));
        let (inbound, _) = read(&mut info, "user-1/a", &bytes, LIMITS);
        assert_eq!(inbound, Inbound::There("user-1/b".into()));
    }

    /// An AG-UI input's tools are the socket's, and what else it asks goes on as it came.
    #[test]
    fn an_agui_inputs_tools_are_taken_and_the_rest_goes_on() {
        let input = br#"{"threadId":"","runId":"","messages":[{"id":"u","role":"user","content":"hi"}],
            "tools":[{"name":"pick_color","description":"asks the user","parameters":{"type":"object"}}]}"#;
        let mut info = SocketInfo::new(Dialect::Agui, "s".into(), false);
        let (inbound, changed) = read(&mut info, "s", input, LIMITS);
        assert!(changed && info.runs_tool("pick_color"));
        assert!(
            info.can_approve(),
            "it answers interrupts in its next input"
        );
        assert!(
            matches!(&inbound, Inbound::Here(Command::Run(r)) if r.message == "hi"),
            "{inbound:?}"
        );
        // Naming another session, the input goes there whole: that session takes the tools.
        let mut info = SocketInfo::new(Dialect::Agui, "s".into(), true);
        let elsewhere =
            br#"{"threadId":"t","runId":"","messages":[{"id":"u","role":"user","content":"hi"}],
            "tools":[{"name":"pick_color","description":"asks the user"}]}"#;
        let (inbound, _) = read(&mut info, "s", elsewhere, LIMITS);
        assert_eq!(inbound, Inbound::There("t".into()));
        assert!(!info.runs_tool("pick_color"));
        // Answers to two interrupts at once stay one batch, in order (they name no session: they
        // go where the socket's last message went).
        let mut info = SocketInfo::new(Dialect::Agui, "s".into(), true);
        let answers = br#"{"threadId":"","runId":"","messages":[],"resume":[
            {"interruptId":"c1","status":"resolved","payload":{"approved":true}},
            {"interruptId":"c2","status":"cancelled"}]}"#;
        let (inbound, _) = read(&mut info, "s", answers, LIMITS);
        let Inbound::Here(Command::Batch { commands }) = inbound else {
            panic!("{inbound:?}")
        };
        assert!(
            matches!(&commands[..], [Command::ApprovalResponse(a), Command::ApprovalResponse(b)]
            if a.call_id.as_deref() == Some("c1") && a.review.approves() && !b.review.approves())
        );
    }

    #[test]
    fn client_tools_are_taken_into_the_attachment() {
        let mut info = SocketInfo::new(Dialect::Cueso, "s".into(), true);
        let declare = Command::ClientTools(ClientTools {
            tools: vec![ToolSpec {
                name: "pick_color".into(),
                description: Some("asks the user".into()),
                input_schema: serde_json::json!({"type": "object"}).into(),
                read_only: false,
            }],
            approvals: true,
        });
        let (inbound, changed) = read(&mut info, "s", &frame(Dialect::Cueso, &declare), LIMITS);
        assert_eq!((inbound, changed), (Inbound::Declared, true));
        assert!(info.approvals);
        assert!(info.runs_tool("pick_color"));
        // Declaring again replaces the tools; approvals, once said, stay.
        let again = Command::ClientTools(ClientTools {
            tools: Vec::new(),
            approvals: false,
        });
        read(&mut info, "s", &frame(Dialect::Cueso, &again), LIMITS);
        assert!(info.approvals && info.tools.is_empty());
    }
}
