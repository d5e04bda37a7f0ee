/**
 * Client and server summaries of measurement windows, computed the way
 * perf_analyzer computes them so reports agree with it number for number.
 */
import type { ModelStatistics, StatDuration } from "../types/model.ts";
import type { ClientSummary, Samples, ServerSummary, WindowData } from "../types/results.ts";

/** Percentiles every report shows. */
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99];

/** REPORTED_PERCENTILES and `percentiles` (--percentile), ascending, each once. */
export function withReported(percentiles: readonly number[] = []): number[] {
  return [...new Set([...REPORTED_PERCENTILES, ...percentiles])].sort((a, b) => a - b);
}

/**
 * The p-th percentile of ascending samples: the sample at index
 * round(p/100 x (n-1)), halves rounded up, as perf_analyzer picks it.
 */
export function percentile(sortedUs: ArrayLike<number>, p: number): number {
  if (sortedUs.length === 0) throw new RangeError("Cannot take a percentile of no samples");
  if (!(p >= 0 && p <= 100)) throw new RangeError(`Percentile "${p}" is outside 0..100`);
  return sortedUs[Math.floor((p / 100) * (sortedUs.length - 1) + 0.5)];
}

/**
 * The p-th percentile of ascending samples interpolated linearly between the
 * two nearest ranks (index p/100 x (n-1)): numpy's default, which genai-perf
 * and AIPerf report their LLM metrics with.
 */
export function interpolatedPercentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new RangeError("Cannot take a percentile of no samples");
  if (!(p >= 0 && p <= 100)) throw new RangeError(`Percentile "${p}" is outside 0..100`);
  const at = (p / 100) * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

/** Arithmetic mean; 0 for no samples. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return sum / values.length;
}

/**
 * Sample (n-1) standard deviation. 0 for fewer than two samples, where
 * perf_analyzer prints UINT64_MAX: a number nobody can use.
 */
export function sampleStdDev(values: ArrayLike<number>, average = mean(values)): number {
  if (values.length < 2) return 0;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i] - average) ** 2;
  return Math.sqrt(squares / (values.length - 1));
}

/** Population (n) standard deviation, numpy's default (genai-perf's and AIPerf's). */
export function populationStdDev(values: ArrayLike<number>, average = mean(values)): number {
  if (values.length === 0) return 0;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i] - average) ** 2;
  return Math.sqrt(squares / values.length);
}

/** The `values` of every window in one ascending array. */
export function pooledSorted(
  windows: readonly WindowData[],
  values: (w: WindowData) => Samples,
): Float64Array {
  let count = 0;
  for (const w of windows) count += values(w).length;
  const all = new Float64Array(count);
  let offset = 0;
  for (const w of windows) {
    all.set(values(w), offset);
    offset += values(w).length;
  }
  return all.sort();
}

export interface ClientSummaryOptions {
  batchSize: number;
  /** Percentiles to compute besides 50, 90, 95 and 99 (the --percentile value). */
  percentiles?: readonly number[];
}

/** The failed requests of `windows`: their count, and by message, most frequent first. */
export function pooledErrors(
  windows: readonly WindowData[],
): Pick<ClientSummary, "errorCount" | "errors" | "cancelledCount"> {
  let errorCount = 0;
  let cancelledCount = 0;
  const errors = new Map<string, number>();
  for (const w of windows) {
    errorCount += w.errorCount;
    cancelledCount += w.cancelledCount ?? 0;
    for (const [message, count] of w.errors) {
      errors.set(message, (errors.get(message) ?? 0) + count);
    }
  }
  return {
    errorCount,
    errors: [...errors].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
    ...(cancelledCount > 0 ? { cancelledCount } : {}),
  };
}

/** Pools windows into one summary: counts summed, latencies pooled and sorted once. */
export function summarizeClient(
  windows: readonly WindowData[],
  options: ClientSummaryOptions,
): ClientSummary {
  let requestCount = 0;
  let responseCount = 0;
  let delayedCount = 0;
  let durationMs = 0;
  let sendUs = 0;
  let recvUs = 0;
  let waitUs = 0;
  let firstResponseUs = 0;
  for (const w of windows) {
    requestCount += w.latenciesUs.length;
    responseCount += w.responseCount;
    delayedCount += w.delayedCount;
    durationMs += w.endMs - w.startMs;
    sendUs += w.sendUsSum;
    recvUs += w.recvUsSum;
    waitUs += w.waitUsSum;
    firstResponseUs += w.firstResponseUsSum ?? 0;
  }
  const pooled = pooledSorted(windows, (w) => w.latenciesUs);
  const avgLatencyUs = mean(pooled);
  const wanted = withReported(options.percentiles);
  const seconds = durationMs / 1000;
  const perRequest = (sum: number) => requestCount > 0 ? sum / requestCount : 0;
  return {
    requestCount,
    responseCount,
    ...pooledErrors(windows),
    durationMs,
    throughput: seconds > 0 ? (requestCount * options.batchSize) / seconds : 0,
    responseThroughput: seconds > 0 ? responseCount / seconds : 0,
    avgFirstResponseUs: perRequest(firstResponseUs),
    avgLatencyUs,
    stdLatencyUs: sampleStdDev(pooled, avgLatencyUs),
    percentilesUs: new Map(wanted.map((p) => [p, requestCount > 0 ? percentile(pooled, p) : 0])),
    avgSendUs: perRequest(sendUs),
    avgRecvUs: perRequest(recvUs),
    avgWaitUs: perRequest(waitUs),
    delayedCount,
  };
}

type DurationKey =
  | "success"
  | "fail"
  | "queue"
  | "computeInput"
  | "computeInfer"
  | "computeOutput"
  | "cacheHit"
  | "cacheMiss";

const DURATION_KEYS: readonly DurationKey[] = [
  "success",
  "fail",
  "queue",
  "computeInput",
  "computeInfer",
  "computeOutput",
  "cacheHit",
  "cacheMiss",
];

const modelKey = (s: ModelStatistics) => `${s.name}\u0000${s.version}`;

function combine(
  a: ModelStatistics,
  b: ModelStatistics | undefined,
  sign: 1 | -1,
): ModelStatistics {
  // A counter that went backwards (server restart, model reload) counts as 0, not negative.
  const op = (x: number, y = 0) => Math.max(0, x + sign * y);
  const durations = Object.fromEntries(
    DURATION_KEYS.map((
      k,
    ) => [k, { count: op(a[k].count, b?.[k].count), ns: op(a[k].ns, b?.[k].ns) }]),
  ) as Record<DurationKey, StatDuration>;
  return {
    name: a.name,
    version: a.version,
    inferenceCount: op(a.inferenceCount, b?.inferenceCount),
    executionCount: op(a.executionCount, b?.executionCount),
    ...durations,
  };
}

/**
 * Per model name and version, `after` minus `before`. A model absent from
 * `before` counts from zero; one absent from `after` is dropped.
 */
export function statisticsDelta(
  before: readonly ModelStatistics[],
  after: readonly ModelStatistics[],
): ModelStatistics[] {
  const start = new Map(before.map((s) => [modelKey(s), s]));
  return after.map((s) => combine(s, start.get(modelKey(s)), -1));
}

export interface ServerSummaryOptions {
  /** The profiled model; its summary comes first. */
  model: string;
  /** Its version; empty or absent picks the version that served requests, as perf_analyzer does. */
  version?: string;
  /** Composing models to report; absent reports every other model in the statistics. */
  composingModels?: readonly string[];
}

const avgUs = (d: StatDuration) => d.count > 0 ? d.ns / (d.count * 1000) : 0;

/** Average of compute and cache time over computed and cache-hit requests (perf_analyzer's "cache hit/miss"). */
function cacheComputeUs(s: ModelStatistics): number {
  const count = s.computeInput.count + s.cacheHit.count;
  const ns = s.computeInput.ns + s.computeInfer.ns + s.computeOutput.ns + s.cacheHit.ns +
    s.cacheMiss.ns;
  return count > 0 ? ns / (count * 1000) : 0;
}

/** perf_analyzer truncates each average to whole microseconds before subtracting. */
const whole = Math.trunc;

function summary(s: ModelStatistics, overheadUs: number): ServerSummary {
  return {
    model: s.name,
    version: s.version,
    inferenceCount: s.inferenceCount,
    executionCount: s.executionCount,
    successCount: s.success.count,
    avgRequestUs: avgUs(s.success),
    overheadUs,
    queueUs: avgUs(s.queue),
    computeInputUs: avgUs(s.computeInput),
    computeInferUs: avgUs(s.computeInfer),
    computeOutputUs: avgUs(s.computeOutput),
    cacheHitCount: s.cacheHit.count,
    cacheHitUs: avgUs(s.cacheHit),
    cacheMissCount: s.cacheMiss.count,
    cacheMissUs: avgUs(s.cacheMiss),
  };
}

/** With no version given: the highest version that queued requests, else the highest version. */
function pickVersion(
  entries: readonly ModelStatistics[],
  version: string | undefined,
): ModelStatistics | undefined {
  if (version) return entries.find((s) => s.version === version);
  const byVersion = (a: ModelStatistics, b: ModelStatistics) =>
    Number(b.version) - Number(a.version);
  const active = entries.filter((s) => s.queue.count > 0).sort(byVersion);
  return active[0] ?? [...entries].sort(byVersion)[0];
}

/**
 * Sums per-window statistics deltas and summarizes the profiled model
 * (first) and its composing models (by name, then version). Empty when the
 * profiled model is not in the statistics.
 */
export function summarizeServer(
  deltas: readonly (readonly ModelStatistics[])[],
  options: ServerSummaryOptions,
): ServerSummary[] {
  const totals = new Map<string, ModelStatistics>();
  for (const window of deltas) {
    for (const s of window) {
      const key = modelKey(s);
      const total = totals.get(key);
      totals.set(key, total ? combine(total, s, 1) : s);
    }
  }
  const byName = Map.groupBy(totals.values(), (s) => s.name);
  const top = pickVersion(byName.get(options.model) ?? [], options.version);
  if (!top) return [];
  const names = options.composingModels ?? [...byName.keys()].filter((n) => n !== options.model);
  const composing = names
    .map((name) => pickVersion(byName.get(name) ?? [], undefined))
    .filter((s) => s !== undefined)
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : a.version < b.version ? -1 : 1);
  const overhead = (s: ModelStatistics, parts: readonly ModelStatistics[]) => {
    let accounted = 0;
    for (const p of parts) accounted += whole(avgUs(p.queue)) + whole(cacheComputeUs(p));
    return Math.max(0, whole(avgUs(s.success)) - accounted);
  };
  // An ensemble's own queue and compute are empty: its time is spent in the composing models.
  return [
    summary(top, overhead(top, composing.length > 0 ? composing : [top])),
    ...composing.map((s) => summary(s, overhead(s, [s]))),
  ];
}
