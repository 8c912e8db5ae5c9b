// A small WebSocket client for the end-to-end suites: send JSON, wait for frames.

import { createHmac } from 'node:crypto';

import WebSocket from 'ws';

export class Conn {
  /** @param {string} url */
  static open(url, protocols, options) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, protocols, options);
      const conn = new Conn(ws);
      ws.once('open', () => resolve(conn));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  }

  constructor(ws) {
    this.ws = ws;
    /** every frame received, parsed */
    this.frames = [];
    this.waiters = [];
    this.closed = null;
    ws.on('message', (data) => {
      let frame;
      try { frame = JSON.parse(data.toString()); } catch { frame = { unparsable: data.toString() }; }
      this.frames.push(frame);
      Conn.onFrame?.(frame);
      this.waiters = this.waiters.filter((w) => !w.check());
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.waiters = this.waiters.filter((w) => !w.check());
    });
  }

  send(obj) { this.ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj)); }

  /** Waits for the first frame (from index `from`) matching `pred`; returns it. */
  wait(pred, { from = 0, timeout = 20_000 } = {}) {
    return new Promise((resolve, reject) => {
      const w = {
        check: () => {
          const i = this.frames.findIndex((f, j) => j >= from && pred(f));
          if (i >= 0) { clearTimeout(w.timer); resolve(this.frames[i]); return true; }
          if (this.closed) { clearTimeout(w.timer); reject(new Error(`socket closed ${JSON.stringify(this.closed)}`)); return true; }
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

  waitClose(timeout = 10_000) {
    return new Promise((resolve, reject) => {
      if (this.closed) return resolve(this.closed);
      const t = setTimeout(() => reject(new Error('not closed')), timeout);
      this.ws.once('close', (code, reason) => { clearTimeout(t); resolve({ code, reason: reason.toString() }); });
    });
  }

  close() { this.ws.close(); }
  kill() { this.ws.terminate(); }
}

/** Asserts the run frames' event_ids are 1..n with no gap or duplicate. */
export function eventIds(frames, runId, pick = (f) => f.event_id) {
  return frames.filter((f) => (f.run_id ?? f.id) === runId || f.event?.run_id === runId).map(pick).filter((x) => x !== undefined);
}

/** A per-user token as an app's backend mints it (README, "Per-user tokens"): an HS256 JWT. */
export function mintToken(claims, secret, header = { alg: 'HS256', typ: 'JWT' }) {
  const b64url = (x) => Buffer.from(JSON.stringify(x)).toString('base64url');
  const body = `${b64url(header)}.${b64url(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
