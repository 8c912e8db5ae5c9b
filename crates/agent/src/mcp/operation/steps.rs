//! The steps of an operation: which request comes next, and what each answer leads to (the
//! probe, the 2025 handshake, the goal, a new listing after a header mismatch), and the error
//! a failed step reports.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::super::error::McpError;
use super::super::request::{self, Message};
use super::super::tool::{self, HeaderParam};
use super::super::{Action, Outcome, ServerState};
use super::super::{Era, LEGACY_VERSIONS, MODERN_VERSION};
use super::{Current, Goal, Operation, Relist, Reply, Step};
use super::{HEADER_MISMATCH, MODERN_ERRORS, UNSUPPORTED_VERSION};
use crate::mcp::exchange::Exchange;

impl Operation {
    /// Starts from what the state knows.
    pub(super) fn begin(&mut self) {
        match (self.state.era, self.state.initialized) {
            (None, _) => self.send_discover(),
            (Some(Era::Modern), _) | (Some(Era::Legacy), true) => self.send_goal(),
            (Some(Era::Legacy), false) => self.send_initialize(),
        }
    }

    pub(super) fn send_discover(&mut self) {
        self.step = Step::Discover;
        self.send(Era::Modern, "server/discover", Map::new(), &[]);
    }

    pub(super) fn send_initialize(&mut self) {
        self.step = Step::Initialize;
        self.state.session_id = None;
        self.state.initialized = false;
        self.send(Era::Legacy, "initialize", request::initialize_params(), &[]);
    }

    pub(super) fn send_initialized(&mut self) {
        self.step = Step::Initialized;
        let request = self.next_request();
        let message = Message::Notification {
            method: "notifications/initialized",
        };
        let http = request::http_request(
            request,
            &self.server,
            &self.state,
            Era::Legacy,
            &message,
            &[],
        );
        self.current = Some(Current {
            request,
            rpc_id: None,
            method: "notifications/initialized",
            with_session: self.state.session_id.is_some(),
            exchange: Exchange::new(self.limits.max_response_bytes),
            garbage: None,
        });
        self.out.push_back(Action::Send(http));
    }

    pub(super) fn send_goal(&mut self) {
        self.step = Step::Goal;
        let era = self.state.era.unwrap_or(Era::Modern);
        match &self.goal {
            Goal::List { cursor, .. } => {
                let mut params = Map::new();
                if let Some(cursor) = cursor {
                    params.insert("cursor".into(), cursor.clone().into());
                }
                self.send(era, "tools/list", params, &[]);
            }
            Goal::Call {
                name,
                arguments,
                header_params,
            } => {
                let mut params = Map::new();
                params.insert("name".into(), name.clone().into());
                params.insert("arguments".into(), arguments.clone());
                let mut meta = Map::new();
                meta.insert("progressToken".into(), self.key.clone().into());
                params.insert("_meta".into(), Value::Object(meta));
                let header_params = header_params.clone();
                self.send(era, "tools/call", params, &header_params);
            }
        }
    }

    pub(super) fn send(
        &mut self,
        era: Era,
        method: &'static str,
        params: Map<String, Value>,
        header_params: &[HeaderParam],
    ) {
        self.next_rpc += 1;
        let rpc_id = Value::String(format!("{}#{}", self.key, self.next_rpc));
        let request = self.next_request();
        let message = Message::Request {
            id: &rpc_id,
            method,
            params,
        };
        let http = request::http_request(
            request,
            &self.server,
            &self.state,
            era,
            &message,
            header_params,
        );
        self.current = Some(Current {
            request,
            rpc_id: Some(rpc_id),
            method,
            with_session: era == Era::Legacy && self.state.session_id.is_some(),
            exchange: Exchange::new(self.limits.max_response_bytes),
            garbage: None,
        });
        self.out.push_back(Action::Send(http));
    }

    pub(super) fn finish(&mut self, outcome: Result<Outcome, McpError>) {
        // A 401 is the server asking for authorization: the host starts the OAuth flow from
        // its challenge.
        let outcome = match outcome {
            Err(McpError::Http {
                server,
                status: 401,
                message,
            }) => {
                self.unauthorized = true;
                Err(McpError::Unauthorized {
                    server,
                    challenge: self.challenge.clone(),
                    message,
                })
            }
            other => other,
        };
        self.finished = true;
        self.current = None;
        self.out.push_back(Action::Done(outcome));
    }

    pub(super) fn fail(&mut self, error: McpError) {
        self.finish(Err(error));
    }

    /// The request that decides the next step has its answer: take the next step.
    pub(super) fn settle(&mut self, reply: Reply) {
        let Some(current) = self.current.take() else {
            return;
        };
        let server = self.server.name.clone();
        let method = current.method;
        match self.step {
            Step::Discover => self.after_discover(reply),
            Step::Initialize => self.after_initialize(reply, current.exchange.session_id),
            Step::Initialized => match reply {
                Reply::Empty | Reply::Result(_) => {
                    self.state.initialized = true;
                    self.send_goal();
                }
                other => {
                    let error = self.error(other, method);
                    self.fail(error);
                }
            },
            Step::Relist => self.after_relist(reply),
            Step::Goal => {
                let status = match &reply {
                    Reply::Error { status, .. } | Reply::Status { status, .. } => *status,
                    _ => 0,
                };
                let era = self.state.era.unwrap_or(Era::Modern);
                if era == Era::Legacy
                    && current.with_session
                    && matches!(status, 404 | 400)
                    && !is_plain_rpc_error(&reply)
                {
                    // The server forgot the session (404 says so; some servers say 400).
                    if self.reinitialized {
                        self.fail(McpError::SessionLost { server });
                    } else {
                        self.reinitialized = true;
                        self.send_initialize();
                    }
                    return;
                }
                if let (
                    Reply::Error {
                        code: HEADER_MISMATCH,
                        ..
                    },
                    true,
                    Goal::Call { .. },
                ) = (
                    &reply,
                    era == Era::Modern && self.refreshed.is_none(),
                    &self.goal,
                ) {
                    // The tool's `x-mcp-header` parameters may have changed: list again, find
                    // the tool, then call once more with its headers (as the spec advises).
                    let mismatch = self.error(reply, method);
                    self.relisting = Some(Relist {
                        cursor: None,
                        pages: 0,
                        mismatch,
                    });
                    self.send_relist();
                    return;
                }
                if era == Era::Modern && !self.reprobed && stale_era(&reply) {
                    // The remembered era stopped working: probe again, once.
                    self.reprobed = true;
                    self.state = ServerState::default();
                    self.send_discover();
                    return;
                }
                self.after_goal(reply, method);
            }
        }
    }

    pub(super) fn send_relist(&mut self) {
        self.step = Step::Relist;
        let mut params = Map::new();
        if let Some(cursor) = self.relisting.as_ref().and_then(|r| r.cursor.clone()) {
            params.insert("cursor".into(), cursor.into());
        }
        self.send(Era::Modern, "tools/list", params, &[]);
    }

    pub(super) fn after_relist(&mut self, reply: Reply) {
        let Some(mut relist) = self.relisting.take() else {
            return;
        };
        let Goal::Call {
            name,
            header_params,
            ..
        } = &mut self.goal
        else {
            return;
        };
        let Reply::Result(result) = reply else {
            self.fail(relist.mismatch);
            return;
        };
        relist.pages += 1;
        let listed = result.get("tools").and_then(Value::as_array);
        let found = listed
            .into_iter()
            .flatten()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name.as_str()));
        match found.map(|t| tool::parse_tool(t, true)) {
            Some(Ok(fresh)) => {
                *header_params = fresh.header_params.clone();
                self.refreshed = Some(fresh);
                self.send_goal();
            }
            // Gone, or its definition is now invalid: the server's error stands.
            Some(Err(_)) => self.fail(relist.mismatch),
            None => {
                let next = result
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(String::from);
                if next.is_some() && next != relist.cursor && relist.pages < self.limits.max_pages {
                    relist.cursor = next;
                    self.relisting = Some(relist);
                    self.send_relist();
                } else {
                    self.fail(relist.mismatch);
                }
            }
        }
    }

    pub(super) fn after_discover(&mut self, reply: Reply) {
        match reply {
            Reply::Result(result) => {
                let supported = strings(result.get("supportedVersions"));
                if supported.iter().any(|v| v == MODERN_VERSION) {
                    self.state.era = Some(Era::Modern);
                    self.state.protocol_version = Some(MODERN_VERSION.into());
                    self.state.session_id = None;
                    self.state.initialized = false;
                    self.send_goal();
                } else if supported.is_empty() || speaks_legacy(&supported) {
                    // No `supportedVersions`: not a current-revision answer.
                    self.send_initialize();
                } else {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: supported,
                    });
                }
            }
            Reply::Error {
                code: UNSUPPORTED_VERSION,
                data,
                ..
            } => {
                let supported = strings(data.as_ref().and_then(|d| d.get("supported")));
                if speaks_legacy(&supported) {
                    self.send_initialize();
                } else {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: supported,
                    });
                }
            }
            Reply::Error { code, .. } if MODERN_ERRORS.contains(&code) => {
                let error = self.error(reply, "server/discover");
                self.fail(error);
            }
            // Credentials do not get better in another era, and a cut or a flood is no
            // answer about the era at all.
            Reply::Error {
                status: 401 | 403, ..
            }
            | Reply::Status {
                status: 401 | 403, ..
            }
            | Reply::Failed { .. }
            | Reply::TooLarge => {
                let error = self.error(reply, "server/discover");
                self.fail(error);
            }
            // Anything else is not the current revision speaking: fall back to 2025.
            Reply::Error { .. } | Reply::Status { .. } | Reply::Empty | Reply::Garbage(_) => {
                self.send_initialize();
            }
        }
    }

    pub(super) fn after_initialize(&mut self, reply: Reply, session_id: Option<String>) {
        match reply {
            Reply::Result(result) => {
                let version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !LEGACY_VERSIONS.contains(&version) {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: alloc::vec![version.to_string()],
                    });
                    return;
                }
                self.state.era = Some(Era::Legacy);
                self.state.protocol_version = Some(version.into());
                self.state.session_id = session_id;
                self.send_initialized();
            }
            other => {
                let error = self.error(other, "initialize");
                self.fail(error);
            }
        }
    }

    pub(super) fn after_goal(&mut self, reply: Reply, method: &'static str) {
        let Reply::Result(result) = reply else {
            let error = self.error(reply, method);
            self.fail(error);
            return;
        };
        let modern = self.state.era == Some(Era::Modern);
        if modern {
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => {}
                Some("input_required") => {
                    self.fail(McpError::InputRequired {
                        server: self.server.name.clone(),
                    });
                    return;
                }
                Some(other) => {
                    self.fail(McpError::Malformed {
                        server: self.server.name.clone(),
                        detail: format!("a result of unknown resultType `{other}`"),
                    });
                    return;
                }
            }
        }
        match &mut self.goal {
            Goal::Call { .. } => {
                self.finish(Ok(Outcome::Called(tool::tool_result(&result))));
            }
            Goal::List {
                cursor,
                pages,
                catalog,
            } => {
                *pages += 1;
                if *pages == 1 {
                    catalog.ttl_ms = result.get("ttlMs").and_then(Value::as_u64);
                }
                let listed = result
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for entry in listed {
                    if catalog.tools.len() >= self.limits.max_tools {
                        catalog.truncated = true;
                        break;
                    }
                    match tool::parse_tool(entry, modern) {
                        Ok(tool) => catalog.tools.push(tool),
                        Err(rejected) => catalog.rejected.push(rejected),
                    }
                }
                let next = result
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(String::from);
                let more = next.is_some() && *cursor != next;
                let room = catalog.tools.len() < self.limits.max_tools;
                if more && room && !catalog.truncated && *pages < self.limits.max_pages {
                    *cursor = next;
                    self.send_goal();
                } else {
                    if more {
                        catalog.truncated = true;
                    }
                    let catalog = core::mem::take(catalog);
                    self.finish(Ok(Outcome::Tools(catalog)));
                }
            }
        }
    }

    /// The error a failed step reports.
    pub(super) fn error(&self, reply: Reply, method: &str) -> McpError {
        let server = self.server.name.clone();
        match reply {
            Reply::Error {
                code: UNSUPPORTED_VERSION,
                data,
                ..
            } => McpError::UnsupportedVersion {
                server,
                offered: strings(data.as_ref().and_then(|d| d.get("supported"))),
            },
            Reply::Error {
                status,
                code,
                message,
                ..
            } if (200..300).contains(&status) || MODERN_ERRORS.contains(&code) || status == 0 => {
                McpError::Rpc {
                    server,
                    method: method.into(),
                    code,
                    message,
                }
            }
            Reply::Error {
                status, message, ..
            }
            | Reply::Status {
                status,
                text: message,
            } => McpError::Http {
                server,
                status,
                message,
            },
            Reply::Failed {
                began: false,
                reason,
            } => McpError::Unreachable { server, reason },
            Reply::Failed {
                began: true,
                reason,
            } => McpError::Interrupted {
                server,
                method: method.into(),
                reason,
            },
            Reply::Garbage(text) => McpError::Malformed {
                server,
                detail: if text.is_empty() {
                    "an empty answer".into()
                } else {
                    format!("`{text}`")
                },
            },
            Reply::TooLarge => McpError::TooLarge {
                server,
                limit: self.limits.max_response_bytes,
            },
            Reply::Empty | Reply::Result(_) => McpError::Malformed {
                server,
                detail: "no answer in a successful response".into(),
            },
        }
    }
}

/// A JSON-RPC error about the request itself (bad params, unknown tool) rather than about the
/// session: such a 400 is not a forgotten session.
fn is_plain_rpc_error(reply: &Reply) -> bool {
    matches!(reply, Reply::Error { code, .. } if matches!(*code, -32602 | -32601 | -32700))
}

/// A remembered current-era server answered the way only a server of another era would.
fn stale_era(reply: &Reply) -> bool {
    match reply {
        Reply::Error { status, code, .. } => {
            !MODERN_ERRORS.contains(code) && matches!(status, 400 | 404 | 405) && *code != -32601
                || *code == UNSUPPORTED_VERSION
        }
        Reply::Status { status, .. } => matches!(status, 400 | 404 | 405),
        _ => false,
    }
}

fn speaks_legacy(versions: &[String]) -> bool {
    versions
        .iter()
        .any(|v| LEGACY_VERSIONS.contains(&v.as_str()))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}
