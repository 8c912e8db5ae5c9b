// weft-sdk/ai's chunk encoder, held equal to the server's (the protocol crate's
// dialect::aisdk) on every golden scenario: the canonical events of each scenario, read back
// from its loom golden frames by the package's Reassembler, encoded by `UIChunkEncoder` with
// the stream paused at each approval as the server does, give the very chunks of
// crates/protocol/tests/fixtures/aisdk/<scenario>.jsonl. (tests/aisdk drives both transports
// from a real useChat page.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import init, { Reassembler } from 'weft-sdk';
import { UIChunkEncoder, toUIMessages } from 'weft-sdk/ai';

const fixtures = new URL('../../crates/protocol/tests/fixtures/', import.meta.url);
const lines = (path) => readFileSync(new URL(path, fixtures), 'utf8').split('\n').filter(Boolean);

await init();

function eventsOf(scenario) {
  const r = new Reassembler('loom');
  const events = [];
  r.onEvent((ev) => events.push(ev));
  for (const frame of lines(`loom/${scenario}.jsonl`)) r.push(frame);
  return events;
}

test("UIChunkEncoder gives the server's chunks for every golden scenario", () => {
  const scenarios = readdirSync(new URL('aisdk/', fixtures)).map((f) => f.replace(/\.jsonl$/, ''));
  assert.ok(scenarios.length >= 6, scenarios.join());
  for (const scenario of scenarios) {
    const got = [];
    let enc = new UIChunkEncoder();
    for (const ev of eventsOf(scenario)) {
      got.push(...enc.encode(ev));
      if (ev.type === 'tool_approval') {
        got.push(...enc.pause(), '[DONE]');
        enc = new UIChunkEncoder();
      }
    }
    got.push('[DONE]');
    const want = lines(`aisdk/${scenario}.jsonl`).map((l) => (l === '[DONE]' ? l : JSON.parse(l)));
    assert.deepEqual(got, want, scenario);
  }
});

test("toUIMessages turns a transcript into the AI SDK's messages, tools with their outcome", () => {
  const r = new Reassembler('loom');
  for (const frame of lines('loom/tool-call.jsonl')) r.push(frame);
  /** @type {Json[]} the messages, read part by part */
  const messages = toUIMessages(r.transcript());
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'assistant'],
  );
  assert.equal(messages[0].parts[0].text, 'What time is it?');
  const tool = messages[1].parts.find((p) => p.type === 'tool-get_time');
  assert.equal(tool?.state, 'output-available');
  assert.deepEqual(tool?.input, { timezone: 'UTC' });
  assert.equal(tool?.output, '2026-11-22T10:00:00Z');
  assert.equal(messages[2].parts.at(-1)?.text, 'It is 10:00 UTC.');
  const denied = new Reassembler('loom');
  for (const frame of lines('loom/approval-denied.jsonl')) denied.push(frame);
  const part = toUIMessages(denied.transcript())
    .flatMap((m) => m.parts)
    .find((p) => 'toolCallId' in p && p.toolCallId === 'call_w');
  assert.equal(part && 'state' in part ? part.state : undefined, 'output-denied');
});
