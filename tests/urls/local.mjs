// Whether a host, as Node's WHATWG URL reads it, is this machine, its network, or nothing
// public — written independently of the Rust check it judges (crates/agent/src/tools/fetch.rs).
// Used by the differential test (urls.test.mjs) and the soak (tests/soak/soak.mjs).
import { readFileSync } from 'node:fs';

/** tests/urls/corpus.json. */
export const corpus = JSON.parse(readFileSync(new URL('./corpus.json', import.meta.url), 'utf8'));

/**
 * The 32-bit IPv4 address of a dotted quad (Node serializes every IPv4 host so).
 * @param {string} host
 * @returns {number[] | null}
 */
function ipv4(host) {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  return m ? m.slice(1).map(Number) : null;
}

/** @param {number[]} quad */
function ipv4Local([a, b, c]) {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113)
  );
}

/** The eight 16-bit groups of an IPv6 address as Node serializes it (no dotted form). */
function ipv6Groups(text) {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const h = head ? head.split(':') : [];
  const t = tail === null ? [] : tail ? tail.split(':') : [];
  const fill = tail === null ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

function ipv6Local(g) {
  const v4 = (hi, lo) => [hi >> 8, hi & 255, lo >> 8, lo & 255];
  const zero = (from, to) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 7) && g[7] <= 1) return true; // :: and ::1
  if ((g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return true;
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return true; // Teredo, documentation
  if (g[0] === 0x100 && zero(1, 4)) return true; // discard-only
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return ipv4Local(v4(g[6], g[7]));
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Local(v4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return ipv4Local(v4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true;
  if (g[0] === 0x2002) return ipv4Local(v4(g[1], g[2]));
  return false;
}

/** Whether Node's `hostname` names this machine, its network, or nothing public. */
export function nodeHostLocal(hostname) {
  if (hostname.startsWith('[')) return ipv6Local(ipv6Groups(hostname.slice(1, -1)));
  const quad = ipv4(hostname);
  if (quad) return ipv4Local(quad);
  const name = hostname.replace(/\.+$/, '');
  return name === '' || name === 'localhost' || !name.includes('.') || /\.(localhost|local|localdomain|internal|home\.arpa)$/.test(name);
}

export function nodeParse(raw) {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** Whether fetching `raw` would reach a local host, by Node's reading of it. */
export function reachesLocalHost(raw) {
  const url = nodeParse(raw);
  return !!url && (url.protocol === 'http:' || url.protocol === 'https:') && nodeHostLocal(url.hostname);
}
