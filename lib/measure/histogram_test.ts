import assert from "node:assert/strict";
import { mulberry32 } from "../input/generate.ts";
import { LatencyHistogram } from "./histogram.ts";
import { percentile } from "./stats.ts";

/** Latencies in milliseconds: a log-normal body around 2 ms and a 1 % tail up to 200 ms. */
function latencies(count: number, seed: number): number[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return random() < 0.01 ? 20 + random() * 180 : 2 * Math.exp(0.4 * normal);
  });
}

function relativeError(actual: number, expected: number): number {
  return Math.abs(actual - expected) / expected;
}

const PERCENTILES = [0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100];

Deno.test("percentiles agree with exact sorted-array percentiles within 0.1 %", () => {
  for (const [count, seed] of [[1, 1], [2, 2], [7, 3], [1000, 4], [100_000, 5]]) {
    const samples = latencies(count, seed);
    const histogram = new LatencyHistogram();
    for (const ms of samples) histogram.recordMs(ms);
    const sortedNs = Float64Array.from(samples, (ms) => ms * 1e6).sort();
    const actual = histogram.percentilesNs(PERCENTILES);
    PERCENTILES.forEach((p, i) => {
      const exact = percentile(sortedNs, p);
      assert.ok(
        relativeError(actual[i], exact) <= 0.001,
        `p${p} of ${count}: ${actual[i]} vs exact ${exact}`,
      );
    });
    const summary = histogram.summary([]);
    assert.equal(summary.count, count);
    assert.ok(relativeError(summary.meanNs, sortedNs.reduce((a, b) => a + b) / count) < 0.001);
    assert.ok(relativeError(summary.minNs, sortedNs[0]) < 0.001);
    assert.ok(relativeError(summary.maxNs, sortedNs[count - 1]) < 0.001);
  }
});

Deno.test("percentiles of an empty histogram are 0 and bad percentiles are rejected", () => {
  const histogram = new LatencyHistogram();
  assert.deepEqual(histogram.summary([50, 99]), {
    count: 0,
    minNs: 0,
    maxNs: 0,
    meanNs: 0,
    stdDevNs: 0,
    percentilesNs: [0, 0],
  });
  assert.throws(() => histogram.percentilesNs([101]), RangeError);
});

Deno.test("the compressed encoding round-trips and merged histograms equal the pooled one", () => {
  const a = latencies(5000, 11);
  const b = latencies(3000, 12);
  const ha = new LatencyHistogram();
  const hb = new LatencyHistogram();
  const pooled = new LatencyHistogram();
  a.forEach((ms) => (ha.recordMs(ms), pooled.recordMs(ms)));
  b.forEach((ms) => (hb.recordMs(ms), pooled.recordMs(ms)));

  const encoded = ha.encode();
  assert.match(encoded, /^HISTF/);
  const decoded = LatencyHistogram.decode(encoded);
  assert.equal(decoded.count, ha.count);
  assert.deepEqual(decoded.percentilesNs(PERCENTILES), ha.percentilesNs(PERCENTILES));

  const merged = LatencyHistogram.merge([LatencyHistogram.decode(ha.encode()), hb]);
  assert.equal(merged.count, 8000);
  assert.deepEqual(merged.percentilesNs(PERCENTILES), pooled.percentilesNs(PERCENTILES));
  assert.equal(ha.count, 5000, "inputs of a merge are unchanged");
});

Deno.test("fromMicroseconds records window sample arrays", () => {
  const histogram = LatencyHistogram.fromMicroseconds([1000, 2000, 3000]);
  const summary = histogram.summary([50]);
  assert.equal(summary.count, 3);
  assert.ok(relativeError(summary.percentilesNs[0], 2_000_000) < 0.001);
  assert.ok(relativeError(summary.maxNs, 3_000_000) < 0.001);
});

Deno.test("a frozen histogram keeps its figures in its compressed encoding", () => {
  const histogram = new LatencyHistogram();
  latencies(20_000, 21).forEach((ms) => histogram.recordMs(ms));
  const before = histogram.summary(PERCENTILES);
  const encoded = histogram.encode();
  histogram.freeze();
  histogram.freeze();
  assert.equal(histogram.count, 20_000);
  assert.deepEqual(histogram.summary(PERCENTILES), before);
  assert.equal(histogram.encode(), encoded);
  assert.equal(LatencyHistogram.merge([histogram, histogram]).count, 40_000);
  assert.throws(() => histogram.recordMs(1), TypeError);
});
