// Types of weft-sdk/ai. The AI SDK is a peer dependency: its types are named, not copied.
import type { ChatTransport, UIMessage } from 'ai';
import type { Client, ToolDefinition, Transcript, Agent } from './weft_sdk.js';

export interface WeftChatTransportOptions {
  /** A weft client (any dialect; `reconnectToStream` needs loom to find the running turn). */
  client: Client;
  /** Which agent runs each message: a name the server offers (`client.agents()`); default: the server's default agent (`react` unless its operator set another). */
  agent?: Agent;
  /** Tools the page runs itself: their calls reach `useChat`'s `onToolCall`; answer them
   * with `addToolOutput`. */
  tools?: ToolDefinition[];
  /** How long (ms) a delta of a part that already shows text may wait for the deltas after it,
   * so that a fast stream reaches `Chat` (and React) in a few lots a frame instead of one per
   * delta; anything else (a new part, a tool call, the end, an abort, an approval) takes what
   * waits along at once. The first delta of a reply never waits. `0`: only what arrives in one
   * task is joined. Default `16` (a frame at 60 Hz). */
  deltaWindowMs?: number;
}

/** The AI SDK's `ChatTransport` over a weft `Client`: the chat id is the weft session. */
export declare class WeftChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  constructor(options: WeftChatTransportOptions);
  /** Reconnecting follows the running turn from its start. */
  readonly resumeStreamIsReplay: true;
  /** Pass to `useChat`: true when the page has answered something the run waits for. */
  readonly sendAutomaticallyWhen: (options: { messages: UI_MESSAGE[] }) => boolean;
  /** Stops listening to the client. */
  close(): void;
  sendMessages: ChatTransport<UI_MESSAGE>['sendMessages'];
  reconnectToStream: ChatTransport<UI_MESSAGE>['reconnectToStream'];
}

/** The client's transcript as the AI SDK's initial `messages`. */
export declare function toUIMessages(transcript: Transcript): UIMessage[];
