/**
 * Measurement data shared by the load generator (producer), the stabilizer
 * and the reports (consumers).
 */
import type { ModelStatistics } from "../protocol/types.ts";

/** Raw data of one measurement window. Times are performance.now() milliseconds. */
export interface WindowData {
  startMs: number;
  endMs: number;
  /** Wall-clock time of the window start, ns since the epoch (exports only). */
  startWallNs: bigint;
  /** Latency of every valid request that completed in this window, microseconds. */
  latenciesUs: number[];
  /** Sums over valid requests, microseconds (send = write, recv = read, wait = in between). */
  sendUsSum: number;
  recvUsSum: number;
  waitUsSum: number;
  /** Responses received by valid requests (decoupled models send several). */
  responseCount: number;
  errorCount: number;
  /** Failed requests grouped by message. */
  errors: Map<string, number>;
  /** Rate modes: sends that left more than 1 ms after their due time. */
  delayedCount: number;
  /** Server statistics delta over the window, one entry per model (composing models too). */
  serverStats?: ModelStatistics[];
}

export type LoadMode = "concurrency" | "request_rate" | "custom_intervals";

/** How each load level is measured (the Measurement options of the CLI). */
export interface MeasurementOptions {
  batchSize: number;
  measurementMode: "time_windows" | "count_windows";
  measurementIntervalMs: number;
  measurementRequestCount: number;
  stabilityPercentage: number;
  maxTrials: number;
  /** Stabilize on and report this percentile instead of the average. */
  percentile?: number;
  /** One window of exactly this many requests, no stabilization (0 = off). */
  requestCount: number;
  warmupRequestCount: number;
}

export interface ClientSummary {
  /** Valid (successful) requests. */
  requestCount: number;
  responseCount: number;
  errorCount: number;
  /** [message, count], most frequent first. */
  errors: Array<[string, number]>;
  durationMs: number;
  /** Inferences per second: valid requests x batch size / seconds. */
  throughput: number;
  /** Responses per second (decoupled models). */
  responseThroughput: number;
  avgLatencyUs: number;
  stdLatencyUs: number;
  /** Percentile (1..99) -> latency in microseconds. Always has 50, 90, 95, 99. */
  percentilesUs: Map<number, number>;
  avgSendUs: number;
  avgRecvUs: number;
  avgWaitUs: number;
  delayedCount: number;
}

export interface ServerSummary {
  model: string;
  version: string;
  inferenceCount: number;
  executionCount: number;
  successCount: number;
  /** Averages per successful request, microseconds. */
  avgRequestUs: number;
  overheadUs: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
  cacheHitCount: number;
  cacheHitUs: number;
  cacheMissCount: number;
  cacheMissUs: number;
}

export interface LevelResult {
  mode: LoadMode;
  /** Concurrency or request rate of this level. */
  value: number;
  client: ClientSummary;
  /** The profiled model first, then composing models; absent without the statistics extension. */
  server?: ServerSummary[];
  /** False when the level did not stabilize within --max-trials (reported anyway). */
  stable: boolean;
  /** Every window measured for this level, in order (stable or not). */
  windows: WindowData[];
}
