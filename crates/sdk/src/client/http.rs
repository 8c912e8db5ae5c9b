//! The shell of an AG-UI agent over HTTP (`connection/http.rs` decides): one `fetch` POST per
//! input, its streamed body handed to the core piece by piece.

use std::rc::{Rc, Weak};

use js_sys::Uint8Array;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use super::{fresh_token, Shared};

impl Shared {
    /// Sends an input to the agent; with a token function, a fresh token first.
    pub(super) fn post(self: &Rc<Self>, url: String, body: String) {
        // An `Abort` before the token arrives cancels this request: it is not sent.
        let generation = self.posting.get();
        let weak = Rc::downgrade(self);
        let send = move |token: Option<String>| {
            let Some(shared) = weak.upgrade() else {
                return;
            };
            if shared.posting.get() != generation {
                return;
            }
            let (chunk, end, fail) = handlers(&weak);
            let abort = post_stream(
                &url,
                &body,
                token.as_deref().unwrap_or(""),
                &chunk,
                &end,
                &fail,
            );
            shared.post_abort.replace(Some(abort));
        };
        match &self.token_source {
            Some(source) => {
                let weak = Rc::downgrade(self);
                fresh_token(source, move |token| match token {
                    Ok(token) => send(Some(token)),
                    Err(e) => {
                        if let Some(shared) = weak.upgrade() {
                            shared.update(|c| c.http_failed(e.message().into()));
                        }
                    }
                })
            }
            None => send(self.token.clone()),
        }
    }

    /// Aborts the request in flight (or the one waiting for its token).
    pub(super) fn abort_post(&self) {
        self.posting.set(self.posting.get() + 1);
        if let Some(abort) = self.post_abort.borrow_mut().take() {
            abort.abort();
        }
    }
}

/// The request's three callbacks into the core. The chunk handler is called many times and
/// goes to JavaScript for good (a core call can abort the request from inside it, so Rust
/// cannot drop it then); the other two are called once and free themselves.
fn handlers(weak: &Weak<Shared>) -> (JsValue, JsValue, JsValue) {
    let w = weak.clone();
    let chunk = Closure::<dyn FnMut(Uint8Array)>::new(move |bytes: Uint8Array| {
        if let Some(shared) = w.upgrade() {
            let bytes = bytes.to_vec();
            shared.update(|c| c.http_chunk(&bytes));
        }
    })
    .into_js_value();
    let w = weak.clone();
    let end = Closure::once_into_js(move || {
        if let Some(shared) = w.upgrade() {
            shared.post_abort.replace(None);
            shared.update(|c| c.http_end());
        }
    });
    let w = weak.clone();
    let fail = Closure::once_into_js(move |message: String| {
        if let Some(shared) = w.upgrade() {
            shared.post_abort.replace(None);
            shared.update(|c| c.http_failed(message));
        }
    });
    (chunk, end, fail)
}

// `fetch` with a streamed body, in a few lines of JavaScript rather than web-sys' bindings. A
// request aborted calls nothing more.
#[wasm_bindgen(inline_js = r#"
export function postStream(url, body, token, chunk, end, fail) {
  const abort = new AbortController();
  const headers = { "content-type": "application/json", accept: "text/event-stream" };
  if (token) headers.authorization = `Bearer ${token}`;
  const why = (e) => (e && e.message) || String(e);
  (async () => {
    let res;
    try {
      res = await fetch(url, { method: "POST", headers, body, signal: abort.signal });
    } catch (e) {
      if (!abort.signal.aborted) fail(`the agent could not be reached (${url}): ${why(e)}`);
      return;
    }
    if (!res.ok || !res.body) {
      const text = await res.text().then(
        (t) => t.slice(0, 300),
        (e) => `its body could not be read: ${why(e)}`,
      );
      if (!abort.signal.aborted) fail(`the agent answered HTTP ${res.status}: ${text}`);
      return;
    }
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (abort.signal.aborted) return;
        if (done) break;
        chunk(value);
      }
    } catch (e) {
      if (!abort.signal.aborted) fail(`the agent's response broke off: ${why(e)}`);
      return;
    }
    end();
  })();
  return abort;
}
"#)]
extern "C" {
    /// POSTs `body` to `url` and streams the response: `chunk(bytes)` for each piece, then
    /// `end()`, or `fail(message)`. Returns the request's `AbortController`.
    #[wasm_bindgen(js_name = postStream)]
    fn post_stream(
        url: &str,
        body: &str,
        token: &str,
        chunk: &JsValue,
        end: &JsValue,
        fail: &JsValue,
    ) -> AbortController;
}
