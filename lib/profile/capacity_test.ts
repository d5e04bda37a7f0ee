import assert from "node:assert/strict";
import { parseSlos } from "../measure/slo.ts";
import type { LevelResult } from "../types/results.ts";
import type { ProfilePlan } from "./plan.ts";
import { CapacityCheckpoint, capacityReport, FailedRequestGate, judgeLevel } from "./capacity.ts";
import { emptyWindow } from "../measure/recorder.ts";

function level(value: number, figures: { p99Ms: number; throughput: number }): LevelResult {
  return {
    mode: "concurrency",
    value,
    stable: true,
    windows: [],
    client: {
      requestCount: 100,
      errorCount: 0,
      durationMs: 1000,
      throughput: figures.throughput,
      percentilesUs: new Map([[99, figures.p99Ms * 1000]]),
    },
  } as unknown as LevelResult;
}

const plan = (slo: string, extra: Partial<ProfilePlan> = {}) =>
  ({
    slos: parseSlos(slo),
    sloAttainment: 1,
    sendLagFails: false,
    capacity: { recipe: "max-concurrency-under-sla", resolution: 1, checkpoint: "" },
    loadMode: "concurrency",
    ...extra,
  }) as unknown as ProfilePlan;

Deno.test("a throughput floor is no bisection bound: the answer is checked against it", () => {
  const p = plan("request_latency:p99<=35,throughput>=150");
  const low = level(1, { p99Ms: 10, throughput: 90 });
  assert.deepEqual(judgeLevel(low, p), { pass: true, reasons: [] });
  const slow = level(7, { p99Ms: 40, throughput: 200 });
  assert.equal(judgeLevel(slow, p).pass, false);
  const point = (r: LevelResult) => ({ value: r.value, result: r, judgement: judgeLevel(r, p) });
  const met = capacityReport(
    { value: 1, passing: point(low), failing: point(slow), points: [], stopped: "x", notes: [] },
    { plan: p, index: () => 0 },
  );
  assert.equal(met.value, undefined);
  assert.match(
    met.stopped,
    /^the highest level within the other SLOs, 1, breaks throughput 90 < 150/,
  );
  assert.deepEqual(met.passing?.verdicts, [
    "request_latency:p99 10 <= 35 msec",
    "throughput 90 < 150 infer/sec",
  ]);
});

Deno.test("failed requests fail a level unless an SLO bounds the errors", () => {
  const r = { ...level(2, { p99Ms: 5, throughput: 100 }) };
  r.client = { ...r.client, errorCount: 3 };
  assert.deepEqual(judgeLevel(r, plan("request_latency:p99<=35")).reasons, ["3 failed requests"]);
  assert.equal(judgeLevel(r, plan("request_latency:p99<=35,error_rate<=0.05")).pass, true);
});

Deno.test("the checkpoint replays the levels in order, then saves new ones after them", () => {
  const dir = Deno.makeTempDirSync();
  const p = plan("request_latency:p99<=35", {
    capacity: { recipe: "max-concurrency-under-sla", resolution: 1, checkpoint: `${dir}/c.ckpt` },
    model: "m",
    url: "u",
    concurrency: { start: 1, end: 0, step: 1 },
  } as Partial<ProfilePlan>);
  const first = CapacityCheckpoint.open(p);
  first.add(level(1, { p99Ms: 10, throughput: 90 }));
  first.add(level(2, { p99Ms: 11, throughput: 180 }));
  const again = CapacityCheckpoint.open(p);
  assert.equal(again.stored, 2);
  assert.equal(again.next(1)?.client.throughput, 90);
  // Another path than the saved one: the rest is measured anew.
  assert.equal(again.next(4), undefined);
  again.add(level(4, { p99Ms: 20, throughput: 200 }));
  assert.deepEqual(CapacityCheckpoint.open(p).next(1)?.value, 1);
  const other = plan("request_latency:p99<=30", {
    ...p,
    slos: parseSlos("request_latency:p99<=30"),
  });
  assert.throws(() => CapacityCheckpoint.open(other), /is from another search/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("--failed-request-threshold counts across windows", () => {
  const gate = new FailedRequestGate({ fraction: 0.1 });
  const w = emptyWindow(0);
  w.latenciesUs = new Array(95).fill(1);
  w.errorCount = 5;
  assert.equal(gate.add(w), undefined);
  const bad = emptyWindow(0);
  bad.latenciesUs = new Array(80).fill(1);
  bad.errorCount = 20;
  assert.equal(gate.add(bad), "--failed-request-threshold 10% reached: 25 of 200 requests failed");
});
