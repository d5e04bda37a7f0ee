import assert from "node:assert/strict";
import { meanInterval, studentTCdf, studentTQuantile, welchTest } from "./confidence.ts";

function assertAlmostEquals(actual: number, expected: number, tolerance: number, what = ""): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual} != ${expected}`);
}

Deno.test("Student's t quantiles equal the published values", () => {
  // [p, df, t] from the standard tables (R's qt and scipy.stats.t.ppf, 6 decimals).
  const known: Array<[number, number, number]> = [
    [0.975, 1, 12.706205],
    [0.975, 2, 4.302653],
    [0.975, 4, 2.776445],
    [0.975, 9, 2.262157],
    [0.975, 10, 2.228139],
    [0.975, 30, 2.042272],
    [0.975, 1000, 1.962339],
    [0.995, 4, 4.604095],
    [0.995, 1, 63.656741],
    [0.95, 5, 2.015048],
    [0.9, 3, 1.637744],
    [0.975, 2.5, 3.574655],
  ];
  for (const [p, df, t] of known) {
    assertAlmostEquals(studentTQuantile(p, df), t, 2e-6, `t(${p}, ${df})`);
    assertAlmostEquals(studentTQuantile(1 - p, df), -t, 2e-6);
  }
  assert.deepEqual(studentTQuantile(0.5, 7), 0);
});

Deno.test("Student's t CDF: symmetric, and the Cauchy distribution at df 1", () => {
  for (const t of [-3, -0.5, 0.2, 1, 4]) {
    assertAlmostEquals(studentTCdf(t, 1), 0.5 + Math.atan(t) / Math.PI, 1e-12);
    assertAlmostEquals(studentTCdf(t, 6) + studentTCdf(-t, 6), 1, 1e-12);
  }
  assertAlmostEquals(studentTCdf(2.776445, 4), 0.975, 1e-7);
});

Deno.test("meanInterval: AIPerf's worked example of five runs", () => {
  const ci = meanInterval([150, 152, 148, 155, 151], 0.95);
  assertAlmostEquals(ci.mean, 151.2, 1e-9);
  assertAlmostEquals(ci.std, 2.588436, 1e-6);
  assertAlmostEquals(ci.se, 2.588436 / Math.sqrt(5), 1e-6);
  assertAlmostEquals(ci.tCritical, 2.776445, 1e-6);
  assertAlmostEquals(ci.ciLow, 151.2 - 2.776445 * 1.157584, 1e-4);
  assertAlmostEquals(ci.cv, 2.588436 / 151.2, 1e-8);
  assert.deepEqual([ci.min, ci.max, ci.n], [148, 155, 5]);
  const one = meanInterval([3], 0.95);
  assert.deepEqual([one.std, one.ciLow, one.ciHigh], [0, 3, 3]);
  assert.ok(Number.isNaN(one.tCritical));
});

Deno.test("welchTest equals scipy's ttest_ind(equal_var=False)", () => {
  // scipy.stats.ttest_ind(b, a, equal_var=False): t 4.792987, df 7.859369, p 0.0014372,
  // 95 % interval of b - a: 1.376223 .. 3.943777.
  const a = meanInterval([19.1, 20.2, 21.3, 19.8, 20.5], 0.95);
  const b = meanInterval([22.0, 23.4, 21.9, 22.8, 24.1], 0.95);
  const w = welchTest(a, b, 0.95);
  assertAlmostEquals(w.difference, 2.66, 1e-9);
  assertAlmostEquals(w.t, 4.792987, 1e-6);
  assertAlmostEquals(w.df, 7.859369, 1e-6);
  assertAlmostEquals(w.p, 0.0014372, 1e-7);
  assertAlmostEquals(w.ciLow, 1.376223, 1e-6);
  assertAlmostEquals(w.ciHigh, 3.943777, 1e-6);
  const same = welchTest(a, a, 0.95);
  assert.deepEqual([same.difference, same.p], [0, 1]);
  const flat = welchTest({ mean: 1, std: 0, n: 3 }, { mean: 1, std: 0, n: 3 }, 0.95);
  assert.equal(flat.p, 1);
});
