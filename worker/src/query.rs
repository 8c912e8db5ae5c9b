//! URL query strings, read and written in the `application/x-www-form-urlencoded` form that
//! browsers' `URLSearchParams` use.
//!
//! The Worker reads three or four parameters from a request's URL and writes three into the URL
//! it forwards to a session; that is all it needs of URLs. The `url` crate (behind
//! `worker::Request::url`) parses hosts, IP addresses and paths besides: taking it out shrank
//! the gzipped upload by 26 KB (measured 2026-11-22). It has been linked again since, for
//! `web_fetch`'s WHATWG check in weft-agent, but its `form_urlencoded` in place of this file
//! still costs 0.4 KiB of gzipped upload (480.57 → 480.97 KiB, `wrangler deploy --dry-run` at
//! c3cfff4, 2026-11-28; BENCHMARKS.md, "The Worker's upload"), so this file stays.

/// The query of `url`: what follows the first `?`, up to a `#`.
fn query_of(url: &str) -> &str {
    let url = url.split_once('#').map_or(url, |(before, _)| before);
    url.split_once('?').map_or("", |(_, query)| query)
}

/// The decoded `(name, value)` pairs of `url`'s query, in order; empty pieces (`a=1&&b=2`) are
/// skipped, as `URLSearchParams` does.
pub fn pairs(url: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query_of(url)
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            (decode(name), decode(value))
        })
}

/// The first value of parameter `name` in `url`'s query.
pub fn get(url: &str, name: &str) -> Option<String> {
    pairs(url).find(|(n, _)| n == name).map(|(_, v)| v)
}

/// A query component decoded: `+` is a space, `%XX` a byte; a `%` not followed by two hex digits
/// stays as it is, and bytes that do not form UTF-8 become U+FFFD.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn hex(b: Option<&u8>) -> Option<u8> {
    char::from(*b?).to_digit(16).map(|d| d as u8)
}

/// Appends `name=value` to a query being built in `out` (with `&` before it unless `out` ends in
/// `?`), both encoded so that [`get`] reads them back unchanged.
pub fn append(out: &mut String, name: &str, value: &str) {
    if !out.ends_with('?') {
        out.push('&');
    }
    encode(out, name);
    out.push('=');
    encode(out, value);
}

/// Everything but `A–Z a–z 0–9 * - . _` percent-encoded, and a space as `+` (the
/// form-urlencoded serializer's set).
fn encode(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameters_as_url_search_params_does() {
        let url = "https://h.example/ws?session_id=a%20b+c&token=x%2By&&empty=&flag#token=no";
        assert_eq!(get(url, "session_id").as_deref(), Some("a b c"));
        assert_eq!(get(url, "token").as_deref(), Some("x+y"));
        assert_eq!(get(url, "empty").as_deref(), Some(""));
        assert_eq!(get(url, "flag").as_deref(), Some(""));
        assert_eq!(get(url, "missing"), None);
        assert_eq!(get("https://h.example/#?token=no", "token"), None);
        assert_eq!(pairs(url).count(), 4);
    }

    #[test]
    fn keeps_what_is_not_an_escape_and_replaces_broken_utf8() {
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%e2%82%ac"), "€");
        assert_eq!(decode("%ff"), "\u{fffd}");
    }

    #[test]
    fn appended_pairs_read_back_unchanged() {
        let mut url = String::from("https://session.internal/connect?");
        let awkward = "a b&c=d+e%f/€?#";
        append(&mut url, "dialect", "loom");
        append(&mut url, "session", awkward);
        append(&mut url, "protocol", "weft.token.t0k");
        assert_eq!(
            url,
            "https://session.internal/connect?dialect=loom\
             &session=a+b%26c%3Dd%2Be%25f%2F%E2%82%AC%3F%23&protocol=weft.token.t0k"
        );
        assert_eq!(get(&url, "session").as_deref(), Some(awkward));
        assert_eq!(get(&url, "dialect").as_deref(), Some("loom"));
        assert_eq!(get(&url, "protocol").as_deref(), Some("weft.token.t0k"));
    }
}
