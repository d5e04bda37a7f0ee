import assert from "node:assert/strict";
import { Interrupt } from "./interrupt.ts";
import type { RequestTiming } from "../types/timing.ts";
import { LatencyHistogram } from "./histogram.ts";
import { type LevelLoad, MAX_EMPTY_WINDOWS, measureLevel, NoValidRequestsError } from "./level.ts";
import type { Recorder } from "./recorder.ts";
import type { WindowData } from "../types/results.ts";

/** An open-loop load that completes `perTick` requests of 2 ms every millisecond. */
function tickingLoad(perTick: number): LevelLoad {
  let timer: ReturnType<typeof setInterval> | undefined;
  const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 1 };
  return {
    start({ recorder }: { recorder: Recorder }) {
      timer = setInterval(() => {
        for (let i = 0; i < perTick; i++) {
          timing.end = timing.recvStart = performance.now();
          timing.start = timing.sendEnd = timing.end - 2;
          recorder.recordSend(timing.start, timing.start, false);
          recorder.record(timing, timing.start);
        }
      }, 1);
    },
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
    drained: () => Promise.resolve(),
  };
}

Deno.test("windows drop their exact samples once no summary needs them; histograms stay", async () => {
  const seen: Array<{ window: WindowData; samples: number }> = [];
  const result = await measureLevel(tickingLoad(5), {
    mode: "request_rate",
    value: 1000,
    model: "m",
    interrupt: new Interrupt(),
    batchSize: 1,
    measurementMode: "count_windows",
    measurementIntervalMs: 1000,
    measurementRequestCount: 20,
    // Never stable: every trial runs, so windows leave the last three as the level goes on.
    stabilityPercentage: 0,
    maxTrials: 6,
    countCheckMs: 0,
    requestCount: 0,
    benchmarkDurationMs: 0,
    benchmarkGraceMs: 0,
    warmupRequestCount: 0,
    stallTimeoutMs: 0,
    newHistogram: () => new LatencyHistogram(),
    onWindow: (window) => {
      // Verbose pass lines are printed here: the window still has its samples.
      seen.push({ window, samples: window.latenciesUs.length });
      const older = seen.at(-5)?.window;
      if (older) assert.equal(older.latenciesUs.length, 0, "a fourth-to-last window is released");
    },
  });
  assert.equal(result.stable, false);
  assert.equal(result.windows.length, 6);
  for (const [i, window] of result.windows.entries()) {
    assert.ok(seen[i].samples >= 20, `window ${i} had its samples when reported`);
    assert.equal(window.histogram!.count, seen[i].samples, "the histogram keeps every latency");
    assert.deepEqual(
      [window.latenciesUs, window.correctedLatenciesUs, window.sendLagsUs],
      [[], [], []],
    );
  }
  const reported = seen.slice(-3).reduce((n, s) => n + s.samples, 0);
  assert.equal(result.client.requestCount, reported, "summarized before the samples went");
  assert.equal(result.openLoop!.sendCount, reported);
  assert.ok(Math.abs(result.client.avgLatencyUs - 2000) < 1);
});

Deno.test("count windows end at the first whole number of checks by which the count is in", async () => {
  const level = async (options: { perTick: number; count: number; checkMs: number }) => {
    const seen: Array<{ ms: number; requests: number }> = [];
    await measureLevel(tickingLoad(options.perTick), {
      mode: "request_rate",
      value: 1000,
      model: "m",
      interrupt: new Interrupt(),
      batchSize: 1,
      measurementMode: "count_windows",
      measurementIntervalMs: 5000,
      measurementRequestCount: options.count,
      stabilityPercentage: 0,
      maxTrials: 3,
      countCheckMs: options.checkMs,
      requestCount: 0,
      benchmarkDurationMs: 0,
      benchmarkGraceMs: 0,
      warmupRequestCount: 0,
      stallTimeoutMs: 0,
      onWindow: (w) => seen.push({ ms: w.endMs - w.startMs, requests: w.latenciesUs.length }),
    });
    return seen;
  };
  // A fast load: 10 requests within a few ms; each window runs on to the first check.
  for (const w of await level({ perTick: 5, count: 10, checkMs: 150 })) {
    assert.ok(w.ms >= 149, `${w.ms} ms`);
    assert.ok(w.requests > 10, `${w.requests} requests`);
  }
  // A slow one (a request a millisecond at most): 150 are in past the first check of 100 ms, and
  // the window runs on to a later one (timers fire late on a busy machine, CI once saw 20 ms,
  // and up to a millisecond early: the timer drops the fraction of its delay).
  for (const w of await level({ perTick: 1, count: 150, checkMs: 100 })) {
    assert.ok(w.ms >= 199 && (w.ms + 2) % 100 < 52, `${w.ms} ms`);
    assert.ok(w.requests >= 150, `${w.requests} requests`);
  }
});

/** A closed loop stand-in whose requests fail while `failing()` holds. */
function outageLoad(failing: () => boolean): LevelLoad {
  let timer: ReturnType<typeof setInterval> | undefined;
  const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 1 };
  return {
    start({ recorder }: { recorder: Recorder }) {
      timer = setInterval(() => {
        timing.end = timing.recvStart = performance.now();
        timing.start = timing.sendEnd = timing.end - 1;
        if (failing()) recorder.recordError("connection refused", timing);
        else recorder.record(timing);
      }, 1);
    },
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
    drained: () => Promise.resolve(),
  };
}

const OUTAGE_LEVEL = {
  mode: "concurrency" as const,
  value: 1,
  model: "m",
  batchSize: 1,
  measurementMode: "time_windows" as const,
  measurementIntervalMs: 100,
  measurementRequestCount: 0,
  stabilityPercentage: 100,
  maxTrials: 10,
  requestCount: 0,
  benchmarkDurationMs: 0,
  benchmarkGraceMs: 0,
  warmupRequestCount: 0,
  stallTimeoutMs: 0,
};

Deno.test("a level goes on through two empty windows (a restart) and reports their failures", async () => {
  const windows: WindowData[] = [];
  let empty = 0;
  // The second and third windows fail whole: onWindow runs right after a window ends.
  const result = await measureLevel(
    outageLoad(() => windows.length === 1 || windows.length === 2),
    {
      ...OUTAGE_LEVEL,
      interrupt: new Interrupt(),
      onWindow: (window) => {
        windows.push(window);
        if (window.latenciesUs.length === 0) empty++;
      },
    },
  );
  assert.equal(empty, MAX_EMPTY_WINDOWS - 1);
  assert.ok(windows.length > MAX_EMPTY_WINDOWS, "measured past the outage");
  const failed = windows.reduce((n, w) => n + w.errorCount, 0);
  assert.ok(failed > 10, `${failed} failures`);
  assert.equal(result.client.errorCount, failed, "every window's failures, not the stable ones'");
  assert.deepEqual(result.client.errors, [["connection refused", failed]]);
});

Deno.test("three empty windows in a row end the level: the server is gone", async () => {
  let windows = 0;
  await assert.rejects(
    measureLevel(outageLoad(() => true), {
      ...OUTAGE_LEVEL,
      interrupt: new Interrupt(),
      onWindow: () => windows++,
    }),
    NoValidRequestsError,
  );
  assert.equal(windows, MAX_EMPTY_WINDOWS);
});

Deno.test("a level that ends unsettled with an empty window among its last three fails", async () => {
  let windows = 0;
  // Never stable (a 0 % spread); the fourth of five windows fails whole.
  await assert.rejects(
    measureLevel(outageLoad(() => windows === 3), {
      ...OUTAGE_LEVEL,
      stabilityPercentage: 0,
      maxTrials: 5,
      interrupt: new Interrupt(),
      onWindow: () => windows++,
    }),
    NoValidRequestsError,
  );
  assert.equal(windows, 5);
});

/**
 * A load completing one request a millisecond, each taking `latencyMs()`. A late timer
 * catches up, so the throughput stays steady however loaded the machine is.
 */
function latencyLoad(latencyMs: () => number): LevelLoad {
  let timer: ReturnType<typeof setInterval> | undefined;
  const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 1 };
  return {
    start({ recorder }: { recorder: Recorder }) {
      const startMs = performance.now();
      let completed = 0;
      timer = setInterval(() => {
        timing.end = timing.recvStart = performance.now();
        timing.start = timing.sendEnd = timing.end - latencyMs();
        for (; completed < Math.floor(timing.end - startMs); completed++) recorder.record(timing);
      }, 1);
    },
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
    drained: () => Promise.resolve(),
  };
}

Deno.test("async: a settled throughput with an unsettled latency is stable, with perf_analyzer's warning", async () => {
  for (const async of [false, true]) {
    let windows = 0;
    const warnings: string[] = [];
    // Latency 1 ms and 10 ms in turn: never within 50 %, while the throughput is.
    const result = await measureLevel(latencyLoad(() => windows % 2 === 0 ? 1 : 10), {
      ...OUTAGE_LEVEL,
      // Windows of 300 ms: a 1 ms timer on a loaded machine still gives a steady count.
      measurementIntervalMs: 300,
      stabilityPercentage: 50,
      maxTrials: 4,
      async,
      interrupt: new Interrupt(),
      onWindow: () => windows++,
      onWarning: (message) => warnings.push(message),
    });
    assert.equal(windows, 4);
    assert.equal(result.stable, async);
    assert.deepEqual(
      warnings,
      async ? ["Request latency is not stabilizing. Please try lowering the request rate."] : [],
    );
  }
});

Deno.test("--warmup-grace-period: the warmup's requests still in flight after it are cancelled", async () => {
  let starts = 0;
  let cancelled = 0;
  let release: (() => void) | undefined;
  // The warmup's one request never answers until cancelled; the measured one answers at once.
  const warmupStopped = new Promise<void>((resolve) => release = resolve);
  const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 1 };
  const load: LevelLoad = {
    start({ recorder }) {
      if (++starts === 1) return;
      timing.start = timing.sendEnd = performance.now();
      timing.recvStart = timing.end = timing.start + 1;
      recorder.record(timing);
    },
    stop: () => starts === 1 ? warmupStopped : Promise.resolve(),
    drained: () => starts === 1 ? new Promise<void>(() => {}) : Promise.resolve(),
    cancelInflight: () => {
      cancelled++;
      release!();
    },
  };
  const startMs = performance.now();
  const result = await measureLevel(load, {
    ...OUTAGE_LEVEL,
    interrupt: new Interrupt(),
    requestCount: 1,
    warmupDurationMs: 50,
    warmupGraceMs: 20,
  });
  assert.equal(cancelled, 1);
  assert.equal(starts, 2);
  assert.equal(result.client.requestCount, 1);
  assert.ok(performance.now() - startMs < 5000);
});
