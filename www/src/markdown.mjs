// A small Markdown renderer for model output, safe by construction: the source is HTML-escaped
// FIRST, so every character of it reaches the page as text; the renderer then only adds tags
// it writes itself. The one attribute that carries source text is a link's `href`, and only
// for http(s), mailto and in-page URLs (escaped text has no quote that could end the
// attribute). Images are never loaded: `![alt](url)` becomes a link. Raw HTML in the source
// shows as the text it is.
//
// Supported: paragraphs (a newline is a line break, as in chat), # headings, fenced and
// indented code, `inline code`, **bold**, *italic*, ~~strike~~, [links](https://…), bare
// https:// links, > quotes, - / 1. lists (nested by indentation), --- rules and | tables.
// An unclosed code fence runs to the end, so a reply renders sensibly while it streams.

/** @type {Record<string, string>} */
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Escapes the five HTML-significant characters.
 * @param {unknown} text
 */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * Source text (escaped) of an href, or `null` when the URL is not one we link to.
 * @param {string} escaped
 */
function safeHref(escaped) {
  const url = escaped.trim();
  if (/^(https?:\/\/|mailto:)[^\s]+$/i.test(url)) return url;
  if (/^#[\w-]*$/.test(url)) return url;
  return null;
}

/**
 * Renders Markdown source to an HTML string that is safe to assign to `innerHTML`.
 * @param {string} source
 * @returns {string}
 */
export function renderMarkdown(source) {
  // NUL is reserved for the inline placeholders below; it has no business in a reply anyway.
  const text = escapeHtml(
    String(source ?? '')
      .replace(/\r\n?/g, '\n')
      .replace(/\u0000/g, ''),
  );
  return blocks(text.split('\n'));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}&gt; ?(.*)$/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/**
 * @param {string[]} lines escaped source
 * @returns {string} their HTML
 */
function blocks(lines) {
  /** @type {string[]} */
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let m;
    if ((m = line.match(FENCE))) {
      const fence = m[1];
      const lang = m[2].replace(/[^\w+#.-]/g, '');
      /** @type {string[]} */
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++; // the closing fence (or the end)
      const cls = lang ? ` class="language-${lang}"` : '';
      out.push(`<pre><code${cls}>${body.join('\n')}</code></pre>`);
      continue;
    }
    if (/^( {4}|\t)/.test(line) && !ITEM.test(line)) {
      /** @type {string[]} */
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim())) {
        body.push(lines[i].replace(/^( {4}|\t)/, ''));
        i++;
      }
      while (body.length && !body[body.length - 1].trim()) body.pop();
      out.push(`<pre><code>${body.join('\n')}</code></pre>`);
      continue;
    }
    if ((m = line.match(HEADING))) {
      const level = m[1].length;
      out.push(`<h${level}>${inline(m[2])}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      /** @type {string[]} */
      const body = [];
      while (i < lines.length && (m = lines[i].match(QUOTE))) {
        body.push(m[1]);
        i++;
      }
      out.push(`<blockquote>${blocks(body)}</blockquote>`);
      continue;
    }
    if (ITEM.test(line)) {
      i = list(lines, i, out);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, out);
      continue;
    }
    /** @type {string[]} */
    const para = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++].trim());
    if (!para.length) para.push(lines[i++].trim());
    out.push(`<p>${para.map(inline).join('<br>')}</p>`);
  }
  return out.join('');
}

/**
 * @param {string[]} lines
 * @param {number} i
 */
function startsBlock(lines, i) {
  const line = lines[i];
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    ITEM.test(line) ||
    (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-'))
  );
}

/**
 * A list starting at `lines[start]`; nested lists are the items' indented lines.
 * @param {string[]} lines
 * @param {number} start a line that is an item (`ITEM`)
 * @param {string[]} out its HTML goes here
 * @returns {number} the line after it
 */
function list(lines, start, out) {
  const first = lines[start].match(ITEM);
  if (!first) throw new Error('a list starts at an item');
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  /** @type {string[][]} */
  const items = [];
  let i = start;
  while (i < lines.length) {
    const m = lines[i].match(ITEM);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      items.push([m[3]]);
      i++;
      continue;
    }
    if (!items.length) break;
    const line = lines[i];
    const blank = !line.trim();
    const nested = line.length - line.trimStart().length > indent;
    if (blank && i + 1 < lines.length && lines[i + 1].length - lines[i + 1].trimStart().length > indent) {
      items[items.length - 1].push('');
      i++;
      continue;
    }
    if (blank || !nested) break;
    items[items.length - 1].push(line.slice(Math.min(indent + 2, line.length - line.trimStart().length)));
    i++;
  }
  const tag = ordered ? 'ol' : 'ul';
  const startAt = ordered ? parseInt(first[2], 10) : 1;
  const attr = ordered && startAt !== 1 ? ` start="${startAt}"` : '';
  const body = items.map((item) => {
    const [head, ...rest] = item;
    const more = rest.some((l) => l.trim()) ? blocks(rest) : '';
    return `<li>${inline(head.trim())}${more}</li>`;
  });
  out.push(`<${tag}${attr}>${body.join('')}</${tag}>`);
  return i;
}

/** @param {string} line */
function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|')) s = s.slice(0, -1);
  return s.split('|').map((c) => c.trim());
}

/**
 * A table whose head is `lines[start]`.
 * @param {string[]} lines
 * @param {number} start
 * @param {string[]} out its HTML goes here
 * @returns {number} the line after it
 */
function table(lines, start, out) {
  const head = cells(lines[start]);
  const aligns = cells(lines[start + 1]).map((c) =>
    c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : '',
  );
  let i = start + 2;
  /** @type {string[][]} */
  const rows = [];
  while (i < lines.length && lines[i].includes('|') && lines[i].trim()) rows.push(cells(lines[i++]));
  /**
   * @param {string} tag
   * @param {string | undefined} c
   * @param {number} k
   */
  const cell = (tag, c, k) => `<${tag}${aligns[k] ? ` class="align-${aligns[k]}"` : ''}>${inline(c ?? '')}</${tag}>`;
  out.push(
    `<div class="table"><table><thead><tr>${head.map((c, k) => cell('th', c, k)).join('')}</tr></thead>` +
      `<tbody>${rows.map((r) => `<tr>${head.map((_, k) => cell('td', r[k], k)).join('')}</tr>`).join('')}</tbody></table></div>`,
  );
  return i;
}

/**
 * Inline Markdown on escaped text. Code spans and links are set aside first (placeholders).
 * @param {string} text
 */
function inline(text) {
  /** @type {string[]} */
  const held = [];
  const hold = (/** @type {string} */ html) => `\u0000${held.push(html) - 1}\u0000`;
  let s = text;
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, /** @type {string} */ __, /** @type {string} */ code) =>
    hold(`<code>${code.trim() || code}</code>`),
  );
  s = s.replace(
    /(!?)\[([^\]\n]+)\]\(\s*([^\s)]+)(?:\s+&quot;[^\n]*?&quot;)?\s*\)/g,
    (whole, /** @type {string} */ bang, /** @type {string} */ label, /** @type {string} */ url) => {
      const href = safeHref(url);
      if (!href) return whole;
      const shown = bang ? `image: ${label}` : label;
      return hold(`<a href="${href}" target="_blank" rel="noopener noreferrer nofollow">${emphasis(shown)}</a>`);
    },
  );
  s = s.replace(/&lt;((?:https?:\/\/|mailto:)[^\s&]+(?:&amp;[^\s&]+)*)&gt;/gi, (whole, /** @type {string} */ url) => {
    const href = safeHref(url);
    return href ? hold(`<a href="${href}" target="_blank" rel="noopener noreferrer nofollow">${url}</a>`) : whole;
  });
  s = s.replace(/\bhttps?:\/\/(?:[^\s&\u0000]|&amp;)+/gi, (match) => {
    const url = match.replace(/[.,;:!?)\]]+$/, '');
    const link = hold(`<a href="${url}" target="_blank" rel="noopener noreferrer nofollow">${url}</a>`);
    return link + match.slice(url.length);
  });
  s = emphasis(s);
  return s.replace(/\u0000(\d+)\u0000/g, (_, /** @type {string} */ n) => held[Number(n)]);
}

/** @param {string} s */
function emphasis(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}
