// The page around the chat: the banner, notes in the chat, scrolling, the drawers, the theme.

import { note } from './chat.mjs';
import { updateWelcome } from './composer.mjs';
import { h, set } from './dom.mjs';
import { els, state } from './state.mjs';
import { prefs } from './store.mjs';

let bannerTimer = 0;

export function showBanner(text, kind = 'info', hideAfterMs = 0, button) {
  clearTimeout(bannerTimer);
  els.banner.hidden = false;
  els.banner.dataset.kind = kind;
  set(
    els.banner,
    h('span', { text }),
    button ? h('button', { class: 'btn small', type: 'button', onclick: button.action }, button.label) : null,
  );
  if (hideAfterMs) bannerTimer = setTimeout(hideBanner, hideAfterMs);
}

export function hideBanner() {
  clearTimeout(bannerTimer);
  els.banner.hidden = true;
}

export function addNote(text, kind) {
  els.runs.append(note(text, kind));
  updateWelcome();
  autoscroll(true);
}

export function autoscroll(force = false) {
  if (force) state.stick = true;
  if (!state.stick) return;
  requestAnimationFrame(() => {
    els.messages.scrollTop = els.messages.scrollHeight;
  });
}

// Below these widths the sessions (and then the agent panel) slide in over the chat.
export const drawer = { sidebar: matchMedia('(max-width: 1279px)'), inspector: matchMedia('(max-width: 799px)') };

export function closeDrawers() {
  els.app.dataset.sidebar = 'closed';
  if (drawer.inspector.matches) els.app.dataset.inspector = 'closed';
  els.scrim.hidden = true;
}

export function toggle(which) {
  const open = els.app.dataset[which] !== 'open';
  if (!drawer[which].matches) {
    // A column: show or hide it, and remember.
    els.app.dataset[which] = open ? 'open' : 'closed';
    prefs.set(which, open);
    return;
  }
  closeDrawers();
  els.app.dataset[which] = open ? 'open' : 'closed';
  els.scrim.hidden = !open;
}

export function layout() {
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
