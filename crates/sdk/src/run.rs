//! `Run` and `RunEvents`: one run's stream, as callbacks, an async iterator and a promise.
//!
//! A run keeps every event it received, so each `events()` iterator starts at the run's first
//! event however late it is created, and sees every event once, in order. Listeners added with
//! `onEvent`/`onText` see what arrives after they subscribe.
//!
//! Nothing crosses into JavaScript that nobody asked for: an event becomes a JS object only for
//! an `onEvent` listener or an iterator that reaches it (and then once, shared by all of them),
//! a text delta only for an `onText` listener. weft-sdk/ai's transport takes the run as the AI
//! SDK's UI message chunks, written here by the protocol crate's own `aisdk` encoder (the
//! chunks weft's `POST /api/chat` sends), never as events.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

use weft_protocol::dialect::aisdk::{Chunk, Encoder};
use weft_protocol::event::Sequenced;

use crate::client::{Deferred, Shared};
use crate::connection::RunHandle;
use crate::error::{report, Error};
use crate::listeners::Listeners;
use crate::marshal;

/// An event of the run's log: as it arrived, until someone needs it as a JS object.
#[derive(Debug)]
enum Logged {
    Event(Box<Sequenced>),
    Js(JsValue),
}

/// One stream of UI message chunks (weft-sdk/ai's `WeftChatTransport`, one per request of a
/// `useChat`): its own encoder, so two streams of one run never share state.
///
/// Chunks that arrive in one task reach the stream together: the first lot of a task goes out
/// at once, what follows it in the same task (a resume's replay, a burst of frames) waits in
/// `pending` for the end of the task, consecutive deltas of one part joined into one — the AI
/// SDK's `Chat` costs per chunk, and so does React's render. The reply's first delta is never
/// held.
#[derive(Debug)]
struct ChunkStream {
    id: u32,
    callback: Function,
    encoder: Encoder,
    pending: Vec<Chunk>,
    /// A delta went out: the reply has started showing.
    shown: bool,
}

/// What the client and the app's `Run` objects share about one run.
#[derive(Debug)]
pub(crate) struct RunState {
    handle: RunHandle,
    run_id: RefCell<String>,
    /// Strong, so a run keeps its client (and socket) alive while it streams even if the app
    /// kept only the `Run`; the client drops its `RunState` when the run ends, which breaks the
    /// cycle.
    client: Rc<Shared>,
    text: Rc<Listeners>,
    events: Rc<Listeners>,
    log: RefCell<Vec<Logged>>,
    streams: RefCell<Vec<ChunkStream>>,
    next_stream: Cell<u32>,
    /// The end-of-task flush of the streams is queued (a microtask).
    flush_queued: Cell<bool>,
    /// The flush, made once per run with its first stream.
    flush: RefCell<Option<Function>>,
    finished: Cell<bool>,
    result: Promise,
    settle: RefCell<Option<Deferred>>,
    iterators: RefCell<Vec<Weak<Cursor>>>,
}

impl RunState {
    pub(crate) fn new(handle: RunHandle, run_id: String, client: Rc<Shared>) -> Rc<Self> {
        let (result, settle) = Deferred::new();
        // A run whose result nobody awaits (the app reads `events()` only) must not surface as
        // an unhandled rejection when it fails; `await run.result` still sees the rejection.
        let ignore = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
        let _ = result.catch(&ignore);
        // Hand the closure to the JS garbage collector: it lives as long as the promise needs it.
        let _ = ignore.into_js_value();
        Rc::new(RunState {
            handle,
            run_id: RefCell::new(run_id),
            client,
            text: Listeners::new(),
            events: Listeners::new(),
            log: RefCell::new(Vec::new()),
            streams: RefCell::new(Vec::new()),
            next_stream: Cell::new(0),
            flush_queued: Cell::new(false),
            flush: RefCell::new(None),
            finished: Cell::new(false),
            result,
            settle: RefCell::new(Some(settle)),
            iterators: RefCell::new(Vec::new()),
        })
    }

    /// The server named the run (it may pick its own id).
    pub(crate) fn set_run_id(&self, run_id: &str) {
        if *self.run_id.borrow() != run_id {
            *self.run_id.borrow_mut() = run_id.into();
        }
    }

    /// Whether an event must be a JS object as it arrives (an `onEvent` listener waits for it).
    pub(crate) fn wants_objects(&self) -> bool {
        !self.events.is_empty()
    }

    /// An event of the run; `js`, its JS object if the client made one (for its own listeners
    /// or this run's).
    pub(crate) fn event(self: &Rc<Self>, event: Sequenced, js: Option<JsValue>) {
        self.chunks(&event);
        let js = match js {
            Some(js) => js,
            None if self.wants_objects() => match marshal::event(&event) {
                Ok(js) => js,
                Err(e) => return report(&e.into_js()),
            },
            None => {
                self.log.borrow_mut().push(Logged::Event(Box::new(event)));
                return self.wake();
            }
        };
        self.log.borrow_mut().push(Logged::Js(js.clone()));
        self.events.emit(&js);
        self.wake();
    }

    /// Text as it streams, copied out only for an `onText` listener.
    pub(crate) fn text(&self, delta: &str) {
        if !self.text.is_empty() {
            self.text.emit(&JsValue::from_str(delta));
        }
    }

    /// The event's chunks to every stream, at once or at the end of the task.
    fn chunks(self: &Rc<Self>, event: &Sequenced) {
        let mut now = Vec::new();
        {
            let mut streams = self.streams.borrow_mut();
            if streams.is_empty() {
                return;
            }
            let later = self.flush_queued.get();
            for s in streams.iter_mut() {
                let chunks = s.encoder.encode_chunks(event);
                if chunks.is_empty() {
                    continue;
                }
                let first_delta = !s.shown && chunks.iter().any(is_delta);
                for c in chunks {
                    add(&mut s.pending, c);
                }
                if !later || first_delta || s.encoder.is_finished() {
                    now.push(s.take());
                }
            }
            streams.retain(|s| !s.encoder.is_finished());
        }
        self.queue_flush();
        for lot in now {
            lot.deliver();
        }
    }

    /// Queues the end-of-task flush, unless it is queued already.
    fn queue_flush(self: &Rc<Self>) {
        if self.flush_queued.replace(true) {
            return;
        }
        let flush = self
            .flush
            .borrow_mut()
            .get_or_insert_with(|| {
                let weak = Rc::downgrade(self);
                Closure::<dyn FnMut()>::new(move || {
                    if let Some(run) = weak.upgrade() {
                        run.flush_streams();
                    }
                })
                .into_js_value()
                .unchecked_into()
            })
            .clone();
        queue_microtask(&flush);
    }

    /// The end of the task: what waited goes out.
    fn flush_streams(&self) {
        self.flush_queued.set(false);
        let lots: Vec<Lot> = self
            .streams
            .borrow_mut()
            .iter_mut()
            .filter(|s| !s.pending.is_empty())
            .map(ChunkStream::take)
            .collect();
        for lot in lots {
            lot.deliver();
        }
    }

    /// A new stream of UI message chunks: `callback(chunks, done)` from the next event on;
    /// returns the function that ends it.
    fn subscribe_chunks(self: &Rc<Self>, callback: Function) -> Function {
        let id = self.next_stream.get();
        self.next_stream.set(id.wrapping_add(1));
        self.streams.borrow_mut().push(ChunkStream {
            id,
            callback,
            encoder: Encoder::new(),
            pending: Vec::new(),
            shown: false,
        });
        let weak = Rc::downgrade(self);
        Closure::<dyn FnMut(bool) -> JsValue>::new(move |pause: bool| {
            let Some(run) = weak.upgrade() else {
                return js_sys::Array::new().into();
            };
            let stream = {
                let mut streams = run.streams.borrow_mut();
                let at = streams.iter().position(|s| s.id == id);
                at.map(|i| streams.remove(i))
            };
            let mut chunks = Vec::new();
            if let Some(mut s) = stream.filter(|_| pause) {
                chunks = std::mem::take(&mut s.pending);
                chunks.extend(s.encoder.pause_chunks());
            }
            chunk_array(&chunks).unwrap_or_else(|e| {
                report(&e.into_js());
                js_sys::Array::new().into()
            })
        })
        .into_js_value()
        .unchecked_into()
    }

    /// The run ended: settle `result`, end the iterators, drop the listeners.
    pub(crate) fn finish(&self, result: Result<JsValue, Error>) {
        let result_message = result.as_ref().err().map(|e| e.message().to_string());
        self.finished.set(true);
        let settle = self.settle.borrow_mut().take();
        if let Some(d) = settle {
            d.settle(result);
        }
        self.wake();
        self.text.clear();
        self.events.clear();
        // Streams the run's last event did not end (it ended without one: the client closed,
        // the socket dropped on an original server) end here, a failure as an `error` chunk.
        let message = result_message.as_deref();
        let lots: Vec<Lot> = std::mem::take(&mut *self.streams.borrow_mut())
            .into_iter()
            .map(|mut s| {
                if let Some(m) = message {
                    for c in s.encoder.fail(m) {
                        add(&mut s.pending, c);
                    }
                }
                let mut lot = s.take();
                lot.done = true;
                lot
            })
            .collect();
        for lot in lots {
            lot.deliver();
        }
    }

    /// The event at `at` of the log as a JS object, made now if nobody needed it before (and
    /// kept, so it is made once).
    fn object_at(&self, at: usize) -> Option<JsValue> {
        let mut log = self.log.borrow_mut();
        let entry = log.get_mut(at)?;
        if let Logged::Event(event) = entry {
            match marshal::event(event) {
                Ok(js) => *entry = Logged::Js(js),
                // Cannot happen (the JSON is the SDK's own); were it to, the iterator reads
                // `undefined` there and goes on, and the error is reported.
                Err(e) => {
                    drop(log);
                    report(&e.into_js());
                    return Some(JsValue::UNDEFINED);
                }
            }
        }
        match entry {
            Logged::Js(js) => Some(js.clone()),
            Logged::Event(_) => None,
        }
    }

    /// Hands events (or the end) to iterators waiting in `next()`.
    fn wake(&self) {
        let cursors: Vec<Rc<Cursor>> = {
            let mut list = self.iterators.borrow_mut();
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        for c in cursors {
            c.serve(self);
        }
    }
}

impl ChunkStream {
    /// What waits, to go out now.
    fn take(&mut self) -> Lot {
        let chunks = std::mem::take(&mut self.pending);
        self.shown |= chunks.iter().any(is_delta);
        Lot {
            callback: self.callback.clone(),
            chunks,
            done: self.encoder.is_finished(),
        }
    }
}

/// Chunks on their way to a stream's callback, taken out so that no borrow is held while it
/// runs.
struct Lot {
    callback: Function,
    chunks: Vec<Chunk>,
    done: bool,
}

impl Lot {
    /// `callback(chunks, done)`: the chunks cross as one JSON array, parsed once.
    fn deliver(self) {
        if self.chunks.is_empty() && !self.done {
            return;
        }
        let array = match chunk_array(&self.chunks) {
            Ok(a) => a,
            Err(e) => return report(&e.into_js()),
        };
        if let Err(thrown) =
            self.callback
                .call2(&JsValue::UNDEFINED, &array, &JsValue::from_bool(self.done))
        {
            report(&thrown);
        }
    }
}

fn is_delta(c: &Chunk) -> bool {
    matches!(c, Chunk::Delta { .. })
}

/// Adds `c` to the chunks waiting, joined to the last one when both are deltas of one part.
fn add(pending: &mut Vec<Chunk>, c: Chunk) {
    let rest = match pending.last_mut() {
        Some(last) => last.absorb(c),
        None => Some(c),
    };
    if let Some(c) = rest {
        pending.push(c);
    }
}

/// The chunks as a JS array.
fn chunk_array(chunks: &[Chunk]) -> Result<JsValue, Error> {
    let mut json = String::from("[");
    for (i, c) in chunks.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        c.write_json(&mut json);
    }
    json.push(']');
    marshal::parse(&json)
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = queueMicrotask)]
    fn queue_microtask(f: &Function);
}

/// One `events()` iterator's place in the run.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    next: Cell<usize>,
    closed: Cell<bool>,
    waiting: RefCell<VecDeque<Function>>,
}

impl Cursor {
    /// Resolves waiting `next()` calls with what is there.
    fn serve(&self, run: &RunState) {
        loop {
            let Some(resolve) = self.waiting.borrow_mut().pop_front() else {
                return;
            };
            let value = if self.closed.get() {
                None
            } else {
                run.object_at(self.next.get())
            };
            let result = match value {
                Some(ev) => {
                    self.next.set(self.next.get() + 1);
                    marshal::iter_result(&ev, false)
                }
                None if self.closed.get() || run.finished.get() => {
                    marshal::iter_result(&JsValue::UNDEFINED, true)
                }
                None => {
                    self.waiting.borrow_mut().push_front(resolve);
                    return;
                }
            };
            let _ = resolve.call1(&JsValue::UNDEFINED, &result);
        }
    }
}

/// One run: stream it with `onText`/`onEvent` or `for await (const ev of run.events())`,
/// await `result`, stop it with `cancel()`. `free()` is optional: the run is released when
/// garbage-collected.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Run {
    state: Rc<RunState>,
}

impl Run {
    pub(crate) fn new(state: Rc<RunState>) -> Run {
        Run { state }
    }
}

#[wasm_bindgen]
impl Run {
    /// The run's id: chosen by the client (a UUID) unless the server named it otherwise.
    #[wasm_bindgen(getter, js_name = runId)]
    pub fn run_id(&self) -> String {
        self.state.run_id.borrow().clone()
    }

    /// Settles when the run ends: resolves with the reply and usage, rejects with a `WeftError`
    /// whose `code` is the server's (`cancelled` after `cancel()`, …), or `disconnected` /
    /// `closed` when the client stopped following it, or `resume_unsupported` when the socket
    /// dropped mid-run on an original server, which cannot resume it (what arrived stays in
    /// `transcript()`).
    #[wasm_bindgen(getter, unchecked_return_type = "Promise<RunResult>")]
    pub fn result(&self) -> Promise {
        self.state.result.clone()
    }

    /// Whether the run has ended.
    #[wasm_bindgen(getter)]
    pub fn finished(&self) -> bool {
        self.state.finished.get()
    }

    /// Calls `callback` with each piece of assistant text as it streams (every dialect; one
    /// whose server sends whole messages yields them whole). Returns the function that
    /// unsubscribes.
    #[wasm_bindgen(js_name = onText, unchecked_return_type = "() => void")]
    pub fn on_text(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(delta: string) => void")] callback: Function,
    ) -> Function {
        self.state.text.subscribe(callback)
    }

    /// Calls `callback` with each event of this run from now on. Returns the function that
    /// unsubscribes.
    #[wasm_bindgen(js_name = onEvent, unchecked_return_type = "() => void")]
    pub fn on_event(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(event: RunEvent) => void")] callback: Function,
    ) -> Function {
        self.state.events.subscribe(callback)
    }

    /// weft-sdk/ai's way in (not part of the typed API): the run's UI message chunks from the
    /// next event on, `callback(chunks, done)` with each lot, `done` after the last. Returns
    /// `end(pause)`, which ends the stream early and gives what it still had, with the chunks
    /// that end it while the run waits for the page (`pause`), or nothing.
    #[wasm_bindgen(js_name = "__uiChunks", skip_typescript)]
    pub fn ui_chunks(&self, callback: Function) -> Function {
        self.state.subscribe_chunks(callback)
    }

    /// An async iterator over every event of the run from its first, ending after the run's
    /// last event (`run_end`, or `error`; the outcome is also in `result`).
    pub fn events(&self) -> RunEvents {
        let cursor = Rc::new(Cursor::default());
        self.state
            .iterators
            .borrow_mut()
            .push(Rc::downgrade(&cursor));
        RunEvents {
            run: Rc::clone(&self.state),
            cursor,
        }
    }

    /// Asks the server to stop the run; `result` then rejects with code `cancelled`. A run that
    /// already ended (`close()` ends every run the client follows) is left alone. Needs a weft
    /// server once the run has gone out: the original servers have no cancel, so there it
    /// throws `unsupported` and the run goes on.
    pub fn cancel(&self) -> Result<(), JsValue> {
        if self.state.finished.get() {
            return Ok(());
        }
        let client = &self.state.client;
        client.with_core(|c| c.cancel(self.state.handle, js_sys::Date::now()))?;
        client.drive();
        Ok(())
    }
}

/// The iterator `run.events()` returns; `for await` works on it (`[Symbol.asyncIterator]`
/// comes from the package's entry module).
#[wasm_bindgen]
#[derive(Debug)]
pub struct RunEvents {
    run: Rc<RunState>,
    cursor: Rc<Cursor>,
}

#[wasm_bindgen]
impl RunEvents {
    /// The next event, or `{ done: true }` after the run's last one.
    #[wasm_bindgen(unchecked_return_type = "Promise<IteratorResult<RunEvent, undefined>>")]
    pub fn next(&self) -> Promise {
        let (promise, d) = Deferred::new();
        self.cursor.waiting.borrow_mut().push_back(d.resolve_fn());
        self.cursor.serve(&self.run);
        promise
    }

    /// Stops iterating (what `break` in `for await` calls).
    #[wasm_bindgen(
        js_name = "return",
        unchecked_return_type = "Promise<IteratorResult<RunEvent, undefined>>"
    )]
    pub fn stop(&self) -> Promise {
        self.cursor.closed.set(true);
        self.cursor.serve(&self.run);
        Promise::resolve(&marshal::iter_result(&JsValue::UNDEFINED, true))
    }
}
