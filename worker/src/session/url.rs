//! The internal URLs a session's object is reached at: by the Worker for a client's socket or an
//! HTTP track request, by another session's object for a link (relay.rs). A Durable Object is not
//! reachable from outside, so what these carry was checked by the Worker that built them.

use weft_protocol::Dialect;

use crate::access::Grant;
use crate::http::{self, Action, HttpDialect};

/// Where the Worker hands a session a request of the HTTP track (`crate::http`).
pub const HTTP_PATH: &str = "/http";

/// The URL of an HTTP track request for `session`, in `dialect`. `client` is whom a new
/// session counts against (`SESSIONS_PER_MINUTE`).
pub fn http_url(action: Action, dialect: &HttpDialect, session: &str, client: &str) -> String {
    let mut target = format!("https://session.internal{HTTP_PATH}?");
    let action = match action {
        Action::Turn => "turn",
        Action::Replay => "replay",
    };
    crate::query::append(&mut target, "action", action);
    crate::query::append(&mut target, "dialect", dialect.name);
    crate::query::append(&mut target, "session", session);
    crate::query::append(&mut target, "client", client);
    target
}

/// What an [`http_url`] says.
#[derive(Debug, PartialEq)]
pub(super) struct HttpCall {
    pub(super) action: Action,
    pub(super) dialect: &'static HttpDialect,
    pub(super) session: String,
    pub(super) client: String,
}

impl HttpCall {
    /// Reads an [`http_url`]; `Err` names what it lacks (the Worker always writes both).
    pub(super) fn parse(url: &str) -> Result<HttpCall, String> {
        let get = |name| crate::query::get(url, name);
        let action = match get("action").as_deref() {
            Some("turn") => Action::Turn,
            Some("replay") => Action::Replay,
            other => return Err(format!("no such HTTP action: {other:?}")),
        };
        let name = get("dialect").unwrap_or_default();
        let dialect = http::dialect(&name).ok_or_else(|| format!("no HTTP dialect {name:?}"))?;
        Ok(HttpCall {
            action,
            dialect,
            session: get("session").unwrap_or_default(),
            client: get("client").unwrap_or_default(),
        })
    }
}

/// What a socket's connection to its session's object says ([`connect_url`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Connect {
    pub(super) dialect: Dialect,
    /// The session the socket joins; empty: the object's own.
    pub(super) session: String,
    /// Whether the client offered `weft.<dialect>`.
    pub(super) weft: bool,
    /// The subprotocol the handshake answers with.
    pub(super) protocol: Option<String>,
    /// A per-user token's sessions, which limit the socket.
    pub(super) grant: Option<Grant>,
    /// Whom a new session counts against (`SESSIONS_PER_MINUTE`).
    pub(super) client: String,
    /// Another session's object is connecting (relay.rs): a limit refuses it with an HTTP
    /// status rather than a close.
    pub(super) link: bool,
}

/// The URL the Worker (for a client) or another session's object (for a link) connects a socket
/// to a session at. The grant travels as JSON in the URL, which only this Worker builds.
pub fn connect_url(
    dialect: Dialect,
    session: &str,
    weft: bool,
    protocol: Option<&str>,
    grant: Option<&Grant>,
    client: &str,
    link: bool,
) -> String {
    let mut target = String::from("https://session.internal/connect?");
    crate::query::append(&mut target, "client", client);
    if link {
        crate::query::append(&mut target, "link", "1");
    }
    crate::query::append(&mut target, "dialect", dialect.as_str());
    crate::query::append(&mut target, "session", session);
    if weft {
        crate::query::append(&mut target, "weft", "1");
    }
    if let Some(p) = protocol {
        crate::query::append(&mut target, "protocol", p);
    }
    if let Some(grant) = grant {
        // A grant is strings only: serializing it cannot fail.
        if let Ok(json) = serde_json::to_string(grant) {
            crate::query::append(&mut target, "grant", &json);
        }
    }
    target
}

impl Connect {
    /// Reads a [`connect_url`]. A dialect it does not name is loom's (the Worker always names
    /// one). `Err`: a grant that cannot be read, which must never open an unlimited socket.
    pub(super) fn parse(url: &str) -> Result<Connect, String> {
        let get = |name| crate::query::get(url, name);
        let grant = match get("grant") {
            Some(json) => Some(
                serde_json::from_str::<Grant>(&json)
                    .map_err(|e| format!("unreadable grant: {e}"))?,
            ),
            None => None,
        };
        Ok(Connect {
            dialect: get("dialect")
                .and_then(|d| Dialect::parse(&d))
                .unwrap_or(Dialect::Loom),
            session: get("session").unwrap_or_default(),
            weft: get("weft").is_some_and(|w| w == "1"),
            protocol: get("protocol"),
            grant,
            client: get("client").unwrap_or_default(),
            link: get("link").is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_arrives_as_the_worker_sent_it() {
        let grant = Grant {
            sub: "ann & co".into(),
            sessions: vec!["user-1/*".into(), "chat=7".into()],
        };
        for (dialect, link) in [(Dialect::Agentchat, false), (Dialect::Cueso, true)] {
            let url = connect_url(
                dialect,
                "user-1/a b",
                true,
                Some("weft.cueso"),
                Some(&grant),
                "sub:ann",
                link,
            );
            let want = Connect {
                dialect,
                session: "user-1/a b".into(),
                weft: true,
                protocol: Some("weft.cueso".into()),
                grant: Some(grant.clone()),
                client: "sub:ann".into(),
                link,
            };
            assert_eq!(Connect::parse(&url), Ok(want));
        }
        let bare = connect_url(Dialect::Loom, "s", false, None, None, "ip:1", false);
        let read = Connect::parse(&bare).unwrap();
        assert_eq!(
            (read.weft, read.protocol, read.grant, read.link),
            (false, None, None, false)
        );
    }

    #[test]
    fn an_unreadable_grant_refuses_the_socket() {
        let mut url = connect_url(Dialect::Loom, "s", false, None, None, "ip:1", false);
        crate::query::append(&mut url, "grant", "{\"sub\":");
        assert!(Connect::parse(&url)
            .unwrap_err()
            .starts_with("unreadable grant"));
    }

    #[test]
    fn an_http_request_arrives_as_the_worker_sent_it() {
        for (action, dialect) in [
            (Action::Turn, &http::AISDK),
            (Action::Replay, &http::AISDK),
            (Action::Turn, &http::AGUI),
            (Action::Replay, &http::AGUI),
        ] {
            let url = http_url(action, dialect, "chat 1&2", "ip:10.0.0.1");
            assert!(url.starts_with("https://session.internal/http?"));
            let want = HttpCall {
                action,
                dialect,
                session: "chat 1&2".into(),
                client: "ip:10.0.0.1".into(),
            };
            assert_eq!(HttpCall::parse(&url), Ok(want));
        }
        let mut unknown = String::from("https://session.internal/http?action=turn");
        crate::query::append(&mut unknown, "dialect", "acp");
        assert!(HttpCall::parse(&unknown).unwrap_err().contains("acp"));
        assert!(HttpCall::parse("https://session.internal/http?dialect=aisdk").is_err());
    }
}
