// What the page remembers between visits, in localStorage: the sessions it has opened (the
// server keeps their history; this is only the list) and the user's preferences.

const SESSIONS = 'weft.sessions.v1';
const PREFIX = 'weft.pref.';

/**
 * The JSON stored under `key`, or `fallback` when there is none or it cannot be read.
 * @param {string} key
 * @param {unknown} [fallback]
 * @returns {any} whatever was stored: JSON, checked by the caller
 */
function read(key, fallback) {
  try {
    const v = localStorage.getItem(key);
    return v == null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

/**
 * @param {string} key
 * @param {unknown} value
 */
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
  /**
   * @param {string} id
   * @returns {SessionRecord | undefined}
   */
  get(id) {
    return this.list().find((s) => s.id === id);
  },
  /** @param {SessionRecord} record */
  save(record) {
    const list = this.list().filter((s) => s.id !== record.id);
    list.unshift(record);
    write(SESSIONS, list.slice(0, 200));
  },
  /** @param {string} id */
  remove(id) {
    write(
      SESSIONS,
      this.list().filter((s) => s.id !== id),
    );
  },
};

export const prefs = {
  /**
   * @param {string} name
   * @param {unknown} [fallback]
   * @returns {any} whatever was stored: JSON, checked by the caller
   */
  get(name, fallback) {
    return read(PREFIX + name, fallback);
  },
  /**
   * @param {string} name
   * @param {unknown} value
   */
  set(name, value) {
    write(PREFIX + name, value);
  },
};
