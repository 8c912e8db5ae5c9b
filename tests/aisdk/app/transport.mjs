// Which AI SDK transport the page uses: `?transport=` in its URL.
//
//   http (default)  the AI SDK's own DefaultChatTransport: POST {server}/api/chat, GET
//                   {server}/api/chat/{id}/stream to resume. `?server=<origin>` points it at
//                   another origin (which must then allow CORS); by default it is the page's own
//                   origin, where the test's static server forwards /api/* to the server under
//                   test.
//   weft            weft-sdk/ai's WeftChatTransport: a weft Client on the WebSocket `?ws=` names
//                   (loom, the chat id as its session), the same client tool declared to it.

import { DefaultChatTransport } from 'ai';

/**
 * What the page tells the server besides the AI SDK's own body: the client-side tools it
 * answers itself (`onToolCall` + `addToolOutput`). The AI SDK's HTTP body has no tool list — an
 * AI SDK server defines client tools itself (a tool without `execute`) — so a server that runs
 * its own agent, as weft does, learns them from an extra body field, weft's `tools` (sent with
 * the transport's standard `body` option). Its items are weft's `ToolSpec`s (`name`,
 * `description`, `input_schema`, `read_only`: a read-only client tool runs without asking for
 * approval). An AI SDK server ignores it.
 */
export const CLIENT_TOOLS = [
  {
    name: 'shell',
    description: "Run a shell command in the user's browser sandbox and return its output.",
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    read_only: true,
  },
];

/** The transport named by the page URL's `transport` parameter. */
export async function makeTransport(params) {
  const kind = params.get('transport') ?? 'http';
  if (kind === 'http') {
    const server = (params.get('server') ?? '').replace(/\/+$/, '');
    return new DefaultChatTransport({ api: `${server}/api/chat`, body: { tools: CLIENT_TOOLS } });
  }
  if (kind === 'weft') return makeWeftTransport(params);
  throw new Error(`unknown transport "${kind}" (use http or weft)`);
}

/** weft-sdk/ai over a connected weft Client; the page's `shell` is registered with it. */
async function makeWeftTransport(params) {
  const { default: init, Client } = await import('weft-sdk');
  const { WeftChatTransport } = await import('weft-sdk/ai');
  await init();
  const client = new Client({ url: params.get('ws'), dialect: 'loom', sessionId: params.get('id') });
  await client.connect();
  const tools = CLIENT_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema, readOnly: t.read_only }));
  return new WeftChatTransport({ client, tools });
}
