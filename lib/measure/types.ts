/**
 * Measurement data shared by the load generator (producer), the stabilizer
 * and the reports (consumers).
 */
import type { ModelStatistics, RequestTiming } from "../protocol/types.ts";
import type { GpuMetrics } from "./gpu_metrics.ts";
import type { LatencyHistogram } from "./histogram.ts";

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
  /**
   * Sum over valid requests of the latency to the first response, microseconds
   * (decoupled models; `latenciesUs` runs to the last). Absent outside a Recorder.
   */
  firstResponseUsSum?: number;
  errorCount: number;
  /** Failed requests grouped by message. */
  errors: Map<string, number>;
  /** Rate modes: sends that left more than 1 ms after their due time. */
  delayedCount: number;
  /** Open-loop modes: latency of each valid request from its intended send time, microseconds. */
  correctedLatenciesUs: number[];
  /** Open-loop modes: sends dispatched in this window (counted when they leave). */
  sendCount: number;
  /** Open-loop modes: dispatch minus intended time of each send of this window, microseconds. */
  sendLagsUs: number[];
  /** Open-loop modes: sends that waited for a free in-flight slot (--max-inflight) or sequence. */
  blockedCount: number;
  /** Server statistics delta over the window, one entry per model (composing models too). */
  serverStats?: ModelStatistics[];
  /**
   * The same latencies as `latenciesUs` in an HDR histogram (nanoseconds), for
   * exports and merging; absent in windows not built by a Recorder.
   */
  histogram?: LatencyHistogram;
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
  /** Average latency to the first response (decoupled models); the other latencies run to the last. */
  avgFirstResponseUs?: number;
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
  /** Open-loop modes: what the send schedule achieved, over the same windows as `client`. */
  openLoop?: OpenLoopSummary;
  /** --collect-metrics: GPU metrics scraped during the windows `client` summarizes. */
  metrics?: GpuMetrics;
}

/**
 * Open-loop figures beyond perf_analyzer's: latency corrected for coordinated
 * omission (measured from the intended send time) and how punctually the
 * client sent. `client` keeps perf_analyzer's latency from the actual send.
 */
export interface OpenLoopSummary {
  /** Latency from the intended send time, microseconds. */
  correctedAvgUs: number;
  correctedStdUs: number;
  /** Same percentiles as ClientSummary.percentilesUs. */
  correctedPercentilesUs: Map<number, number>;
  sendCount: number;
  /** Sends dispatched per second. */
  sendRate: number;
  sendLagP50Us: number;
  sendLagP99Us: number;
  sendLagMaxUs: number;
  blockedCount: number;
  /** --max-send-lag in microseconds: the bound sendLagP99Us was judged by. */
  maxSendLagUs: number;
  /** False when sendLagP99Us exceeds maxSendLagUs: latencies then describe a late client. */
  trustworthy: boolean;
}

/**
 * One completed request as a Recorder hands it to its RequestSink. The
 * recorder refills one object for every request: copy what you keep. The
 * timing object is the load's, one per slot, so it also identifies the slot.
 */
export interface CompletedRequest {
  /** Absent for a failed request whose load did not pass it (or that was never sent). */
  timing: RequestTiming | undefined;
  /** Open-loop loads: when the request was due (performance.now() ms). */
  intendedMs: number | undefined;
  /** The failure message of a failed request. */
  error: string | undefined;
}

/**
 * Receives every completed request, valid or failed, in completion order
 * (the profile export). Called from the request loop: implementations keep
 * references in preallocated storage and do their work elsewhere.
 */
export interface RequestSink {
  add(request: CompletedRequest): void;
}
