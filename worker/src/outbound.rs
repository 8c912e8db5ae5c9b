//! The requests this Worker sends: to the model provider, to a page for the `web_fetch` tool,
//! to a remote agent, and to a session's Durable Object.
//!
//! They are built on `web_sys` directly. `worker::RequestInit` converts its Cloudflare `cf`
//! options (image resizing, cache rules, …) into every request it builds: 11 KB of code, 5 KB of
//! the gzipped upload (measured 2026-11-22), for options this server never sets.

use wasm_bindgen::JsValue;
use weft_agent::provider::HttpRequest;
use worker::{Headers, Request, Result};

/// A request to `url`; `headers` and `body` as given (none: no headers, no body).
pub fn request(
    url: &str,
    method: &str,
    headers: Option<&Headers>,
    body: Option<&str>,
) -> Result<Request> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(headers) = headers {
        init.set_headers(&headers.0);
    }
    if let Some(body) = body {
        init.set_body(&JsValue::from_str(body));
    }
    build(url, method, &init)
}

/// A `POST` of a run's input to a remote agent (agents.rs), with redirects off: the agent is
/// reached at the host the operator named, never one its answer points to.
pub fn remote(url: &str, headers: &Headers, body: &str) -> Result<Request> {
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers.0);
    init.set_body(&JsValue::from_str(body));
    init.set_redirect(web_sys::RequestRedirect::Manual);
    build(url, "POST", &init)
}

/// A `GET` of a page for `web_fetch`, with redirects off: the caller checks every target
/// before following it (`tools::redirect_target`).
pub fn page(url: &str) -> Result<Request> {
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_redirect(web_sys::RequestRedirect::Manual);
    build(url, "GET", &init)
}

fn build(url: &str, method: &str, init: &web_sys::RequestInit) -> Result<Request> {
    web_sys::Request::new_with_str_and_init(url, init)
        .map(Request::from)
        .map_err(|e| {
            worker::Error::JsError(e.as_string().unwrap_or_else(|| {
                format!("invalid URL or options for a {method} request to {url}")
            }))
        })
}

/// The provider call a [`HttpRequest`] describes (method, URL, headers with the credential,
/// JSON body).
pub fn provider(http: &HttpRequest) -> Result<Request> {
    let headers = Headers::new();
    for (name, value) in &http.headers {
        headers.set(name, value)?;
    }
    request(&http.url, &http.method, Some(&headers), Some(&http.body))
}
