//! Discovery: the challenge of a 401, the protected resource's metadata (RFC 9728) and the
//! authorization server's (RFC 8414 / OpenID Connect discovery).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use url::{Position, Url};
use weft_protocol::json::{self, Json};

use super::AuthError;

/// What a 401's `WWW-Authenticate: Bearer …` says (RFC 6750 §3, RFC 9728 §5.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// Where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// The scopes the request needs.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope` …
    pub error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge among those in the header, if there is one. Auth-params are
    /// `name=token` or `name="quoted"`; a name that is not followed by `=` starts the next
    /// scheme's challenge.
    #[must_use]
    pub fn parse(header: &str) -> Option<Challenge> {
        let mut rest = header.trim_start();
        loop {
            let scheme_end = rest.find([' ', ',']).unwrap_or(rest.len());
            let scheme = &rest[..scheme_end];
            rest = &rest[scheme_end..];
            let (params, next) = auth_params(rest);
            if scheme.eq_ignore_ascii_case("bearer") {
                let find = |name: &str| {
                    params
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(name))
                        .map(|(_, v)| v.clone())
                };
                return Some(Challenge {
                    resource_metadata: find("resource_metadata"),
                    scope: find("scope"),
                    error: find("error"),
                });
            }
            rest = next?.trim_start_matches([' ', ',']);
            if rest.is_empty() {
                return None;
            }
        }
    }
}

/// Reads `a=b, c="d"` up to the next scheme; the params, and the rest from that scheme on.
fn auth_params(text: &str) -> (Vec<(String, String)>, Option<&str>) {
    let mut params = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        if rest.is_empty() {
            return (params, None);
        }
        let name_end = rest.find(['=', ' ', ',']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        let after = rest[name_end..].trim_start();
        let Some(value) = after.strip_prefix('=') else {
            return (params, Some(rest));
        };
        let value = value.trim_start();
        let (value, tail) = if let Some(quoted) = value.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            out.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            (out, &quoted[end..])
        } else {
            let end = value.find([',', ' ']).unwrap_or(value.len());
            (value[..end].to_string(), &value[end..])
        };
        params.push((name.to_string(), value));
        rest = tail;
    }
}

fn http_url(what: &'static str, url: &str) -> Result<Url, AuthError> {
    match Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(u),
        _ => Err(AuthError::BadUrl {
            what,
            url: url.to_string(),
        }),
    }
}

/// `origin` + `/.well-known/<suffix>` + `path` (its trailing slash dropped). The URL's own
/// slices, not its setters: they would re-parse it, code the Worker's upload pays for.
fn well_known(url: &Url, suffix: &str, path: &str) -> String {
    format!(
        "{}/.well-known/{suffix}{}",
        &url[..Position::BeforePath],
        path.trim_end_matches('/')
    )
}

/// Where to read the MCP server's protected resource metadata, in order: the challenge's
/// `resource_metadata` alone when it gave one, else the well-known URL with the server's path,
/// then at the root (the specification's order).
pub fn resource_metadata_urls(
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Vec<String>, AuthError> {
    let server = http_url("MCP server URL", server_url)?;
    if let Some(url) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        return Ok(alloc::vec![
            http_url("resource_metadata URL", url)?.to_string()
        ]);
    }
    let mut urls = Vec::new();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(well_known(&server, "oauth-protected-resource", path));
    }
    urls.push(well_known(&server, "oauth-protected-resource", ""));
    Ok(urls)
}

/// The protected resource's metadata, as far as the flow needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier, sent as `resource` (RFC 8707) in the authorization and token
    /// requests.
    pub resource: String,
    /// The issuers that grant tokens for it; the first is used.
    pub authorization_servers: Vec<String>,
    /// The scopes it knows, asked for when the challenge named none.
    pub scopes_supported: Vec<String>,
}

fn object<'a>(what: &'static str, body: &'a str) -> Result<Json<'a>, AuthError> {
    let doc = json::parse(body).map_err(|e| AuthError::malformed(what, e.to_string()))?;
    if doc.as_object().is_none() {
        return Err(AuthError::malformed(what, "not a JSON object"));
    }
    Ok(doc)
}

fn string(doc: &Json<'_>, key: &str) -> Option<String> {
    doc.get(key).and_then(Json::as_str).map(String::from)
}

fn strings(doc: &Json<'_>, key: &str) -> Vec<String> {
    doc.get(key)
        .and_then(Json::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Json::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

impl ResourceMetadata {
    /// Reads the metadata and checks it is this server's: its `resource` has the server's
    /// origin and a path the server's URL starts with (metadata for another resource would
    /// send the user's token where it does not belong).
    pub fn parse(server_url: &str, body: &str) -> Result<ResourceMetadata, AuthError> {
        const WHAT: &str = "protected resource metadata";
        let doc = object(WHAT, body)?;
        let server = http_url("MCP server URL", server_url)?;
        let resource = string(&doc, "resource")
            .ok_or_else(|| AuthError::malformed(WHAT, "it has no `resource`"))?;
        let named = http_url("resource", &resource)?;
        let prefix = named.path().trim_end_matches('/');
        let path = server.path();
        let under = path == prefix
            || path.starts_with(prefix) && path[prefix.len()..].starts_with('/')
            || prefix.is_empty();
        if named[..Position::BeforePath] != server[..Position::BeforePath] || !under {
            return Err(AuthError::malformed(
                WHAT,
                format!("its resource {resource:?} is not the server {server_url:?}"),
            ));
        }
        let authorization_servers = strings(&doc, "authorization_servers");
        if authorization_servers.is_empty() {
            return Err(AuthError::malformed(
                WHAT,
                "it names no `authorization_servers`",
            ));
        }
        Ok(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: strings(&doc, "scopes_supported"),
        })
    }
}

/// The scope to ask for: the challenge's, else every scope the resource lists, else none
/// (the specification's order).
#[must_use]
pub fn select_scope(challenge: Option<&Challenge>, resource: &ResourceMetadata) -> Option<String> {
    challenge
        .and_then(|c| c.scope.clone())
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            (!resource.scopes_supported.is_empty()).then(|| resource.scopes_supported.join(" "))
        })
}

/// Where the issuer's metadata may be, in the order the specification tries them: for an
/// issuer with a path, OAuth's path-inserted URL, OpenID's path-inserted, OpenID's
/// path-appended; for one without, OAuth's then OpenID's.
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let url = http_url("issuer", issuer)?;
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return Ok(alloc::vec![
            well_known(&url, "oauth-authorization-server", ""),
            well_known(&url, "openid-configuration", ""),
        ]);
    }
    Ok(alloc::vec![
        well_known(&url, "oauth-authorization-server", path),
        well_known(&url, "openid-configuration", path),
        format!(
            "{}{path}/.well-known/openid-configuration",
            &url[..Position::BeforePath]
        ),
    ])
}

/// An authorization server, as far as the flow needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthServer {
    /// Its issuer identifier, checked against the callback's `iss`.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens become access tokens.
    pub token_endpoint: String,
    /// Dynamic Client Registration's endpoint, when it offers one.
    pub registration_endpoint: Option<String>,
    /// It takes an HTTPS URL as `client_id` (a Client ID Metadata Document).
    pub client_id_metadata_documents: bool,
    /// It puts `iss` in its callbacks (RFC 9207): a callback without one is refused.
    pub sends_iss: bool,
    /// `token_endpoint_auth_methods_supported`, empty when not said.
    pub token_auth_methods: Vec<String>,
}

impl AuthServer {
    /// Reads the metadata found for `issuer`; refuses one whose `issuer` is another (RFC 8414
    /// §3.3), that lacks an endpoint, or that does not list S256 among its PKCE methods — the
    /// specification has the client refuse a server without it, listed or not.
    pub fn parse(issuer: &str, body: &str) -> Result<AuthServer, AuthError> {
        const WHAT: &str = "authorization server metadata";
        let doc = object(WHAT, body)?;
        let said = string(&doc, "issuer").unwrap_or_default();
        if said.trim_end_matches('/') != issuer.trim_end_matches('/') {
            return Err(AuthError::malformed(
                WHAT,
                format!("its issuer {said:?} is not {issuer:?}"),
            ));
        }
        if !strings(&doc, "code_challenge_methods_supported")
            .iter()
            .any(|m| m == "S256")
        {
            return Err(AuthError::NoPkce { issuer: said });
        }
        // An endpoint has no fragment (RFC 6749 §3.1): parameters are appended to it.
        let endpoint = |key: &'static str| -> Result<Option<String>, AuthError> {
            match string(&doc, key) {
                Some(url) if url.contains('#') => Err(AuthError::BadUrl { what: key, url }),
                Some(url) => Ok(Some(http_url(key, &url)?.to_string())),
                None => Ok(None),
            }
        };
        let required = |key: &'static str| {
            endpoint(key)?.ok_or_else(|| AuthError::malformed(WHAT, format!("it has no `{key}`")))
        };
        Ok(AuthServer {
            authorization_endpoint: required("authorization_endpoint")?,
            token_endpoint: required("token_endpoint")?,
            registration_endpoint: endpoint("registration_endpoint")?,
            client_id_metadata_documents: doc
                .get("client_id_metadata_document_supported")
                .and_then(Json::as_bool)
                .unwrap_or(false),
            sends_iss: doc
                .get("authorization_response_iss_parameter_supported")
                .and_then(Json::as_bool)
                .unwrap_or(false),
            token_auth_methods: strings(&doc, "token_endpoint_auth_methods_supported"),
            issuer: said,
        })
    }
}
