// The graph of thoughts of one `got` run, rebuilt from loom's got_plan / got_node_start /
// got_node_complete / got_node_failed / got_expand events, drawn as an SVG DAG whose nodes
// change state as they run.
//
// `got_plan` names the nodes and counts the edges; the edges and the tasks themselves are in the
// plan the model wrote (the JSON of the `plan_graph` response, which the agent validated), so the
// page reads them from there. Likewise `got_expand` (adaptive mode) counts the sub-tasks a node
// was split into; the judge's JSON response names them. A node split this way is drawn with its
// sub-tasks below it (ids `<node>.<sub>`, as the agent names them), and whatever depended on it
// waits for them.

import { h, s } from './dom.mjs';

/**
 * @typedef {{ id: string, task: string, deps: string[], parent: string | null, children: string[],
 *   state: GotState, summary?: string, error?: string }} GotNode
 * @typedef {'pending' | 'running' | 'done' | 'failed' | 'expanded'} GotState
 * @typedef {{ id: string, task: string, deps: string[] }} PlannedNode
 * @typedef {{ x: number, y: number }} Point
 */

/**
 * The first JSON object in a model response, if any.
 * @param {string} text
 * @returns {any} the model's JSON, which its readers check field by field
 */
export function jsonIn(text) {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
}

/**
 * The `nodes` of a plan or judge response: `[{id, task, deps}]`.
 * @param {any} json a model's JSON, checked here
 * @returns {PlannedNode[]}
 */
function planNodes(json) {
  /** @type {unknown[]} */
  const nodes = json && Array.isArray(json.nodes) ? json.nodes : [];
  return nodes
    .filter((n) => n !== null && typeof n === 'object' && 'id' in n && typeof n.id === 'string')
    .map((/** @type {any} */ n) => ({
      id: n.id,
      task: typeof n.task === 'string' ? n.task : '',
      deps: Array.isArray(n.deps) ? n.deps.filter((/** @type {unknown} */ d) => typeof d === 'string') : [],
    }));
}

export class GotModel {
  constructor() {
    /** @type {Map<string, GotNode>} */
    this.nodes = new Map();
    this.edgeCount = 0;
    this.expansions = 0;
    this.planned = false;
    this.version = 0;
  }

  /**
   * Node `id`, made (under its parent, `<parent>.<sub>`) if new.
   * @param {string} id
   * @returns {GotNode}
   */
  node(id) {
    let n = this.nodes.get(id);
    if (!n) {
      const dot = id.lastIndexOf('.');
      const parent = dot > 0 && this.nodes.has(id.slice(0, dot)) ? id.slice(0, dot) : null;
      /** @type {GotNode} */
      const made = { id, task: '', deps: [], parent, children: [], state: 'pending' };
      n = made;
      this.nodes.set(id, n);
      const p = parent ? this.nodes.get(parent) : undefined;
      if (p && !p.children.includes(id)) p.children.push(id);
    }
    return n;
  }

  /**
   * `got_plan`, with the plan response's text (for the tasks and edges).
   * @param {{ node_ids?: string[], edge_count?: number }} ev
   * @param {string} [planText]
   */
  plan(ev, planText) {
    const written = new Map(planNodes(jsonIn(planText ?? '')).map((n) => [n.id, n]));
    const ids = ev.node_ids ?? [];
    for (const id of ids) {
      const n = this.node(id);
      const w = written.get(id);
      if (w) {
        n.task = w.task;
        n.deps = w.deps.filter((d) => ids.includes(d));
      }
    }
    this.edgeCount = ev.edge_count ?? 0;
    this.planned = true;
    this.version++;
  }

  /** @param {string} id */
  start(id) {
    const n = this.node(id);
    if (n.state !== 'expanded') n.state = 'running';
    this.version++;
  }

  /**
   * @param {string} id
   * @param {string} summary
   */
  complete(id, summary) {
    const n = this.node(id);
    n.state = n.children.length ? 'expanded' : 'done';
    n.summary = summary;
    this.version++;
  }

  /**
   * @param {string} id
   * @param {string} error
   */
  fail(id, error) {
    const n = this.node(id);
    n.state = 'failed';
    n.error = error;
    this.version++;
  }

  /**
   * `got_expand`, with the judge response's text (the sub-tasks).
   * @param {{ node_id: string }} ev
   * @param {string} [judgeText]
   */
  expand(ev, judgeText) {
    const parent = this.node(ev.node_id);
    parent.state = 'expanded';
    this.expansions++;
    for (const sub of planNodes(jsonIn(judgeText ?? ''))) {
      const child = this.node(`${parent.id}.${sub.id}`);
      child.task = sub.task;
      child.deps = sub.deps.map((d) => `${parent.id}.${d}`);
    }
    this.version++;
  }

  /** @returns {Record<GotState, number>} how many nodes are in each state */
  counts() {
    const c = { pending: 0, running: 0, done: 0, failed: 0, expanded: 0 };
    for (const n of this.nodes.values()) c[n.state]++;
    return c;
  }
}

const W = 136;
const H = 48;
const GAP_X = 18;
const GAP_Y = 40;

/**
 * Layers top-down: a node sits below everything it waits for.
 * @param {GotModel} model
 */
function layout(model) {
  const nodes = model.nodes;
  /**
   * @param {GotNode | undefined} n
   * @returns {string[]}
   */
  const waitsFor = (n) => {
    if (!n) return [];
    // What depends on a split node waits for its sub-tasks too; a sub-task sits below its parent.
    const deps = n.deps.flatMap((id) => [id, ...(nodes.get(id)?.children ?? [])]);
    if (n.parent) deps.push(n.parent);
    return deps.filter((id) => id !== n.id && nodes.has(id) && !isAncestor(nodes, n.id, id));
  };
  /** @type {Map<string, number>} */
  const layer = new Map();
  /** @type {Set<string>} */
  const visiting = new Set();
  /**
   * @param {string} id
   * @returns {number}
   */
  const depth = (id) => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const deps = waitsFor(nodes.get(id));
    const d = deps.length ? Math.max(...deps.map((x) => depth(x) + 1)) : 0;
    visiting.delete(id);
    layer.set(id, d);
    return d;
  };
  /** @type {string[][]} */
  const rows = [];
  for (const id of nodes.keys()) (rows[depth(id)] ??= []).push(id);
  const dense = rows.filter(Boolean);
  // Order each row by where what it waits for sits (fewer crossings), then by plan order.
  /** @type {Map<string, number>} */
  const x = new Map();
  dense.forEach((row, r) => {
    if (r > 0) {
      const order = new Map(row.map((id, i) => [id, i]));
      /** @param {string} id */
      const bary = (id) => {
        const deps = waitsFor(nodes.get(id)).filter((d) => x.has(d));
        return deps.length ? deps.reduce((a, d) => a + (x.get(d) ?? 0), 0) / deps.length : Infinity;
      };
      row.sort((a, b) => bary(a) - bary(b) || (order.get(a) ?? 0) - (order.get(b) ?? 0));
    }
    row.forEach((id, i) => x.set(id, i - (row.length - 1) / 2));
  });
  const widest = Math.max(1, ...dense.map((r) => r.length));
  const width = widest * W + (widest - 1) * GAP_X + 24;
  /** @type {Map<string, Point>} */
  const pos = new Map();
  dense.forEach((row, r) => {
    row.forEach((id) => {
      pos.set(id, { x: width / 2 + (x.get(id) ?? 0) * (W + GAP_X) - W / 2, y: 12 + r * (H + GAP_Y) });
    });
  });
  return { pos, width, height: 24 + dense.length * H + (dense.length - 1) * GAP_Y, waitsFor };
}

/**
 * @param {Map<string, GotNode>} nodes
 * @param {string} id
 * @param {string} maybeChild
 */
function isAncestor(nodes, id, maybeChild) {
  for (let n = nodes.get(maybeChild); n?.parent; n = nodes.get(n.parent)) if (n.parent === id) return true;
  return false;
}

/**
 * @param {string} text
 * @param {number} n
 */
function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/** @type {Record<GotState, string>} */
const STATE = { pending: 'waiting', running: 'running', done: 'done', failed: 'failed', expanded: 'split' };
/** @type {Record<GotState, string>} */
const ICON = { pending: '○', running: '◌', done: '✓', failed: '✕', expanded: '⤵' };

/** @param {GotModel} model */
export function renderGot(model) {
  if (!model.nodes.size) return h('div', { class: 'viz-empty', text: 'Planning the graph…' });
  const { pos, width, height } = layout(model);
  const edges = [];
  for (const n of model.nodes.values()) {
    const to = pos.get(n.id);
    // What it waits for, and the node it was split from.
    const from = n.deps.map((dep) => ({ dep, split: false }));
    if (n.parent) from.push({ dep: n.parent, split: true });
    for (const { dep, split } of from) {
      const a = pos.get(dep);
      if (!a || !to) continue;
      const x1 = a.x + W / 2;
      const y1 = a.y + H;
      const x2 = to.x + W / 2;
      const y2 = to.y;
      const dy = (y2 - y1) / 2;
      const done = model.nodes.get(dep)?.state === 'done';
      edges.push(
        s('path', {
          class: `got-edge${done ? ' is-done' : ''}${split ? ' is-split' : ''}`,
          d: `M ${x1} ${y1} C ${x1} ${y1 + dy}, ${x2} ${y2 - dy}, ${x2} ${y2 - 3}`,
          'marker-end': 'url(#got-arrow)',
        }),
      );
    }
  }
  const boxes = [...model.nodes.values()].map((n) => {
    const p = pos.get(n.id) ?? { x: 0, y: 0 };
    const detail = n.error ?? n.summary ?? n.task;
    return s(
      'g',
      { class: `got-node is-${n.state}`, transform: `translate(${p.x} ${p.y})`, dataset: { id: n.id, state: n.state } },
      s('title', {}, `${n.id} — ${STATE[n.state]}${n.task ? `\n${n.task}` : ''}${detail && detail !== n.task ? `\n→ ${detail}` : ''}`),
      s('rect', { class: 'got-box', width: W, height: H, rx: 10 }),
      n.state === 'running' ? s('rect', { class: 'got-pulse', width: W, height: H, rx: 10 }) : null,
      s('text', { class: 'got-id', x: 10, y: 19 }, clip(n.id, 12)),
      s('text', { class: 'got-state', x: W - 10, y: 19, 'text-anchor': 'end' }, `${ICON[n.state]} ${STATE[n.state]}`),
      s('text', { class: 'got-task', x: 10, y: 37 }, clip(n.task || '…', 19)),
    );
  });
  const c = model.counts();
  return h(
    'div',
    { class: 'got' },
    h(
      'div',
      { class: 'viz-summary' },
      h('span', {}, `${model.nodes.size} nodes`),
      h('span', {}, `${c.done} done`),
      c.running ? h('span', { class: 'live' }, `${c.running} running`) : null,
      c.failed ? h('span', { class: 'bad' }, `${c.failed} failed`) : null,
      model.expansions ? h('span', { class: 'split' }, `${model.expansions} split`) : null,
    ),
    s(
      'svg',
      {
        class: 'got-svg',
        viewBox: `0 0 ${width} ${height}`,
        width,
        height,
        role: 'img',
        'aria-label': `Graph of thoughts: ${model.nodes.size} sub-tasks`,
      },
      s(
        'defs',
        {},
        s(
          'marker',
          { id: 'got-arrow', viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
          s('path', { class: 'got-arrowhead', d: 'M 0 0 L 10 5 L 0 10 z' }),
        ),
      ),
      edges,
      boxes,
    ),
    h(
      'ol',
      { class: 'got-list' },
      [...model.nodes.values()].map((n) =>
        h(
          'li',
          { class: `is-${n.state}`, dataset: { id: n.id } },
          h('span', { class: 'got-list-id', text: n.id }),
          h('span', { class: 'got-list-text', text: n.error ? `failed: ${n.error}` : (n.summary ?? n.task ?? '') }),
        ),
      ),
    ),
  );
}
