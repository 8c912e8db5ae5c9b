// Walking the sections of a wasm module: shared by the build (scripts/strip-wasm-names.mjs)
// and the benchmark's size profile (tests/bench/lib/wasm-profile.mjs).
//
// The binary format: an 8-byte header, then sections, each one id byte and a LEB128 size; a
// custom section (id 0) starts with its name, a LEB128 length and UTF-8 bytes.

/** Reads an unsigned LEB128 at `pos`: [value, position after it]. Throws past the end. */
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
