//! Sessions named in a message, on any socket (specs/README, "Sessions named in a message").
//!
//! # The decision
//!
//! A socket lives in the Durable Object that accepted it: the session of its `?session_id=`,
//! or a fresh one. A message may name another session (loom `run.thread_id` and
//! `user_messages.thread_id`, agentchat and cueso `session_id`) — the original cueso CLI and
//! the Nova dashboard make their own id and send it in every message on a socket opened
//! without a query string. Such a message is carried to the named session's Durable Object
//! over a *link*: a WebSocket this object opens to that one, in the client's dialect and with
//! the client's opt-in (`weft=1` when it offered `weft.<dialect>`). The named session sees the
//! link as one more socket of its own, so runs, resume, cancel, approvals, client tools and
//! history work there exactly as for a socket that named the session in its query string; the
//! link's frames are relayed to the client unchanged, in order.
//!
//! Why this and not a front that routes each message: a Worker cannot hold a socket across
//! requests, and a front Durable Object would put every message of every socket through one
//! more hop. With links, the common path — a socket whose messages name its own session, or
//! none — is untouched: one object, hibernatable, no extra hop. Only a message that names
//! another session pays, and what it costs is one WebSocket hop between two objects on the
//! same machine per frame each way (`npm run bench` measures it: relayed vs direct), and the
//! home object stays awake while it has links (an outgoing WebSocket cannot hibernate).
//! Links close with the client's socket.
//!
//! A message that names no session (an approval, a tool result, `resume`, `cancel`, …) goes
//! to the socket's *current* session: the last one a message on it named, else its own — the
//! session whose run such a message answers. `ping` is answered where it arrives. Client tools
//! a socket declared are declared again on each link it opens, so a session reached through a
//! link can call them too.

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::StreamExt;
use weft_protocol::command::ClientTools;
use weft_protocol::{Command, Dialect};
use worker::{Env, WebSocket, WebsocketEvent};

/// Where a decoded command goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// To this object's own session.
    Here,
    /// Over a link to the named session.
    There(String),
}

/// The longest session id a client may name, in a message or in `?session_id=`.
pub const MAX_SESSION_ID: usize = 128;

/// The characters a session id may have besides ASCII letters and digits: enough for UUIDs,
/// `user-42/chat-7` paths and base64url, none that needs escaping in a URL path, a log line or
/// a token's `sessions` pattern (whose `*` is never part of an id).
pub const SESSION_ID_PUNCTUATION: &str = "-_.:/@+=~";

/// Whether a client may name session `id`: 1 to [`MAX_SESSION_ID`] ASCII letters, digits and
/// [`SESSION_ID_PUNCTUATION`]. The error says which rule it broke, without echoing the id.
pub fn check_session_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("a session id cannot be empty".to_string());
    }
    if id.len() > MAX_SESSION_ID {
        return Err(format!(
            "a session id is at most {MAX_SESSION_ID} characters ({} given)",
            id.len()
        ));
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && !SESSION_ID_PUNCTUATION.contains(*c))
    {
        return Err(format!(
            "a session id may contain only A-Z, a-z, 0-9 and {SESSION_ID_PUNCTUATION} \
             (not {bad:?})"
        ));
    }
    Ok(())
}

/// Links one client socket keeps open at most: naming a further session closes the link it
/// used least recently (it opens again when named again), so a socket cannot hold an object's
/// memory hostage by naming session after session.
pub const MAX_LINKS_PER_SOCKET: usize = 8;

/// Where `command`, arriving on a socket whose own session is `home` and whose current session
/// is `current`, belongs; and the socket's current session after it. An over-long name is an
/// error to answer.
pub fn route(home: &str, current: Option<&str>, command: &Command) -> Result<Route, String> {
    let target = match command.session() {
        Some(named) => {
            check_session_id(named)?;
            named
        }
        None if matches!(command, Command::Ping { .. }) => home,
        None => current.unwrap_or(home),
    };
    Ok(if target == home {
        Route::Here
    } else {
        Route::There(target.to_string())
    })
}

/// A link from one client socket of this object to another session's object.
#[derive(Debug)]
struct Link {
    client: WebSocket,
    session: String,
    /// When it last carried a frame from the client (a counter): the least recent goes first.
    used: u64,
    /// The link's socket once open; until then, what the client sent for it, in order.
    state: LinkState,
}

#[derive(Debug)]
enum LinkState {
    Opening(Vec<Vec<u8>>),
    Open(WebSocket),
}

/// The links of one Durable Object (shared with the tasks that pump them).
#[derive(Debug, Clone, Default)]
pub struct Links {
    links: Rc<RefCell<Vec<Link>>>,
    clock: Rc<std::cell::Cell<u64>>,
}

/// What a link carries for its client: the dialect, whether it opted in, and the tools it
/// declared.
#[derive(Debug)]
pub struct Client<'a> {
    pub socket: &'a WebSocket,
    pub dialect: Dialect,
    /// Whether it offered `weft.<dialect>`.
    pub weft: bool,
    /// What it declared with `client_tools`, if anything: sent first on every link.
    pub tools: Option<ClientTools>,
    /// Its token's sessions, which limit the link as they limit the client.
    pub grant: Option<&'a crate::access::Grant>,
    /// Whom a session the link creates counts against.
    pub client: &'a str,
}

impl Links {
    /// Sends `frame` (as the client sent it) to `session` over the client's link, opening the
    /// link first if there is none. Frames keep their order while it opens. An error says the
    /// session could not be reached (what was queued for it is dropped; the client is told).
    pub async fn send(
        &self,
        env: &Env,
        client: Client<'_>,
        session: &str,
        frame: Vec<u8>,
    ) -> Result<(), String> {
        let now = self.clock.get() + 1;
        self.clock.set(now);
        let (opening, evicted) = {
            let mut links = self.links.borrow_mut();
            match links
                .iter_mut()
                .find(|l| l.client == *client.socket && l.session == session)
            {
                Some(link) => {
                    link.used = now;
                    match &mut link.state {
                        LinkState::Opening(queue) => queue.push(frame),
                        LinkState::Open(ws) => forward(ws, &frame),
                    }
                    return Ok(());
                }
                None => {
                    let evicted = evict(&mut links, client.socket);
                    let mut queue = Vec::new();
                    if let Some(tools) = &client.tools {
                        if let Ok(declare) = client
                            .dialect
                            .encode_request(&Command::ClientTools(tools.clone()), "tools")
                        {
                            queue.push(declare.into_bytes());
                        }
                    }
                    queue.push(frame);
                    links.push(Link {
                        client: client.socket.clone(),
                        session: session.to_string(),
                        used: now,
                        state: LinkState::Opening(queue),
                    });
                    (true, evicted)
                }
            }
        };
        if let Some(old) = evicted {
            close_link(old);
        }
        if opening {
            return self.open(env, &client, session).await;
        }
        Ok(())
    }

    /// Sends `frame` on every open link of the client (a `client_tools` declaration).
    pub fn broadcast(&self, client: &WebSocket, frame: &[u8]) {
        for link in self.links.borrow_mut().iter_mut() {
            if link.client != *client {
                continue;
            }
            match &mut link.state {
                LinkState::Opening(queue) => queue.push(frame.to_vec()),
                LinkState::Open(ws) => forward(ws, frame),
            }
        }
    }

    /// Closes the client's links (its socket is gone).
    pub fn close_all(&self, client: &WebSocket) {
        let gone: Vec<Link> = {
            let mut links = self.links.borrow_mut();
            let (gone, kept) = links.drain(..).partition(|l| l.client == *client);
            *links = kept;
            gone
        };
        for link in gone {
            close_link(link);
        }
    }

    async fn open(&self, env: &Env, client: &Client<'_>, session: &str) -> Result<(), String> {
        let socket = match connect(env, client, session).await {
            Ok(ws) => ws,
            Err(e) => {
                self.forget(client.socket, session);
                let msg = format!("could not reach session {session}: {e}");
                worker::console_error!("{msg}");
                return Err(msg);
            }
        };
        let queued = {
            let mut links = self.links.borrow_mut();
            let Some(link) = links
                .iter_mut()
                .find(|l| l.client == *client.socket && l.session == session)
            else {
                // The client left while the link opened.
                if let Err(e) = socket.close(Some(1000), Some("client gone")) {
                    worker::console_warn!("closing an unused link to {session}: {e}");
                }
                return Ok(());
            };
            match std::mem::replace(&mut link.state, LinkState::Open(socket.clone())) {
                LinkState::Opening(queue) => queue,
                LinkState::Open(_) => Vec::new(),
            }
        };
        for frame in queued {
            forward(&socket, &frame);
        }
        let links = self.clone();
        let to = client.socket.clone();
        let session = session.to_string();
        wasm_bindgen_futures::spawn_local(async move {
            links.pump(socket, to, session).await;
        });
        Ok(())
    }

    /// Relays the link's frames to the client until either side closes; the link's close
    /// (the session closed it, as cueso does on an invalid frame) closes the client with the
    /// same code.
    async fn pump(&self, link: WebSocket, client: WebSocket, session: String) {
        let mut events = match link.events() {
            Ok(events) => events,
            Err(e) => {
                worker::console_error!("listening on the link to {session}: {e}");
                return;
            }
        };
        while let Some(event) = events.next().await {
            match event {
                Ok(WebsocketEvent::Message(m)) => {
                    let sent = match (m.text(), m.bytes()) {
                        (Some(text), _) => client.send_with_str(text),
                        (None, Some(bytes)) => client.send_with_bytes(bytes),
                        (None, None) => Ok(()),
                    };
                    if let Err(e) = sent {
                        // The client is gone; its close handler closes the link.
                        worker::console_warn!("relaying from {session}: {e}");
                    }
                }
                Ok(WebsocketEvent::Close(c)) => {
                    let still_linked = self.forget(&client, &session);
                    if still_linked {
                        let code = match c.code() {
                            1005 | 1006 | 1015 => 1000,
                            code => code,
                        };
                        if let Err(e) = client.close(Some(code), Some(c.reason())) {
                            worker::console_warn!("closing the client after {session}: {e}");
                        }
                    }
                    return;
                }
                Err(e) => worker::console_warn!("link to {session}: {e}"),
            }
        }
    }

    /// Drops the link; whether it was still there.
    fn forget(&self, client: &WebSocket, session: &str) -> bool {
        let mut links = self.links.borrow_mut();
        let before = links.len();
        links.retain(|l| !(l.client == *client && l.session == session));
        links.len() != before
    }
}

/// Takes out the client's least recently used open link when it has [`MAX_LINKS_PER_SOCKET`].
fn evict(links: &mut Vec<Link>, client: &WebSocket) -> Option<Link> {
    let mine = links.iter().filter(|l| l.client == *client).count();
    if mine < MAX_LINKS_PER_SOCKET {
        return None;
    }
    let at = links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.client == *client && matches!(l.state, LinkState::Open(_)))
        .min_by_key(|(_, l)| l.used)
        .map(|(i, _)| i)?;
    Some(links.remove(at))
}

fn close_link(link: Link) {
    if let LinkState::Open(ws) = link.state {
        if let Err(e) = ws.close(Some(1000), Some("link closed")) {
            worker::console_warn!("closing the link to {}: {e}", link.session);
        }
    }
}

fn forward(ws: &WebSocket, frame: &[u8]) {
    let sent = match std::str::from_utf8(frame) {
        Ok(text) => ws.send_with_str(text),
        Err(_) => ws.send_with_bytes(frame),
    };
    if let Err(e) = sent {
        worker::console_warn!("sending on a link: {e}");
    }
}

/// Opens a WebSocket to the session's Durable Object, as the Worker does for a client.
async fn connect(env: &Env, client: &Client<'_>, session: &str) -> worker::Result<WebSocket> {
    let target = crate::session::connect_url(
        client.dialect,
        session,
        client.weft,
        None,
        client.grant,
        client.client,
        true,
    );
    let headers = worker::Headers::new();
    headers.set("Upgrade", "websocket")?;
    let request = crate::outbound::request(&target, "GET", Some(&headers), None)?;
    let stub = env
        .durable_object("SESSIONS")?
        .id_from_name(session)?
        .get_stub()?;
    let mut response = stub.fetch_with_request(request).await?;
    if response.status_code() != 101 {
        // A refusal (a limit of the session) says why in its body.
        let why = response.text().await.unwrap_or_default();
        return Err(worker::Error::RustError(why));
    }
    let ws = response
        .websocket()
        .ok_or_else(|| worker::Error::RustError("the session did not accept the link".into()))?;
    ws.accept()?;
    Ok(ws)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::command::{RunCommand, UserMessagesQuery};

    fn run(thread: Option<&str>) -> Command {
        Command::Run(RunCommand {
            message: "hi".into(),
            thread_id: thread.map(String::from),
            ..RunCommand::default()
        })
    }

    #[test]
    fn a_message_naming_its_own_session_or_none_stays_here() {
        assert_eq!(route("a", None, &run(Some("a"))), Ok(Route::Here));
        assert_eq!(route("a", None, &run(None)), Ok(Route::Here));
        assert_eq!(route("a", Some("a"), &run(Some(""))), Ok(Route::Here));
    }

    #[test]
    fn a_message_naming_another_session_goes_there() {
        assert_eq!(
            route("a", None, &run(Some("b"))),
            Ok(Route::There("b".into()))
        );
        let history = Command::UserMessages(UserMessagesQuery {
            id: "1".into(),
            thread_id: "b".into(),
            before: None,
            limit: None,
        });
        assert_eq!(route("a", None, &history), Ok(Route::There("b".into())));
    }

    #[test]
    fn a_nameless_message_follows_the_session_last_named() {
        let cancel = Command::Cancel {
            run_id: "run-1".into(),
        };
        assert_eq!(route("a", Some("b"), &cancel), Ok(Route::There("b".into())));
        assert_eq!(route("a", Some("a"), &cancel), Ok(Route::Here));
        assert_eq!(route("a", None, &cancel), Ok(Route::Here));
        // A new session named later wins over the current one.
        assert_eq!(
            route("a", Some("b"), &run(Some("c"))),
            Ok(Route::There("c".into()))
        );
    }

    #[test]
    fn ping_is_answered_where_it_arrives() {
        let ping = Command::Ping { id: "p".into() };
        assert_eq!(route("a", Some("b"), &ping), Ok(Route::Here));
    }

    #[test]
    fn an_over_long_session_name_is_refused() {
        let long = "x".repeat(MAX_SESSION_ID + 1);
        assert_eq!(
            route("a", None, &run(Some(&long))),
            Err("a session id is at most 128 characters (129 given)".into())
        );
        let fits = "x".repeat(MAX_SESSION_ID);
        assert_eq!(route("a", None, &run(Some(&fits))), Ok(Route::There(fits)));
    }

    #[test]
    fn session_ids_keep_to_their_characters() {
        for id in [
            "a",
            "e2e-6f1c2b1e-8d0a-4c1e-9a57-0b9f3c1d2e4f",
            "user-42/chat-7",
            "nova:dashboard@host",
            "b64+/=~._",
        ] {
            assert_eq!(check_session_id(id), Ok(()), "{id}");
        }
        for (id, why) in [
            ("", "a session id cannot be empty"),
            (
                "a b",
                "a session id may contain only A-Z, a-z, 0-9 and -_.:/@+=~ (not ' ')",
            ),
            (
                "user-42/*",
                "a session id may contain only A-Z, a-z, 0-9 and -_.:/@+=~ (not '*')",
            ),
            (
                "caf\u{e9}",
                "a session id may contain only A-Z, a-z, 0-9 and -_.:/@+=~ (not '\u{e9}')",
            ),
            (
                "a\nb",
                "a session id may contain only A-Z, a-z, 0-9 and -_.:/@+=~ (not '\\n')",
            ),
        ] {
            assert_eq!(check_session_id(id), Err(why.to_string()), "{id:?}");
        }
        let evil = run(Some("../other"));
        assert_eq!(route("a", None, &evil), Ok(Route::There("../other".into())));
        let evil = run(Some("x\u{0}"));
        assert!(route("a", None, &evil).is_err());
    }
}
