import assert from "node:assert/strict";
import { constraintText, judge, parseGoals, parseMetric } from "./goals.ts";
import { record } from "./testdata/records.ts";

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
