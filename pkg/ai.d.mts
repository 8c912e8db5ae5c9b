// Types of weft-sdk/ai. The AI SDK is a peer dependency: its types are named, not copied.
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { Client, RunEvent, ToolDefinition, Transcript, Agent } from './weft_sdk.js';

/** Canonical weft events (`run.onEvent`'s) to AI SDK UI message chunks, for one stream: the
 * same chunks weft's server sends on `POST /api/chat`. */
export declare class UIChunkEncoder {
  /** Whether the stream is over (the run ended, failed, or paused). */
  readonly finished: boolean;
  /** The chunks that carry this event, possibly none. */
  encode(event: RunEvent): UIMessageChunk[];
  /** The chunks that end the stream while the run waits for the page. */
  pause(): UIMessageChunk[];
}

export interface WeftChatTransportOptions {
  /** A weft client (any dialect; `reconnectToStream` needs loom to find the running turn). */
  client: Client;
  /** Which agent runs each message: a name the server offers (`client.agents()`); default: the server's default agent (`react` unless its operator set another). */
  agent?: Agent;
  /** Tools the page runs itself: their calls reach `useChat`'s `onToolCall`; answer them
   * with `addToolOutput`. */
  tools?: ToolDefinition[];
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
