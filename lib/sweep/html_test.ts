import assert from "node:assert/strict";
import { parseGoals } from "./goals.ts";
import { point, record } from "./testdata/records.ts";
import { renderSweepHtmlReport, SWEEP_COMPONENT_NAMES, sweepHtmlData } from "./html.ts";

/** Two series of slow (batch sizes 1 and 2, loads out of order) and one of batched. */
function records() {
  return [
    record({ model: "slow", value: 2 }, { throughput: 100.25, p99Ms: 24 }),
    record({ model: "slow", value: 1 }, { throughput: 99.5, p99Ms: 12 }),
    record({ model: "slow", batchSize: 2, value: 1 }, { throughput: 150, p99Ms: 18 }),
    record({ model: "batched", value: 1 }, { throughput: 400, p99Ms: 9, stable: false }),
  ];
}

const GOALS = parseGoals("throughput", ["max-p99-latency=20", "min-throughput=50"]);

Deno.test("sweep HTML data: a curve per series in load order, best points, constraint lines", () => {
  const data = sweepHtmlData(records(), { version: "0", goals: GOALS });
  assert.equal(data.latencyLabel, "p99 latency", "the constrained latency");
  assert.deepEqual(
    data.series.map((s) => [s.label, s.points.map((p) => [p.value, p.latencyMs, p.status])]),
    [
      ["slow · batch size 1", [[1, 12, "candidate"], [2, 24, "p99 latency 24 > 20 msec"]]],
      ["slow · batch size 2", [[1, 18, "best"]]],
      ["batched · batch size 1", [[1, 9, "unstable"]]],
    ],
  );
  assert.deepEqual(data.limits, [
    { axis: "latency", value: 20, label: "max-p99-latency=20" },
    { axis: "throughput", value: 50, label: "min-throughput=50" },
  ]);
  assert.deepEqual(data.rows.map((r) => r.label), [
    "slow · batch size 1 · concurrency 2",
    "slow · batch size 1 · concurrency 1",
    "slow · batch size 2 · concurrency 1",
    "batched · batch size 1 · concurrency 1",
  ]);
  const parts = data.rows[0]!.segments;
  assert.deepEqual(parts.map((s) => s.name), SWEEP_COMPONENT_NAMES.slice(0, 4));
  assert.ok(
    Math.abs(parts.reduce((a, s) => a + s.ms, 0) - 19.2) < 1e-9,
    "the parts add up to the average latency",
  );
});

Deno.test("sweep HTML data: the curve's latency is the objective's, else --percentile's, else avg", () => {
  const latency = (objective: string, percentile?: number) =>
    sweepHtmlData(records(), {
      version: "0",
      goals: parseGoals(objective, []),
      ...(percentile === undefined ? {} : { percentile }),
    }).latencyLabel;
  assert.equal(latency("p95-latency"), "p95 latency");
  assert.equal(latency("throughput", 90), "p90 latency");
  assert.equal(latency("throughput"), "avg latency");
  assert.equal(latency("p97-latency"), "avg latency", "no point has p97: not an empty chart");
});

Deno.test("sweep HTML: missing figures are left out and explained, never drawn as 0", () => {
  const points = records();
  delete points[3]!.result.server;
  points[1]!.result.client.percentilesUs.set(97, 15_000);
  const context = { version: "0", goals: parseGoals("p97-latency", []) };
  const data = sweepHtmlData(points, context);
  assert.equal(data.latencyLabel, "p97 latency");
  assert.deepEqual(data.series.flatMap((s) => s.points.map((p) => p.latencyMs)), [15]);
  const unsplit = data.rows[3]!.segments;
  assert.deepEqual(unsplit.map((s) => s.name), [
    SWEEP_COMPONENT_NAMES[0],
    SWEEP_COMPONENT_NAMES[4],
  ]);
  assert.ok(unsplit.every((s) => s.ms > 0));
  const html = renderSweepHtmlReport(points, context);
  assert.match(html, /3 points are left out: the p97 latency was not measured\./);
  assert.match(html, /1 of the 4 points has no server statistics/);
  const cells = [...html.matchAll(/<td class="missing" title="([^"]+)">/g)].map((m) => m[1]);
  assert.deepEqual(cells, [
    ...Array(3).fill("not measured"),
    "no server statistics",
    "no server statistics",
  ]);
});

Deno.test("sweep HTML: best rows highlighted, failures and notes escaped, nothing fetched", () => {
  const html = renderSweepHtmlReport(records(), {
    version: "1.2.3",
    goals: GOALS,
    source: "ckpt/0.ckpt",
    failures: [{ point: point({ model: "<nope>" }), message: 'Model "<nope>" not found' }],
    note: "Interrupted & resumable",
  });
  assert.doesNotMatch(html, /(src|href)=["']?https?:/);
  assert.match(html, /inferperf 1\.2\.3 · 4 points · every point: http, input data random/);
  assert.match(html, /from ckpt\/0\.ckpt/);
  assert.match(html, /<p class="note">Interrupted &#38; resumable<\/p>/);
  assert.equal(html.match(/<tr class="best">/g)?.length, 1);
  assert.match(
    html,
    /<li><strong>slow, batch size 2, http, input data random, concurrency 1<\/strong>: throughput 150 infer\/sec<\/li>/,
  );
  assert.match(html, /<li>batched: none; no point is stable/);
  assert.match(html, /<li>&#60;nope&#62;: none;/);
  assert.match(html, /Model &#34;&#60;nope&#62;&#34; not found/);
  assert.doesNotMatch(html.replace(/<script[\s\S]*?<\/script>/g, ""), /<nope>/);
});

Deno.test("sweep HTML without points says so instead of drawing empty charts", () => {
  const html = renderSweepHtmlReport([], {
    version: "0",
    goals: GOALS,
    failures: [{ point: point(), message: "Model not found" }],
  });
  assert.match(html, /No point was measured: nothing to chart\./);
  assert.doesNotMatch(html, /id="chart-/);
  assert.doesNotMatch(html, /<table>/);
});
