// Stand-ins for the four ORIGINAL servers (not weft), for tests/sdk/originals.test.mjs: each
// plays its original as ../shared/specs/ORIGINALS.md describes it on the wire, against a
// scripted model.
//
// - No subprotocol selected (`handleProtocols` returns false, so `ws` sends no
//   Sec-WebSocket-Protocol header and a client that offered one fails the handshake), except
//   agentloop's Node `ws` server, which selects the first protocol offered.
// - Their own run ids: loom names every run `run-<uuid v4>` and ignores the client's id; the
//   others name none. loom handles one request per socket at a time (a `ping` sent during a
//   run is answered after its `run_end`) and never sends `run_start`; its `run_end` has no usage.
// - Their own ends of turn: loom `run_end`, agentloop `loading_state:false` (twice), agentchat
//   its one `agent_message`, cueso `final`.
// - Their reaction to a frame outside their document: loom `error` "parse error: unknown
//   variant …" without an id; agentloop `error` "Unknown message type: X"; agentchat `error`
//   "Unknown message type: X", socket kept; cueso `error` and the socket closed. Every such
//   refusal is recorded in `refusals`, so a test can require that the client sent none.
// - agentloop has one global session: a new connection ends the previous loop, and leftovers
//   of that loop arrive on the new socket: a `loading_state:false` at once, and
//   `agent_finished`, `context_info` and another `loading_state:false` late, inside the next
//   turn before anything of it. agentchat broadcasts every event to every socket.
//
// The scripted model answers by message:
//   "Hello"             → "Hi there! How can I help?" (streamed where the dialect streams)
//   "What time is it?"  → a get_time call, then "It is 10:00 UTC."
//   "write notes"       → (agentloop) an apply_patch approval; yes → "Wrote notes.txt.",
//                         no-continue → tool output "aborted" and "I did not write it.",
//                         explain → an explanation item and the same request again
//   "drop"              → "Hal" then the socket is cut, mid-run
//   "fail" (cueso)      → an error, then the socket closed; "fail and stay": the error, and
//                         the socket kept open and deaf, as with cueso's pinned dependencies
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';

export const PLAIN = 'Hi there! How can I help?';
export const PLAIN_CHUNKS = ['Hi', ' there!', ' How can I help?'];
export const TIME = 'It is 10:00 UTC.';
export const PATCH = '*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch';
// The original's explanation ends with a newline (its example client relies on it).
export const EXPLANATION = 'apply_patch adds notes.txt to the workspace.\n';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts the stand-in of `dialect`'s original server on a free port. */
export async function startOriginal(dialect) {
  const received = [];
  const refusals = [];
  const handshakes = [];
  /** The session each cueso message went to, in order (the ones it made included). */
  const sessions = [];
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (offered) => (dialect === 'agentloop' && offered.size > 0 ? [...offered][0] : false),
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  const play = PLAYERS[dialect]({ wss, received, refusals, sessions });
  wss.on('connection', (ws, req) => {
    handshakes.push({
      url: req.url,
      offered: req.headers['sec-websocket-protocol'] ?? null,
      selected: ws.protocol || null,
    });
    ws.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(String(data));
      } catch {
        msg = { unparsable: String(data) };
      }
      received.push(msg);
      play.message(ws, msg);
    });
    play.connected?.(ws);
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (wss.address());
  return {
    url: `ws://127.0.0.1:${port}`,
    received,
    refusals,
    handshakes,
    sessions,
    close: () =>
      new Promise((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve(undefined));
      }),
  };
}

const send = (ws, frame) => {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
};

const PLAYERS = {
  // ----- loom (`loom serve`, axum) -----
  loom({ refusals }) {
    const queues = new WeakMap();
    const TOOLS = [
      { name: 'get_time', description: 'The current time', input_schema: { type: 'object', properties: { timezone: { type: 'string' } } } },
      { name: 'read', description: 'Reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    ];
    const history = [];
    async function handle(ws, msg) {
      switch (msg.type) {
        case 'ping':
          return send(ws, { type: 'pong', id: msg.id });
        case 'tools_list':
          return send(ws, { type: 'tools_list', id: msg.id, tools: TOOLS });
        case 'tool_show': {
          const tool = TOOLS.find((t) => t.name === msg.name);
          if (!tool) return send(ws, { type: 'error', id: msg.id, error: `tool not found: ${msg.name}` });
          return msg.output === 'json'
            ? send(ws, { type: 'tool_show', id: msg.id, tool })
            : send(ws, { type: 'tool_show', id: msg.id, tool_yaml: `name: ${tool.name}\ndescription: ${tool.description}\n` });
        }
        case 'user_messages':
          // The original may list the same message twice.
          return send(ws, {
            type: 'user_messages',
            id: msg.id,
            thread_id: msg.thread_id,
            messages: history.flatMap((m) => (m.role === 'user' ? [m, m] : [m])),
            has_more: false,
          });
        case 'run':
          return run(ws, msg);
        default: {
          const variant = msg.type ?? '';
          refusals.push(msg);
          return send(ws, {
            type: 'error',
            error: `parse error: unknown variant \`${variant}\`, expected one of \`run\`, \`tools_list\`, \`tool_show\`, \`user_messages\`, \`ping\` at line 1 column ${12 + variant.length}`,
          });
        }
      }
    }
    async function run(ws, msg) {
      const id = `run-${randomUUID()}`;
      let n = 0;
      const ev = (event, node = 0) =>
        send(ws, { type: 'run_stream_event', id, event: { ...event, session_id: id, node_id: `run-think-${node}`, event_id: ++n } });
      history.push({ role: 'user', content: msg.message });
      ev({ type: 'node_enter', id: 'think' });
      await sleep(5);
      let reply;
      if (msg.message === 'What time is it?') {
        ev({ type: 'tool_call_chunk', call_id: 'call_1', name: 'get_time', arguments_delta: '{"timezone":"UTC"}' });
        ev({ type: 'tool_call', call_id: 'call_1', name: 'get_time', arguments: { timezone: 'UTC' } });
        ev({ type: 'node_exit', id: 'think', result: 'Ok' });
        ev({ type: 'node_enter', id: 'act' }, 1);
        ev({ type: 'tool_start', call_id: 'call_1', name: 'get_time' }, 1);
        await sleep(5);
        ev({ type: 'tool_end', call_id: 'call_1', name: 'get_time', result: '2026-11-22T10:00:00Z', is_error: false }, 1);
        ev({ type: 'node_exit', id: 'act', result: 'Ok' }, 1);
        ev({ type: 'node_enter', id: 'think' }, 2);
        ev({ type: 'message_chunk', content: TIME, id: 'think' }, 2);
        ev({ type: 'node_exit', id: 'think', result: 'Ok' }, 2);
        reply = TIME;
      } else if (msg.message === 'drop') {
        ev({ type: 'message_chunk', content: 'Hal', id: 'think' });
        await sleep(30);
        return ws.terminate();
      } else {
        for (const c of PLAIN_CHUNKS) {
          ev({ type: 'message_chunk', content: c, id: 'think' });
          await sleep(5);
        }
        ev({ type: 'node_exit', id: 'think', result: 'Ok' });
        reply = PLAIN;
      }
      history.push({ role: 'assistant', content: reply });
      send(ws, { type: 'run_end', id, reply, session_id: id, node_id: 'run-think-0', event_id: n });
    }
    return {
      // One request at a time per socket: the next waits for the one before to finish.
      message(ws, msg) {
        const prev = queues.get(ws) ?? Promise.resolve();
        queues.set(
          ws,
          prev.then(() => handle(ws, msg)),
        );
      },
    };
  },

  // ----- agentloop (Node `ws-server.ts`) -----
  agentloop({ refusals }) {
    let current = null; // the one global loop: { ws, pending, turn }
    const frame = (type, payload) => ({ id: randomUUID(), type, payload });
    const item = (ws, payload) => send(ws, frame('response_item', payload));
    const text = (ws, id, t) => item(ws, { type: 'message', id, role: 'assistant', content: [{ type: 'output_text', text: t }] });
    const finished = (ws) => {
      send(ws, frame('agent_finished', { responseId: `resp_${randomUUID().slice(0, 8)}` }));
      send(ws, frame('context_info', { tokenCount: 120, usagePercent: 1, transcriptLength: 3, maxTokens: 12000, strategy: 'auto' }));
    };
    const end = (ws) => {
      send(ws, frame('loading_state', { loading: false }));
      send(ws, frame('loading_state', { loading: false }));
    };
    async function turn(loop, input) {
      const { ws } = loop;
      loop.turns += 1;
      send(ws, frame('loading_state', { loading: true }));
      if (loop.leftovers) {
        // The killed loop's last frames, late: inside this turn, before anything of it.
        loop.leftovers = false;
        finished(ws);
        send(ws, frame('loading_state', { loading: false }));
      }
      await sleep(5);
      if (input === 'What time is it?') {
        item(ws, { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_time', arguments: '{"timezone":"UTC"}' });
        finished(ws);
        item(ws, { type: 'function_call_output', id: 'out_1', call_id: 'call_1', output: '2026-11-22T10:00:00Z' });
        text(ws, 'msg_t', 'It is ');
        text(ws, 'msg_t', '10:00 UTC.');
        finished(ws);
      } else if (input === 'write notes') {
        text(ws, 'msg_w', 'I will write the file.');
        item(ws, { type: 'function_call', id: 'fc_w', call_id: 'call_w', name: 'apply_patch', arguments: JSON.stringify({ patch: PATCH }) });
        finished(ws);
        for (;;) {
          send(ws, frame('approval_request', { command: ['apply_patch', PATCH], applyPatch: { patch: PATCH } }));
          const review = await new Promise((resolve) => (loop.pending = resolve));
          if (review === 'explain') {
            text(ws, `msg_e${randomUUID().slice(0, 4)}`, EXPLANATION);
            continue;
          }
          const ok = review === 'yes' || review === 'always';
          item(ws, { type: 'function_call_output', id: 'out_w', call_id: 'call_w', output: ok ? 'Done' : 'aborted' });
          text(ws, 'msg_r', ok ? 'Wrote notes.txt.' : 'I did not write it.');
          finished(ws);
          break;
        }
      } else if (input === 'list files') {
        const command = ['bash', '-lc', 'ls'];
        item(ws, { type: 'function_call', id: 'fc_s', call_id: 'call_s', name: 'shell', arguments: JSON.stringify({ command }) });
        finished(ws);
        send(ws, frame('approval_request', { command }));
        const review = await new Promise((resolve) => (loop.pending = resolve));
        const ok = review === 'yes' || review === 'always';
        item(ws, { type: 'function_call_output', id: 'out_s', call_id: 'call_s', output: ok ? 'a.txt' : 'aborted' });
        text(ws, 'msg_s', ok ? 'Listed: a.txt' : 'I did not list them.');
        finished(ws);
      } else if (input === 'drop') {
        text(ws, 'msg_d', 'Hal');
        await sleep(30);
        loop.dropped = true;
        return ws.terminate();
      } else {
        for (const c of PLAIN_CHUNKS) {
          text(ws, 'msg_p', c);
          await sleep(5);
        }
        finished(ws);
      }
      end(ws);
    }
    return {
      connected(ws) {
        // A new connection terminates the previous loop; what that loop still had to send
        // arrives on the new socket.
        const dropped = current?.dropped === true;
        if (dropped) send(ws, frame('loading_state', { loading: false }));
        current = { ws, pending: null, turns: 0, leftovers: dropped };
      },
      message(ws, msg) {
        const loop = current?.ws === ws ? current : null;
        if (!loop) return;
        switch (msg.type) {
          case 'user_input': {
            const input = msg.payload?.input?.[0]?.content?.map((c) => c.text).join('') ?? '';
            return void turn(loop, input);
          }
          case 'approval_response': {
            // Applies to the one pending request: there is no call id to match.
            const resolve = loop.pending;
            loop.pending = null;
            return resolve?.(msg.payload?.review);
          }
          case 'get_context_info':
            return send(
              ws,
              frame('context_info', {
                tokenCount: 120 * loop.turns,
                usagePercent: loop.turns,
                transcriptLength: 3 * loop.turns,
                maxTokens: 12000,
                strategy: 'auto',
              }),
            );
          case 'manual_compact':
            if (loop.turns === 0) {
              return send(
                ws,
                frame('error', {
                  message: 'Automatic context compaction failed',
                  details: { error: 'Cannot compact empty transcript', context: 'auto_compaction' },
                }),
              );
            }
            return send(ws, frame('context_compacted', { oldTokenCount: 120 * loop.turns, newTokenCount: 40, reductionPercent: 66.7, strategy: 'auto' }));
          default:
            refusals.push(msg);
            return send(ws, { type: 'error', payload: { message: `Unknown message type: ${msg.type}` } });
        }
      },
    };
  },

  // ----- agentchat (Nova's agent_loop_server, Starlette) -----
  agentchat({ wss, refusals }) {
    const all = (frame) => {
      for (const ws of wss.clients) send(ws, frame);
    };
    async function turn(message) {
      all({ type: 'user_message', message });
      await sleep(5);
      if (message === 'What time is it?') {
        all({ type: 'tool_call', tool_name: 'get_time', tool_args: '{"timezone":"UTC"}' });
        await sleep(5);
        all({ type: 'agent_thinking', reasoning: 'The clock says 10:00 UTC.' });
        all({ type: 'agent_message', message: TIME });
      } else if (message === 'drop') {
        all({ type: 'agent_thinking', reasoning: 'Hal' });
        await sleep(30);
        for (const ws of wss.clients) ws.terminate();
      } else {
        all({ type: 'agent_message', message: PLAIN });
      }
    }
    return {
      message(ws, msg) {
        if (msg.type === 'chat') {
          // It strips the message, and echoes it stripped.
          const message = typeof msg.message === 'string' ? msg.message.trim() : '';
          // Its errors, like everything else, go to every socket.
          if (!message) return all({ type: 'error', error: 'Empty message received' });
          return void turn(message);
        }
        refusals.push(msg);
        all({ type: 'error', error: `Unknown message type: ${msg.type}` });
      },
    };
  },

  // ----- cueso (FastAPI) -----
  cueso({ refusals, sessions }) {
    /** Sockets whose turn failed without closing them: nothing more is answered there. */
    const deaf = new WeakSet();
    async function turn(ws, msg) {
      const session_id = msg.session_id ?? randomUUID();
      sessions.push(session_id);
      send(ws, { type: 'session_created', session_id });
      await sleep(5);
      let reply;
      if (msg.message === 'What time is it?') {
        send(ws, { type: 'tool_call_delta', tool_call: { id: 'toolu_1', name: 'get_time', input: null } });
        send(ws, { type: 'tool_call_delta', tool_call: { id: 'toolu_1', name: 'get_time', input_json: '{"timezone":' } });
        send(ws, { type: 'tool_call_delta', tool_call: { id: 'toolu_1', name: 'get_time', input_json: '"UTC"}' } });
        send(ws, { type: 'message_complete', content: '', tool_calls: ['get_time'], finish_reason: 'tool_use' });
        send(ws, { type: 'tool_result', tool_name: 'get_time', tool_call_id: 'toolu_1', result: '2026-11-22T10:00:00Z' });
        send(ws, { type: 'content_delta', content: TIME, role: 'assistant' });
        send(ws, { type: 'message_complete', content: TIME, tool_calls: [], finish_reason: 'end_turn' });
        reply = TIME;
      } else if (msg.message === 'drop') {
        send(ws, { type: 'content_delta', content: 'Hal', role: 'assistant' });
        await sleep(30);
        return ws.terminate();
      } else if (msg.message === 'fail') {
        // An exception in the turn: its message, and the socket closed.
        send(ws, { type: 'content_delta', content: 'Let me', role: 'assistant' });
        send(ws, { type: 'error', message: 'Error code: 529 - Overloaded' });
        return ws.close(1011);
      } else if (msg.message === 'fail and stay') {
        // The same with the dependencies its lockfile pins (uvicorn 0.35, the legacy
        // `websockets`): the error, and the socket kept open, answering nothing more.
        send(ws, { type: 'error', message: 'Error code: 529 - Overloaded' });
        deaf.add(ws);
        return;
      } else {
        for (const c of PLAIN_CHUNKS) {
          send(ws, { type: 'content_delta', content: c, role: 'assistant' });
          await sleep(5);
        }
        send(ws, { type: 'message_complete', content: PLAIN, tool_calls: [], finish_reason: 'end_turn' });
        reply = PLAIN;
      }
      send(ws, { type: 'final', content: reply, tool_calls: [], session_id });
    }
    return {
      message(ws, msg) {
        if (deaf.has(ws)) return;
        // A chat message is `{message, session_id}`; anything else fails validation, which
        // sends an error and closes the socket.
        if (typeof msg.message === 'string' && msg.type === undefined) return void turn(ws, msg);
        refusals.push(msg);
        send(ws, { type: 'error', message: '1 validation error for ChatMessage\nmessage\n  Field required' });
        ws.close(1011);
      },
    };
  },
};
