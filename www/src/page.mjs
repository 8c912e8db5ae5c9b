// The page around the chat: the banner, notes in the chat, the welcome of an empty chat,
// scrolling, the drawers, the theme.

import { note } from './chat.mjs';
import { h, set } from './dom.mjs';
import { prefs } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

let bannerTimer = 0;

/**
 * @param {App} app
 * @param {string} text
 * @param {string} [kind]
 * @param {number} [hideAfterMs] 0: until something hides it
 * @param {{ label: string, action: () => void }} [button]
 */
export function showBanner(app, text, kind = 'info', hideAfterMs = 0, button) {
  const { els } = app;
  clearTimeout(bannerTimer);
  els.banner.hidden = false;
  els.banner.dataset.kind = kind;
  set(els.banner, h('span', { text }), button ? h('button', { class: 'btn small', type: 'button', onclick: button.action }, button.label) : null);
  if (hideAfterMs) bannerTimer = setTimeout(() => hideBanner(app), hideAfterMs);
}

/** @param {App} app */
export function hideBanner({ els }) {
  clearTimeout(bannerTimer);
  els.banner.hidden = true;
}

/**
 * @param {App} app
 * @param {string} text
 * @param {string} kind
 */
export function addNote(app, text, kind) {
  app.els.runs.append(note(text, kind));
  updateWelcome(app);
  autoscroll(app, true);
}

/** @param {App} app */
export function updateWelcome({ state, els }) {
  const empty = !state.runs.size && !els.history.querySelector('.history-page .msg') && !els.history.querySelector('.history-note');
  els.welcome.hidden = !empty;
}

/**
 * @param {App} app
 * @param {boolean} [force] scroll to the end even when the user scrolled up
 */
export function autoscroll({ state, els }, force = false) {
  if (force) state.stick = true;
  if (!state.stick) return;
  requestAnimationFrame(() => {
    els.messages.scrollTop = els.messages.scrollHeight;
  });
}

// Below these widths the sessions (and then the agent panel) slide in over the chat.
export const drawer = { sidebar: matchMedia('(max-width: 1279px)'), inspector: matchMedia('(max-width: 799px)') };

/** @param {App} app */
export function closeDrawers({ els }) {
  els.app.dataset.sidebar = 'closed';
  if (drawer.inspector.matches) els.app.dataset.inspector = 'closed';
  els.scrim.hidden = true;
}

/**
 * @param {App} app
 * @param {keyof typeof drawer} which
 */
export function toggle(app, which) {
  const { els } = app;
  const open = els.app.dataset[which] !== 'open';
  if (!drawer[which].matches) {
    // A column: show or hide it, and remember.
    els.app.dataset[which] = open ? 'open' : 'closed';
    prefs.set(which, open);
    return;
  }
  closeDrawers(app);
  els.app.dataset[which] = open ? 'open' : 'closed';
  els.scrim.hidden = !open;
}

/** @param {App} app */
export function layout({ els }) {
  els.app.dataset.inspector = drawer.inspector.matches ? 'closed' : prefs.get('inspector', true) ? 'open' : 'closed';
  els.app.dataset.sidebar = 'closed';
  els.scrim.hidden = true;
}

export function toggleTheme() {
  const root = document.documentElement;
  root.dataset.chosen = 'yes'; // stop following the system (theme.js)
  root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
  prefs.set('theme', root.dataset.theme);
}
