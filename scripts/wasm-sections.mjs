// Walking the sections of a wasm module: shared by the build (scripts/strip-wasm-names.mjs)
// and the benchmark's size profile (tests/bench/lib/wasm-profile.mjs).
//
// The binary format: an 8-byte header, then sections, each one id byte and a LEB128 size; a
// custom section (id 0) starts with its name, a LEB128 length and UTF-8 bytes.

/**
 * Reads an unsigned LEB128 at `pos`: [value, position after it]. Throws past the end.
 * @param {Uint8Array} buf
 * @param {number} pos
 * @returns {[number, number]}
 */
export function leb(buf, pos) {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error(`wasm: a number runs past the end (byte ${pos})`);
    const b = buf[pos++];
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return [value, pos];
    shift += 7;
  }
}

/**
 * The sections of `buf`, in order: `{id, name, start, contents, body, end}`, where `start` is the
 * section's first byte, `contents` the first byte after its size, `body` the first byte of what
 * it holds (after a custom section's name), `end` one past its last byte, and `name` a custom
 * section's name (else null). Throws on a buffer that is
 * not a wasm module or whose sections run past its end.
 * @param {Buffer} buf
 */
export function* sections(buf) {
  if (buf.length < 8 || buf.readUInt32LE(0) !== 0x6d736100) throw new Error('not a wasm module');
  let pos = 8;
  while (pos < buf.length) {
    const start = pos;
    const id = buf[pos];
    const [size, contents] = leb(buf, pos + 1);
    const end = contents + size;
    if (end > buf.length) throw new Error(`wasm: the section at byte ${start} runs past the end`);
    let name = null;
    let body = contents;
    if (id === 0) {
      const [len, at] = leb(buf, contents);
      name = buf.toString('utf8', at, at + len);
      body = at + len;
    }
    yield { id, name, start, contents, body, end };
    pos = end;
  }
}

/**
 * The module's sections (`{id, name, size}`) and its function bodies (`{index, size, name}`),
 * named from the name section where it has one (else `func<index>`).
 * @param {Buffer} buf
 */
export function parseWasm(buf) {
  /** @type {{ id: number, name: string, size: number }[]} */
  const list = [];
  let imported = 0;
  /** @type {{ index: number, size: number, name: string }[]} */
  const bodies = [];
  /** @type {Map<number, string>} */
  const names = new Map();
  for (const { id, name: custom, contents, body, end } of sections(buf)) {
    let pos = body;
    if (custom === 'name') {
      while (pos < end) {
        const sub = buf[pos++];
        let len;
        [len, pos] = leb(buf, pos);
        const subEnd = pos + len;
        if (sub === 1) {
          let count;
          [count, pos] = leb(buf, pos);
          for (let i = 0; i < count; i++) {
            let idx;
            let nl;
            [idx, pos] = leb(buf, pos);
            [nl, pos] = leb(buf, pos);
            names.set(idx, buf.subarray(pos, pos + nl).toString());
            pos += nl;
          }
        }
        pos = subEnd;
      }
    } else if (id === 2) {
      let count;
      [count, pos] = leb(buf, pos);
      for (let i = 0; i < count; i++) {
        for (let k = 0; k < 2; k++) {
          let l;
          [l, pos] = leb(buf, pos);
          pos += l;
        }
        const kind = buf[pos++];
        if (kind === 0) {
          imported++;
          [, pos] = leb(buf, pos);
        } else if (kind === 1) {
          pos += 1;
          const flags = buf[pos++];
          [, pos] = leb(buf, pos);
          if (flags & 1) [, pos] = leb(buf, pos);
        } else if (kind === 2) {
          const flags = buf[pos++];
          [, pos] = leb(buf, pos);
          if (flags & 1) [, pos] = leb(buf, pos);
        } else if (kind === 3) {
          pos += 2;
        } else if (kind === 4) {
          pos += 1;
          [, pos] = leb(buf, pos);
        }
      }
    } else if (id === 10) {
      let count;
      [count, pos] = leb(buf, pos);
      for (let i = 0; i < count; i++) {
        const s = pos;
        let len;
        [len, pos] = leb(buf, pos);
        bodies.push({ index: imported + i, size: pos - s + len, name: '' });
        pos += len;
      }
    }
    /** @type {Record<number, string>} */
    const known = { 1: 'type', 2: 'import', 3: 'function', 5: 'memory', 6: 'global', 7: 'export', 9: 'elem', 10: 'code', 11: 'data', 12: 'datacount' };
    list.push({ id, name: known[id] ?? custom ?? String(id), size: end - contents });
  }
  for (const b of bodies) b.name = names.get(b.index) ?? `func${b.index}`;
  return { sections: list, bodies };
}
