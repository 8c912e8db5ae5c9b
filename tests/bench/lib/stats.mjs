// Medians, ranges and pair-by-pair ratios for the bench tables.

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

export function summary(xs) {
  const finite = xs.filter(Number.isFinite);
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length, runs: xs };
}

/**
 * Ratios computed pair by pair: run i of `a` against run i of `b` (measured back to back in the
 * same repetition), then summarised. `a` and `b` are arrays of equal length.
 */
export function pairRatio(a, b) {
  const n = Math.min(a.length, b.length);
  const r = [];
  for (let i = 0; i < n; i++) if (Number.isFinite(a[i]) && Number.isFinite(b[i]) && b[i] !== 0) r.push(a[i] / b[i]);
  return summary(r);
}

/** `12.3 (11.9–13.0)` with a sensible number of digits. */
export function fmt(s, digits) {
  if (!s || !Number.isFinite(s.median)) return 'n/a';
  const d = digits ?? autoDigits(s.median);
  return `${s.median.toFixed(d)} (${s.min.toFixed(d)}–${s.max.toFixed(d)})`;
}

export function autoDigits(x) {
  const a = Math.abs(x);
  if (a >= 100) return 0;
  if (a >= 10) return 1;
  if (a >= 1) return 2;
  return 3;
}

export function num(x, digits) {
  if (!Number.isFinite(x)) return 'n/a';
  return x.toFixed(digits ?? autoDigits(x));
}

/** Markdown table from a header row and rows. */
export function table(head, rows) {
  const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  return out.join('\n');
}
