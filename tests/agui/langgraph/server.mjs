// Starts the real AG-UI agent of tests/agui/langgraph/agent.py (ag-ui-langgraph serving a
// LangGraph graph) on a free 127.0.0.1 port, its model a scripted LLM started with it. What the
// suites of weft as an AG-UI client talk to: a backend weft did not write. The Python packages
// are in tests/agui/langgraph/.venv, which scripts/setup makes from requirements.txt.
//
//   const agent = await startLangGraphAgent();  // agent.url: POST a RunAgentInput there
//   await agent.kill();                          // SIGKILL, as a crash mid-run would
//   await agent.restart();                       // the same port again, a fresh graph
//   await agent.stop();                          // the agent and its scripted LLM

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startScriptedLlm } from '../../scripted-llm/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const PYTHON = join(here, '.venv', 'bin', 'python');
const READY = /^agui-langgraph listening on (http:\/\/\S+)$/m;

/**
 * @param {{delayMs?: number, readyTimeoutMs?: number, allowOrigins?: string[]}} [opts] `delayMs`: the
 * scripted LLM's pause between streamed chunks (a run long enough to be cut mid-stream);
 * `allowOrigins`: page origins the agent lets call it (CORS), for a browser on another origin.
 */
export async function startLangGraphAgent(opts = {}) {
  if (!existsSync(PYTHON)) {
    throw new Error(`${PYTHON} is missing: run scripts/setup (it makes the venv from tests/agui/langgraph/requirements.txt)`);
  }
  const llm = await startScriptedLlm({ port: 0, host: '127.0.0.1', delayMs: opts.delayMs ?? 0 });
  /** @type {import('node:child_process').ChildProcess | null} */
  let child = null;
  let log = '';
  let port = 0;

  async function launch() {
    log = '';
    const origins = (opts.allowOrigins ?? []).flatMap((o) => ['--allow-origin', o]);
    const proc = spawn(PYTHON, [join(here, 'agent.py'), '--llm', llm.url, '--port', String(port), ...origins], {
      cwd: here,
      env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const onData = (d) => {
      log += d.toString();
      if (log.length > 200_000) log = log.slice(-100_000);
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    // The listening line first (its port), then /health: the app answers only once uvicorn serves.
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
    let url = null;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`the LangGraph agent exited (${proc.exitCode ?? proc.signalCode}):\n${log.slice(-4000)}`);
      }
      url ??= log.match(READY)?.[1] ?? null;
      if (url) {
        try {
          const r = await fetch(`${url}/health`);
          if (r.ok) {
            port = Number(new URL(url).port);
            return url;
          }
        } catch {
          /* not serving yet */
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await kill();
    throw new Error(`the LangGraph agent did not answer /health in time:\n${log.slice(-4000)}`);
  }

  function kill() {
    return new Promise((resolve) => {
      const proc = child;
      // A child that already exited (or was killed) emits no second 'exit'.
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve(undefined);
      proc.once('exit', () => resolve(undefined));
      if (!proc.kill('SIGKILL')) resolve(undefined);
    });
  }

  let url = await launch().catch(async (e) => {
    await llm.close();
    throw e;
  });
  return {
    get url() {
      return url;
    },
    llm,
    log: () => log,
    /** Kills the agent at once (SIGKILL): a backend that dies mid-run. */
    kill,
    /** Starts it again on the same port (its threads are gone: they lived in its memory). */
    async restart() {
      await kill();
      url = await launch();
    },
    async stop() {
      await kill();
      await llm.close();
    },
  };
}
