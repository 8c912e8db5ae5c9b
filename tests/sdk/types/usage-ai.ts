// weft-sdk/ai against the AI SDK's own types: the transport is a ChatTransport, the encoder
// yields UIMessageChunks, the history helper gives UIMessages.
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { Client } from 'weft-sdk';
import { UIChunkEncoder, WeftChatTransport, toUIMessages } from 'weft-sdk/ai';

declare const client: Client;
const transport: ChatTransport<UIMessage> = new WeftChatTransport({
  client,
  agent: 'react',
  tools: [{ name: 'shell', description: 'runs a command', inputSchema: { type: 'object' } }],
});
const auto: (o: { messages: UIMessage[] }) => boolean = new WeftChatTransport({ client }).sendAutomaticallyWhen;
const chunks: UIMessageChunk[] = new UIChunkEncoder().pause();
const history: UIMessage[] = toUIMessages(client.transcript());
export { transport, auto, chunks, history };
