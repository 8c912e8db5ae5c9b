// The page of originals.test.mjs in headless Chromium: loads the built package as a web app
// does and offers the scenarios' `env` (see scenarios.mjs).
import init, { Client } from '/pkg/index.mjs';
import { within } from '/within.mjs';

await init();

window.env = { Client, within };
window.ready = true;
