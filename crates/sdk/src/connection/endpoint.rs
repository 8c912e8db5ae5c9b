//! URL helpers: the URL a socket opens and the subprotocols it offers, with the token where
//! weft or an original server takes it.

use weft_protocol::text;
use weft_protocol::Dialect;

use crate::error::Error;
use crate::marshal::quoted;

/// The URL to open: `ws(s)://` (from `http(s)://` too), the dialect's endpoint path when the
/// URL has none, and `session_id` as a query parameter.
pub fn endpoint_url(
    url: &str,
    dialect: Dialect,
    session_id: Option<&str>,
) -> Result<String, Error> {
    // A byte search rather than `split_once("://")`: core's substring searcher brings its
    // panic paths (3 KB of formatting) along for this one call.
    let (scheme, rest) = url
        .as_bytes()
        .windows(3)
        .position(|w| w == b"://")
        .and_then(|i| Some((url.get(..i)?, url.get(i + 3..)?)))
        .ok_or_else(|| bad_url(url, "it has no scheme"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" => "wss",
        other => {
            return Err(bad_url(
                url,
                &text::concat(&[
                    "the scheme ",
                    &quoted(other),
                    " is not ws, wss, http or https",
                ]),
            ))
        }
    };
    // WebSocket URLs have no fragment.
    let rest = rest.split('#').next().unwrap_or_default();
    // `find` lands on a char boundary, so the split always succeeds.
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (host, tail) = rest.split_at_checked(split).unwrap_or((rest, ""));
    if host.is_empty() {
        return Err(bad_url(url, "it has no host"));
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let path = if path.is_empty() || path == "/" {
        dialect.endpoint()
    } else {
        path
    };
    let mut out = text::concat(&[scheme, "://", host, path]);
    let mut sep = '?';
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        out.push(sep);
        out.push_str(q);
        sep = '&';
    }
    if let Some(s) = session_id {
        out.push(sep);
        out.push_str("session_id=");
        out.push_str(&percent_encode(s));
    }
    Ok(out)
}

/// The server's `/status` over HTTP beside the socket's URL `endpoint` (as [`endpoint_url`]
/// made it), the token in its query: a header would need a CORS preflight.
pub fn status_url(endpoint: &str, token: Option<&str>) -> String {
    let (scheme, rest) = match endpoint.strip_prefix("wss://") {
        Some(rest) => ("https://", rest),
        None => (
            "http://",
            endpoint.strip_prefix("ws://").unwrap_or(endpoint),
        ),
    };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let mut out = text::concat(&[scheme, host, "/status"]);
    if let Some(token) = token {
        out.push_str("?token=");
        out.push_str(&percent_encode(token));
    }
    out
}

fn bad_url(url: &str, why: &str) -> Error {
    Error::argument(text::concat(&[
        "url ",
        &quoted(url),
        " is not a WebSocket URL (",
        why,
        "); use e.g. \"wss://weft.example.com\"",
    ]))
}

/// Hex digits by value, written directly instead of through `{:02X}` formatting.
const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(UPPER_HEX[usize::from(b >> 4)]));
            out.push(char::from(UPPER_HEX[usize::from(b & 0x0f)]));
        }
    }
    out
}

/// The subprotocols to offer: `weft.<dialect>` names the dialect, `weft.token.<t>` carries the
/// token. A token must be a valid subprotocol token (RFC 6455 §4.1), or the browser throws.
pub fn subprotocols(dialect: Dialect, token: Option<&str>) -> Result<Vec<String>, Error> {
    let mut protocols = vec![String::from(dialect.subprotocol())];
    if let Some(token) = token {
        check_token(token)?;
        protocols.push(text::concat(&["weft.token.", token]));
    }
    Ok(protocols)
}

/// Where a fresh token from the app's token function goes on the socket about to open: weft
/// (it offered `weft.<dialect>`) takes it as the subprotocol `weft.token.<t>`, in place of any
/// earlier one; an original server in the `token` query parameter.
pub fn with_token(
    url: &str,
    protocols: &[String],
    token: &str,
) -> Result<(String, Vec<String>), Error> {
    let mut protocols: Vec<String> = protocols
        .iter()
        .filter(|p| !p.starts_with("weft.token."))
        .cloned()
        .collect();
    if protocols.iter().any(|p| p.starts_with("weft.")) {
        check_token(token)?;
        protocols.push(text::concat(&["weft.token.", token]));
        Ok((url.into(), protocols))
    } else {
        Ok((original_url(url, Some(token)), protocols))
    }
}

/// A token must fit a WebSocket subprotocol (an HTTP token) to travel as one.
fn check_token(token: &str) -> Result<(), Error> {
    let ok = !token.is_empty()
        && token.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        });
    if !ok {
        return Err(Error::argument(
            "token must be non-empty and use only letters, digits and !#$%&'*+-.^_`|~ \
                 (it travels as a WebSocket subprotocol); base64url-encode other tokens",
        ));
    }
    Ok(())
}

/// The URL for an original server: `url` with the token, when the app gave one, as the `token`
/// query parameter — where the originals' own clients put it, as they take no subprotocol.
pub fn original_url(url: &str, token: Option<&str>) -> String {
    match token {
        Some(t) => {
            let sep = if url.contains('?') { "&" } else { "?" };
            text::concat(&[url, sep, "token=", &percent_encode(t)])
        }
        None => url.into(),
    }
}
