import assert from "node:assert/strict";
import { type Coordinate, neighborhoodClimb, potentialSteps } from "./neighborhood.ts";
import climbs from "./testdata/model_analyzer_climbs.json" with { type: "json" };

/**
 * The pure model of model_analyzer_climbs.py: an ensemble of steps taking `delays` ms per
 * execution, each (max batch, instances) serving instances x max batch x 1000 / delay per second,
 * the whole at most concurrency x 1000 / (the delays' sum), at concurrency 2 x max batch x
 * instances of the first step.
 */
function figures(c: Coordinate, space: (typeof climbs)[number]) {
  const steps = space.delays.map((_, k) => ({
    batch: space.batches[c[2 * k]!]!,
    count: space.counts[c[2 * k + 1]!]!,
  }));
  const load = Math.min(space.maxConcurrency, 2 * steps[0]!.batch * steps[0]!.count);
  const throughput = Math.min(
    load * 1000 / space.delays.reduce((a, b) => a + b, 0),
    ...steps.map((s, k) => s.count * s.batch * 1000 / space.delays[k]!),
  );
  return { throughput, latencyMs: load / throughput * 1000 };
}

Deno.test("the neighbourhood's steps: every vector within radius 3, in Model Analyzer's order", () => {
  // Model Analyzer's Neighborhood._get_potential_steps(2, 3), which flips signs in place.
  assert.deepEqual(potentialSteps(2, 3).slice(0, 17), [
    [0, 0],
    [0, 1],
    [0, -1],
    [0, 2],
    [0, -2],
    [0, 3],
    [0, -3],
    [1, 0],
    [-1, 0],
    [-1, 1],
    [-1, -1],
    [1, -1],
    [1, 1],
    [1, 2],
    [1, -2],
    [-1, -2],
    [-1, 2],
  ]);
  assert.equal(potentialSteps(2, 3).length, 29);
  const four = potentialSteps(4, 3);
  assert.equal(four.length, 425);
  assert.equal(new Set(four.map((s) => s.join())).size, 425);
  assert.ok(four.every((s) => Math.hypot(...s) <= 3));
});

for (const space of climbs) {
  Deno.test(`the quick search climbs as Model Analyzer's: ${space.name}`, async () => {
    const limit = "maxLatencyMs" in space ? space.maxLatencyMs : undefined;
    type M = ReturnType<typeof figures>;
    const fail = (m: M) => limit === undefined ? 0 : Math.max(0, (m.latencyMs - limit) / limit);
    const trace = await neighborhoodClimb<M>({
      dimensions: space.delays.flatMap(() => [
        { min: 0, max: space.batches.length - 1 },
        { min: 0, max: space.counts.length - 1 },
      ]),
      measure: (c) => Promise.resolve(figures(c, space)),
      passes: (m) => limit === undefined || m.latencyMs <= limit,
      compare: (a, b) => (b.throughput - a.throughput) / ((a.throughput + b.throughput) / 2),
      compareConstraints: (a, b) => fail(a) - fail(b),
    });
    // Every coordinate Model Analyzer measured, in its order, its coordinates back home included.
    assert.deepEqual(trace.measured.map((m) => m.coordinate), space.measured);
    assert.deepEqual(trace.best, space.best);
    const distinct = new Set(space.measured.map((c) => c.join()));
    const size = space.batches.length ** space.delays.length *
      space.counts.length ** space.delays.length;
    console.log(`${space.name}: ${distinct.size} of ${size} coordinates measured`);
  });
}

Deno.test("a climb whose every coordinate fails to measure ends at its start", async () => {
  const trace = await neighborhoodClimb<number>({
    dimensions: [{ min: 0, max: 3 }, { min: 0, max: 3 }],
    measure: () => Promise.resolve(undefined),
    passes: () => true,
    compare: (a, b) => b - a,
    compareConstraints: () => 0,
  });
  assert.deepEqual(trace.measured.map((m) => m.coordinate), [[0, 0]]);
  assert.equal(trace.best, undefined);
});
