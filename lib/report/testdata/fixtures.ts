/**
 * Level results that reproduce perf_analyzer's documented examples (seed 004:
 * the --percentile=95 run, the --concurrency-range 1:4 run and its CSV).
 */
import assert from "node:assert/strict";
import type { ModelStatistics } from "../../types/model.ts";
import { emptyWindow } from "../../measure/recorder.ts";
import { statisticsDelta, summarizeClient, summarizeServer } from "../../measure/stats.ts";
import type {
  ClientSummary,
  LevelResult,
  LoadMode,
  ServerSummary,
  WindowData,
} from "../../types/results.ts";

export function client(overrides: Partial<ClientSummary> = {}): ClientSummary {
  return {
    requestCount: 100,
    responseCount: 100,
    errorCount: 0,
    errors: [],
    durationMs: 5000,
    throughput: 20,
    responseThroughput: 20,
    avgLatencyUs: 1000,
    stdLatencyUs: 100,
    percentilesUs: new Map([[50, 1000], [90, 1100], [95, 1200], [99, 1300]]),
    avgSendUs: 10,
    avgRecvUs: 5,
    avgWaitUs: 900,
    delayedCount: 0,
    ...overrides,
  };
}

export function server(overrides: Partial<ServerSummary> = {}): ServerSummary {
  return {
    model: "model",
    version: "1",
    inferenceCount: 100,
    executionCount: 100,
    successCount: 100,
    avgRequestUs: 900,
    overheadUs: 50,
    queueUs: 50,
    computeInputUs: 100,
    computeInferUs: 600,
    computeOutputUs: 100,
    cacheHitCount: 0,
    cacheHitUs: 0,
    cacheMissCount: 0,
    cacheMissUs: 0,
    ...overrides,
  };
}

export function level(
  mode: LoadMode,
  value: number,
  summary: ClientSummary,
  servers?: ServerSummary[],
): LevelResult {
  return {
    mode,
    value,
    client: summary,
    ...(servers ? { server: servers } : {}),
    stable: true,
    windows: [],
  };
}

const percentiles = (p50: number, p90: number, p95: number, p99: number) =>
  new Map([[50, p50], [90, p90], [95, p95], [99, p99]]);

/** Ascending latencies through fixed points (index -> microseconds), linear in between. */
function latencies(n: number, anchors: Array<[number, number]>): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const k = anchors.findIndex(([index]) => index >= i);
    const [i1, v1] = anchors[k];
    const [i0, v0] = anchors[Math.max(0, k - 1)];
    out.push(i1 === i0 ? v1 : v0 + ((v1 - v0) * (i - i0)) / (i1 - i0));
  }
  return out;
}

/** A cumulative statistics snapshot of a model that served `n` requests. */
function snapshot(n: number): ModelStatistics {
  const d = (us: number) => ({ count: n, ns: Math.round(us * 1000 * n) });
  return {
    name: "inception_graphdef",
    version: "1",
    inferenceCount: n,
    executionCount: n,
    success: d(12005.4),
    fail: { count: 0, ns: 0 },
    queue: d(42.3),
    computeInput: d(164.2),
    computeInfer: d(11748.3),
    computeOutput: d(15.4),
    cacheHit: { count: 0, ns: 0 },
    cacheMiss: { count: 0, ns: 0 },
  };
}

/**
 * `perf_analyzer -m inception_graphdef --percentile=95`, built from raw
 * windows through the measurement math: 348 requests in 3 windows of 5 s in
 * total, and server snapshots 428 requests apart.
 */
export function percentile95Example(): LevelResult {
  // n = 348: p50, p90, p95, p99 sit at sorted indices 174, 312, 330, 344.
  const sorted = latencies(348, [
    [0, 9000],
    [174, 13936.4],
    [312, 18682.2],
    [330, 19673.7],
    [344, 21859.1],
    [347, 23000],
  ]);
  const durations = [1666.5, 1667, 1666.5];
  const snapshots = [1000, 1143, 1286, 1428].map(snapshot);
  let startMs = 0;
  const windows: WindowData[] = durations.map((duration, w) => {
    // Every third latency, newest first: the summary must sort.
    const mine = sorted.filter((_, i) => i % 3 === w).reverse();
    const window = emptyWindow(startMs, {
      endMs: startMs + duration,
      latenciesUs: mine,
      sendUsSum: 120.5 * mine.length,
      recvUsSum: 80.2 * mine.length,
      waitUsSum: 13816.6 * mine.length,
      responseCount: mine.length,
      serverStats: statisticsDelta([snapshots[w]], [snapshots[w + 1]]),
    });
    startMs += duration;
    return window;
  });
  return {
    mode: "concurrency",
    value: 1,
    client: summarizeClient(windows, { batchSize: 1, percentiles: [95] }),
    server: summarizeServer(windows.map((w) => w.serverStats!), { model: "inception_graphdef" }),
    stable: true,
    windows,
  };
}

/**
 * `perf_analyzer -m inception_graphdef --concurrency-range 1:4`. Level 4 and
 * the closing table are the documented ones; the document elides most of
 * levels 1 to 3, filled in here with figures of the same run.
 */
export function concurrencyExample(): LevelResult[] {
  const model = { model: "inception_graphdef", version: "1" };
  return [
    level(
      "concurrency",
      1,
      client({
        requestCount: 339,
        throughput: 67.8,
        avgLatencyUs: 14710.2,
        stdLatencyUs: 2539.9,
        percentilesUs: percentiles(13665.1, 18795.4, 19753.8, 21018.2),
        avgSendUs: 130.4,
        avgRecvUs: 70.3,
        avgWaitUs: 13812.1,
      }),
      [server({
        ...model,
        inferenceCount: 407,
        executionCount: 407,
        successCount: 407,
        avgRequestUs: 12070.5,
        overheadUs: 37,
        queueUs: 64.5,
        computeInputUs: 206.2,
        computeInferUs: 11743.7,
        computeOutputUs: 19.1,
      })],
    ),
    level(
      "concurrency",
      2,
      client({
        requestCount: 449,
        throughput: 89.8,
        avgLatencyUs: 22280.6,
        stdLatencyUs: 4412.3,
        percentilesUs: percentiles(21874.9, 28557.1, 29768.4, 34766.6),
        avgSendUs: 160.2,
        avgRecvUs: 75.8,
        avgWaitUs: 22090.3,
      }),
      [server({
        ...model,
        inferenceCount: 539,
        executionCount: 539,
        successCount: 539,
        avgRequestUs: 20743.2,
        overheadUs: 38,
        queueUs: 9151.6,
        computeInputUs: 190.3,
        computeInferUs: 11346.8,
        computeOutputUs: 17.2,
      })],
    ),
    level(
      "concurrency",
      3,
      client({
        requestCount: 402,
        throughput: 80.4,
        avgLatencyUs: 37283.5,
        stdLatencyUs: 5830.1,
        percentilesUs: percentiles(35398.3, 43984.2, 47085.7, 51701.1),
        avgSendUs: 175.3,
        avgRecvUs: 62.9,
        avgWaitUs: 37101.2,
      }),
      [server({
        ...model,
        inferenceCount: 482,
        executionCount: 482,
        successCount: 482,
        avgRequestUs: 33680.9,
        overheadUs: 38,
        queueUs: 21673.4,
        computeInputUs: 209.5,
        computeInferUs: 11742.2,
        computeOutputUs: 17.6,
      })],
    ),
    level(
      "concurrency",
      4,
      client({
        requestCount: 415,
        throughput: 83,
        avgLatencyUs: 48064.7,
        stdLatencyUs: 6412.4,
        percentilesUs: percentiles(47975.2, 56670.8, 59118.3, 63609.9),
        avgSendUs: 190.6,
        avgRecvUs: 74.1,
        avgWaitUs: 47901.5,
      }),
      [server({
        ...model,
        inferenceCount: 498,
        executionCount: 498,
        successCount: 498,
        avgRequestUs: 45602.8,
        overheadUs: 39,
        queueUs: 33577.6,
        computeInputUs: 217.3,
        computeInferUs: 11753.2,
        computeOutputUs: 16.4,
      })],
    ),
  ];
}

/**
 * The documented `-f perf.csv` rows, in measurement order (1, 2, 3, 4). The
 * CSV lists them by throughput: 1, 3, 4, 2 (3 is a hair below 4, both
 * printing as 84.2).
 */
export function csvExample(): LevelResult[] {
  const row = (
    value: number,
    throughput: number,
    c: { sendUs: number; recvUs: number; latencyUs: number; p: [number, number, number, number] },
    s: [number, number, number, number],
  ) =>
    level(
      "concurrency",
      value,
      client({
        throughput,
        avgSendUs: c.sendUs,
        avgRecvUs: c.recvUs,
        avgLatencyUs: c.latencyUs,
        avgWaitUs: c.latencyUs - c.sendUs - c.recvUs,
        percentilesUs: percentiles(...c.p),
      }),
      [server({
        queueUs: s[0],
        computeInputUs: s[1],
        computeInferUs: s[2],
        computeOutputUs: s[3],
      })],
    );
  // Latency = send + recv + server (queue + compute) + the network share in the CSV.
  return [
    row(1, 69.2, {
      sendUs: 225.4,
      recvUs: 0.3,
      latencyUs: 14445.6,
      p: [13891.2, 18795.6, 19753.1, 21018.9],
    }, [64.5, 206.2, 11781.7, 19.1]),
    row(2, 87.2, {
      sendUs: 235.1,
      recvUs: 0.4,
      latencyUs: 22914.7,
      p: [21874.4, 28557.3, 29768.5, 34766.2],
    }, [9151.6, 190.3, 11346.8, 17.2]),
    row(3, 84.19999, {
      sendUs: 237.3,
      recvUs: 0.2,
      latencyUs: 35648.7,
      p: [35398.5, 43984.1, 47085.4, 51701.8],
    }, [21673.4, 209.5, 11742.2, 17.6]),
    row(4, 84.2, {
      sendUs: 279.6,
      recvUs: 1.4,
      latencyUs: 47538.1,
      p: [47045.7, 56545.2, 59225.6, 64886.3],
    }, [33669.3, 233.8, 11731.1, 18.7]),
  ];
}

/**
 * Compares `actual` with a golden file in this folder; UPDATE_GOLDEN=1
 * rewrites the file instead (review the diff before keeping it).
 */
export async function assertGolden(name: string, actual: string): Promise<void> {
  const url = new URL(name, import.meta.url);
  if (Deno.env.get("UPDATE_GOLDEN") === "1") await Deno.writeTextFile(url, actual);
  assert.equal(actual, await Deno.readTextFile(url));
}

/** perf_analyzer's documents drop trailing spaces ("Client: " prints as "Client:"). */
export const trimLineEnds = (text: string) => text.replace(/ +$/gm, "");
