//! The URL helpers: endpoint URLs, subprotocols and where a token goes.

use super::*;

#[test]
fn urls_and_subprotocols() {
    let u = |url: &str, d| endpoint_url(url, d, None);
    assert_eq!(
        u("wss://h.example", Dialect::Cueso).unwrap(),
        "wss://h.example/ws/chat"
    );
    assert_eq!(
        u("https://h.example/", Dialect::Agentloop).unwrap(),
        "wss://h.example/agentloop"
    );
    assert_eq!(
        u("ws://h:8080/custom?x=1#f", Dialect::Loom).unwrap(),
        "ws://h:8080/custom?x=1"
    );
    assert_eq!(
        endpoint_url("ws://h?a=b", Dialect::Agentchat, Some("s 1/é")).unwrap(),
        "ws://h/ws?a=b&session_id=s%201%2F%C3%A9"
    );
    for bad in ["h.example", "ftp://h", "ws://", ""] {
        assert_eq!(
            u(bad, Dialect::Loom).unwrap_err().code(),
            "invalid_argument",
            "{bad}"
        );
    }
    assert_eq!(
        subprotocols(Dialect::Cueso, Some("a.b-c_~1")).unwrap(),
        ["weft.cueso", "weft.token.a.b-c_~1"]
    );
    assert_eq!(subprotocols(Dialect::Loom, None).unwrap(), ["weft.loom"]);
    for bad in ["", "has space", "semi;colon", "é"] {
        assert!(subprotocols(Dialect::Loom, Some(bad)).is_err(), "{bad:?}");
    }
}

#[test]
fn a_fresh_token_replaces_the_last_on_every_open() {
    let weft = subprotocols(Dialect::Cueso, Some("old")).unwrap();
    let (url, protocols) = with_token("ws://h/ws/chat?session_id=s", &weft, "new.jwt-x_y").unwrap();
    assert_eq!(url, "ws://h/ws/chat?session_id=s");
    assert_eq!(protocols, ["weft.cueso", "weft.token.new.jwt-x_y"]);
    // An original server: in the query, as its own clients send it.
    let (url, protocols) = with_token("ws://h/ws/chat?session_id=s", &[], "a b").unwrap();
    assert_eq!(url, "ws://h/ws/chat?session_id=s&token=a%20b");
    assert!(protocols.is_empty());
    let bad = with_token("ws://h/", &weft, "not a token").unwrap_err();
    assert_eq!(bad.code(), "invalid_argument");
    assert!(with_token("ws://h/", &weft, "").is_err());
}

#[test]
fn status_is_the_servers_http_origin_with_the_token_in_the_query() {
    let endpoint = |url: &str| endpoint_url(url, Dialect::Cueso, Some("s-1")).unwrap();
    assert_eq!(
        status_url(&endpoint("ws://127.0.0.1:8080"), None),
        "http://127.0.0.1:8080/status"
    );
    assert_eq!(
        status_url(
            &endpoint("https://weft.example.com/ws/chat?x=1"),
            Some("t ok/é")
        ),
        "https://weft.example.com/status?token=t%20ok%2F%C3%A9"
    );
}
