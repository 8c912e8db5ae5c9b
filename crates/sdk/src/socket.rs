//! One WebSocket and its handlers, released together.
//!
//! Dropping a [`Socket`] detaches its handlers before closing it, so a socket the client has
//! abandoned (replaced after a reconnect, declared dead by the heartbeat) can never feed late
//! frames or a late close into the connection state.
//!
//! A handshake that fails reports one close, whatever the platform does: browsers fire
//! `error` then `close`, but Node 22's WebSocket fires only `error` when the server selected
//! no subprotocol of those offered (what every original server but agentloop's does), which
//! would leave `connect()` waiting forever.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

/// An open or opening WebSocket owned by the client.
#[derive(Debug)]
pub struct Socket {
    ws: WebSocket,
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
    _on_error: Closure<dyn FnMut()>,
}

impl Socket {
    /// Opens `url` offering `protocols`. The handlers run for this socket only; `on_open`
    /// gets the subprotocol the server selected (`""` for none), `on_close` is called once.
    pub fn open(
        url: &str,
        protocols: &[String],
        mut on_open: impl FnMut(String) + 'static,
        mut on_message: impl FnMut(JsValue) + 'static,
        on_close: impl FnMut(u16, String) + 'static,
    ) -> Result<Socket, JsValue> {
        let list: Array = protocols.iter().map(|p| JsValue::from_str(p)).collect();
        let ws = WebSocket::new_with_str_sequence(url, &list)?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let opened = Rc::new(Cell::new(false));
        let closed = Rc::new(Cell::new(false));
        let on_close = Rc::new(RefCell::new(on_close));
        let on_open = {
            let (ws, opened) = (ws.clone(), Rc::clone(&opened));
            Closure::<dyn FnMut()>::new(move || {
                opened.set(true);
                on_open(ws.protocol());
            })
        };
        let on_message =
            Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_message(e.data()));
        let close_once = {
            let (closed, on_close) = (Rc::clone(&closed), Rc::clone(&on_close));
            move |code: u16, reason: String| {
                if closed.replace(true) {
                    return;
                }
                // Called at most once (`closed`), so never while already borrowed.
                if let Ok(mut f) = on_close.try_borrow_mut() {
                    f(code, reason);
                }
            }
        };
        let on_error = {
            let close_once = close_once.clone();
            Closure::<dyn FnMut()>::new(move || {
                // After the socket opened, an error is always followed by its close event,
                // which carries the code; before, Node 22 may send nothing more.
                if !opened.get() {
                    close_once(1006, "the WebSocket handshake failed".into());
                }
            })
        };
        let on_close = {
            let close_once = close_once;
            Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
                close_once(e.code(), e.reason())
            })
        };
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref::<Function>()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref::<Function>()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref::<Function>()));
        ws.set_onerror(Some(on_error.as_ref().unchecked_ref::<Function>()));
        Ok(Socket {
            ws,
            _on_open: on_open,
            _on_message: on_message,
            _on_close: on_close,
            _on_error: on_error,
        })
    }

    /// Sends a text frame. A socket that is closing drops it without a word; its close event
    /// follows and the connection logic resends what must survive. What `send` throws (a
    /// socket still connecting) is returned: the frame did not leave.
    pub fn send(&self, frame: &str) -> Result<(), JsValue> {
        self.ws.send_with_str(frame)
    }

    /// Closes with this code and reason, without telling the handlers.
    pub fn close(self, code: u16, reason: &str) {
        self.detach();
        close(&self.ws, code, reason);
    }

    fn detach(&self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        self.ws.set_onerror(None);
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.detach();
        if matches!(
            self.ws.ready_state(),
            WebSocket::CONNECTING | WebSocket::OPEN
        ) {
            close(&self.ws, 1000, "client gone");
        }
    }
}

/// Closes `ws` with `code` and `reason`, or with neither if the browser refuses them (a code
/// outside 1000 and 3000–4999, a reason over 123 bytes): a socket meant to close never stays
/// open. `close()` without arguments throws for nothing; were it ever to, the exception is
/// reported.
fn close(ws: &WebSocket, code: u16, reason: &str) {
    if ws.close_with_code_and_reason(code, reason).is_err() {
        if let Err(thrown) = ws.close() {
            crate::error::report(&thrown);
        }
    }
}
