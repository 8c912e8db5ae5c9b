//! `Run` and `RunEvents`: one run's stream, as callbacks, an async iterator and a promise.
//!
//! A run keeps every event it received, so each `events()` iterator starts at the run's first
//! event however late it is created, and sees every event once, in order. Listeners added with
//! `onEvent`/`onText` see what arrives after they subscribe.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

use crate::client::{Deferred, Shared};
use crate::connection::RunHandle;
use crate::error::Error;
use crate::listeners::Listeners;
use crate::marshal;

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
    log: RefCell<Vec<JsValue>>,
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

    pub(crate) fn event(&self, event: JsValue) {
        self.log.borrow_mut().push(event.clone());
        self.events.emit(&event);
        self.wake();
    }

    pub(crate) fn text(&self, delta: &str) {
        self.text.emit(&JsValue::from_str(delta));
    }

    /// The run ended: settle `result`, end the iterators, drop the listeners.
    pub(crate) fn finish(&self, result: Result<JsValue, Error>) {
        self.finished.set(true);
        let settle = self.settle.borrow_mut().take();
        if let Some(d) = settle {
            d.settle(result);
        }
        self.wake();
        self.text.clear();
        self.events.clear();
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
            let value = {
                let log = run.log.borrow();
                if self.closed.get() {
                    None
                } else {
                    log.get(self.next.get()).cloned()
                }
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
