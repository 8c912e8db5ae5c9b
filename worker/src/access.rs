//! Who may use which session: per-user tokens.
//!
//! The shared `WEFT_AUTH_TOKEN` opens everything to whoever holds it, and a public web app must
//! put it in its page. With `WEFT_AUTH_SECRET` set, the app's own backend mints a token per user
//! instead: an HS256 JWT signed with that secret, whose claims are
//!
//! | claim | meaning |
//! |---|---|
//! | `sub` | who it was minted for (a string; it appears in logs and limits) |
//! | `exp` | when it expires, in seconds since the epoch; required |
//! | `sessions` | the sessions it may use: exact ids (`"chat-7"`), prefixes ending in `*` (`"user-42/*"`: every id that starts with `user-42/`), or `"*"` for any |
//!
//! A token is verified (signature with Web Crypto, then expiry and claims) before any socket
//! upgrade or proxy call, so an expired, tampered or malformed one is an HTTP 401 and nothing
//! else happens. Its holder may then use only its sessions, wherever a session is chosen: the
//! socket's `?session_id=` (a socket without one joins the first entry of `sessions`, or a new
//! session under it when that entry is a prefix), and every session a message names
//! (relay.rs). Everything else a client does (resume, cancel, approvals, tool results,
//! `user_messages`) reaches only those sessions, since it goes to one of them. A socket
//! stays open past `exp`: the token is checked when it connects, and the SDK asks for a fresh
//! one on every reconnect.

use serde::{Deserialize, Serialize};

use crate::relay::{check_session_id, MAX_SESSION_ID};

/// The most `sessions` entries a token may carry, and the longest `sub`: the grant rides in
/// every socket's attachment, which the runtime caps at 2 KB.
pub const MAX_TOKEN_SESSIONS: usize = 8;
/// See [`MAX_TOKEN_SESSIONS`].
pub const MAX_SUB: usize = 128;

/// What a request may do, once its credentials are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// No auth configured, or the shared `WEFT_AUTH_TOKEN`: any session.
    Full,
    /// A per-user token: only the sessions of its grant.
    Scoped(Grant),
}

impl Access {
    /// The grant that limits this access, if any.
    pub fn grant(&self) -> Option<&Grant> {
        match self {
            Access::Full => None,
            Access::Scoped(grant) => Some(grant),
        }
    }
}

/// The sessions a verified token may use, and whom it was minted for. Kept in each socket's
/// attachment, so it outlives hibernation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub sub: String,
    /// Its `sessions` patterns, each checked by [`check_pattern`].
    pub sessions: Vec<String>,
}

impl Grant {
    /// Whether the holder may use session `id`.
    pub fn allows(&self, id: &str) -> bool {
        self.sessions.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => p == id,
        })
    }

    /// The session a socket that names none joins: the first pattern, or `fresh` under it
    /// when that pattern is a prefix.
    pub fn default_session(&self, fresh: &str) -> Option<String> {
        let first = self.sessions.first()?;
        Some(match first.strip_suffix('*') {
            Some(prefix) => format!("{prefix}{fresh}"),
            None => first.clone(),
        })
    }
}

/// How a request names the session it uses: a socket's `?session_id=`, or an AI SDK chat's id
/// (`POST /api/chat`, `GET /api/chat/{id}/stream`). The refusals say it the way the request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    SessionId,
    Chat,
}

/// A request refused before it reaches a session: the HTTP status and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl Access {
    /// The session a request may use, checked the same way on every route: the one it names
    /// must be a valid session id (relay.rs); one that names none (a socket) gets a new one
    /// from `fresh`, under the grant's first pattern when there is a grant; and a grant must
    /// allow the session either way.
    pub fn session_for(
        &self,
        named: Option<&str>,
        naming: Naming,
        fresh: impl Fn() -> Result<String, String>,
    ) -> Result<String, Refusal> {
        let (label, noun) = match naming {
            Naming::SessionId => ("session_id", "session"),
            Naming::Chat => ("chat id", "chat"),
        };
        let session = match named {
            Some(named) => {
                check_session_id(named).map_err(|why| Refusal {
                    status: 400,
                    message: format!("invalid {label}: {why}"),
                })?;
                named.to_string()
            }
            None => {
                let fresh = fresh().map_err(|why| Refusal {
                    status: 500,
                    message: format!("no new {noun} id could be made: {why}"),
                })?;
                self.grant()
                    .and_then(|grant| grant.default_session(&fresh))
                    .unwrap_or(fresh)
            }
        };
        if let Some(grant) = self.grant().filter(|g| !g.allows(&session)) {
            return Err(Refusal {
                status: 403,
                message: format!("this token ({}) may not use {noun} {session}", grant.sub),
            });
        }
        Ok(session)
    }
}

/// A `sessions` pattern is a valid session id, or a prefix of one followed by `*`.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    match pattern.strip_suffix('*') {
        Some("") => Ok(()),
        Some(prefix) if prefix.len() < MAX_SESSION_ID => check_session_id(prefix),
        Some(_) => Err(format!(
            "a prefix is shorter than {MAX_SESSION_ID} characters"
        )),
        None => check_session_id(pattern),
    }
}

/// A token split into what is signed and its signature, with its header checked.
#[derive(Debug)]
pub struct Signed<'a> {
    /// `header.payload`, the bytes the signature covers.
    pub signing_input: &'a str,
    /// The HMAC-SHA256 the token claims.
    pub signature: Vec<u8>,
    payload: &'a str,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    exp: f64,
    sessions: Vec<String>,
}

/// Splits a compact JWT and checks its header: HS256 only, so a token cannot choose a weaker
/// algorithm (`none`) or a key type the secret is not.
pub fn split(token: &str) -> Result<Signed<'_>, String> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("invalid token: not a JWT (header.payload.signature)".into());
    };
    let header: Header = base64url(header)
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
        .map_err(|e| format!("invalid token header: {e}"))?;
    if header.alg != "HS256" {
        return Err(format!(
            "invalid token: alg must be HS256, not {:?}",
            header.alg
        ));
    }
    let signature = base64url(signature).map_err(|e| format!("invalid token signature: {e}"))?;
    Ok(Signed {
        signing_input: &token[..header_and_payload_len(token)],
        signature,
        payload,
    })
}

fn header_and_payload_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(token.len())
}

/// The grant of a token whose signature was verified: its claims read and checked against
/// `now_secs`.
pub fn grant(signed: &Signed<'_>, now_secs: f64) -> Result<Grant, String> {
    let claims: Claims = base64url(signed.payload)
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
        .map_err(|e| format!("invalid token claims (sub, exp and sessions are required): {e}"))?;
    if claims.exp <= now_secs {
        return Err("the token has expired".into());
    }
    if claims.sessions.is_empty() {
        return Err("invalid token: `sessions` is empty".into());
    }
    if claims.sessions.len() > MAX_TOKEN_SESSIONS {
        return Err(format!(
            "invalid token: `sessions` has {} entries, at most {MAX_TOKEN_SESSIONS} (use a prefix)",
            claims.sessions.len()
        ));
    }
    if claims.sub.is_empty() || claims.sub.len() > MAX_SUB {
        return Err(format!("invalid token: `sub` is 1 to {MAX_SUB} characters"));
    }
    for pattern in &claims.sessions {
        check_pattern(pattern).map_err(|e| format!("invalid token: `sessions`: {e}"))?;
    }
    Ok(Grant {
        sub: claims.sub,
        sessions: claims.sessions,
    })
}

/// Verifies `token` against `secret` with the runtime's Web Crypto (HMAC-SHA256, compared in
/// constant time by the runtime), then reads its grant.
pub async fn verify(secret: &str, token: &str, now_secs: f64) -> Result<Grant, String> {
    let signed = split(token)?;
    let valid = hmac_sha256_verify(secret, signed.signing_input, &signed.signature)
        .await
        .map_err(|e| format!("the token could not be verified: {e}"))?;
    if !valid {
        return Err("invalid token: bad signature".into());
    }
    grant(&signed, now_secs)
}

async fn hmac_sha256_verify(secret: &str, data: &str, signature: &[u8]) -> Result<bool, String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let describe = |e: wasm_bindgen::JsValue| {
        e.as_string()
            .or_else(|| {
                e.dyn_ref::<js_sys::Error>()
                    .map(|e| String::from(e.message()))
            })
            .unwrap_or_else(|| "Web Crypto failed".into())
    };
    let crypto: web_sys::Crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into())
        .map_err(describe)?
        .unchecked_into();
    let subtle = crypto.subtle();
    let key_data = js_sys::Uint8Array::from(secret.as_bytes());
    let algorithm = web_sys::HmacImportParams::new_with_str("HMAC", "SHA-256");
    let usages = js_sys::Array::of1(&"verify".into());
    let key = subtle
        .import_key_with_object("raw", &key_data, &algorithm, false, &usages)
        .map_err(describe)?;
    let key: web_sys::CryptoKey = JsFuture::from(key)
        .await
        .map_err(describe)?
        .unchecked_into();
    let verified = subtle
        .verify_with_str_and_u8_array_and_u8_array("HMAC", &key, signature, data.as_bytes())
        .map_err(describe)?;
    Ok(JsFuture::from(verified)
        .await
        .map_err(describe)?
        .as_bool()
        .unwrap_or(false))
}

/// Base64url without padding (RFC 7515 §2), as JWTs use it; padding and other alphabets are
/// refused, so one token has one spelling.
fn base64url(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return Err(format!("{:?} is not base64url", char::from(c))),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 || acc != 0 {
        return Err("truncated base64url".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_checks_the_session_it_names_alike() {
        let scoped = Access::Scoped(Grant {
            sub: "ann".into(),
            sessions: vec!["user-1/*".into(), "shared".into()],
        });
        let fresh = || Ok("f".to_string());
        let refused = |status: u16, message: &str| {
            Err(Refusal {
                status,
                message: message.into(),
            })
        };
        for naming in [Naming::SessionId, Naming::Chat] {
            assert_eq!(
                scoped.session_for(Some("shared"), naming, fresh),
                Ok("shared".into())
            );
            assert_eq!(
                Access::Full.session_for(Some("any"), naming, fresh),
                Ok("any".into())
            );
        }
        assert_eq!(
            scoped.session_for(Some("user-2/x"), Naming::SessionId, fresh),
            refused(403, "this token (ann) may not use session user-2/x")
        );
        assert_eq!(
            scoped.session_for(Some("user-2/x"), Naming::Chat, fresh),
            refused(403, "this token (ann) may not use chat user-2/x")
        );
        // An invalid id is refused as such, before the grant is asked, even with full access.
        assert_eq!(
            Access::Full.session_for(Some("a b"), Naming::Chat, fresh),
            refused(
                400,
                "invalid chat id: a session id may contain only A-Z, a-z, 0-9 and -_.:/@+=~ (not ' ')"
            )
        );
        assert_eq!(
            scoped.session_for(Some(""), Naming::SessionId, fresh),
            refused(400, "invalid session_id: a session id cannot be empty")
        );
        // A socket that names none: a new session, under the grant's first pattern.
        assert_eq!(
            scoped.session_for(None, Naming::SessionId, fresh),
            Ok("user-1/f".into())
        );
        assert_eq!(
            Access::Full.session_for(None, Naming::SessionId, fresh),
            Ok("f".into())
        );
        // A runtime that cannot make a random id refuses the socket rather than guess one.
        assert_eq!(
            scoped.session_for(None, Naming::SessionId, || Err("no crypto".into())),
            refused(500, "no new session id could be made: no crypto")
        );
    }

    fn b64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
            }
        }
        out
    }

    fn token(header: &str, claims: &str) -> String {
        format!(
            "{}.{}.{}",
            b64(header.as_bytes()),
            b64(claims.as_bytes()),
            b64(&[7; 32])
        )
    }

    const HS256: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

    #[test]
    fn base64url_reads_what_jwts_write_and_nothing_else() {
        for bytes in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foob",
            b"fooba",
            b"foobar",
            &[255, 254, 253],
        ] {
            assert_eq!(base64url(&b64(bytes)).as_deref(), Ok(bytes), "{bytes:?}");
        }
        assert!(base64url("Zg==").is_err(), "padding");
        assert!(base64url("a+b/").is_err(), "the other alphabet");
        assert!(base64url("Z").is_err(), "truncated");
        assert!(base64url("Zh").is_err(), "non-zero trailing bits");
    }

    #[test]
    fn a_token_names_its_sessions_and_expires() {
        let t = token(
            HS256,
            r#"{"sub":"u42","exp":2000,"sessions":["user-42/*","shared"]}"#,
        );
        let signed = split(&t).unwrap();
        assert_eq!(signed.signature, vec![7; 32]);
        assert_eq!(signed.signing_input, &t[..t.rfind('.').unwrap()]);
        let grant = grant(&signed, 1999.0).unwrap();
        assert_eq!(grant.sub, "u42");
        for (id, allowed) in [
            ("user-42/chat", true),
            ("user-42/", true),
            ("shared", true),
            ("user-42", false),
            ("user-420/chat", false),
            ("shared2", false),
            ("user-43/chat", false),
        ] {
            assert_eq!(grant.allows(id), allowed, "{id}");
        }
        assert_eq!(grant.default_session("abc").as_deref(), Some("user-42/abc"));
        assert_eq!(
            super::grant(&signed, 2000.0),
            Err("the token has expired".into())
        );
        let any = token(HS256, r#"{"sub":"admin","exp":9e9,"sessions":["*"]}"#);
        let any = super::grant(&split(&any).unwrap(), 0.0).unwrap();
        assert!(any.allows("anything-at-all"));
        let one = token(HS256, r#"{"sub":"u","exp":9e9,"sessions":["chat-7"]}"#);
        let one = super::grant(&split(&one).unwrap(), 0.0).unwrap();
        assert_eq!(one.default_session("x").as_deref(), Some("chat-7"));
    }

    #[test]
    fn malformed_tokens_are_refused_with_the_reason() {
        let claims = r#"{"sub":"u","exp":9e9,"sessions":["a"]}"#;
        for (t, why) in [
            ("", "not a JWT"),
            ("a.b", "not a JWT"),
            ("a.b.c.d", "not a JWT"),
            (&token(r#"{"alg":"none"}"#, claims), "alg must be HS256"),
            (&token(r#"{"alg":"RS256"}"#, claims), "alg must be HS256"),
            (&token(r#"{"typ":"JWT"}"#, claims), "invalid token header"),
            (
                &format!("{}.{}.a+b=", b64(HS256.as_bytes()), b64(claims.as_bytes())),
                "signature",
            ),
        ] {
            let e = split(t).unwrap_err();
            assert!(e.contains(why), "{t}: {e}");
        }
        for (claims, why) in [
            (r#"{"sub":"u","sessions":["a"]}"#, "exp"),
            (r#"{"sub":"u","exp":"9e9","sessions":["a"]}"#, "exp"),
            (r#"{"exp":9e9,"sessions":["a"]}"#, "sub"),
            (r#"{"sub":"u","exp":9e9}"#, "sessions"),
            (
                r#"{"sub":"u","exp":9e9,"sessions":[]}"#,
                "`sessions` is empty",
            ),
            (r#"{"sub":"u","exp":9e9,"sessions":["a*b"]}"#, "not '*'"),
            (r#"{"sub":"u","exp":9e9,"sessions":["**"]}"#, "not '*'"),
            (r#"{"sub":"u","exp":9e9,"sessions":["a b/*"]}"#, "not ' '"),
            (
                r#"{"sub":"u","exp":9e9,"sessions":[""]}"#,
                "cannot be empty",
            ),
            (
                r#"{"sub":"u","exp":9e9,"sessions":["a","b","c","d","e","f","g","h","i"]}"#,
                "at most 8",
            ),
            (
                r#"{"sub":"","exp":9e9,"sessions":["a"]}"#,
                "`sub` is 1 to 128",
            ),
            ("not json", "invalid token claims"),
        ] {
            let t = token(HS256, claims);
            let e = grant(&split(&t).unwrap(), 0.0).unwrap_err();
            assert!(e.contains(why), "{claims}: {e}");
        }
    }
}
