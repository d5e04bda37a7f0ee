import assert from "node:assert/strict";
import { Recorder } from "../../measure/recorder.ts";
import type { InferenceClient, InferSession } from "../../protocol/types.ts";
import type { ModelInfo } from "../../types/model.ts";
import type { RequestTiming } from "../../types/timing.ts";
import { type LevelsPlan, planLoad } from "../levels.ts";
import { LOAD_MODES, loadMode } from "./mod.ts";
import { bursts, GAP_MS } from "./testdata/bursts.ts";

const MODEL: ModelInfo = {
  name: "toy",
  version: "1",
  platform: "",
  versions: ["1"],
  inputs: [],
  outputs: [],
  maxBatchSize: 0,
  decoupled: false,
  sequence: false,
  composingModels: [],
  responseCache: false,
};

const PLAN: LevelsPlan = {
  loadMode: "concurrency",
  concurrency: { start: 1, end: 1, step: 1 },
  requestRate: { start: 1, end: 1, step: 1 },
  requestDistribution: "constant",
  burstiness: 1,
  fixedSchedule: false,
  binarySearch: false,
  latencyThresholdMs: 0,
  async: false,
  maxInflight: 100,
  sendBatchMs: 0,
  workers: 1,
  maxSendLagMs: 1,
  sendLagFails: false,
  sequences: {
    count: 4,
    length: 20,
    variationPct: 20,
    idRange: { start: 1, end: 1000 },
    serial: false,
  },
  model: "toy",
  modelVersion: "",
  requestCount: 0,
  stallTimeoutMs: 0,
  warmupRequestCount: 0,
};

/** Answers every request after 2 ms, noting when each was sent. */
function fakeClient(sentMs: number[]): InferenceClient {
  const session: InferSession = {
    infer: async (_request, timing: RequestTiming) => {
      timing.start = timing.sendEnd = performance.now();
      sentMs.push(timing.start);
      await new Promise((r) => setTimeout(r, 2));
      timing.recvStart = timing.end = performance.now();
      timing.responses = 1;
      return undefined;
    },
    close: () => {},
  };
  return {
    protocol: "http",
    serverInfo: () => Promise.resolve({ name: "fake", version: "", extensions: [] }),
    modelInfo: () => Promise.resolve(MODEL),
    prepare: () => ({ byteLength: 0 }),
    openSession: () => Promise.resolve(session),
    close: () => Promise.resolve(),
  };
}

Deno.test("the registry holds perf_analyzer's load modes and refuses unknown names", () => {
  assert.deepEqual([...LOAD_MODES.keys()], ["concurrency", "request_rate", "custom_intervals"]);
  for (const [name, mode] of LOAD_MODES) assert.equal(mode.reportAs, name);
  assert.throws(() => loadMode("bursts"), /Unknown load mode "bursts"/);
});

Deno.test("a new load mode is one file and one registry entry", async () => {
  LOAD_MODES.set("bursts", bursts);
  const sentMs: number[] = [];
  const client = fakeClient(sentMs);
  try {
    const loads = await planLoad(client, {
      plan: { ...PLAN, loadMode: "bursts", concurrency: { start: 3, end: 3, step: 1 } },
      model: MODEL,
      streams: [],
      prepared: [client.prepare({ inputs: [], outputs: [] }, { model: "toy", version: "" })],
    });
    assert.equal(loads.mode, "request_rate");
    assert.deepEqual(loads.range, { start: 3, end: 3, step: 1 });
    const level = loads.level(3);
    await level.prepare?.();
    const recorder = new Recorder();
    const startMs = performance.now();
    level.start({ recorder, limit: 9 });
    await level.drained();
    await level.stop();
    loads.close();
    const window = recorder.rotate();
    assert.equal(window.sendCount, 9);
    assert.equal(window.latenciesUs.length, 9);
    // Three bursts of three: together within a burst, and a burst never before its time.
    const starts = [0, 3, 6].map((i) => {
      const burst = sentMs.slice(i, i + 3);
      assert.ok(burst[2] - burst[0] < GAP_MS, `a burst spread over ${burst[2] - burst[0]} ms`);
      return burst[0];
    });
    // 1 ms of slack: the pacer's timer and performance.now() round differently.
    assert.ok(starts[1] - startMs >= GAP_MS - 1, `${starts[1] - startMs} ms`);
    assert.ok(starts[2] - startMs >= 2 * GAP_MS - 1, `${starts[2] - startMs} ms`);
  } finally {
    LOAD_MODES.delete("bursts");
  }
});

Deno.test("--fixed-schedule with a warmup: the first steps warm up, the others are measured from their own start", async () => {
  const sentMs: number[] = [];
  const client = fakeClient(sentMs);
  const loads = await planLoad(client, {
    plan: { ...PLAN, loadMode: "custom_intervals", fixedSchedule: true, warmupRequestCount: 2 },
    model: MODEL,
    streams: [],
    prepared: [client.prepare({ inputs: [], outputs: [] }, { model: "toy", version: "" })],
    timestampsMs: [0, 10, 30, 60, 70],
  });
  assert.equal(loads.requestCount, 3, "as perf_analyzer: the steps minus the warmup");
  const level = loads.level(loads.range.start);
  await level.prepare?.();
  const recorder = new Recorder();
  const starts: number[] = [];
  for (const limit of [2, 3]) {
    starts.push(performance.now());
    level.start({ recorder, limit });
    await level.drained();
    await level.stop();
  }
  loads.close();
  assert.equal(sentMs.length, 5);
  // Each send at its step's timestamp from the start of its part (1 ms of timer slack).
  [0, 10].forEach((t, i) => assert.ok(sentMs[i] - starts[0] >= t - 1, `warmup ${i}`));
  [30, 60, 70].forEach((t, i) => assert.ok(sentMs[2 + i] - starts[1] >= t - 1, `step ${2 + i}`));
  await assert.rejects(
    () =>
      planLoad(client, {
        plan: { ...PLAN, loadMode: "custom_intervals", fixedSchedule: true, warmupRequestCount: 2 },
        model: MODEL,
        streams: [],
        prepared: [],
        timestampsMs: [0, 10],
      }),
    /--warmup-request-count 2 must be less than the 2 steps of the --fixed-schedule input data/,
  );
});
