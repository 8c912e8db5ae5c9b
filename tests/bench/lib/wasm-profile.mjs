// Where a wasm module's bytes go: code size per function from the name section, grouped by
// crate. Used on a build that keeps its names (scripts/build-sdk --keep-names: the same wasm-opt passes without --strip-debug, the same
// code as the published build, plus the name section).

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parseWasm } from '../../../scripts/wasm-sections.mjs';

export { parseWasm };

/** The crate a (demangled) Rust symbol belongs to; generic impls `<A as B>` go by A's crate. */
export function crateOf(name) {
  if (/ shim$/.test(name)) return 'wasm-bindgen export shims';
  if (/^__wbindgen_describe/.test(name)) return 'wasm-bindgen describe (removed by wasm-bindgen)';
  // Mangled names (a cargo build before wasm-bindgen demangles them): legacy `_ZN<len><crate>…`,
  // v0 `_R…C<hash>_<len><crate>…`.
  const legacy = name.match(/^_ZN(\d+)/);
  if (legacy) {
    const start = 3 + legacy[1].length;
    const id = name.slice(start, start + Number(legacy[1]));
    if (!id.startsWith('_$LT$')) return id;
    const inner = id.match(/^_\$LT\$(?:\$RF\$)?(?:mut\$u20\$)?([a-z_][a-z0-9_]*)\.\./);
    if (inner) return inner[1];
  }
  const v0 = name.match(/^_R[^C]*C(?:s[0-9A-Za-z_]*_)?(\d+)/);
  if (v0) {
    const i = v0.index + v0[0].length;
    return name.slice(i, i + Number(v0[1]));
  }
  let n = name.replace(/\[[0-9a-f]+\]/g, '');
  if (n.startsWith('<')) {
    n = n
      .slice(1)
      .replace(/^&(mut )?/, '')
      .replace(/^\[/, '');
    const prim = n.match(/^(?:f32|f64|u8|u16|u32|u64|usize|i8|i16|i32|i64|isize|str|char|bool) as ([A-Za-z_]\w*)::/);
    if (prim) return prim[1];
    if (/^(?:char|str|f32|f64|u\d+|i\d+|usize|isize)>/.test(n)) return 'core';
  }
  const m = n.match(/^([A-Za-z_][A-Za-z0-9_]*)::/);
  if (m) return m[1];
  if (/^(__rust|__rdl|__rg|rust_)/.test(name)) return 'std';
  if (/^(memcpy|memmove|memset|memcmp|malloc|free|realloc)/.test(name)) return 'compiler_builtins';
  if (/^__wbg|^__wbindgen|^wasm_bindgen/.test(name)) return 'wasm_bindgen';
  return 'other';
}

export function wasmProfile(path, top = 15) {
  const buf = readFileSync(path);
  const { sections, bodies } = parseWasm(buf);
  const byCrate = new Map();
  for (const b of bodies) {
    const c = crateOf(b.name);
    const e = byCrate.get(c) ?? { crate: c, bytes: 0, functions: 0 };
    e.bytes += b.size;
    e.functions++;
    byCrate.set(c, e);
  }
  const codeBytes = bodies.reduce((a, b) => a + b.size, 0);
  return {
    bytes: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    sections: sections.filter((s) => s.size > 1000).map((s) => ({ section: s.name, bytes: s.size })),
    codeBytes,
    crates: [...byCrate.values()].sort((a, b) => b.bytes - a.bytes),
    functions: [...bodies]
      .sort((a, b) => b.size - a.size)
      .slice(0, top)
      .map((b) => ({ name: b.name, bytes: b.size })),
  };
}
