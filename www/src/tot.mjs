// The tree of thoughts of one `tot` run, rebuilt from loom's tot_expand / tot_evaluate /
// tot_backtrack events, and drawn as an indented tree with scores.
//
// The agent keeps the levels of its current path (levels[d]: the candidates proposed at depth
// d); `tot_evaluate` picks the best of the last level; `tot_backtrack {to_depth}` cuts the path
// back to level `to_depth` and carries on with that level's best unexplored candidate
// (crates/agent/src/engine/tot.rs) — the event does not name it, so the model here picks it the
// same way: the highest score not tried yet, the last of equals.

import { h } from './dom.mjs';

/**
 * @typedef {{ id: string, text: string, depth: number, score: number | null,
 *   state: 'root' | 'proposed' | 'chosen' | 'rejected' | 'abandoned' | 'answer',
 *   tried: boolean, children: TotNode[], parent: TotNode | null,
 *   backtrack?: { reason: string } }} TotNode
 */

export class TotModel {
  /** @param {string} request */
  constructor(request) {
    /** @type {TotNode} */
    this.root = { id: 'root', text: request || 'request', depth: 0, score: null, state: 'root', tried: true, children: [], parent: null };
    /** @type {{ parent: TotNode, nodes: TotNode[] }[]} */
    this.levels = [];
    /** @type {TotNode | null} */
    this.current = null;
    this.backtracks = 0;
    this.scored = 0;
    this.finished = false;
    this.version = 0;
  }

  /** @param {string[]} candidates */
  expand(candidates) {
    const parent = this.current ?? this.root;
    const nodes = candidates.map((text, i) => ({
      id: `${parent.id}.${parent.children.length + i}`,
      text,
      depth: parent.depth + 1,
      score: null,
      state: /** @type {const} */ ('proposed'),
      tried: false,
      children: [],
      parent,
    }));
    parent.children.push(...nodes);
    this.levels = this.levels.slice(0, parent.depth);
    this.levels.push({ parent, nodes });
    this.version++;
  }

  /** @param {number} chosen @param {number[]} scores */
  evaluate(chosen, scores) {
    const level = this.levels.at(-1);
    if (!level) return;
    level.nodes.forEach((n, i) => (n.score = scores[i] ?? n.score));
    this.scored += level.nodes.length;
    const node = level.nodes[chosen];
    if (node) this.choose(node);
    this.version++;
  }

  /** @param {TotNode} node */
  choose(node) {
    node.state = 'chosen';
    node.tried = true;
    this.current = node;
  }

  /** @param {number} toDepth @param {string} reason */
  backtrack(toDepth, reason) {
    const from = this.current;
    const lowScore = /scored/.test(reason);
    // Everything on the path below the level we return to is given up.
    for (let n = from; n && n.depth >= toDepth + 1; n = n.parent) {
      n.state = n === from && lowScore ? 'rejected' : 'abandoned';
    }
    this.levels = this.levels.slice(0, toDepth + 1);
    const level = this.levels[toDepth];
    /** @type {TotNode | null} */
    let best = null;
    for (const n of level?.nodes ?? []) {
      if (n.tried || n.score == null) continue;
      if (!best || n.score >= (best.score ?? -Infinity)) best = n;
    }
    this.backtracks++;
    if (best) {
      this.choose(best);
      best.backtrack = { reason };
    }
    this.version++;
  }

  /**
   * The run ended: the node acting last gave the answer.
   * @param {boolean} ok
   */
  finish(ok) {
    this.finished = true;
    if (ok && this.current && this.current.state === 'chosen') this.current.state = 'answer';
    this.version++;
  }

  /** Nodes on the current path (root to the acting node). */
  path() {
    /** @type {Set<TotNode>} */
    const out = new Set();
    for (let n = this.current; n; n = n.parent) out.add(n);
    return out;
  }
}

/** @type {Record<TotNode['state'], string>} */
const MARK = { root: '●', proposed: '○', chosen: '➜', rejected: '↓', abandoned: '✕', answer: '✓' };
/** @type {Partial<Record<TotNode['state'], string>>} */
const STATE_LABEL = {
  proposed: 'proposed',
  chosen: 'chosen',
  rejected: 'scored too low',
  abandoned: 'abandoned',
  answer: 'answered',
};

/** @param {TotModel} model @param {boolean} running */
export function renderTot(model, running) {
  const path = model.path();
  /**
   * @param {TotNode} n
   * @returns {HTMLLIElement}
   */
  const item = (n) => {
    const onPath = path.has(n);
    const acting = running && n === model.current && !model.finished;
    const score = n.score == null ? null : Math.max(0, Math.min(1, n.score));
    return h(
      'li',
      { class: `tot-node is-${n.state}${onPath ? ' on-path' : ''}${acting ? ' is-acting' : ''}`, dataset: { state: n.state } },
      h(
        'div',
        { class: 'tot-row' },
        h('span', { class: 'tot-mark', 'aria-hidden': 'true', text: MARK[n.state] }),
        h('span', { class: 'tot-text', title: n.text, text: n.text }),
        score == null
          ? null
          : h(
              'span',
              { class: 'tot-score', title: `score ${score.toFixed(2)}` },
              h('span', { class: 'tot-bar' }, h('span', { class: 'tot-fill', style: { width: `${Math.round(score * 100)}%` } })),
              h('span', { class: 'tot-num', text: score.toFixed(2) }),
            ),
      ),
      n.state !== 'root' && n.state !== 'proposed' ? h('div', { class: 'tot-state', text: acting ? 'acting…' : STATE_LABEL[n.state] }) : null,
      n.backtrack ? h('div', { class: 'tot-backtrack', text: `↩ backtracked here: ${n.backtrack.reason}` }) : null,
      n.children.length ? h('ul', {}, n.children.map(item)) : null,
    );
  };
  const depth = Math.max(0, ...[...path].map((n) => n.depth));
  return h(
    'div',
    { class: 'tot' },
    h(
      'div',
      { class: 'viz-summary' },
      h('span', {}, `depth ${depth}`),
      h('span', {}, `${model.scored} scored`),
      h('span', { class: model.backtracks ? 'warn' : '' }, `${model.backtracks} backtrack${model.backtracks === 1 ? '' : 's'}`),
    ),
    h('ul', { class: 'tot-tree' }, item(model.root)),
  );
}
