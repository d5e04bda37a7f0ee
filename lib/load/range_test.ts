import assert from "node:assert/strict";
import { parseRange, rangeLevels } from "./range.ts";

Deno.test("parseRange fills perf_analyzer defaults", () => {
  // A lone start leaves the end at 1, as in perf_analyzer (whose console then prints no limit).
  assert.deepEqual(parseRange("4", { integer: true }), { start: 4, end: 1, step: 1 });
  assert.deepEqual(parseRange("1:4", { integer: true }), { start: 1, end: 4, step: 1 });
  assert.deepEqual(parseRange("1:8:2", { integer: true }), { start: 1, end: 8, step: 2 });
  assert.deepEqual(parseRange("2:0:2", { integer: true }), { start: 2, end: 0, step: 2 });
  assert.deepEqual(parseRange("2.5:10:2.5", { integer: false }), {
    start: 2.5,
    end: 10,
    step: 2.5,
  });
});

Deno.test("parseRange rejects malformed ranges with a reason", () => {
  assert.throws(() => parseRange("", { integer: true }), /START\[:END\[:STEP\]\]/);
  assert.throws(() => parseRange("1:2:3:4", { integer: true }), /START/);
  assert.throws(() => parseRange("1.5", { integer: true }), /integers/);
  assert.throws(() => parseRange("0:4", { integer: true }), /start must be greater than 0/);
  assert.throws(() => parseRange("1:4:0", { integer: true }), /step must be greater than 0/);
  assert.throws(() => parseRange("a:b", { integer: true }), /integers/);
});

Deno.test("rangeLevels steps up to and including the end", () => {
  assert.deepEqual([...rangeLevels({ start: 1, end: 8, step: 2 })], [1, 3, 5, 7]);
  assert.deepEqual([...rangeLevels({ start: 4, end: 4, step: 1 })], [4]);
  // perf_analyzer's do-while: an end below the start (-t 4 leaves the end at 1) measures the start.
  assert.deepEqual(parseRange("4:1", { integer: true }), { start: 4, end: 1, step: 1 });
  assert.deepEqual([...rangeLevels({ start: 4, end: 1, step: 1 })], [4]);
  const open = rangeLevels({ start: 1, end: 0, step: 3 });
  assert.deepEqual([open.next().value, open.next().value, open.next().value], [1, 4, 7]);
});
