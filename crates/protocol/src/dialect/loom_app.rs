//! loom's web app: the requests its UI (`web/` at the loom repository's head, newer than the
//! spec) sends, and the replies its newer server gives, so that UI runs on weft's loom endpoint
//! unchanged. The spec's documents have none of them; their shapes are the newer server's
//! (`ClientRequest` / `ServerResponse` there: each reply's `type` is its request's).
//!
//! What weft answers (README, "loom's web app"): the models are the one the Worker is
//! configured with; the agents are weft's; the workspaces are the session's own workspace
//! (a session has exactly one), and its threads the session itself; `cancel_run` cancels.

use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use crate::command::Command;
use crate::field::Fields;
use crate::Error;

/// One request of loom's web app, with the `id` its reply carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppQuery {
    pub id: String,
    pub request: AppRequest,
}

/// What loom's web app asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppRequest {
    /// The models a run may use.
    ListModels,
    /// Use this model for the session's runs.
    SetModel { model_id: String },
    /// The agents a run may name.
    AgentList,
    /// The workspaces.
    WorkspaceList,
    /// A new workspace.
    WorkspaceCreate { name: Option<String> },
    /// The threads of a workspace.
    WorkspaceThreadList { workspace_id: String },
    /// Add a thread to a workspace.
    WorkspaceThreadAdd {
        workspace_id: String,
        thread_id: String,
    },
    /// Take a thread out of a workspace.
    WorkspaceThreadRemove {
        workspace_id: String,
        thread_id: String,
    },
    /// Stop a run.
    CancelRun { run_id: String },
}

impl AppRequest {
    /// The request's (and its reply's) `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            AppRequest::ListModels => "list_models",
            AppRequest::SetModel { .. } => "set_model",
            AppRequest::AgentList => "agent_list",
            AppRequest::WorkspaceList => "workspace_list",
            AppRequest::WorkspaceCreate { .. } => "workspace_create",
            AppRequest::WorkspaceThreadList { .. } => "workspace_thread_list",
            AppRequest::WorkspaceThreadAdd { .. } => "workspace_thread_add",
            AppRequest::WorkspaceThreadRemove { .. } => "workspace_thread_remove",
            AppRequest::CancelRun { .. } => "cancel_run",
        }
    }
}

/// Decodes one of the app's requests, or `None` when `kind` is not one.
pub(crate) fn decode_request(kind: &str, f: Fields<'_>) -> Option<Result<Command, Error>> {
    let request = || -> Result<AppRequest, Error> {
        Ok(match kind {
            "list_models" => AppRequest::ListModels,
            "set_model" => AppRequest::SetModel {
                model_id: f.req("model_id")?,
            },
            "agent_list" => AppRequest::AgentList,
            "workspace_list" => AppRequest::WorkspaceList,
            "workspace_create" => AppRequest::WorkspaceCreate {
                name: f.opt("name")?,
            },
            "workspace_thread_list" => AppRequest::WorkspaceThreadList {
                workspace_id: f.req("workspace_id")?,
            },
            "workspace_thread_add" => AppRequest::WorkspaceThreadAdd {
                workspace_id: f.req("workspace_id")?,
                thread_id: f.req("thread_id")?,
            },
            "workspace_thread_remove" => AppRequest::WorkspaceThreadRemove {
                workspace_id: f.req("workspace_id")?,
                thread_id: f.req("thread_id")?,
            },
            _ => AppRequest::CancelRun {
                run_id: f.req("run_id")?,
            },
        })
    };
    match kind {
        "list_models"
        | "set_model"
        | "agent_list"
        | "workspace_list"
        | "workspace_create"
        | "workspace_thread_list"
        | "workspace_thread_add"
        | "workspace_thread_remove"
        | "cancel_run" => Some((|| {
            Ok(Command::LoomApp(AppQuery {
                id: f.req("id")?,
                request: request()?,
            }))
        })()),
        _ => None,
    }
}

/// A model, as `list_models` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub provider: &'a str,
}

/// An agent, as `agent_list` lists it (`source` is where the newer server found its
/// profile: weft's are all `builtin`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentSummary<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub source: &'static str,
}

/// A workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkspaceMeta<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    pub created_at_ms: i64,
}

/// A thread of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadInWorkspace<'a> {
    pub thread_id: &'a str,
    pub created_at_ms: i64,
}

/// The reply to one of the app's requests, as the newer loom server writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppReply<'a> {
    ListModels {
        id: &'a str,
        models: Vec<ModelInfo<'a>>,
    },
    SetModel {
        id: &'a str,
        success: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
    AgentList {
        id: &'a str,
        agents: Vec<AgentSummary<'a>>,
    },
    WorkspaceList {
        id: &'a str,
        workspaces: Vec<WorkspaceMeta<'a>>,
    },
    /// The newer server sends `workspace_id`; its UI reads `workspace.id`: both are here.
    WorkspaceCreate {
        id: &'a str,
        workspace_id: &'a str,
        workspace: WorkspaceMeta<'a>,
    },
    WorkspaceThreadList {
        id: &'a str,
        workspace_id: &'a str,
        threads: Vec<ThreadInWorkspace<'a>>,
    },
    WorkspaceThreadAdd {
        id: &'a str,
        workspace_id: &'a str,
        thread_id: &'a str,
    },
    WorkspaceThreadRemove {
        id: &'a str,
        workspace_id: &'a str,
        thread_id: &'a str,
    },
    CancelRun {
        id: &'a str,
        run_id: &'a str,
    },
}

impl AppReply<'_> {
    /// The frame (JSON text).
    pub fn to_frame(&self) -> String {
        // Serializing these structs cannot fail: string keys, no floats.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, Limits};

    fn decode(frame: &str) -> Result<Command, Error> {
        Dialect::Loom.decode_request(frame.as_bytes(), Limits::default())
    }

    #[test]
    fn the_app_s_requests_decode_and_bad_ones_are_refused() {
        let q = |frame: &str| match decode(frame) {
            Ok(Command::LoomApp(q)) => (q.id, q.request),
            other => panic!("{frame}: {other:?}"),
        };
        assert_eq!(
            q(r#"{"type":"list_models","id":"m1"}"#),
            ("m1".into(), AppRequest::ListModels)
        );
        assert_eq!(
            q(r#"{"type":"cancel_run","id":"c1","run_id":"r1"}"#).1,
            AppRequest::CancelRun {
                run_id: "r1".into()
            }
        );
        assert_eq!(
            q(r#"{"type":"agent_list","id":"a1","source_filter":"builtin"}"#).1,
            AppRequest::AgentList
        );
        assert!(decode(r#"{"type":"set_model","id":"s1"}"#).is_err());
        assert!(decode(r#"{"type":"workspace_list"}"#).is_err());
    }

    #[test]
    fn replies_are_the_newer_server_s_frames() {
        let reply = AppReply::WorkspaceCreate {
            id: "w1",
            workspace_id: "sess-1",
            workspace: WorkspaceMeta {
                id: "sess-1",
                name: None,
                created_at_ms: 7,
            },
        };
        assert_eq!(
            reply.to_frame(),
            r#"{"type":"workspace_create","id":"w1","workspace_id":"sess-1","workspace":{"id":"sess-1","created_at_ms":7}}"#
        );
        let reply = AppReply::SetModel {
            id: "s1",
            success: false,
            error: Some("no"),
        };
        assert_eq!(
            reply.to_frame(),
            r#"{"type":"set_model","id":"s1","success":false,"error":"no"}"#
        );
    }
}
