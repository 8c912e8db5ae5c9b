// loom's current web UI (`web/` at the head of hi-youichi/loom, newer than our spec), as a test
// fixture: the frames it sends, read from its source (`services/*.ts`, `hooks/*.ts`), and
// what it expects back, from its own TypeScript types (`types/protocol/loom.ts`) and the
// fields its code reads. Nothing of its code is here; `expect` checks a reply the way its
// code would use it, field by field, and throws saying what it would miss.

/** The requests the UI makes, with the fields it sends (`id` is its `crypto.randomUUID()`). */
export const requests = {
  /** `connection.ts` on open, and `useModels`. */
  listModels: (id) => ({ type: 'list_models', id }),
  /** `services/agent.ts` `listAgents()` (no filter: `useAgents`). */
  agentList: (id) => ({ type: 'agent_list', id }),
  /** `services/workspace.ts`. */
  workspaceList: (id) => ({ type: 'workspace_list', id }),
  workspaceCreate: (id, name) => ({ type: 'workspace_create', id, ...(name ? { name } : {}) }),
  workspaceThreadList: (id, workspaceId) => ({ type: 'workspace_thread_list', id, workspace_id: workspaceId }),
  workspaceThreadAdd: (id, workspaceId, threadId) => ({ type: 'workspace_thread_add', id, workspace_id: workspaceId, thread_id: threadId }),
  workspaceThreadRemove: (id, workspaceId, threadId) => ({ type: 'workspace_thread_remove', id, workspace_id: workspaceId, thread_id: threadId }),
  /** `services/userMessages.ts` (`ChatPage` asks `limit: 10` per session). */
  userMessages: (id, threadId, limit) => ({ type: 'user_messages', id, thread_id: threadId, limit }),
  /** `services/model.ts` `setSessionModel()`. */
  setModel: (id, modelId, sessionId) => ({ type: 'set_model', id, model_id: modelId, session_id: sessionId }),
  /** `services/chat.ts` `sendMessage()`: `working_folder` is undefined without its env var,
   * so JSON.stringify leaves it out. */
  run: (id, message, /** @type {{ agent: string, sessionId: string, model: string, workspaceId?: string }} */ { agent, sessionId, model, workspaceId }) => ({
    type: 'run',
    message,
    agent,
    thread_id: sessionId,
    verbose: false,
    model,
    ...(workspaceId ? { workspace_id: workspaceId } : {}),
    id,
  }),
  /** `connection.ts` `cancelRun()`. */
  cancelRun: (id, runId) => ({ type: 'cancel_run', id, run_id: runId }),
};

const fail = (what, frame) => {
  throw new Error(`loom's web UI: ${what} in ${JSON.stringify(frame).slice(0, 300)}`);
};
const string = (v) => typeof v === 'string';
const number = (v) => typeof v === 'number' && Number.isFinite(v);

/** The reply to request `id`, as `connection.ts` matches it: by `id`, an `error` rejecting. */
function reply(frame, id) {
  if (frame.id !== id) fail(`a reply to ${id} without its id`, frame);
  if (frame.type === 'error') fail(`an error (${frame.error})`, frame);
  return frame;
}

/** What the UI's code reads of each reply. */
export const expect = {
  /** `ModelInfo[]` ({ id, name, provider }); `ChatPage` picks `models[0].id`. */
  listModels(frame, id) {
    const { models } = reply(frame, id);
    if (!Array.isArray(models)) fail('no models list', frame);
    for (const m of models) if (!string(m.id) || !string(m.name) || !string(m.provider)) fail('a model without id, name or provider', frame);
    return models;
  },
  /** `AgentSummary[]` ({ name, description: string | null, source }); its sidebar enables the
   * composer once `agents[0].name` is selected. */
  agentList(frame, id) {
    const { agents } = reply(frame, id);
    if (!Array.isArray(agents) || agents.length === 0) fail('no agent to select', frame);
    for (const a of agents) {
      if (!string(a.name) || !(a.description === null || string(a.description))) fail('an agent without name or description', frame);
      if (!['builtin', 'project', 'user'].includes(a.source)) fail(`an agent of source ${a.source}`, frame);
    }
    return agents;
  },
  /** `WorkspaceMeta[]` ({ id, name?, created_at_ms }). */
  workspaceList(frame, id) {
    const { workspaces } = reply(frame, id);
    if (!Array.isArray(workspaces)) fail('no workspaces list', frame);
    for (const w of workspaces) if (!string(w.id) || !number(w.created_at_ms)) fail('a workspace without id or created_at_ms', frame);
    return workspaces;
  },
  /** `createWorkspace()` returns `resp.workspace.id`. */
  workspaceCreate(frame, id) {
    const { workspace } = reply(frame, id);
    if (!workspace || !string(workspace.id)) fail('no workspace.id', frame);
    return workspace.id;
  },
  /** `SessionInWorkspace[]` ({ thread_id, created_at_ms }). */
  workspaceThreadList(frame, id) {
    const { threads } = reply(frame, id);
    if (!Array.isArray(threads)) fail('no threads list', frame);
    for (const t of threads) if (!string(t.thread_id) || !number(t.created_at_ms)) fail('a thread without thread_id or created_at_ms', frame);
    return threads;
  },
  /** Resolved and not read. */
  resolved: (frame, id) => reply(frame, id),
  /** `UserMessageItem[]` ({ role, content }). */
  userMessages(frame, id) {
    const { messages } = reply(frame, id);
    if (!Array.isArray(messages)) fail('no messages list', frame);
    for (const m of messages) if (!string(m.role) || !string(m.content)) fail('a message without role or content', frame);
    return messages;
  },
  /** `setSessionModel()` returns `response.success`. */
  setModel(frame, id) {
    const { success } = reply(frame, id);
    if (typeof success !== 'boolean') fail('no success flag', frame);
    return success;
  },
  /** `chat.ts`: `run_stream_event`s with the run's `id` and an `event` with a `type`
   * (`message_chunk` content appended), then `run_end` with its `reply`. */
  run(frames, id) {
    const mine = frames.filter((f) => f.id === id);
    const end = mine.at(-1);
    if (end?.type !== 'run_end' || !string(end.reply)) fail('no run_end with a reply', end);
    let streamed = '';
    for (const f of mine.slice(0, -1)) {
      if (f.type !== 'run_stream_event' || !string(f.event?.type)) fail('a run frame that is no stream event', f);
      if (f.event.type === 'message_chunk') {
        if (!string(f.event.content)) fail('a message_chunk without content', f);
        streamed += f.event.content;
      }
    }
    return { reply: end.reply || streamed, streamed };
  },
};
