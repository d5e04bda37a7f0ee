/**
 * The one table of a level's figures by name: what the summary JSON calls
 * them, the names perf_analyzer, Model Analyzer, genai-perf and AIPerf use
 * for them, their units and how to read them from a LevelResult. The SLOs
 * (slo.ts), the CI thresholds and the sweep's goals (lib/sweep/goals.ts)
 * all read figures through it, so that a name means the same everywhere.
 */
import type { Distribution, LevelResult, LlmSummary } from "../types/results.ts";
import { LLM_PERCENTILES } from "./tokens.ts";

/** An LLM metric with a distribution per level (genai-perf's rows). */
export interface LlmMetric {
  /** genai-perf's or AIPerf's metric name, e.g. "time_to_first_token"; inferperf's own otherwise. */
  name: string;
  unit: "ms" | "tokens" | "tokens/sec" | "tokens/sec/user" | "%";
  /** The distribution in `unit`; undefined when the level has none. */
  of(l: LlmSummary): Distribution | undefined;
}

function scaled(d: Distribution | undefined, by: number): Distribution | undefined {
  if (d === undefined) return undefined;
  return {
    avg: d.avg * by,
    std: d.std * by,
    min: d.min * by,
    max: d.max * by,
    percentiles: new Map([...d.percentiles].map(([p, v]) => [p, v * by])),
  };
}

const ms = (d: Distribution | undefined) => scaled(d, 1e-3);

/** The LLM metrics every output reports, in genai-perf's order, names and units. */
export const LLM_METRICS: readonly LlmMetric[] = [
  { name: "time_to_first_token", unit: "ms", of: (l) => ms(l.timeToFirstTokenUs) },
  { name: "time_to_second_token", unit: "ms", of: (l) => ms(l.timeToSecondTokenUs) },
  { name: "request_latency", unit: "ms", of: (l) => ms(l.requestLatencyUs) },
  { name: "inter_token_latency", unit: "ms", of: (l) => ms(l.interTokenLatencyUs) },
  // AIPerf's: every gap between consecutive chunks, not one mean per request.
  { name: "inter_chunk_latency", unit: "ms", of: (l) => ms(l.interChunkLatencyUs) },
  {
    name: "output_token_throughput_per_user",
    unit: "tokens/sec/user",
    of: (l) => l.outputTokenThroughputPerUser,
  },
  { name: "prefill_throughput", unit: "tokens/sec", of: (l) => l.prefillThroughput },
  { name: "output_sequence_length", unit: "tokens", of: (l) => l.outputSequenceLength },
  { name: "reasoning_token_count", unit: "tokens", of: (l) => l.reasoningTokenCount },
  { name: "input_sequence_length", unit: "tokens", of: (l) => l.inputSequenceLength },
  // inferperf's: the prompt as the server counted it (chat template included).
  {
    name: "server_input_sequence_length",
    unit: "tokens",
    of: (l) => l.serverInputSequenceLength,
  },
  // The usage's cached prompt tokens (prompt_tokens_details.cached_tokens).
  { name: "cached_prompt_token_count", unit: "tokens", of: (l) => l.cachedPromptTokens },
  // AIPerf's client-vs-server and asked-vs-answered differences (usage_check.ts).
  { name: "usage_prompt_tokens_diff", unit: "%", of: (l) => l.usagePromptDiffPct },
  { name: "usage_completion_tokens_diff", unit: "%", of: (l) => l.usageCompletionDiffPct },
  { name: "usage_reasoning_tokens_diff", unit: "%", of: (l) => l.usageReasoningDiffPct },
  { name: "osl_mismatch_diff", unit: "%", of: (l) => l.oslMismatchDiffPct },
  {
    name: "corrected_time_to_first_token",
    unit: "ms",
    of: (l) => ms(l.corrected?.timeToFirstTokenUs),
  },
  { name: "corrected_request_latency", unit: "ms", of: (l) => ms(l.corrected?.requestLatencyUs) },
];

/** A statistic of a distribution: "avg", "std", "min", "max" or "pN". */
export function statistic(d: Distribution, name: string): number | undefined {
  switch (name) {
    case "avg":
      return d.avg;
    case "std":
      return d.std;
    case "min":
      return d.min;
    case "max":
      return d.max;
    default:
      return d.percentiles.get(Number(name.slice(1)));
  }
}

export type MetricUnit =
  | "msec"
  | "infer/sec"
  | "req/sec"
  | "tokens/sec"
  | "tokens/sec/user"
  | "tokens"
  | "MB"
  | "requests"
  | "fraction"
  | "%";

/** Which levels have a figure: every level, token-streaming (LLM) levels, open-loop levels... */
export type MetricScope = "every" | "llm" | "open_loop" | "server_ram";

export interface MetricDef {
  /** The summary JSON's name (without its unit suffix). */
  name: string;
  /** perf_analyzer's, Model Analyzer's, AIPerf's and short names for it. */
  aliases: readonly string[];
  unit: MetricUnit;
  higherIsBetter: boolean;
  scope: MetricScope;
  /** Distributions: the statistics besides the percentiles ("avg", "std", "min", "max"). */
  statistics?: readonly string[];
  /** Distributions: a statistic in `unit`, undefined when not measured. */
  stat?(r: LevelResult, statistic: string): number | undefined;
  /** Single figures: the value in `unit`, undefined when not measured. */
  value?(r: LevelResult): number | undefined;
  /** Whose requests have a value each, by --goodput's name (per-request SLOs). */
  perRequest?:
    | "time_to_first_token"
    | "time_to_second_token"
    | "inter_token_latency"
    | "request_latency"
    | "output_token_throughput_per_user";
  /** What users read when it is not the name with spaces. */
  label?: string;
  /** A rate that grows with the load until the server saturates (throughputs, goodput). */
  growsWithLoad?: boolean;
}

/** A statistic in msec of latencies kept as an average, deviation and percentiles in us. */
function latencyStat(
  figures: { avgUs: number; stdUs: number; percentilesUs: Map<number, number> } | undefined,
  s: string,
): number | undefined {
  if (figures === undefined) return undefined;
  const us = s === "avg"
    ? figures.avgUs
    : s === "std"
    ? figures.stdUs
    : s.startsWith("p")
    ? figures.percentilesUs.get(Number(s.slice(1)))
    : undefined;
  return us === undefined ? undefined : us / 1000;
}

/** perf_analyzer's client latency. */
const clientLatency = (r: LevelResult, s: string) =>
  latencyStat({
    avgUs: r.client.avgLatencyUs,
    stdUs: r.client.stdLatencyUs,
    percentilesUs: r.client.percentilesUs,
  }, s);

function llmStat(of: LlmMetric["of"]) {
  return (r: LevelResult, s: string) => {
    const d = r.llm && of(r.llm);
    return d === undefined ? undefined : statistic(d, s);
  };
}

const llmMetric = (name: string) => LLM_METRICS.find((m) => m.name === name)!;

function llmDistribution(
  name: string,
  extra: Partial<MetricDef> & { aliases: readonly string[] },
): MetricDef {
  const m = llmMetric(name);
  return {
    name,
    unit: m.unit === "ms" ? "msec" : m.unit,
    higherIsBetter: m.unit === "tokens/sec" || m.unit === "tokens/sec/user",
    scope: "llm",
    statistics: ["avg", "std", "min", "max"],
    stat: llmStat(m.of),
    ...extra,
  };
}

const seconds = (r: LevelResult) => r.client.durationMs / 1000;

/** Every level's requests, valid and failed. */
function attempted(r: LevelResult): number {
  return r.client.requestCount + r.client.errorCount;
}

/** Requests that met every per-request SLO (--goodput objectives), or undefined without them. */
export function goodCount(r: LevelResult): number | undefined {
  return r.llm ? r.llm.goodput?.goodCount : r.client.goodCount;
}

export const METRICS: readonly MetricDef[] = [
  {
    name: "request_latency",
    aliases: ["e2e_latency", "latency_ms", "request_latency_ms"],
    unit: "msec",
    higherIsBetter: false,
    scope: "every",
    statistics: ["avg", "std"],
    // LLM levels: send to the last output (AIPerf's); otherwise the client latency.
    stat: (r, s) => r.llm ? llmStat(llmMetric("request_latency").of)(r, s) : clientLatency(r, s),
    perRequest: "request_latency",
  },
  {
    name: "latency",
    aliases: ["client_latency", "perf_latency"],
    unit: "msec",
    higherIsBetter: false,
    scope: "every",
    statistics: ["avg", "std"],
    stat: clientLatency,
  },
  llmDistribution("time_to_first_token", {
    aliases: ["ttft"],
    perRequest: "time_to_first_token",
  }),
  llmDistribution("time_to_second_token", {
    aliases: ["ttst"],
    perRequest: "time_to_second_token",
  }),
  llmDistribution("inter_token_latency", {
    aliases: ["itl", "tpot", "time_per_output_token"],
    perRequest: "inter_token_latency",
  }),
  llmDistribution("inter_chunk_latency", { aliases: ["icl"] }),
  llmDistribution("output_token_throughput_per_user", {
    aliases: ["tps_per_user"],
    perRequest: "output_token_throughput_per_user",
  }),
  llmDistribution("prefill_throughput", { aliases: [] }),
  llmDistribution("output_sequence_length", { aliases: ["osl"], higherIsBetter: true }),
  llmDistribution("input_sequence_length", { aliases: ["isl"], higherIsBetter: true }),
  {
    name: "corrected_request_latency",
    aliases: ["corrected_latency"],
    unit: "msec",
    higherIsBetter: false,
    scope: "open_loop",
    statistics: ["avg", "std"],
    stat: (r, s) => {
      const o = r.openLoop;
      return latencyStat(
        o &&
          {
            avgUs: o.correctedAvgUs,
            stdUs: o.correctedStdUs,
            percentilesUs: o.correctedPercentilesUs,
          },
        s,
      );
    },
  },
  llmDistribution("corrected_time_to_first_token", { aliases: [], scope: "llm" }),
  {
    name: "throughput",
    growsWithLoad: true,
    aliases: ["perf_throughput", "inferences_per_second", "infer_per_sec"],
    unit: "infer/sec",
    higherIsBetter: true,
    scope: "every",
    value: (r) => r.client.throughput,
  },
  {
    name: "request_throughput",
    growsWithLoad: true,
    aliases: ["requests_per_second", "rps"],
    unit: "req/sec",
    higherIsBetter: true,
    scope: "every",
    value: (r) =>
      r.llm ? r.llm.requestThroughput : seconds(r) > 0 ? r.client.requestCount / seconds(r) : 0,
  },
  {
    name: "response_throughput",
    growsWithLoad: true,
    aliases: [],
    unit: "req/sec",
    higherIsBetter: true,
    scope: "every",
    value: (r) => r.client.responseThroughput,
  },
  {
    name: "output_token_throughput",
    growsWithLoad: true,
    aliases: ["tokens_per_second"],
    unit: "tokens/sec",
    higherIsBetter: true,
    scope: "llm",
    value: (r) => r.llm?.outputTokenThroughput,
  },
  {
    name: "request_goodput",
    growsWithLoad: true,
    aliases: ["goodput"],
    unit: "req/sec",
    higherIsBetter: true,
    scope: "every",
    value: (r) => {
      const good = goodCount(r);
      if (good === undefined) return undefined;
      return r.llm ? r.llm.goodput!.requestGoodput : seconds(r) > 0 ? good / seconds(r) : 0;
    },
  },
  {
    name: "good_request_fraction",
    aliases: ["slo_attainment", "attainment"],
    unit: "fraction",
    higherIsBetter: true,
    scope: "every",
    // Failed requests met no SLO.
    value: (r) => {
      const good = goodCount(r);
      const all = r.llm ? r.llm.requestCount + r.client.errorCount : attempted(r);
      return good === undefined ? undefined : all > 0 ? good / all : 0;
    },
  },
  {
    name: "error_count",
    aliases: ["failed_requests"],
    unit: "requests",
    higherIsBetter: false,
    scope: "every",
    value: (r) => r.client.errorCount,
  },
  {
    name: "error_rate",
    aliases: ["error_fraction"],
    unit: "fraction",
    higherIsBetter: false,
    scope: "every",
    value: (r) => attempted(r) > 0 ? r.client.errorCount / attempted(r) : 0,
  },
  {
    name: "cpu_used_ram",
    aliases: ["server_ram"],
    unit: "MB",
    higherIsBetter: false,
    scope: "server_ram",
    label: "server RAM",
    value: (r) => r.serverRamMb,
  },
];

/** The unit suffixes of the summary JSON's keys (`time_to_first_token_ms`, `request_throughput_per_sec`). */
const UNIT_SUFFIX = /_(ms|tokens(_per_sec(_per_user)?)?|per_sec)$/;

/**
 * The metric named `name`, one of its aliases or its summary JSON key (`-`
 * read as `_`), or undefined.
 */
export function findMetric(name: string): MetricDef | undefined {
  const key = name.trim().toLowerCase().replaceAll("-", "_");
  const named = (k: string) => METRICS.find((m) => m.name === k || m.aliases.includes(k));
  return named(key) ?? named(key.replace(UNIT_SUFFIX, ""));
}

/** A figure of a level: a metric with its statistic (none for single figures). */
export interface Metric {
  /** As given, e.g. "p99-latency" or "time_to_first_token:p90". */
  name: string;
  /** What users read: "throughput", "p99 latency". */
  label: string;
  unit: MetricUnit;
  higherIsBetter: boolean;
  def: MetricDef;
  /** "avg", "std", "min", "max", "pN"; undefined for single figures. */
  statistic?: string;
  /** The figure of a measured level; undefined when it was not measured (a percentile). */
  value(result: LevelResult): number | undefined;
}

/** "avg", "std", "min", "max" or "pN" (N a number in (0, 100)), "mean" read as "avg". */
function normalStatistic(text: string): string | undefined {
  const s = text.trim().toLowerCase();
  if (s === "mean" || s === "average") return "avg";
  if (["avg", "std", "min", "max"].includes(s)) return s;
  const p = /^p(\d+(?:\.\d+)?)$/.exec(s);
  return p && Number(p[1]) > 0 && Number(p[1]) < 100 ? `p${Number(p[1])}` : undefined;
}

/**
 * `def` with `statistic` ("avg", "p99"; undefined for single figures), or a
 * one-line reason why not (the statistics it has, listed).
 */
export function metricOf(
  def: MetricDef,
  options: { statistic?: string; name?: string },
): Metric | string {
  const given = options.statistic;
  if (def.stat === undefined) {
    // A single figure also reads as its own "avg".
    if (given !== undefined && normalStatistic(given) !== "avg") {
      return `metric ${def.name} is a single figure per level and takes no statistic`;
    }
    const label = def.label ?? def.name.replaceAll("_", " ");
    return {
      name: options.name ?? def.name,
      label,
      unit: def.unit,
      higherIsBetter: def.higherIsBetter,
      def,
      value: def.value!,
    };
  }
  const s = given === undefined ? undefined : normalStatistic(given);
  if (s === undefined || !(s.startsWith("p") || def.statistics!.includes(s))) {
    return `${
      given === undefined ? "no statistic" : `unknown statistic "${given}"`
    } for ${def.name}: expected ${[...def.statistics!, "pN"].join(", ")} (N in 1..99)`;
  }
  const stat = def.stat;
  return {
    name: options.name ?? `${def.name}:${s}`,
    label: `${s} ${def.label ?? def.name.replaceAll("_", " ")}`,
    unit: def.unit,
    higherIsBetter: def.higherIsBetter,
    def,
    statistic: s,
    value: (r) => stat(r, s),
  };
}

/**
 * The percentiles a metric's levels have: perf_analyzer's client latency
 * p50, p90, p95, p99 and --percentile; LLM distributions (`llm`: the run
 * streams tokens) genai-perf's too.
 */
export function measuredPercentiles(
  def: MetricDef,
  options: { llm: boolean; percentile?: number },
): number[] {
  const fromLlm = def.scope === "llm" || (def.name === "request_latency" && options.llm);
  const base = fromLlm ? LLM_PERCENTILES : [50, 90, 95, 99];
  const extra = options.percentile === undefined ? [] : [options.percentile];
  return [...new Set([...base, ...extra])].sort((a, b) => a - b);
}

/** Every metric name with its statistics, for the one-line message of an unknown one. */
export const METRIC_NAMES_HELP = METRICS.map((m) => m.stat ? `${m.name}:STAT` : m.name).join(", ");
