// What the page remembers between visits, in localStorage: the sessions it has opened (the
// server keeps their history; this is only the list) and the user's preferences.

const SESSIONS = 'weft.sessions.v1';
const PREFIX = 'weft.pref.';

function read(key, fallback) {
  try {
    const v = localStorage.getItem(key);
    return v == null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* private mode or full: the page still works, it just forgets */
  }
}

/**
 * @typedef {{ id: string, title: string, dialect: import('weft-sdk').Dialect, createdAt: number, updatedAt: number }} SessionRecord
 */

export const sessions = {
  /** @returns {SessionRecord[]} newest first */
  list() {
    const list = read(SESSIONS, []);
    return Array.isArray(list) ? list.filter((s) => s && typeof s.id === 'string').sort((a, b) => b.updatedAt - a.updatedAt) : [];
  },
  /** @returns {SessionRecord | undefined} */
  get(id) {
    return this.list().find((s) => s.id === id);
  },
  /** @param {SessionRecord} record */
  save(record) {
    const list = this.list().filter((s) => s.id !== record.id);
    list.unshift(record);
    write(SESSIONS, list.slice(0, 200));
  },
  remove(id) {
    write(SESSIONS, this.list().filter((s) => s.id !== id));
  },
};

export const prefs = {
  get(name, fallback) {
    return read(PREFIX + name, fallback);
  },
  set(name, value) {
    write(PREFIX + name, value);
  },
};
