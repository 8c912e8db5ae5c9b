//! The HTTP and crypto shell of the MCP authorization flow (`weft_agent::mcp::auth` has the
//! steps): sends what a step asks for, makes the PKCE verifier and the `state` from the
//! runtime's random numbers, and writes the flow's records as the session's SQLite keeps them
//! (session/oauth.rs decides when).
//!
//! Records are JSON written with the protocol crate's `ObjectWriter` and read with its tree:
//! serde derives would cost the upload more than these three shapes are worth.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use weft_agent::mcp::auth::{self, Client, Discovered, Discovery, Step, Tokens};
use weft_protocol::json::{self, Json, ObjectWriter};
use worker::{Fetch, Headers};

/// How long an authorization URL stays good: past it, its callback is refused and the next
/// run asks again.
pub const FLOW_TTL_MS: i64 = 10 * 60 * 1000;

/// The largest metadata, registration or token answer read.
const MAX_BODY: usize = 64 * 1024;

/// Sends one request of the flow; its status and body.
pub async fn send(request: &auth::Request) -> Result<(u16, String), String> {
    let headers = Headers::new();
    for (name, value) in &request.headers {
        headers.set(name, value).map_err(|e| e.to_string())?;
    }
    let req = crate::outbound::request(
        &request.url,
        request.method,
        Some(&headers),
        request.body.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let mut response = Fetch::Request(req)
        .send()
        .await
        .map_err(|e| format!("{} could not be reached: {e}", request.url))?;
    let body = response.text().await.map_err(|e| e.to_string())?;
    if body.len() > MAX_BODY {
        return Err(format!(
            "{} answered more than {MAX_BODY} bytes",
            request.url
        ));
    }
    Ok((response.status_code(), body))
}

/// Runs discovery (`weft_agent::mcp::auth::Discovery`) to its end over `fetch`.
pub async fn discover(mut discovery: Discovery) -> Result<Box<Discovered>, String> {
    let mut answer: Option<(u16, String)> = None;
    loop {
        match discovery.next(answer.as_ref().map(|(s, b)| (*s, b.as_str()))) {
            Step::Send(request) => answer = Some(send(&request).await?),
            Step::Done(done) => return done.map_err(|e| e.to_string()),
        }
    }
}

fn describe(e: wasm_bindgen::JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| "Web Crypto failed".into())
}

fn crypto() -> Result<web_sys::Crypto, String> {
    Ok(js_sys::Reflect::get(&js_sys::global(), &"crypto".into())
        .map_err(describe)?
        .unchecked_into())
}

/// `n` random bytes from the runtime's CSPRNG, as base64url: a PKCE verifier or a `state`.
pub fn random(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    crypto()?
        .get_random_values_with_u8_array(&mut bytes)
        .map_err(describe)?;
    Ok(auth::base64url(&bytes))
}

/// The PKCE S256 challenge of `verifier` (SHA-256 by Web Crypto).
pub async fn challenge(verifier: &str) -> Result<String, String> {
    let digest = crypto()?
        .subtle()
        .digest_with_str_and_u8_array("SHA-256", verifier.as_bytes())
        .map_err(describe)?;
    let digest = JsFuture::from(digest).await.map_err(describe)?;
    Ok(auth::pkce_challenge(
        &js_sys::Uint8Array::new(&digest).to_vec(),
    ))
}

/// A client as stored (keyed by issuer and redirect URI).
pub fn client_json(client: &Client) -> String {
    let mut w = ObjectWriter::new();
    w.str("client_id", &client.client_id)
        .opt_str("client_secret", client.client_secret.as_deref())
        .bool("secret_in_body", client.secret_in_body);
    w.finish()
}

fn str_of(doc: &Json<'_>, key: &str) -> Option<String> {
    doc.get(key).and_then(Json::as_str).map(String::from)
}

pub fn client_from(doc: &Json<'_>) -> Option<Client> {
    Some(Client {
        client_id: str_of(doc, "client_id")?,
        client_secret: str_of(doc, "client_secret"),
        secret_in_body: doc
            .get("secret_in_body")
            .and_then(Json::as_bool)
            .unwrap_or(false),
    })
}

/// An authorization under way, from its URL to its callback.
pub struct Flow {
    /// Who asked (the socket's client: a per-user token's `sub`, else its address): the
    /// grant the callback makes is theirs.
    pub owner: String,
    pub issuer: String,
    pub resource: String,
    pub redirect_uri: String,
    pub verifier: String,
    pub client: Client,
    /// The authorization server's metadata, as fetched.
    pub metadata: String,
}

/// A grant: the tokens one user holds for one server, and what refreshing them takes.
pub struct Grant {
    pub owner: String,
    pub issuer: String,
    pub resource: String,
    pub client: Client,
    pub metadata: String,
    pub tokens: Tokens,
}

// The verifier and the tokens are credentials: only whose and for what are shown.
impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("owner", &self.owner)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("owner", &self.owner)
            .field("issuer", &self.issuer)
            .field("tokens", &self.tokens)
            .finish_non_exhaustive()
    }
}

impl Flow {
    pub fn to_json(&self) -> String {
        let mut w = ObjectWriter::new();
        w.str("owner", &self.owner)
            .str("issuer", &self.issuer)
            .str("resource", &self.resource)
            .str("redirect_uri", &self.redirect_uri)
            .str("verifier", &self.verifier)
            .json("client", &client_json(&self.client))
            .str("metadata", &self.metadata);
        w.finish()
    }

    pub fn parse(text: &str) -> Option<Flow> {
        let doc = json::parse(text).ok()?;
        Some(Flow {
            owner: str_of(&doc, "owner")?,
            issuer: str_of(&doc, "issuer")?,
            resource: str_of(&doc, "resource")?,
            redirect_uri: str_of(&doc, "redirect_uri")?,
            verifier: str_of(&doc, "verifier")?,
            client: client_from(doc.get("client")?)?,
            metadata: str_of(&doc, "metadata")?,
        })
    }
}

impl Grant {
    pub fn to_json(&self) -> String {
        let mut w = ObjectWriter::new();
        w.str("owner", &self.owner)
            .str("issuer", &self.issuer)
            .str("resource", &self.resource)
            .json("client", &client_json(&self.client))
            .str("metadata", &self.metadata)
            .str("access_token", &self.tokens.access_token)
            .opt_str("refresh_token", self.tokens.refresh_token.as_deref())
            .opt_uint("expires_at_ms", self.tokens.expires_at_ms);
        w.finish()
    }

    pub fn parse(text: &str) -> Option<Grant> {
        let doc = json::parse(text).ok()?;
        Some(Grant {
            owner: str_of(&doc, "owner")?,
            issuer: str_of(&doc, "issuer")?,
            resource: str_of(&doc, "resource")?,
            client: client_from(doc.get("client")?)?,
            metadata: str_of(&doc, "metadata")?,
            tokens: Tokens {
                access_token: str_of(&doc, "access_token")?,
                refresh_token: str_of(&doc, "refresh_token"),
                expires_at_ms: doc.get("expires_at_ms").and_then(Json::as_u64),
            },
        })
    }
}
