import assert from "node:assert/strict";
import { constraintText, judge, parseGoals, parseMetric } from "./goals.ts";
import { record } from "./testdata/records.ts";
import type { LlmSummary } from "../types/results.ts";

Deno.test("metrics: throughput up, latencies down, in msec", () => {
  const r = record({}, { throughput: 120, p99Ms: 25 }).result;
  assert.equal(parseMetric("throughput")!.value(r), 120);
  assert.equal(parseMetric("p99-latency")!.value(r), 25);
  assert.equal(parseMetric("avg-latency")!.value(r), 20);
  assert.equal(parseMetric("p75-latency")!.value(r), undefined);
  assert.equal(parseMetric("p99-latency")!.higherIsBetter, false);
  assert.equal(parseMetric("p100-latency"), undefined);
  assert.equal(parseMetric("latency"), undefined);
});

Deno.test("constraints are comma-delimited or repeated and print back as given", () => {
  const goals = parseGoals("throughput", [
    "max-p99-latency=20, min-throughput=5",
    "max-avg-latency=7.5",
  ]);
  assert.deepEqual(goals.constraints.map(constraintText), [
    "max-p99-latency=20",
    "min-throughput=5",
    "max-avg-latency=7.5",
  ]);
});

Deno.test("the best point per model maximizes the objective among stable points within the constraints", () => {
  const points = [
    record({ model: "a", value: 1 }, { throughput: 100, p99Ms: 10 }),
    record({ model: "a", value: 2 }, { throughput: 190, p99Ms: 19 }),
    record({ model: "a", value: 4 }, { throughput: 300, p99Ms: 35 }),
    record({ model: "a", value: 8 }, { throughput: 400, p99Ms: 15, stable: false }),
    record({ model: "b", value: 1 }, { throughput: 50, p99Ms: 30 }),
    record({ model: "c", value: 1 }, { throughput: 500, p99Ms: 5, client: { errorCount: 3 } }),
    record({ model: "c", value: 2 }, { throughput: 80, p99Ms: 5 }),
  ];
  const goals = parseGoals("throughput", ["max-p99-latency=20"]);
  const verdicts = judge(points, { goals, result: (p) => p.result, group: (p) => p.point.model });
  assert.deepEqual(verdicts.map((v) => v.best), [false, true, false, false, false, false, true]);
  assert.deepEqual(verdicts[2]!.reasons, ["p99 latency 35 > 20 msec"]);
  assert.deepEqual(verdicts[3]!.reasons, ["unstable"]);
  assert.deepEqual(verdicts[5]!.reasons, ["3 failed requests"]);

  const fastest = judge(points, {
    goals: parseGoals("p99-latency", ["min-throughput=90"]),
    result: (p) => p.result,
    group: (p) => p.point.model,
  });
  assert.deepEqual(fastest.map((v) => v.best), [true, false, false, false, false, false, false]);
  assert.deepEqual(fastest[4]!.reasons, ["throughput 50 < 90 infer/sec"]);
});

Deno.test("LLM runs: goodput, token throughput and genai-perf's latencies as goals", () => {
  const ttft = { avg: 30_000, std: 0, min: 0, max: 0, percentiles: new Map([[99, 45_000]]) };
  const result = {
    ...record({}, { throughput: 10, p99Ms: 25 }).result,
    llm: {
      outputTokenThroughput: 640,
      goodput: { objectives: [], goodCount: 9, requestGoodput: 9 },
      timeToFirstTokenUs: ttft,
    } as unknown as LlmSummary,
  };
  assert.equal(parseMetric("request-goodput")!.value(result), 9);
  assert.equal(parseMetric("request-goodput")!.higherIsBetter, true);
  assert.equal(parseMetric("output-token-throughput")!.value(result), 640);
  assert.equal(parseMetric("avg-time-to-first-token")!.value(result), 30);
  assert.equal(parseMetric("p99-time-to-first-token")!.value(result), 45);
  assert.equal(parseMetric("p99-time-to-first-token")!.higherIsBetter, false);
  assert.equal(parseMetric("p99-inter-token-latency")!.value(result), undefined);
  assert.equal(parseMetric("p99-time-to-lunch"), undefined);
  // genai-perf's percentiles are always measured; others need --percentile.
  const goals = parseGoals("request-goodput", ["max-p99-time-to-first-token=100"], {
    percentiles: [50, 90, 95, 99],
  });
  assert.equal(goals.constraints[0].metric.label, "p99 time to first token");
  assert.throws(
    () => parseGoals("p97-inter-token-latency", [], { percentiles: [50, 90, 95, 99] }),
    /needs --percentile 97/,
  );
});
