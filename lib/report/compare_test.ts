import assert from "node:assert/strict";
import { compareSummaries, formatComparison, regressionsBeyond } from "./compare.ts";

const window = (throughput: number, latencyUs: number, reported = true) => ({
  reported,
  throughput,
  avg_latency_us: latencyUs,
  percentiles_us: { "50": latencyUs, "99": latencyUs * 1.5 },
});

function summary(levels: Array<{ value: number; windows: ReturnType<typeof window>[] }>) {
  return {
    schema_version: 2,
    levels: levels.map((l) => ({
      mode: "concurrency",
      value: l.value,
      client: {
        throughput: l.windows.reduce((a, w) => a + w.throughput, 0) / l.windows.length,
        avg_latency_us: l.windows.reduce((a, w) => a + w.avg_latency_us, 0) / l.windows.length,
        percentiles_us: {
          "50": l.windows[0].avg_latency_us,
          "99": l.windows[0].avg_latency_us * 1.5,
        },
      },
      windows: [window(1, 1, false), ...l.windows],
    })),
  };
}

Deno.test("compare: a summary against itself is no significant difference at every figure", () => {
  const a = summary([{
    value: 4,
    windows: [window(99, 40_000), window(101, 40_400), window(100, 39_800)],
  }]);
  const c = compareSummaries(a, a, { confidenceLevel: 0.95 });
  const figures = c.levels[0].figures;
  assert.equal(figures.length, 4);
  for (const f of figures) {
    assert.equal(f.verdict, "~");
    assert.equal(f.ratio, 1);
    assert.equal(f.difference!.p, 1);
    assert.deepEqual([f.source, f.samples], ["windows", [3, 3]]);
  }
  assert.deepEqual(regressionsBeyond(c, 0), []);
});

Deno.test("compare: 20 % slower is worse, in the right direction per figure; better the other way", () => {
  const a = summary([
    { value: 1, windows: [window(99, 10_000), window(101, 10_100), window(100, 9_900)] },
    { value: 4, windows: [window(99, 40_000), window(101, 40_400), window(100, 39_800)] },
  ]);
  const b = summary([
    { value: 4, windows: [window(83, 48_000), window(84, 48_300), window(82, 47_900)] },
    { value: 8, windows: [window(83, 96_000), window(84, 96_300), window(82, 95_900)] },
  ]);
  const c = compareSummaries(a, b, { confidenceLevel: 0.95 });
  assert.deepEqual(c.unmatched, { baseline: ["concurrency 1"], candidate: ["concurrency 8"] });
  const [level] = c.levels;
  const byKey = new Map(level.figures.map((f) => [f.key, f]));
  assert.equal(byKey.get("client.throughput")!.verdict, "worse");
  assert.ok(Math.abs(byKey.get("client.throughput")!.ratio - 0.83) < 1e-9);
  assert.equal(byKey.get("client.avg_latency_us")!.verdict, "worse");
  assert.ok(Math.abs(byKey.get("client.avg_latency_us")!.ratio - 48_066.67 / 40_066.67) < 1e-5);
  const difference = byKey.get("client.avg_latency_us")!.difference!;
  assert.ok(difference.ciLow > 7_000 && difference.ciHigh < 9_000, JSON.stringify(difference));
  assert.equal(regressionsBeyond(c, 19).length, 3, "throughput -17 % is within 19 %");
  assert.equal(regressionsBeyond(c, 25).length, 0);
  const reverse = compareSummaries(b, a, { confidenceLevel: 0.95 });
  assert.ok(reverse.levels[0].figures.every((f) => f.verdict === "better"));
  const text = formatComparison(c, { baseline: "a.json", candidate: "b.json" });
  assert.match(text, /Concurrency 4\n {2}Throughput \(infer\/sec\) +100 +83 +0\.830 +-17 %/);
  assert.match(text, /Only in the baseline: concurrency 1/);
});

Deno.test("compare: several runs on both sides are tested run against run", () => {
  const runs = (values: number[]) => ({
    requested: values.length,
    completed: values.length,
    confidence_level: 0.95,
    levels: [{
      mode: "concurrency",
      value: 4,
      figures: { "client.throughput": { n: values.length, values } },
    }],
  });
  const a = {
    ...summary([{ value: 4, windows: [window(100, 1)] }]),
    profile_runs: runs([100, 102, 98, 101, 99]),
  };
  const b = {
    ...summary([{ value: 4, windows: [window(100, 1)] }]),
    profile_runs: runs([100, 103, 97, 100, 101]),
  };
  const c = compareSummaries(a, b, { confidenceLevel: 0.95 });
  const throughput = c.levels[0].figures.find((f) => f.key === "client.throughput")!;
  assert.deepEqual([throughput.source, throughput.samples, throughput.verdict], [
    "runs",
    [5, 5],
    "~",
  ]);
  assert.equal(throughput.baseline, 100);
  assert.equal(throughput.candidate, 100.2);
  // One window per side and no runs of the latency: no test.
  const latency = c.levels[0].figures.find((f) => f.key === "client.avg_latency_us")!;
  assert.deepEqual([latency.source, latency.difference], ["none", undefined]);
});

Deno.test("compare: one window a side tests an average from its requests; sweeps match by place", () => {
  const level = (strategy: string, value: number, ttft: { avg: number; std: number }) => ({
    mode: strategy.startsWith("constant") ? "request_rate" : "concurrency",
    value,
    strategy,
    client: { throughput: value, avg_latency_us: 1000, std_latency_us: 0, request_count: 100 },
    llm: { request_count: 100, time_to_first_token_ms: { ...ttft, p99: ttft.avg * 2 } },
    windows: [window(value, 1000)],
  });
  const a = {
    schema_version: 2,
    levels: [
      level("synchronous", 1, { avg: 20, std: 5 }),
      level("constant@40.5", 40.5, { avg: 20, std: 5 }),
    ],
  };
  const b = {
    schema_version: 2,
    levels: [
      level("synchronous", 1, { avg: 20.1, std: 5 }),
      level("constant@41.2", 41.2, { avg: 24, std: 5 }),
    ],
  };
  const c = compareSummaries(a, b, { confidenceLevel: 0.95 });
  assert.deepEqual(c.levels.map((l) => l.name), ["synchronous", "constant@40.5 / constant@41.2"]);
  const ttft = (i: number) =>
    c.levels[i].figures.find((f) => f.key === "llm.time_to_first_token_ms.avg")!;
  assert.deepEqual([ttft(0).source, ttft(0).samples, ttft(0).verdict], [
    "requests",
    [100, 100],
    "~",
  ]);
  assert.equal(ttft(1).verdict, "worse");
  assert.ok(ttft(1).difference!.p < 1e-6);
  // A percentile has no per-request test.
  const p99 = c.levels[1].figures.find((f) => f.key === "llm.time_to_first_token_ms.p99")!;
  assert.equal(p99.source, "none");
});
