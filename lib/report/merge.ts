/**
 * `inferperf merge`: the summary JSONs (--summary-json) or profile exports
 * (--profile-export-file) of runs that loaded one server side by side (e.g.
 * the pods of a Kubernetes Indexed Job, each sending its part) merged into
 * one, as if one client had sent it all. Levels and windows are matched by
 * position; counts and throughputs add up; latency percentiles come from the
 * runs' HDR histograms merged. A level keeps the value each run was given (the
 * label its command line asked for) when the runs agree; the load the server
 * saw, the values added up, is `merged_total_value` beside it.
 */
import { LatencyHistogram } from "../measure/histogram.ts";
import { BEHIND_SCHEDULE_FIELD, doubleJson } from "./export.ts";

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;

interface JsonWithRaw {
  rawJSON(text: string): unknown;
}

const raw = JSON as unknown as JsonWithRaw;

/**
 * JSON whose numbers JSON.stringify would write otherwise (the exports'
 * nanosecond timestamps beyond 2^53, doubles such as a request rate's `8.0`)
 * are kept as written, as JSON.rawJSON values that JSON.stringify writes back.
 */
export function parseExact(text: string): Doc {
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" && context?.source !== undefined &&
        context.source !== String(value)
        ? raw.rawJSON(context.source)
        : value,
  );
}

/** A number of a document parseExact read: kept as written, or plain. */
function numberOf(value: number | { rawJSON: string }): number {
  return typeof value === "number" ? value : Number(value.rawJSON);
}

/** A file that is neither a summary JSON nor a profile export, or runs that do not match. */
export class MergeError extends Error {
  override name = "MergeError";
}

export type MergeKind = "summary" | "export";

/** What `doc` (read from `path`) is. */
export function mergeKind(doc: unknown, path: string): MergeKind {
  const d = doc as Doc | null;
  if (d && typeof d === "object" && Array.isArray(d.levels) && "schema_version" in d) {
    return "summary";
  }
  if (d && typeof d === "object" && Array.isArray(d.experiments)) return "export";
  throw new MergeError(
    `${path} is neither a summary JSON (--summary-json) nor a profile export (--profile-export-file)`,
  );
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/**
 * A merged level's label: the runs' own value when they all ran the same one
 * (two runs at concurrency 1 are a concurrency-1 level run twice), else the
 * sum, since no single run's value then names the level.
 */
export function mergedValue(values: readonly number[]): number {
  return values.every((v) => v === values[0]) ? values[0] : sum(values);
}

/** The mean of `values` weighted by `weights` (0 when nothing weighs). */
function weighted(values: readonly number[], weights: readonly number[]): number {
  const total = sum(weights);
  return total > 0 ? sum(values.map((v, i) => v * weights[i])) / total : 0;
}

/** The standard deviation of the pooled samples, from each part's count, mean and deviation. */
function pooledStd(parts: ReadonlyArray<{ n: number; mean: number; std: number }>): number {
  const n = sum(parts.map((p) => p.n));
  if (n === 0) return 0;
  const mean = sum(parts.map((p) => p.n * p.mean)) / n;
  const squares = sum(parts.map((p) => p.n * (p.std * p.std + (p.mean - mean) ** 2)));
  return Math.sqrt(squares / n);
}

function mergeErrors(lists: ReadonlyArray<Array<{ message: string; count: number }>>) {
  const counts = new Map<string, number>();
  for (const list of lists) {
    for (const e of list) counts.set(e.message, (counts.get(e.message) ?? 0) + e.count);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([message, count]) => ({ message, count }));
}

/** Percentile keys of `objects` with each percentile of the merged histogram, microseconds. */
function histogramPercentiles(objects: readonly Doc[], histogram: LatencyHistogram): Doc {
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))].map(Number)
    .sort((a, b) => a - b);
  const ns = histogram.percentilesNs(keys);
  return Object.fromEntries(keys.map((p, i) => [String(p), ns[i] / 1000]));
}

/** Percentiles without histograms (windows): the highest of the runs', an upper bound. */
function highestPercentiles(objects: readonly Doc[]): Doc {
  const out: Doc = {};
  for (const o of objects) {
    for (const [p, v] of Object.entries(o)) out[p] = Math.max(out[p] ?? 0, v as number);
  }
  return out;
}

function mergeClient(clients: readonly Doc[], histogram: LatencyHistogram): Doc {
  const n = clients.map((c) => c.request_count as number);
  const avg = (key: string) => weighted(clients.map((c) => c[key] ?? 0), n);
  return {
    request_count: sum(n),
    response_count: sum(clients.map((c) => c.response_count)),
    error_count: sum(clients.map((c) => c.error_count)),
    errors: mergeErrors(clients.map((c) => c.errors)),
    duration_ms: Math.max(...clients.map((c) => c.duration_ms)),
    throughput: sum(clients.map((c) => c.throughput)),
    response_throughput: sum(clients.map((c) => c.response_throughput)),
    avg_latency_us: avg("avg_latency_us"),
    std_latency_us: pooledStd(
      clients.map((c) => ({ n: c.request_count, mean: c.avg_latency_us, std: c.std_latency_us })),
    ),
    percentiles_us: histogramPercentiles(clients.map((c) => c.percentiles_us), histogram),
    avg_send_us: avg("avg_send_us"),
    avg_recv_us: avg("avg_recv_us"),
    avg_wait_us: avg("avg_wait_us"),
    delayed_count: sum(clients.map((c) => c.delayed_count)),
  };
}

function mergeWindowsJson(runs: readonly Doc[][]): Doc[] {
  const count = Math.min(...runs.map((w) => w.length));
  return Array.from({ length: count }, (_, i) => {
    const ws = runs.map((w) => w[i]);
    const n = ws.map((w) => w.request_count as number);
    return {
      start_ms: ws[0].start_ms,
      end_ms: Math.max(...ws.map((w) => w.end_ms)),
      reported: ws.every((w) => w.reported),
      request_count: sum(n),
      error_count: sum(ws.map((w) => w.error_count)),
      throughput: sum(ws.map((w) => w.throughput)),
      avg_latency_us: weighted(ws.map((w) => w.avg_latency_us), n),
      std_latency_us: pooledStd(
        ws.map((w) => ({ n: w.request_count, mean: w.avg_latency_us, std: w.std_latency_us })),
      ),
      percentiles_us: highestPercentiles(ws.map((w) => w.percentiles_us)),
    };
  });
}

/**
 * The server's figures: runs against one URL share the server, whose
 * statistics already count every run's requests (the first run's are kept);
 * runs against several servers add up, times weighted by requests.
 */
function mergeServer(levels: readonly Doc[], sameServer: boolean): Doc[] | undefined {
  const lists = levels.map((l) => l.server as Doc[] | undefined);
  if (lists.some((s) => s === undefined)) return undefined;
  if (sameServer) return lists[0];
  return lists[0]!.map((first: Doc, i: number) => {
    const entries = lists.map((s) => s![i]);
    const n = entries.map((e) => e.success_count as number);
    const out: Doc = { model: first.model, version: first.version };
    for (const key of Object.keys(first)) {
      if (key === "model" || key === "version") continue;
      out[key] = key.endsWith("_count")
        ? sum(entries.map((e) => e[key]))
        : weighted(entries.map((e) => e[key]), n);
    }
    return out;
  });
}

function mergeOpenLoop(levels: readonly Doc[]): Doc | undefined {
  const parts = levels.map((l) => l.open_loop as Doc | undefined);
  if (parts.some((p) => p === undefined)) return undefined;
  const o = parts as Doc[];
  const n = levels.map((l) => l.client.request_count as number);
  const lagP99 = Math.max(...o.map((p) => p.send_lag_p99_us));
  return {
    corrected_avg_latency_us: weighted(o.map((p) => p.corrected_avg_latency_us), n),
    corrected_std_latency_us: pooledStd(
      o.map((p, i) => ({
        n: n[i],
        mean: p.corrected_avg_latency_us,
        std: p.corrected_std_latency_us,
      })),
    ),
    corrected_percentiles_us: highestPercentiles(o.map((p) => p.corrected_percentiles_us)),
    send_count: sum(o.map((p) => p.send_count)),
    send_rate: sum(o.map((p) => p.send_rate)),
    send_lag_p50_us: Math.max(...o.map((p) => p.send_lag_p50_us)),
    send_lag_p99_us: lagP99,
    send_lag_max_us: Math.max(...o.map((p) => p.send_lag_max_us)),
    blocked_count: sum(o.map((p) => p.blocked_count)),
    max_send_lag_us: o[0].max_send_lag_us,
    trustworthy: o.every((p) => p.trustworthy),
  };
}

function mergeLevel(levels: readonly Doc[], sameServer: boolean): Doc {
  const histogram = LatencyHistogram.merge(
    levels.map((l) => LatencyHistogram.decode(l.latency_histogram)),
  );
  const n = levels.map((l) => l.client.request_count as number);
  const components: Doc = {};
  for (const key of Object.keys(levels[0].latency_components_us)) {
    components[key] = weighted(levels.map((l) => l.latency_components_us[key]), n);
  }
  const level: Doc = {
    mode: levels[0].mode,
    value: mergedValue(levels.map((l) => l.value)),
    merged_runs: levels.length,
    merged_total_value: sum(levels.map((l) => l.value)),
    stable: levels.every((l) => l.stable),
    client: mergeClient(levels.map((l) => l.client), histogram),
    latency_components_us: components,
    latency_histogram: histogram.encode(),
    windows: mergeWindowsJson(levels.map((l) => l.windows)),
  };
  const server = mergeServer(levels, sameServer);
  if (server) level.server = server;
  const openLoop = mergeOpenLoop(levels);
  if (openLoop) level.open_loop = openLoop;
  return level;
}

/**
 * Summaries merged level by level (as many as the shortest run has). GPU
 * metrics and LLM figures are left out: they do not add up across runs.
 */
export function mergeSummaries(docs: readonly Doc[]): Doc {
  const [first] = docs;
  for (const d of docs) {
    if (d.settings.mode !== first.settings.mode) {
      throw new MergeError(
        `runs of different load modes can not be merged: ${first.settings.mode} and ${d.settings.mode}`,
      );
    }
  }
  const sameServer = docs.every((d) => d.settings.url === first.settings.url);
  const count = Math.min(...docs.map((d) => d.levels.length));
  const merged: Doc = {
    ...first,
    run_start_unix_ms: Math.min(...docs.map((d) => d.run_start_unix_ms)),
    levels: Array.from(
      { length: count },
      (_, i) => mergeLevel(docs.map((d) => d.levels[i]), sameServer),
    ),
  };
  const notes = docs.flatMap((d) => d.note === undefined ? [] : [d.note]);
  if (notes.length > 0) merged.note = notes[0];
  return merged;
}

/** A timestamp read as a number, or as the JSON.rawJSON that keeps its digits. */
function nanoseconds(value: number | { rawJSON: string }): bigint {
  return typeof value === "number" ? BigInt(Math.round(value)) : BigInt(value.rawJSON);
}

/** A level's value as perf_analyzer writes it: a request rate as a double. */
function experimentValue(mode: string, value: number): unknown {
  return mode === "request_rate" ? raw.rawJSON(doubleJson(value)) : value;
}

function sortedRequests(
  experiments: readonly Doc[],
  key: "requests" | "failed_requests" = "requests",
): Doc[] {
  const requests = experiments.flatMap((e) => (e[key] ?? []) as Doc[]);
  const keyed = requests.map((r) => ({ r, ns: nanoseconds(r.timestamp) }));
  keyed.sort((a, b) => a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0);
  return keyed.map((k) => k.r);
}

/**
 * --shard: rank 0's export (the merged windows, the whole load's levels)
 * with the other ranks' requests added to each experiment.
 */
export function addShardRequests(base: Doc, others: readonly Doc[]): Doc {
  const experiments = (base.experiments as Doc[]).map((experiment, i) => ({
    ...experiment,
    requests: sortedRequests([experiment, ...others.flatMap((o) => o.experiments[i] ?? [])]),
    failed_requests: sortedRequests(
      [experiment, ...others.flatMap((o) => o.experiments[i] ?? [])],
      "failed_requests",
    ),
  }));
  return { ...base, experiments };
}

/**
 * Profile exports merged experiment by experiment: every run's requests in
 * one list by send time, the window boundaries of the first run (exports'
 * times are wall-clock nanoseconds, comparable across synchronized hosts)
 * and each window's latency histograms merged.
 */
export function mergeExports(docs: readonly Doc[]): Doc {
  const [first] = docs;
  const count = Math.min(...docs.map((d) => d.experiments.length));
  const experiments = Array.from({ length: count }, (_, i) => {
    const runs = docs.map((d) => d.experiments[i]);
    const histograms = runs.map((r) => r.window_latency_histograms as string[] | undefined);
    const windows = Math.min(...histograms.map((h) => h?.length ?? 0));
    const requests = sortedRequests(runs);
    const experiment: Doc = {
      ...runs[0],
      experiment: {
        ...runs[0].experiment,
        value: experimentValue(
          runs[0].experiment.mode,
          mergedValue(runs.map((r) => numberOf(r.experiment.value))),
        ),
      },
      requests,
      failed_requests: sortedRequests(runs, "failed_requests"),
    };
    // One run that sent late puts the merged level behind schedule.
    if (runs.some((r) => r[BEHIND_SCHEDULE_FIELD])) experiment[BEHIND_SCHEDULE_FIELD] = true;
    if (windows > 0) {
      experiment.window_latency_histograms = Array.from(
        { length: windows },
        (_, w) =>
          LatencyHistogram.merge(histograms.map((h) => LatencyHistogram.decode(h![w]))).encode(),
      );
    }
    return experiment;
  });
  return { ...first, experiments };
}
