// A plain AI SDK chat app — `useChat` from @ai-sdk/react, written the way the AI SDK's docs write
// one — that tests/aisdk/aisdk.test.mjs drives in headless Chromium against a server speaking the
// AI SDK UI message stream protocol (weft's POST /api/chat, or the AI SDK's own server).
//
// URL parameters: `id` the chat id (made up and put in the URL when missing, so a reload keeps
// it); `transport` http | weft (./transport.mjs); `server` another origin for the API.
//
// It renders every message part (text, reasoning, tool parts with their state, input, output and
// approval), Approve / Deny buttons for an approval request (`addToolApprovalResponse`), an input
// and Send, Stop (`stop()`), answers the client tool `shell` in `onToolCall` (`addToolOutput`),
// and sends automatically once approvals or tool outputs are complete. `resume: true`: on load it
// reconnects to a turn still running on the server (`reconnectToStream`, GET …/{id}/stream).
// The messages are kept in sessionStorage per chat id — as an app would load them from its own
// store — so a reload shows the conversation and the resumed turn continues its message.

import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';

import { makeTransport } from './transport.mjs';

const params = new URLSearchParams(location.search);
if (!params.get('id')) {
  params.set('id', crypto.randomUUID());
  history.replaceState(null, '', `${location.pathname}?${params}`);
}
const chatId = params.get('id');
const storeKey = `aisdk-chat:${chatId}`;

function storedMessages() {
  try {
    return JSON.parse(sessionStorage.getItem(storeKey) ?? '[]');
  } catch {
    return [];
  }
}

/** What the page's own `shell` does: a canned answer, so the test knows what to expect. */
function runShell(command) {
  return command.trim() === 'ls' ? 'README.md package.json' : `ran ${command}`;
}

let transport;
let startError = null;
try {
  transport = await makeTransport(params);
} catch (e) {
  startError = e;
}

// For the test's diagnostics: every state each tool part was rendered in, in order.
const seen = { toolStates: {}, renders: 0 };
window.__aisdk = seen;

function ToolPart({ part, onApproval }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const approval = part.approval;
  const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  return (
    <div className="tool" data-tool={name} data-state={part.state} data-call-id={part.toolCallId}>
      <div>
        <b className="tool-name">{name}</b> <span className="tool-state">{part.state}</span>
      </div>
      {part.input !== undefined && <pre className="tool-input">{show(part.input)}</pre>}
      {part.state === 'approval-requested' && !approval?.isAutomatic && (
        <div className="tool-ask">
          Allow {name}?{' '}
          <button className="approve" onClick={() => onApproval({ id: approval.id, approved: true })}>
            Approve
          </button>{' '}
          <button className="deny" onClick={() => onApproval({ id: approval.id, approved: false, reason: 'Denied by the user.' })}>
            Deny
          </button>
        </div>
      )}
      {approval?.approved !== undefined && (
        <div className="tool-approval" data-approved={String(approval.approved)}>
          {approval.approved ? 'approved' : 'denied'}
          {approval.reason ? `: ${approval.reason}` : ''}
        </div>
      )}
      {part.state === 'output-available' && <pre className="tool-output">{show(part.output)}</pre>}
      {part.state === 'output-error' && <pre className="tool-error">{part.errorText}</pre>}
    </div>
  );
}

function Message({ message, onApproval }) {
  return (
    <div className="msg" data-role={message.role} data-id={message.id}>
      <div className="role">{message.role}</div>
      {message.parts.map((part, i) => {
        if (part.type === 'text') {
          return (
            <div key={i} className="text" data-state={part.state ?? ''}>
              {part.text}
            </div>
          );
        }
        if (part.type === 'reasoning') {
          return (
            <div key={i} className="reasoning">
              {part.text}
            </div>
          );
        }
        if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') {
          return <ToolPart key={part.toolCallId ?? i} part={part} onApproval={onApproval} />;
        }
        return null; // step-start, sources, data parts: nothing to show
      })}
    </div>
  );
}

function App() {
  const initial = useMemo(storedMessages, []);
  const { messages, sendMessage, status, error, stop, addToolOutput, addToolApprovalResponse } = useChat({
    id: chatId,
    messages: initial,
    transport,
    resume: transport !== undefined,
    // WeftChatTransport knows what its run waits for; the AI SDK's helpers, for its own transport.
    sendAutomaticallyWhen:
      transport?.sendAutomaticallyWhen ??
      (({ messages }) => lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) || lastAssistantMessageIsCompleteWithToolCalls({ messages })),
    onToolCall: ({ toolCall }) => {
      if (toolCall.dynamic) return;
      if (toolCall.toolName === 'shell') {
        // No await: the AI SDK's docs warn it can deadlock.
        addToolOutput({ tool: 'shell', toolCallId: toolCall.toolCallId, output: runShell(toolCall.input?.command ?? '') });
      }
    },
  });
  const [input, setInput] = useState('');

  useEffect(() => {
    sessionStorage.setItem(storeKey, JSON.stringify(messages));
    for (const m of messages) {
      for (const p of m.parts) {
        if (!p.toolCallId) continue;
        const states = (seen.toolStates[p.toolCallId] ??= []);
        if (states.at(-1) !== p.state) states.push(p.state);
      }
    }
    seen.messages = messages;
  }, [messages]);
  useEffect(() => {
    seen.status = status;
    document.documentElement.dataset.status = status;
  }, [status]);
  useEffect(() => {
    document.documentElement.dataset.ready = 'true';
  }, []);
  seen.renders++;

  const busy = status === 'submitted' || status === 'streaming';
  const problem = startError ?? error;
  return (
    <main>
      <header>
        <b>AI SDK useChat</b> · chat <code id="chat-id">{chatId}</code> · transport <code>{params.get('transport') ?? 'http'}</code> · status{' '}
        <span id="status" data-status={status}>
          {status}
        </span>
      </header>
      <section id="messages">
        {messages.map((m) => (
          <Message key={m.id} message={m} onApproval={addToolApprovalResponse} />
        ))}
      </section>
      {problem && (
        <div id="error" role="alert">
          {String(problem.message ?? problem)}
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim() || !transport) return;
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input id="input" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Say something…" disabled={busy} />
        <button id="send" type="submit" disabled={busy || !transport}>
          Send
        </button>
        <button id="stop" type="button" onClick={() => stop()} disabled={!busy}>
          Stop
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
