// Shared by tests/sdk/originals.test.mjs (Node) and its page (Chromium): every await of the
// scenarios is bounded, so a broken behaviour fails a test instead of hanging it.

/** `promise`, or a rejection naming `what` after `ms`. */
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
