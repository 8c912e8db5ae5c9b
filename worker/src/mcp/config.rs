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
            ..McpSettings::default()
        };
        let Some(text) = texts.servers else {
            return settings;
        };
        let entries: Vec<Entry> = match serde_json::from_str(&text) {
            Ok(entries) => entries,
            Err(e) => {
                settings.problem = Some(format!(
                    "MCP_SERVERS is not a JSON array of {{name, url, headers?, approval?, \
                     tools?, trusted?}}: {e}"
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
            match server(entry, &lookup) {
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
}

fn server(
    entry: Entry,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<ServerSettings, String> {
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
    let mut headers = Vec::new();
    for (header, value) in &entry.headers {
        if header.is_empty()
            || !header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(format!("{header:?} is not a header name"));
        }
        let value = fill_secrets(value, lookup).map_err(|why| format!("header {header}: {why}"))?;
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
        fingerprint,
    })
}

/// `value` with every `${secret:NAME}` replaced by that setting's value; an unset one is an
/// error naming it (the value is never shown).
fn fill_secrets(value: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
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
}
