//! Callback lists: subscribe returns an unsubscribe function; emitting never holds a borrow.
//!
//! `emit` copies the list before calling anyone, so a callback may subscribe, unsubscribe or
//! call back into the SDK without meeting a borrowed `RefCell` (STYLE 9). A callback that throws
//! is reported (see [`crate::error::report`]) and the others still run: one faulty listener must
//! not stop the stream for the rest of the app.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::Function;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::error::report;

/// The callbacks of one subscription point, in subscription order.
#[derive(Debug, Default)]
pub struct Listeners {
    next_id: Cell<u32>,
    list: RefCell<Vec<(u32, Function)>>,
}

impl Listeners {
    /// An empty list, shared so unsubscribe functions can reach it.
    pub fn new() -> Rc<Self> {
        Rc::new(Listeners::default())
    }

    /// Adds `callback`; returns the function that removes it again. Calling that function twice
    /// is harmless, and it holds the list only weakly, so a forgotten unsubscribe function does
    /// not keep a freed object alive.
    pub fn subscribe(self: &Rc<Self>, callback: Function) -> Function {
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        self.list.borrow_mut().push((id, callback));
        let list = Rc::downgrade(self);
        unsubscribe_fn(move || {
            if let Some(list) = list.upgrade() {
                list.remove(id);
            }
        })
    }

    fn remove(&self, id: u32) {
        self.list.borrow_mut().retain(|(i, _)| *i != id);
    }

    /// Whether anyone listens (to skip building values nobody reads).
    pub fn is_empty(&self) -> bool {
        self.list.borrow().is_empty()
    }

    /// Calls every callback with `arg`, outside any borrow.
    pub fn emit(&self, arg: &JsValue) {
        let snapshot: Vec<Function> = self.list.borrow().iter().map(|(_, f)| f.clone()).collect();
        for f in snapshot {
            if let Err(thrown) = f.call1(&JsValue::UNDEFINED, arg) {
                report(&thrown);
            }
        }
    }

    /// Drops every callback (the object they listen to is finished).
    pub fn clear(&self) {
        self.list.borrow_mut().clear();
    }
}

/// A JS function `() => void` running `f`, owned by the JS garbage collector (freed with the
/// function through wasm-bindgen's FinalizationRegistry).
pub fn unsubscribe_fn(f: impl FnMut() + 'static) -> Function {
    Closure::<dyn FnMut()>::new(f)
        .into_js_value()
        .unchecked_into::<Function>()
}

/// A slot for the latest of several callbacks where only one can act (the approval handler).
#[derive(Debug, Default)]
pub struct Slot {
    next_id: Cell<u32>,
    current: RefCell<Option<(u32, Function)>>,
}

impl Slot {
    /// Puts `callback` in the slot, replacing any other; the returned function empties the slot
    /// if it still holds this callback. `on_change` runs after each change with whether the slot
    /// is now filled.
    pub fn set(self: &Rc<Self>, callback: Function, on_change: Rc<dyn Fn(bool)>) -> Function {
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        *self.current.borrow_mut() = Some((id, callback));
        on_change(true);
        let slot: Weak<Slot> = Rc::downgrade(self);
        unsubscribe_fn(move || {
            let Some(slot) = slot.upgrade() else { return };
            let cleared = {
                let mut cur = slot.current.borrow_mut();
                match &*cur {
                    Some((i, _)) if *i == id => {
                        *cur = None;
                        true
                    }
                    _ => false,
                }
            };
            if cleared {
                on_change(false);
            }
        })
    }

    pub fn get(&self) -> Option<Function> {
        self.current.borrow().as_ref().map(|(_, f)| f.clone())
    }
}
