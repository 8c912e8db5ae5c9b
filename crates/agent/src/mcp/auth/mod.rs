//! OAuth 2.1 for MCP servers that ask for it (the specification's *Authorization* section), as
//! sans-IO steps: each takes what the host fetched (a header, a body, the callback's query) and
//! gives a parsed result or the next [`Request`] to send. The host owns the sockets, the clock,
//! the randomness and the storage; nothing here remembers anything between steps.
//!
//! The flow, in the order the host takes it:
//!
//! 1. A 401 from the server ([`McpError::Unauthorized`](super::McpError)) carries a
//!    `WWW-Authenticate` challenge: [`Challenge::parse`] reads its `resource_metadata` and
//!    `scope`. [`resource_metadata_urls`] says where the protected resource metadata
//!    (RFC 9728) is, the challenge's URL first, then the well-known paths;
//!    [`ResourceMetadata::parse`] reads it and checks it describes this server.
//! 2. [`authorization_server_metadata_urls`] lists the issuer's metadata documents in the
//!    specification's order (RFC 8414, then OpenID Connect discovery);
//!    [`AuthServer::parse`] reads the first found and refuses a server without S256 PKCE.
//! 3. The client: the operator's pre-registered one, else a Client ID Metadata Document the
//!    host serves (when the server takes them), else Dynamic Client Registration (RFC 7591:
//!    [`registration_request`], [`Client::parse_registration`]) — [`choose_client`].
//! 4. [`authorization_url`] with `state`, the PKCE challenge ([`pkce_challenge`]) and the
//!    `resource` indicator (RFC 8707); the user authorizes; the callback's query is read by
//!    [`Callback::parse`], whose `iss` is checked against the issuer (RFC 9207).
//! 5. [`token_request`] exchanges the code ([`Grant::Code`]) or refreshes ([`Grant::Refresh`]);
//!    [`Tokens::parse`] reads the answer. A refused refresh ([`AuthError::needs_user`]) means
//!    the user authorizes again.
//!
//! JSON is read with weft-protocol's tree and written with its `ObjectWriter`: these shapes are
//! read once per flow, and derives would cost the Worker's upload more than they save here.

mod discovery;
mod flow;
mod metadata;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

pub use discovery::{Discovered, Discovery, Step};
pub use flow::{
    authorization_url, choose_client, client_metadata_document, registration_request,
    token_request, Authorize, Callback, ClientChoice, Grant, Tokens,
};
pub use metadata::{
    authorization_server_metadata_urls, resource_metadata_urls, select_scope, AuthServer,
    Challenge, ResourceMetadata,
};

/// An HTTP request of the authorization flow for the host to send (a metadata `GET`, a
/// registration or a token `POST`).
///
/// Its [`Debug`] output hides the body and the `Authorization` header: they carry the code,
/// the verifier, a refresh token or the client's secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Where to send it.
    pub url: String,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body, already encoded as its `Content-Type` says.
    pub body: Option<String>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let secret = n.eq_ignore_ascii_case("authorization");
                (n.as_str(), if secret { "***" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body.as_ref().map(|_| "***"))
            .finish()
    }
}

/// The client weft authorizes as at one authorization server.
///
/// [`Debug`] hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Client {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client (sent with HTTP Basic, or in the form when
    /// the registration said `client_secret_post`).
    pub client_secret: Option<String>,
    /// The secret goes in the form rather than in `Authorization: Basic`.
    pub secret_in_body: bool,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("secret_in_body", &self.secret_in_body)
            .finish()
    }
}

/// Why a step of the authorization flow failed, in words an operator or user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL (the server's, one in a metadata document) is not an absolute `http(s)` URL.
    BadUrl {
        /// What the URL was for.
        what: &'static str,
        /// The URL as given.
        url: String,
    },
    /// A metadata document, a registration or a token answer is not what its RFC says.
    Malformed {
        /// Which document.
        what: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// A document discovery needs was not found (or no client answer came).
    Undiscoverable {
        /// What is missing, as "it publishes no …".
        missing: &'static str,
    },
    /// The authorization server does not offer PKCE with S256, which MCP requires.
    NoPkce {
        /// The server's issuer.
        issuer: String,
    },
    /// No way to get a client at this authorization server: nothing pre-registered, no
    /// Client ID Metadata Documents, no registration endpoint.
    NoRegistration {
        /// The server's issuer.
        issuer: String,
    },
    /// The authorization or token endpoint answered with an OAuth error.
    Refused {
        /// The OAuth `error` code (`invalid_grant`, `access_denied` …).
        error: String,
        /// Its `error_description`, when given.
        description: String,
    },
    /// The callback does not belong to this flow (its `iss` is another server's, or absent
    /// where the server promised it).
    Callback {
        /// What was wrong.
        detail: String,
    },
}

impl AuthError {
    /// Whether only the user can fix this, by authorizing again: the grant (the code, or the
    /// refresh token) was refused, or the user declined.
    #[must_use]
    pub fn needs_user(&self) -> bool {
        matches!(self, Self::Refused { error, .. }
            if matches!(error.as_str(), "invalid_grant" | "access_denied" | "invalid_token"))
    }

    pub(crate) fn malformed(what: &'static str, detail: impl Into<String>) -> Self {
        Self::Malformed {
            what,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadUrl { what, url } => {
                write!(f, "the {what} {url:?} is not an absolute http(s) URL")
            }
            Self::Malformed { what, detail } => write!(f, "the {what} is not valid: {detail}"),
            Self::Undiscoverable { missing } => f.write_str(missing),
            Self::NoPkce { issuer } => write!(
                f,
                "the authorization server {issuer} does not support PKCE with S256 \
                 (code_challenge_methods_supported), which MCP requires; weft will not \
                 authorize there"
            ),
            Self::NoRegistration { issuer } => write!(
                f,
                "weft has no client at the authorization server {issuer}: it offers neither \
                 Dynamic Client Registration nor Client ID Metadata Documents"
            ),
            Self::Refused { error, description } => {
                write!(f, "the authorization server refused: {error}")?;
                if !description.is_empty() {
                    write!(f, " ({description})")?;
                }
                Ok(())
            }
            Self::Callback { detail } => {
                write!(f, "the authorization callback was refused: {detail}")
            }
        }
    }
}

impl core::error::Error for AuthError {}

/// The PKCE `code_challenge` for S256 (RFC 7636 §4.2): base64url of the verifier's SHA-256
/// digest, which the host computes (the Worker with WebCrypto, a build without a hash of its
/// own).
#[must_use]
pub fn pkce_challenge(verifier_sha256: &[u8]) -> String {
    base64url(verifier_sha256)
}

/// Base64url without padding (RFC 4648 §5): how PKCE writes its challenge, and how the host
/// makes a verifier or a `state` out of random bytes (32 bytes give the 43 characters PKCE
/// asks at least).
#[must_use]
pub fn base64url(bytes: &[u8]) -> String {
    encode64(bytes, b"-_", false)
}

/// Base64 with `last` as its two last letters, padded or not.
pub(crate) fn encode64(bytes: &[u8], last: &[u8; 2], pad: bool) -> String {
    let letter = |n: u32| -> char {
        let n = (n & 63) as u8;
        char::from(match n {
            0..=25 => b'A' + n,
            26..=51 => b'a' + n - 26,
            52..=61 => b'0' + n - 52,
            _ => last[usize::from(n - 62)],
        })
    };
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(letter(n >> (18 - 6 * i)));
        }
        if pad {
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
    }
    out
}

/// Fuzzing entry point: `data` as every text the flow reads from outside — a challenge, the
/// two metadata documents, a registration and a token answer, a callback's query. Nothing may
/// panic; what parses must hold what the parsers promise.
#[doc(hidden)]
pub fn fuzz_mcp_auth(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let server_url = "https://mcp.example.com/mcp";
    let challenge = Challenge::parse(&text);
    if let Ok(urls) = resource_metadata_urls(server_url, challenge.as_ref()) {
        assert!(!urls.is_empty());
    }
    if let Ok(resource) = ResourceMetadata::parse(server_url, &text) {
        assert!(!resource.authorization_servers.is_empty());
        assert!(
            authorization_server_metadata_urls(&resource.authorization_servers[0])
                .map_or(true, |urls| urls.len() >= 2)
        );
    }
    if let Ok(server) = AuthServer::parse("https://auth.example.com", &text) {
        let client = Client {
            client_id: "c".into(),
            client_secret: Some("s".into()),
            secret_in_body: false,
        };
        let request = Authorize {
            client_id: "c",
            redirect_uri: "https://w/cb",
            state: "s",
            code_challenge: "x",
            resource: server_url,
            scope: None,
        };
        assert!(authorization_url(&server, &request).starts_with(&server.authorization_endpoint));
        let _token = token_request(&server, &client, Grant::Refresh { refresh_token: "r" }, "r");
        if let Ok(callback) = Callback::parse(&text) {
            // Either outcome is fine; it must not panic.
            let _code = callback.code_from(&server).is_ok();
        }
    }
    for status in [200, 201, 400] {
        if let Ok(client) = Client::parse_registration(status, &text) {
            assert!(!client.client_id.is_empty());
        }
        if let Ok(tokens) = Tokens::parse(status, &text, u64::MAX - 1) {
            assert!(!tokens.access_token.is_empty());
        }
    }
}

#[cfg(test)]
mod tests;
