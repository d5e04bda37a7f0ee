import assert from "node:assert/strict";
import { mulberry32 } from "../input/generate.ts";
import {
  constantSchedule,
  fixedSchedule,
  fixedScheduleRate,
  gammaSchedule,
  intervalSchedule,
  intervalsRate,
  parseIntervals,
  poissonSchedule,
  type Schedule,
} from "./schedule.ts";

function take(schedule: Schedule, count: number): number[] {
  return Array.from({ length: count }, () => schedule.next());
}

Deno.test("a constant rate spaces sends evenly without drift", () => {
  const dues = take(constantSchedule(200), 5);
  assert.deepEqual(dues, [5, 10, 15, 20, 25]);
  const long = constantSchedule(3);
  let last = 0;
  for (let i = 0; i < 300_000; i++) last = long.next();
  assert.equal(last, 100_000_000);
});

Deno.test("the seed's intervals give sends at 0.1, 0.3, 0.8, 0.9, 1.1 and 1.6 s", () => {
  const intervals = parseIntervals("100000\n200000\n500000\n", "my_intervals.txt");
  assert.deepEqual(take(intervalSchedule(intervals), 7), [100, 300, 800, 900, 1100, 1600, 1700]);
  assert.equal(intervalsRate(intervals), 3 / 0.8);
});

Deno.test("Poisson gaps have the exponential mean and a coefficient of variation of 1", () => {
  const rate = 1000;
  const schedule = poissonSchedule(rate, mulberry32(20240601));
  const count = 20_000;
  const gaps = new Float64Array(count);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    const due = schedule.next();
    gaps[i] = due - previous;
    previous = due;
  }
  const mean = gaps.reduce((a, b) => a + b, 0) / count;
  const variance = gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / (count - 1);
  const cv = Math.sqrt(variance) / mean;
  assert.ok(Math.abs(mean - 1) / 1 < 0.02, `mean gap ${mean} ms, expected 1 ms`);
  assert.ok(Math.abs(cv - 1) < 0.02, `coefficient of variation ${cv}, expected 1`);
  assert.ok(gaps.every((g) => g >= 0));
});

/** The mean and coefficient of variation of `count` gaps of `schedule`. */
function gapStatistics(schedule: Schedule, count: number): { mean: number; cv: number } {
  let previous = 0;
  let sum = 0;
  let squares = 0;
  for (let i = 0; i < count; i++) {
    const due = schedule.next();
    const gap = due - previous;
    assert.ok(gap >= 0, `gap ${gap} ms`);
    previous = due;
    sum += gap;
    squares += gap * gap;
  }
  const mean = sum / count;
  return { mean, cv: Math.sqrt((squares - count * mean * mean) / (count - 1)) / mean };
}

Deno.test("gamma gaps keep the mean and have a coefficient of variation of 1 / sqrt(burstiness)", () => {
  for (const burstiness of [0.25, 0.5, 1, 2, 4, 10]) {
    const schedule = gammaSchedule(200, { burstiness, rng: mulberry32(0x6a3 + burstiness * 100) });
    const { mean, cv } = gapStatistics(schedule, 100_000);
    const expected = 1 / Math.sqrt(burstiness);
    assert.ok(Math.abs(mean - 5) / 5 < 0.02, `burstiness ${burstiness}: mean gap ${mean} ms`);
    assert.ok(Math.abs(cv - expected) / expected < 0.03, `burstiness ${burstiness}: CV ${cv}`);
  }
  // Burstiness 1 is the Poisson schedule itself, draw for draw.
  assert.deepEqual(
    take(gammaSchedule(50, { burstiness: 1, rng: mulberry32(9) }), 20),
    take(poissonSchedule(50, mulberry32(9)), 20),
  );
  assert.throws(
    () => gammaSchedule(10, { burstiness: 0, rng: Math.random }),
    /Burstiness "0" must be a finite number > 0/,
  );
});

Deno.test("the same seed gives the same Poisson schedule", () => {
  assert.deepEqual(
    take(poissonSchedule(50, mulberry32(7)), 10),
    take(poissonSchedule(50, mulberry32(7)), 10),
  );
});

Deno.test("a fixed schedule sends at its timestamps, then ends", () => {
  assert.deepEqual(take(fixedSchedule([0, 5, 5, 12]), 6), [0, 5, 5, 12, Infinity, Infinity]);
  assert.throws(() => fixedSchedule([3, 2]), /must not decrease: 2 follows 3/);
  assert.equal(fixedScheduleRate([0, 5, 5, 12]), 4 / 0.012);
  assert.equal(fixedScheduleRate([0, 0]), 2000, "a burst counts as 1 ms");
});

Deno.test("bad rates and interval files are rejected with the line", () => {
  assert.throws(() => constantSchedule(0), /Request rate "0" must be a finite number > 0/);
  assert.throws(() => poissonSchedule(-1, Math.random), RangeError);
  assert.throws(() => parseIntervals("100\nabc\n", "f.txt"), /"abc" on line 2 of "f.txt"/);
  assert.throws(() => parseIntervals("\n0\n", "f.txt"), /holds no interval > 0/);
  assert.throws(() => intervalSchedule([]), RangeError);
});
