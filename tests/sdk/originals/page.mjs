// The page of originals.test.mjs in headless Chromium: loads the built package as a web app
// does and offers the scenarios' `env` (see scenarios.mjs).
import init, { Client } from "/pkg/index.mjs";

await init();

/** `promise`, or a rejection naming `what` after `ms`. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

window.env = { Client, within };
window.ready = true;
