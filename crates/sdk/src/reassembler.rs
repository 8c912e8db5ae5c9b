//! `Reassembler`: the protocol's reassembler for apps that bring their own transport.
//!
//! Frames in (any dialect, text or bytes), a transcript and events out; duplicates dropped and
//! frames after a gap held, exactly as in weft-protocol — this class only moves values across
//! the boundary and delivers events after the Rust borrow has ended.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Array, Function, Reflect};
use tsify::Ts;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use weft_protocol::event::Sequenced;
use weft_protocol::reassembler::Pushed;
use weft_protocol::text;
use weft_protocol::{Dialect, Transcript};

use crate::error::{Error, ErrorCode};
use crate::listeners::Listeners;
use crate::marshal;
use crate::types::PushResult;

/// Reassembles the frames of one dialect into a transcript, whatever carried them.
///
/// ```js
/// const r = new Reassembler("cueso");
/// const off = r.onEvent((ev) => console.log(ev.type));
/// for (const frame of frames) r.push(frame);
/// r.transcript().messages;
/// ```
#[wasm_bindgen]
#[derive(Debug)]
pub struct Reassembler {
    core: RefCell<weft_protocol::Reassembler>,
    events: Rc<Listeners>,
    /// Applied events not yet delivered to listeners, in order.
    pending: RefCell<VecDeque<Sequenced>>,
    /// A delivery loop is running further up the stack: a push from inside a listener only
    /// queues, so listeners see events in frame order, never nested.
    delivering: Cell<bool>,
    buf: RefCell<marshal::FrameBuf>,
}

#[wasm_bindgen]
impl Reassembler {
    /// A reassembler for frames of `dialect`: in a one-dialect entry (`weft-sdk/loom`, …) its
    /// own when not given; `weft-sdk` and `weft-sdk/with-agui` need it. Throws
    /// `invalid_argument` for an unknown name, `unsupported` for a dialect this build leaves out.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "Dialect")] dialect: Option<String>,
    ) -> Result<Reassembler, JsValue> {
        let dialect = spoken_dialect(dialect.as_deref())?;
        Ok(Reassembler {
            core: RefCell::new(weft_protocol::Reassembler::new(dialect).with_events()),
            events: Listeners::new(),
            pending: RefCell::new(VecDeque::new()),
            delivering: Cell::new(false),
            buf: RefCell::default(),
        })
    }

    /// The dialect it decodes.
    #[wasm_bindgen(getter, unchecked_return_type = "Dialect")]
    pub fn dialect(&self) -> String {
        self.core
            .try_borrow()
            .map(|c| c.dialect().as_str())
            .unwrap_or_default()
            .into()
    }

    /// Pushes one server frame. Returns what it did: events applied, whether it was a
    /// duplicate (dropped), and the gap it revealed (the frame is then held until the missing
    /// frames arrive). Throws a `WeftError` with the protocol's code (`invalid_json`,
    /// `invalid_field`, …) when the frame does not decode; the transcript is then unchanged.
    pub fn push(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | ArrayBuffer")] frame: JsValue,
    ) -> Result<Ts<PushResult>, JsValue> {
        let mut buf = self.buf.try_borrow_mut().map_err(|_| busy())?;
        let bytes = buf.frame(&frame).map_err(|e| e.context("push()"))?;
        let pushed = self.apply(|core| {
            core.push_frame(bytes)
                .map_err(|e| Error::from_protocol(&e, "push()"))
        });
        drop(buf);
        self.deliver();
        Ok(push_result(pushed?)?)
    }

    /// Pushes many text frames in one call, in order. Stops at the first frame that does not
    /// decode and throws naming its index; the frames before it stay applied. The result sums
    /// `applied`, ORs `duplicate` and keeps the last `gap`.
    ///
    /// The frames cross into wasm as one string, joined in JavaScript with U+001E (a character
    /// JSON text can only hold escaped), so a batch costs one copy instead of one per frame.
    #[wasm_bindgen(js_name = pushMany)]
    pub fn push_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] frames: JsValue,
    ) -> Result<Ts<PushResult>, JsValue> {
        let joined = join_frames(&frames);
        if !joined.is_string() {
            let why = match joined.as_f64() {
                Some(i) if i >= 0.0 => text::concat(&[
                    "pushMany(): frame ",
                    &text::uint(i as u64),
                    " is not a string",
                ]),
                _ => text::concat(&[
                    "pushMany() takes an array of strings, not ",
                    &marshal::type_of(&frames),
                ]),
            };
            return Err(Error::argument(why).into_js());
        }
        let mut buf = self.buf.try_borrow_mut().map_err(|_| busy())?;
        let text = buf.text(&joined);
        let count = frames.unchecked_ref::<Array>().length() as usize;
        let total = self.apply(|core| {
            let mut total = Pushed::default();
            let mut push = |i: usize, frame: &[u8]| {
                let p = core.push_frame(frame).map_err(|e| {
                    Error::from_protocol(
                        &e,
                        &text::concat(&[
                            "pushMany(): frame ",
                            &text::uint(i as u64),
                            " of ",
                            &text::uint(count as u64),
                        ]),
                    )
                })?;
                total.applied += p.applied;
                total.duplicate |= p.duplicate;
                if p.gap.is_some() {
                    total.gap = p.gap;
                }
                Ok::<_, Error>(())
            };
            // One pass over the text for the pieces; as many as frames, unless a frame held
            // the separator.
            let pieces: Vec<&[u8]> = text.split(|&b| b == FRAME_SEPARATOR).collect();
            if count > 0 && pieces.len() == count {
                for (i, frame) in pieces.iter().enumerate() {
                    push(i, frame)?;
                }
            } else if count > 0 {
                // A frame holds the separator itself (so it is not valid JSON): one by one,
                // for the error to name the right frame.
                let frames = frames.unchecked_ref::<Array>();
                for i in 0..count {
                    push(
                        i,
                        frames
                            .get(i as u32)
                            .as_string()
                            .unwrap_or_default()
                            .as_bytes(),
                    )?;
                }
            }
            Ok(total)
        });
        drop(buf);
        self.deliver();
        Ok(push_result(total?)?)
    }

    /// Everything reassembled so far: messages, tool calls (arguments parsed once complete,
    /// status through approval and execution) and runs (status, reply, usage). A fresh copy on
    /// every call.
    pub fn transcript(&self) -> Result<Ts<Transcript>, JsValue> {
        let core = self.core.try_borrow().map_err(|_| busy())?;
        Ok(marshal::to_ts(&core.transcript().to_json())?)
    }

    /// The last event id of `runId` applied with nothing missing before it: the
    /// `after_event_id` to resume from (0 when nothing of the run arrived).
    #[wasm_bindgen(js_name = lastEventId)]
    pub fn last_event_id(&self, #[wasm_bindgen(js_name = runId)] run_id: &str) -> f64 {
        // Event ids count frames of one run; they stay far below 2^53.
        self.core
            .try_borrow()
            .map_or(0.0, |c| c.last_event_id(run_id) as f64)
    }

    /// Calls `callback` with every event applied from now on, in order (after the push that
    /// applied it has finished updating the transcript). Returns the function that unsubscribes.
    #[wasm_bindgen(js_name = onEvent, unchecked_return_type = "() => void")]
    pub fn on_event(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(event: RunEvent) => void")] callback: Function,
    ) -> Function {
        self.events.subscribe(callback)
    }
}

impl Reassembler {
    /// Runs `f` on the core and queues the events it applied, releasing the borrow before
    /// anything reaches JavaScript.
    fn apply<T>(
        &self,
        f: impl FnOnce(&mut weft_protocol::Reassembler) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut core = self.core.try_borrow_mut().map_err(|_| busy())?;
        // Events are built only while someone listens: otherwise deltas are applied in place.
        core.set_events(!self.events.is_empty());
        let result = f(&mut core);
        let mut pending = self.pending.borrow_mut();
        while let Some(ev) = core.poll() {
            pending.push_back(ev);
        }
        result
    }

    /// Delivers queued events to listeners, unless a delivery further up the stack will.
    fn deliver(&self) {
        if self.delivering.replace(true) {
            return;
        }
        loop {
            let next = self.pending.borrow_mut().pop_front();
            let Some(ev) = next else { break };
            match marshal::event(&ev) {
                Ok(js) => self.events.emit(&js),
                Err(e) => crate::error::report(&e.into_js()),
            }
        }
        self.delivering.set(false);
    }
}

/// Separates the frames of a `pushMany` batch on their way into wasm (U+001E, one byte in UTF-8).
const FRAME_SEPARATOR: u8 = 0x1e;

// Helpers that run on the JavaScript side of the boundary, where they are one call each.
#[wasm_bindgen(inline_js = r#"
export function pushResult(applied, duplicate) {
  return { applied, duplicate };
}
export function joinFrames(frames) {
  if (!Array.isArray(frames)) return -1;
  for (let i = 0; i < frames.length; i++) {
    if (typeof frames[i] !== "string") return i;
  }
  return frames.join("\x1e");
}
"#)]
extern "C" {
    /// `{ applied, duplicate }` as an object literal: `push` returns one per frame, and
    /// building it from Rust (an object, then a property at a time) was a fifth of a delta's
    /// cost.
    #[wasm_bindgen(js_name = pushResult)]
    fn push_result_object(applied: f64, duplicate: bool) -> js_sys::Object;

    /// The frames joined by [`FRAME_SEPARATOR`]; the index of the first that is not a string,
    /// or -1 when `frames` is not an array.
    #[wasm_bindgen(js_name = joinFrames)]
    fn join_frames(frames: &JsValue) -> JsValue;
}

/// The `PushResult` object. Only a gap, which is rare, is marshalled the general way.
fn push_result(p: Pushed) -> Result<Ts<PushResult>, Error> {
    // Counts of events in one push stay far below 2^53.
    let object = push_result_object(p.applied as f64, p.duplicate);
    if let Some(gap) = &p.gap {
        Reflect::set(
            &object,
            &JsValue::from_str("gap"),
            &marshal::parse(&crate::types::gap_json(gap))?,
        )
        .map_err(|e| Error::new(ErrorCode::Internal, crate::error::describe(&e)))?;
    }
    Ok(Ts::new_unchecked(object.into()))
}

/// Parses a dialect name, with an error listing them all.
pub fn parse_dialect(name: &str) -> Result<Dialect, Error> {
    Dialect::parse(name).ok_or_else(|| {
        Error::argument(text::concat(&[
            "unknown dialect ",
            &marshal::quoted(name),
            ": use \"loom\", \"agentloop\", \"agentchat\", \"cueso\" or \"agui\"",
        ]))
    })
}

/// A dialect to speak: `name`, or — when none is given — the one this build speaks, if it
/// speaks one only (each of the one-dialect packages `weft-sdk/<dialect>`). A dialect this
/// build leaves out is `unsupported`, naming the package that has it.
pub fn spoken_dialect(name: Option<&str>) -> Result<Dialect, Error> {
    let built = || Dialect::ALL.into_iter().filter(|d| d.built());
    let dialect = match name {
        Some(name) => parse_dialect(name)?,
        None => {
            let mut only = built();
            match (only.next(), only.next()) {
                (Some(d), None) => d,
                _ => {
                    return Err(Error::argument(
                        "dialect is required: this build speaks several",
                    ))
                }
            }
        }
    };
    if dialect.built() {
        return Ok(dialect);
    }
    let names: Vec<&str> = built().map(Dialect::as_str).collect();
    Err(Error::new(
        ErrorCode::Unsupported,
        text::concat(&[
            "dialect \"",
            dialect.as_str(),
            "\" is not in this build, which speaks ",
            &names.join(", "),
            ": import weft-sdk/",
            package(dialect),
            " (or weft-sdk/with-agui, which speaks every dialect)",
        ]),
    ))
}

/// The one-dialect package of `dialect` (`weft-sdk/<this>`): its name, but AG-UI's, whose
/// name is taken by `WeftAgent` (`weft-sdk/agui`).
fn package(dialect: Dialect) -> &'static str {
    if dialect == Dialect::Agui {
        "agui-client"
    } else {
        dialect.as_str()
    }
}

/// The core is borrowed: only possible if JavaScript re-entered mid-call, which the SDK never
/// lets happen; an error rather than a panic all the same.
fn busy() -> Error {
    Error::new(
        ErrorCode::Busy,
        "the reassembler is in use by a call further up the stack; call it again after that returns",
    )
}
