import assert from "node:assert/strict";
import { encodeHeaders, HpackDecoder, HpackError, huffmanCodes, huffmanDecode } from "./hpack.ts";
import { decodeText } from "./_hpack_tables.ts";

function hex(text: string): Uint8Array {
  const digits = text.replace(/\s+/g, "");
  return Uint8Array.from(
    { length: digits.length / 2 },
    (_, i) => parseInt(digits.slice(2 * i, 2 * i + 2), 16),
  );
}

function pairs(fields: readonly string[]): Array<[string, string]> {
  return Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i], fields[2 * i + 1]]);
}

Deno.test("the canonical Huffman code matches RFC 7541 Appendix B", () => {
  const codes = huffmanCodes();
  assert.deepEqual(codes[48], { code: 0x0, length: 5 }); // '0'
  assert.deepEqual(codes[32], { code: 0x14, length: 6 }); // ' '
  assert.deepEqual(codes[0], { code: 0x1ff8, length: 13 });
  assert.deepEqual(codes[255], { code: 0x3ffffee, length: 26 });
  assert.deepEqual(codes[256], { code: 0x3fffffff, length: 30 }); // EOS
  assert.equal(huffmanDecode(hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff")), "www.example.com");
  assert.equal(huffmanDecode(hex("a8eb 1064 9cbf")), "no-cache");
});

/** Huffman-codes `symbols` (bytes, or 256 for EOS) and pads with `padding` one bits. */
function huffmanEncode(symbols: readonly number[], padding?: number): Uint8Array {
  const codes = huffmanCodes();
  const bits: number[] = [];
  for (const s of symbols) {
    const { code, length } = codes[s];
    for (let bit = length - 1; bit >= 0; bit--) bits.push(Math.floor(code / 2 ** bit) % 2);
  }
  const pad = padding ?? (8 - bits.length % 8) % 8;
  for (let i = 0; i < pad; i++) bits.push(1);
  while (bits.length % 8 !== 0) bits.push(0);
  return Uint8Array.from(
    { length: bits.length / 8 },
    (_, i) => bits.slice(8 * i, 8 * i + 8).reduce((byte, bit) => byte * 2 + bit, 0),
  );
}

Deno.test("Huffman decoding returns every byte value, whatever the length and padding", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
  for (let round = 0; round < 300; round++) {
    const text = Array.from({ length: round % 40 }, () => next() % 128);
    assert.equal(huffmanDecode(huffmanEncode(text)), String.fromCharCode(...text));
  }
  const all = Array.from({ length: 256 }, (_, i) => i);
  assert.deepEqual(
    new TextEncoder().encode(huffmanDecode(huffmanEncode(all.filter((b) => b < 0x80)))),
    Uint8Array.from(all.filter((b) => b < 0x80)),
  );
});

Deno.test("invalid Huffman padding and EOS are rejected", () => {
  // "0" is 00000; padding with zeros instead of ones is invalid.
  assert.throws(() => huffmanDecode(Uint8Array.of(0x00)), /padding/);
  assert.throws(() => huffmanDecode(hex("ffff ffff")), /EOS/);
  // EOS between two symbols, and padding of 8 one bits (a whole byte of EOS's start).
  assert.throws(() => huffmanDecode(huffmanEncode([0x61, 256, 0x61])), /EOS/);
  assert.throws(() => huffmanDecode(huffmanEncode([0x61], 11)), /padding/);
  assert.equal(huffmanDecode(huffmanEncode([0x61], 3)), "a");
});

Deno.test("RFC 7541 C.4: requests with Huffman coding share one dynamic table", () => {
  const decoder = new HpackDecoder();
  let out = decoder.decode(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"));
  assert.deepEqual(pairs(out), [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "www.example.com"],
  ]);
  out = decoder.decode(hex("8286 84be 5886 a8eb 1064 9cbf"));
  assert.deepEqual(pairs(out).slice(3), [
    [":authority", "www.example.com"],
    ["cache-control", "no-cache"],
  ]);
  out = decoder.decode(hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"));
  assert.deepEqual(pairs(out), [
    [":method", "GET"],
    [":scheme", "https"],
    [":path", "/index.html"],
    [":authority", "www.example.com"],
    ["custom-key", "custom-value"],
  ]);
});

Deno.test("RFC 7541 C.6: eviction keeps indexes right with a small table", () => {
  const decoder = new HpackDecoder(256);
  let out = decoder.decode(
    hex(
      "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e " +
        "919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
    ),
  );
  assert.deepEqual(pairs(out)[0], [":status", "302"]);
  out = decoder.decode(hex("4883 640e ffc1 c0bf"));
  assert.deepEqual(pairs(out), [
    [":status", "307"],
    ["cache-control", "private"],
    ["date", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["location", "https://www.example.com"],
  ]);
});

Deno.test("a dynamic table that evicts on every insertion keeps its indexes", () => {
  // 128 octets hold three entries of 35-36 octets: each insertion evicts the oldest.
  const decoder = new HpackDecoder(128);
  let out: readonly string[] = [];
  const text = new TextEncoder();
  for (let i = 0; i < 200; i++) {
    const value = text.encode(`v${i}`);
    // Literal with incremental indexing, new name "k".
    out = decoder.decode(Uint8Array.of(0x40, 1, 0x6b, value.length, ...value));
    if (i < 2) {
      assert.throws(() => decoder.decode(Uint8Array.of(0x80 | (62 + i + 1))), HpackError);
      continue;
    }
    out = decoder.decode(Uint8Array.of(0x80 | 62, 0x80 | 63, 0x80 | 64));
    const expected = [i, i - 1, i - 2].map((n) => ["k", `v${n}`]);
    assert.deepEqual(pairs(out), expected, `after ${i + 1} insertions`);
  }
  assert.throws(() => decoder.decode(Uint8Array.of(0x80 | 65)), HpackError);
});

Deno.test("a repeated block decodes the same; one that refers to the dynamic table follows it", () => {
  const decoder = new HpackDecoder();
  let out: readonly string[] = [];
  const block = encodeHeaders([[":status", "200"], ["content-type", "application/grpc"]]);
  for (let i = 0; i < 3; i++) {
    out = decoder.decode(block);
    assert.deepEqual(pairs(out), [[":status", "200"], ["content-type", "application/grpc"]]);
  }
  const text = new TextEncoder();
  for (const value of ["v1", "v2"]) {
    const bytes = text.encode(value);
    out = decoder.decode(Uint8Array.of(0x40, 1, 0x6b, bytes.length, ...bytes));
    // The same bytes each time, a different field: the newest entry.
    out = decoder.decode(Uint8Array.of(0x80 | 62));
    assert.deepEqual(pairs(out), [["k", value]]);
  }
  // A repeated block that indexes a field (as nginx's do) inserts it every time.
  const indexing = Uint8Array.of(0x40, 1, 0x78, 1, 0x79);
  for (let i = 0; i < 3; i++) out = decoder.decode(indexing);
  out = decoder.decode(Uint8Array.of(0x80 | 62, 0x80 | 63, 0x80 | 64, 0x80 | 65));
  assert.deepEqual(pairs(out), [["x", "y"], ["x", "y"], ["x", "y"], ["k", "v2"]]);
});

Deno.test("encoded blocks decode back and never touch the dynamic table", () => {
  const fields: Array<[string, string]> = [
    [":method", "POST"],
    [":path", "/inference.GRPCInferenceService/ModelInfer"],
    ["content-type", "application/grpc"],
    ["x-long", "v".repeat(300)],
  ];
  const block = encodeHeaders(fields);
  const decoder = new HpackDecoder();
  let out = decoder.decode(block);
  assert.deepEqual(pairs(out), fields);
  out = decoder.decode(block);
  assert.deepEqual(pairs(out), fields);
});

Deno.test("truncated blocks and bad indexes are errors", () => {
  assert.throws(() => new HpackDecoder().decode(Uint8Array.of(0xff)), HpackError);
  assert.throws(() => new HpackDecoder().decode(Uint8Array.of(0xbe)), HpackError);
  assert.throws(() => new HpackDecoder().decode(Uint8Array.of(0x00, 0x05, 0x61)), HpackError);
  assert.throws(
    () => new HpackDecoder(100).decode(Uint8Array.of(0x3f, 0xe1, 0x1f)),
    HpackError,
  );
});

Deno.test("decodeText: ASCII without the runtime, anything else through TextDecoder", () => {
  const encoder = new TextEncoder();
  for (const text of ["", "grpc-status", "application/grpc", "é ü 日本", "x".repeat(300)]) {
    assert.equal(decodeText(encoder.encode(text)), text);
  }
  assert.equal(
    decodeText(new Uint8Array([0x61, 0xff, 0x62])),
    "a\ufffdb",
    "invalid UTF-8 replaced",
  );
});
