import assert from "node:assert/strict";
import type { LevelResult } from "../types/results.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { sweep, UnstableError } from "./sweep.ts";

/** A fake level whose latency grows linearly: 10 ms per unit of load. */
function fakeLevel(value: number, stable = true): LevelResult {
  return {
    mode: "concurrency",
    value,
    stable,
    windows: [],
    client: { avgLatencyUs: value * 10_000 },
  } as unknown as LevelResult;
}

const base = {
  binarySearch: false,
  latencyThresholdMs: 0,
  maxTrials: 10,
  latencyUs: (r: LevelResult) => r.client.avgLatencyUs,
};

Deno.test("sweep measures every level of a closed range", async () => {
  const seen: number[] = [];
  const out = await sweep((v) => Promise.resolve((seen.push(v), fakeLevel(v))), {
    ...base,
    range: { start: 1, end: 8, step: 2 },
    interrupt: new Interrupt(),
  });
  assert.deepEqual(seen, [1, 3, 5, 7]);
  assert.equal(out.results.length, 4);
  assert.equal(out.note, undefined);
});

Deno.test("an open-ended sweep stops at the latency threshold, keeping that level", async () => {
  const out = await sweep((v) => Promise.resolve(fakeLevel(v)), {
    ...base,
    range: { start: 1, end: 0, step: 1 },
    latencyThresholdMs: 35,
    interrupt: new Interrupt(),
  });
  assert.deepEqual(out.results.map((r) => r.value), [1, 2, 3, 4]);
  assert.equal(out.note, "Measured latency went over the set limit of 35 msec.");
});

Deno.test("binary search converges on the highest level under the threshold", async () => {
  const seen: number[] = [];
  const out = await sweep((v) => Promise.resolve((seen.push(v), fakeLevel(v))), {
    ...base,
    binarySearch: true,
    range: { start: 1, end: 64, step: 1 },
    latencyThresholdMs: 205,
    interrupt: new Interrupt(),
  });
  assert.equal(seen[0], 1);
  assert.equal(seen[1], 64);
  const under = out.results.filter((r) => r.client.avgLatencyUs < 205_000).map((r) => r.value);
  assert.equal(Math.max(...under), 20);
  assert.ok(seen.includes(21));
  assert.ok(seen.length <= 9, `took ${seen.length} levels`);
});

Deno.test("an unstable first level is an error; a later one ends the sweep", async () => {
  await assert.rejects(
    sweep((v) => Promise.resolve(fakeLevel(v, false)), {
      ...base,
      range: { start: 1, end: 4, step: 1 },
      interrupt: new Interrupt(),
    }),
    (e) =>
      e instanceof UnstableError &&
      /within 10 measurement windows for concurrency 1/.test(e.message),
  );
  const out = await sweep((v) => Promise.resolve(fakeLevel(v, v < 3)), {
    ...base,
    range: { start: 1, end: 4, step: 1 },
    interrupt: new Interrupt(),
  });
  assert.deepEqual(out.results.map((r) => r.value), [1, 2]);
  assert.match(out.note!, /concurrency 3/);
});

Deno.test("a soft interrupt ends the sweep after the current level", async () => {
  const interrupt = new Interrupt();
  const out = await sweep((v) => {
    if (v === 2) interrupt.trigger();
    return Promise.resolve(fakeLevel(v));
  }, { ...base, range: { start: 1, end: 4, step: 1 }, interrupt });
  assert.deepEqual(out.results.map((r) => r.value), [1, 2]);
  assert.match(out.note!, /Interrupted/);
});
