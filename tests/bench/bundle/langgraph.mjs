// The smallest app holding a streaming chat with approvals through the LangGraph SDK client
// (@langchain/langgraph-sdk): stream a run's messages; an approval is a graph interrupt,
// answered by resuming the run with a command.
import { Client } from '@langchain/langgraph-sdk';

const $ = (id) => document.getElementById(id);
const client = new Client({ apiUrl: location.origin });
const thread = await client.threads.create();

async function stream(payload, out) {
  for await (const chunk of client.runs.stream(thread.thread_id, 'agent', { ...payload, streamMode: ['messages-tuple', 'updates'] })) {
    if (chunk.event === 'messages') out.textContent += chunk.data[0]?.content ?? '';
    if (chunk.event === 'updates' && chunk.data.__interrupt__) {
      const ok = confirm(`Allow ${JSON.stringify(chunk.data.__interrupt__[0].value)}?`);
      return stream({ command: { resume: { approved: ok } } }, out);
    }
  }
}

$('form').onsubmit = async (e) => {
  e.preventDefault();
  const out = $('log').appendChild(document.createElement('p'));
  await stream({ input: { messages: [{ role: 'user', content: $('input').value }] } }, out);
};
