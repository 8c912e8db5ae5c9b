//! JSON Patch (RFC 6902) over the crate's own tree: how AG-UI's `STATE_DELTA` changes a run's
//! state. A patch applies whole or not at all — a failing `test`, a path that names nothing or
//! an operation without its fields leaves the document as it was and says which operation and
//! why. Paths are JSON Pointers (RFC 6901): `/a/0/b`, `~1` for `/` and `~0` for `~` in a key,
//! `-` for the end of an array (where `add` appends).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Json, Number, Object};
use crate::text::{concat, uint};
use crate::Error;

/// Applies `patch` (an array of operations) to `doc`: every operation, in order, or none.
pub fn apply<'a>(doc: &mut Json<'a>, patch: &Json<'a>) -> Result<(), Error> {
    let Json::Array(ops) = patch else {
        return Err(Error::Patch {
            op: None,
            reason: concat(&["a patch is an array of operations, not ", patch.type_name()]),
        });
    };
    let mut work = doc.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_op(&mut work, op).map_err(|reason| Error::Patch {
            op: Some(i),
            reason,
        })?;
    }
    *doc = work;
    Ok(())
}

fn apply_op<'a>(doc: &mut Json<'a>, op: &Json<'a>) -> Result<(), String> {
    let Json::Object(op) = op else {
        return Err(concat(&["an operation is an object, not ", op.type_name()]));
    };
    let name = string_field(op, "op")?;
    let path = pointer(string_field(op, "path")?)?;
    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| concat(&["`", name, "` needs a `value`"]))
    };
    let from = || string_field(op, "from").and_then(pointer);
    match name {
        "add" => add(doc, &path, value()?),
        "remove" => remove(doc, &path).map(drop),
        "replace" => {
            let v = value()?;
            *get_mut(doc, &path)? = v;
            Ok(())
        }
        "move" => {
            let from = from()?;
            if path.len() > from.len() && path[..from.len()] == from[..] {
                return Err(String::from("`move` cannot move a value into itself"));
            }
            let v = remove(doc, &from)?;
            add(doc, &path, v)
        }
        "copy" => {
            let v = get(doc, &from()?)?.clone();
            add(doc, &path, v)
        }
        "test" => {
            if equal(get(doc, &path)?, &value()?) {
                Ok(())
            } else {
                Err(concat(&[
                    "`test` failed: the value at `",
                    &join(&path),
                    "` differs",
                ]))
            }
        }
        other => Err(concat(&["unknown operation `", other, "`"])),
    }
}

fn string_field<'o>(op: &'o Object<'_>, name: &str) -> Result<&'o str, String> {
    match op.get(name) {
        Some(Json::String(s)) => Ok(s),
        Some(other) => Err(concat(&[
            "`",
            name,
            "` is a string, not ",
            other.type_name(),
        ])),
        None => Err(concat(&["the operation has no `", name, "`"])),
    }
}

/// The reference tokens of a JSON Pointer, unescaped.
fn pointer(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(concat(&["path `", path, "` does not start with `/`"]));
    };
    rest.split('/')
        .map(|token| {
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => {
                        return Err(concat(&[
                            "path `",
                            path,
                            "` has a `~` not followed by 0 or 1",
                        ]))
                    }
                }
            }
            Ok(out)
        })
        .collect()
}

/// The pointer again, for messages.
fn join(tokens: &[String]) -> String {
    let mut out = String::new();
    for t in tokens {
        out.push('/');
        out.push_str(&t.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// An array index as RFC 6901 spells it: digits, no leading zero, below `len` (`len` itself
/// too where `end` allows it, and `-` for it).
fn index(token: &str, len: usize, end: bool) -> Result<usize, String> {
    if end && token == "-" {
        return Ok(len);
    }
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    let i = match token.parse::<usize>() {
        Ok(i) if digits && (token == "0" || !token.starts_with('0')) => i,
        _ => return Err(concat(&["`", token, "` is not an array index"])),
    };
    if i < len || (end && i == len) {
        Ok(i)
    } else {
        Err(concat(&[
            "index ",
            token,
            " is past the end of an array of ",
            &uint(len as u64),
        ]))
    }
}

fn missing(tokens: &[String]) -> String {
    concat(&["nothing at `", &join(tokens), "`"])
}

fn get<'d, 'a>(doc: &'d Json<'a>, tokens: &[String]) -> Result<&'d Json<'a>, String> {
    let mut at = doc;
    for (n, t) in tokens.iter().enumerate() {
        at = match at {
            Json::Object(o) => o.get(t).ok_or_else(|| missing(&tokens[..=n]))?,
            Json::Array(items) => &items[index(t, items.len(), false)?],
            _ => return Err(missing(&tokens[..=n])),
        };
    }
    Ok(at)
}

fn get_mut<'d, 'a>(doc: &'d mut Json<'a>, tokens: &[String]) -> Result<&'d mut Json<'a>, String> {
    let mut at = doc;
    for (n, t) in tokens.iter().enumerate() {
        at = match at {
            // The last member of a repeated key is the one every reader sees.
            Json::Object(o) => match o.0.iter_mut().rev().find(|(k, _)| k == t) {
                Some((_, v)) => v,
                None => return Err(missing(&tokens[..=n])),
            },
            Json::Array(items) => {
                let i = index(t, items.len(), false)?;
                &mut items[i]
            }
            _ => return Err(missing(&tokens[..=n])),
        };
    }
    Ok(at)
}

fn add<'a>(doc: &mut Json<'a>, path: &[String], value: Json<'a>) -> Result<(), String> {
    let Some((last, parent)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    match get_mut(doc, parent)? {
        Json::Object(o) => {
            o.0.retain(|(k, _)| k != last);
            o.0.push((Cow::Owned(last.clone()), value));
        }
        Json::Array(items) => {
            let i = index(last, items.len(), true)?;
            items.insert(i, value);
        }
        _ => {
            return Err(concat(&[
                "`",
                &join(parent),
                "` is neither an object nor an array",
            ]))
        }
    }
    Ok(())
}

fn remove<'a>(doc: &mut Json<'a>, path: &[String]) -> Result<Json<'a>, String> {
    let Some((last, parent)) = path.split_last() else {
        return Err(String::from("the whole document cannot be removed"));
    };
    match get_mut(doc, parent)? {
        Json::Object(o) => {
            let found = o.0.iter().rposition(|(k, _)| k == last);
            let Some(i) = found else {
                return Err(missing(path));
            };
            let (_, v) = o.0.remove(i);
            o.0.retain(|(k, _)| k != last);
            Ok(v)
        }
        Json::Array(items) => {
            let i = index(last, items.len(), false)?;
            Ok(items.remove(i))
        }
        _ => Err(missing(path)),
    }
}

/// JSON equality as `test` means it: numbers by value (`1` equals `1.0`), objects by their
/// members whatever the order.
fn equal(a: &Json<'_>, b: &Json<'_>) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => number_eq(*x, *y),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            let (x, y) = (members(x), members(y));
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| k == k2 && equal(v, v2)))
        }
        _ => a == b,
    }
}

fn number_eq(x: Number, y: Number) -> bool {
    match (x, y) {
        (Number::PosInt(a), Number::PosInt(b)) => a == b,
        (Number::NegInt(a), Number::NegInt(b)) => a == b,
        (Number::PosInt(_), Number::NegInt(_)) | (Number::NegInt(_), Number::PosInt(_)) => false,
        _ => as_f64(x) == as_f64(y),
    }
}

fn as_f64(n: Number) -> f64 {
    match n {
        Number::PosInt(u) => u as f64,
        Number::NegInt(i) => i as f64,
        Number::Float(f) => f,
    }
}

/// An object's members as readers see them: each key once, with its last value.
fn members<'o, 'a>(o: &'o Object<'a>) -> Vec<(&'o str, &'o Json<'a>)> {
    let mut out: Vec<(&str, &Json<'a>)> = Vec::new();
    for (k, v) in o.iter() {
        match out.iter_mut().find(|(seen, _)| *seen == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

impl super::RawJson {
    /// This value with `patch` (a JSON Patch document) applied; see [`apply`].
    pub fn patched(&self, patch: &super::RawJson) -> Result<super::RawJson, Error> {
        let ops = patch.tree();
        let mut doc = self.tree();
        apply(&mut doc, &ops)?;
        Ok(super::RawJson::from_tree(&doc))
    }
}
