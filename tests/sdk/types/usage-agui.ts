// weft-sdk/agui against @ag-ui/client's own types: a WeftAgent is an AbstractAgent, made by
// HttpAgent's config plus where weft is, and runs as any agent does.
import { AbstractAgent, type RunAgentResult } from '@ag-ui/client';
import { WeftAgent } from 'weft-sdk/agui';

const agent: AbstractAgent = new WeftAgent({ url: 'wss://weft.example/agui', token: 't', threadId: 'thread-1' });
const weft = new WeftAgent({ url: 'ws://127.0.0.1:8787/agui' });
const result: Promise<RunAgentResult> = weft.runAgent({ runId: 'r' });
const reattached: Promise<RunAgentResult> = weft.connectAgent();
weft.abortRun();
weft.close();
const copy: WeftAgent = weft.clone();
export { agent, result, reattached, copy };
