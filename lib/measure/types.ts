/**
 * Measurement data shared by the load generator (producer), the stabilizer
 * and the reports (consumers).
 */
import type { ModelStatistics, RequestTiming } from "../protocol/types.ts";
import type { GpuMetrics } from "./gpu_metrics.ts";
import type { LatencyHistogram } from "./histogram.ts";

/** Per-request values of a window, in completion order. */
export type Samples = Float64Array | readonly number[];

/** Raw data of one measurement window. Times are performance.now() milliseconds. */
export interface WindowData {
  startMs: number;
  endMs: number;
  /** Wall-clock time of the window start, ns since the epoch (exports only). */
  startWallNs: bigint;
  /**
   * Latency of every valid request that completed in this window,
   * microseconds. A Recorder fills it when the window ends (a Float64Array).
   */
  latenciesUs: Samples;
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
  correctedLatenciesUs: Samples;
  /** Open-loop modes: sends dispatched in this window (counted when they leave). */
  sendCount: number;
  /** Open-loop modes: dispatch minus intended time of each send of this window, microseconds. */
  sendLagsUs: Samples;
  /** Open-loop modes: sends that waited for a free in-flight slot (--max-inflight) or sequence. */
  blockedCount: number;
  /** Server statistics delta over the window, one entry per model (composing models too). */
  serverStats?: ModelStatistics[];
  /**
   * The same latencies as `latenciesUs` in an HDR histogram (nanoseconds), for
   * exports and merging; absent in windows not built by a Recorder.
   */
  histogram?: LatencyHistogram;
  /** Token-streaming (LLM) requests: their per-request token figures. */
  tokens?: TokenWindowData;
}

/**
 * The timing of a token-streaming request (--service-kind openai), which the
 * session fills beside RequestTiming's fields: `firstResponse` is the first
 * token's arrival and `responses` counts the chunks that carried output.
 */
export interface TokenTiming extends RequestTiming {
  /** Output tokens: the server's usage count, else the chunks with output. */
  outputTokens: number;
  /** Prompt tokens from the server's usage field; -1 when it sent none. */
  inputTokens: number;
  /** The counts came from the server's usage field (else from counted chunks). */
  usage: boolean;
}

export function isTokenTiming(timing: RequestTiming): timing is TokenTiming {
  return (timing as Partial<TokenTiming>).outputTokens !== undefined;
}

/**
 * Token figures of a window's valid token-streaming requests, one entry per
 * request in completion order (arrays of doubles: 8 bytes per request each).
 */
export interface TokenWindowData {
  /** Time to first token from the send, microseconds. */
  ttftUs: number[];
  /**
   * Mean gap between tokens, (end - first token) / (output tokens - 1); NaN
   * with fewer than two tokens or when they came in one chunk.
   */
  itlUs: number[];
  outputTokens: number[];
  /** -1 where the server reported none. */
  inputTokens: number[];
  /** Output tokens / end-to-end seconds of each request. */
  tokensPerSecond: number[];
  /** Open-loop modes: time to first token from the intended send time, microseconds. */
  correctedTtftUs: number[];
  /** Open-loop modes: output tokens / seconds from the intended send time. */
  correctedTokensPerSecond: number[];
  /** Requests whose counts came from the usage field. */
  usageCount: number;
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
  /** Token-streaming (LLM) figures over the same windows as `client`. */
  llm?: LlmSummary;
}

/** A distribution of per-request values. */
export interface Distribution {
  avg: number;
  std: number;
  min: number;
  max: number;
  /** Percentile -> value; the same percentiles as ClientSummary.percentilesUs. */
  percentiles: Map<number, number>;
}

/**
 * Beyond perf_analyzer: what an LLM benchmark reports (genai-perf's figures)
 * for token-streaming requests. Latencies in microseconds.
 */
export interface LlmSummary {
  requestCount: number;
  /** Valid requests per second. */
  requestThroughput: number;
  timeToFirstTokenUs: Distribution;
  /** Over requests whose tokens came in several chunks; absent when there were none. */
  interTokenLatencyUs?: Distribution;
  endToEndLatencyUs: Distribution;
  outputTokens: Distribution;
  /** Absent when the server reported no prompt tokens. */
  inputTokens?: Distribution;
  /** Output tokens per second of each request. */
  outputTokensPerSecond: Distribution;
  /** All output tokens over the windows' duration. */
  outputTokenThroughput: number;
  /** Where the token counts came from: the usage field, counted chunks, or both. */
  tokenSource: "usage" | "chunks" | "mixed";
  /** Open-loop modes: the same measured from the intended send time. */
  corrected?: {
    timeToFirstTokenUs: Distribution;
    endToEndLatencyUs: Distribution;
    outputTokensPerSecond: Distribution;
  };
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
