//! web_fetch: the URL check, redirects, and what the model reads of a page.

use super::*;

#[test]
fn non_ascii_urls_are_mapped_by_the_hosts_parser_before_the_check() {
    let mut host = ParsingHost(Host::new(), std::cell::Cell::new(0));
    let fetch =
        |host: &mut ParsingHost, url: &str| run_builtin("web_fetch", &json!({ "url": url }), host);
    assert_eq!(
        fetch(&mut host, "https://bücher.example/a"),
        ToolRun::Fetch {
            url: "https://xn--bcher-kva.example/a".into(),
            max_bytes: FETCH_MAX_BYTES,
            timeout_ms: FETCH_TIMEOUT_MS,
        }
    );
    assert!(matches!(
        fetch(&mut host, "http://ｌｏｃａｌｈｏｓｔ:8080/healthz"),
        ToolRun::Done { result, is_error: true } if result.contains("its host localhost is a local name")
    ));
    // Not mapped by the host: the check's own parse decides (and refuses what it cannot map).
    assert!(matches!(
        fetch(&mut host, "http://127。0。0。1/"),
        ToolRun::Done { is_error: true, .. }
    ));
    assert_eq!(host.1.get(), 3);
    // ASCII urls never go through the host's parser.
    assert!(matches!(
        fetch(&mut host, "https://example.com/"),
        ToolRun::Fetch { .. }
    ));
    assert_eq!(host.1.get(), 3);
}

#[test]
fn web_fetch_asks_the_host_to_fetch() {
    let mut host = Host::new();
    assert_eq!(
        host.run(
            "web_fetch",
            json!({"url": "  https://example.com/a?b=c#d "})
        ),
        ToolRun::Fetch {
            url: "https://example.com/a?b=c#d".into(),
            max_bytes: FETCH_MAX_BYTES,
            timeout_ms: FETCH_TIMEOUT_MS,
        }
    );
    assert_eq!(
        host.err("web_fetch", json!({"url": "file:///etc/passwd"})),
        "only http:// and https:// urls can be fetched, not file://"
    );
}

#[test]
fn check_url_accepts_public_http_urls() {
    for url in [
        "http://example.com",
        "https://example.com/",
        "HTTPS://Example.COM:8443/path?q=1#frag",
        "https://example.com:/x",
        "http://8.8.8.8/",
        "http://1.1.1.1:80",
        "http://[2606:4700:4700::1111]/",
        "http://[2606:4700:4700::1111]:8080/x",
        "https://sub.domain.example.org/a/b.html",
        "https://xn--bcher-kva.example/",
        "https://example.com/@user",
        "https://example.com/?next=http://127.0.0.1/",
        "http://localhost.example.com/",
        "http://172.32.0.1/",
        "http://100.128.0.1/",
    ] {
        assert_eq!(check_url(url), Ok(()), "{url}");
    }
}

#[test]
fn check_url_refuses_other_schemes_credentials_and_local_hosts() {
    for (url, expected) in [
        ("", "the url is empty".to_string()),
        (
            "example.com",
            "not an absolute url: example.com (it must start with http:// or https://)".to_string(),
        ),
        (
            "ftp://example.com/",
            "only http:// and https:// urls can be fetched, not ftp://".to_string(),
        ),
        (
            "javascript://alert(1)",
            "only http:// and https:// urls can be fetched, not javascript://".to_string(),
        ),
        (
            "https://user:pass@example.com/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "https://user@example.com/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "http://example.com@127.0.0.1/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "http://exa mple.com/",
            "the url contains whitespace or control characters".to_string(),
        ),
        (
            "http://example.com\\@evil/",
            "the url contains a backslash".to_string(),
        ),
        (
            "http://:80/",
            "invalid url http://:80/: empty host".to_string(),
        ),
        (
            "http://example.com:99999/",
            "invalid url http://example.com:99999/: invalid port number".to_string(),
        ),
        (
            "http://example.com:8o/",
            "invalid url http://example.com:8o/: invalid port number".to_string(),
        ),
        (
            "http://[::1/",
            "invalid url http://[::1/: invalid IPv6 address".to_string(),
        ),
        (
            "http://[zz::1]/",
            "invalid url http://[zz::1]/: invalid IPv6 address".to_string(),
        ),
        (
            "http://[fe80::1%25eth0]/",
            "invalid url http://[fe80::1%25eth0]/: invalid IPv6 address".to_string(),
        ),
        (
            "http://256.1.1.1/",
            "invalid url http://256.1.1.1/: invalid IPv4 address".to_string(),
        ),
        (
            "http://1.2.3.4.5/",
            "invalid url http://1.2.3.4.5/: invalid IPv4 address".to_string(),
        ),
        (
            "http://09.1.1.1/",
            "invalid url http://09.1.1.1/: invalid IPv4 address".to_string(),
        ),
        (
            "http://4294967296/",
            "invalid url http://4294967296/: invalid IPv4 address".to_string(),
        ),
    ] {
        assert_eq!(check_url(url), Err(expected), "{url}");
    }
    // Well-formed urls whose host is not public: the message names the host as the parser
    // read it, and what it is.
    for (url, host, why) in [
        ("http://localhost/", "localhost", "a local name"),
        ("http://LOCALHOST.:3000/", "localhost.", "a local name"),
        ("http:///path", "path", "a single-label (local) name"),
        (
            "http://intranet/",
            "intranet",
            "a single-label (local) name",
        ),
        (
            "http://router.localdomain/",
            "router.localdomain",
            "a local name",
        ),
        ("http://nas.home.arpa./", "nas.home.arpa.", "a local name"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1", "a loopback address"),
        (
            "http://%6c%6f%63%61%6c%68%6f%73%74/",
            "localhost",
            "a local name",
        ),
        ("http://127.0.0.1./", "127.0.0.1", "a loopback address"),
        ("http://0x7f000001/", "127.0.0.1", "a loopback address"),
        ("http:/127.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http:127.0.0.1", "127.0.0.1", "a loopback address"),
        ("http://example.com#@127.0.0.1/", "example.com", ""),
        ("http://app.localhost/", "app.localhost", "a local name"),
        ("http://printer.local/", "printer.local", "a local name"),
        (
            "http://metadata.google.internal/",
            "metadata.google.internal",
            "a local name",
        ),
        ("http://127.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://127.1/", "127.0.0.1", "a loopback address"),
        ("http://2130706433/", "127.0.0.1", "a loopback address"),
        ("http://0x7f.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://0177.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://10.0.0.1/", "10.0.0.1", "a private address"),
        ("http://172.16.5.4/", "172.16.5.4", "a private address"),
        (
            "http://192.168.1.1:8080/",
            "192.168.1.1",
            "a private address",
        ),
        (
            "http://169.254.169.254/latest/meta-data",
            "169.254.169.254",
            "a link-local address",
        ),
        ("http://0.0.0.0/", "0.0.0.0", "an unspecified address"),
        ("http://0/", "0.0.0.0", "an unspecified address"),
        (
            "http://100.64.0.1/",
            "100.64.0.1",
            "a shared (carrier-grade NAT) address",
        ),
        ("http://198.18.0.1/", "198.18.0.1", "a reserved address"),
        ("http://192.0.2.1/", "192.0.2.1", "a documentation address"),
        (
            "http://224.0.0.1/",
            "224.0.0.1",
            "a multicast, broadcast or reserved address",
        ),
        (
            "http://255.255.255.255/",
            "255.255.255.255",
            "a multicast, broadcast or reserved address",
        ),
        ("http://[::1]/", "[::1]", "a loopback address"),
        ("http://[::]/", "[::]", "an unspecified address"),
        (
            "http://[fd00::1]:80/",
            "[fd00::1]",
            "a private (unique local) address",
        ),
        ("http://[fe80::1]/", "[fe80::1]", "a link-local address"),
        (
            "http://[::ffff:127.0.0.1]/",
            "[::ffff:7f00:1]",
            "a loopback address",
        ),
        ("http://[::127.0.0.1]/", "[::7f00:1]", "a loopback address"),
        (
            "http://[::ffff:0:a9fe:a9fe]/",
            "[::ffff:0:a9fe:a9fe]",
            "a link-local address",
        ),
        (
            "http://[2002:c0a8:101::1]/",
            "[2002:c0a8:101::1]",
            "a private address",
        ),
        (
            "http://[2001:0:4136:e378::1]/",
            "[2001:0:4136:e378::1]",
            "a Teredo (tunnelled IPv4) address",
        ),
        (
            "http://[64:ff9b:1::a]/",
            "[64:ff9b:1::a]",
            "a local-use NAT64 address",
        ),
        (
            "http://[::ffff:a00:1]/",
            "[::ffff:a00:1]",
            "a private address",
        ),
        (
            "http://[64:ff9b::c0a8:101]/",
            "[64:ff9b::c0a8:101]",
            "a private address",
        ),
        ("http://[ff02::1]/", "[ff02::1]", "a multicast address"),
    ] {
        if why.is_empty() {
            // After `#` is the fragment: the host is the public one before it.
            assert_eq!(check_url(url), Ok(()), "{url}");
            continue;
        }
        let expected = format!(
            "refusing to fetch {url}: its host {host} is {why}; only public hosts can be fetched"
        );
        assert_eq!(check_url(url), Err(expected), "{url}");
    }
    let long = format!("https://example.com/{}", "a".repeat(2048));
    assert_eq!(
        check_url(&long),
        Err("the url is 2068 bytes long; the limit is 2048".to_string())
    );
}

#[test]
fn check_url_judges_the_url_the_fetch_reads() {
    // What is fetched is the parser's serialization of what was judged.
    for (url, fetched) in [
        (
            "HTTP://Example.COM:80/a/../b?x#y",
            "http://example.com/b?x#y",
        ),
        ("https:example.org", "https://example.org/"),
        ("http://8.8.8.8.", "http://8.8.8.8/"),
        ("http://0x08080808/", "http://8.8.8.8/"),
        (
            "http://[2606:4700:4700:0:0:0:0:1111]/",
            "http://[2606:4700:4700::1111]/",
        ),
        ("http://exa%6dple.com/", "http://example.com/"),
    ] {
        assert_eq!(checked_url(url), Ok(fetched.to_string()), "{url}");
    }
    // Spellings a WHATWG parser maps to a local host (ideographic and full-width full stops,
    // full-width and compatibility letters, the long s, a soft hyphen) are refused whether
    // this build's IDNA back end maps them (then the host is judged) or not (then the url
    // is refused as unmappable): never fetched.
    for url in [
        "http://127。0。0。1:8080/healthz",
        "http://127．0．0．1/",
        "http://127｡0｡0｡1/",
        "http://１２７.０.０.１/",
        "http://ｌｏｃａｌｈｏｓｔ:8080/healthz",
        "http://ＬＯＣＡＬＨＯＳＴ/",
        "http://localhoſt/",
        "http://local\u{ad}host/",
        "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/",
        "http://[::ｆｆｆｆ:127.0.0.1]/",
    ] {
        assert!(checked_url(url).is_err(), "{url}");
    }
}

#[test]
fn the_check_agrees_with_the_url_crate_on_the_differential_corpus() {
    // tests/urls/corpus.json is what urls.test.mjs runs through Node's URL as well.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/urls/corpus.json");
    let corpus: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the corpus")).expect("json");
    assert!(corpus.len() > 500, "{} urls", corpus.len());
    for url in &corpus {
        fuzz_check_url(url);
    }
}

#[test]
fn fetch_result_shows_text() {
    assert_eq!(
        fetch_result(200, "text/plain; charset=utf-8", b"hello\nworld\n", 100),
        (
            "HTTP 200 OK (text/plain; charset=utf-8)\n\nhello\nworld\n".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/json", br#"{"a":1}"#, 100),
        (
            "HTTP 200 OK (application/json)\n\n{\"a\":1}".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/ld+json", b"[]", 100),
        ("HTTP 200 OK (application/ld+json)\n\n[]".to_string(), false)
    );
    assert_eq!(
        fetch_result(404, "text/plain", b"not here", 100),
        (
            "HTTP 404 Not Found (text/plain)\n\nnot here".to_string(),
            true
        )
    );
    assert_eq!(
        fetch_result(599, "", b"odd", 100),
        ("HTTP 599\n\nodd".to_string(), true)
    );
    assert_eq!(
        fetch_result(204, "", b"", 100),
        ("HTTP 204 No Content\n\n(empty body)".to_string(), false)
    );
    assert_eq!(
        fetch_result(200, "text/plain; charset=ISO-8859-1", b"caf\xe9", 100),
        (
            "HTTP 200 OK (text/plain; charset=ISO-8859-1)\n\ncafé".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "text/plain", b"bad \xff byte", 100),
        (
            "HTTP 200 OK (text/plain)\n\nbad \u{fffd} byte".to_string(),
            false
        )
    );
}

#[test]
fn fetch_result_truncates_with_a_marker() {
    let marker = "\n\n[truncated: only the first 10 bytes of the body are shown]";
    assert_eq!(
        fetch_result(200, "text/plain", b"0123456789abc", 10),
        (
            format!("HTTP 200 OK (text/plain)\n\n0123456789{marker}"),
            false
        )
    );
    // Exactly max_bytes: not truncated.
    assert_eq!(
        fetch_result(200, "text/plain", b"0123456789", 10),
        ("HTTP 200 OK (text/plain)\n\n0123456789".to_string(), false)
    );
    // A character cut in half is left out rather than mangled.
    let body = "12345678é€".as_bytes(); // 8 + 2 + 3 bytes
    assert_eq!(
        fetch_result(200, "text/plain", body, 9),
        (
            "HTTP 200 OK (text/plain)\n\n12345678\n\n[truncated: only the first 9 bytes of the body are shown]"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "text/plain", body, 12),
        (
            "HTTP 200 OK (text/plain)\n\n12345678é\n\n[truncated: only the first 12 bytes of the body are shown]"
                .to_string(),
            false
        )
    );
}

#[test]
fn fetch_result_summarises_binary_bodies() {
    assert_eq!(
        fetch_result(200, "image/png", b"\x89PNG\r\n\x1a\n", 100),
        (
            "HTTP 200 OK (image/png)\n\n(binary content, 8 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/octet-stream", &[0u8; 20], 10),
        (
            "HTTP 200 OK (application/octet-stream)\n\n(binary content, more than 10 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    // Without a content type, the bytes decide.
    assert_eq!(
        fetch_result(200, "", b"a\0b", 100),
        (
            "HTTP 200 OK\n\n(binary content, 3 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "", "plain é".as_bytes(), 100),
        ("HTTP 200 OK\n\nplain é".to_string(), false)
    );
}

#[test]
fn fetch_result_reduces_html_to_text() {
    let html = r#"<!DOCTYPE html>
<html><head><title>Example Domain</title>
<meta charset="utf-8"><style>body { color: red; }</style>
<script type="text/javascript">if (a < b && c > d) { alert("</p>"); }</script>
</head>
<body>
<div>
    <h1>Example   Domain</h1>
    <p>This domain is for use in <a href="/x" title="a > b">illustrative</a> examples.<br>
    Second&nbsp;line &amp; more &lt;tags&gt; &#65;&#x42; &mdash; &bogus; AT&T</p>
    <!-- a comment <p>hidden</p> -->
    <ul><li>one</li><li>two</li></ul>
    <table><tr><td>a</td><td>b</td></tr></table>
    <pre>  keep
    this</pre>
    <SCRIPT>hidden()</SCRIPT>
    <p>1 < 2</p>
</div>
</body></html>"#;
    let (text, is_error) = fetch_result(200, "text/html; charset=UTF-8", html.as_bytes(), 10_000);
    assert!(!is_error);
    assert_eq!(
        text,
        "HTTP 200 OK (text/html; charset=UTF-8)\n\n\
         Example Domain\n\n\
         Example Domain\n\n\
         This domain is for use in illustrative examples.\n\
         Second line & more <tags> AB — &bogus; AT&T\n\n\
         - one\n\
         - two\n\n\
         a b\n\n\
         \x20 keep\n    this\n\n\
         1 < 2"
    );
}

#[test]
fn fetch_result_survives_broken_html() {
    for html in [
        "<",
        "<p",
        "<!--",
        "<script>",
        "<a href=\"",
        "&",
        "&#",
        "&#xZZ;",
        "&#99999999;",
        "<<>>",
        "</",
        "<p>\u{fffd}</p",
        "<style>x</style",
        "<pre></pre></pre>",
    ] {
        let (text, _) = fetch_result(200, "text/html", html.as_bytes(), 100);
        assert!(text.starts_with("HTTP 200 OK (text/html)"), "{html}");
    }
    assert_eq!(
        fetch_result(200, "text/html", b"&#99999999; &#x41;", 100).0,
        "HTTP 200 OK (text/html)\n\n\u{fffd} A"
    );
}

#[test]
fn redirects_resolve_against_the_page_and_each_target_is_checked() {
    let base = "https://example.com/docs/guide/intro.html?lang=en#top";
    for (location, want) in [
        ("https://www.example.com/", "https://www.example.com/"),
        ("//cdn.example.org/a.js", "https://cdn.example.org/a.js"),
        (
            "/login?next=%2Fdocs",
            "https://example.com/login?next=%2Fdocs",
        ),
        ("setup.html", "https://example.com/docs/guide/setup.html"),
        ("../api/", "https://example.com/docs/api/"),
        ("./../../x/./y/..", "https://example.com/x/"),
        ("../../../../up", "https://example.com/up"),
        (
            "?lang=de",
            "https://example.com/docs/guide/intro.html?lang=de",
        ),
        (
            "#part-2",
            "https://example.com/docs/guide/intro.html?lang=en#part-2",
        ),
        ("  /spaced  ", "https://example.com/spaced"),
    ] {
        for status in [301, 302, 303, 307, 308] {
            assert_eq!(
                redirect_target(base, status, Some(location)),
                Ok(Some(want.to_string())),
                "{status} {location}"
            );
        }
    }
    assert_eq!(
        redirect_target("http://example.com", 301, Some("next")),
        Ok(Some("http://example.com/next".to_string())),
        "a base without a path"
    );
}

#[test]
fn a_redirect_to_a_private_host_or_without_a_location_is_refused() {
    let base = "https://example.com/a";
    for location in [
        "http://127.0.0.1:8080/admin",
        "http://localhost/",
        "//10.0.0.7/metadata",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://user:pw@example.com/",
        "/\\127.0.0.1/admin",
        "\\\\localhost/",
        "http://127。0。0。1/",
        "http://0x7f.1/",
        "http://[::ffff:10.0.0.1]/",
        "//%31%32%37.0.0.1/",
    ] {
        let refused = redirect_target(base, 302, Some(location));
        assert!(
            matches!(&refused, Err(e) if e.contains("which is refused")),
            "{location}: {refused:?}"
        );
    }
    for location in [None, Some(""), Some("   ")] {
        let refused = redirect_target(base, 301, location);
        assert!(
            matches!(&refused, Err(e) if e.contains("without a Location")),
            "{location:?}: {refused:?}"
        );
    }
}

#[test]
fn answers_that_are_not_redirects_are_the_page() {
    for status in [200, 204, 300, 304, 404, 500] {
        assert_eq!(
            redirect_target("https://example.com/", status, Some("http://127.0.0.1/")),
            Ok(None),
            "{status}"
        );
    }
}
