import assert from "node:assert/strict";
import { SampleList } from "./samples.ts";

Deno.test("a sample list keeps every value in order across growth and starts over after take", () => {
  const list = new SampleList();
  for (let i = 0; i < 5000; i++) list.push(i / 4);
  assert.equal(list.length, 5000);
  const taken = list.take();
  assert.equal(taken.length, 5000);
  assert.ok(taken.every((v, i) => v === i / 4));
  assert.equal(list.length, 0);
  list.push(-1.5);
  assert.deepEqual([...list.take()], [-1.5]);
  assert.equal(taken[4999], 4999 / 4, "a taken array is not overwritten by later samples");
});
