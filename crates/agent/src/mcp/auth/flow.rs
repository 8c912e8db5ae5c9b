//! The client, the user's authorization and the tokens: registration (RFC 7591), the
//! authorization request with PKCE and `resource` (OAuth 2.1, RFC 8707), its callback
//! (RFC 9207's `iss`), and the token endpoint's two grants.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use url::form_urlencoded;
use weft_protocol::json::{self, Json, ObjectWriter};

use super::{encode64, AuthError, AuthServer, Client, Request};

/// How weft introduces itself to an authorization server.
const CLIENT_NAME: &str = "weft";

/// Where the client comes from, in the specification's order of preference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientChoice {
    /// Use this one: the operator's, or the host's Client ID Metadata Document URL.
    Ready(Client),
    /// Register one first ([`registration_request`]).
    Register,
}

/// Which client to authorize as at `server`: the operator's pre-registered one; else the
/// host's Client ID Metadata Document (an `https` URL the host serves) when the server takes
/// them; else Dynamic Client Registration when it offers it; else none can be had.
pub fn choose_client(
    server: &AuthServer,
    preregistered: Option<&Client>,
    metadata_document: Option<&str>,
) -> Result<ClientChoice, AuthError> {
    if let Some(client) = preregistered {
        // Its secret goes where the server takes it: Basic unless it lists only the form.
        let offers = |m: &str| server.token_auth_methods.iter().any(|s| s == m);
        let secret_in_body = client.client_secret.is_some()
            && offers("client_secret_post")
            && !offers("client_secret_basic");
        return Ok(ClientChoice::Ready(Client {
            secret_in_body,
            ..client.clone()
        }));
    }
    if let Some(url) = metadata_document.filter(|u| u.starts_with("https://")) {
        if server.client_id_metadata_documents {
            return Ok(ClientChoice::Ready(Client {
                client_id: url.to_string(),
                client_secret: None,
                secret_in_body: false,
            }));
        }
    }
    if server.registration_endpoint.is_some() {
        return Ok(ClientChoice::Register);
    }
    Err(AuthError::NoRegistration {
        issuer: server.issuer.clone(),
    })
}

/// How the client authenticates at the token endpoint: as a public client when the server
/// allows it (nothing secret to keep), else with the secret in the form, else with Basic.
fn auth_method(server: &AuthServer) -> &'static str {
    let offers = |m: &str| server.token_auth_methods.iter().any(|s| s == m);
    if server.token_auth_methods.is_empty() || offers("none") {
        "none"
    } else if offers("client_secret_post") {
        "client_secret_post"
    } else {
        "client_secret_basic"
    }
}

/// The Dynamic Client Registration request (RFC 7591 §3.1) for a client that redirects to
/// `redirect_uri` and uses codes and refresh tokens.
pub fn registration_request(
    server: &AuthServer,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<Request, AuthError> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::NoRegistration {
            issuer: server.issuer.clone(),
        });
    };
    let mut body = metadata(redirect_uri);
    body.str("token_endpoint_auth_method", auth_method(server))
        .opt_str("scope", scope);
    Ok(Request {
        method: "POST",
        url: endpoint.clone(),
        headers: json_headers(),
        body: Some(body.finish()),
    })
}

/// The members a registration and a metadata document share.
fn metadata(redirect_uri: &str) -> ObjectWriter {
    let mut w = ObjectWriter::new();
    w.str("client_name", CLIENT_NAME)
        .strings("redirect_uris", &[redirect_uri])
        .strings("grant_types", &["authorization_code", "refresh_token"])
        .strings("response_types", &["code"]);
    w
}

/// The Client ID Metadata Document the host serves at `client_id` (an `https` URL): a public
/// client redirecting to `redirect_uri`.
#[must_use]
pub fn client_metadata_document(client_id: &str, redirect_uri: &str) -> String {
    let mut w = ObjectWriter::new();
    w.str("client_id", client_id);
    let mut rest = metadata(redirect_uri);
    rest.str("token_endpoint_auth_method", "none");
    let rest = rest.finish();
    let mut out = w.finish();
    // Both are objects: join them into one (`{"client_id":…` + `,` + `"client_name":…}`).
    out.pop();
    out.push(',');
    out.push_str(&rest[1..]);
    out
}

fn json_headers() -> Vec<(String, String)> {
    alloc::vec![
        ("Content-Type".into(), "application/json".into()),
        ("Accept".into(), "application/json".into()),
    ]
}

fn document<'a>(what: &'static str, body: &'a str) -> Result<Json<'a>, AuthError> {
    let doc = json::parse(body).map_err(|e| AuthError::malformed(what, e.to_string()))?;
    if doc.as_object().is_none() {
        return Err(AuthError::malformed(what, "not a JSON object"));
    }
    Ok(doc)
}

fn text(doc: &Json<'_>, key: &str) -> Option<String> {
    doc.get(key)
        .and_then(Json::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// An OAuth error answer (`{"error": …}`), or a description of whatever else came.
fn refusal(what: &'static str, status: u16, body: &str) -> AuthError {
    match document(what, body) {
        Ok(doc) => match text(&doc, "error") {
            Some(error) => AuthError::Refused {
                error,
                description: text(&doc, "error_description").unwrap_or_default(),
            },
            None => AuthError::malformed(what, format!("HTTP {status} without an OAuth error")),
        },
        Err(_) => AuthError::malformed(what, format!("HTTP {status}")),
    }
}

impl Client {
    /// Reads the registration's answer (RFC 7591 §3.2.1).
    pub fn parse_registration(status: u16, body: &str) -> Result<Client, AuthError> {
        const WHAT: &str = "client registration";
        if !(200..300).contains(&status) {
            return Err(refusal(WHAT, status, body));
        }
        let doc = document(WHAT, body)?;
        let client_id =
            text(&doc, "client_id").ok_or_else(|| AuthError::malformed(WHAT, "no client_id"))?;
        let method = text(&doc, "token_endpoint_auth_method");
        Ok(Client {
            client_id,
            client_secret: text(&doc, "client_secret"),
            secret_in_body: method.as_deref() == Some("client_secret_post"),
        })
    }
}

/// What the authorization request carries besides the server's endpoint.
#[derive(Debug, Clone, Copy)]
pub struct Authorize<'a> {
    /// The client's id.
    pub client_id: &'a str,
    /// Where the server sends the user back (the host's callback).
    pub redirect_uri: &'a str,
    /// The host's unguessable, single-use value that finds the flow again at the callback.
    pub state: &'a str,
    /// [`pkce_challenge`](super::pkce_challenge) of the verifier the host keeps.
    pub code_challenge: &'a str,
    /// The protected resource's identifier (its metadata's `resource`).
    pub resource: &'a str,
    /// The scope to ask for, if any ([`select_scope`](super::select_scope)).
    pub scope: Option<&'a str>,
}

/// The URL the user opens to authorize: the server's endpoint with the request's parameters
/// added to any query it already has.
pub fn authorization_url(server: &AuthServer, request: &Authorize<'_>) -> String {
    let endpoint = &server.authorization_endpoint;
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", request.client_id)
        .append_pair("redirect_uri", request.redirect_uri)
        .append_pair("state", request.state)
        .append_pair("code_challenge", request.code_challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("resource", request.resource);
    if let Some(scope) = request.scope {
        query.append_pair("scope", scope);
    }
    // The endpoint was checked when the metadata was read ([`AuthServer::parse`]); a query it
    // has already is kept (RFC 6749 §3.1).
    let joint = if endpoint.contains('?') { '&' } else { '?' };
    format!("{endpoint}{joint}{}", query.finish())
}

/// What the token endpoint is asked for.
#[derive(Clone, Copy)]
pub enum Grant<'a> {
    /// The callback's code, with the PKCE verifier and the redirect URI it was asked with.
    Code {
        /// The callback's `code`.
        code: &'a str,
        /// The PKCE verifier the challenge was made from.
        verifier: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
    },
    /// A new access token for the refresh token.
    Refresh {
        /// The refresh token.
        refresh_token: &'a str,
    },
}

impl fmt::Debug for Grant<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Code { .. } => "Grant::Code(***)",
            Self::Refresh { .. } => "Grant::Refresh(***)",
        })
    }
}

/// The token request (OAuth 2.1 §4.1.3, §4.3): the grant, the `resource` it is for, and the
/// client's authentication.
#[must_use]
pub fn token_request(
    server: &AuthServer,
    client: &Client,
    grant: Grant<'_>,
    resource: &str,
) -> Request {
    let mut form = form_urlencoded::Serializer::new(String::new());
    match grant {
        Grant::Code {
            code,
            verifier,
            redirect_uri,
        } => {
            form.append_pair("grant_type", "authorization_code")
                .append_pair("code", code)
                .append_pair("code_verifier", verifier)
                .append_pair("redirect_uri", redirect_uri);
        }
        Grant::Refresh { refresh_token } => {
            form.append_pair("grant_type", "refresh_token")
                .append_pair("refresh_token", refresh_token);
        }
    }
    form.append_pair("resource", resource);
    let mut headers = alloc::vec![
        (
            String::from("Content-Type"),
            String::from("application/x-www-form-urlencoded"),
        ),
        (String::from("Accept"), String::from("application/json")),
    ];
    match &client.client_secret {
        Some(secret) if !client.secret_in_body => {
            // RFC 6749 §2.3.1: each part form-encoded, then Base64.
            let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&client.client_id), enc(secret));
            headers.push((
                String::from("Authorization"),
                format!("Basic {}", encode64(pair.as_bytes(), b"+/", true)),
            ));
        }
        secret => {
            form.append_pair("client_id", &client.client_id);
            if let Some(secret) = secret {
                form.append_pair("client_secret", secret);
            }
        }
    }
    Request {
        method: "POST",
        url: server.token_endpoint.clone(),
        headers,
        body: Some(form.finish()),
    }
}

/// The tokens a grant gave. [`Debug`] hides them.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// Sent as `Authorization: Bearer` to the MCP server.
    pub access_token: String,
    /// For a new access token without the user; a refresh that returns none keeps the old one.
    pub refresh_token: Option<String>,
    /// When the access token expires (the host's clock, in ms), if the server said.
    pub expires_at_ms: Option<u64>,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Reads the token endpoint's answer at `now_ms`: tokens, or the server's refusal
    /// ([`AuthError::needs_user`] tells whether the user must authorize again).
    pub fn parse(status: u16, body: &str, now_ms: u64) -> Result<Tokens, AuthError> {
        const WHAT: &str = "token response";
        if !(200..300).contains(&status) {
            return Err(refusal(WHAT, status, body));
        }
        let doc = document(WHAT, body)?;
        let access_token = text(&doc, "access_token")
            .ok_or_else(|| AuthError::malformed(WHAT, "no access_token"))?;
        let kind = text(&doc, "token_type").unwrap_or_default();
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(AuthError::malformed(
                WHAT,
                format!("token_type {kind:?} is not Bearer"),
            ));
        }
        let expires_at_ms = doc
            .get("expires_in")
            .and_then(Json::as_u64)
            .map(|s| now_ms.saturating_add(s.saturating_mul(1000)));
        Ok(Tokens {
            access_token,
            refresh_token: text(&doc, "refresh_token"),
            expires_at_ms,
        })
    }

    /// Whether the access token is still good at `now_ms`, with a minute to spare so that it
    /// does not expire on its way.
    #[must_use]
    pub fn fresh(&self, now_ms: u64) -> bool {
        self.expires_at_ms
            .is_none_or(|at| now_ms.saturating_add(60_000) < at)
    }
}

/// The query the authorization server sent the user back with.
#[derive(Clone, PartialEq, Eq)]
pub struct Callback {
    /// `code`, when the user authorized.
    pub code: Option<String>,
    /// `state`: finds the flow.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`, when the user declined or the request was refused.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl fmt::Debug for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callback")
            .field("code", &self.code.as_ref().map(|_| "***"))
            .field("state", &self.state.as_ref().map(|_| "***"))
            .field("iss", &self.iss)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl Callback {
    /// Reads the callback's query string (without the `?`). A parameter given twice is
    /// refused (RFC 6749 §3.1: parameters must not repeat).
    pub fn parse(query: &str) -> Result<Callback, AuthError> {
        Callback::from_pairs(
            form_urlencoded::parse(query.as_bytes()).map(|(n, v)| (n.into_owned(), v.into_owned())),
        )
    }

    /// As [`Callback::parse`], from the query's pairs as the host decoded them (a host with a
    /// query reader of its own need not link a second one).
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Callback, AuthError> {
        let mut callback = Callback {
            code: None,
            state: None,
            iss: None,
            error: None,
            error_description: None,
        };
        for (name, value) in pairs {
            let slot = match name.as_str() {
                "code" => &mut callback.code,
                "state" => &mut callback.state,
                "iss" => &mut callback.iss,
                "error" => &mut callback.error,
                "error_description" => &mut callback.error_description,
                _ => continue,
            };
            if slot.is_some() {
                return Err(AuthError::Callback {
                    detail: format!("`{name}` is given twice"),
                });
            }
            *slot = Some(value);
        }
        Ok(callback)
    }

    /// The code, once the callback is known to come from `server`: an `iss` must be its
    /// issuer, and a server that promised `iss` must send it (RFC 9207 §2.4). A declined
    /// authorization is the server's refusal.
    pub fn code_from(&self, server: &AuthServer) -> Result<&str, AuthError> {
        match &self.iss {
            Some(iss) if *iss != server.issuer => {
                return Err(AuthError::Callback {
                    detail: format!("it comes from the issuer {iss:?}, not {:?}", server.issuer),
                })
            }
            None if server.sends_iss => {
                return Err(AuthError::Callback {
                    detail: String::from("it has no `iss`, which this server promised"),
                })
            }
            _ => {}
        }
        if let Some(error) = &self.error {
            return Err(AuthError::Refused {
                error: error.clone(),
                description: self.error_description.clone().unwrap_or_default(),
            });
        }
        self.code.as_deref().ok_or_else(|| AuthError::Callback {
            detail: String::from("it has no `code`"),
        })
    }
}
