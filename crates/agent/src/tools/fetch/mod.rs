//! `web_fetch`: which URLs may be fetched, and what the model sees of the answer. The host does
//! the fetching.

use std::net::{Ipv4Addr, Ipv6Addr};

use url::{Host, ParseError, Url};

mod html;

use html::html_to_text;

/// The most body bytes the model sees: about 25k tokens of text, a large page without
/// drowning the context.
pub const FETCH_MAX_BYTES: usize = 100_000;

/// How long the host waits for a fetch, headers and body together, in milliseconds.
pub const FETCH_TIMEOUT_MS: u64 = 15_000;

/// The longest URL accepted, in bytes: longer ones are almost always a model pasting content
/// into the query string.
pub const MAX_URL_LEN: usize = 2048;

/// Checks that `url` may be fetched: an absolute `http://` or `https://` URL, without
/// credentials (`user:pass@`), without whitespace, control characters or backslashes, whose
/// host is a public name or address.
///
/// Refused hosts: `localhost`, single-label names and the private-use suffixes `.localhost`,
/// `.local`, `.localdomain`, `.internal`, `.home.arpa`; IP addresses that are loopback,
/// private, link-local, shared (100.64/10), unspecified, multicast, broadcast, documentation or
/// reserved, and IPv6 addresses that carry one of those as IPv4 (mapped, compatible,
/// translated, NAT64, 6to4) or are Teredo.
///
/// The URL is read once, by a WHATWG URL parser (the `url` crate) — the standard the runtime's
/// `fetch` follows — and the host it yields is what is judged: `127.1`, `0x7f000001`,
/// `%31%32%37.0.0.1` and `127。0。0。1` are all `127.0.0.1` by then. Non-ASCII hosts are
/// mapped (IDNA) by that parse, before the check; a build whose IDNA back end is ASCII-only
/// refuses them (the `web_fetch` tool first hands such URLs to the host's own parser,
/// [`ToolHost::parse_url`](super::ToolHost::parse_url)). A checker that read URLs its own way would disagree with the fetch on the
/// next odd spelling (issue 23).
///
/// Names are not resolved here, so a public name pointing at a private address passes: the
/// host must not be able to reach private networks (a Cloudflare Worker cannot), or must check
/// resolved addresses itself. A host that follows redirects must check every target
/// ([`redirect_target`]).
pub fn check_url(url: &str) -> Result<(), String> {
    checked_url(url).map(|_| ())
}

/// [`check_url`], and on success the URL as the parser serializes it: what the host must
/// fetch, so that the fetch reads the very URL that was judged (the runtime's parser reads a
/// serialized URL back unchanged).
pub fn checked_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.is_empty() {
        return Err("the url is empty".to_string());
    }
    if url.len() > MAX_URL_LEN {
        return Err(format!(
            "the url is {} bytes long; the limit is {MAX_URL_LEN}",
            url.len()
        ));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the url contains whitespace or control characters".to_string());
    }
    if url.contains('\\') {
        return Err("the url contains a backslash".to_string());
    }
    let parsed = Url::parse(url).map_err(|e| match e {
        ParseError::RelativeUrlWithoutBase => {
            format!("not an absolute url: {url} (it must start with http:// or https://)")
        }
        ParseError::IdnaError if !url.is_ascii() => format!(
            "invalid url {url}: its host cannot be mapped to ASCII here; \
             write it in its ASCII (punycode, xn--) form"
        ),
        e => format!("invalid url {url}: {e}"),
    })?;
    let scheme = parsed.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "only http:// and https:// urls can be fetched, not {scheme}://"
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("urls with credentials (user:password@host) are not allowed".to_string());
    }
    let Some(host) = parsed.host() else {
        return Err(format!("the url has no host: {url}"));
    };
    let why = match host {
        Host::Domain(name) => name_refusal(name),
        Host::Ipv4(ip) => ipv4_refusal(ip),
        Host::Ipv6(ip) => ipv6_refusal(ip),
    };
    if let Some(why) = why {
        return Err(format!(
            "refusing to fetch {url}: its host {host} is {why}; only public hosts can be fetched"
        ));
    }
    Ok(parsed.into())
}

/// Why the domain `name` (as the parser left it: ASCII, lower case) must not be fetched, if it
/// must not.
fn name_refusal(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches('.');
    if name.is_empty() {
        Some("empty")
    } else if name == "localhost"
        || [
            ".localhost",
            ".local",
            ".localdomain",
            ".internal",
            ".home.arpa",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
    {
        Some("a local name")
    } else if !name.contains('.') {
        // `intranet`, `router`: completed by the resolver's search domains, if anything.
        Some("a single-label (local) name")
    } else {
        None
    }
}

/// Why `ip` must not be fetched, if it must not.
fn ipv4_refusal(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 0 {
        Some("an unspecified address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) {
        Some("a reserved address")
    } else if ip.is_documentation() {
        Some("a documentation address")
    } else if a >= 224 {
        Some("a multicast, broadcast or reserved address")
    } else {
        None
    }
}

/// Why `ip` must not be fetched, if it must not.
fn ipv6_refusal(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        Some("a link-local address")
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("a documentation address")
    } else if s[0] == 0x2001 && s[1] == 0 {
        // Teredo: the client's IPv4 address is in there, obfuscated.
        Some("a Teredo (tunnelled IPv4) address")
    } else if s[..4] == [0x100, 0, 0, 0] {
        Some("a discard-only address")
    } else if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) {
        // IPv4-compatible (::a.b.c.d) and IPv4-mapped (::ffff:a.b.c.d).
        ipv4_refusal(embedded(s[6], s[7]))
    } else if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        // IPv4-translated (::ffff:0:a.b.c.d).
        ipv4_refusal(embedded(s[6], s[7]))
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64, well-known prefix: the last 32 bits are an IPv4 address.
        ipv4_refusal(embedded(s[6], s[7]))
    } else if s[..3] == [0x64, 0xff9b, 1] {
        Some("a local-use NAT64 address")
    } else if s[0] == 0x2002 {
        // 6to4: bits 16..48 are an IPv4 address.
        ipv4_refusal(embedded(s[1], s[2]))
    } else {
        None
    }
}

/// Fuzzing entry point (a `cargo fuzz` target calls it; see STYLE.md): [`checked_url`] on
/// `input` must agree with the `url` crate's own parse of it — what it lets through is that
/// parse's serialization, reads back to itself, and names no loopback, private, link-local or
/// unspecified address and not `localhost`; what that parse reads as such a host is refused.
/// Panics only if the check and the parser disagree — never on the input.
pub fn fuzz_check_url(input: &str) {
    let parsed = Url::parse(input.trim()).ok();
    let local = parsed.as_ref().is_some_and(|u| match u.host() {
        Some(Host::Ipv4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || ip
                    .to_ipv4()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_private())
        }
        Some(Host::Domain(name)) => name.trim_end_matches('.') == "localhost",
        None => false,
    });
    if let Ok(fetch) = checked_url(input) {
        let Some(parsed) = parsed else {
            panic!("{input:?} passed the check but the url crate cannot parse it");
        };
        assert_eq!(parsed.as_str(), fetch, "{input:?}: checked a different url");
        assert!(!local, "{input:?}: a local host passed the check");
        assert_eq!(
            checked_url(&fetch).as_deref(),
            Ok(fetch.as_str()),
            "{input:?}: the serialized url reads differently"
        );
    }
}

/// The most redirects one `web_fetch` follows: enough for `http` → `https` → `www.` → a
/// login-free mirror, few enough that a redirect loop ends fast.
pub const MAX_REDIRECTS: usize = 5;

/// Where a fetch of `url` that was answered `status` goes next: `Ok(None)` when the answer is
/// not a redirect (it is the page), `Ok(Some(target))` when it redirects to a URL that may be
/// fetched, `Err` when it redirects somewhere [`check_url`] refuses, or gives no `Location`.
///
/// The host fetches with redirects off and calls this on every answer, so a public page cannot
/// send the fetch on to a private address (`Location: http://127.0.0.1/admin`): each target is
/// checked as the first URL was. `location` may be relative; it is resolved against `url` by
/// the same WHATWG parser, and the target returned is its serialization, the URL to fetch next.
pub fn redirect_target(
    url: &str,
    status: u16,
    location: Option<&str>,
) -> Result<Option<String>, String> {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let location = location
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| format!("{url} answered HTTP {status} (a redirect) without a Location"))?;
    let target = Url::parse(url)
        .and_then(|base| base.join(location))
        .map_err(|e| format!("{url} redirects to {location}, which is refused: {e}"))?;
    let target = checked_url(target.as_str())
        .map_err(|e| format!("{url} redirects to {target}, which is refused: {e}"))?;
    Ok(Some(target))
}

/// What the model sees of a fetched answer: a status line, then the body as text — HTML
/// reduced to its text, other text as is, binary content only described.
///
/// `body` is what the host read, at most `max_bytes + 1` bytes (see
/// [`ToolRun::Fetch`](super::ToolRun::Fetch)): anything past `max_bytes` is cut and the cut is
/// marked. The flag is the tool result's `is_error`: set for any status outside 200–299, whose
/// body is still shown, since an error page usually says what went wrong.
///
/// ```text
/// HTTP 200 OK (text/html; charset=utf-8)
///
/// Example Domain
/// This domain is for use in illustrative examples in documents.
/// ```
pub fn fetch_result(
    status: u16,
    content_type: &str,
    body: &[u8],
    max_bytes: usize,
) -> (String, bool) {
    let is_error = !(200..300).contains(&status);
    let content_type = content_type.trim();
    let mut out = format!("HTTP {status}");
    if let Some(reason) = reason_phrase(status) {
        out.push(' ');
        out.push_str(reason);
    }
    if !content_type.is_empty() {
        out.push_str(&format!(" ({content_type})"));
    }
    if body.is_empty() {
        out.push_str("\n\n(empty body)");
        return (out, is_error);
    }
    let truncated = body.len() > max_bytes;
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let shown = &body[..utf8_cut(body, max_bytes)];
    let text = if mime.is_empty() {
        if looks_like_text(shown) {
            Some(String::from_utf8_lossy(shown).into_owned())
        } else {
            None
        }
    } else if is_text_mime(&mime) {
        Some(decode(shown, content_type))
    } else {
        None
    };
    let Some(text) = text else {
        let size = if truncated {
            format!("more than {max_bytes} bytes")
        } else {
            format!("{} bytes", body.len())
        };
        out.push_str(&format!(
            "\n\n(binary content, {size}: not shown; only text can be read)"
        ));
        return (out, is_error);
    };
    let text = if mime == "text/html" || mime == "application/xhtml+xml" {
        html_to_text(&text)
    } else {
        text
    };
    out.push_str("\n\n");
    out.push_str(&text);
    if truncated {
        out.push_str(&format!(
            "\n\n[truncated: only the first {max_bytes} bytes of the body are shown]"
        ));
    }
    (out, is_error)
}

/// `max_bytes`, moved back to the start of a UTF-8 character cut in half, so the text does not
/// end in a replacement character.
fn utf8_cut(body: &[u8], max_bytes: usize) -> usize {
    if body.len() <= max_bytes {
        return body.len();
    }
    let mut cut = max_bytes;
    while cut > 0 && max_bytes - cut < 3 && body[cut] & 0xc0 == 0x80 {
        cut -= 1;
    }
    if body[cut] & 0xc0 == 0x80 {
        // Not UTF-8 after all: cut where asked.
        max_bytes
    } else {
        cut
    }
}

fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/x-www-form-urlencoded"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/sql"
                | "application/graphql"
                | "application/x-sh"
                | "application/ndjson"
                | "application/x-ndjson"
        )
}

/// Without a content type: text if it is UTF-8 without NUL bytes.
fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0)
        && match std::str::from_utf8(bytes) {
            Ok(_) => true,
            // Invalid only because a character was cut at the end.
            Err(e) => e.error_len().is_none(),
        }
}

/// Text in the charset `content_type` names: Latin-1 byte by byte, anything else as UTF-8.
fn decode(bytes: &[u8], content_type: &str) -> String {
    let lower = content_type.to_ascii_lowercase();
    let charset = lower
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .next()
        .map(|c| c.trim_matches('"'));
    match charset {
        Some("iso-8859-1" | "latin1" | "latin-1" | "iso8859-1") => {
            bytes.iter().map(|&b| char::from(b)).collect()
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}
