// The scripted LLM's agent rules: what it answers to each agent's instructions.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate } from './rules.mjs';
import { useScriptedLlm, openai, turn } from './kit.mjs';

useScriptedLlm();

describe('agent rules', () => {
  const P = openai;
  const ask = (instruction, messages, tools) => turn(P, { messages: [{ role: 'system', content: `You are helpful.\n\n${instruction}` }, ...messages], tools });
  const timeCall = [{ id: 'call_t', name: 'get_time', args: { timezone: 'UTC' } }];
  const afterTime = (user) => [P.user(user), P.calls(timeCall), ...P.results([{ id: 'call_t', name: 'get_time', content: '2025-11-22T10:00:00Z' }])];

  test('dup: understand answers the three sections; the first plan answers the repeated request with a plan', async () => {
    const u = await ask('Understand the problem first. Do not solve it yet.', [P.user('What time is it?')]);
    assert.equal(u.rule, 'dup-understand');
    assert.match(u.text, /^Core goal: What time is it\?\nKey constraints: .+\nRelevant context: nothing before this request\.$/);
    assert.deepEqual(u.calls, []);
    const plan = await ask(
      'Plan, act, observe. You have written your understanding.',
      [P.user('What time is it?'), { role: 'assistant', content: u.text }, P.user('With that understanding, carry out my request: What time is it?')],
      ['get_time'],
    );
    assert.equal(plan.rule, 'dup-plan+time');
    assert.equal(plan.text, 'Plan: call get_time, then answer from the result.');
    assert.deepEqual(
      plan.calls.map((c) => c.name),
      ['get_time'],
    );
    const after = await ask('Plan, act, observe.', afterTime('What time is it?'), ['get_time']);
    assert.equal(after.rule, 'tool-results');
    assert.equal(after.text, 'It is 2025-11-22T10:00:00Z.');
  });

  test('tot: expand proposes k steps (not the abandoned ones), evaluate scores them, act carries one out', async () => {
    const expand = (k, extra = '') =>
      `Tree of thoughts: propose next steps. Given the conversation so far, propose exactly ${k} different candidate next steps.${extra} Reply with JSON only`;
    const first = await ask(expand(3), [P.user('What time is it?')], ['get_time']);
    assert.equal(first.rule, 'tot-expand');
    assert.deepEqual(JSON.parse(first.text).candidates, [
      'Use the tools to answer: What time is it?',
      'Answer directly from what I already know',
      'Ask the user to clarify the request',
    ]);
    const two = await ask(expand(2, ' These steps were tried and abandoned; do not propose them again:\n- Use the tools to answer: What time is it?\n'), [
      P.user('What time is it?'),
    ]);
    assert.deepEqual(JSON.parse(two.text).candidates, ['Answer directly from what I already know', 'Ask the user to clarify the request']);
    const later = await ask(expand(3), afterTime('What time is it?'), ['get_time']);
    assert.deepEqual(JSON.parse(later.text).candidates, ['Answer from the tool results', 'Check the results with another tool call']);

    const evaluate = (candidates) =>
      `Tree of thoughts: score the candidates. Rate them.\n\nCandidates:\n${candidates.map((c, i) => `${i + 1}. ${c}`).join('\n')}\n\nReply with JSON only`;
    const scores = await ask(evaluate(JSON.parse(first.text).candidates), [P.user('What time is it?')]);
    assert.equal(scores.rule, 'tot-evaluate');
    assert.deepEqual(JSON.parse(scores.text), { scores: [0.9, 0.6, 0.2] });
    const low = await ask(evaluate(['Answer from the tool results']), afterTime('What time is it? dead end'));
    assert.deepEqual(JSON.parse(low.text), { scores: [0.1] });

    const act = (step) => `Tree of thoughts: carry out this step: ${step}\nUse the tools if the step needs them.`;
    const tool = await ask(act('Use the tools to answer: What time is it?'), [P.user('What time is it?')], ['get_time']);
    assert.equal(tool.rule, 'tot-act+time');
    assert.deepEqual(
      tool.calls.map((c) => c.name),
      ['get_time'],
    );
    const direct = await ask(act('Answer directly from what I already know'), [P.user('What time is it?')], ['get_time']);
    assert.equal(direct.text, 'Without tools I can\'t find out "What time is it?", so I can\'t say for sure.');
    const math = await ask(act('Answer directly from what I already know'), [P.user('what is 6*7')]);
    assert.equal(math.text, 'Without tools: 6*7 = 42.');
    const results = await ask(act('Answer from the tool results'), afterTime('What time is it?'), ['get_time']);
    assert.equal(results.rule, 'tool-results');
  });

  test('got: plans split at ";" with a combine node, a bad plan once, judgements, sub-tasks', async () => {
    const plan = 'Graph of thoughts: plan sub-tasks. Break the request into a graph. Reply with JSON only';
    const one = await ask(plan, [P.user('What time is it?')]);
    assert.equal(one.rule, 'got-plan');
    assert.deepEqual(JSON.parse(one.text), { nodes: [{ id: 'task', task: 'What time is it?', deps: [] }] });
    const split = await ask(plan, [P.user('What time is it; write hi to a.txt')]);
    assert.deepEqual(JSON.parse(split.text).nodes, [
      { id: 's1', task: 'What time is it', deps: [] },
      { id: 's2', task: 'write hi to a.txt', deps: [] },
      { id: 'combine', task: 'Combine the results into one answer', deps: ['s1', 's2'] },
    ]);
    const bad = await ask(plan, [P.user('a bad plan please')]);
    assert.deepEqual(
      JSON.parse(bad.text).nodes.map((n) => n.deps),
      [['b'], ['a']],
    );
    const fixed = await ask(`${plan}\n\nYour previous plan was rejected: a cycle. Reply with a corrected plan.`, [P.user('a bad plan please')]);
    assert.equal(JSON.parse(fixed.text).nodes.length, 1);

    const judge = 'Graph of thoughts: judge a sub-task. Decide. Reply with JSON only';
    const brief = (id, task, inputs = '') => `Sub-task ${id}: ${task}\n\nThe whole request: everything${inputs}`;
    const complex = await ask(judge, [P.user(brief('task', 'What time is it in UTC and what time is it in Asia/Tokyo'))]);
    assert.equal(complex.rule, 'got-judge');
    assert.deepEqual(JSON.parse(complex.text), {
      complex: true,
      nodes: [
        { id: 'p1', task: 'What time is it in UTC', deps: [] },
        { id: 'p2', task: 'what time is it in Asia/Tokyo', deps: [] },
      ],
    });
    assert.deepEqual(JSON.parse((await ask(judge, [P.user(brief('t', 'What time is it'))])).text), { complex: false });

    const node = 'Graph of thoughts: you are doing one sub-task of a larger request.';
    const timeNode = await ask(node, [P.user(brief('s1', 'What time is it in Asia/Tokyo'))], ['get_time']);
    assert.equal(timeNode.rule, 'got-node+time');
    assert.deepEqual(
      timeNode.calls.map((c) => [c.name, c.args]),
      [['get_time', { timezone: 'Asia/Tokyo' }]],
    );
    const combine = await ask(
      node,
      [
        P.user(
          brief(
            'combine',
            'Combine the results into one answer',
            '\n\nResults it builds on:\n- s1 (What time is it): It is noon (UTC): said the clock.\n- s2 (check the outage): FAILED: HTTP 500',
          ),
        ),
      ],
      ['get_time'],
    );
    assert.equal(combine.text, 'Combined: It is noon (UTC): said the clock. s2 failed (HTTP 500).');
    const outage = await ask(node, [P.user(brief('s2', 'check the outage'))], ['get_time']);
    assert.equal(outage.status, 500);
    assert.equal(outage.res.headers.get('x-scripted-rule'), 'got-node');
    const after = await ask(node, afterTime(brief('s1', 'What time is it')), ['get_time']);
    assert.equal(after.rule, 'tool-results');
  });
});
