import assert from "node:assert/strict";
import { mulberry32 } from "../input/generate.ts";
import { unitGamma } from "./schedule.ts";
import {
  concurrencySteps,
  type LoadShape,
  rampShape,
  sendsWithin,
  shapedSchedule,
  shapeDurationMs,
  stagesShape,
} from "./shape.ts";

function dues(shape: LoadShape, gap: () => number, untilMs: number): number[] {
  const schedule = shapedSchedule(shape, gap);
  const out: number[] = [];
  for (let due = schedule.next(); due < untilMs; due = schedule.next()) out.push(due);
  return out;
}

/** Sends per second of `times` against the shape's own count in each second (the line's area). */
function perSecond(times: readonly number[], expected: (from: number, to: number) => number) {
  const seconds = Math.floor(Math.max(...times) / 1000);
  return Array.from({ length: seconds }, (_, s) => ({
    second: s,
    sent: times.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length,
    expected: expected(s * 1000, (s + 1) * 1000),
  }));
}

Deno.test("an even linear ramp sends the n-th request where the line's area reaches n", () => {
  const shape = rampShape(200, { durationMs: 3000, strategy: "linear", start: 0 });
  const piece = shape.pieces[0];
  const times = dues(shape, () => 1, 5000);
  times.slice(0, 300).forEach((t, i) =>
    assert.ok(Math.abs(sendsWithin(piece, t) - (i + 1)) < 1e-6)
  );
  // 300 sends in the ramp (its area), then 200 per second: 5 ms apart.
  assert.equal(times.filter((t) => t <= 3000).length, 300);
  assert.ok(Math.abs(times[301] - times[300] - 5) < 1e-9);
  assert.equal(times.length, 300 + 399);
  assert.equal(shapeDurationMs(shape), Infinity);
});

Deno.test("an exponential ramp follows its curve within 5 % in every second, even or Poisson", () => {
  const shape = rampShape(400, { durationMs: 4000, strategy: "exponential", start: 25 });
  const piece = shape.pieces[0];
  const area = (from: number, to: number) =>
    sendsWithin(piece, Math.min(to, 4000)) - sendsWithin(piece, Math.min(from, 4000)) +
    (Math.max(to, 4000) - Math.max(from, 4000)) * 0.4;
  for (const rows of [perSecond(dues(shape, () => 1, 6000), area)]) {
    for (const { second, sent, expected } of rows) {
      assert.ok(Math.abs(sent - expected) <= Math.max(1, 0.05 * expected), `${second}: ${sent}`);
    }
  }
  // A Poisson process on the same curve: counts within 5 % over the whole ramp's seconds 2-5.
  const rng = mulberry32(42);
  const poisson = perSecond(dues(shape, () => unitGamma(1, rng), 6000), area).slice(2);
  const sent = poisson.reduce((n, r) => n + r.sent, 0);
  const expected = poisson.reduce((n, r) => n + r.expected, 0);
  assert.ok(Math.abs(sent - expected) / expected < 0.05, `${sent} of ${expected}`);
});

Deno.test("stages go linearly from target to target, then the schedule ends", () => {
  const shape = stagesShape([
    { durationMs: 1000, target: 100 },
    { durationMs: 1000, target: 100 },
    { durationMs: 0, target: 300 },
    { durationMs: 500, target: 0 },
  ], 0);
  assert.equal(shapeDurationMs(shape), 2500);
  const schedule = shapedSchedule(shape, () => 1);
  const times: number[] = [];
  for (let due = schedule.next(); due !== Infinity; due = schedule.next()) times.push(due);
  // 50 in the first second, 100 in the second, 75 in the last half.
  assert.equal(times.length, 225);
  assert.equal(times.filter((t) => t <= 1000).length, 50);
  assert.equal(times.filter((t) => t > 1000 && t <= 2000).length, 100);
  assert.ok(times.every((t, i) => i === 0 || t >= times[i - 1]));
  assert.ok(times[times.length - 1] <= 2500);
});

Deno.test("a concurrency ramp steps where its line crosses each half", () => {
  const linear = concurrencySteps(rampShape(4, { durationMs: 3000, strategy: "linear", start: 1 }));
  assert.deepEqual(linear, {
    initial: 1,
    steps: [{ atMs: 500, value: 2 }, { atMs: 1500, value: 3 }, { atMs: 2500, value: 4 }],
    endMs: Infinity,
  });
  const exponential = concurrencySteps(
    rampShape(16, { durationMs: 4000, strategy: "exponential", start: 1 }),
  );
  assert.equal(exponential.steps.length, 15);
  assert.ok(Math.abs(exponential.steps[0].atMs - 4000 * Math.log(1.5) / Math.log(16)) < 1e-9);
  const stages = concurrencySteps(stagesShape([
    { durationMs: 1000, target: 3 },
    { durationMs: 1000, target: 1 },
  ], 1));
  assert.deepEqual(stages, {
    initial: 1,
    steps: [
      { atMs: 250, value: 2 },
      { atMs: 750, value: 3 },
      { atMs: 1250, value: 2 },
      { atMs: 1750, value: 1 },
    ],
    endMs: 2000,
  });
  assert.deepEqual(concurrencySteps(stagesShape([{ durationMs: 0, target: 5 }], 1)).steps, [
    { atMs: 0, value: 5 },
  ]);
});
