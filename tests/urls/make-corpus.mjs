// Writes tests/urls/corpus.json: URLs that try to reach a local or private host in every
// spelling a WHATWG parser accepts (dots of every Unicode kind, full-width and compatibility
// characters, percent-encoding, IDNA, octal/hex/short IPv4, IPv6 zones and embedded IPv4,
// userinfo tricks, trailing dots, backslashes), plus public controls that must stay fetchable.
// urls.test.mjs runs each through Node's URL and through the Rust check. Run after editing:
//   node tests/urls/make-corpus.mjs
import { writeFileSync } from "node:fs";

// Hosts as written in the URL, before any parse.
const localNames = [
  "localhost", "LOCALHOST", "LocalHost", "localhost.", "localhost..", "foo.localhost",
  "a.b.localhost.", "printer.local", "nas.local.", "metadata.google.internal",
  "router.home.arpa", "box.localdomain", "intranet", "router",
  "ｌｏｃａｌｈｏｓｔ", "ＬＯＣＡＬＨＯＳＴ", "ｌocalhost", "localhost。", "localhost．",
  "localhost｡", "localhoſt", "local\u00adhost", "local\u200bhost", "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ",
  "ℓocalhost", "lｏcalhost.", "xn--localhost-", "%6c%6f%63%61%6c%68%6f%73%74",
  "%6C%6F%63%61%6C%68%6F%73%74.", "loc%61lhost", "%ef%bd%8c%ef%bd%8f%ef%bd%83alhost",
  "LOCALHOST%2e", "localhost%00", "localhost%20", "locａlhost.ｌｏｃａｌ",
  "foo。local", "metadata．google．internal", "ℍome.arpa", "xn--ls8h.localhost",
];
const loopback4 = [
  "127.0.0.1", "127.1", "127.0.1", "127.00.0.1", "2130706433", "0x7f000001", "0X7F000001",
  "0x7f.1", "0x7f.0.0.1", "0x7F.0x0.0x0.0x1", "0177.0.0.1", "0177.1", "017700000001",
  "0177.0000.0000.0001", "127.0.0.1.", "127.255.255.254", "127.0.0.1..", "0x7f.0x00000001",
  "127。0。0。1", "127．0．0．1", "127｡0｡0｡1", "１２７.０.０.１", "１２７。０。０。１",
  "127.0.0.１", "0ｘ7f000001", "%31%32%37.0.0.1", "127%2e0%2e0%2e1", "127%2E1",
  "%31%32%37%2e%30%2e%30%2e%31", "0x%37f.1", "127.0.0.1%2e", "①②⑦.0.0.1", "127.0.0.⒈",
  "𝟏𝟐𝟕.0.0.1",
];
const private4 = [
  "10.0.0.1", "10.1", "012.0.0.1", "0xa000001", "167772161", "10.255.255.255",
  "172.16.0.1", "172.31.255.255", "0xac100001", "2886729729", "192.168.0.1", "192.168.1",
  "0xc0a80001", "3232235521", "0300.0250.0.1", "169.254.169.254", "0xa9fea9fe",
  "2852039166", "169.254.0xa9fe", "0251.0376.0251.0376", "0.0.0.0", "0", "0x0", "0.0",
  "00", "100.64.0.1", "100.127.255.254", "224.0.0.1", "239.255.255.250", "255.255.255.255",
  "0xffffffff", "4294967295", "240.0.0.1", "198.18.0.1", "198.19.1.1", "192.0.0.8",
  "192.0.2.1", "198.51.100.7", "203.0.113.9", "１０.０.０.１", "169。254。169。254",
  "192．168．0．1", "%31%30.0.0.1", "10%2e0%2e0%2e1",
];
const local6 = [
  "[::1]", "[0:0:0:0:0:0:0:1]", "[::0:1]", "[0000::1]", "[::]", "[::0]", "[0::]",
  "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::FFFF:127.0.0.1]", "[::127.0.0.1]",
  "[::7f00:1]", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[::ffff:10.0.0.1]",
  "[::ffff:192.168.0.1]", "[::ffff:0:127.0.0.1]", "[0:0:0:0:0:ffff:127.0.0.1]",
  "[64:ff9b::127.0.0.1]", "[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]",
  "[64:ff9b::10.0.0.1]", "[64:ff9b:1::1]", "[2002:7f00:1::1]", "[2002:a9fe:a9fe::]",
  "[2002:c0a8:1::1]", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "[fe80::1]", "[FE80::1]",
  "[fe80::1%25eth0]", "[fe80::1%eth0]", "[fe80::1%251]", "[::1%25lo]", "[fec0::1]",
  "[fc00::1]", "[fd00::1]", "[fd12:3456:789a::1]", "[ff02::1]", "[ff05::1:3]",
  "[100::1]", "[2001:db8::1]", "[::ｆｆｆｆ:127.0.0.1]", "[::1]:80", "[::1]:",
  "[0:0::1]", "[::0.0.0.1]", "[::ffff:127.1]", "[::ffff:0x7f.0.0.1]", "[::%31]",
  "[%3a%3a1]",
];
const publicHosts = [
  "example.com", "EXAMPLE.com", "example.com.", "www.example.org", "8.8.8.8", "1.1.1.1",
  "0x08080808", "134744072", "8.8.2056", "[2606:4700:4700::1111]",
  "[2606:4700:4700:0:0:0:0:1111]", "[::ffff:8.8.8.8]", "[64:ff9b::808:808]",
  "[2002:808:808::1]", "xn--mnchen-3ya.de", "münchen.de", "exａmple.com", "example。com",
  "localhost.example.com", "local.example.com", "internal.example.net", "172.32.0.1",
  "100.128.0.1", "192.169.0.1", "exa%6dple.com", "ᴇxample.com", "b\u00fccher.example",
  "例え.テスト", "xn--r8jz45g.xn--zckzah", "sub.domain.example.co.uk",
];

const templates = [
  (h) => `http://${h}/`,
  (h) => `https://${h}:8080/healthz`,
  (h) => `HTTP://${h}/path?q=1#frag`,
  (h) => `http://user:pass@${h}/`,
  (h) => `http://example.com@${h}/`,
  (h) => `http://${h}\\@example.com/`,
  (h) => `http://${h}#@example.com/`,
  (h) => `http:/${h}/`,
  (h) => `http:\\\\${h}\\admin`,
  (h) => `  http://${h}:80/x  `,
];
// Tricks that only make sense once, not per host.
const singles = [
  "http://lo\tcalhost/", "http://lo\ncalhost/", "http://127.0.0.1\t/", "http://example.com/\u0000",
  "http://[::1]@example.com/", "http://example.com:80@127.0.0.1/", "http://a@b@127.0.0.1/",
  "http://127.0.0.1:0/", "http://127.0.0.1:65535/", "http://127.0.0.1:65536/",
  "http://127.0.0.1:-1/", "http://127.0.0.1:+80/", "http://127.0.0.1:0x50/",
  "http://[::1/", "http://[::1]]/", "http://[[::1]]/", "http://::1/", "http://[127.0.0.1]/",
  "http://256.0.0.1/", "http://1.2.3.4.5/", "http://09.0.0.1/", "http://0x100000000/",
  "http://4294967296/", "http://127.0.0.0x1/", "http://127.0.0.1x/", "http://1.2.3.x/",
  "http:127.0.0.1", "http:localhost", "https:/localhost:443/", "http:///127.0.0.1/",
  "http:////localhost/", "http://%2f%2flocalhost/", "http://%5b::1%5d/", "http://%/",
  "http://%zz/", "http://%ff/", "http://%e2%80%ae/", "http://\u202elocalhost/",
  "http://localhost\u3002/", "ws://localhost/", "wss://127.0.0.1/", "ftp://127.0.0.1/",
  "file:///etc/passwd", "file://localhost/etc/passwd", "gopher://127.0.0.1:6379/_",
  "data:text/html,hi", "javascript:alert(1)", "//localhost/", "/relative", "localhost",
  "127.0.0.1:8080", "http://", "http:", "https://?", "http://#", "http://@/",
  "http://:@127.0.0.1/", "http://@127.0.0.1/", "http://example.com/@127.0.0.1",
  "http://example.com/?@127.0.0.1", "http://example.com#127.0.0.1",
  "HtTpS://ExAmPlE.CoM/", "http://example.com:443", "https://example.com:", "http://a.b/",
  "http://xn--/", "http://xn--a/", "http://xn--zz-/", "http://-example.com/",
  "http://exam_ple.com/", "http://exa mple.com/", "http://example.com./a/../../b",
  "http://1.1.1.1/%2e%2e/", "http://a.example.com\u3002", "http://example.com\uff0e",
  "http://0x7f\u3002.0.0.1/", "http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3./",
];

const urls = new Set();
for (const h of [...localNames, ...loopback4, ...private4, ...local6, ...publicHosts]) {
  for (const t of templates) urls.add(t(h));
}
for (const u of singles) urls.add(u);
writeFileSync(
  new URL("./corpus.json", import.meta.url),
  JSON.stringify([...urls], null, 0).replace(/","/g, '",\n"') + "\n",
);
console.log(`${urls.size} urls`);
