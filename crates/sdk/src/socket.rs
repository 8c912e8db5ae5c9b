//! One WebSocket and its handlers, released together.
//!
//! Dropping a [`Socket`] detaches its handlers before closing it, so a socket the client has
//! abandoned (replaced after a reconnect, declared dead by the heartbeat) can never feed late
//! frames or a late close into the connection state.

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
}

impl Socket {
    /// Opens `url` offering `protocols`. The handlers run for this socket only.
    pub fn open(
        url: &str,
        protocols: &[String],
        on_open: impl FnMut() + 'static,
        mut on_message: impl FnMut(JsValue) + 'static,
        mut on_close: impl FnMut(u16, String) + 'static,
    ) -> Result<Socket, JsValue> {
        let list: Array = protocols.iter().map(|p| JsValue::from_str(p)).collect();
        let ws = WebSocket::new_with_str_sequence(url, &list)?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let on_open = Closure::<dyn FnMut()>::new(on_open);
        let on_message =
            Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_message(e.data()));
        let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
            on_close(e.code(), e.reason())
        });
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref::<Function>()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref::<Function>()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref::<Function>()));
        Ok(Socket {
            ws,
            _on_open: on_open,
            _on_message: on_message,
            _on_close: on_close,
        })
    }

    /// Sends a text frame. A socket that is closing drops it; its close event follows and the
    /// connection logic resends what must survive.
    pub fn send(&self, frame: &str) {
        let _ = self.ws.send_with_str(frame);
    }

    /// Closes with this code and reason, without telling the handlers.
    pub fn close(self, code: u16, reason: &str) {
        self.detach();
        let _ = self.ws.close_with_code_and_reason(code, reason);
    }

    fn detach(&self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.detach();
        if matches!(
            self.ws.ready_state(),
            WebSocket::CONNECTING | WebSocket::OPEN
        ) {
            let _ = self.ws.close_with_code_and_reason(1000, "client gone");
        }
    }
}
