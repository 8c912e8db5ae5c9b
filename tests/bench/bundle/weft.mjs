// The smallest app holding a streaming chat with approvals through weft-sdk: connect, approve
// or deny tool calls, send a message, render the streamed reply. (Bundle-size entry.)
import init, { Client } from 'weft-sdk';

const $ = (id) => document.getElementById(id);

await init();
const client = new Client({ url: location.origin.replace(/^http/, 'ws'), dialect: 'loom', sessionId: 'demo' });
client.onApproval(async (req) => ({
  review: confirm(`Allow ${req.name}(${JSON.stringify(req.arguments)})?`) ? 'yes' : 'no-continue',
}));
await client.connect();
$('form').onsubmit = async (e) => {
  e.preventDefault();
  const out = $('log').appendChild(document.createElement('p'));
  const run = client.run({ message: $('input').value, agent: 'react' });
  run.onText((delta) => {
    out.textContent += delta;
  });
  run.onEvent((ev) => {
    if (ev.type === 'tool_start') out.append(` [${ev.name}] `);
  });
  await run.result;
};
