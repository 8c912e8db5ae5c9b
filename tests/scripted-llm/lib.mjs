// Shared helpers of the scripted LLM server: deterministic ids, tokenising, argument
// fragmenting, token estimates, the provider error type and small type checks.
// Plain ESM, Node built-ins only.

import { createHash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Deterministic id source: the same seed (the request body) always yields the same ids, so
 * transcripts recorded against the scripted server are reproducible.
 */
export function idSource(seed) {
  let counter = 0;
  return function id(prefix, length, alphabet = BASE62) {
    counter += 1;
    let out = '';
    let round = 0;
    while (out.length < length) {
      const digest = createHash('sha256').update(`${seed}\u0000${prefix}\u0000${counter}\u0000${round}`).digest();
      for (const byte of digest) {
        if (out.length >= length) break;
        out += alphabet[byte % alphabet.length];
      }
      round += 1;
    }
    return prefix + out;
  };
}

/** A base64-looking opaque blob (signatures), deterministic in its seed. */
export function opaqueBlob(seed, bytes = 96) {
  const chunks = [];
  let round = 0;
  let total = 0;
  while (total < bytes) {
    const digest = createHash('sha256').update(`${seed}\u0000blob\u0000${round}`).digest();
    chunks.push(digest);
    total += digest.length;
    round += 1;
  }
  return Buffer.concat(chunks).subarray(0, bytes).toString('base64');
}

/**
 * Split text into token-sized deltas on word boundaries: each piece is optional leading
 * whitespace plus one word; words longer than 8 characters are cut into pieces of at most
 * 6. Concatenating the pieces gives back the text exactly.
 */
export function tokenize(text) {
  if (!text) return [];
  const pieces = text.match(/\s*\S+|\s+/g) ?? [];
  const out = [];
  for (const piece of pieces) {
    const lead = piece.match(/^\s*/)[0];
    const word = piece.slice(lead.length);
    if (word.length <= 8) {
      out.push(piece);
      continue;
    }
    // Megabyte "words" (a tool result echoed back) go in 64 KB pieces, not half a million.
    const step = word.length > HUGE ? 65_536 : 6;
    let first = true;
    for (let i = 0; i < word.length; i += step) {
      out.push((first ? lead : '') + word.slice(i, i + step));
      first = false;
    }
  }
  return out;
}

/** Longer than this, a word or an argument string streams in 64 KB pieces. */
const HUGE = 16_384;

/** Cut a JSON argument string into several fragments of a few characters each (64 KB each
 * for a huge one, as a file's content can be). */
export function fragment(text) {
  if (text.length > HUGE) {
    const out = [];
    for (let i = 0; i < text.length; i += 65_536) out.push(text.slice(i, i + 65_536));
    return out;
  }
  const sizes = [4, 7, 3, 6, 5, 8];
  const out = [];
  let i = 0;
  let k = 0;
  while (i < text.length) {
    const n = sizes[k % sizes.length];
    out.push(text.slice(i, i + n));
    i += n;
    k += 1;
  }
  return out;
}

export const estimateTokens = (chars) => Math.ceil(chars / 4);

/** An error answered with a provider-shaped body. */
export class ApiError extends Error {
  constructor(status, body, headers = {}) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The JSON type name used in OpenAI-style "expected X, but got Y" messages. */
export function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(v) ? 'an integer' : 'a decimal';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

/**
 * Serialise like Google's JSON front end: `": "` after every key, no space after commas
 * (`{"candidates": [{"content": {"parts": [...`).
 */
export function googleJson(value) {
  if (Array.isArray(value)) return `[${value.map(googleJson).join(',')}]`;
  if (isObj(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${googleJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Truncate a `data:` payload in the middle, leaving the rest of the event framing as is. */
export function malform(event) {
  return event.replace(/^data: (.*)$/m, (_, payload) => `data: ${payload.slice(0, Math.max(1, Math.floor(payload.length / 2)))}`);
}
