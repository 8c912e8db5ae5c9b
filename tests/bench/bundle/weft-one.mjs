// weft.mjs's app on a one-dialect package (the bench maps `weft-sdk` to each, as an app imports
// `weft-sdk/<dialect>`): the same chat, without a `dialect` option — the package speaks its own.
// (Bundle-size entry.)
import init, { Client } from 'weft-sdk';

const $ = (id) => document.getElementById(id);

await init();
const client = new Client({ url: location.origin.replace(/^http/, 'ws'), sessionId: 'demo' });
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
