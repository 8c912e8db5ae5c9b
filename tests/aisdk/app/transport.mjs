// Which AI SDK transport the page uses: `?transport=` in its URL.
//
//   http (default)  the AI SDK's own DefaultChatTransport: POST {server}/api/chat, GET
//                   {server}/api/chat/{id}/stream to resume. `?server=<origin>` points it at
//                   another origin (which must then allow CORS); by default it is the page's own
//                   origin, where the test's static server forwards /api/* to the server under
//                   test.
//   weft            weft-sdk's WebSocket transport — NOT YET WRITTEN, see below.

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
export function makeTransport(params) {
  const kind = params.get('transport') ?? 'http';
  if (kind === 'http') {
    const server = (params.get('server') ?? '').replace(/\/+$/, '');
    return new DefaultChatTransport({ api: `${server}/api/chat`, body: { tools: CLIENT_TOOLS } });
  }
  if (kind === 'weft') return makeWeftTransport(params);
  throw new Error(`unknown transport "${kind}" (use http or weft)`);
}

// ---- HOOK: transport=weft ------------------------------------------------------------------
// To be filled in once weft-sdk ships its AI SDK transport (`weft-sdk/ai`, DESIGN.md "A fifth
// dialect"). Something like:
//
//   import { WeftChatTransport } from 'weft-sdk/ai';
//   return new WeftChatTransport({ url: params.get('server') ?? `ws://${location.host}`, clientTools: CLIENT_TOOLS });
//
// then bundle with `alias: { 'weft-sdk': <repo>/pkg/index.mjs }` (tests/aisdk/harness.mjs,
// `bundleApp`) and serve pkg/'s .wasm beside the bundle. Until then the page says so plainly.
function makeWeftTransport() {
  throw new Error('transport=weft is not implemented yet (WeftChatTransport from weft-sdk/ai: see tests/aisdk/app/transport.mjs)');
}
