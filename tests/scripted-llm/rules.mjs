// The rule table of the scripted LLM: what the model "says" for a given conversation.
//
// Every provider request is first turned into one neutral conversation (see
// `buildContext`), so a rule works the same for OpenAI, Anthropic and Gemini. The first rule
// whose `match` accepts the context answers with a plan:
//
//   { text?: string, reasoning?: string, toolCalls?: [{ name: string, args: object }] }
//
// The server then streams the plan in the provider's wire format: reasoning first, then the
// text, then the tool calls.
//
// A rule is `{ name, match, respond }`:
//   - `match` is a RegExp, tested (case-insensitively if you add /i) against the last user
//     message, and only at the start of a turn, i.e. when no tool result has come back since
//     that message (so a RegExp rule that calls a tool cannot loop); or a function
//     `(ctx) => truthy` that sees everything and decides itself.
//   - `respond(ctx, match)` returns a plan, or null to let the next rules try.
//     `ctx.next()` evaluates the rules after this one (used by `think` to add reasoning to
//     whatever the other rules answer).
//
// Add rules by editing `rules` below (order matters), or pass `rules: [...]` to
// `startScriptedLlm`, which puts them in front of these.

/** Phonetic alphabet for `long reply N` (every word at most 8 characters: one token each). */
const WORDS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'xray',
  'yankee',
  'zulu',
];

export const MAX_WORDS = 100000;

/** A user asking for a summary / compaction. */
const SUMMARY_ASK = /\bsummari[sz]e\b|\bcompact\s+(?:the|this|our)\s+(?:conversation|history|context|chat)\b/i;
/** A system prompt asking to summarise the conversation (kept narrow: ordinary prompts must not match). */
const SUMMARY_SYSTEM =
  /\b(?:summari[sz]e|summari[sz]ing|summary of)\b[^.\n]{0,60}\b(?:conversation|history|chat|transcript|discussion|messages)\b|\bcompaction\b/i;

const DENIAL = /\b(denied|deny|denies|rejected|declined|refused|not approved|disallowed|no connected client can approve|nobody answered the approval)\b/i;

export const rules = [
  {
    // A compaction request: a system message asking to summarise the conversation, or a user
    // message asking for a summary. Wins over everything, even pending tool results.
    name: 'summarize',
    match: (ctx) => SUMMARY_ASK.test(ctx.lastUser) || SUMMARY_SYSTEM.test(ctx.system),
    respond: (ctx) => ({ text: summarize(ctx) }),
  },
  // ---- the dup, tot and got agents (crates/agent/src/engine/prompts.rs): keyed on the fixed
  // first sentence of each instruction, which the engine appends to the system prompt.
  {
    // dup `understand`: the three sections, from the request.
    name: 'dup-understand',
    match: (ctx) => ctx.system.includes(DUP_UNDERSTAND),
    respond: (ctx) => ({
      text:
        `Core goal: ${clip(ctx.lastUser, 120)}\nKey constraints: keep the answer short; use the tools where they help.\n` +
        `Relevant context: ${ctx.lastUserIndex > 0 ? 'the earlier turns of this conversation' : 'nothing before this request'}.`,
    }),
  },
  {
    // dup's first `plan` (the request repeated after the understanding): "Plan: …" and then
    // whatever the rules answer for the request itself.
    name: 'dup-plan',
    match: (ctx) => ctx.system.includes(DUP_PLAN) && ctx.turnResults.length === 0 && ctx.lastUser.startsWith(DUP_CUE),
    respond: (ctx) => {
      const plan = ctx.nextWith({ lastUser: ctx.lastUser.slice(DUP_CUE.length).trim() });
      const names = (plan.toolCalls ?? []).map((c) => c.name);
      return names.length ? { ...plan, text: `Plan: call ${names.join(' and ')}, then answer from the result.` } : plan;
    },
  },
  {
    // tot `think_expand`: at the start of a path, use the tools / answer directly / ask; once
    // results are in, answer from them. Abandoned steps are not proposed again.
    name: 'tot-expand',
    match: (ctx) => ctx.system.includes(TOT_EXPAND),
    respond: (ctx) => {
      const k = Number(ctx.system.match(/propose exactly (\d+)/)?.[1] ?? 3);
      const abandoned = abandonedSteps(ctx.system);
      const request = userRequest(ctx);
      const all = ctx.turnResults.length
        ? ['Answer from the tool results', 'Check the results with another tool call']
        : [`Use the tools to answer: ${request}`, 'Answer directly from what I already know', 'Ask the user to clarify the request'];
      const candidates = all.filter((c) => !abandoned.includes(c)).slice(0, Math.max(1, k));
      return { text: JSON.stringify({ candidates }) };
    },
  },
  {
    // tot `think_evaluate`: fixed scores per kind of step; "dead end" in the request scores
    // everything after the first step low, to show a backtrack on scores.
    name: 'tot-evaluate',
    match: (ctx) => ctx.system.includes(TOT_EVALUATE),
    respond: (ctx) => {
      const candidates = [...ctx.system.matchAll(/^\d+\. (.+)$/gm)].map((m) => m[1]);
      const deadEnd = /\bdead end\b/i.test(userRequest(ctx)) && ctx.turnResults.length > 0;
      const scores = candidates.map((c) => (deadEnd ? 0.1 : scoreStep(c)));
      return { text: JSON.stringify({ scores }) };
    },
  },
  {
    // tot `act`: carries out the step; "Answer from the tool results" falls through to the
    // `tool-results` rule.
    name: 'tot-act',
    match: (ctx) => ctx.system.includes(TOT_ACT),
    respond: (ctx) => {
      const step = ctx.system
        .slice(ctx.system.indexOf(TOT_ACT) + TOT_ACT.length)
        .split('\n')[0]
        .trim();
      const tools = step.match(/^Use the tools to answer: ([\s\S]+)$/);
      if (tools) return ctx.nextWith({ lastUser: tools[1] });
      if (/^Answer directly/.test(step)) return { text: answerWithoutTools(userRequest(ctx)) };
      if (/^Ask the user/.test(step)) return { text: 'Could you tell me more about what you need?' };
      return null;
    },
  },
  {
    // got `plan_graph`: one node per part of the request split at ";", and a `combine` node
    // after them when there are several. A part mentioning an "outage" gets a node whose
    // model call fails (see `got-node`); "bad plan" gets a cyclic plan first.
    name: 'got-plan',
    match: (ctx) => ctx.system.includes(GOT_PLAN),
    respond: (ctx) => {
      const request = userRequest(ctx);
      if (/\bbad plan\b/i.test(request) && !ctx.system.includes('previous plan was rejected')) {
        return {
          text: JSON.stringify({
            nodes: [
              { id: 'a', task: 'first', deps: ['b'] },
              { id: 'b', task: 'second', deps: ['a'] },
            ],
          }),
        };
      }
      const parts = request
        .split(/\s*;\s*/)
        .map((x) => x.trim())
        .filter(Boolean);
      if (parts.length <= 1) return { text: JSON.stringify({ nodes: [{ id: 'task', task: request, deps: [] }] }) };
      const nodes = parts.map((task, i) => ({ id: `s${i + 1}`, task, deps: [] }));
      nodes.push({ id: 'combine', task: 'Combine the results into one answer', deps: nodes.map((n) => n.id) });
      return { text: JSON.stringify({ nodes }) };
    },
  },
  {
    // got (adaptive) judgement: a task with " and " is complex, split at each " and ".
    name: 'got-judge',
    match: (ctx) => ctx.system.includes(GOT_JUDGE),
    respond: (ctx) => {
      const { task } = subTask(ctx.lastUser);
      const parts = task
        .split(/\s+and\s+/i)
        .map((x) => x.trim())
        .filter(Boolean);
      if (parts.length < 2) return { text: JSON.stringify({ complex: false }) };
      return { text: JSON.stringify({ complex: true, nodes: parts.map((p, i) => ({ id: `p${i + 1}`, task: p, deps: [] })) }) };
    },
  },
  {
    // got sub-task: with inputs, combines them; a task mentioning an "outage" fails (HTTP
    // 500); otherwise whatever the rules answer for the task alone. After tool results the
    // `tool-results` rule answers.
    name: 'got-node',
    match: (ctx) => ctx.system.includes(GOT_NODE) && ctx.turnResults.length === 0,
    respond: (ctx) => {
      const { task, inputs } = subTask(ctx.lastUser);
      if (/\boutage\b/i.test(task)) return { fault: '500' };
      if (inputs.length) {
        return {
          text: `Combined: ${inputs.map((i) => (i.result.startsWith('FAILED: ') ? `${i.id} failed (${i.result.slice(8)}).` : i.result)).join(' ')}`,
        };
      }
      return ctx.nextWith({ lastUser: task });
    },
  },
  {
    // "loop forever": calls get_time again after every result, to exercise iteration caps.
    name: 'loop',
    match: (ctx) => /\bloop forever\b/i.test(ctx.lastUser) && ctx.hasTool('get_time'),
    respond: () => ({ toolCalls: [{ name: 'get_time', args: { timezone: 'UTC' } }] }),
  },
  {
    // Tool results arrived for the current turn: answer from them.
    name: 'tool-results',
    match: (ctx) => ctx.turnResults.length > 0,
    respond: (ctx) => ({ text: ctx.turnResults.map(describeResult).join(' ') }),
  },
  {
    // "think" / "reason": a reasoning part first, then whatever the other rules answer.
    name: 'think',
    match: /\b(think|thinking|reason|reasoning)\b/i,
    respond: (ctx) => {
      const plan = ctx.next();
      const names = (plan.toolCalls ?? []).map((c) => c.name);
      const reasoning =
        `The user wrote: "${clip(ctx.lastUser, 80)}". ` +
        (names.length ? `To answer I need to call ${names.join(' and ')}.` : 'I can answer this directly.') +
        ' I will keep the answer short.';
      return { ...plan, reasoning };
    },
  },
  {
    name: 'explain',
    match: /\bexplain\b/i,
    respond: (ctx) => ({ text: explain(ctx.lastUser) }),
  },
  {
    name: 'count',
    match: /\bcount\s+(?:up\s+)?to\s+(\d+)\b/i,
    respond: (ctx, m) => {
      const n = Math.min(Number(m[1]), MAX_WORDS);
      return { text: Array.from({ length: n }, (_, i) => String(i + 1)).join(' ') };
    },
  },
  {
    name: 'long-reply',
    match: /\blong\s+reply\s+(\d+)\b/i,
    respond: (ctx, m) => {
      const n = Math.min(Number(m[1]), MAX_WORDS);
      return { text: Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' ') };
    },
  },
  {
    // Two tool calls in one response.
    name: 'parallel',
    match: /\bparallel\b|\btime\b[\s\S]*\bcalculat|\bcalculat[\s\S]*\btime\b/i,
    respond: (ctx) => {
      const expr = extractExpression(ctx.lastUser) ?? '2+2';
      const time = { name: 'get_time', args: { timezone: extractTimezone(ctx.lastUser) } };
      const calc = { name: 'calculator', args: { expression: expr } };
      if (ctx.hasTool('get_time') && ctx.hasTool('calculator')) return { toolCalls: [time, calc] };
      if (ctx.hasTool('get_time')) {
        return { toolCalls: [time, { name: 'get_time', args: { timezone: time.args.timezone === 'UTC' ? 'Asia/Tokyo' : 'UTC' } }] };
      }
      if (ctx.hasTool('calculator')) return { toolCalls: [calc, { name: 'calculator', args: { expression: '6*7' } }] };
      return { text: 'I have no get_time or calculator tool, so there is nothing to run in parallel.' };
    },
  },
  {
    name: 'time',
    match: /\btime\b/i,
    respond: (ctx) =>
      ctx.hasTool('get_time')
        ? { toolCalls: [{ name: 'get_time', args: { timezone: extractTimezone(ctx.lastUser) } }] }
        : { text: "I don't have a clock tool, so I can't tell the time." },
  },
  {
    // A file of N bytes (at most 64 MB), for the storage-limit tests: the content comes from
    // the model, so its tool call is as large as the file.
    name: 'write-bytes',
    match: /\bwrite\s+(\d{1,8})\s+bytes\s+(?:to|into)\s+(\S+)\s*$/i,
    respond: (ctx, m) => writeCall(ctx, 'x'.repeat(Number(m[1])), unquote(m[2].replace(/[.,;:!?]+$/, ''))),
  },
  {
    name: 'write',
    match: /\bwrite\s+([\s\S]+?)\s+(?:to|into)\s+(\S+)\s*$/i,
    respond: (ctx, m) => {
      const content = unquote(m[1]);
      const path = unquote(m[2].replace(/[.,;:!?]+$/, ''));
      return writeCall(ctx, content, path);
    },
  },
  {
    name: 'calculate',
    match: (ctx) => ctx.turnResults.length === 0 && extractExpression(ctx.lastUser) !== null,
    respond: (ctx) => {
      const expression = extractExpression(ctx.lastUser);
      if (ctx.hasTool('calculator')) return { toolCalls: [{ name: 'calculator', args: { expression } }] };
      const value = evaluate(expression);
      return { text: value === null ? `I can't evaluate ${expression}.` : `${expression} = ${value}.` };
    },
  },
  {
    // "who are you": the first line of the system prompt, so a test can see which persona ran.
    name: 'persona',
    match: /\bwho are you\b/i,
    respond: (ctx) => ({ text: `I am: ${(ctx.system.split('\n')[0] || 'nobody').trim()}` }),
  },
  {
    // "use <tool> [with {json}]": calls any offered tool by name (client-side tools included).
    name: 'use-tool',
    match: /\buse (?:the )?([A-Za-z0-9_-]+)(?: tool)?(?: with (\{.*\}))?/i,
    respond: (ctx, m) => {
      if (!ctx.hasTool(m[1])) return null;
      let args = {};
      try {
        args = m[2] ? JSON.parse(m[2]) : {};
      } catch {
        return null;
      }
      return { toolCalls: [{ name: m[1], args }] };
    },
  },
  {
    name: 'echo',
    match: () => true,
    respond: (ctx) => ({ text: ctx.lastUser ? `You said: ${ctx.lastUser}` : 'Hello! How can I help?' }),
  },
];

/**
 * Build the context the rules see from a neutral conversation:
 *   { provider, model, system, messages, tools, toolChoice }
 * where messages are
 *   { role: 'user', text } | { role: 'assistant', text, calls: [{id, name, args}] } |
 *   { role: 'tool', results: [{id, name, content, isError}] }
 */
export function buildContext(conv) {
  const messages = conv.messages;
  let lastUserIndex = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      lastUserIndex = i;
      break;
    }
  }
  const calls = [];
  for (const m of messages) if (m.role === 'assistant') calls.push(...(m.calls ?? []));
  const used = new Set();
  const findCall = (r) => {
    let c = r.id ? calls.find((x) => x.id === r.id) : undefined;
    if (!c) c = calls.find((x) => !used.has(x) && x.name === r.name);
    if (c) used.add(c);
    return c;
  };
  const turnResults = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'tool') continue;
    for (const r of m.results) {
      const call = findCall(r);
      if (i > lastUserIndex) turnResults.push({ ...r, name: r.name ?? call?.name, call });
    }
  }
  const disabled = conv.toolChoice === 'none';
  const toolNames = new Set(disabled ? [] : conv.tools.map((t) => t.name));
  return {
    provider: conv.provider,
    model: conv.model,
    system: conv.system ?? '',
    messages,
    tools: disabled ? [] : conv.tools,
    lastUser: lastUserIndex >= 0 ? messages[lastUserIndex].text.trim() : '',
    lastUserIndex,
    turnResults,
    hasTool: (name) => toolNames.has(name),
  };
}

/**
 * Run the rule table (extra rules first) and return the plan, with `rule` naming who answered.
 * In `respond`, `ctx.next()` asks the rules after this one; `ctx.nextWith({ lastUser })` asks
 * them about a changed context (an agent's step quoting the request).
 */
export function planReply(ctx, extraRules = []) {
  const table = [...extraRules, ...rules];
  const from = (start, c) => {
    for (let i = start; i < table.length; i++) {
      const rule = table[i];
      let m;
      if (rule.match instanceof RegExp) {
        if (c.turnResults.length > 0) continue;
        rule.match.lastIndex = 0;
        m = rule.match.exec(c.lastUser);
      } else {
        m = rule.match(c);
      }
      if (!m) continue;
      const plan = rule.respond({ ...c, next: () => from(i + 1, c), nextWith: (o) => from(i + 1, { ...c, ...o }) }, m);
      if (!plan) continue;
      return { ...plan, rule: plan.rule ? `${rule.name}+${plan.rule}` : rule.name };
    }
    return { text: `You said: ${c.lastUser}`, rule: 'echo' };
  };
  return from(0, ctx);
}

// ---- helpers used by the rules -------------------------------------------------------------

// The fixed first sentences of the agents' instructions (crates/agent/src/engine/prompts.rs).
export const DUP_UNDERSTAND = 'Understand the problem first.';
export const DUP_PLAN = 'Plan, act, observe.';
export const DUP_CUE = 'With that understanding, carry out my request: ';
export const TOT_EXPAND = 'Tree of thoughts: propose next steps.';
export const TOT_EVALUATE = 'Tree of thoughts: score the candidates.';
export const TOT_ACT = 'Tree of thoughts: carry out this step: ';
export const GOT_PLAN = 'Graph of thoughts: plan sub-tasks.';
export const GOT_JUDGE = 'Graph of thoughts: judge a sub-task.';
export const GOT_NODE = 'Graph of thoughts: you are doing one sub-task';

/** The user's own request: the last user turn (agents' steps add no user turns of their own). */
function userRequest(ctx) {
  return ctx.lastUser.startsWith(DUP_CUE) ? ctx.lastUser.slice(DUP_CUE.length).trim() : ctx.lastUser;
}

/** The steps a tot expand prompt lists as tried and abandoned. */
function abandonedSteps(system) {
  const at = system.indexOf('tried and abandoned');
  if (at < 0) return [];
  return [...system.slice(at).matchAll(/^- (.+)$/gm)].map((m) => m[1].trim());
}

/** How promising the scripted tot finds a step. */
function scoreStep(step) {
  if (/^Answer from the tool results/.test(step)) return 0.95;
  if (/^Use the tools/.test(step)) return 0.9;
  if (/^Answer directly/.test(step)) return 0.6;
  if (/^Check the results|^Try the tools/.test(step)) return 0.3;
  if (/^Ask the user/.test(step)) return 0.2;
  return 0.5;
}

/** A direct answer without tools: arithmetic it can do, else an honest "can't tell". */
function answerWithoutTools(request) {
  const expression = extractExpression(request);
  const value = expression === null ? null : evaluate(expression);
  if (value !== null) return `Without tools: ${expression} = ${value}.`;
  return `Without tools I can't find out "${clip(request, 80)}", so I can't say for sure.`;
}

/** A got sub-task turn: "Sub-task <id>: <task>", then the request, then "- <id> (<task>): <result>" inputs. */
function subTask(text) {
  const task = text.match(/^Sub-task [^:\n]+: (.*)$/m)?.[1]?.trim() ?? text.trim();
  const at = text.indexOf('\nResults it builds on:');
  const inputs = at < 0 ? [] : [...text.slice(at).matchAll(/^- (\S+) \((.*?)\): (.*)$/gm)].map((m) => ({ id: m[1], task: m[2], result: m[3] }));
  return { task, inputs };
}

function clip(text, n) {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n - 3)}...` : flat;
}

function unquote(s) {
  const t = s.trim();
  const m = t.match(/^(["'`])([\s\S]*)\1$/);
  return m ? m[2] : t;
}

function extractTimezone(text) {
  const m = text.match(/\b([A-Z][A-Za-z_]+\/[A-Z][A-Za-z_]+(?:\/[A-Z][A-Za-z_]+)?)\b/);
  return m ? m[1] : 'UTC';
}

/** "calculate <expr>" or "what is <arithmetic>"; null when the message asks for neither. */
export function extractExpression(text) {
  let m = text.match(/\bcalculate\s+([\s\S]+?)\s*[?.!]*\s*$/i);
  if (m) {
    // "calculate 6*7 in parallel": keep the arithmetic, drop the words after it
    const arith = m[1].match(/^([-+*/%^().\d\s]*\d[-+*/%^().\d\s]*?)\s+[a-z][\s\S]*$/i);
    return (arith ? arith[1] : m[1]).trim();
  }
  m = text.match(/\bwhat(?:'s|\s+is)\s+([-+*/%^().\d\s]+?)\s*[?.!]*\s*$/i);
  if (m && /\d/.test(m[1]) && /[-+*/%^]/.test(m[1])) return m[1].replace(/\s+/g, '');
  return null;
}

/** A tiny arithmetic evaluator (+ - * / % ^, parentheses, unary minus). Null on bad input. */
export function evaluate(expr) {
  const src = expr.replace(/\s+/g, '');
  let i = 0;
  const peek = () => src[i];
  const num = () => {
    const m = src.slice(i).match(/^\d+(?:\.\d+)?/);
    if (!m) throw new Error('number expected');
    i += m[0].length;
    return Number(m[0]);
  };
  const atom = () => {
    if (peek() === '-') {
      i++;
      return -atom();
    }
    if (peek() === '+') {
      i++;
      return atom();
    }
    if (peek() === '(') {
      i++;
      const v = sum();
      if (peek() !== ')') throw new Error(') expected');
      i++;
      return v;
    }
    return num();
  };
  const power = () => {
    const base = atom();
    if (peek() === '^') {
      i++;
      return base ** power();
    }
    return base;
  };
  const product = () => {
    let v = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = src[i++];
      const r = power();
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const sum = () => {
    let v = product();
    while (peek() === '+' || peek() === '-') {
      const op = src[i++];
      const r = product();
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  try {
    const v = sum();
    if (i !== src.length || !Number.isFinite(v)) return null;
    return Number.isInteger(v) ? v : Number(v.toPrecision(12));
  } catch {
    return null;
  }
}

function patchPath(patch) {
  const m = typeof patch === 'string' ? patch.match(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/m) : null;
  return m ? m[1].trim() : 'the file';
}

function describeResult(r) {
  const content = String(r.content ?? '').trim();
  const sentence = (s) => (/[.!?]$/.test(s) ? s : `${s}.`);
  const name = r.name ?? r.call?.name ?? 'tool';
  const args = r.call?.args ?? {};
  if (name === 'apply_patch' || name === 'write') {
    const path = name === 'write' ? (args.path ?? 'the file') : patchPath(args.patch);
    if (DENIAL.test(content)) return `Understood: writing ${path} was denied, so I left it unchanged.`;
    if (r.isError) return sentence(`Writing ${path} failed: ${content}`);
    return `Done: I wrote ${path}.`;
  }
  if (r.isError) return sentence(`The ${name} tool failed: ${content}`);
  if (name === 'get_time') return sentence(`It is ${content}`);
  if (name === 'calculator') return sentence(args.expression ? `${args.expression} = ${content}` : `The result is ${content}`);
  return sentence(`The ${name} tool returned: ${content}`);
}

const COMMANDS = {
  ls: ['lists the files in a directory', false],
  dir: ['lists the files in a directory', false],
  cat: ['prints the contents of a file', false],
  head: ['prints the first lines of a file', false],
  tail: ['prints the last lines of a file', false],
  less: ['shows a file page by page', false],
  read: ['reads a file from the workspace', false],
  grep: ['searches files for a pattern', false],
  find: ['searches for files by name', false],
  pwd: ['prints the current directory', false],
  date: ['prints the current date and time', false],
  get_time: ['tells the current time', false],
  echo: ['prints its arguments', false],
  curl: ['downloads a URL', false],
  wget: ['downloads a URL', false],
  web_fetch: ['downloads a URL', false],
  calculator: ['evaluates an arithmetic expression', false],
  rm: ['deletes files', true],
  rmdir: ['deletes directories', true],
  mv: ['moves or renames files', true],
  cp: ['copies files', true],
  mkdir: ['creates a directory', true],
  touch: ['creates an empty file or updates its timestamp', true],
  chmod: ['changes file permissions', true],
  git: ['runs a git version-control command', true],
  npm: ['runs an npm package-manager command', true],
  write: ['writes content to a file in the workspace', true],
  apply_patch: ['applies a patch that adds, changes or deletes files in the workspace', true],
};

function explain(text) {
  const fenced = text.match(/```[a-z]*\n?([\s\S]*?)```/i) ?? text.match(/`([^`]+)`/);
  let command = fenced?.[1];
  if (!command) {
    const after = text.match(/\bexplain\b(?:\s+(?:what|this|the|following|command|does|:))*\s*:?\s*([\s\S]+)$/i);
    command = after?.[1] ?? text;
  }
  command = command.trim().replace(/[?.]+$/, '');
  const firstLine = command.split('\n')[0].trim();
  const program = (firstLine.match(/^\*\*\* Begin Patch/) ? 'apply_patch' : (firstLine.split(/\s+/)[0] ?? '')).replace(/^.*\//, '');
  const known = COMMANDS[program];
  const shown = clip(firstLine, 60);
  if (!known) {
    return `The command \`${shown}\` runs the program ${program || 'named first'} with the given arguments. I can't tell what it changes, so review it before approving.`;
  }
  const [what, mutates] = known;
  const writes = mutates || /(^|[^>])>>?[^>]/.test(firstLine);
  return (
    `The command \`${shown}\` ${what}. ` + (writes ? 'It changes files, so approve it only if that is what you want.' : 'It only reads and changes nothing.')
  );
}

function summarize(ctx) {
  const asks = [];
  let calls = 0;
  const names = new Set();
  let replies = 0;
  ctx.messages.forEach((m, i) => {
    if (m.role === 'user' && !(i === ctx.lastUserIndex && SUMMARY_ASK.test(m.text))) {
      if (m.text.trim()) asks.push(`"${clip(m.text, 40)}"`);
    }
    if (m.role === 'assistant') {
      if (m.text && m.text.trim()) replies += 1;
      for (const c of m.calls ?? []) {
        calls += 1;
        names.add(c.name);
      }
    }
  });
  const recent = asks.slice(-10);
  const topics = recent.length ? `The user asked: ${recent.join('; ')}.` : 'The user has not asked anything yet.';
  const tools = calls ? ` The assistant made ${calls} tool call${calls === 1 ? '' : 's'} (${[...names].join(', ')})` : ' The assistant made no tool calls';
  return `Summary of the conversation so far: ${topics}${tools} and gave ${replies} repl${replies === 1 ? 'y' : 'ies'}.`;
}

/** Writes `content` to `path` with apply_patch if offered, else write, else says it can't. */
function writeCall(ctx, content, path) {
  if (ctx.hasTool('apply_patch')) {
    const body = content
      .split('\n')
      .map((line) => `+${line}`)
      .join('\n');
    return { toolCalls: [{ name: 'apply_patch', args: { patch: `*** Begin Patch\n*** Add File: ${path}\n${body}\n*** End Patch` } }] };
  }
  if (ctx.hasTool('write')) return { toolCalls: [{ name: 'write', args: { path, content } }] };
  return { text: `I can't write ${path}: no write or apply_patch tool is available.` };
}
