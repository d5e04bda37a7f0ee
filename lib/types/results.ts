/**
 * Measurement data shared by the load generator (producer), the stabilizer
 * and the reports (consumers).
 */
import type { ModelStatistics } from "./model.ts";

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
  /**
   * Requests the client cancelled on purpose (--request-cancellation-rate,
   * or in flight when --benchmark-grace-period ran out): neither valid nor
   * failed. Absent: none.
   */
  cancelledCount?: number;
  /** Server statistics delta over the window, one entry per model (composing models too). */
  serverStats?: ModelStatistics[];
  /**
   * The same latencies as `latenciesUs` in an HDR histogram (nanoseconds), for
   * exports and merging; absent in windows not built by a Recorder.
   */
  histogram?: Histogram;
  /** Token-streaming (LLM) requests: their per-request token figures. */
  tokens?: TokenWindowData;
  /**
   * A reported window of a token-streaming level: its own LLM summary, made
   * when the level is summarized (before `tokens` is released), so that the
   * summary JSON gives each window's figures (what `inferperf compare` tests).
   */
  llm?: LlmSummary;
}

/**
 * What a window keeps of its valid token-streaming requests: one entry per
 * request in completion order (raw times; lib/measure/tokens.ts derives the
 * metrics once the level ends, when the tokenizer may count texts), plus
 * every gap between consecutive chunks.
 */
export interface TokenWindowData {
  /** Send to the first chunk with output, microseconds (NaN: none). */
  ttftUs: number[];
  /** First to second chunk with output, microseconds (NaN: none). */
  ttstUs: number[];
  /** Send to the last chunk with output (a whole answer: to its end), microseconds. */
  latencyUs: number[];
  /** Last chunk minus first chunk, microseconds (NaN when not streamed). */
  streamUs: number[];
  /** Chunks with output. */
  chunks: number[];
  /** The usage field's output tokens, else -1. */
  usageTokens: number[];
  /**
   * The output text when the tokenizer is to count it (no usage; with usage,
   * to compare with it, among the window's first MAX_COMPARED_TEXTS), else undefined.
   */
  texts: Array<string | undefined>;
  /** The prompt's own tokens (the tokenizer's count); -1 where unknown. */
  inputTokens: number[];
  /** The server's usage count of prompt tokens (chat template included); -1 where none. */
  serverInputTokens: number[];
  /** The usage field's reasoning tokens, else -1. */
  reasoningUsage: number[];
  /** The usage field's cached prompt tokens, else -1. */
  cachedTokens: number[];
  /** The output length asked for (max_tokens), else -1. */
  requestedTokens: number[];
  /** Chunks that carried reasoning. */
  reasoningChunks: number[];
  /** The reasoning text when the tokenizer is to count it (as `texts`), else undefined. */
  reasoningTexts: Array<string | undefined>;
  /** Open-loop modes: send minus intended send time, microseconds; NaN in closed loops. */
  sendLagUs: number[];
  /** When each request was sent: ms since the epoch (performance.timeOrigin + its start). */
  sendEpochMs: number[];
  /** Several models in one run (-m A,B): the model each request named. */
  models?: string[];
  /** Every gap between consecutive chunks with output, microseconds. */
  gapsUs: number[];
  /** How many of `gapsUs` each request added, in order. */
  gapsPerRequest: number[];
  /** Sum and count of gaps by position (gap i: between chunk i and i + 1), for the ITL chart. */
  gapSumUs: number[];
  gapCount: number[];
}

export type LoadMode = "concurrency" | "request_rate" | "custom_intervals";

export interface ClientSummary {
  /** Valid (successful) requests. */
  requestCount: number;
  responseCount: number;
  errorCount: number;
  /** [message, count], most frequent first. */
  errors: Array<[string, number]>;
  /** Requests cancelled on purpose (WindowData.cancelledCount); absent: none. */
  cancelledCount?: number;
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
  /**
   * A per-request SLO on latency (--slo request_latency<=N, levels without
   * token streaming): the valid requests within it. Absent without one.
   */
  goodCount?: number;
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
  /**
   * --collect-metrics whose endpoint could not be read during the level: why
   * (the scrape's error, naming the URL); `metrics` is then absent.
   */
  metricsUnavailable?: string;
  /** Token-streaming (LLM) figures over the same windows as `client`. */
  llm?: LlmSummary;
  /** Model config search, local mode: the server process's resident memory after the level, MB. */
  serverRamMb?: number;
  /** Token-streaming runs against a server with LLM Prometheus metrics: what it counted. */
  llmServer?: LlmServerMetrics;
  /**
   * --sweep-size (GuideLLM's sweep profile): the strategy that measured the
   * level, as GuideLLM names its benchmarks: "synchronous",
   * "throughput@64", "constant@45.2", "poisson@45.2".
   */
  strategy?: string;
  /** Open loop, --sweep-size: the level's windows showed over-saturation (lib/measure/saturation.ts). */
  overSaturation?: OverSaturation;
  /** --warmup-request-count: the warmup's failed requests, when some failed (not in `client`). */
  warmupFailures?: Pick<ClientSummary, "errorCount" | "errors">;
}

/**
 * An LLM server's own figures over a level (its Prometheus endpoint: llama.cpp,
 * vLLM, SGLang); absent where it has no such family.
 */
export interface LlmServerMetrics {
  /** Scrapes the figures come from (the level's start and end included). */
  scrapes: number;
  /** Counter increases from the level's start to its end. */
  generatedTokens?: number;
  promptTokens?: number;
  cachedPromptTokens?: number;
  /** Gauges sampled while the level ran. */
  running?: { avg: number; max: number };
  waiting?: { avg: number; max: number };
  /** 0..1 */
  kvCacheUsage?: { avg: number; max: number };
}

/** An open-loop level whose requests in flight and latency grew steadily over its windows. */
export interface OverSaturation {
  /** Requests in flight gained per second. */
  inflightPerS: number;
  /** Average latency gained per second of the level, milliseconds. */
  latencyMsPerS: number;
  windows: number;
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

/** Where token counts came from: requests per source. */
export interface TokenSources {
  usage: number;
  tokenizer: number;
  /** Output: counted chunks; input: unknown. */
  none: number;
}

/**
 * Beyond perf_analyzer: what an LLM benchmark reports for token-streaming
 * requests, the metrics named as genai-perf's and AIPerf's defined as theirs
 * (lib/measure/tokens.ts). Latencies in microseconds.
 */
export interface LlmSummary {
  requestCount: number;
  /** Valid requests per second of the windows. */
  requestThroughput: number;
  /** Send to the last output. */
  requestLatencyUs: Distribution;
  /** Streamed answers only (absent without): send to the first output. */
  timeToFirstTokenUs?: Distribution;
  /** Answers with at least two chunks: first output to second. */
  timeToSecondTokenUs?: Distribution;
  /** Per request: (request latency - TTFT) / (output tokens - 1). */
  interTokenLatencyUs?: Distribution;
  /** AIPerf's inter-chunk latency: every gap between consecutive chunks of every request. */
  interChunkLatencyUs?: Distribution;
  /** Mean gap by position in the answer (index 0: first to second chunk), at most 1,000. */
  gapByPositionUs?: number[];
  /** Output tokens, reasoning included (AIPerf's OSL). */
  outputSequenceLength: Distribution;
  /** The prompt's own tokens; absent when no prompt length is known. */
  inputSequenceLength?: Distribution;
  /** The server's usage count of prompt tokens (chat template included), where it sent one. */
  serverInputSequenceLength?: Distribution;
  /** All output tokens over the windows' duration. */
  outputTokenThroughput: number;
  /** All output tokens (AIPerf's total_osl). */
  totalOutputTokens: number;
  /** 1 / inter-token latency of each request (tokens/s per user). */
  outputTokenThroughputPerUser?: Distribution;
  /** AIPerf's prefill throughput: input tokens / TTFT of each request (tokens/s). */
  prefillThroughput?: Distribution;
  /** Reasoning tokens of the answers that carried reasoning (`reasoning_content`). */
  reasoningTokenCount?: Distribution;
  /** The usage field's cached prompt tokens (prompt_tokens_details.cached_tokens), where sent. */
  cachedPromptTokens?: Distribution;
  /**
   * AIPerf's usage_prompt_tokens_diff_pct and usage_completion_tokens_diff_pct:
   * |server - client| / client in percent, per request with both counts.
   */
  usagePromptDiffPct?: Distribution;
  usageCompletionDiffPct?: Distribution;
  /** AIPerf's usage_reasoning_tokens_diff_pct: the reasoning text's count against usage's. */
  usageReasoningDiffPct?: Distribution;
  /** AIPerf's osl_mismatch_diff_pct: (output - asked) / asked in percent, per request with max_tokens. */
  oslMismatchDiffPct?: Distribution;
  /** The client's counts against the server's usage, where both exist. */
  usageCheck?: UsageCheck;
  /**
   * Answers that asked for max_tokens, and AIPerf's osl_mismatch_count: those
   * whose length missed it by more than min(5 %, 50 tokens).
   */
  oslMismatch?: { asked: number; count: number };
  outputTokenSources: TokenSources;
  inputTokenSources: TokenSources;
  /** The tokenizer that counted where the server did not, if any. */
  tokenizer?: string;
  /** --goodput: requests that met every objective, and their rate. */
  goodput?: { objectives: GoodputObjective[]; goodCount: number; requestGoodput: number };
  /** Open-loop modes: the latencies measured from the intended send time. */
  corrected?: {
    requestLatencyUs: Distribution;
    timeToFirstTokenUs?: Distribution;
  };
  /** (input tokens, time to first token in us) of up to 2,000 requests, for the scatter chart. */
  ttftByInput?: Array<[number, number]>;
  /**
   * --slice-duration: the same metrics over each slice of the level, its
   * requests by send time; seconds from the level's start. Empty slices left out.
   */
  slices?: Array<{ startS: number; endS: number; llm: LlmSummary }>;
  /**
   * Multi-turn sessions: the same metrics over the requests of each turn
   * index (0: every session's first turn), rates over each group's span.
   */
  turns?: Array<{ turnIndex: number; llm: LlmSummary }>;
  /** Several models in one run (-m A,B): the same metrics over each model's requests. */
  models?: Array<{ model: string; llm: LlmSummary }>;
  /** Multi-turn sessions: the metrics of each session (genai-perf's "sessions"). */
  sessions?: Array<{ sessionId: string; llm: LlmSummary }>;
}

/** Requests whose client-side count was compared with the server's, and how they differed. */
export interface CountComparison {
  compared: number;
  /** Requests whose counts differ at all. */
  mismatched: number;
  /** Mean of server - client, tokens (positive: the server counts more). */
  avgDiff: number;
}

export interface UsageCheck {
  /** Input sequence length against usage's prompt tokens. */
  prompt?: CountComparison;
  /** The tokenizer's count of the answer text against usage's completion tokens. */
  completion?: CountComparison;
  /** The tokenizer's count of the reasoning text against usage's reasoning tokens. */
  reasoning?: CountComparison;
  /** AIPerf's usage_discrepancy_count: requests with either difference beyond the threshold. */
  discrepancyCount: number;
  /** That threshold, percent (AIPerf's USAGE_PCT_DIFF_THRESHOLD, 10). */
  thresholdPct: number;
}

/** A --goodput objective: a request is good when `metric` is within `value`. */
export interface GoodputObjective {
  metric:
    | "time_to_first_token"
    | "time_to_second_token"
    | "inter_token_latency"
    | "request_latency"
    | "output_token_throughput_per_user";
  /** Milliseconds (an upper bound), or tokens/s for the throughput (a lower bound). */
  value: number;
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
  /**
   * True when sendLagP99Us exceeds maxSendLagUs: the client did not keep the
   * schedule, so latencies from the send describe a late client.
   */
  behindSchedule: boolean;
}

export interface GpuMetrics {
  /** Utilization as a fraction (0..1). */
  utilization: Map<string, number>;
  powerWatts: Map<string, number>;
  memoryUsedBytes: Map<string, number>;
  memoryTotalBytes: Map<string, number>;
}

/** What reports read from a histogram, in nanoseconds. */
export interface HistogramSummary {
  count: number;
  minNs: number;
  maxNs: number;
  /** From bucket midpoints, like the standard deviation. */
  meanNs: number;
  stdDevNs: number;
  /** In the order asked for. */
  percentilesNs: number[];
}

/**
 * A latency histogram as windows carry it (lib/measure/histogram.ts makes
 * them): values recorded in milliseconds, read in nanoseconds.
 */
export interface Histogram {
  readonly count: number;
  /** Records one latency given in milliseconds (a performance.now() difference). */
  recordMs(ms: number): void;
  /** Ends recording; the histogram keeps a compact encoding. */
  freeze(): void;
  percentilesNs(ps: readonly number[]): number[];
  summary(ps: readonly number[]): HistogramSummary;
  /** HdrHistogram's V2 compressed encoding, base64 ("HISTF..."). */
  encode(): string;
}

/** A level of a capacity search as reports show it. */
export interface CapacityLevel {
  value: number;
  /** Its last measurement's index among the run's reported levels. */
  index: number;
  /** The SLOs' verdicts there, e.g. "request_latency:p99 31.2 <= 35 msec". */
  verdicts: string[];
}

/**
 * --search-recipe: the highest concurrency or request rate at which every
 * SLO held (lib/load/capacity.ts), with the levels on either side of it.
 */
export interface CapacityReport {
  recipe: string;
  mode: "concurrency" | "request_rate";
  /** Absent: the SLOs are broken at the lowest level. */
  value?: number;
  /** The SLOs, as --slo takes them (with the attainment of per-request ones). */
  slo: string;
  passing?: CapacityLevel;
  failing?: CapacityLevel;
  /** Measurements taken (re-measurements included; resumed ones too). */
  points: number;
  /** Why the search stopped. */
  stopped: string;
  /** Re-measurements that changed a verdict, and what kept the answer monotone. */
  notes: string[];
}
