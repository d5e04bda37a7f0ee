import assert from "node:assert/strict";
import { ProtocolError } from "./errors.ts";
import { MAX_SSE_LINE, SseParser } from "./sse.ts";

const encoder = new TextEncoder();

/** Feeds `text` in pieces of `step` bytes and returns the events as [type, data]. */
function parse(text: string | Uint8Array, step: number): Array<[string, string]> {
  const events: Array<[string, string]> = [];
  const parser = new SseParser((data, type) => events.push([type, data]));
  const bytes = typeof text === "string" ? encoder.encode(text) : text;
  for (let i = 0; i < bytes.length; i += step) parser.push(bytes.subarray(i, i + step));
  return events;
}

const STEPS = [1, 2, 3, 5, 1000];

Deno.test("data lines become events at blank lines, in any split", () => {
  const stream = 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n';
  for (const step of STEPS) {
    assert.deepEqual(parse(stream, step), [
      ["message", '{"a":1}'],
      ["message", '{"b":2}'],
      ["message", "[DONE]"],
    ]);
  }
});

Deno.test("CRLF and CR line endings, split between pieces", () => {
  const stream = "data: one\r\n\r\ndata: two\r\rdata:three\r\n\r\n";
  for (const step of STEPS) {
    assert.deepEqual(parse(stream, step), [
      ["message", "one"],
      ["message", "two"],
      ["message", "three"],
    ]);
  }
});

Deno.test("multi-line data, event types, comments and other fields", () => {
  const stream = ": keep-alive\n\nevent: error\ndata: first\ndata:second\nid: 7\nretry: 10\n\n" +
    "data\n\nevent: ignored\n\ndata: last\n\n";
  for (const step of STEPS) {
    assert.deepEqual(parse(stream, step), [
      ["error", "first\nsecond"],
      ["message", ""],
      ["message", "last"],
    ]);
  }
});

Deno.test("UTF-8 characters split between pieces", () => {
  const stream = encoder.encode('data: {"content":"héllo wörld ✓"}\n\n');
  for (const step of STEPS) {
    assert.deepEqual(parse(stream, step), [["message", '{"content":"héllo wörld ✓"}']]);
  }
});

Deno.test("an unfinished event is not handed over, and reset forgets it", () => {
  const events: string[] = [];
  const parser = new SseParser((data) => events.push(data));
  parser.push(encoder.encode("data: partial"));
  parser.reset();
  parser.push(encoder.encode("data: whole\n\n"));
  assert.deepEqual(events, ["whole"]);
});

Deno.test("an endless line is refused", () => {
  const parser = new SseParser(() => {});
  const chunk = encoder.encode("x".repeat(65536));
  assert.throws(() => {
    for (let i = 0; i <= MAX_SSE_LINE / chunk.length; i++) parser.push(chunk);
  }, ProtocolError);
});
