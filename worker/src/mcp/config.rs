//! The operator's MCP servers (`MCP_SERVERS`) and their limits, read from the Worker's
//! environment.
//!
//! Plain data, checked here with unit tests: the settings' texts are passed in and secrets
//! read through a closure, so the rules (names, URLs, `${secret:NAME}` in header values,
//! approvals) need no runtime. A
//! setting that does not parse is an error the object logs and `/status` shows; a server that
//! is wrong on its own (a secret not set, a bad URL) is left out with its reason, and the
//! others still serve.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `MCP_CALL_TIMEOUT_MS`'s default: five minutes, the longest a tool call may hold a run.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 300_000;

/// `MCP_RESULT_MAX_BYTES`'s default: the response body of one call, read at most (the engine
/// keeps at most 1 MiB of a tool's result for the model anyway).
pub const DEFAULT_RESULT_MAX_BYTES: usize = 1024 * 1024;

/// The longest server name: it prefixes every tool name the model sees (64 characters at
/// most, names included).
pub const MAX_SERVER_NAME: usize = 32;

/// Everything about MCP the Worker reads from its environment.
#[derive(Clone, Default)]
pub struct McpSettings {
    /// The servers that can be used, in the order configured.
    pub servers: Vec<ServerSettings>,
    /// Servers left out, each with why (a secret not set, a bad URL …); `/status` lists them.
    pub refused: Vec<(String, String)>,
    /// `MCP_SERVERS` itself does not parse: no server is used, and this says why.
    pub problem: Option<String>,
    /// `MCP_CALL_TIMEOUT_MS`: a call that has not answered after this long fails.
    pub call_timeout_ms: u64,
    /// `MCP_RESULT_MAX_BYTES`: a call whose response body grows past this fails.
    pub result_max_bytes: usize,
    /// `MCP_CLIENT_SERVERS`: the hosts whose MCP servers a client may add to its session;
    /// `None` (unset): no client may add one.
    pub client_hosts: Option<Vec<HostRule>>,
    /// `MCP_CLIENT_SERVERS` does not parse: no client may add a server, and this says why.
    pub client_problem: Option<String>,
    /// `MCP_OAUTH_REDIRECT_URL`: the public URL of this Worker's `/mcp/oauth/callback`, where
    /// an authorization server sends the user back. `None`: servers that ask for OAuth are
    /// not authorized (a redirect URI taken from a request's `Host` could be pointed
    /// elsewhere by whoever sends it).
    pub oauth_redirect: Option<String>,
    /// `MCP_OAUTH_SHARED=1`: a grant is the session's, whoever made it; unset, a per-user
    /// token's holder keeps their own (session/oauth.rs).
    pub oauth_shared: bool,
}

/// The most MCP servers a client may add to one session: each is asked for its tools before a
/// run that has none of them yet, and every subrequest counts against the run's budget.
pub const MAX_CLIENT_SERVERS: usize = 8;

/// One entry of `MCP_CLIENT_SERVERS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRule {
    /// `*`: any host the URL guard lets through.
    Any,
    /// `*.example.com`: the host's subdomains (not the host itself).
    Subdomains(String),
    /// `mcp.example.com` (any port) or `mcp.example.com:8443` (that port alone).
    Host { host: String, port: Option<u16> },
}

impl HostRule {
    fn parse(entry: &str) -> Result<HostRule, String> {
        let entry = entry.trim().to_ascii_lowercase();
        if entry == "*" {
            return Ok(HostRule::Any);
        }
        if let Some(suffix) = entry.strip_prefix("*.") {
            if suffix.is_empty() || suffix.contains(['*', ':', '/']) {
                return Err(format!("{entry:?} is not a host pattern"));
            }
            return Ok(HostRule::Subdomains(format!(".{suffix}")));
        }
        // `[::1]:8080` or `host:8080`; a bare IPv6 address is written in brackets.
        let (host, port) = match entry.rsplit_once(':') {
            Some((host, port))
                if !host.is_empty() && (!host.contains(':') || host.ends_with(']')) =>
            {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| format!("{entry:?}: {port:?} is not a port"))?;
                (host.to_string(), Some(port))
            }
            _ => (entry.clone(), None),
        };
        if host.is_empty() || host.contains(['*', '/', '@', '?', '#']) {
            return Err(format!("{entry:?} is not a host"));
        }
        Ok(HostRule::Host { host, port })
    }

    /// Whether `host` (as the URL parser wrote it: lower case, an IPv6 address in brackets)
    /// on `port` is allowed by this entry.
    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        match self {
            HostRule::Any => true,
            HostRule::Subdomains(suffix) => host.ends_with(suffix.as_str()),
            HostRule::Host { host: h, port: p } => h == host && (p.is_none() || *p == port),
        }
    }
}

impl std::fmt::Debug for McpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values hold tokens: the servers are named, nothing more.
        let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("McpSettings")
            .field("servers", &names)
            .field("problem", &self.problem)
            .finish_non_exhaustive()
    }
}

/// One configured server, its secrets filled in.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// The prefix of its tools' names (`<name>_<tool>`).
    pub name: String,
    /// Its Streamable HTTP endpoint.
    pub url: String,
    /// Sent with every request to it, secrets filled in; never shown anywhere.
    pub headers: Vec<(String, String)>,
    /// Which of its tools wait for the user's approval.
    pub approval: Approval,
    /// Only these of its tools (by the server's names) are offered; `None`: all.
    pub tools: Option<Vec<String>>,
    /// Its tools' annotations (`readOnlyHint`) are believed: a read-only tool then asks no
    /// approval when `approval` is left at its default.
    pub trusted: bool,
    /// The client the operator registered for weft at its authorization server (`oauth`),
    /// used before any other (the specification's order); its secret filled in.
    pub oauth_client: Option<weft_agent::mcp::auth::Client>,
    /// Changes whenever anything above changes, so a catalog cached for an older
    /// configuration of the server is not taken for this one.
    pub fingerprint: String,
}

impl std::fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ServerSettings")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &header_names)
            .field("approval", &self.approval)
            .field("tools", &self.tools)
            .field("trusted", &self.trusted)
            .field("oauth_client", &self.oauth_client)
            .finish()
    }
}

/// Which calls of a server's tools wait for the user's approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Not said: every call asks, but a trusted server's read-only tools.
    Default,
    /// Every call asks.
    Always,
    /// No call asks.
    Never,
    /// Calls of these tools (the server's names) ask; the others do not.
    Only(Vec<String>),
}

impl ServerSettings {
    /// Whether a call of the server's tool `tool` (its own name) waits for approval, given
    /// what the server claims about it.
    pub fn needs_approval(&self, tool: &str, read_only_hint: bool) -> bool {
        match &self.approval {
            Approval::Default => !(self.trusted && read_only_hint),
            Approval::Always => true,
            Approval::Never => false,
            Approval::Only(names) => names.iter().any(|n| n == tool),
        }
    }

    /// Whether weft may authorize with OAuth at the server when it answers 401: not when the
    /// operator configured its `Authorization` (a refused static token is the operator's to
    /// fix, and a user's token would replace theirs).
    pub fn oauth(&self) -> bool {
        !self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    }

    /// Whether the operator offers the server's tool `tool` to the model.
    pub fn offers(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == tool))
    }

    /// The host of its URL, for `/status` (the path may hold a key, as some servers take one
    /// there).
    pub fn host(&self) -> &str {
        let rest = self.url.split_once("://").map_or("", |(_, r)| r);
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        authority.rsplit_once('@').map_or(authority, |(_, h)| h)
    }
}

/// A server as `MCP_SERVERS` writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    approval: Option<ApprovalEntry>,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    trusted: bool,
    /// `{client_id, client_secret?}`: read as a map, the shape `headers` already has, so
    /// serde's code for it is shared (the upload's bytes).
    #[serde(default)]
    oauth: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ApprovalEntry {
    Word(String),
    Tools(Vec<String>),
}

/// The settings' texts as the environment has them (trimmed; `None` when unset or empty).
#[derive(Debug, Default)]
pub struct Texts {
    /// `MCP_SERVERS`.
    pub servers: Option<String>,
    /// `MCP_CALL_TIMEOUT_MS`.
    pub call_timeout_ms: Option<String>,
    /// `MCP_RESULT_MAX_BYTES`.
    pub result_max_bytes: Option<String>,
    /// `MCP_CLIENT_SERVERS`.
    pub client_servers: Option<String>,
    /// `MCP_OAUTH_REDIRECT_URL`.
    pub oauth_redirect: Option<String>,
    /// `MCP_OAUTH_SHARED`.
    pub oauth_shared: Option<String>,
}

impl McpSettings {
    /// Reads the settings from their texts; `lookup` gives a secret's (or a var's) value for
    /// `${secret:NAME}`.
    pub fn read(texts: Texts, lookup: impl Fn(&str) -> Option<String>) -> McpSettings {
        let call_timeout_ms = texts
            .call_timeout_ms
            .and_then(|v| v.parse().ok())
            .filter(|ms| *ms > 0)
            .unwrap_or(DEFAULT_CALL_TIMEOUT_MS);
        let result_max_bytes = texts
            .result_max_bytes
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_RESULT_MAX_BYTES);
        let mut settings = McpSettings {
            call_timeout_ms,
            result_max_bytes,
            oauth_redirect: texts.oauth_redirect,
            oauth_shared: texts.oauth_shared.is_some_and(|v| v == "1"),
            ..McpSettings::default()
        };
        if let Some(text) = texts.client_servers {
            let rules: Result<Vec<HostRule>, String> = text
                .split([',', ' ', '\n', '\t'])
                .filter(|e| !e.trim().is_empty())
                .map(HostRule::parse)
                .collect();
            match rules {
                Ok(rules) => settings.client_hosts = Some(rules),
                // No client may add a server then: a list read in part could allow what the
                // operator did not mean to.
                Err(why) => {
                    settings.client_problem = Some(format!(
                        "MCP_CLIENT_SERVERS is a list of hosts (mcp.example.com, \
                         mcp.example.com:8443, *.example.com or *), separated by commas: {why}"
                    ));
                }
            }
        }
        let Some(text) = texts.servers else {
            return settings;
        };
        let entries: Vec<Entry> = match serde_json::from_str(&text) {
            Ok(entries) => entries,
            Err(e) => {
                settings.problem = Some(format!(
                    "MCP_SERVERS is not a JSON array of {{name, url, headers?, approval?, \
                     tools?, trusted?, oauth?}}: {e}"
                ));
                return settings;
            }
        };
        for entry in entries {
            let name = entry.name.clone();
            if settings.servers.iter().any(|s| s.name == name)
                || settings.refused.iter().any(|(n, _)| *n == name)
            {
                settings.problem = Some(format!(
                    "MCP_SERVERS names the server {name:?} twice: each name prefixes its \
                     tools, so it must be unique"
                ));
                settings.servers.clear();
                settings.refused.clear();
                return settings;
            }
            match server(entry, Some(&lookup)) {
                Ok(server) => settings.servers.push(server),
                Err(why) => settings.refused.push((name, why)),
            }
        }
        settings
    }

    /// What is wrong with the configuration, one line each, for the log.
    pub fn problems(&self) -> Vec<String> {
        self.problem
            .iter()
            .chain(&self.client_problem)
            .cloned()
            .chain(
                self.refused
                    .iter()
                    .map(|(name, why)| format!("MCP server {name:?} is not used: {why}")),
            )
            .collect()
    }

    /// The configured server named `name`.
    pub fn server(&self, name: &str) -> Option<&ServerSettings> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The server a client asks to add to its session, or why it may not: only with
    /// `MCP_CLIENT_SERVERS` set, to a host it lists, through `web_fetch`'s URL guard (a local
    /// or private host is refused even when listed, unless the entry names it with its exact
    /// port: the operator then chose that one endpoint, as for its own servers), under a name
    /// none of the operator's servers has. Its calls always ask the user's approval: nothing
    /// a client's server claims about its tools is believed.
    pub fn client_server(
        &self,
        name: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<ServerSettings, String> {
        let Some(rules) = &self.client_hosts else {
            return Err(
                "this server lets no client add MCP servers (its operator has not \
                        set MCP_CLIENT_SERVERS)"
                    .into(),
            );
        };
        if self.server(name).is_some() || self.refused.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "{name:?} names one of the operator's MCP servers: choose another name"
            ));
        }
        let parsed = url::Url::parse(url.trim())
            .map_err(|e| format!("{url:?} is not an http:// or https:// URL ({e})"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("{url:?} is not an http:// or https:// URL"));
        }
        let Some(host) = parsed.host_str() else {
            return Err(format!("{url:?} has no host"));
        };
        let port = parsed.port_or_known_default();
        let Some(rule) = rules.iter().find(|r| r.allows(host, port)) else {
            return Err(format!(
                "the host {host} is not one whose MCP servers clients may add here \
                 (MCP_CLIENT_SERVERS)"
            ));
        };
        let url = match weft_agent::tools::checked_url(url) {
            Ok(url) => url,
            Err(_)
                if matches!(rule, HostRule::Host { port: Some(_), .. })
                    && parsed.username().is_empty()
                    && parsed.password().is_none() =>
            {
                parsed.to_string()
            }
            Err(why) => return Err(why),
        };
        let entry = Entry {
            name: name.to_string(),
            url,
            headers: headers.clone(),
            approval: Some(ApprovalEntry::Word("always".into())),
            tools: None,
            trusted: false,
            oauth: BTreeMap::new(),
        };
        server(entry, None)
    }
}

/// Gives a secret's (or a var's) value by its name.
type Lookup<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// The server `entry` describes; `lookup` fills `${secret:NAME}` in its header values (an
/// operator's server), `None` takes them as written (a client's server must never be given
/// the operator's secrets).
fn server(entry: Entry, lookup: Option<&Lookup>) -> Result<ServerSettings, String> {
    let name = entry.name;
    if name.is_empty() || name.len() > MAX_SERVER_NAME {
        return Err(format!(
            "a server's name is 1 to {MAX_SERVER_NAME} characters"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && *c != '-' && *c != '_')
    {
        return Err(format!(
            "a server's name may contain only A-Z, a-z, 0-9, - and _ (not {bad:?}): it \
             prefixes the names of its tools"
        ));
    }
    let url = entry.url.trim().to_string();
    let host_given = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
    if !host_given {
        return Err(format!(
            "its url must be an http:// or https:// URL with a host (got {url:?})"
        ));
    }
    // One place fills secrets in, for headers and the OAuth client's secret alike.
    let fill = |value: &str| match lookup {
        Some(lookup) => fill_secrets(value, lookup),
        None => Ok(value.to_string()),
    };
    let mut headers = Vec::new();
    for (header, value) in &entry.headers {
        if header.is_empty()
            || !header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(format!("{header:?} is not a header name"));
        }
        let value = fill(value).map_err(|why| format!("header {header}: {why}"))?;
        if value.contains(['\r', '\n']) {
            return Err(format!("header {header}: a value cannot span lines"));
        }
        headers.push((header.clone(), value));
    }
    let approval = match entry.approval {
        None => Approval::Default,
        Some(ApprovalEntry::Word(w)) if w == "always" => Approval::Always,
        Some(ApprovalEntry::Word(w)) if w == "never" => Approval::Never,
        Some(ApprovalEntry::Word(w)) => {
            return Err(format!(
                "approval is \"always\", \"never\" or a list of tool names (got {w:?})"
            ));
        }
        Some(ApprovalEntry::Tools(names)) => Approval::Only(names),
    };
    let mut oauth_client = None;
    if !entry.oauth.is_empty() {
        let mut client_id = None;
        let mut client_secret = None;
        for (key, value) in &entry.oauth {
            match key.as_str() {
                "client_id" if !value.trim().is_empty() => client_id = Some(value.clone()),
                "client_secret" => {
                    client_secret =
                        Some(fill(value).map_err(|why| format!("oauth.client_secret: {why}"))?);
                }
                "client_id" => return Err("oauth.client_id is empty".into()),
                other => {
                    return Err(format!(
                        "oauth has client_id and client_secret, not {other:?}"
                    ))
                }
            }
        }
        oauth_client = Some(weft_agent::mcp::auth::Client {
            client_id: client_id.ok_or("oauth needs a client_id")?,
            client_secret,
            secret_in_body: false,
        });
    }
    // The secrets' values are not in the fingerprint (it is stored): their names are.
    let fingerprint = {
        let mut text = format!("{name}\n{url}\n");
        for (header, value) in &entry.headers {
            text.push_str(&format!("{header}: {value}\n"));
        }
        fnv(&text)
    };
    Ok(ServerSettings {
        name,
        url,
        headers,
        approval,
        tools: entry.tools,
        trusted: entry.trusted,
        oauth_client,
        fingerprint,
    })
}

/// `value` with every `${secret:NAME}` replaced by that setting's value; an unset one is an
/// error naming it (the value is never shown).
pub(crate) fn fill_secrets(value: &str, lookup: &Lookup<'_>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${secret:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "${secret:".len()..];
        let Some(end) = after.find('}') else {
            return Err("a ${secret:NAME} is not closed with }".into());
        };
        let name = &after[..end];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("{name:?} is not a secret's name"));
        }
        match lookup(name) {
            Some(secret) => out.push_str(&secret),
            None => {
                return Err(format!(
                    "the secret {name} is not set (`wrangler secret put {name}`, or {name}= in \
                     worker/.dev.vars)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A short, stable hash (FNV-1a, 64 bits) as hex: a fingerprint, not a secret's guard.
fn fnv(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> McpSettings {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let texts = Texts {
            servers: get("MCP_SERVERS"),
            call_timeout_ms: get("MCP_CALL_TIMEOUT_MS"),
            result_max_bytes: get("MCP_RESULT_MAX_BYTES"),
            client_servers: get("MCP_CLIENT_SERVERS"),
            oauth_redirect: get("MCP_OAUTH_REDIRECT_URL"),
            oauth_shared: get("MCP_OAUTH_SHARED"),
        };
        McpSettings::read(texts, get)
    }

    #[test]
    fn nothing_set_is_no_servers_and_the_defaults() {
        let s = read(&[]);
        assert!(s.servers.is_empty() && s.problem.is_none() && s.refused.is_empty());
        assert_eq!(s.call_timeout_ms, DEFAULT_CALL_TIMEOUT_MS);
        assert_eq!(s.result_max_bytes, DEFAULT_RESULT_MAX_BYTES);
        let s = read(&[
            ("MCP_CALL_TIMEOUT_MS", "1500"),
            ("MCP_RESULT_MAX_BYTES", "0"),
        ]);
        assert_eq!(s.call_timeout_ms, 1500);
        assert_eq!(s.result_max_bytes, DEFAULT_RESULT_MAX_BYTES);
    }

    #[test]
    fn an_oauth_client_is_read_with_its_secret_filled_and_hidden() {
        let servers = r#"[{"name":"notes","url":"https://mcp.example.com/mcp",
            "oauth":{"client_id":"weft","client_secret":"${secret:NOTES_SECRET}"}},
            {"name":"plain","url":"https://mcp.example.com/mcp"},
            {"name":"bare","url":"https://mcp.example.com/mcp","oauth":{"client_id":" "}},
            {"name":"unset","url":"https://mcp.example.com/mcp","oauth":{"client_id":"w","client_secret":"${secret:NOPE}"}}]"#;
        let s = read(&[("MCP_SERVERS", servers), ("NOTES_SECRET", "s3cr3t")]);
        let notes = s.server("notes").unwrap();
        let client = notes.oauth_client.as_ref().unwrap();
        assert_eq!(client.client_id, "weft");
        assert_eq!(client.client_secret.as_deref(), Some("s3cr3t"));
        assert!(!format!("{s:?}{notes:?}").contains("s3cr3t"));
        assert!(notes.oauth());
        assert!(s.server("plain").unwrap().oauth_client.is_none());
        let refused: Vec<&str> = s.refused.iter().map(|(_, why)| why.as_str()).collect();
        assert!(
            refused[0].contains("oauth.client_id is empty"),
            "{refused:?}"
        );
        assert!(
            refused[1].contains("oauth.client_secret: the secret NOPE is not set"),
            "{refused:?}"
        );
        let odd = read(&[(
            "MCP_SERVERS",
            r#"[{"name":"x","url":"https://a/mcp","oauth":{"id":"w"}}]"#,
        )]);
        assert!(odd.refused[0].1.contains("not \"id\""), "{:?}", odd.refused);
    }

    #[test]
    fn secrets_fill_header_values_and_stay_out_of_debug_and_the_fingerprint() {
        let servers = r#"[{"name":"linear","url":"https://mcp.linear.app/mcp",
            "headers":{"Authorization":"Bearer ${secret:LINEAR_TOKEN}"},"approval":["create_issue"],
            "tools":["search","create_issue"],"trusted":true}]"#;
        let s = read(&[("MCP_SERVERS", servers), ("LINEAR_TOKEN", "lin_123")]);
        assert_eq!(s.problems(), Vec::<String>::new());
        let server = &s.servers[0];
        assert_eq!(
            server.headers,
            [("Authorization".to_string(), "Bearer lin_123".to_string())]
        );
        assert!(!format!("{s:?}{server:?}").contains("lin_123"));
        let other = read(&[("MCP_SERVERS", servers), ("LINEAR_TOKEN", "lin_456")]);
        assert_eq!(other.servers[0].fingerprint, server.fingerprint);
        assert_eq!(server.host(), "mcp.linear.app");
        assert!(server.needs_approval("create_issue", false));
        assert!(!server.needs_approval("search", false));
        assert!(server.offers("search") && !server.offers("delete_everything"));
    }

    #[test]
    fn approval_defaults_to_asking_and_trusts_hints_only_of_trusted_servers() {
        let s = read(&[(
            "MCP_SERVERS",
            r#"[{"name":"a","url":"http://127.0.0.1:1/mcp"},
                {"name":"b","url":"http://127.0.0.1:1/mcp","trusted":true},
                {"name":"c","url":"http://127.0.0.1:1/mcp","approval":"never"},
                {"name":"d","url":"http://127.0.0.1:1/mcp","approval":"always","trusted":true}]"#,
        )]);
        let asks: Vec<(bool, bool)> = s
            .servers
            .iter()
            .map(|srv| {
                (
                    srv.needs_approval("t", true),
                    srv.needs_approval("t", false),
                )
            })
            .collect();
        assert_eq!(
            asks,
            [(true, true), (false, true), (false, false), (true, true)]
        );
    }

    #[test]
    fn a_bad_server_is_left_out_with_its_reason_and_bad_json_is_a_problem() {
        let s = read(&[(
            "MCP_SERVERS",
            r#"[{"name":"ok","url":"https://x.example/mcp"},
                {"name":"nosecret","url":"https://x.example/mcp","headers":{"Authorization":"Bearer ${secret:MISSING}"}},
                {"name":"bad.name","url":"https://x.example/mcp"},
                {"name":"ftp","url":"ftp://x.example/"},
                {"name":"word","url":"https://x.example/","approval":"sometimes"}]"#,
        )]);
        assert_eq!(s.servers.len(), 1);
        let why: Vec<&str> = s.refused.iter().map(|(_, w)| w.as_str()).collect();
        assert!(why[0].contains("the secret MISSING is not set"), "{why:?}");
        assert!(why[1].contains("not '.'"), "{why:?}");
        assert!(why[2].contains("http:// or https://"), "{why:?}");
        assert!(why[3].contains("\"always\", \"never\""), "{why:?}");
        for text in [
            "{",
            r#"{"name":"x"}"#,
            r#"[{"name":"x","url":"https://x/","colour":"red"}]"#,
            r#"[{"name":"x","url":"https://x/"},{"name":"x","url":"https://y/"}]"#,
        ] {
            let s = read(&[("MCP_SERVERS", text)]);
            assert!(s.problem.is_some(), "{text}");
            assert!(s.servers.is_empty(), "{text}");
        }
    }

    #[test]
    fn the_host_hides_userinfo_path_and_query() {
        let s = read(&[(
            "MCP_SERVERS",
            r#"[{"name":"a","url":"https://user:pw@mcp.example:8443/k/SECRET?x=1"}]"#,
        )]);
        assert_eq!(s.servers[0].host(), "mcp.example:8443");
    }

    #[test]
    fn a_client_adds_a_server_only_to_a_listed_public_host_without_the_operators_secrets() {
        let ops = r#"[{"name":"docs","url":"https://docs.example/mcp"}]"#;
        let headers: BTreeMap<String, String> = [(
            "Authorization".to_string(),
            "Bearer ${secret:TOKEN}".to_string(),
        )]
        .into();
        let add = |s: &McpSettings, name: &str, url: &str| s.client_server(name, url, &headers);

        let off = read(&[("MCP_SERVERS", ops)]);
        let why = add(&off, "mine", "https://mcp.example/mcp").unwrap_err();
        assert!(why.contains("MCP_CLIENT_SERVERS"), "{why}");

        let on = read(&[
            ("MCP_SERVERS", ops),
            ("TOKEN", "operator-secret"),
            (
                "MCP_CLIENT_SERVERS",
                "mcp.example.com, *.tools.example 127.0.0.1:8790,10.0.0.1",
            ),
        ]);
        // The secrets are the operator's: a client's header value is sent as written.
        let server = add(&on, "mine", "https://mcp.example.com/mcp").unwrap();
        assert_eq!(server.headers[0].1, "Bearer ${secret:TOKEN}");
        assert!(server.needs_approval("anything", true));
        assert!(add(&on, "mine", "https://a.tools.example/mcp").is_ok());
        for (name, url, wanted) in [
            (
                "docs",
                "https://mcp.example.com/mcp",
                "names one of the operator's",
            ),
            ("mine", "https://other.example/mcp", "not one whose"),
            ("mine", "https://tools.example/mcp", "not one whose"),
            ("mine", "ftp://mcp.example.com/", "not an http"),
            (
                "bad.name",
                "https://mcp.example.com/mcp",
                "may contain only",
            ),
            // Listed without its port: the guard refuses a private address.
            ("mine", "http://10.0.0.1/mcp", "only public hosts"),
            ("mine", "http://127.0.0.1:8791/mcp", "not one whose"),
            ("mine", "http://u:p@127.0.0.1:8790/mcp", "credentials"),
        ] {
            let why = add(&on, name, url).unwrap_err();
            assert!(why.contains(wanted), "{url}: {why}");
        }
        // Listed with its exact port: the operator chose that endpoint.
        assert!(add(&on, "mine", "http://127.0.0.1:8790/mcp").is_ok());

        let bad = read(&[("MCP_CLIENT_SERVERS", "mcp.example.com, https://x/")]);
        assert!(bad.client_problem.is_some() && bad.client_hosts.is_none());
        assert_eq!(bad.problems().len(), 1);
        let any = read(&[("MCP_CLIENT_SERVERS", "*")]);
        assert!(add(&any, "mine", "https://anything.example/mcp").is_ok());
        let why = add(&any, "mine", "http://localhost:8790/mcp").unwrap_err();
        assert!(why.contains("only public hosts"), "{why}");
    }
}
