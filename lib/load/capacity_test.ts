import assert from "node:assert/strict";
import type { LevelResult } from "../types/results.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { type CapacityOptions, searchCapacity } from "./capacity.ts";

/** Two instances of 10 ms: p99 latency ceil(c / 2) x 10 ms, throughput up to 200/s. */
function twoInstances(c: number): LevelResult {
  return {
    mode: "concurrency",
    value: c,
    stable: true,
    windows: [],
    client: { throughput: Math.min(c, 2) * 100, p99Ms: Math.ceil(c / 2) * 10 + 0.5 },
  } as unknown as LevelResult;
}

const p99 = (r: LevelResult) => (r.client as unknown as { p99Ms: number }).p99Ms;

function options(overrides: Partial<CapacityOptions> = {}): CapacityOptions {
  return {
    mode: "concurrency",
    range: { start: 1, end: 0, step: 1 },
    resolution: 1,
    judge: (r) => p99(r) <= 35 ? { pass: true, reasons: [] } : { pass: false, reasons: ["slow"] },
    interrupt: new Interrupt(),
    ...overrides,
  };
}

Deno.test("capacity: doubling brackets, bisection finds 6 of 2 x 10 ms under p99 <= 35", async () => {
  const seen: number[] = [];
  const out = await searchCapacity((c) => {
    seen.push(c);
    return Promise.resolve(twoInstances(c));
  }, options());
  assert.equal(out.value, 6);
  assert.equal(out.passing?.value, 6);
  assert.equal(out.failing?.value, 7);
  // 1, 2, 4, 8, then 6 and 7, each boundary level measured again.
  assert.deepEqual(seen, [1, 2, 4, 8, 6, 7, 7, 6]);
  assert.ok(seen.length <= 32, "at most half the points of a 1..64 sweep");
  assert.match(
    out.stopped,
    /concurrency 6 passes and concurrency 7 fails, within the resolution of 1/,
  );
  assert.deepEqual(out.notes, []);
});

Deno.test("capacity: within a given range, the end passing is the answer, confirmed", async () => {
  const seen: number[] = [];
  const out = await searchCapacity((c) => {
    seen.push(c);
    return Promise.resolve(twoInstances(c));
  }, options({ range: { start: 2, end: 5, step: 1 } }));
  assert.equal(out.value, 5);
  assert.deepEqual(seen, [2, 5, 5]);
  assert.match(out.stopped, /hold at the end of the range, concurrency 5/);
  const within = await searchCapacity(
    (c) => Promise.resolve(twoInstances(c)),
    options({ range: { start: 1, end: 40, step: 1 } }),
  );
  assert.equal(within.value, 6);
});

Deno.test("capacity: SLOs broken at the lowest level are an answer, not an error", async () => {
  const out = await searchCapacity(
    (c) => Promise.resolve(twoInstances(c)),
    options({ judge: () => ({ pass: false, reasons: ["slow"] }) }),
  );
  assert.equal(out.value, undefined);
  assert.equal(out.failing?.value, 1);
  assert.equal(out.points.length, 2, "the lowest level measured twice");
  assert.equal(out.stopped, "the SLOs are broken at the lowest concurrency 1");
});

Deno.test("capacity: noise at the boundary is re-measured and the answer stays monotone", async () => {
  // Concurrency 6 fails once by noise, 8 passes once by noise: majorities decide.
  const flips = new Map([[6, [false]], [8, [true]]]);
  const out = await searchCapacity((c) => {
    const r = twoInstances(c);
    const flip = flips.get(c)?.shift();
    if (flip !== undefined) (r.client as unknown as { p99Ms: number }).p99Ms = flip ? 30 : 40;
    return Promise.resolve(r);
  }, options());
  assert.equal(out.value, 6);
  assert.equal(out.failing?.value, 7);
  assert.ok(
    out.notes.some((n) => /concurrency 6 passed when measured again/.test(n)),
    out.notes.join(),
  );
});

Deno.test("capacity: rate mode bisects to 5 % of the level", async () => {
  // A queue that breaks at 173 requests/s.
  const seen: number[] = [];
  const out = await searchCapacity((rate) => {
    seen.push(rate);
    return Promise.resolve({
      mode: "request_rate",
      value: rate,
      stable: true,
      windows: [],
      client: { throughput: rate, p99Ms: rate <= 173 ? 20 : 80 },
    } as unknown as LevelResult);
  }, options({ mode: "request_rate", range: { start: 10, end: 0, step: 10 }, resolution: 0.05 }));
  assert.ok(out.value! <= 173 && out.value! >= 173 / 1.05, String(out.value));
  assert.ok(seen.length <= 14, String(seen));
});

Deno.test("capacity: throughput that stops growing ends bracketing; interrupts keep what passed", async () => {
  const flat = await searchCapacity(
    (c) =>
      Promise.resolve({
        ...twoInstances(c),
        client: { throughput: 200, p99Ms: 1 },
      } as unknown as LevelResult),
    options(),
  );
  assert.equal(flat.value, 8);
  assert.match(flat.stopped, /throughput stopped growing at concurrency 8/);
  const interrupt = new Interrupt();
  const cut = await searchCapacity((c) => {
    if (c === 4) interrupt.trigger();
    return Promise.resolve(twoInstances(c));
  }, options({ interrupt }));
  assert.equal(cut.value, 4);
  assert.match(cut.stopped, /^interrupted: the answer is the highest level that passed so far/);
});
