// Type-checks the published declarations the way an app uses them (tsc -p tests/sdk/types):
// every option, callback, event and transcript field of the README example, in strict mode.
// Never run, only compiled.
import init, {
  Client,
  Reassembler,
  type RunEvent,
  type Transcript,
  type ApprovalAnswer,
  type RunResult,
  type ContextInfo,
  type CompactResult,
  type AgentList,
  type AgentInfo,
} from 'weft-sdk';

async function main(render: (s: string) => void) {
  await init();
  const client = new Client({ url: 'wss://x', dialect: 'loom', sessionId: 's', token: 't', reconnect: { maxAttempts: 3 } });
  const off: () => void = client.onStatus((s) => console.log(s.state, s.retryInMs));
  // A per-user token, fresh from the app's backend on every (re)connect.
  const perUser = new Client({ url: 'wss://x', dialect: 'cueso', token: async () => (await fetch('/token')).text() });
  new Client({ url: 'wss://x', dialect: 'cueso', token: () => 't' });
  perUser.close();
  client.onError((e) => console.log(e.code, e.message));
  client.onApproval(async (req): Promise<ApprovalAnswer> => (req.name === 'write' ? { review: 'yes' } : { review: 'no-continue', message: 'no' }));
  client.registerTool({ name: 'shell', inputSchema: { type: 'object' }, readOnly: true }, async (args) => String(args));
  await client.connect();
  const found: 'weft' | 'original' | undefined = client.server;
  const original = new Client({ url: 'ws://localhost:8080', dialect: 'cueso', server: 'original' });
  if (found === 'original') original.close();
  const run = client.run({ message: 'hi', agent: 'react', threadId: 't' });
  run.onText((d) => render(d));
  run.onEvent((ev: RunEvent) => {
    if (ev.type === 'message_chunk') render(ev.content);
  });
  for await (const ev of run.events()) {
    if (ev.type === 'tool_call') console.log(ev.name, ev.arguments, ev.run_id, ev.event_id);
  }
  const { reply, usage, totalUsage, runId }: RunResult = await run.result;
  console.log(reply, usage?.total_tokens, totalUsage.prompt_tokens, runId);
  run.cancel();
  const t: Transcript = client.transcript();
  for (const m of t.messages) console.log(m.role, m.text, m.reasoning ?? '', m.tool_call_ids?.length);
  for (const c of t.tool_calls) console.log(c.status, c.result?.length, c.arguments);
  for (const r of t.runs) console.log(r.status, r.reply?.length, r.error);
  const tools = await client.toolsList();
  const added = await client.addMcpServer({ name: 'docs', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } });
  console.log(added[0].name, added[0].readOnly, (await client.addMcpServer({ name: 'open', url: 'https://mcp.example.com/open' })).length);
  console.log(tools[0].inputSchema, await client.toolShow('read'), await client.toolShow('read', 'json'));
  const page = await client.userMessages('t', { before: 10, limit: 5 });
  console.log(page.hasMore, page.messages[0]?.content, await client.userMessages('t'), await client.ping());
  const info: ContextInfo = await client.contextInfo();
  const compacted: CompactResult = await client.compact();
  console.log(info.tokenCount / info.maxTokens, info.usagePercent, compacted.newTokenCount, compacted.reductionPercent);
  client.close();
  off();
  const r = new Reassembler('cueso');
  const p = r.push('{}');
  console.log(p.applied, p.duplicate, p.gap?.after_event_id, r.pushMany(['a']).applied, r.lastEventId('x'));
  r.free();
}
main(console.log);

// The agents a server offers, as a picker would read them.
export async function pickAgent(client: Client): Promise<string> {
  const { defaultAgent, agents }: AgentList = await client.agents();
  const offered: AgentInfo[] = agents.filter((a) => a.problem === null);
  const model: string | null = offered[0]?.model ?? null;
  return model === null ? defaultAgent : offered[0].name;
}
