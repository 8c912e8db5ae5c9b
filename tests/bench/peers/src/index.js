// The peers of the server benchmark: Cloudflare Agents' AIChatAgent, and a bare relay.

import { createOpenAI } from '@ai-sdk/openai';
import { AIChatAgent } from '@cloudflare/ai-chat';
import { routeAgentRequest } from 'agents';
import { convertToModelMessages, streamText } from 'ai';
import { DurableObject } from 'cloudflare:workers';

/** The chat agent as its documentation writes one: the AI SDK's streamText, streamed back. */
export class Chat extends AIChatAgent {
  async onChatMessage(onFinish) {
    const openai = createOpenAI({ baseURL: this.env.SCRIPTED_LLM_URL, apiKey: 'bench' });
    const result = streamText({
      model: openai.chat('scripted'),
      messages: await convertToModelMessages(this.messages),
      onFinish,
    });
    return result.toUIMessageStreamResponse();
  }
}

/**
 * The floor: a hibernatable WebSocket; a message `{"message": …}` fetches the scripted LLM's
 * stream and sends every piece of its body to the socket as it arrives, then `{"done":true}`.
 */
export class Relay extends DurableObject {
  async fetch() {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  async webSocketMessage(ws, message) {
    const { message: text } = JSON.parse(message);
    const resp = await fetch(`${this.env.SCRIPTED_LLM_URL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
      body: JSON.stringify({ model: 'scripted', stream: true, messages: [{ role: 'user', content: text }] }),
    });
    const decoder = new TextDecoder();
    for await (const piece of resp.body) ws.send(decoder.decode(piece, { stream: true }));
    ws.send('{"done":true}');
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/healthz') return new Response('ok');
    if (url.pathname === '/relay') {
      const stub = env.RELAY.get(env.RELAY.idFromName(url.searchParams.get('session') ?? 'default'));
      return stub.fetch(request);
    }
    return (await routeAgentRequest(request, env)) ?? new Response('not found', { status: 404 });
  },
};
