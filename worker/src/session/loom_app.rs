//! loom's web app on the loom endpoint (`weft_protocol::dialect::loom_app`): the models, agents
//! and workspaces its UI asks for before it enables its composer, and its `cancel_run`.
//!
//! weft has one model (the one configured), weft's agents, and one workspace per session: the
//! session's own, whose one thread is the session itself. So `workspace_create` names the
//! session's workspace, `workspace_thread_add` / `_remove` change nothing, and `set_model`
//! succeeds only for the configured model, as the newer loom server answers what it cannot
//! do (`success: false` with why).

use weft_protocol::dialect::loom_app::{
    AgentSummary, AppQuery, AppReply, AppRequest, ModelInfo, ThreadInWorkspace, WorkspaceMeta,
};
use weft_protocol::Agent;
use worker::WebSocket;

use super::commands::{unreadable, ACTIVE_RUN};
use super::socket::SocketInfo;
use super::{error_event, Session};

/// The agents a run may name, with what each does: `agent_list` answers with them. The one
/// place that lists them for clients (the Worker's agent table, when it has one, is read here).
pub(super) fn agents() -> Vec<(String, String)> {
    [
        (
            Agent::React,
            "Reason and act: the model calls tools until it can answer",
        ),
        (Agent::Dup, "Understand, plan, act, observe"),
        (
            Agent::Tot,
            "Tree of thoughts: propose next steps, score them, act on the best, backtrack",
        ),
        (
            Agent::Got,
            "Graph of thoughts: plan sub-tasks as a graph and run them",
        ),
    ]
    .into_iter()
    .map(|(agent, description)| (agent.as_str().to_string(), description.to_string()))
    .collect()
}

impl Session {
    /// Answers one request of loom's web app.
    pub(super) async fn loom_app(&self, ws: &WebSocket, info: &SocketInfo, q: AppQuery) {
        let AppQuery { id, request } = q;
        let session = self.session_id(info);
        // A session keeps no creation time; its workspace is as old as the answer.
        let now = js_sys::Date::now() as i64;
        let workspace = WorkspaceMeta {
            id: &session,
            name: None,
            created_at_ms: now,
        };
        let foreign = |workspace_id: &str| workspace_id != session;
        let frame = match &request {
            AppRequest::ListModels => {
                let config = self.settings.model.config();
                let models = config
                    .map(|c| ModelInfo {
                        id: &c.model,
                        name: &c.model,
                        provider: c.provider.as_str(),
                    })
                    .into_iter()
                    .collect();
                AppReply::ListModels { id: &id, models }.to_frame()
            }
            AppRequest::SetModel { model_id } => {
                let configured = self.settings.model.config().map(|c| c.model.as_str());
                let error = (configured != Some(model_id.as_str()))
                    .then_some("weft runs every session on the model it is configured with");
                let success = error.is_none();
                AppReply::SetModel {
                    id: &id,
                    success,
                    error,
                }
                .to_frame()
            }
            AppRequest::AgentList => {
                let agents = agents();
                let agents = agents
                    .iter()
                    .map(|(name, description)| AgentSummary {
                        name,
                        description,
                        source: "builtin",
                    })
                    .collect();
                AppReply::AgentList { id: &id, agents }.to_frame()
            }
            AppRequest::WorkspaceList => AppReply::WorkspaceList {
                id: &id,
                workspaces: vec![workspace.clone()],
            }
            .to_frame(),
            AppRequest::WorkspaceCreate { .. } => AppReply::WorkspaceCreate {
                id: &id,
                workspace_id: &session,
                workspace: workspace.clone(),
            }
            .to_frame(),
            AppRequest::WorkspaceThreadList { workspace_id }
            | AppRequest::WorkspaceThreadAdd { workspace_id, .. }
            | AppRequest::WorkspaceThreadRemove { workspace_id, .. }
                if foreign(workspace_id) =>
            {
                let msg = format!("no workspace {workspace_id} here: this session's is {session}");
                return self.reply(ws, info, error_event(&msg, "not_found", Some(id)));
            }
            AppRequest::WorkspaceThreadList { workspace_id } => AppReply::WorkspaceThreadList {
                id: &id,
                workspace_id,
                threads: vec![ThreadInWorkspace {
                    thread_id: &session,
                    created_at_ms: now,
                }],
            }
            .to_frame(),
            AppRequest::WorkspaceThreadAdd {
                workspace_id,
                thread_id,
            } => AppReply::WorkspaceThreadAdd {
                id: &id,
                workspace_id,
                thread_id,
            }
            .to_frame(),
            AppRequest::WorkspaceThreadRemove {
                workspace_id,
                thread_id,
            } => AppReply::WorkspaceThreadRemove {
                id: &id,
                workspace_id,
                thread_id,
            }
            .to_frame(),
            AppRequest::CancelRun { run_id } => {
                let active = match self.is_active(run_id) {
                    Ok(active) => active,
                    Err(e) => {
                        return self.reply(ws, info, unreadable(ACTIVE_RUN, &e, Some(id.clone())))
                    }
                };
                if !active {
                    // The newer loom server's words.
                    let msg = format!("Run {run_id} not found or already completed");
                    return self.reply(ws, info, error_event(&msg, "no_active_run", Some(id)));
                }
                self.cancel(ws, info, run_id).await;
                AppReply::CancelRun { id: &id, run_id }.to_frame()
            }
        };
        if let Err(e) = ws.send_with_str(frame) {
            // The socket is closing; its close handler cleans up after it.
            worker::console_warn!("reply not sent: {e}");
        }
    }
}
