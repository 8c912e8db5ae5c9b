// The web_fetch URL check (weft-agent `checked_url`) against Node's WHATWG URL, the parser a
// fetch in a JavaScript runtime uses, over every URL of corpus.json: whatever host the fetch
// would reach, the check must have judged. So a URL whose host Node reads as local or private
// is refused, and a URL the check lets through is the very URL Node reads (same
// serialization, hence same host) and names a public host.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const corpusPath = fileURLToPath(new URL("./corpus.json", import.meta.url));
const corpus = JSON.parse(readFileSync(corpusPath, "utf8"));

/** The Rust verdicts, from `cargo run --example url_verdicts` (built on first use). */
function rustVerdicts() {
  const out = execFileSync(
    "cargo",
    ["run", "--quiet", "--locked", "-p", "weft-agent", "--example", "url_verdicts", "--", corpusPath],
    { cwd: root, encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "inherit"] },
  );
  return JSON.parse(out);
}

/** The 32-bit IPv4 address of a dotted quad (Node serializes every IPv4 host so). */
function ipv4(host) {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  return m ? m.slice(1).map(Number) : null;
}

function ipv4Local([a, b, c]) {
  return (
    a === 0 || a === 10 || a === 127 || a >= 224 ||
    (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)
  );
}

/** The eight 16-bit groups of an IPv6 address as Node serializes it (no dotted form). */
function ipv6Groups(text) {
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const h = head ? head.split(":") : [];
  const t = tail === null ? [] : tail ? tail.split(":") : [];
  const fill = tail === null ? [] : Array(8 - h.length - t.length).fill("0");
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

function ipv6Local(g) {
  const v4 = (hi, lo) => [hi >> 8, hi & 255, lo >> 8, lo & 255];
  const zero = (from, to) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 7) && g[7] <= 1) return true; // :: and ::1
  if ((g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return true;
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return true; // Teredo, documentation
  if (g[0] === 0x100 && zero(1, 4)) return true; // discard-only
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return ipv4Local(v4(g[6], g[7]));
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Local(v4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return ipv4Local(v4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true;
  if (g[0] === 0x2002) return ipv4Local(v4(g[1], g[2]));
  return false;
}

/** Whether Node's `hostname` names this machine, its network, or nothing public. */
function nodeHostLocal(hostname) {
  if (hostname.startsWith("[")) return ipv6Local(ipv6Groups(hostname.slice(1, -1)));
  const quad = ipv4(hostname);
  if (quad) return ipv4Local(quad);
  const name = hostname.replace(/\.+$/, "");
  return (
    name === "" || name === "localhost" || !name.includes(".") ||
    /\.(localhost|local|localdomain|internal|home\.arpa)$/.test(name)
  );
}

function nodeParse(raw) {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

test("the predicates of this test know the spellings they must", () => {
  assert.equal(nodeHostLocal(new URL("http://127。0。0。1/").hostname), true);
  assert.equal(nodeHostLocal(new URL("http://ｌｏｃａｌｈｏｓｔ/").hostname), true);
  assert.equal(nodeHostLocal(new URL("http://[::ffff:127.0.0.1]/").hostname), true);
  assert.equal(nodeHostLocal(new URL("http://[64:ff9b::a9fe:a9fe]/").hostname), true);
  assert.equal(nodeHostLocal(new URL("http://[2002:c0a8:1::1]/").hostname), true);
  assert.equal(nodeHostLocal(new URL("http://[2606:4700:4700::1111]/").hostname), false);
  assert.equal(nodeHostLocal(new URL("http://0x08080808/").hostname), false);
  assert.equal(nodeHostLocal(new URL("http://example.com./").hostname), false);
});

test("every URL of the corpus: what Node would fetch, the Rust check judged", () => {
  assert.ok(corpus.length >= 500, `the corpus has ${corpus.length} urls`);
  const verdicts = rustVerdicts();
  assert.equal(verdicts.length, corpus.length);
  let local = 0;
  let fetched = 0;
  const failures = [];
  corpus.forEach((raw, i) => {
    const verdict = verdicts[i];
    const node = nodeParse(raw);
    const fetchable = node && (node.protocol === "http:" || node.protocol === "https:");
    const nodeLocal = fetchable && nodeHostLocal(node.hostname);
    if (nodeLocal) local += 1;
    if (!("fetch" in verdict)) return;
    fetched += 1;
    if (nodeLocal) {
      failures.push(`${JSON.stringify(raw)}: Node reads host ${node.hostname}, the check let it through`);
      return;
    }
    // Let through: Node must read the URL the check returns to the same URL and a public
    // host, and the original to the same URL (the check judged what the fetch reads).
    const again = nodeParse(verdict.fetch);
    if (!again || again.href !== verdict.fetch) {
      failures.push(`${JSON.stringify(raw)}: fetches ${verdict.fetch}, which Node reads as ${again?.href}`);
    } else if (nodeHostLocal(again.hostname)) {
      failures.push(`${JSON.stringify(raw)}: fetches ${verdict.fetch}, a local host`);
    } else if (!node || node.href !== verdict.fetch) {
      failures.push(`${JSON.stringify(raw)}: the check read ${verdict.fetch}, Node ${node?.href}`);
    }
  });
  assert.deepEqual(failures, []);
  // The corpus must mostly aim at local hosts, and the check must not refuse everything.
  assert.ok(local >= 1000, `${local} urls reach a local host per Node`);
  assert.ok(fetched >= 50, `${fetched} urls let through`);
  console.log(`${corpus.length} urls: ${local} reach a local host per Node, ${fetched} let through`);
});

test("the issue's spellings are in the corpus and refused", () => {
  const verdicts = rustVerdicts();
  for (const raw of [
    "https://127。0。0。1:8080/healthz",
    "https://ｌｏｃａｌｈｏｓｔ:8080/healthz",
    "http://127.1/",
    "http://0x7f000001/",
    "http://[::ffff:127.0.0.1]/",
    "http://localhost./",
  ]) {
    const i = corpus.indexOf(raw);
    assert.ok(i >= 0, `${raw} is in the corpus`);
    assert.ok("refused" in verdicts[i], `${raw}: ${JSON.stringify(verdicts[i])}`);
  }
});
