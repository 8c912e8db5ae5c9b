use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::*;

const SERVER: &str = "https://mcp.example.com/v1/mcp";

fn auth_server(extra: &str) -> AuthServer {
    let body = alloc::format!(
        r#"{{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/authorize?tenant=a",
        "token_endpoint":"https://auth.example.com/token","registration_endpoint":"https://auth.example.com/register",
        "code_challenge_methods_supported":["plain","S256"]{extra}}}"#
    );
    AuthServer::parse("https://auth.example.com", &body).unwrap()
}

fn query(url: &str) -> Vec<(String, String)> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[test]
fn a_bearer_challenge_gives_its_metadata_url_and_scope_among_other_schemes() {
    let header = r#"Basic realm="x", Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write""#;
    let c = Challenge::parse(header).unwrap();
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    let plain = Challenge::parse(r#"Bearer realm="a \"b\"", scope=read"#).unwrap();
    assert_eq!(plain.scope.as_deref(), Some("read"));
    assert_eq!(Challenge::parse("Bearer").unwrap(), Challenge::default());
    assert_eq!(Challenge::parse(r#"Basic realm="x""#), None);
    assert_eq!(Challenge::parse(""), None);
}

#[test]
fn resource_metadata_is_looked_for_at_the_challenges_url_else_path_then_root() {
    let c = Challenge {
        resource_metadata: Some("https://mcp.example.com/prm".into()),
        ..Challenge::default()
    };
    assert_eq!(
        resource_metadata_urls(SERVER, Some(&c)).unwrap(),
        vec!["https://mcp.example.com/prm"]
    );
    assert_eq!(
        resource_metadata_urls(SERVER, None).unwrap(),
        vec![
            "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
        ]
    );
    assert_eq!(
        resource_metadata_urls("http://127.0.0.1:8080/", None).unwrap(),
        vec!["http://127.0.0.1:8080/.well-known/oauth-protected-resource"]
    );
    let bad = Challenge {
        resource_metadata: Some("javascript:alert(1)".into()),
        ..Challenge::default()
    };
    assert!(matches!(
        resource_metadata_urls(SERVER, Some(&bad)),
        Err(AuthError::BadUrl { .. })
    ));
}

#[test]
fn resource_metadata_must_describe_this_server() {
    let ok = ResourceMetadata::parse(
        SERVER,
        r#"{"resource":"https://mcp.example.com/v1","authorization_servers":["https://auth.example.com"],"scopes_supported":["a","b"]}"#,
    )
    .unwrap();
    assert_eq!(ok.resource, "https://mcp.example.com/v1");
    assert_eq!(ok.authorization_servers, vec!["https://auth.example.com"]);
    assert_eq!(select_scope(None, &ok).as_deref(), Some("a b"));
    let c = Challenge {
        scope: Some("c".into()),
        ..Challenge::default()
    };
    assert_eq!(select_scope(Some(&c), &ok).as_deref(), Some("c"));
    for (body, says) in [
        (
            r#"{"resource":"https://evil.example.com/v1/mcp","authorization_servers":["https://a"]}"#,
            "is not the server",
        ),
        (
            r#"{"resource":"https://mcp.example.com/v1/mcp2","authorization_servers":["https://a"]}"#,
            "is not the server",
        ),
        (
            r#"{"resource":"https://mcp.example.com/v1/mcp"}"#,
            "authorization_servers",
        ),
        (r#"{"authorization_servers":["https://a"]}"#, "resource"),
        ("[]", "not a JSON object"),
        ("{", "protected resource metadata"),
    ] {
        let e = ResourceMetadata::parse(SERVER, body)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{body}: {e}");
    }
}

#[test]
fn authorization_server_metadata_is_tried_in_the_specs_order() {
    assert_eq!(
        authorization_server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
        vec![
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        authorization_server_metadata_urls("https://auth.example.com/").unwrap(),
        vec![
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://auth.example.com/.well-known/openid-configuration",
        ]
    );
}

#[test]
fn a_server_without_s256_or_claiming_another_issuer_is_refused() {
    let s = auth_server(r#","authorization_response_iss_parameter_supported":true"#);
    assert!(s.sends_iss);
    assert_eq!(s.token_endpoint, "https://auth.example.com/token");
    let plain = r#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/a","token_endpoint":"https://auth.example.com/t","code_challenge_methods_supported":["plain"]}"#;
    let e = AuthServer::parse("https://auth.example.com", plain).unwrap_err();
    assert!(matches!(e, AuthError::NoPkce { .. }));
    assert!(e.to_string().contains("S256"));
    let unlisted = r#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/a","token_endpoint":"https://auth.example.com/t"}"#;
    assert!(matches!(
        AuthServer::parse("https://auth.example.com", unlisted),
        Err(AuthError::NoPkce { .. })
    ));
    let other =
        r#"{"issuer":"https://evil.example.com","code_challenge_methods_supported":["S256"]}"#;
    assert!(AuthServer::parse("https://auth.example.com", other)
        .unwrap_err()
        .to_string()
        .contains("evil"));
    let no_token = r#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/a","code_challenge_methods_supported":["S256"]}"#;
    assert!(AuthServer::parse("https://auth.example.com", no_token)
        .unwrap_err()
        .to_string()
        .contains("token_endpoint"));
}

#[test]
fn the_client_is_the_operators_then_a_metadata_document_then_registered() {
    let s = auth_server(r#","client_id_metadata_document_supported":true"#);
    let mine = Client {
        client_id: "op".into(),
        client_secret: Some("s".into()),
        secret_in_body: false,
    };
    assert_eq!(
        choose_client(&s, Some(&mine), Some("https://w/cimd")).unwrap(),
        ClientChoice::Ready(mine.clone())
    );
    // A server that takes the secret only in the form gets it there.
    let post =
        auth_server(r#","token_endpoint_auth_methods_supported":["client_secret_post","none"]"#);
    match choose_client(&post, Some(&mine), None).unwrap() {
        ClientChoice::Ready(c) => assert!(c.secret_in_body && c.client_id == "op"),
        other => panic!("{other:?}"),
    }
    match choose_client(&s, None, Some("https://w/cimd")).unwrap() {
        ClientChoice::Ready(c) => assert_eq!(c.client_id, "https://w/cimd"),
        other => panic!("{other:?}"),
    }
    // A metadata document must be https: an http one falls to registration.
    assert_eq!(
        choose_client(&s, None, Some("http://w/cimd")).unwrap(),
        ClientChoice::Register
    );
    let mut bare = auth_server("");
    bare.registration_endpoint = None;
    assert!(matches!(
        choose_client(&bare, None, Some("https://w/cimd")),
        Err(AuthError::NoRegistration { .. })
    ));
    let doc = client_metadata_document("https://w/cimd", "https://w/cb");
    let parsed = weft_protocol::json::parse(&doc).unwrap();
    assert_eq!(
        parsed.get("client_id").unwrap().as_str(),
        Some("https://w/cimd")
    );
    assert_eq!(
        parsed.get("redirect_uris").unwrap().as_array().unwrap()[0].as_str(),
        Some("https://w/cb")
    );
}

#[test]
fn registration_asks_for_a_public_client_when_allowed_and_reads_the_answer() {
    let s =
        auth_server(r#","token_endpoint_auth_methods_supported":["client_secret_post","none"]"#);
    let r = registration_request(&s, "https://w/cb", Some("a b")).unwrap();
    assert_eq!(r.url, "https://auth.example.com/register");
    let body = r.body.unwrap();
    let doc = weft_protocol::json::parse(&body).unwrap();
    assert_eq!(
        doc.get("token_endpoint_auth_method").unwrap().as_str(),
        Some("none")
    );
    assert_eq!(doc.get("scope").unwrap().as_str(), Some("a b"));
    let only_post =
        auth_server(r#","token_endpoint_auth_methods_supported":["client_secret_post"]"#);
    let body = registration_request(&only_post, "https://w/cb", None)
        .unwrap()
        .body
        .unwrap();
    assert!(
        body.contains(r#""token_endpoint_auth_method":"client_secret_post""#),
        "{body}"
    );

    let c = Client::parse_registration(
        201,
        r#"{"client_id":"abc","client_secret":"sec","token_endpoint_auth_method":"client_secret_post"}"#,
    )
    .unwrap();
    assert_eq!(c.client_id, "abc");
    assert!(c.secret_in_body);
    assert!(!alloc::format!("{c:?}").contains("sec\""));
    let refused =
        Client::parse_registration(400, r#"{"error":"invalid_redirect_uri"}"#).unwrap_err();
    assert!(refused.to_string().contains("invalid_redirect_uri"));
    assert!(Client::parse_registration(201, "{}").is_err());
}

#[test]
fn the_authorization_url_carries_state_pkce_and_resource() {
    let s = auth_server("");
    let url = authorization_url(
        &s,
        &Authorize {
            client_id: "abc",
            redirect_uri: "https://w/cb",
            state: "st&ate",
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            resource: "https://mcp.example.com/v1",
            scope: Some("a b"),
        },
    );
    assert!(
        url.starts_with("https://auth.example.com/authorize?tenant=a&"),
        "{url}"
    );
    let q = query(&url);
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("response_type"), Some("code"));
    assert_eq!(get("state"), Some("st&ate"));
    assert_eq!(get("code_challenge_method"), Some("S256"));
    assert_eq!(get("resource"), Some("https://mcp.example.com/v1"));
    assert_eq!(get("scope"), Some("a b"));
    assert_eq!(get("redirect_uri"), Some("https://w/cb"));
}

#[test]
fn pkce_s256_matches_rfc_7636_appendix_b() {
    // SHA-256 of "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".
    let digest = [
        19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120, 173,
        109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
    ];
    assert_eq!(
        pkce_challenge(&digest),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    assert_eq!(base64url(b""), "");
    assert_eq!(base64url(b"f"), "Zg");
    assert_eq!(base64url(b"fo"), "Zm8");
    assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    assert_eq!(encode64(b"fo", b"+/", true), "Zm8=");
}

#[test]
fn token_requests_carry_the_grant_the_resource_and_the_clients_authentication() {
    let s = auth_server("");
    let public = Client {
        client_id: "abc".into(),
        client_secret: None,
        secret_in_body: false,
    };
    let r = token_request(
        &s,
        &public,
        Grant::Code {
            code: "c0de",
            verifier: "v",
            redirect_uri: "https://w/cb",
        },
        "https://mcp.example.com/v1",
    );
    assert_eq!(r.method, "POST");
    assert_eq!(r.url, "https://auth.example.com/token");
    assert_eq!(
        r.body.as_deref(),
        Some("grant_type=authorization_code&code=c0de&code_verifier=v&redirect_uri=https%3A%2F%2Fw%2Fcb&resource=https%3A%2F%2Fmcp.example.com%2Fv1&client_id=abc")
    );
    assert!(!alloc::format!("{r:?}").contains("c0de"));
    let basic = Client {
        client_id: "a b".into(),
        client_secret: Some("s:c".into()),
        secret_in_body: false,
    };
    let r = token_request(
        &s,
        &basic,
        Grant::Refresh {
            refresh_token: "rt",
        },
        "https://r",
    );
    assert_eq!(
        r.body.as_deref(),
        Some("grant_type=refresh_token&refresh_token=rt&resource=https%3A%2F%2Fr")
    );
    // base64("a+b:s%3Ac")
    assert!(r
        .headers
        .contains(&("Authorization".into(), "Basic YStiOnMlM0Fj".into())));
    let post = Client {
        secret_in_body: true,
        ..basic
    };
    let body = token_request(
        &s,
        &post,
        Grant::Refresh {
            refresh_token: "rt",
        },
        "https://r",
    )
    .body;
    assert!(body
        .unwrap()
        .ends_with("&client_id=a+b&client_secret=s%3Ac"));
}

#[test]
fn token_answers_are_read_and_a_refused_grant_needs_the_user() {
    let t = Tokens::parse(
        200,
        r#"{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt"}"#,
        1_000,
    )
    .unwrap();
    assert_eq!(t.access_token, "at");
    assert_eq!(t.refresh_token.as_deref(), Some("rt"));
    assert_eq!(t.expires_at_ms, Some(3_601_000));
    assert!(t.fresh(1_000));
    assert!(!t.fresh(3_560_000));
    assert!(!alloc::format!("{t:?}").contains("at\""));
    let e = Tokens::parse(
        400,
        r#"{"error":"invalid_grant","error_description":"expired"}"#,
        0,
    )
    .unwrap_err();
    assert!(e.needs_user());
    assert_eq!(
        e.to_string(),
        "the authorization server refused: invalid_grant (expired)"
    );
    let e = Tokens::parse(400, r#"{"error":"invalid_client"}"#, 0).unwrap_err();
    assert!(!e.needs_user());
    assert!(Tokens::parse(200, r#"{"access_token":"at","token_type":"mac"}"#, 0).is_err());
    assert!(Tokens::parse(200, r#"{"token_type":"Bearer"}"#, 0).is_err());
    assert!(Tokens::parse(502, "<html>", 0)
        .unwrap_err()
        .to_string()
        .contains("502"));
}

#[test]
fn the_callback_must_come_from_the_issuer_and_carry_a_code() {
    let s = auth_server("");
    let promised = auth_server(r#","authorization_response_iss_parameter_supported":true"#);
    let cb = Callback::parse("code=c%2B1&state=s&iss=https%3A%2F%2Fauth.example.com").unwrap();
    assert_eq!(cb.state.as_deref(), Some("s"));
    assert_eq!(cb.code_from(&promised).unwrap(), "c+1");
    let no_iss = Callback::parse("code=c&state=s").unwrap();
    assert_eq!(no_iss.code_from(&s).unwrap(), "c");
    assert!(matches!(
        no_iss.code_from(&promised),
        Err(AuthError::Callback { .. })
    ));
    let mixed = Callback::parse("code=c&state=s&iss=https%3A%2F%2Fevil.example.com").unwrap();
    assert!(mixed
        .code_from(&s)
        .unwrap_err()
        .to_string()
        .contains("evil"));
    let denied = Callback::parse("error=access_denied&state=s").unwrap();
    assert!(denied.code_from(&s).unwrap_err().needs_user());
    assert!(Callback::parse("state=s").unwrap().code_from(&s).is_err());
    assert!(Callback::parse("state=a&state=b").is_err());
    assert!(!alloc::format!("{cb:?}").contains("c+1"));
}

#[test]
fn the_fuzz_entry_point_survives_the_documents_and_their_mutations() {
    let documents: [&[u8]; 6] = [
        br#"Bearer error="invalid_token", resource_metadata="https://mcp.example.com/prm", scope="a b""#,
        br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com/t"],"scopes_supported":["a"]}"#,
        br#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/a","token_endpoint":"https://auth.example.com/t","code_challenge_methods_supported":["S256"],"authorization_response_iss_parameter_supported":true}"#,
        br#"{"client_id":"abc","client_secret":"s","token_endpoint_auth_method":"client_secret_post"}"#,
        br#"{"access_token":"at","token_type":"Bearer","expires_in":18446744073709551615,"refresh_token":"rt"}"#,
        b"code=c&state=s&iss=https%3A%2F%2Fauth.example.com&error=%ff%fe",
    ];
    // Flipped, dropped and doubled bytes (xorshift, fixed seed).
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for doc in documents {
        fuzz_mcp_auth(doc);
        for _ in 0..200 {
            let mut data = doc.to_vec();
            for _ in 0..1 + next() % 6 {
                let at = (next() as usize) % data.len().max(1);
                match next() % 3 {
                    0 if !data.is_empty() => data[at] ^= 1 << (next() % 8),
                    1 if !data.is_empty() => {
                        data.remove(at);
                    }
                    _ => data.insert(at.min(data.len()), (next() % 256) as u8),
                }
            }
            fuzz_mcp_auth(&data);
        }
    }
    fuzz_mcp_auth(b"");
    fuzz_mcp_auth(b"Bearer a=\"\\");
}

const PRM: &str = r#"{"resource":"https://mcp.example.com/v1/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["notes"]}"#;
const ASM: &str = r#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/authorize","token_endpoint":"https://auth.example.com/token","registration_endpoint":"https://auth.example.com/register","code_challenge_methods_supported":["S256"]}"#;

/// Runs discovery against `answer(url)`; the URLs asked, in order, and the end.
fn discover(
    mut d: Discovery,
    answer: impl Fn(&Request) -> (u16, String),
) -> (Vec<String>, Result<Box<Discovered>, AuthError>) {
    let mut asked = Vec::new();
    let mut last: Option<(u16, String)> = None;
    loop {
        match d.next(last.as_ref().map(|(s, b)| (*s, b.as_str()))) {
            Step::Send(r) => {
                asked.push(alloc::format!("{} {}", r.method, r.url));
                last = Some(answer(&r));
            }
            Step::Done(done) => return (asked, done),
        }
    }
}

#[test]
fn discovery_walks_the_well_known_documents_in_order_and_registers() {
    let d = Discovery::new(SERVER, Some("Bearer"), "https://w/cb", None, Vec::new()).unwrap();
    let (asked, done) = discover(d, |r| match r.url.as_str() {
        "https://mcp.example.com/.well-known/oauth-protected-resource" => (200, PRM.into()),
        "https://auth.example.com/.well-known/openid-configuration" => (200, ASM.into()),
        "https://auth.example.com/register" => (201, r#"{"client_id":"new"}"#.into()),
        _ => (404, String::new()),
    });
    assert_eq!(
        asked,
        [
            "GET https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
            "GET https://mcp.example.com/.well-known/oauth-protected-resource",
            "GET https://auth.example.com/.well-known/oauth-authorization-server",
            "GET https://auth.example.com/.well-known/openid-configuration",
            "POST https://auth.example.com/register",
        ]
    );
    let found = done.unwrap();
    assert!(found.registered);
    assert_eq!(found.client.client_id, "new");
    assert_eq!(found.scope.as_deref(), Some("notes"));
    assert_eq!(found.metadata, ASM);
    assert_eq!(found.resource.resource, "https://mcp.example.com/v1/mcp");
}

#[test]
fn discovery_takes_a_known_client_and_reports_what_is_missing() {
    let known = vec![(
        "https://auth.example.com".to_string(),
        Client {
            client_id: "kept".into(),
            client_secret: None,
            secret_in_body: false,
        },
    )];
    let challenge = r#"Bearer resource_metadata="https://mcp.example.com/prm", scope="x""#;
    let d = Discovery::new(SERVER, Some(challenge), "https://w/cb", None, known).unwrap();
    let (asked, done) = discover(d, |r| match r.url.as_str() {
        "https://mcp.example.com/prm" => (200, PRM.into()),
        "https://auth.example.com/.well-known/oauth-authorization-server" => (200, ASM.into()),
        _ => (404, String::new()),
    });
    assert_eq!(asked.len(), 2, "{asked:?}");
    let found = done.unwrap();
    assert!(!found.registered);
    assert_eq!(found.client.client_id, "kept");
    assert_eq!(found.scope.as_deref(), Some("x"));

    let d = Discovery::new(SERVER, None, "https://w/cb", None, Vec::new()).unwrap();
    let (asked, done) = discover(d, |_| (404, String::new()));
    assert_eq!(asked.len(), 2);
    assert!(done.unwrap_err().to_string().contains("RFC 9728"));
    let d = Discovery::new(SERVER, None, "https://w/cb", None, Vec::new()).unwrap();
    let (_, done) = discover(d, |r| {
        if r.url.contains("protected-resource") {
            (200, PRM.into())
        } else {
            (404, String::new())
        }
    });
    assert!(done.unwrap_err().to_string().contains("RFC 8414"));
    let plain = ASM.replace("S256", "plain");
    let d = Discovery::new(SERVER, None, "https://w/cb", None, Vec::new()).unwrap();
    let (_, done) = discover(d, |r| {
        if r.url.contains("protected-resource") {
            (200, PRM.into())
        } else {
            (200, plain.clone())
        }
    });
    assert!(matches!(done, Err(AuthError::NoPkce { .. })));
    let d = Discovery::new(SERVER, None, "https://w/cb", None, Vec::new()).unwrap();
    let (_, refused) = discover(d, |r| match r.method {
        "POST" => (400, r#"{"error":"invalid_client_metadata"}"#.into()),
        _ if r.url.contains("protected-resource") => (200, PRM.into()),
        _ => (200, ASM.into()),
    });
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("invalid_client_metadata"));
}
