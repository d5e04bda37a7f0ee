/**
 * --summary-json: every figure the console report shows, per level, as JSON
 * (the numbers behind the report, unrounded), plus what the report leaves
 * out: every window and a mergeable latency histogram per level. Documented
 * by docs/summary.schema.json.
 */
import { LatencyHistogram, windowFigures, windowHistogram } from "../measure/histogram.ts";
import type {
  ClientSummary,
  Distribution,
  LevelResult,
  LlmServerMetrics,
  LlmSummary,
  LoadMode,
  OpenLoopSummary,
  ServerSummary,
  WindowData,
} from "../types/results.ts";
import type { MeasurementOptions } from "../measure/plan.ts";
import { errorCauses } from "../measure/error_causes.ts";
import type { CapacityReport, GpuMetrics } from "../types/results.ts";
import { evaluateSlos, type Slo, slosMet } from "../measure/slo.ts";
import { capacityJson } from "./capacity.ts";
import { latencyComponents, reportedWindows } from "./components.ts";
import { llmSystemMetrics, tokenCountSources } from "./llm_table.ts";
import { LLM_METRICS, statistic } from "../measure/metrics.ts";
import { confidenceJson, type RunsReport } from "./confidence.ts";
import type { Json } from "./figures.ts";

/** Bumped when a field changes meaning or goes away (additions keep it). */
export const SUMMARY_SCHEMA_VERSION = 2;

export interface SummarySettings extends MeasurementOptions {
  mode: LoadMode;
  url: string;
  protocol: string;
  serviceKind: string;
  latencyThresholdMs: number;
  /** The load's shape (lib/load/plan.ts), when it has one. */
  requestDistribution?: string;
  burstiness?: number;
  ramp?: { durationMs: number; strategy: string; start: number };
  capRampMs?: number;
  stages?: readonly { durationMs: number; target: number }[];
  prefillConcurrency?: number;
  prefillRampMs?: number;
}

/** How the load was shaped beyond a flat level, or undefined for a flat one. */
function loadShapeJson(s: SummarySettings): Json | undefined {
  const shape: Record<string, Json> = {};
  if (s.requestDistribution === "gamma") {
    shape.request_distribution = "gamma";
    shape.burstiness = s.burstiness ?? 1;
  }
  if (s.ramp) {
    shape.ramp = { duration_ms: s.ramp.durationMs, strategy: s.ramp.strategy, start: s.ramp.start };
  }
  if (s.capRampMs !== undefined) shape.cap_ramp_ms = s.capRampMs;
  if (s.stages) {
    shape.stages = s.stages.map((st) => ({ duration_ms: st.durationMs, target: st.target }));
  }
  if (s.prefillConcurrency !== undefined) shape.prefill_concurrency = s.prefillConcurrency;
  if (s.prefillRampMs !== undefined) shape.prefill_ramp_ms = s.prefillRampMs;
  if ((s.warmupDurationMs ?? 0) > 0) shape.warmup_duration_ms = s.warmupDurationMs!;
  if (s.warmupGraceMs !== undefined) shape.warmup_grace_ms = s.warmupGraceMs;
  return Object.keys(shape).length > 0 ? shape : undefined;
}

export interface SummaryContext {
  /** inferperf's version. */
  version: string;
  model: { name: string; version: string };
  server?: { name: string; version: string };
  settings: SummarySettings;
  /** Why the sweep stopped early, as the console report says it. */
  note?: string;
  /** Percentiles each window reports (the level's percentiles). */
  percentiles: readonly number[];
  /** --num-profile-runs: the confidence of every level's headline figures over the runs. */
  runs?: RunsReport;
  /** --search-recipe: the capacity search's answer. */
  capacity?: CapacityReport;
  /** --slo: each level's verdicts. */
  slos?: { slos: readonly Slo[]; attainment: number };
}

const percentileObject = (map: Map<number, number>): Record<string, number> =>
  Object.fromEntries([...map].sort((a, b) => a[0] - b[0]).map(([p, v]) => [String(p), v]));

function clientJson(c: ClientSummary): Json {
  return {
    request_count: c.requestCount,
    response_count: c.responseCount,
    error_count: c.errorCount,
    errors: c.errors.map(([message, count]) => ({ message, count })),
    error_causes: errorCauses(c.errors).map((e) => ({ ...e })),
    cancelled_count: c.cancelledCount ?? 0,
    duration_ms: c.durationMs,
    throughput: c.throughput,
    response_throughput: c.responseThroughput,
    avg_latency_us: c.avgLatencyUs,
    std_latency_us: c.stdLatencyUs,
    percentiles_us: percentileObject(c.percentilesUs),
    avg_send_us: c.avgSendUs,
    avg_recv_us: c.avgRecvUs,
    avg_wait_us: c.avgWaitUs,
    delayed_count: c.delayedCount,
    ...(c.goodCount === undefined ? {} : { good_count: c.goodCount }),
  };
}

function serverJson(s: ServerSummary): Json {
  return {
    model: s.model,
    version: s.version,
    inference_count: s.inferenceCount,
    execution_count: s.executionCount,
    success_count: s.successCount,
    avg_request_us: s.avgRequestUs,
    overhead_us: s.overheadUs,
    queue_us: s.queueUs,
    compute_input_us: s.computeInputUs,
    compute_infer_us: s.computeInferUs,
    compute_output_us: s.computeOutputUs,
    cache_hit_count: s.cacheHitCount,
    cache_hit_us: s.cacheHitUs,
    cache_miss_count: s.cacheMissCount,
    cache_miss_us: s.cacheMissUs,
  };
}

function openLoopJson(o: OpenLoopSummary): Json {
  return {
    corrected_avg_latency_us: o.correctedAvgUs,
    corrected_std_latency_us: o.correctedStdUs,
    corrected_percentiles_us: percentileObject(o.correctedPercentilesUs),
    send_count: o.sendCount,
    send_rate: o.sendRate,
    send_lag_p50_us: o.sendLagP50Us,
    send_lag_p99_us: o.sendLagP99Us,
    send_lag_max_us: o.sendLagMaxUs,
    blocked_count: o.blockedCount,
    max_send_lag_us: o.maxSendLagUs,
    trustworthy: !o.behindSchedule,
  };
}

/** Per GPU UUID: the four metrics of the "Server Prometheus Metrics" block. */
function gpuJson(m: GpuMetrics): Json {
  const uuids = new Set(
    [m.utilization, m.powerWatts, m.memoryUsedBytes, m.memoryTotalBytes].flatMap((map) => [
      ...map.keys(),
    ]),
  );
  const value = (map: Map<string, number>, uuid: string): Json => map.get(uuid) ?? null;
  return Object.fromEntries(
    [...uuids].sort().map((uuid) => [uuid, {
      utilization: value(m.utilization, uuid),
      power_watts: value(m.powerWatts, uuid),
      memory_used_bytes: value(m.memoryUsedBytes, uuid),
      memory_total_bytes: value(m.memoryTotalBytes, uuid),
    }]),
  );
}

/** A unit as a key suffix: "ms", "tokens", "tokens_per_sec_per_user", "per_sec", "pct", "count". */
const unitKey = (unit: string) =>
  unit === "%" ? "pct" : unit.replaceAll("/sec", "_per_sec").replaceAll(/[^a-z]+/g, "_");

function statisticsJson(d: Distribution): Json {
  const keys = ["avg", "std", "min", "max", ...[...d.percentiles.keys()].map((p) => `p${p}`)];
  return Object.fromEntries(keys.map((key) => [key, statistic(d, key)!]));
}

/**
 * genai-perf's metrics with their units in the key names, e.g.
 * `time_to_first_token_ms: {avg, std, min, max, p1..p99}`, then the rates.
 */
function llmJson(l: LlmSummary): Json {
  const json: Record<string, Json> = { token_counts: tokenCountSources(l) };
  if (l.tokenizer) json.tokenizer = l.tokenizer;
  for (const metric of LLM_METRICS) {
    const d = metric.of(l);
    if (d) json[`${metric.name}_${unitKey(metric.unit)}`] = statisticsJson(d);
  }
  for (const [name, unit, value] of llmSystemMetrics(l)) {
    json[name === "request_count" ? name : `${name}_${unitKey(unit)}`] = value;
  }
  if (l.goodput) {
    json.goodput = {
      objectives: Object.fromEntries(l.goodput.objectives.map((o) => [o.metric, o.value])),
      good_count: l.goodput.goodCount,
    };
  }
  if (l.gapByPositionUs) {
    json.inter_chunk_latency_by_position_ms = l.gapByPositionUs.map((us) => us / 1000);
  }
  if (l.slices) {
    json.time_slices = l.slices.map((s) => ({
      start_s: s.startS,
      end_s: s.endS,
      llm: llmJson(s.llm),
    }));
  }
  if (l.models) {
    json.models = Object.fromEntries(l.models.map((m) => [m.model, llmJson(m.llm)]));
  }
  if (l.turns) {
    json.turns = l.turns.map((t) => ({ turn_index: t.turnIndex, llm: llmJson(t.llm) }));
  }
  if (l.sessions) {
    json.sessions = Object.fromEntries(l.sessions.map((s) => [s.sessionId, llmJson(s.llm)]));
  }
  return json;
}

function windowJson(
  w: WindowData,
  options: {
    originMs: number;
    batchSize: number;
    percentiles: readonly number[];
    reported: boolean;
  },
): Json {
  const f = windowFigures(w, options);
  return {
    start_ms: w.startMs - options.originMs,
    end_ms: w.endMs - options.originMs,
    reported: options.reported,
    request_count: f.count,
    error_count: w.errorCount,
    throughput: f.throughput,
    avg_latency_us: f.meanNs / 1000,
    std_latency_us: f.stdDevNs / 1000,
    percentiles_us: Object.fromEntries(
      options.percentiles.map((p, i) => [String(p), f.percentilesNs[i] / 1000]),
    ),
    ...(w.llm ? { llm: llmJson(w.llm) } : {}),
  };
}

function levelJson(
  r: LevelResult,
  options: {
    originMs: number;
    batchSize: number;
    percentiles: readonly number[];
    slos?: SummaryContext["slos"];
  },
): Json {
  const reported = reportedWindows(r);
  const components = latencyComponents(r);
  const level: Record<string, Json> = {
    mode: r.mode,
    value: r.value,
    stable: r.stable,
    client: clientJson(r.client),
    latency_components_us: {
      client_send: components.clientSendUs,
      network_server_send_recv: components.networkUs,
      server_queue: components.serverQueueUs,
      server_compute_input: components.serverComputeInputUs,
      server_compute_infer: components.serverComputeInferUs,
      server_compute_output: components.serverComputeOutputUs,
      server_cache_hit: components.serverCacheHitUs,
      server_cache_miss: components.serverCacheMissUs,
      client_recv: components.clientRecvUs,
    },
    latency_histogram: LatencyHistogram.merge(reported.map(windowHistogram)).encode(),
    windows: r.windows.map((w) => windowJson(w, { ...options, reported: reported.includes(w) })),
  };
  if (r.strategy) level.strategy = r.strategy;
  if (r.overSaturation) {
    level.over_saturation = {
      inflight_per_s: r.overSaturation.inflightPerS,
      latency_ms_per_s: r.overSaturation.latencyMsPerS,
      windows: r.overSaturation.windows,
    };
  }
  if (r.server) level.server = r.server.map(serverJson);
  if (r.metrics) level.gpu_metrics = gpuJson(r.metrics);
  if (r.metricsUnavailable) level.gpu_metrics_unavailable = r.metricsUnavailable;
  if (r.openLoop) level.open_loop = openLoopJson(r.openLoop);
  if (r.llm) level.llm = llmJson(r.llm);
  if (r.llmServer) level.llm_server = llmServerJson(r.llmServer, r.llm);
  if (options.slos && options.slos.slos.length > 0) {
    const verdicts = evaluateSlos(r, options.slos.slos, { attainment: options.slos.attainment });
    level.slo = { met: slosMet(verdicts), verdicts: verdicts.map((v) => v.text) };
  }
  return level;
}

/** What an LLM server's metrics said of the level, its generated tokens beside the client's. */
function llmServerJson(m: LlmServerMetrics, llm: LlmSummary | undefined): Json {
  const json: Record<string, Json> = { scrapes: m.scrapes };
  if (m.generatedTokens !== undefined) json.generated_tokens = m.generatedTokens;
  if (llm) json.client_output_tokens = llm.totalOutputTokens;
  if (m.promptTokens !== undefined) json.prompt_tokens = m.promptTokens;
  if (m.cachedPromptTokens !== undefined) json.cached_prompt_tokens = m.cachedPromptTokens;
  if (m.running) json.running_requests = { ...m.running };
  if (m.waiting) json.waiting_requests = { ...m.waiting };
  if (m.kvCacheUsage) json.kv_cache_usage = { ...m.kvCacheUsage };
  return json;
}

const originOf = (results: readonly LevelResult[]) => {
  const originMs = Math.min(...results.map((r) => r.windows[0]?.startMs ?? Infinity));
  return Number.isFinite(originMs) ? originMs : 0;
};

/** The summary's `levels` of `results`, as JSON values (what repeat runs compare). */
export function levelsJson(
  results: readonly LevelResult[],
  options: { batchSize: number; percentiles: readonly number[]; slos?: SummaryContext["slos"] },
): Json[] {
  const originMs = originOf(results);
  return results.map((r) => levelJson(r, { ...options, originMs }));
}

/** The summary document (see docs/summary.schema.json). */
export function buildSummary(
  results: readonly LevelResult[],
  context: SummaryContext,
): Record<string, Json> {
  const s = context.settings;
  const origin = originOf(results);
  const document: Record<string, Json> = {
    schema_version: SUMMARY_SCHEMA_VERSION,
    tool: { name: "inferperf", version: context.version },
    run_start_unix_ms: performance.timeOrigin + origin,
    model: context.model,
    settings: {
      mode: s.mode,
      url: s.url,
      protocol: s.protocol,
      service_kind: s.serviceKind,
      batch_size: s.batchSize,
      measurement_mode: s.measurementMode,
      measurement_interval_ms: s.measurementIntervalMs,
      measurement_request_count: s.measurementRequestCount,
      stability_percentage: s.stabilityPercentage,
      max_trials: s.maxTrials,
      percentile: s.percentile ?? null,
      latency_threshold_ms: s.latencyThresholdMs,
      request_count: s.requestCount,
      warmup_request_count: s.warmupRequestCount,
    },
    levels: levelsJson(results, {
      batchSize: s.batchSize,
      percentiles: context.percentiles,
      ...(context.slos ? { slos: context.slos } : {}),
    }),
  };
  const shape = loadShapeJson(s);
  if (shape !== undefined) (document.settings as Record<string, Json>).load_shape = shape;
  if (context.server) document.server = context.server;
  if (context.note) document.note = context.note;
  if (context.runs) document.profile_runs = confidenceJson(context.runs);
  if (context.capacity) document.capacity = capacityJson(context.capacity);
  return document;
}

/** The summary as pretty-printed JSON text. */
export function formatSummaryJson(
  results: readonly LevelResult[],
  context: SummaryContext,
): string {
  return `${JSON.stringify(buildSummary(results, context), null, 2)}\n`;
}
