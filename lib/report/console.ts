/**
 * The console report, line for line as perf_analyzer prints it (including the
 * trailing space after "Client:" and "Server:"). Every function returns text
 * ending in a newline; only main.ts prints.
 */
import type { GpuMetrics } from "../types/results.ts";
import type {
  ClientSummary,
  Distribution,
  LevelResult,
  LlmServerMetrics,
  LlmSummary,
  LoadMode,
  OpenLoopSummary,
  ServerSummary,
} from "../types/results.ts";
import { llmSystemMetrics, metricTitle, tokenCountSources } from "./llm_table.ts";
import { LLM_METRICS, statistic } from "../measure/metrics.ts";
import { formatGeneral, printableLine, wholeUs } from "./format.ts";
import { errorCauses } from "../measure/error_causes.ts";

/** The trace settings perf_analyzer's options set, shown first and in this order. */
const TRACE_ORDER = ["trace_level", "trace_rate", "trace_count", "log_frequency"];

/** The server's trace settings on one line: `Trace settings: trace_level=TIMESTAMPS ...`. */
export function formatTraceSettings(settings: Readonly<Record<string, readonly string[]>>): string {
  const names = Object.keys(settings);
  const ordered = [
    ...TRACE_ORDER.filter((name) => names.includes(name)),
    ...names.filter((name) => !TRACE_ORDER.includes(name)).sort(),
  ];
  const items = ordered.map((name) => `${name}=${settings[name].join(",") || '""'}`);
  return `Trace settings: ${items.join(" ")}\n`;
}

/** What the "*** Measurement Settings ***" block describes. */
export interface Settings {
  batchSize: number;
  /** -b was given: services other than Triton show the batch size only then. */
  batchSizeGiven?: boolean;
  /** --service-kind: triton, tfserving, torchserve, openai, triton_c_api. */
  serviceKind: string;
  mode: LoadMode;
  /** The concurrency or request-rate range; end 0 sweeps until the latency limit. */
  range?: { start: number; end: number };
  latencyThresholdMs: number;
  measurementMode: "time_windows" | "count_windows";
  measurementIntervalMs: number;
  measurementRequestCount: number;
  percentile?: number;
  async: boolean;
  decoupled?: boolean;
  requestDistribution?: "constant" | "poisson" | "gamma";
  /** --burstiness: the gamma gaps' shape. */
  burstiness?: number;
  /** --*-ramp-duration: each level ramps up to its value. */
  ramp?: { durationMs: number; strategy: string; start: number };
  /** AIPerf's --concurrency-ramp-duration with --request-rate R --concurrency C: the cap ramps. */
  capRampMs?: number;
  concurrencyCap?: number;
  /** --*-stages: one level whose load goes from target to target. */
  stages?: readonly { durationMs: number; target: number }[];
  binarySearch?: boolean;
  warmupRequestCount?: number;
  /** --warmup-duration, milliseconds. */
  warmupDurationMs?: number;
  /** --request-count: one window of exactly this many requests, no stabilization. */
  requestCount?: number;
  /** --benchmark-duration: one window of this many milliseconds of sends, no stabilization. */
  benchmarkDurationMs?: number;
  /** --session-concurrency: every session once, measured whole (no request count, no stabilization). */
  sessionConcurrency?: number;
}

const SERVICE_KINDS: Record<string, string> = {
  triton: "TRITON",
  tfserving: "TENSORFLOW_SERVING",
  torchserve: "TORCHSERVE",
  triton_c_api: "TRITON_C_API",
  openai: "OPENAI",
};

const lines = (list: readonly string[]) => list.map((l) => `${l}\n`).join("");
const plural = (n: number, word: string) => `${n} ${word}${n > 1 ? "s" : ""}`;

const seconds = (ms: number) => `${formatGeneral(ms / 1000)} s`;

/** The load shape of the settings block, if any. */
function shapeLine(settings: Settings): string | undefined {
  const what = settings.mode === "concurrency" ? "concurrency" : "request rate";
  const { ramp, stages } = settings;
  if (ramp) {
    return `Ramping the ${what} ${
      ramp.strategy === "exponential" ? "exponentially" : "linearly"
    } ` +
      `from ${formatGeneral(ramp.start)} to each level over ${seconds(ramp.durationMs)}`;
  }
  if (!stages) return undefined;
  const list = stages.map((s) => `to ${formatGeneral(s.target)} over ${seconds(s.durationMs)}`);
  return `Stages of the ${what}: ${list.join(", then ")}`;
}

export function formatSettings(settings: Settings): string {
  const out = ["*** Measurement Settings ***"];
  const kind = settings.serviceKind;
  if (kind === "triton" || kind === "triton_c_api" || settings.batchSizeGiven) {
    out.push(`  Batch size: ${settings.batchSize}`);
  }
  out.push(`  Service Kind: ${SERVICE_KINDS[kind] ?? kind.toUpperCase()}`);
  if (settings.warmupRequestCount) {
    out.push(`  Sending ${plural(settings.warmupRequestCount, "warmup request")}`);
  }
  if (settings.warmupDurationMs) {
    out.push(`  Warming up each level for ${seconds(settings.warmupDurationMs)}`);
  }
  if (settings.sessionConcurrency) {
    out.push(`  Running ${plural(settings.sessionConcurrency, "session")} at a time`);
  } else if (settings.requestCount) {
    out.push(`  Sending ${plural(settings.requestCount, "benchmark request")}`);
  } else if (settings.benchmarkDurationMs || settings.stages) {
    // Stages last their whole duration, measured as --benchmark-duration measures.
    const ms = settings.benchmarkDurationMs ||
      settings.stages!.reduce((sum, s) => sum + s.durationMs, 0);
    out.push(`  Measuring one window of ${seconds(ms)} of sends, without stabilization`);
  } else {
    out.push(`  Using "${settings.measurementMode}" mode for stabilization`);
    // perf_analyzer stabilizes async runs on throughput (latency may lag behind the sends).
    const metric = settings.async ? "throughput" : "latency and throughput";
    out.push(
      settings.percentile === undefined
        ? `  Stabilizing using average ${metric}`
        : `  Stabilizing using p${settings.percentile} ${metric}`,
    );
    out.push(
      settings.measurementMode === "time_windows"
        ? `  Measurement window: ${settings.measurementIntervalMs} msec`
        : `  Minimum number of samples in each window: ${settings.measurementRequestCount}`,
    );
  }
  const range = settings.range;
  if (range && range.end !== 1 && settings.mode !== "custom_intervals") {
    out.push(`  Latency limit: ${settings.latencyThresholdMs} msec`);
    const limit = Math.max(range.start, range.end);
    if (range.end !== 0) {
      out.push(
        settings.mode === "concurrency"
          ? `  Concurrency limit: ${limit} concurrent requests`
          : `  Request Rate limit: ${formatGeneral(limit)} requests per seconds`,
      );
    }
  }
  if (settings.mode === "request_rate") {
    const distribution = settings.requestDistribution;
    const kindOf = distribution === "gamma"
      ? `gamma (burstiness ${formatGeneral(settings.burstiness ?? 1)})`
      : distribution === "poisson"
      ? "poisson"
      : "uniform";
    out.push(`  Using ${kindOf} distribution on request generation`);
  }
  const shape = shapeLine(settings);
  if (shape) out.push(`  ${shape}`);
  if (settings.capRampMs !== undefined) {
    out.push(
      `  Ramping the cap on requests in flight from 1 to ${settings.concurrencyCap} over ${
        seconds(settings.capRampMs)
      }`,
    );
  }
  if (settings.binarySearch) out.push("  Using Binary Search algorithm");
  out.push(`  Using ${settings.async ? "asynchronous" : "synchronous"} calls for inference`);
  if (settings.decoupled) {
    out.push("  Detected decoupled model, using the first response for measuring latency");
  }
  out.push("");
  return lines(out);
}

export interface LevelFormatOptions {
  /** "c_api": perf_analyzer has no client library times in-process (its line stays blank). */
  protocol: "http" | "grpc" | "c_api";
  /** --percentile: replaces the average latency line and joins the percentile lines. */
  percentile?: number;
  /** Decoupled model: adds Response Throughput; perf_analyzer then has no client library times. */
  decoupled?: boolean;
  /** The response cache is enabled; absent decides by whether the server counted cache lookups. */
  cache?: boolean;
  /** -v: send and receive shown separately. */
  verbose?: boolean;
  /** --collect-metrics: GPU metrics merged over the level's stable windows. */
  metrics?: GpuMetrics;
  /**
   * --periodic-concurrency-range: the result is the whole launch pattern
   * (perf_analyzer reports no level in this mode; the heading says what ran).
   */
  periodic?: { range: { start: number; end: number; step: number }; requestPeriod: number };
  /** --session-concurrency: the result is every session of the input data. */
  sessionConcurrency?: number;
}

/** The level's heading; perf_analyzer prints none for --request-intervals. */
function heading(result: LevelResult, options: LevelFormatOptions): string[] {
  const periodic = options.periodic;
  if (periodic) {
    const { start, end, step } = periodic.range;
    return [
      `Periodic concurrency: ${start}:${end}:${step}, request period ${periodic.requestPeriod}`,
    ];
  }
  if (options.sessionConcurrency) return [`Session concurrency: ${options.sessionConcurrency}`];
  if (result.mode === "concurrency") return [`Request concurrency: ${result.value}`];
  if (result.mode === "request_rate") {
    return [`Request Rate: ${formatGeneral(result.value)} inference requests per seconds`];
  }
  return [];
}

/** Failed requests shown per level: the most frequent messages. */
const SHOWN_ERRORS = 5;
/** perf_analyzer warns when more than this percentage of rate-mode sends were late. */
const DELAYED_WARNING_PCT = 1;

function clientLines(c: ClientSummary, options: LevelFormatOptions): string[] {
  const out = ["  Client: ", `    Request count: ${c.requestCount}`];
  const delayedPct = c.requestCount > 0 ? (c.delayedCount / c.requestCount) * 100 : 0;
  if (delayedPct > DELAYED_WARNING_PCT) {
    out.push(
      "    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. " +
        `${delayedPct.toFixed(2)}% of the requests were delayed. `,
    );
  }
  out.push(`    Throughput: ${formatGeneral(c.throughput)} infer/sec`);
  if (options.decoupled) {
    out.push(`    Response Throughput: ${formatGeneral(c.responseThroughput)} infer/sec`);
  }
  if (options.percentile === undefined) {
    out.push(
      `    Avg latency: ${wholeUs(c.avgLatencyUs)} usec ` +
        `(standard deviation ${wholeUs(c.stdLatencyUs)} usec)`,
    );
  }
  for (const p of [...c.percentilesUs.keys()].sort((a, b) => a - b)) {
    out.push(`    p${p} latency: ${wholeUs(c.percentilesUs.get(p)!)} usec`);
  }
  out.push(`    ${options.decoupled ? firstResponse(c) : libraryTime(c, options)}`);
  if (c.errorCount > 0) out.push(...failureLines("Failed requests", c));
  // Neither valid nor failed: AIPerf's cancellations and the requests a grace period ended.
  if (c.cancelledCount) out.push(`    Cancelled requests: ${c.cancelledCount}`);
  return out;
}

/** A count of failed requests by cause, and their most frequent messages. */
function failureLines(
  title: string,
  failures: Pick<ClientSummary, "errorCount" | "errors">,
): string[] {
  const causes = errorCauses(failures.errors).map(({ cause, count }) => `${cause} ${count}`);
  return [
    `    ${title}: ${failures.errorCount}`,
    ...failures.errors.slice(0, SHOWN_ERRORS).map(([message, count]) =>
      `      ${count} x ${printableLine(message)}`
    ),
    `      by cause: ${causes.join(", ")}`,
  ];
}

/**
 * Beyond perf_analyzer, open-loop levels: latency from the intended send time
 * (corrected for coordinated omission), how punctually the client sent, and a
 * warning when it sent too late for the latencies to be trusted.
 */
function openLoopLines(o: OpenLoopSummary, options: LevelFormatOptions): string[] {
  const out: string[] = [];
  if (options.percentile === undefined) {
    out.push(
      `    Corrected avg latency: ${wholeUs(o.correctedAvgUs)} usec ` +
        `(standard deviation ${wholeUs(o.correctedStdUs)} usec)`,
    );
  }
  for (const p of [...o.correctedPercentilesUs.keys()].sort((a, b) => a - b)) {
    out.push(`    Corrected p${p} latency: ${wholeUs(o.correctedPercentilesUs.get(p)!)} usec`);
  }
  out.push(
    `    Send rate: ${formatGeneral(o.sendRate)} req/sec (${o.sendCount} sends)`,
    `    Send lag: p50 ${wholeUs(o.sendLagP50Us)} usec, p99 ${wholeUs(o.sendLagP99Us)} usec, ` +
      `max ${wholeUs(o.sendLagMaxUs)} usec`,
    `    Sends held back by the in-flight limit: ${o.blockedCount}`,
  );
  if (o.behindSchedule) {
    out.push(
      `    [BEHIND SCHEDULE] The p99 send lag (${wholeUs(o.sendLagP99Us)} usec) exceeds ` +
        `--max-send-lag (${wholeUs(o.maxSendLagUs)} usec): the client sent late, so latencies ` +
        "from the send understate the server's; the corrected latencies include the lag.",
    );
  }
  return out;
}

/** The console's statistics of an LLM metric (the CSV and JSON have genai-perf's full set). */
const CONSOLE_STATISTICS = ["avg", "std", "min", "p25", "p50", "p75", "p90", "p95", "p99", "max"];

function llmMetricText(d: Distribution, unit: string): string {
  const value = (v: number) => unit === "ms" ? v.toFixed(2) : formatGeneral(v);
  const parts = CONSOLE_STATISTICS.map((name) => `${name} ${value(statistic(d, name)!)}`);
  return `${parts.join(", ")} ${unit}`;
}

/**
 * Beyond perf_analyzer, token-streaming (LLM) levels: genai-perf's metrics,
 * each with its statistics, then the rates; where the token counts came from.
 */
function llmLines(l: LlmSummary): string[] {
  const sources = tokenCountSources(l);
  const out = [`  LLM (output tokens: ${sources.output}; input tokens: ${sources.input}): `];
  for (const metric of LLM_METRICS) {
    const d = metric.of(l);
    if (d) {
      out.push(`    ${metricTitle(metric.name, metric.unit)}: ${llmMetricText(d, metric.unit)}`);
    }
  }
  for (const [name, unit, value] of llmSystemMetrics(l)) {
    out.push(`    ${metricTitle(name, unit)}: ${formatGeneral(value)}`);
  }
  if (l.goodput) {
    const objectives = l.goodput.objectives.map((o) => `${o.metric}:${o.value}`).join(" ");
    out.push(`    Goodput: ${l.goodput.goodCount} of ${l.requestCount} requests met ${objectives}`);
  }
  for (const slice of l.slices ?? []) {
    const span = `${formatGeneral(slice.startS)}-${formatGeneral(slice.endS)} s`;
    out.push(`    Slice ${span}: ${averagesLine(slice.llm)}`);
  }
  for (const { model, llm } of l.models ?? []) {
    out.push(`    Model ${model}: ${llm.requestCount} requests; ${averagesLine(llm)}`);
  }
  for (const turn of l.turns ?? []) {
    out.push(`    Turn ${turn.turnIndex}: ${averagesLine(turn.llm)}`);
  }
  if (l.sessions) {
    out.push(`    Sessions: ${l.sessions.length} (each one's metrics in --summary-json)`);
  }
  return out;
}

/** What the LLM server's metrics said of the level, its generated tokens beside the client's. */
function llmServerLine(m: LlmServerMetrics, llm: LlmSummary | undefined): string {
  const parts: string[] = [];
  if (m.generatedTokens !== undefined) {
    const client = llm ? ` (client: ${formatGeneral(llm.totalOutputTokens)})` : "";
    parts.push(`generated ${formatGeneral(m.generatedTokens)} tokens${client}`);
  }
  if (m.promptTokens !== undefined) {
    const cached = m.cachedPromptTokens === undefined
      ? ""
      : ` (${formatGeneral(m.cachedPromptTokens)} cached)`;
    parts.push(`prompt ${formatGeneral(m.promptTokens)} tokens${cached}`);
  }
  const gauge = (name: string, g: { avg: number; max: number } | undefined) => {
    if (g) parts.push(`${name} avg ${formatGeneral(g.avg)} max ${formatGeneral(g.max)}`);
  };
  gauge("running", m.running);
  gauge("waiting", m.waiting);
  gauge("KV cache usage", m.kvCacheUsage);
  return `  LLM server metrics: ${parts.join(", ")}`;
}

/** A part of a level (a --slice-duration slice, a turn index) on one line: averages and rates. */
function averagesLine(llm: LlmSummary): string {
  const parts: string[] = [];
  for (const metric of LLM_METRICS) {
    const d = metric.of(llm);
    if (d === undefined) continue;
    const value = metric.unit === "ms" ? d.avg.toFixed(2) : formatGeneral(d.avg);
    parts.push(`${metric.name} avg ${value} ${metric.unit}`);
  }
  for (const [name, unit, value] of llmSystemMetrics(llm)) {
    parts.push(`${name} ${formatGeneral(value)}${unit === "count" ? "" : ` ${unit}`}`);
  }
  return parts.join(", ");
}

/**
 * perf_analyzer leaves this line blank for decoupled models and measures
 * latency to the last response (while its settings say "first"): both here.
 */
function firstResponse(c: ClientSummary): string {
  if (c.avgFirstResponseUs === undefined) return "";
  return `Avg first-response latency: ${wholeUs(c.avgFirstResponseUs)} usec ` +
    "(the latencies above run to the last response)";
}

function libraryTime(c: ClientSummary, options: LevelFormatOptions): string {
  const send = wholeUs(c.avgSendUs);
  const recv = wholeUs(c.avgRecvUs);
  const total = wholeUs(c.avgSendUs + c.avgWaitUs + c.avgRecvUs);
  const wait = total - send - recv;
  if (options.protocol === "c_api") return "";
  if (options.protocol === "grpc") {
    return `Avg gRPC time: ${total} usec (` +
      (options.verbose
        ? `marshal ${send} usec + response wait ${wait} usec + unmarshal ${recv} usec)`
        : `(un)marshal request/response ${send + recv} usec + response wait ${wait} usec)`);
  }
  return `Avg HTTP time: ${total} usec (` +
    (options.verbose
      ? `send ${send} usec + response wait ${wait} usec + receive ${recv} usec)`
      : `send/recv ${send + recv} usec + response wait ${wait} usec)`);
}

const computeUs = (s: ServerSummary) => s.computeInputUs + s.computeInferUs + s.computeOutputUs;

/**
 * Compute and cache time averaged over computed and cache-hit requests. A
 * request that hits the cache is not computed, so computed = successful - hits.
 */
function cacheComputeUs(s: ServerSummary): number {
  const computed = Math.max(0, s.successCount - s.cacheHitCount);
  const count = computed + s.cacheHitCount;
  if (count === 0) return 0;
  return (computeUs(s) * computed + s.cacheHitUs * s.cacheHitCount +
    s.cacheMissUs * s.cacheMissCount) / count;
}

function sum(models: readonly ServerSummary[], value: (s: ServerSummary) => number): number {
  return models.reduce((total, s) => total + wholeUs(value(s)), 0);
}

/** perf_analyzer's ReportServerSideStats: `depth` 1 for the profiled model, 2 for composing ones. */
function serverLines(
  s: ServerSummary,
  composing: readonly ServerSummary[],
  options: { depth: number; cache: boolean },
): string[] {
  const indent = " ".repeat(2 * options.depth);
  const inner = indent + indent;
  if (s.successCount === 0) return [`${indent}  Request count: 0`];
  const out = [
    `${indent}  Inference count: ${s.inferenceCount}`,
    `${indent}  Execution count: ${s.executionCount}`,
  ];
  if (options.cache) {
    out.push(`${indent}  Cache hit count: ${s.cacheHitCount}`);
    out.push(`${indent}  Cache miss count: ${s.cacheMissCount}`);
  }
  out.push(`${indent}  Successful request count: ${s.successCount}`);
  const latency = `${indent}  Avg request latency: ${wholeUs(s.avgRequestUs)} usec ` +
    `(overhead ${wholeUs(s.overheadUs)} usec + queue `;
  if (composing.length === 0) {
    const queue = wholeUs(s.queueUs);
    const compute = `compute input ${wholeUs(s.computeInputUs)} usec + ` +
      `compute infer ${wholeUs(s.computeInferUs)} usec + ` +
      `compute output ${wholeUs(s.computeOutputUs)} usec)`;
    if (options.cache) {
      out.push(`${latency}${queue} usec + cache hit/miss ${wholeUs(cacheComputeUs(s))} usec)`);
      out.push(`${inner}  Average Cache Hit Latency: ${wholeUs(s.cacheHitUs)} usec`);
      out.push(
        `${inner}  Average Cache Miss Latency: ` +
          `${wholeUs(s.cacheMissUs) + wholeUs(computeUs(s))} usec ` +
          `(cache lookup/insertion ${wholeUs(s.cacheMissUs)} usec + ${compute}`,
      );
    } else {
      out.push(`${latency}${queue} usec + ${compute}`);
    }
    out.push("");
    return out;
  }
  const queue = sum(composing, (m) => m.queueUs);
  if (options.cache) {
    out.push(`${latency}${queue} usec + cache hit/miss ${sum(composing, cacheComputeUs)} usec)`);
    const hit = wholeUs(s.cacheHitUs) + sum(composing, (m) => m.cacheHitUs);
    const miss = wholeUs(s.cacheMissUs) + sum(composing, (m) => m.cacheMissUs) +
      sum(composing, computeUs);
    out.push(`${inner}  Average Cache Hit Latency: ${hit} usec`);
    out.push(`${inner}  Average Cache Miss Latency: ${miss} usec `);
  } else {
    out.push(`${latency}${queue} usec + compute ${sum(composing, computeUs)} usec)`);
  }
  out.push("");
  out.push(`${indent}Composing models: `);
  for (const m of composing) {
    out.push(`${indent}${m.model}, version: ${m.version}`);
    out.push(...serverLines(m, [], { depth: options.depth + 1, cache: options.cache }));
  }
  return out;
}

/** perf_analyzer prints per-GPU metrics for up to this many GPUs. */
const MAX_GPUS_SHOWN = 16;

function metricsLines(m: GpuMetrics): string[] {
  const out = ["  Server Prometheus Metrics: "];
  const maps = [m.utilization, m.powerWatts, m.memoryUsedBytes, m.memoryTotalBytes];
  if (maps.some((map) => map.size > MAX_GPUS_SHOWN)) {
    out.push(
      "Too many GPUs on system to print out individual Prometheus metrics, " +
        "use the CSV output feature to see metrics.",
    );
    return out;
  }
  const section = (title: string, map: Map<string, number>, value: (v: number) => string) => {
    out.push(`    ${title}:`);
    for (const uuid of [...map.keys()].sort()) out.push(`      ${uuid} : ${value(map.get(uuid)!)}`);
  };
  section("Avg GPU Utilization", m.utilization, (v) => `${formatGeneral(v * 100)}%`);
  section("Avg GPU Power Usage", m.powerWatts, (v) => `${formatGeneral(v)} watts`);
  section("Max GPU Memory Usage", m.memoryUsedBytes, (v) => `${Math.trunc(v)} bytes`);
  section("Total GPU Memory", m.memoryTotalBytes, (v) => `${Math.trunc(v)} bytes`);
  return out;
}

/**
 * One load level's block. Beyond perf_analyzer, failed requests are listed
 * after the client figures ("Failed requests: N", then the most frequent
 * messages), and token-streaming (LLM) levels end with an "LLM" block.
 */
export function formatLevel(result: LevelResult, options: LevelFormatOptions): string {
  const out = [...heading(result, options), ...clientLines(result.client, options)];
  if (result.openLoop) {
    const failed = out.findIndex((line) => line.startsWith("    Failed requests: "));
    out.splice(failed < 0 ? out.length : failed, 0, ...openLoopLines(result.openLoop, options));
  }
  if (result.warmupFailures) {
    out.push(...failureLines("Failed warmup requests (not measured)", result.warmupFailures));
  }
  const [top, ...composing] = result.server ?? [];
  if (top) {
    const cache = options.cache ??
      (result.server ?? []).some((s) => s.cacheHitCount + s.cacheMissCount > 0);
    out.push("  Server: ", ...serverLines(top, composing, { depth: 1, cache }));
  }
  if (options.metrics) out.push(...metricsLines(options.metrics));
  else if (result.metricsUnavailable) {
    out.push(`  Server Prometheus Metrics: none (${result.metricsUnavailable})`);
  }
  if (result.llm) out.push(...llmLines(result.llm));
  if (result.llmServer) out.push(llmServerLine(result.llmServer, result.llm));
  return lines(out);
}

/** The latency a level is ranked by: the --percentile latency, else the average. */
function stabilizingUs(c: ClientSummary, percentile: number | undefined): number {
  return percentile === undefined ? c.avgLatencyUs : c.percentilesUs.get(percentile) ?? 0;
}

/** The closing "Inferences/Second vs. Client ... Batch Latency" table; empty without results. */
export function formatSummaryTable(
  results: readonly LevelResult[],
  options: { percentile?: number } = {},
): string {
  if (results.length === 0) return "";
  const { percentile } = options;
  const out = [
    `Inferences/Second vs. Client ${
      percentile === undefined ? "Average" : `p${percentile}`
    } Batch Latency`,
  ];
  for (const r of results) {
    const level = r.mode === "concurrency"
      ? `Concurrency: ${r.value}`
      : `Request Rate: ${formatGeneral(r.value)}`;
    out.push(
      `${level}, throughput: ${formatGeneral(r.client.throughput)} infer/sec, ` +
        `latency ${wholeUs(stabilizingUs(r.client, percentile))} usec`,
    );
  }
  const late = results.filter((r) => r.openLoop?.behindSchedule);
  if (late.length > 0) {
    out.push(
      `[BEHIND SCHEDULE] Send lag over --max-send-lag at request rate ${
        late.map((r) => formatGeneral(r.value)).join(", ")
      }`,
    );
  }
  return lines(out);
}

/** The -v line for one measurement window ("Pass [n]", n from 1). */
export function formatPass(
  trial: number,
  client: ClientSummary,
  options: { percentile?: number } = {},
): string {
  const { percentile } = options;
  const latency = percentile === undefined
    ? `Avg latency: ${wholeUs(client.avgLatencyUs)} usec (std ${
      wholeUs(client.stdLatencyUs)
    } usec). `
    : `p${percentile} latency: ${wholeUs(stabilizingUs(client, percentile))} usec`;
  return lines([
    `  Pass [${trial}] throughput: ${formatGeneral(client.throughput)} infer/sec. ${latency}`,
  ]);
}
