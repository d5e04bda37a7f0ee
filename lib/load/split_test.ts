import assert from "node:assert/strict";
import { mulberry32 } from "../input/generate.ts";
import {
  constantSchedule,
  fixedSchedule,
  intervalSchedule,
  poissonSchedule,
  type Schedule,
} from "./schedule.ts";
import {
  type Part,
  share,
  shareRange,
  shareStart,
  shiftedSchedule,
  strideSchedule,
} from "./split.ts";

const parts = (count: number): Part[] =>
  Array.from({ length: count }, (_, index) => ({ index, count }));

function take(schedule: Schedule, n: number): number[] {
  return Array.from({ length: n }, () => schedule.next());
}

Deno.test("shares add up to the total and differ by at most one", () => {
  for (const count of [1, 2, 3, 7]) {
    for (const total of [0, 1, 2, 5, 64, 1001]) {
      const shares = parts(count).map((p) => share(total, p));
      assert.equal(shares.reduce((a, b) => a + b, 0), total);
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1, `${total} / ${count}`);
      // Each slice starts where the one before ends: lanes numbered globally do not overlap.
      parts(count).forEach((p, i) => {
        const before = shares.slice(0, i).reduce((a, b) => a + b, 0);
        assert.equal(shareStart(total, p), before);
      });
    }
  }
  assert.deepEqual(parts(2).map((p) => share(5, p)), [3, 2]);
});

Deno.test("a range is split into contiguous slices covering it", () => {
  assert.deepEqual(parts(3).map((p) => shareRange({ start: 10, end: 17 }, p)), [
    { start: 10, end: 12 },
    { start: 13, end: 15 },
    { start: 16, end: 17 },
  ]);
  const max = shareRange({ start: 1, end: 4294967295 }, { index: 1, count: 2 });
  assert.deepEqual(max, { start: 2147483649, end: 4294967295 });
});

Deno.test("strided schedules together are exactly the schedule", () => {
  const makers: Array<[string, () => Schedule]> = [
    ["constant", () => constantSchedule(300)],
    ["poisson", () => poissonSchedule(1000, mulberry32(7))],
    ["intervals", () => intervalSchedule([100, 2500, 0, 700])],
    ["fixed", () => fixedSchedule([0, 0, 1, 5, 9, 9, 20])],
  ];
  for (const [name, make] of makers) {
    const whole = take(make(), 40);
    for (const count of [1, 2, 3]) {
      const merged = parts(count)
        .flatMap((p) => {
          const stride = strideSchedule(make(), p);
          return take(stride, Math.ceil(40 / count)).map((due, k) => ({
            due,
            n: k * count + p.index,
          }));
        })
        .filter((s) => s.n < 40)
        .sort((a, b) => a.n - b.n)
        .map((s) => s.due);
      assert.deepEqual(merged, whole, `${name} in ${count}`);
    }
  }
});

Deno.test("a finite schedule ends in every stride", () => {
  const second = strideSchedule(fixedSchedule([1, 2, 3]), { index: 1, count: 2 });
  assert.deepEqual(take(second, 3), [2, Infinity, Infinity]);
});

Deno.test("a shifted schedule moves every due time", () => {
  assert.deepEqual(take(shiftedSchedule(constantSchedule(1000), 0.5), 3), [1.5, 2.5, 3.5]);
});
