import assert from "node:assert/strict";
import {
  exceedsLatencyLimit,
  isStable,
  stabilizingLatencyUs,
  windowThroughput,
} from "./stability.ts";
import { emptyWindow } from "./recorder.ts";
import type { WindowData } from "../types/results.ts";

const figures = (pairs: Array<[number, number]>) =>
  pairs.map(([throughput, latencyUs]) => ({ throughput, latencyUs }));

function window(latenciesUs: number[], durationMs: number): WindowData {
  return emptyWindow(100, {
    endMs: 100 + durationMs,
    latenciesUs,
    responseCount: latenciesUs.length,
  });
}

Deno.test("isStable needs the last three windows within the spread", () => {
  const s = { stabilityPercentage: 10 };
  assert.equal(isStable(figures([[100, 1000], [105, 1050]]), s), false);
  assert.equal(isStable(figures([[100, 1000], [105, 1050], [110, 1100]]), s), true);
  assert.equal(isStable(figures([[100, 1000], [105, 1050], [111, 1000]]), s), false);
  assert.equal(isStable(figures([[100, 1000], [105, 1050], [100, 1101]]), s), false);
  // Only the last three count.
  assert.equal(isStable(figures([[1, 1], [100, 1000], [105, 1050], [110, 1100]]), s), true);
  assert.equal(isStable(figures([[100, 1000], [100, 1000]]), { ...s, count: 2 }), true);
});

Deno.test("isStable rejects windows without throughput", () => {
  const s = { stabilityPercentage: 10 };
  assert.equal(isStable(figures([[0, 1000], [0, 1000], [0, 1000]]), s), false);
  assert.equal(isStable(figures([[100, 0], [100, 0], [100, 0]]), s), false);
  assert.equal(isStable(figures([[100, 1000], [100, 1000], [Number.NaN, 1000]]), s), false);
});

Deno.test("isStable can judge throughput alone", () => {
  const windows = figures([[100, 1000], [101, 5000], [102, 9000]]);
  assert.equal(isStable(windows, { stabilityPercentage: 10 }), false);
  assert.equal(isStable(windows, { stabilityPercentage: 10, checkLatency: false }), true);
});

Deno.test("stabilizingLatencyUs is the mean or the chosen percentile", () => {
  const w = window([500, 100, 400, 200, 300], 1000);
  assert.equal(stabilizingLatencyUs(w), 300);
  assert.equal(stabilizingLatencyUs(w, 90), 500);
  assert.equal(stabilizingLatencyUs(w, 50), 300);
  assert.deepEqual(w.latenciesUs, [500, 100, 400, 200, 300]);
  assert.equal(stabilizingLatencyUs(window([], 1000), 95), 0);
});

Deno.test("windowThroughput is valid requests x batch per second", () => {
  assert.equal(windowThroughput(window([1, 2, 3], 1500), 4), 8);
  assert.equal(windowThroughput(window([1], 0), 1), 0);
});

Deno.test("exceedsLatencyLimit checks the last three windows once there are three", () => {
  const options = { latencyLimitMs: 10 };
  assert.equal(exceedsLatencyLimit(figures([[1, 20_000], [1, 1]]), options), false);
  assert.equal(exceedsLatencyLimit(figures([[1, 1], [1, 10_000], [1, 1]]), options), true);
  assert.equal(exceedsLatencyLimit(figures([[1, 20_000], [1, 1], [1, 1], [1, 1]]), options), false);
  assert.equal(
    exceedsLatencyLimit(figures([[1, 1e9], [1, 1e9], [1, 1e9]]), { latencyLimitMs: 0 }),
    false,
  );
});
