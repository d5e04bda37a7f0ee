import assert from "node:assert/strict";
import {
  compress,
  decodeGrpcMessage,
  decompress,
  encodeGrpcMessage,
  formatTimeout,
  frameMessage,
  GrpcFramingError,
  MessageReader,
  parseTimeout,
} from "./wire.ts";

Deno.test("messages split anywhere, or several in one payload, come out whole", () => {
  const messages = [Uint8Array.of(1, 2, 3), new Uint8Array(0), new Uint8Array(70_000).fill(7)];
  const stream = new Uint8Array(messages.reduce((n, m) => n + 5 + m.length, 0));
  let offset = 0;
  for (const m of messages) {
    stream.set(frameMessage(m, false), offset);
    offset += 5 + m.length;
  }
  for (const size of [1, 4, 5, 6, 1000, stream.length]) {
    const got: Uint8Array[] = [];
    const reader = new MessageReader((message) => got.push(message.slice()));
    for (let i = 0; i < stream.length; i += size) reader.push(stream.subarray(i, i + size));
    assert.deepEqual(got, messages, `chunks of ${size}`);
    assert.equal(reader.idle, true);
  }
});

Deno.test("gzip and deflate (zlib) round trip; garbage is a framing error", () => {
  const body = new TextEncoder().encode("tensor ".repeat(100));
  for (const algorithm of ["gzip", "deflate"] as const) {
    const packed = compress(algorithm, body);
    assert.ok(packed.length < body.length);
    assert.deepEqual(decompress(algorithm, packed), body);
  }
  assert.throws(() => decompress("gzip", Uint8Array.of(1, 2, 3)), GrpcFramingError);
  assert.throws(() => decompress("snappy", body), /Unsupported grpc-encoding "snappy"/);
});

Deno.test("grpc-message percent-encoding and grpc-timeout", () => {
  const text = "100% wrong: ünicode\nline";
  assert.equal(encodeGrpcMessage(text), "100%25 wrong: %C3%BCnicode%0Aline");
  assert.equal(decodeGrpcMessage(encodeGrpcMessage(text)), text);
  assert.equal(formatTimeout(1500), "1500m");
  assert.equal(formatTimeout(0.2), "1m");
  assert.equal(parseTimeout("2S"), 2000);
  assert.equal(parseTimeout("5x"), undefined);
});
