//! Reading typed fields out of a JSON object, with errors that name the frame and the field.
//!
//! The wire types are decoded by hand through [`Fields`] rather than by `#[derive(Deserialize)]`:
//! serde's "invalid type" errors do not say which field was wrong, and the wire rules here
//! (`null` means absent, unknown fields are kept by extensions, numbers must be whole) are
//! easier to state once than to re-express through attributes on every struct.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::json::{Json, Object, RawJson};
use crate::text::{concat, uint};
use crate::Error;

/// A value that can be read from one JSON field.
pub(crate) trait FromJson: Sized {
    /// What the field must hold, for error messages ("a string", …).
    const EXPECTED: &'static str;
    /// Converts, or returns the problem (without the field name, which the caller adds).
    fn from_json(v: &Json<'_>) -> Result<Self, String>;
}

fn mismatch<T: FromJson>(v: &Json<'_>) -> String {
    concat(&["must be ", T::EXPECTED, ", found ", v.type_name()])
}

impl FromJson for String {
    const EXPECTED: &'static str = "a string";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        v.as_str()
            .map(ToString::to_string)
            .ok_or_else(|| mismatch::<Self>(v))
    }
}

impl FromJson for bool {
    const EXPECTED: &'static str = "a boolean";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        v.as_bool().ok_or_else(|| mismatch::<Self>(v))
    }
}

/// The largest integer a JavaScript number holds exactly (2^53).
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

impl FromJson for u64 {
    const EXPECTED: &'static str = "a non-negative whole number";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        if let Some(n) = v.as_u64() {
            return Ok(n);
        }
        // JavaScript clients send whole numbers as floats now and then (`3.0`).
        match v.as_f64() {
            Some(f) if (0.0..=MAX_SAFE).contains(&f) && (f as u64) as f64 == f => Ok(f as u64),
            _ => Err(mismatch::<Self>(v)),
        }
    }
}

impl FromJson for i64 {
    const EXPECTED: &'static str = "a whole number";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        if let Some(n) = v.as_i64() {
            return Ok(n);
        }
        match v.as_f64() {
            Some(f) if (-MAX_SAFE..=MAX_SAFE).contains(&f) && (f as i64) as f64 == f => {
                Ok(f as i64)
            }
            _ => Err(mismatch::<Self>(v)),
        }
    }
}

impl FromJson for f64 {
    const EXPECTED: &'static str = "a number";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        v.as_f64().ok_or_else(|| mismatch::<Self>(v))
    }
}

impl FromJson for RawJson {
    const EXPECTED: &'static str = "any JSON value";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        Ok(RawJson::from_tree(v))
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    const EXPECTED: &'static str = "an array";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        let items = v.as_array().ok_or_else(|| mismatch::<Self>(v))?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(T::from_json(item).map_err(|p| item_problem(i, &p))?);
        }
        Ok(out)
    }
}

/// The problem of item `i` of an array; out of line, as [`Fields::objects`]'s.
#[inline(never)]
fn item_problem(i: usize, problem: &str) -> String {
    concat(&["[", &uint(i as u64), "] ", problem])
}

/// Reads the fields of one frame or object, naming `kind` in every error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields<'a> {
    kind: &'a str,
    map: &'a Object<'a>,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(kind: &'a str, map: &'a Object<'a>) -> Self {
        Fields { kind, map }
    }

    pub(crate) fn map(&self) -> &'a Object<'a> {
        self.map
    }

    /// A field that must be present and non-null.
    pub(crate) fn req<T: FromJson>(&self, name: &str) -> Result<T, Error> {
        match self.map.get(name) {
            None | Some(Json::Null) => Err(Error::field(
                self.kind,
                name,
                concat(&["is required (", T::EXPECTED, ")"]),
            )),
            Some(v) => T::from_json(v).map_err(|p| self.err(name, p)),
        }
    }

    /// A field that may be absent or `null` (loom §6: both mean "use the default").
    pub(crate) fn opt<T: FromJson>(&self, name: &str) -> Result<Option<T>, Error> {
        match self.map.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => T::from_json(v).map(Some).map_err(|p| self.err(name, p)),
        }
    }

    /// A nested object, read with its own [`Fields`] (errors name the path `outer.inner`).
    pub(crate) fn object<T>(
        &self,
        name: &str,
        read: impl FnOnce(Fields<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        match self.map.get(name) {
            Some(Json::Object(m)) => read(Fields::new(self.kind, m)).map_err(|e| nest(e, name)),
            None | Some(Json::Null) => {
                Err(Error::field(self.kind, name, "is required (an object)"))
            }
            Some(v) => Err(self.err(name, concat(&["must be an object, found ", v.type_name()]))),
        }
    }

    /// Like [`Fields::object`], for an optional object.
    pub(crate) fn opt_object<T>(
        &self,
        name: &str,
        read: impl FnOnce(Fields<'_>) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self.map.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(_) => self.object(name, read).map(Some),
        }
    }

    /// An array of objects, each read with its own [`Fields`].
    pub(crate) fn objects<T>(
        &self,
        name: &str,
        mut read: impl FnMut(Fields<'_>) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let items = match self.map.get(name) {
            Some(Json::Array(items)) => items,
            None | Some(Json::Null) => {
                return Err(Error::field(self.kind, name, "is required (an array)"))
            }
            Some(v) => {
                return Err(self.err(name, concat(&["must be an array, found ", v.type_name()])))
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let read = match item {
                Json::Object(m) => read(Fields::new(self.kind, m)),
                _ => return Err(self.item_failed(name, i, item, None)),
            };
            match read {
                Ok(value) => out.push(value),
                Err(e) => return Err(self.item_failed(name, i, item, Some(e))),
            }
        }
        Ok(out)
    }

    /// Item `i` of array `name` was no object (`e` is `None`) or failed to read (`e`): the
    /// error, its path naming the item. Out of line: built only on failure, and once for every
    /// element type.
    #[inline(never)]
    fn item_failed(&self, name: &str, i: usize, item: &Json<'_>, e: Option<Error>) -> Error {
        let path = concat(&[name, "[", &uint(i as u64), "]"]);
        match e {
            Some(e) => nest(e, &path),
            None => self.err(
                &path,
                concat(&["must be an object, found ", item.type_name()]),
            ),
        }
    }

    /// The raw value of a field, if present and non-null.
    pub(crate) fn raw(&self, name: &str) -> Option<&'a Json<'a>> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub(crate) fn err(&self, name: &str, problem: impl Into<String>) -> Error {
        Error::field(self.kind, name, problem)
    }
}

/// Prefixes the field path of a nested error with its parent's name.
fn nest(e: Error, parent: &str) -> Error {
    match e {
        Error::Field {
            kind,
            field,
            problem,
        } => Error::Field {
            kind,
            field: concat(&[parent, ".", &field]),
            problem,
        },
        other => other,
    }
}

/// [`Fields`] that read on past a bad field: each read returns a default instead of failing,
/// the first problem is kept, and [`Lenient::finish`] returns it. A decoder that reads a dozen
/// fields then has one error exit instead of one per field (each dropping what was read before
/// it): in the SDK's wasm that halved `Event::from_json` (19.9 → 9.3 KB of code) and took a
/// quarter off the dialects' `decode_server` (22.7 → 17.1 KB). A read beside them that still
/// fails at once (`?`, for values with no default) can report its problem before an earlier
/// lenient read's; either names a real fault of the frame.
pub(crate) struct Lenient<'a> {
    f: Fields<'a>,
    first: core::cell::RefCell<Option<Error>>,
}

impl<'a> Lenient<'a> {
    pub(crate) fn new(f: Fields<'a>) -> Self {
        Lenient {
            f,
            first: core::cell::RefCell::new(None),
        }
    }

    pub(crate) fn keep<T: Default>(&self, read: Result<T, Error>) -> T {
        read.unwrap_or_else(|e| {
            let mut first = self.first.borrow_mut();
            if first.is_none() {
                *first = Some(e);
            }
            T::default()
        })
    }

    pub(crate) fn req<T: FromJson + Default>(&self, name: &str) -> T {
        self.keep(self.f.req(name))
    }

    pub(crate) fn opt<T: FromJson>(&self, name: &str) -> Option<T> {
        self.keep(self.f.opt(name))
    }

    pub(crate) fn opt_object<T>(
        &self,
        name: &str,
        read: impl FnOnce(Fields<'_>) -> Result<T, Error>,
    ) -> Option<T> {
        self.keep(self.f.opt_object(name, read))
    }

    pub(crate) fn objects<T>(
        &self,
        name: &str,
        read: impl FnMut(Fields<'_>) -> Result<T, Error>,
    ) -> Vec<T> {
        self.keep(self.f.objects(name, read))
    }

    /// `value`, unless a read failed: then the first failure.
    pub(crate) fn finish<T>(self, value: T) -> Result<T, Error> {
        match self.first.into_inner() {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}
