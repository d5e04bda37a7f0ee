import assert from "node:assert/strict";
import { MEMO_MAX_BYTES, memoizeDecode } from "./_response_memo.ts";
import type { OutputTensors } from "./types.ts";

function counting() {
  const calls: number[][] = [];
  const decode = memoizeDecode((bytes: Uint8Array, head: number): OutputTensors => {
    calls.push([...bytes]);
    return [{
      name: `OUT${head}`,
      datatype: "UINT8",
      shape: [bytes.byteLength],
      data: bytes.slice(),
    }];
  }, { key: (head) => head });
  return { calls, decode };
}

Deno.test("memoizeDecode reuses the outputs of equal bytes with an equal key", () => {
  const { calls, decode } = counting();
  const buffer = Uint8Array.of(1, 2, 3);
  const first = decode(buffer, 7);
  // The caller's buffer is reused for the next response: the memo kept its own copy.
  buffer.set([1, 2, 3]);
  assert.equal(decode(buffer, 7), first);
  assert.equal(calls.length, 1);
});

Deno.test("memoizeDecode decodes again when the bytes or the key differ", () => {
  const { calls, decode } = counting();
  const buffer = Uint8Array.of(1, 2, 3);
  const first = decode(buffer, 7);
  buffer[2] = 4;
  const changed = decode(buffer, 7);
  assert.notEqual(changed, first);
  assert.deepEqual([...changed[0].data], [1, 2, 4]);
  assert.notEqual(decode(buffer, 8), changed);
  assert.notEqual(decode(Uint8Array.of(1, 2), 8), changed);
  assert.equal(calls.length, 4);
});

Deno.test("memoizeDecode always decodes responses over MEMO_MAX_BYTES", () => {
  const { calls, decode } = counting();
  const large = new Uint8Array(MEMO_MAX_BYTES + 1);
  decode(large, 1);
  decode(large, 1);
  assert.equal(calls.length, 2);
});

Deno.test("memoizeDecode keeps nothing of a response whose decoding threw", () => {
  let fail = true;
  const decode = memoizeDecode((bytes: Uint8Array, _head: void): OutputTensors => {
    if (fail) throw new RangeError("Bad response");
    return [{ name: "OUT", datatype: "UINT8", shape: [bytes.byteLength], data: bytes.slice() }];
  });
  assert.throws(() => decode(Uint8Array.of(1), undefined), RangeError);
  fail = false;
  assert.equal(decode(Uint8Array.of(1), undefined)[0].data[0], 1);
});
