// A small WebSocket client for the end-to-end suites: send JSON, wait for frames.

import { createHmac } from 'node:crypto';

import WebSocket from 'ws';

/**
 * A frame as the server sent it, parsed: the tests read whichever fields they assert on, so it
 * stays the JSON it is (the wire's shape is pinned by the protocol crate's golden tests).
 * @typedef {Record<string, any>} Frame
 */

export class Conn {
  /**
   * Every frame of every connection, as it arrives (a suite that keeps them all sets it).
   * @type {((frame: Frame) => void) | undefined}
   */
  static onFrame;

  /**
   * @param {string} url
   * @param {string | string[]} [protocols]
   * @param {WebSocket.ClientOptions} [options]
   * @returns {Promise<Conn>}
   */
  static open(url, protocols, options) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, protocols, options);
      const conn = new Conn(ws);
      ws.once('open', () => resolve(conn));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  }

  /** @param {WebSocket} ws */
  constructor(ws) {
    this.ws = ws;
    /** @type {Frame[]} every frame received, parsed */
    this.frames = [];
    /** @type {{ check: () => boolean, timer?: NodeJS.Timeout }[]} */
    this.waiters = [];
    /** @type {{ code: number, reason: string } | null} */
    this.closed = null;
    ws.on('message', (data) => {
      let frame;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        frame = { unparsable: data.toString() };
      }
      this.frames.push(frame);
      Conn.onFrame?.(frame);
      this.waiters = this.waiters.filter((w) => !w.check());
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.waiters = this.waiters.filter((w) => !w.check());
    });
  }

  /** @param {string | object} obj a frame, as JSON text or to be written as JSON */
  send(obj) {
    this.ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj));
  }

  /**
   * Waits for the first frame (from index `from`) matching `pred`; returns it.
   * @param {(frame: Frame) => unknown} pred
   * @param {{ from?: number, timeout?: number }} [options]
   * @returns {Promise<Frame>}
   */
  wait(pred, { from = 0, timeout = 20_000 } = {}) {
    return new Promise((resolve, reject) => {
      /** @type {{ check: () => boolean, timer?: NodeJS.Timeout }} */
      const w = {
        check: () => {
          const i = this.frames.findIndex((f, j) => j >= from && pred(f));
          if (i >= 0) {
            clearTimeout(w.timer);
            resolve(this.frames[i]);
            return true;
          }
          if (this.closed) {
            clearTimeout(w.timer);
            reject(new Error(`socket closed ${JSON.stringify(this.closed)}`));
            return true;
          }
          return false;
        },
      };
      w.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`timed out; frames so far:\n${this.frames.map((f) => JSON.stringify(f).slice(0, 200)).join('\n')}`));
      }, timeout);
      if (!w.check()) this.waiters.push(w);
    });
  }

  /**
   * @param {number} [timeout] ms
   * @returns {Promise<{ code: number, reason: string }>}
   */
  waitClose(timeout = 10_000) {
    return new Promise((resolve, reject) => {
      if (this.closed) return resolve(this.closed);
      const t = setTimeout(() => reject(new Error('not closed')), timeout);
      this.ws.once('close', (code, reason) => {
        clearTimeout(t);
        resolve({ code, reason: reason.toString() });
      });
    });
  }

  close() {
    this.ws.close();
  }
  kill() {
    this.ws.terminate();
  }
}

/**
 * The event ids of run `runId`'s frames (`pick` reads one), those that have one.
 * @param {Frame[]} frames
 * @param {string} runId
 * @param {(frame: Frame) => unknown} [pick]
 */
export function eventIds(frames, runId, pick = (f) => f.event_id) {
  return frames
    .filter((f) => (f.run_id ?? f.id) === runId || f.event?.run_id === runId)
    .map(pick)
    .filter((x) => x !== undefined);
}

/**
 * A per-user token as an app's backend mints it (README, "Per-user tokens"): an HS256 JWT.
 * @param {object} claims
 * @param {string} secret
 * @param {object} [header]
 */
export function mintToken(claims, secret, header = { alg: 'HS256', typ: 'JWT' }) {
  const b64url = (/** @type {unknown} */ x) => Buffer.from(JSON.stringify(x)).toString('base64url');
  const body = `${b64url(header)}.${b64url(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
