//! How the shell carries out the core's outputs: the drive loop, sockets and the token function,
//! the one timer, and the app's approval callback and tool handlers.

use std::rc::Rc;

use js_sys::{Function, Promise};
use tsify::Ts;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;
use weft_protocol::event::ToolSpec;
use weft_protocol::json::RawJson;
use weft_protocol::text;

use super::{clear_timeout, fresh_token, now, random, set_timeout, Deferred, Shared};
use crate::connection::{with_token, Connection, Output, Reply, RunHandle};
use crate::error::{describe, report, Error, ErrorCode};
use crate::marshal;
use crate::run::{Run, RunState};
use crate::socket::Socket;
use crate::types::{ApprovalAnswer, ToolDefinition};

impl Shared {
    /// Runs `f` on the core; an error goes back to the caller. The core is never borrowed
    /// while JavaScript runs, so the borrow cannot fail; if it ever did, the call is refused.
    pub(crate) fn with_core<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut core = self.core.try_borrow_mut().map_err(|_| reentered())?;
        f(&mut core)
    }

    pub(super) fn request(
        self: &Rc<Self>,
        f: impl FnOnce(&mut Connection, f64) -> Result<String, Error>,
    ) -> Promise {
        let sent = self.with_core(|c| f(c, now()));
        self.awaiting(sent)
    }

    /// The promise of a request the core has queued (by its frame id) or refused: the half of
    /// [`Shared::request`] that does not depend on the request, out of line so each method
    /// carries only its own call into the core.
    #[inline(never)]
    fn awaiting(self: &Rc<Self>, sent: Result<String, Error>) -> Promise {
        let (promise, d) = Deferred::new();
        match sent {
            Ok(id) => {
                self.requests.borrow_mut().insert(id, d);
            }
            Err(e) => d.reject(e),
        }
        self.drive();
        promise
    }

    pub(super) fn declare_tools(self: &Rc<Self>) {
        let specs: Vec<ToolSpec> = self
            .tools
            .borrow()
            .values()
            .map(|(_, spec, _)| spec.clone())
            .collect();
        self.update(|c| c.set_tools(specs));
    }

    /// A `Run` on the core's run `handle` (its state made on first use), with the outputs the
    /// call that made it queued carried out.
    pub(super) fn run_object(self: &Rc<Self>, handle: RunHandle, run_id: String) -> Run {
        let existing = self.runs.borrow().get(&handle).cloned();
        let state = existing.unwrap_or_else(|| {
            let state = RunState::new(handle, run_id, Rc::clone(self));
            self.runs.borrow_mut().insert(handle, Rc::clone(&state));
            state
        });
        self.drive();
        Run::new(state)
    }

    /// Carries out the core's outputs, in order, with nothing borrowed while JavaScript runs.
    /// A call from inside a callback finds the loop running and leaves its outputs to it.
    pub(crate) fn drive(self: &Rc<Self>) {
        if self.draining.replace(true) {
            return;
        }
        loop {
            let next = self.core.try_borrow_mut().ok().and_then(|mut c| c.poll());
            let Some(out) = next else { break };
            self.carry_out(out);
        }
        self.draining.set(false);
        self.reschedule();
    }

    fn carry_out(self: &Rc<Self>, out: Output) {
        match out {
            Output::Open { url, protocols } => self.open(&url, &protocols),
            Output::Post { url, body } => self.post(url, body),
            Output::Abort => self.abort_post(),
            Output::Close { code, reason } => {
                self.opening.set(self.opening.get() + 1);
                let socket = self.socket.borrow_mut().take();
                if let Some(s) = socket {
                    s.close(code, &reason);
                }
            }
            Output::Send(frame) => {
                let refused = match self.socket.borrow().as_ref() {
                    Some(s) => s.send(&frame).err(),
                    None => None,
                };
                // A frame the socket would not take is lost on it: the socket is dropped as if
                // it had failed, and the connection reconnects and resumes (a run whose frame
                // this was is sent again when the server answers that it does not know it).
                if let Some(thrown) = refused {
                    drop(self.socket.borrow_mut().take());
                    let reason =
                        text::concat(&["the socket refused a frame: ", &describe(&thrown)]);
                    self.closed(1006, &reason);
                }
            }
            Output::Status(status) => {
                if !self.status.is_empty() {
                    if let Ok(js) = marshal::parse(&status.to_json()) {
                        self.status.emit(&js);
                    }
                }
            }
            Output::Connected => {
                let waiters = std::mem::take(&mut *self.connect_waiters.borrow_mut());
                for d in waiters {
                    d.resolve(&JsValue::UNDEFINED);
                }
            }
            Output::ConnectFailed(e) => {
                let waiters = std::mem::take(&mut *self.connect_waiters.borrow_mut());
                for d in waiters {
                    d.reject(e.clone());
                }
            }
            Output::Event { run, event } => {
                let state = run.and_then(|h| self.runs.borrow().get(&h).cloned());
                // Made a JS object only for a listener waiting for one, once for all of them.
                let wanted =
                    !self.events.is_empty() || state.as_ref().is_some_and(|s| s.wants_objects());
                let js = if wanted {
                    match marshal::event(&event) {
                        Ok(js) => Some(js),
                        Err(e) => return self.error(e),
                    }
                } else {
                    None
                };
                if let Some(js) = &js {
                    self.events.emit(js);
                }
                if let Some(state) = state {
                    if let Some(run_id) = &event.envelope.run_id {
                        state.set_run_id(run_id);
                    }
                    state.event(event, js);
                }
            }
            Output::Text { run, delta } => {
                let state = self.runs.borrow().get(&run).cloned();
                if let Some(state) = state {
                    state.text(&delta);
                }
            }
            Output::RunDone { run, result } => {
                let state = self.runs.borrow_mut().remove(&run);
                if let Some(state) = state {
                    state.finish(result.and_then(|r| marshal::parse(&r.to_json())));
                }
            }
            Output::Reply { id, result, .. } => {
                let waiter = self.requests.borrow_mut().remove(&id);
                if let Some(d) = waiter {
                    d.settle(result.and_then(|r| match r {
                        Reply::Pong(ms) => Ok(JsValue::from_f64(ms)),
                        Reply::Tools(tools) => marshal::parse(&ToolDefinition::list_json(&tools)),
                        Reply::Tool(tool) => marshal::raw(&tool),
                        Reply::Messages(page) => marshal::parse(&page.to_json()),
                        Reply::Context(info) => marshal::parse(&info.to_json()),
                        Reply::Compacted(result) => marshal::parse(&result.to_json()),
                    }));
                }
            }
            Output::Approval(request) => self.ask_approval(request),
            Output::ApprovalWithdrawn { call_id } => {
                let asked = self.asked.borrow_mut().remove(&call_id);
                if let Some(controller) = asked {
                    controller.abort();
                }
            }
            Output::ClientTool {
                call_id,
                name,
                arguments,
            } => self.run_tool(call_id, name, arguments),
            Output::Authorization(asked) => {
                if !self.authorizations.is_empty() {
                    match marshal::parse(&asked.to_json()) {
                        Ok(js) => self.authorizations.emit(&js),
                        Err(e) => self.error(e),
                    }
                }
            }
            Output::Error(e) => self.error(e),
        }
    }

    /// Opens the socket the core asked for, with a fresh token first when the app gave a token
    /// function.
    fn open(self: &Rc<Self>, url: &str, protocols: &[String]) {
        let generation = self.opening.get() + 1;
        self.opening.set(generation);
        let Some(source) = self.token_source.clone() else {
            self.open_socket(url, protocols);
            return;
        };
        let this = Rc::downgrade(self);
        let (url, protocols) = (url.to_string(), protocols.to_vec());
        fresh_token(&source, move |token| {
            let Some(s) = this.upgrade() else { return };
            if s.opening.get() != generation {
                return;
            }
            match token.and_then(|t| with_token(&url, &protocols, &t)) {
                Ok((url, protocols)) => s.open_socket(&url, &protocols),
                Err(e) => s.closed(1006, e.message()),
            }
        });
    }

    fn open_socket(self: &Rc<Self>, url: &str, protocols: &[String]) {
        let (a, b, c) = (
            Rc::downgrade(self),
            Rc::downgrade(self),
            Rc::downgrade(self),
        );
        let socket = Socket::open(
            url,
            protocols,
            move |selected: String| {
                if let Some(s) = a.upgrade() {
                    s.update(|c| c.opened_as(now(), &selected));
                }
            },
            move |data| {
                let Some(s) = b.upgrade() else { return };
                let mut buf = s.frame_buf.take();
                match buf.frame(&data) {
                    Ok(bytes) => s.update(|c| c.frame(bytes, now())),
                    Err(e) => s.error(e.context("the server sent a frame of an unexpected kind")),
                }
                s.frame_buf.replace(buf);
            },
            move |code, reason| {
                if let Some(s) = c.upgrade() {
                    s.closed(code, &reason);
                }
            },
        );
        match socket {
            // The previous socket, if any, is detached and closed as it drops.
            Ok(socket) => drop(self.socket.replace(Some(socket))),
            Err(thrown) => {
                // The constructor throws synchronously for a URL or protocol it rejects.
                let reason = describe(&thrown);
                self.closed(1006, &reason);
            }
        }
    }

    /// The socket closed, failed to open, or refused a frame: one path for all of them (and one
    /// copy of the core's `closed` in the wasm).
    #[inline(never)]
    fn closed(self: &Rc<Self>, code: u16, reason: &str) {
        self.update(|c| c.closed(code, reason, now(), random()));
    }

    /// Something happened (the socket, the clock, an app call): tell the core, then act.
    /// The core is never borrowed while JavaScript runs, so it is free here; were it not, the
    /// lost update is surfaced as an error, never dropped unseen.
    pub(super) fn update(self: &Rc<Self>, f: impl FnOnce(&mut Connection)) {
        if let Err(e) = self.with_core(|c| {
            f(c);
            Ok(())
        }) {
            self.error(e);
        }
        self.drive();
    }

    pub(super) fn on_timer(self: &Rc<Self>) {
        self.timer.id.replace(None);
        self.timer.at.set(None);
        self.update(|c| c.tick(now(), random()));
    }

    /// Sets the timer for the core's next deadline, unless it is already set for it.
    fn reschedule(&self) {
        let deadline = self.core.try_borrow().ok().and_then(|c| c.deadline());
        if deadline == self.timer.at.get() {
            return;
        }
        if let Some(id) = self.timer.id.replace(None) {
            clear_timeout(&id);
        }
        self.timer.at.set(deadline);
        if let (Some(at), Some(cb)) = (deadline, self.timer.callback.borrow().as_ref()) {
            let id = set_timeout(cb.as_ref().unchecked_ref(), (at - now()).max(0.0));
            self.timer.id.replace(Some(id));
        }
    }

    fn error(&self, e: Error) {
        let js = e.into_js();
        if self.errors.is_empty() {
            report(&js);
        } else {
            self.errors.emit(&js);
        }
    }

    fn ask_approval(self: &Rc<Self>, request: crate::types::ApprovalRequest) {
        let Some(callback) = self.approver.get() else {
            // Nobody here answers: another socket of the session may.
            return;
        };
        let arg = match marshal::parse(&request.to_json()) {
            Ok(v) => v,
            Err(e) => return self.error(e),
        };
        if let Ok(controller) = AbortController::new() {
            let _ = js_sys::Reflect::set(&arg, &"signal".into(), &controller.signal());
            if let Some(c) = &request.call_id {
                self.asked.borrow_mut().insert(c.clone(), controller);
            }
        }
        let weak = Rc::downgrade(self);
        let call_id = request.call_id;
        call_later(&callback, &[&arg, &JsValue::UNDEFINED], move |outcome| {
            let Some(s) = weak.upgrade() else { return };
            if let Some(c) = &call_id {
                s.asked.borrow_mut().remove(c);
            }
            let answer = outcome
                .map_err(|thrown| Error::from_callback("the onApproval callback", &thrown))
                .and_then(|v| {
                    marshal::from_ts(&Ts::<ApprovalAnswer>::new_unchecked(v), "ApprovalAnswer")
                        .map_err(|e| e.context("onApproval"))
                });
            let answer = answer.unwrap_or_else(|e| {
                let deny = ApprovalAnswer {
                    review: "no-continue".into(),
                    message: Some(text::concat(&[
                        "the app's approval handler failed: ",
                        e.message(),
                    ])),
                };
                s.error(e);
                deny
            });
            let sent = s.with_core(|c| c.answer(call_id, answer, now()));
            if let Err(e) = sent {
                s.error(e);
            }
            s.drive();
        });
    }

    fn run_tool(self: &Rc<Self>, call_id: String, name: String, arguments: RawJson) {
        let handler = self.tools.borrow().get(&name).map(|(_, _, f)| f.clone());
        let arg = marshal::raw(&arguments);
        let weak = Rc::downgrade(self);
        let id = JsValue::from_str(&call_id);
        let finish = move |outcome: Result<JsValue, String>| {
            let Some(s) = weak.upgrade() else { return };
            let (result, is_error) = match outcome.and_then(|v| result_text(&v)) {
                Ok(text) => (text, false),
                Err(message) => (message, true),
            };
            if let Err(e) = s.with_core(|c| c.tool_result(call_id, result, is_error)) {
                s.error(e);
            }
            s.drive();
        };
        match (handler, arg) {
            (Some(h), Ok(arg)) => call_later(&h, &[&arg, &id], move |outcome| {
                finish(outcome.map_err(|thrown| describe(&thrown)))
            }),
            (None, _) => later(move || {
                finish(Err(text::concat(&[
                    "the tool ",
                    &name,
                    " is no longer registered on this client",
                ])))
            }),
            (_, Err(e)) => later(move || finish(Err(e.message().into()))),
        }
    }
}

/// The core was borrowed when a call came in: kept out of line, as every call into the core
/// checks for it.
#[inline(never)]
fn reentered() -> Error {
    Error::new(
        ErrorCode::Busy,
        "the client was called re-entrantly; call it again",
    )
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(id) = self.timer.id.get_mut().take() {
            clear_timeout(&id);
        }
    }
}

// Continuations run from JavaScript promise callbacks rather than as Rust futures: the SDK's
// three waits (token function, approval callback, tool handler) do not need an executor, and
// wasm-bindgen-futures' (its task queue, wakers and `JsFuture`) was most of their code.
#[wasm_bindgen(inline_js = r#"
export function callLater(f, args, then) {
  Promise.resolve()
    .then(() => f.apply(undefined, args))
    .then((value) => then(true, value), (thrown) => then(false, thrown));
}
export function later(then) {
  Promise.resolve().then(() => then());
}
"#)]
extern "C" {
    /// Calls `f(...args)` on a later microtask; `then(true, value)` with what it returns or
    /// resolves to, `then(false, thrown)` with what it throws or rejects with.
    #[wasm_bindgen(js_name = callLater)]
    fn call_later_js(f: &Function, args: &js_sys::Array, then: &JsValue);
    /// Calls `then()` on a later microtask.
    #[wasm_bindgen(js_name = later)]
    fn later_js(then: &JsValue);
}

/// Calls an app callback on a later microtask (never inside the SDK call that asked for it)
/// and hands `then` its value, awaited if it is a promise, or what it threw.
pub(super) fn call_later(
    f: &Function,
    args: &[&JsValue],
    then: impl FnOnce(Result<JsValue, JsValue>) + 'static,
) {
    let list = js_sys::Array::new();
    for arg in args {
        list.push(arg);
    }
    let then = Closure::once_into_js(move |ok: bool, value: JsValue| {
        then(if ok { Ok(value) } else { Err(value) })
    });
    call_later_js(f, &list, &then);
}

/// Runs `f` on a later microtask, as [`call_later`] runs its continuation.
fn later(f: impl FnOnce() + 'static) {
    later_js(&Closure::once_into_js(f));
}

/// A tool handler's value as the result text the model reads: strings as they are, anything
/// else as JSON.
fn result_text(v: &JsValue) -> Result<String, String> {
    if let Some(s) = v.as_string() {
        return Ok(s);
    }
    if v.is_undefined() {
        return Ok(String::new());
    }
    js_sys::JSON::stringify(v).map(String::from).map_err(|e| {
        text::concat(&[
            "the tool's result is not JSON-serializable: ",
            &describe(&e),
        ])
    })
}

/// A random UUID v4: `crypto.randomUUID()` where the platform has it (secure contexts, Node),
/// else built from `Math.random` (run ids need uniqueness, not secrecy).
pub(super) fn random_uuid() -> String {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).ok();
    if let Some(crypto) = crypto.as_ref().filter(|c| c.is_object()) {
        let make = js_sys::Reflect::get(crypto, &"randomUUID".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(id) = make
            .and_then(|f| f.call0(crypto).ok())
            .and_then(|v| v.as_string())
        {
            return id;
        }
    }
    let mut bytes = [0u8; 16];
    for b in &mut bytes {
        *b = (random() * 256.0) as u8;
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        // The 8-4-4-4-12 grouping: a hyphen before bytes 4, 6, 8 and 10.
        if matches!(i, 4 | 6 | 8 | 10) {
            id.push('-');
        }
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    id
}
