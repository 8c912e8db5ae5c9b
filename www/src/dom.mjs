// A tiny element builder: h('div', { class: 'x', onclick }, child, 'text', [more]).
// Text always goes in as text nodes; nothing here parses HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * A child: a node, a string or a number; null, undefined and false are skipped; arrays nest
 * (their items are children again: anything else becomes its text).
 * @typedef {Node | string | number | null | undefined | false | unknown[]} Child
 */

/**
 * Attributes (`class`, `text`, `style`, `dataset`, `on…` listeners, anything else as an
 * attribute; null, undefined and false left out).
 * @typedef {Record<string, unknown>} Props
 */

/**
 * @template {HTMLElement | SVGElement} E
 * @param {E} el
 * @param {Props | null | undefined} props
 * @param {Child[]} children
 * @returns {E}
 */
function build(el, props, children) {
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', String(v));
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'style') for (const [sk, sv] of Object.entries(/** @type {object} */ (v))) el.style.setProperty(sk, String(sv));
    else if (k === 'dataset')
      for (const [dk, dv] of Object.entries(/** @type {object} */ (v))) {
        if (dv != null) el.dataset[dk] = String(dv);
      }
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/**
 * Appends children (nodes, strings, numbers, arrays of them; null/false skipped).
 * @template {Element} E
 * @param {E} el
 * @param {Child[]} children
 * @returns {E}
 */
export function append(el, children) {
  for (const c of /** @type {Child[]} */ (children.flat(Infinity))) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/**
 * Replaces an element's children (null/false skipped, unlike `replaceChildren`).
 * @template {Element} E
 * @param {E} el
 * @param {Child[]} children
 */
export function set(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * An HTML element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {Child[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/**
 * An SVG element.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {Child[]} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

/**
 * The element `selector` finds under `root`, which the page must have, as a `type`.
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {{ new (): T }} type
 * @returns {T}
 */
export function find(root, selector, type) {
  const el = root.querySelector(selector);
  if (!(el instanceof type)) throw new Error(`the page has no ${type.name} ${selector}`);
  return el;
}

/**
 * Runs `fn` at most once per animation frame, with the latest arguments.
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @returns {(...args: A) => void}
 */
export function throttled(fn) {
  let pending = false;
  /** @type {A | null} */
  let args = null;
  return (...a) => {
    args = a;
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (args) fn(...args);
    });
  };
}

const numbers = new Intl.NumberFormat('en');
/** A count with thousands separators ("12,345"); missing counts as 0. */
export const fmt = (/** @type {number | null | undefined} */ n) => numbers.format(Math.round(n ?? 0));

/**
 * "1.2 s", "340 ms".
 * @param {number} ms
 */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/**
 * "just now", "5 min ago", "yesterday", or a date.
 * @param {number} ts
 */
export function ago(ts) {
  const s = (Date.now() - ts) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 172800) return 'yesterday';
  return new Date(ts).toLocaleDateString();
}

/**
 * What went wrong, for a person: an `Error`'s message, or the thing thrown.
 * @param {unknown} e
 */
export function messageOf(e) {
  return e instanceof Error ? e.message : String(e);
}
