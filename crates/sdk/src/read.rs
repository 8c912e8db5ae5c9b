//! Options the app passes in, read field by field from the JavaScript object.
//!
//! A handful of small option objects (`ClientOptions`, `RunOptions`, …) come in from the app.
//! Reading them through serde (serde-wasm-bindgen and a derived `Deserialize` per type) took
//! 26 KB of the wasm, 10.5 KB gzipped (measured 2026-11-22, when these readers replaced it);
//! they say the same things — a missing field, a wrong type, an out-of-range number. Their
//! TypeScript declarations still come from tsify, from the same structs.

use js_sys::{Array, Reflect};
use wasm_bindgen::JsValue;
use weft_protocol::json::RawJson;
use weft_protocol::text;

use crate::marshal::{number, type_of};
use crate::types::{
    ApprovalAnswer, ClientOptions, McpServerOptions, Reconnect, ReconnectOptions, RunOptions,
    ToolDefinition, UserMessagesOptions,
};

/// A type the app passes in; `Err` says what is wrong, to follow "invalid <Type>: ".
pub trait FromJs: Sized {
    /// Reads it from the app's value.
    fn read(value: &JsValue) -> Result<Self, String>;
}

/// The fields of one options object.
struct Fields<'a>(&'a JsValue);

impl<'a> Fields<'a> {
    /// `value` when it is an object (not an array, not `null`).
    fn of(value: &'a JsValue) -> Result<Self, String> {
        if value.is_object() && !Array::is_array(value) {
            Ok(Fields(value))
        } else {
            Err(text::concat(&[
                "expected an object (got ",
                &type_of(value),
                ")",
            ]))
        }
    }

    /// Field `name`; `None` when absent, `undefined` or `null` (all mean "not given").
    fn get(&self, name: &str) -> Option<JsValue> {
        Reflect::get(self.0, &JsValue::from_str(name))
            .ok()
            .filter(|v| !v.is_undefined() && !v.is_null())
    }

    fn wrong(name: &str, want: &str, got: &JsValue) -> String {
        text::concat(&["`", name, "` must be ", want, " (got ", &type_of(got), ")"])
    }

    /// Field `name` converted by `as_t`, which answers `None` for a value that is not `want`.
    fn typed<T>(
        &self,
        name: &str,
        want: &str,
        as_t: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<Option<T>, String> {
        self.get(name)
            .map(|v| as_t(&v).ok_or_else(|| Self::wrong(name, want, &v)))
            .transpose()
    }

    fn string(&self, name: &str) -> Result<Option<String>, String> {
        self.typed(name, "a string", JsValue::as_string)
    }

    fn required_string(&self, name: &str) -> Result<String, String> {
        self.string(name)?
            .ok_or_else(|| text::concat(&["missing field `", name, "`"]))
    }

    fn number(&self, name: &str) -> Result<Option<f64>, String> {
        self.typed(name, "a number", JsValue::as_f64)
    }

    /// A whole number from 0 to `max`.
    fn count(&self, name: &str, max: f64) -> Result<Option<f64>, String> {
        match self.number(name)? {
            Some(n) if !(n.fract() == 0.0 && (0.0..=max).contains(&n)) => Err(text::concat(&[
                "`",
                name,
                "` must be a whole number from 0 to ",
                &number(max),
                ", not ",
                &number(n),
            ])),
            n => Ok(n),
        }
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, String> {
        self.typed(name, "a boolean", JsValue::as_bool)
    }

    /// Any JSON value (a schema): what `JSON.stringify` makes of it (`toJSON` called,
    /// functions and `undefined` dropped, a cycle refused), kept as its canonical text.
    fn json(&self, name: &str) -> Result<Option<RawJson>, String> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        js_sys::JSON::stringify(&v)
            .ok()
            .and_then(|t| t.as_string())
            .and_then(|text| RawJson::parse(&text))
            .map(Some)
            .ok_or_else(|| text::concat(&["`", name, "` must be a JSON value"]))
    }
}

/// Numbers up to 2^53 are exact in JavaScript.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl FromJs for ClientOptions {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        let reconnect = match f.get("reconnect") {
            None => None,
            Some(v) => Some(match v.as_bool() {
                Some(on) => Reconnect::Enabled(on),
                None if v.is_object() && !Array::is_array(&v) => {
                    Reconnect::Backoff(ReconnectOptions::read(&v)?)
                }
                None => {
                    return Err(Fields::wrong(
                        "reconnect",
                        "a boolean or { initialDelayMs, maxDelayMs, maxAttempts }",
                        &v,
                    ))
                }
            }),
        };
        Ok(ClientOptions {
            url: f.required_string("url")?,
            dialect: f.string("dialect")?,
            session_id: f.string("sessionId")?,
            // A token function is taken by the client itself (it is called on each connect).
            token: match f.get("token") {
                Some(v) if v.is_function() => None,
                _ => f.string("token")?,
            },
            server: f.string("server")?,
            reconnect,
            heartbeat_interval_ms: f.number("heartbeatIntervalMs")?,
            heartbeat_timeout_ms: f.number("heartbeatTimeoutMs")?,
            request_timeout_ms: f.number("requestTimeoutMs")?,
        })
    }
}

impl FromJs for ReconnectOptions {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        Ok(ReconnectOptions {
            initial_delay_ms: f.number("initialDelayMs")?,
            max_delay_ms: f.number("maxDelayMs")?,
            max_attempts: f
                .count("maxAttempts", f64::from(u32::MAX))?
                .map(|n| n as u32),
        })
    }
}

impl FromJs for RunOptions {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        Ok(RunOptions {
            message: f.required_string("message")?,
            agent: f.string("agent")?,
            thread_id: f.string("threadId")?,
            working_folder: f.string("workingFolder")?,
            got_adaptive: f.bool("gotAdaptive")?,
            verbose: f.bool("verbose")?,
        })
    }
}

impl FromJs for ToolDefinition {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        Ok(ToolDefinition {
            name: f.required_string("name")?,
            description: f.string("description")?,
            input_schema: f.json("inputSchema")?,
            read_only: f.bool("readOnly")?.unwrap_or(false),
        })
    }
}

impl FromJs for McpServerOptions {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        let headers = match f.get("headers") {
            None => None,
            Some(h) => {
                let h = Fields::of(&h).map_err(|why| text::concat(&["`headers`: ", &why]))?;
                let mut headers = std::collections::BTreeMap::new();
                for entry in js_sys::Object::entries(&js_sys::Object::from(h.0.clone())) {
                    let pair = Array::from(&entry);
                    let name = pair.get(0).as_string().unwrap_or_default();
                    let Some(value) = pair.get(1).as_string() else {
                        return Err(text::concat(&[
                            "`headers.",
                            &name,
                            "` must be a string (got ",
                            &type_of(&pair.get(1)),
                            ")",
                        ]));
                    };
                    headers.insert(name, value);
                }
                Some(headers)
            }
        };
        Ok(McpServerOptions {
            name: f.required_string("name")?,
            url: f.required_string("url")?,
            headers,
        })
    }
}

impl FromJs for UserMessagesOptions {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        Ok(UserMessagesOptions {
            before: f.count("before", EXACT)?.map(|n| n as u64),
            limit: f.count("limit", EXACT)?.map(|n| n as u64),
        })
    }
}

impl FromJs for ApprovalAnswer {
    fn read(value: &JsValue) -> Result<Self, String> {
        let f = Fields::of(value)?;
        Ok(ApprovalAnswer {
            review: f.required_string("review")?,
            message: f.string("message")?,
        })
    }
}
