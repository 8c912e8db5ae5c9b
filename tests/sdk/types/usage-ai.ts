// weft-sdk/ai against the AI SDK's own types: the transport is a ChatTransport whose streams
// yield UIMessageChunks, the history helper gives UIMessages.
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { Client } from 'weft-sdk';
import { WeftChatTransport, toUIMessages } from 'weft-sdk/ai';

declare const client: Client;
const transport: ChatTransport<UIMessage> = new WeftChatTransport({
  client,
  agent: 'react',
  tools: [{ name: 'shell', description: 'runs a command', inputSchema: { type: 'object' } }],
});
const auto: (o: { messages: UIMessage[] }) => boolean = new WeftChatTransport({ client }).sendAutomaticallyWhen;
const history: UIMessage[] = toUIMessages(client.transcript());
async function chunks(): Promise<UIMessageChunk[]> {
  const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 's', messageId: undefined, messages: history, abortSignal: undefined });
  const reader = stream.getReader();
  const out: UIMessageChunk[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}
export { transport, auto, chunks, history };
