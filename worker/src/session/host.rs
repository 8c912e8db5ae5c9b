//! What the tools of a session run against: its workspace in SQLite, the clock and the
//! runtime's time zones, and `web_fetch`'s checked redirects.

use futures_util::StreamExt;
use wasm_bindgen::JsCast;
use weft_agent::tools::{self, ToolHost, Workspace};
use worker::Fetch;

use crate::store::SqlWorkspace;

/// The tool host of a session: its workspace and the clock.
pub(super) struct Host<'a> {
    pub(super) workspace: SqlWorkspace<'a>,
}

impl ToolHost for Host<'_> {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.workspace
    }
    fn now_ms(&self) -> i64 {
        js_sys::Date::now() as i64
    }

    /// IANA zones through the runtime's `Intl` (the engine itself knows only UTC and fixed
    /// offsets): the local wall time in the zone, with its offset, as RFC 3339.
    fn format_time(&self, now_ms: i64, timezone: &str) -> Result<String, String> {
        if let Ok(s) = tools::format_time_offset(now_ms, timezone) {
            return Ok(s);
        }
        local_time(now_ms, timezone.trim())
            .ok_or_else(|| format!("unknown timezone: {}", timezone.trim()))
    }

    /// The runtime's own URL parser, the one its `fetch` uses: non-ASCII hosts are mapped the
    /// way the fetch would map them (this build's `url` crate maps ASCII only).
    fn parse_url(&self, url: &str) -> Option<String> {
        web_sys::Url::new(url.trim()).ok().map(|u| u.href())
    }
}

/// `YYYY-MM-DDTHH:MM:SS±HH:MM` for `now_ms` in an IANA zone, or `None` if the runtime does not
/// know the zone. Calls go through `Reflect::apply`, which turns a thrown `RangeError` into an
/// `Err` instead of a trap.
fn local_time(now_ms: i64, zone: &str) -> Option<String> {
    use wasm_bindgen::JsValue;
    let date = js_sys::Date::new(&JsValue::from_f64(now_ms as f64));
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"timeZone".into(), &zone.into()).ok()?;
    js_sys::Reflect::set(&options, &"hourCycle".into(), &"h23".into()).ok()?;
    let to_locale = js_sys::Reflect::get(&date, &"toLocaleString".into()).ok()?;
    let args = js_sys::Array::of2(&"sv-SE".into(), &options);
    let text = js_sys::Reflect::apply(to_locale.dyn_ref::<js_sys::Function>()?, &date, &args)
        .ok()?
        .as_string()?;
    // sv-SE writes "2026-11-22 19:00:00".
    let digits: Vec<i64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect();
    let [y, mo, d, h, mi, s] = digits[..] else {
        return None;
    };
    let local_ms = js_sys::Date::utc(y as f64, (mo - 1) as f64) as i64
        + (d - 1) * 86_400_000
        + h * 3_600_000
        + mi * 60_000
        + s * 1000;
    let offset_min = ((local_ms - now_ms.div_euclid(1000) * 1000) as f64 / 60_000.0).round() as i64;
    let sign = if offset_min < 0 { '-' } else { '+' };
    let abs = offset_min.abs();
    Some(format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{sign}{:02}:{:02}",
        abs / 60,
        abs % 60
    ))
}

/// GETs a page for the `web_fetch` tool, following at most `MAX_REDIRECTS` redirects, each
/// checked before it is followed (a public page must not lead the fetch to a private host).
pub(super) async fn web_fetch(url: &str, max_bytes: usize) -> (String, bool) {
    let mut url = url.to_string();
    let mut redirects = 0;
    let mut response = loop {
        let response = match crate::outbound::page(&url) {
            Ok(req) => Fetch::Request(req).send().await,
            Err(e) => Err(e),
        };
        let response = match response {
            Ok(r) => r,
            Err(e) => return (format!("fetch failed: {e}"), true),
        };
        // A `Location` the runtime cannot read is not "no redirect": the page would be taken
        // for the answer when it is only the way to it.
        let location = match response.headers().get("location") {
            Ok(location) => location,
            Err(e) => {
                return (
                    format!("fetch failed: unreadable Location header: {e}"),
                    true,
                )
            }
        };
        match tools::redirect_target(&url, response.status_code(), location.as_deref()) {
            Ok(None) => break response,
            Ok(Some(next)) if redirects < tools::MAX_REDIRECTS => {
                redirects += 1;
                url = next;
            }
            Ok(Some(next)) => {
                let max = tools::MAX_REDIRECTS;
                return (
                    format!("fetch failed: more than {max} redirects (the next to {next})"),
                    true,
                );
            }
            Err(e) => return (format!("fetch failed: {e}"), true),
        }
    };
    let status = response.status_code();
    let content_type = match response.headers().get("content-type") {
        Ok(content_type) => content_type.unwrap_or_default(),
        Err(e) => {
            return (
                format!("fetch failed: unreadable Content-Type header: {e}"),
                true,
            )
        }
    };
    // A body cut by an error is not the page: the model is told it failed, not given a part.
    let mut stream = match response.stream() {
        Ok(stream) => stream,
        Err(e) => {
            return (
                format!("fetch failed: the body could not be read: {e}"),
                true,
            )
        }
    };
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(e) => return (format!("fetch failed: the body broke off: {e}"), true),
        }
        if body.len() > max_bytes {
            break;
        }
    }
    tools::fetch_result(status, &content_type, &body, max_bytes)
}
