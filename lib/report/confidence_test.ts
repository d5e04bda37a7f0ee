import assert from "node:assert/strict";
import { formatConfidence, hasConverged, levelConfidence, relativeWidth } from "./confidence.ts";
import { headlineFigures, windowValue } from "./figures.ts";

const level = (value: number, throughput: number, latencyUs: number) => ({
  mode: "concurrency",
  value,
  client: {
    throughput,
    avg_latency_us: latencyUs,
    percentiles_us: { "50": latencyUs, "99": 2 * latencyUs },
  },
});

Deno.test("levelConfidence: levels matched by value, each figure from the runs that measured it", () => {
  const runs = [
    [level(1, 100, 10_000), level(2, 180, 11_000)],
    [level(1, 102, 10_200)],
    [level(1, 98, 9_800), level(2, 182, 11_200)],
  ];
  const [one, two] = levelConfidence(runs, 0.95);
  assert.deepEqual([one.value, two.value], [1, 2]);
  const throughput = one.figures.find((f) => f.key === "client.throughput")!;
  assert.deepEqual(throughput.values, [100, 102, 98]);
  assert.equal(throughput.mean, 100);
  assert.equal(throughput.better, "higher");
  assert.equal(two.figures[0].n, 2);
  assert.deepEqual(one.figures.map((f) => f.key), [
    "client.throughput",
    "client.avg_latency_us",
    "client.percentiles_us.50",
    "client.percentiles_us.99",
  ]);
  // (ci_high - ci_low) / mean of the throughput: 2 x 4.302653 x 2 / sqrt(3) / 100 = 0.0994.
  assert.ok(Math.abs(relativeWidth(throughput) - 0.09937) < 1e-4);
  assert.equal(hasConverged([one], 0.09), false);
  assert.equal(hasConverged([one], 0.1), true);
  assert.equal(hasConverged([one, two], 0.2), false, "two runs: t(0.975, 1) = 12.7");
  assert.equal(hasConverged([one, two], 0.25), true);
  assert.equal(hasConverged(levelConfidence([runs[0]], 0.95), 10), false, "one run: no interval");
  const text = formatConfidence({
    requested: 3,
    completed: 3,
    confidenceLevel: 0.95,
    levels: [one],
  });
  assert.match(text, /Throughput: +100\.0 infer\/sec ± 5\.0 \(95\.0 \.\. 105\.0\), CV 2 %/);
  assert.match(text, /Avg latency: +10\.00 ms ± 0\.50 /);
});

Deno.test("headline figures: LLM ones where the level has them, window values by the same key", () => {
  const llmLevel = {
    ...level(4, 50, 20_000),
    llm: {
      time_to_first_token_ms: { avg: 21, p50: 20, p90: 25, p99: 30 },
      request_throughput_per_sec: 50,
      output_token_throughput_tokens_per_sec: 400,
    },
  };
  const keys = headlineFigures(llmLevel).map((f) => f.key);
  assert.ok(keys.includes("llm.time_to_first_token_ms.p99"));
  assert.ok(keys.includes("llm.output_token_throughput_tokens_per_sec"));
  assert.ok(!keys.includes("llm.inter_token_latency_ms.avg"));
  const window = {
    throughput: 51,
    percentiles_us: { "99": 41_000 },
    llm: { request_throughput_per_sec: 49 },
  };
  assert.equal(windowValue(window, "client.throughput"), 51);
  assert.equal(windowValue(window, "client.percentiles_us.99"), 41_000);
  assert.equal(windowValue(window, "llm.request_throughput_per_sec"), 49);
  assert.equal(windowValue(window, "client.avg_latency_us"), undefined);
});
