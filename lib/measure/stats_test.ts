import assert from "node:assert/strict";
import type { ModelStatistics } from "../types/model.ts";
import {
  mean,
  percentile,
  sampleStdDev,
  statisticsDelta,
  summarizeClient,
  summarizeServer,
} from "./stats.ts";
import { emptyWindow } from "./recorder.ts";
import type { WindowData } from "../types/results.ts";

function window(latenciesUs: number[], overrides: Partial<WindowData> = {}): WindowData {
  return emptyWindow(0, {
    endMs: 1000,
    latenciesUs,
    responseCount: latenciesUs.length,
    ...overrides,
  });
}

function stats(
  name: string,
  version: string,
  counts: { n: number; successUs?: number; queueUs?: number; computeUs?: number[] },
): ModelStatistics {
  const d = (us: number, count = counts.n) => ({ count, ns: Math.round(us * 1000 * count) });
  const [input = 0, infer = 0, output = 0] = counts.computeUs ?? [];
  return {
    name,
    version,
    inferenceCount: counts.n,
    executionCount: counts.n,
    success: d(counts.successUs ?? 0),
    fail: d(0, 0),
    queue: d(counts.queueUs ?? 0),
    computeInput: d(input),
    computeInfer: d(infer),
    computeOutput: d(output),
    cacheHit: d(0, 0),
    cacheMiss: d(0, 0),
  };
}

Deno.test("percentile picks index round(p/100 x (n-1)) with halves rounded up", () => {
  const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  assert.equal(percentile(sorted, 50), 6); // 4.5 + 0.5 -> index 5
  assert.equal(percentile(sorted, 90), 9); // 8.1 -> 8
  assert.equal(percentile(sorted, 95), 10); // 8.55 -> 9
  assert.equal(percentile(sorted, 0), 1);
  assert.equal(percentile([42], 99), 42);
  assert.throws(() => percentile([], 50), RangeError);
  assert.throws(() => percentile(sorted, 101), RangeError);
});

Deno.test("mean and sample standard deviation", () => {
  const values = [2, 4, 4, 4, 5, 5, 7, 9];
  assert.equal(mean(values), 5);
  assert.ok(Math.abs(sampleStdDev(values) - Math.sqrt(32 / 7)) < 1e-12);
  assert.equal(mean([]), 0);
  assert.equal(sampleStdDev([5]), 0);
});

Deno.test("summarizeClient pools windows", () => {
  const a = window([300, 100, 200], {
    endMs: 1500,
    sendUsSum: 30,
    recvUsSum: 15,
    waitUsSum: 555,
    errorCount: 3,
    errors: new Map([["boom", 1], ["refused", 2]]),
    delayedCount: 1,
  });
  const b = window([400, 500], {
    startMs: 1500,
    endMs: 2500,
    sendUsSum: 20,
    recvUsSum: 10,
    waitUsSum: 870,
    responseCount: 6,
    errorCount: 2,
    errors: new Map([["boom", 2]]),
  });
  const s = summarizeClient([a, b], { batchSize: 4, percentiles: [75] });
  assert.equal(s.requestCount, 5);
  assert.equal(s.responseCount, 9);
  assert.equal(s.durationMs, 2500);
  assert.equal(s.throughput, 5 * 4 / 2.5);
  assert.equal(s.responseThroughput, 9 / 2.5);
  assert.equal(s.avgLatencyUs, 300);
  assert.ok(Math.abs(s.stdLatencyUs - Math.sqrt(100000 / 4)) < 1e-9);
  assert.deepEqual([...s.percentilesUs], [[50, 300], [75, 400], [90, 500], [95, 500], [99, 500]]);
  assert.equal(s.avgSendUs, 10);
  assert.equal(s.avgRecvUs, 5);
  assert.equal(s.avgWaitUs, 285);
  assert.equal(s.errorCount, 5);
  assert.deepEqual(s.errors, [["boom", 3], ["refused", 2]]);
  assert.equal(s.delayedCount, 1);
});

Deno.test("summarizeClient without valid requests reports zeros", () => {
  const s = summarizeClient([window([], { errorCount: 2, errors: new Map([["x", 2]]) })], {
    batchSize: 1,
  });
  assert.equal(s.requestCount, 0);
  assert.equal(s.throughput, 0);
  assert.equal(s.avgLatencyUs, 0);
  assert.equal(s.avgSendUs, 0);
  assert.deepEqual([...s.percentilesUs.keys()], [50, 90, 95, 99]);
  assert.equal(s.percentilesUs.get(99), 0);
  assert.deepEqual(s.errors, [["x", 2]]);
});

Deno.test("statisticsDelta subtracts per model and version", () => {
  const before = [stats("m", "1", { n: 10, successUs: 100 }), stats("gone", "1", { n: 5 })];
  const after = [stats("m", "1", { n: 15, successUs: 100 }), stats("new", "2", { n: 3 })];
  const delta = statisticsDelta(before, after);
  assert.deepEqual(delta.map((s) => [s.name, s.version, s.success.count]), [
    ["m", "1", 5],
    ["new", "2", 3],
  ]);
  assert.equal(delta[0].success.ns, 500_000);
  assert.equal(delta[0].inferenceCount, 5);
  // A counter that went backwards (server restart) is 0, not negative.
  const restarted = statisticsDelta(after, [stats("m", "1", { n: 2 })]);
  assert.equal(restarted[0].success.count, 0);
});

Deno.test("summarizeServer sums windows and follows perf_analyzer's averages", () => {
  const window1 = [stats("m", "1", {
    n: 200,
    successUs: 12005.4,
    queueUs: 42.3,
    computeUs: [164.2, 11748.3, 15.4],
  })];
  const window2 = [stats("m", "1", {
    n: 228,
    successUs: 12005.4,
    queueUs: 42.3,
    computeUs: [164.2, 11748.3, 15.4],
  })];
  const [s, ...rest] = summarizeServer([window1, window2], { model: "m" });
  assert.equal(rest.length, 0);
  assert.equal(s.successCount, 428);
  assert.equal(s.inferenceCount, 428);
  assert.equal(Math.trunc(s.avgRequestUs), 12005);
  assert.equal(Math.trunc(s.queueUs), 42);
  assert.equal(Math.trunc(s.computeInferUs), 11748);
  // 12005 - 42 - trunc(11927.9): each average truncated before subtracting.
  assert.equal(s.overheadUs, 36);
});

Deno.test("summarizeServer puts the profiled model first and sorts composing models", () => {
  const delta = [
    stats("z_post", "1", { n: 10, successUs: 50, queueUs: 5, computeUs: [1, 30, 2] }),
    stats("ensemble", "1", { n: 10, successUs: 400 }),
    stats("a_pre", "3", { n: 10, successUs: 300, queueUs: 10, computeUs: [2, 250, 3] }),
    stats("a_pre", "2", { n: 0 }),
  ];
  const summaries = summarizeServer([delta], { model: "ensemble" });
  assert.deepEqual(summaries.map((s) => [s.model, s.version]), [
    ["ensemble", "1"],
    ["a_pre", "3"],
    ["z_post", "1"],
  ]);
  // 400 - (10 + 5) queue - (255 + 33) compute.
  assert.equal(summaries[0].overheadUs, 97);
  assert.equal(summaries[1].overheadUs, 300 - 10 - 255);
  const only = summarizeServer([delta], { model: "ensemble", composingModels: ["z_post"] });
  assert.deepEqual(only.map((s) => s.model), ["ensemble", "z_post"]);
  assert.deepEqual(summarizeServer([delta], { model: "missing" }), []);
});

Deno.test("summarizeServer picks the version that served requests unless one is given", () => {
  const delta = [
    stats("m", "1", { n: 5, successUs: 10, queueUs: 1 }),
    stats("m", "3", { n: 0 }),
    stats("m", "2", { n: 7, successUs: 10, queueUs: 1 }),
  ];
  assert.equal(summarizeServer([delta], { model: "m" })[0].version, "2");
  assert.equal(summarizeServer([delta], { model: "m", version: "1" })[0].version, "1");
  assert.equal(summarizeServer([[stats("m", "4", { n: 0 })]], { model: "m" })[0].version, "4");
});
