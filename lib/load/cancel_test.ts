import assert from "node:assert/strict";
import { Interrupt } from "../measure/interrupt.ts";
import { measureLevel } from "../measure/level.ts";
import { Recorder } from "../measure/recorder.ts";
import type { InferenceClient, InferSession, PreparedRequest } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";
import { Cancellation } from "./_cancel.ts";
import { ConcurrencyLoad } from "./concurrency.ts";
import { RoundRobinFeed } from "./feed.ts";
import { RateLoad } from "./rate.ts";
import { constantSchedule } from "./schedule.ts";

/** Answers after `latencyMs`; a session closed under a request fails it, as a socket would. */
function slowClient(latencyMs: number) {
  const counts = { sessions: 0, closedInFlight: 0 };
  const client = {
    prepare: (): PreparedRequest => ({ byteLength: 0 }),
    openSession(): Promise<InferSession> {
      counts.sessions++;
      let fail: ((e: Error) => void) | undefined;
      return Promise.resolve({
        infer: (_r: PreparedRequest, timing: RequestTiming) =>
          new Promise<undefined>((resolve, reject) => {
            timing.start = timing.sendEnd = performance.now();
            const timer = setTimeout(() => {
              fail = undefined;
              timing.recvStart = timing.end = performance.now();
              timing.responses = 1;
              resolve(undefined);
            }, latencyMs);
            fail = (e) => {
              clearTimeout(timer);
              reject(e);
            };
          }),
        close: () => {
          if (fail === undefined) return;
          counts.closedInFlight++;
          fail(new Error("connection closed"));
          fail = undefined;
        },
      });
    },
  } as unknown as InferenceClient;
  return { client, counts };
}

const feed = () => new RoundRobinFeed([{ byteLength: 0 }]);

Deno.test("the draw cancels its percentage of requests, the same way every run", () => {
  const draws = (percent: number) => {
    const c = new Cancellation({ percent, delayMs: 0 });
    return Array.from({ length: 10_000 }, () => c.draw());
  };
  const half = draws(50);
  assert.deepEqual(half, draws(50));
  const share = half.filter(Boolean).length / half.length;
  assert.ok(Math.abs(share - 0.5) < 0.02, `${share}`);
  assert.equal(draws(0).filter(Boolean).length, 0);
  assert.equal(draws(100).filter(Boolean).length, 10_000);
});

Deno.test("closed loop: cancelled requests are counted apart, neither valid nor failed", async () => {
  const { client, counts } = slowClient(40);
  const load = new ConcurrencyLoad(client, {
    feed: feed(),
    cancellation: { percent: 50, delayMs: 10 },
  });
  const recorder = new Recorder();
  load.start(2, { recorder, limit: 40 });
  await load.drained();
  await load.stop();
  load.close();
  const w = recorder.rotate();
  const cancelled = w.cancelledCount ?? 0;
  assert.equal(w.errorCount, 0);
  assert.equal(w.latenciesUs.length + cancelled, 40);
  assert.equal(cancelled, counts.closedInFlight);
  assert.ok(cancelled >= 10 && cancelled <= 30, `${cancelled} cancelled of 40`);
  // Every valid request ran its whole 40 ms: none was cut short.
  assert.ok(Math.min(...w.latenciesUs) >= 39_000, `${Math.min(...w.latenciesUs)} us`);
  // A cancelled request's connection is not reused: the next request of its lane opens another.
  assert.ok(counts.sessions >= cancelled && counts.sessions <= 2 + cancelled, `${counts.sessions}`);
});

Deno.test("open loop: a request that answers before the delay is not cancelled", async () => {
  const { client, counts } = slowClient(5);
  const load = new RateLoad(client, {
    feed: feed(),
    maxInflight: 10,
    cancellation: { percent: 100, delayMs: 200 },
  });
  const recorder = new Recorder();
  load.start(constantSchedule(200), { recorder, limit: 10 });
  await load.drained();
  await load.stop();
  const w = recorder.rotate();
  assert.equal(w.latenciesUs.length, 10);
  assert.equal(w.cancelledCount ?? 0, 0);
  assert.equal(counts.closedInFlight, 0);
  load.close();
});

Deno.test("open loop: every drawn request still in flight after the delay is cancelled", async () => {
  const { client } = slowClient(400);
  const load = new RateLoad(client, {
    feed: feed(),
    maxInflight: 10,
    cancellation: { percent: 100, delayMs: 15 },
  });
  const recorder = new Recorder();
  const startMs = performance.now();
  load.start(constantSchedule(100), { recorder, limit: 8 });
  await load.drained();
  await load.stop();
  load.close();
  const w = recorder.rotate();
  assert.equal(w.sendCount, 8);
  assert.equal(w.cancelledCount, 8);
  assert.equal(w.latenciesUs.length + w.errorCount, 0);
  // The last send at 70 ms, cancelled 15 ms later: long before its answer at 470 ms.
  assert.ok(performance.now() - startMs < 300, `${performance.now() - startMs} ms`);
});

Deno.test("cancelInflight ends every request in flight as cancelled", async () => {
  const { client } = slowClient(10_000);
  const load = new ConcurrencyLoad(client, { feed: feed() });
  const recorder = new Recorder();
  load.start(3, { recorder });
  await new Promise((r) => setTimeout(r, 20));
  const stopped = load.stop();
  load.cancelInflight();
  await stopped;
  load.close();
  const w = recorder.rotate();
  assert.equal(w.cancelledCount, 3);
  assert.equal(w.errorCount, 0);
});

/** A level measured with --benchmark-duration `durationMs` and a grace period of `graceMs`. */
async function durationLevel(latencyMs: number, durationMs: number, graceMs: number) {
  const { client } = slowClient(latencyMs);
  const load = new ConcurrencyLoad(client, { feed: feed() });
  const startMs = performance.now();
  const result = await measureLevel({
    start: (o) => load.start(2, o),
    stop: () => load.stop(),
    drained: () => load.drained(),
    cancelInflight: () => load.cancelInflight(),
  }, {
    mode: "concurrency",
    value: 2,
    model: "m",
    interrupt: new Interrupt(),
    batchSize: 1,
    measurementMode: "time_windows",
    measurementIntervalMs: 5000,
    measurementRequestCount: 50,
    stabilityPercentage: 10,
    maxTrials: 10,
    requestCount: 0,
    benchmarkDurationMs: durationMs,
    benchmarkGraceMs: graceMs,
    warmupRequestCount: 0,
    stallTimeoutMs: 0,
  });
  load.close();
  return { result, tookMs: performance.now() - startMs };
}

Deno.test("--benchmark-duration: requests in flight at its end finish within the grace period", async () => {
  // 2 in flight for 40 ms each over 100 ms: the third pair is in flight at the end and ends at 120.
  const { result, tookMs } = await durationLevel(40, 100, 1000);
  assert.equal(result.windows.length, 1);
  assert.equal(result.stable, true);
  assert.equal(result.client.requestCount, 6);
  assert.equal(result.client.cancelledCount, undefined);
  assert.ok(tookMs >= 115 && tookMs < 400, `${tookMs} ms`);
});

Deno.test("--benchmark-duration: requests still in flight when the grace period ends are cancelled", async () => {
  const { result, tookMs } = await durationLevel(70, 100, 20);
  // Two answered at 70 ms; the next two, due at 140, cancelled at 120.
  assert.equal(result.client.requestCount, 2);
  assert.equal(result.client.cancelledCount, 2);
  assert.equal(result.client.errorCount, 0);
  assert.ok(tookMs >= 115 && tookMs < 400, `${tookMs} ms`);
});
