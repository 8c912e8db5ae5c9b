// Turn a rule's plan into the provider-neutral output that the provider encoders stream:
// token-sized deltas, tool calls with their argument fragments, the stop kind and the usage
// numbers.
//
// Usage is a deterministic estimate:
//   prompt tokens     = ceil(chars / 4) over the system text, every message's text, tool call
//                       arguments, tool results and the tool definitions (JSON);
//   completion tokens = one per reasoning delta + one per text delta + ceil((name + arguments
//                       JSON) / 4) per tool call.
// So "count to N" costs exactly N completion tokens. A max-tokens limit in the request
// (max_tokens / max_completion_tokens / maxOutputTokens) smaller than the completion cuts the
// reasoning and text to that many deltas, drops the tool calls and stops with "length".

import { tokenize, fragment, estimateTokens } from './lib.mjs';

export function promptChars(conv) {
  let n = (conv.system ?? '').length;
  for (const m of conv.messages) {
    n += (m.text ?? '').length;
    for (const c of m.calls ?? []) n += c.name.length + JSON.stringify(c.args ?? {}).length;
    for (const r of m.results ?? []) n += String(r.content ?? '').length;
  }
  if (conv.tools.length) n += JSON.stringify(conv.tools).length;
  return n;
}

/**
 * @param {{ text?: string, reasoning?: string, toolCalls?: { name: string, args?: Json }[] }} plan from the rules
 * @param {Json} conv the neutral conversation
 * @param {{ maxTokens?: number, reasoning?: boolean }} [opts] `reasoning: false` drops the reasoning
 */
export function shapeOutput(plan, conv, opts = {}) {
  let reasoning = opts.reasoning === false ? [] : tokenize(plan.reasoning ?? '');
  let text = tokenize(plan.text ?? '');
  let toolCalls = (plan.toolCalls ?? []).map((c) => {
    const args = c.args ?? {};
    const json = JSON.stringify(args);
    return { name: c.name, args, json, fragments: fragment(json), tokens: estimateTokens(c.name.length + json.length) };
  });
  let stop = toolCalls.length ? 'tool' : 'end';
  const wanted = reasoning.length + text.length + toolCalls.reduce((a, c) => a + c.tokens, 0);
  if (opts.maxTokens != null && wanted > opts.maxTokens) {
    const budget = opts.maxTokens;
    reasoning = reasoning.slice(0, budget);
    text = text.slice(0, Math.max(0, budget - reasoning.length));
    toolCalls = [];
    stop = 'length';
  }
  const completion = reasoning.length + text.length + toolCalls.reduce((a, c) => a + c.tokens, 0);
  const prompt = Math.max(1, estimateTokens(promptChars(conv)));
  return {
    reasoning,
    reasoningText: reasoning.join(''),
    text,
    textText: text.join(''),
    // A text block is sent when the plan has text (even empty) or when there is nothing else.
    hasText: text.length > 0 || (plan.text != null && stop !== 'length') || (!toolCalls.length && !reasoning.length),
    toolCalls,
    stop,
    usage: { prompt, completion, reasoning: reasoning.length, total: prompt + completion },
  };
}
