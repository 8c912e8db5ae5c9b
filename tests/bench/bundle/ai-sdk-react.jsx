// The smallest app holding a streaming chat with approvals through the AI SDK's useChat
// (@ai-sdk/react): send a message, render streamed text, approve or deny tool calls.
import { useChat } from '@ai-sdk/react';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';

function App() {
  const { messages, sendMessage, addToolApprovalResponse } = useChat();
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
