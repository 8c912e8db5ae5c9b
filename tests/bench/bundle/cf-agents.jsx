// The smallest app holding a streaming chat with approvals through Cloudflare Agents'
// useAgentChat (agents/ai-react is deprecated and throws; its home is @cloudflare/ai-chat/react)
// over useAgent's WebSocket.
import { useAgentChat } from '@cloudflare/ai-chat/react';
import { useAgent } from 'agents/react';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';

function App() {
  const agent = useAgent({ agent: 'chat', name: 'demo' });
  const { messages, sendMessage, addToolApprovalResponse } = useAgentChat({ agent });
  const [input, setInput] = useState('');
  return (
    <div>
      {messages.map((m) => (
        <p key={m.id}>
          {m.parts.map((p, i) => {
            if (p.type === 'text') return <span key={i}>{p.text}</span>;
            if (p.type.startsWith('tool-') && p.state === 'approval-requested') {
              return (
                <span key={i}>
                  Allow {p.type.slice(5)}?<button onClick={() => addToolApprovalResponse({ id: p.approval.id, approved: true })}>yes</button>
                  <button onClick={() => addToolApprovalResponse({ id: p.approval.id, approved: false })}>no</button>
                </span>
              );
            }
            return p.type.startsWith('tool-') ? <em key={i}> [{p.type.slice(5)}] </em> : null;
          })}
        </p>
      ))}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input value={input} onChange={(e) => setInput(e.target.value)} />
      </form>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<App />);
