//! App calls that wait for a reply (`ping()`, `toolsList()`, `toolShow()`, `userMessages()`,
//! `contextInfo()`, `compact()`, `addMcpServer()`), and which incoming event answers which of them: by request
//! id where the dialect names one, else the oldest request of its kind still waiting.

use weft_protocol::command::{
    AddMcpServer, ToolFormat, ToolShowQuery, ToolsQuery, UserMessagesQuery,
};
use weft_protocol::event::Sequenced;
use weft_protocol::json::RawJson;
use weft_protocol::{Command, Event};

use super::{Connection, Output, Request, RunHandle, Tag};
use crate::error::{Error, ErrorCode};
use crate::types::{
    CompactResult, ContextInfo, McpServerOptions, ToolDefinition, UserMessagesOptions,
    UserMessagesPage,
};

/// What kind of reply a request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Ping,
    ToolsList,
    ToolShow,
    UserMessages,
    ContextInfo,
    Compact,
    AddMcpServer,
}

impl RequestKind {
    /// Every kind, in the order `dialectInfo()` lists them.
    pub const ALL: [RequestKind; 7] = [
        RequestKind::Ping,
        RequestKind::ToolsList,
        RequestKind::ToolShow,
        RequestKind::UserMessages,
        RequestKind::ContextInfo,
        RequestKind::Compact,
        RequestKind::AddMcpServer,
    ];

    /// A request of this kind with no particular content, to ask a dialect whether it serves
    /// such requests at all ([`Dialect::serves`]).
    pub fn sample(self) -> Command {
        match self {
            RequestKind::Ping => Command::Ping { id: String::new() },
            RequestKind::ToolsList => Command::ToolsList(ToolsQuery {
                id: String::new(),
                working_folder: None,
                thread_id: None,
            }),
            RequestKind::ToolShow => Command::ToolShow(ToolShowQuery {
                id: String::new(),
                name: String::new(),
                output: None,
                working_folder: None,
                thread_id: None,
            }),
            RequestKind::UserMessages => Command::UserMessages(UserMessagesQuery {
                id: String::new(),
                thread_id: String::new(),
                before: None,
                limit: None,
            }),
            RequestKind::ContextInfo => Command::ContextInfo { id: None },
            RequestKind::Compact => Command::Compact { id: None },
            RequestKind::AddMcpServer => Command::AddMcpServer(AddMcpServer {
                id: String::new(),
                name: String::new(),
                url: String::new(),
                headers: Default::default(),
            }),
        }
    }

    /// The method's name, as `dialectInfo().requests` lists it.
    pub fn name(self) -> &'static str {
        let method = self.method();
        method.strip_suffix("()").unwrap_or(method)
    }

    /// The method that asks it, for errors.
    pub fn method(self) -> &'static str {
        match self {
            RequestKind::Ping => "ping()",
            RequestKind::ToolsList => "toolsList()",
            RequestKind::ToolShow => "toolShow()",
            RequestKind::UserMessages => "userMessages()",
            RequestKind::ContextInfo => "contextInfo()",
            RequestKind::Compact => "compact()",
            RequestKind::AddMcpServer => "addMcpServer()",
        }
    }
}

/// A reply, decoded for the request that asked for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `ping()`: the round trip in ms.
    Pong(f64),
    Tools(Vec<ToolDefinition>),
    /// `toolShow()`: the JSON definition, or the YAML text as a string.
    Tool(RawJson),
    Messages(UserMessagesPage),
    Context(ContextInfo),
    Compacted(CompactResult),
}

impl Connection {
    /// `ping()`: returns the request id; the reply is the round trip in ms.
    pub fn ping(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("ping");
        let cmd = Command::Ping { id: id.clone() };
        self.request(cmd, id, RequestKind::Ping, String::new(), "ping()", now)
    }

    pub fn tools_list(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("tools");
        let cmd = Command::ToolsList(ToolsQuery {
            id: id.clone(),
            working_folder: None,
            thread_id: self.cfg.session_id.clone(),
        });
        self.request(
            cmd,
            id,
            RequestKind::ToolsList,
            String::new(),
            "toolsList()",
            now,
        )
    }

    pub fn tool_show(&mut self, name: &str, json: bool, now: f64) -> Result<String, Error> {
        let id = self.new_id("tool");
        let cmd = Command::ToolShow(ToolShowQuery {
            id: id.clone(),
            name: name.into(),
            output: Some(if json {
                ToolFormat::Json
            } else {
                ToolFormat::Yaml
            }),
            working_folder: None,
            thread_id: self.cfg.session_id.clone(),
        });
        self.request(
            cmd,
            id,
            RequestKind::ToolShow,
            String::new(),
            "toolShow()",
            now,
        )
    }

    pub fn user_messages(
        &mut self,
        thread_id: &str,
        opts: UserMessagesOptions,
        now: f64,
    ) -> Result<String, Error> {
        if thread_id.is_empty() {
            return Err(Error::argument(
                "userMessages(): threadId must not be empty",
            ));
        }
        let id = self.new_id("messages");
        let cmd = Command::UserMessages(UserMessagesQuery {
            id: id.clone(),
            thread_id: thread_id.into(),
            before: opts.before,
            limit: opts.limit,
        });
        let thread = String::from(thread_id);
        self.request(
            cmd,
            id,
            RequestKind::UserMessages,
            thread,
            "userMessages()",
            now,
        )
    }

    /// `contextInfo()` (agentloop `get_context_info`). The reply names no request: it is the
    /// next `context_info` outside a run.
    pub fn context_info(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("context");
        let cmd = Command::ContextInfo {
            id: Some(id.clone()),
        };
        self.request(
            cmd,
            id,
            RequestKind::ContextInfo,
            String::new(),
            "contextInfo()",
            now,
        )
    }

    /// `compact()` (agentloop `manual_compact`). The server answers with a compaction of its
    /// own, which names no request either: its `context_compacted` (or `error`) is the first
    /// event of a run the app did not start (see [`Connection::compaction`]).
    pub fn compact(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("compact");
        let cmd = Command::Compact {
            id: Some(id.clone()),
        };
        self.request(
            cmd,
            id,
            RequestKind::Compact,
            String::new(),
            "compact()",
            now,
        )
    }

    /// `addMcpServer()`: the server answers with the added server's tools (a `tools_list`
    /// under the request's id) or an `error` naming the request.
    pub fn add_mcp_server(&mut self, server: McpServerOptions, now: f64) -> Result<String, Error> {
        let id = self.new_id("mcp");
        let cmd = Command::AddMcpServer(AddMcpServer {
            id: id.clone(),
            name: server.name,
            url: server.url,
            headers: server.headers.unwrap_or_default(),
        });
        self.request(
            cmd,
            id,
            RequestKind::AddMcpServer,
            String::new(),
            "addMcpServer()",
            now,
        )
    }

    fn request(
        &mut self,
        cmd: Command,
        id: String,
        kind: RequestKind,
        thread_id: String,
        method: &str,
        now: f64,
    ) -> Result<String, Error> {
        self.usable(method)?;
        if self.http.is_some() {
            return Err(Error::new(
                ErrorCode::Unsupported,
                weft_protocol::text::concat(&[
                    method,
                    " is weft's own request: an AG-UI agent over HTTP runs only",
                ]),
            ));
        }
        let frame = self
            .cfg
            .dialect
            .encode_request(&cmd, &id)
            .map_err(|e| match e {
                weft_protocol::Error::Unsupported { .. } => {
                    Error::unsupported(method, self.dialect(), &cmd)
                }
                e => Error::from_protocol(&e, method),
            })?;
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new(ErrorCode::Unsupported, peer.why_not(method)));
        }
        self.requests.insert(
            id.clone(),
            Request {
                kind,
                command: cmd,
                sent: false,
                sent_at: now,
                deadline: now + self.cfg.request_timeout_ms,
                thread_id,
            },
        );
        self.send(frame, Tag::Request(id.clone()), now);
        Ok(id)
    }

    /// A reply to a request of this client (rather than an event to reassemble).
    pub(super) fn is_reply(&self, ev: &Sequenced) -> bool {
        if ev.envelope.run_id.is_some() {
            return false;
        }
        match &ev.event {
            Event::Pong { id }
            | Event::ToolsList { id, .. }
            | Event::ToolShow { id, .. }
            | Event::UserMessages { id, .. } => {
                self.requests.contains_key(id) || self.heartbeats.contains(id)
            }
            Event::Error { id: Some(id), .. } => {
                self.requests.contains_key(id)
                    || self.heartbeats.contains(id)
                    || self.runs.values().any(|r| r.run_id == *id)
            }
            Event::ContextInfo { .. } => self.oldest_sent(RequestKind::ContextInfo).is_some(),
            // A weft server's error outside any run that names no request: the refusal of a
            // `compact()` (`busy`), not the end of the run streaming meanwhile.
            Event::Error { id: None, .. } => {
                self.weft_server && self.oldest_sent(RequestKind::Compact).is_some()
            }
            _ => false,
        }
    }

    /// The request of this kind sent first and still waiting: what a reply that names no
    /// request answers.
    fn oldest_sent(&self, kind: RequestKind) -> Option<String> {
        self.requests
            .iter()
            .filter(|(_, r)| r.kind == kind && r.sent)
            .min_by(|a, b| a.1.sent_at.total_cmp(&b.1.sent_at))
            .map(|(id, _)| id.clone())
    }

    /// A pending `compact()` answered by this event: the `context_compacted` or `error` that
    /// opens a run the app did not start (the server compacts in a run of its own, whose first
    /// event is the outcome; a compaction in the middle of a run is not an answer). A refusal
    /// outside any run (`busy`) is a reply ([`Connection::reply`]).
    pub(super) fn compaction(&mut self, run: Option<RunHandle>, ev: &Sequenced) {
        let first = run.is_none() && ev.envelope.event_id.is_none_or(|id| id <= 1);
        let result = match &ev.event {
            Event::ContextCompacted {
                old_token_count,
                new_token_count,
                reduction_percent,
                strategy,
            } if first => Ok(Reply::Compacted(CompactResult {
                old_token_count: *old_token_count,
                new_token_count: *new_token_count,
                reduction_percent: *reduction_percent,
                strategy: strategy.clone(),
            })),
            Event::Error {
                message,
                code,
                id: None,
                ..
            } if first => Err(Error::new(
                code.as_deref()
                    .map_or(ErrorCode::ServerError, ErrorCode::parse),
                message.clone(),
            )),
            _ => return,
        };
        let Some(id) = self.oldest_sent(RequestKind::Compact) else {
            return;
        };
        self.requests.remove(&id);
        self.out.push_back(Output::Reply {
            id,
            kind: RequestKind::Compact,
            result,
        });
    }

    pub(super) fn reply(&mut self, ev: Sequenced, now: f64) {
        let id = match &ev.event {
            Event::Pong { id }
            | Event::ToolsList { id, .. }
            | Event::ToolShow { id, .. }
            | Event::UserMessages { id, .. }
            | Event::Error { id: Some(id), .. } => id.clone(),
            Event::ContextInfo { .. } => match self.oldest_sent(RequestKind::ContextInfo) {
                Some(id) => id,
                None => return,
            },
            Event::Error { id: None, .. } => match self.oldest_sent(RequestKind::Compact) {
                Some(id) => id,
                None => return,
            },
            _ => return,
        };
        if self.heartbeats.remove(&id) {
            return;
        }
        let Some(req) = self.requests.remove(&id) else {
            return self.run_refused(&id, ev, now);
        };
        let result = match ev.event {
            Event::Error { message, code, .. } => Err(Error::new(
                code.as_deref()
                    .map_or(ErrorCode::ServerError, ErrorCode::parse),
                message,
            )),
            Event::Pong { .. } => Ok(Reply::Pong((now - req.sent_at).max(0.0))),
            Event::ToolsList { tools, .. } => Ok(Reply::Tools(
                tools
                    .into_iter()
                    .map(|t| ToolDefinition {
                        name: t.name,
                        description: t.description,
                        input_schema: Some(t.input_schema),
                        read_only: t.read_only,
                    })
                    .collect(),
            )),
            Event::ToolShow {
                tool, tool_yaml, ..
            } => Ok(Reply::Tool(
                tool.or(tool_yaml.map(|yaml| RawJson::string(&yaml)))
                    .unwrap_or_default(),
            )),
            Event::UserMessages {
                thread_id,
                messages,
                has_more,
                active_run_id,
                ..
            } => Ok(Reply::Messages(UserMessagesPage {
                thread_id: if thread_id.is_empty() {
                    req.thread_id
                } else {
                    thread_id
                },
                messages,
                has_more: has_more.unwrap_or(false),
                active_run_id,
            })),
            Event::ContextInfo {
                token_count,
                usage_percent,
                transcript_length,
                max_tokens,
                strategy,
            } => Ok(Reply::Context(ContextInfo {
                token_count,
                usage_percent,
                transcript_length,
                max_tokens,
                strategy,
            })),
            _ => return,
        };
        self.out.push_back(Output::Reply {
            id,
            kind: req.kind,
            result,
        });
    }
}
