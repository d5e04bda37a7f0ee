/**
 * What makes a sweep point the best of its model: an objective (a metric to
 * maximize or minimize) and constraints (bounds on metrics), as Model
 * Analyzer's objectives and constraints.
 */
import { UsageError } from "../types/errors.ts";
import type { LevelResult, LlmSummary } from "../types/results.ts";
import { LLM_PERCENTILES } from "../measure/tokens.ts";
import { formatGeneral } from "../report/format.ts";

export interface Metric {
  /** throughput, avg-latency or pN-latency. */
  name: string;
  /** What users read: "throughput", "p99 latency". */
  label: string;
  unit: "infer/sec" | "msec" | "MB" | "req/sec" | "tokens/sec";
  higherIsBetter: boolean;
  /** The metric of a measured point; undefined when it was not measured (a percentile). */
  value(result: LevelResult): number | undefined;
}

export interface Constraint {
  metric: Metric;
  bound: "min" | "max";
  limit: number;
}

export interface Goals {
  objective: Metric;
  constraints: Constraint[];
}

const THROUGHPUT: Metric = {
  name: "throughput",
  label: "throughput",
  unit: "infer/sec",
  higherIsBetter: true,
  value: (r) => r.client.throughput,
};

const AVG_LATENCY: Metric = {
  name: "avg-latency",
  label: "avg latency",
  unit: "msec",
  higherIsBetter: false,
  value: (r) => r.client.avgLatencyUs / 1000,
};

const CPU_USED_RAM: Metric = {
  name: "cpu_used_ram",
  label: "server RAM",
  unit: "MB",
  higherIsBetter: false,
  value: (r) => r.serverRamMb,
};

/** LLM runs (--service-kind openai): genai-perf's rates. */
const LLM_RATES: readonly Metric[] = [
  {
    name: "request-goodput",
    label: "request goodput",
    unit: "req/sec",
    higherIsBetter: true,
    value: (r) => r.llm?.goodput?.requestGoodput,
  },
  {
    name: "output-token-throughput",
    label: "output token throughput",
    unit: "tokens/sec",
    higherIsBetter: true,
    value: (r) => r.llm?.outputTokenThroughput,
  },
];

/** LLM runs: the per-request latencies by genai-perf's names, with `avg-` or `pN-` before. */
const LLM_LATENCIES = {
  "time-to-first-token": (l: LlmSummary) => l.timeToFirstTokenUs,
  "time-to-second-token": (l: LlmSummary) => l.timeToSecondTokenUs,
  "inter-token-latency": (l: LlmSummary) => l.interTokenLatencyUs,
  "request-latency": (l: LlmSummary) => l.requestLatencyUs,
} as const;

/** `avg-time-to-first-token`, `p99-inter-token-latency`...: an LLM latency, or undefined. */
function llmLatency(name: string): Metric | undefined {
  const match = /^(avg|p([1-9]\d?))-([a-z-]+)$/.exec(name);
  const of = match ? LLM_LATENCIES[match[3] as keyof typeof LLM_LATENCIES] : undefined;
  if (!match || of === undefined) return undefined;
  const p = match[2] === undefined ? undefined : Number(match[2]);
  return {
    name,
    label: `${match[1]} ${match[3].replaceAll("-", " ")}`,
    unit: "msec",
    higherIsBetter: false,
    value: (r) => {
      const d = r.llm && of(r.llm);
      const us = d === undefined ? undefined : p === undefined ? d.avg : d.percentiles.get(p);
      return us === undefined ? undefined : us / 1000;
    },
  };
}

/** Model Analyzer's metric names for ours. */
const MODEL_ANALYZER_NAMES: Readonly<Record<string, string>> = {
  perf_throughput: "throughput",
  perf_latency_avg: "avg-latency",
  perf_latency: "p99-latency",
};

/**
 * The metric named `name` (ours, or Model Analyzer's: perf_throughput,
 * perf_latency_avg, perf_latency_pN, cpu_used_ram), or undefined. Latencies
 * are in milliseconds, like -l.
 */
export function parseMetric(given: string): Metric | undefined {
  const name = MODEL_ANALYZER_NAMES[given] ??
    given.replace(/^perf_latency_p(\d+)$/, "p$1-latency");
  if (name === THROUGHPUT.name) return THROUGHPUT;
  if (name === AVG_LATENCY.name) return AVG_LATENCY;
  if (name === CPU_USED_RAM.name) return CPU_USED_RAM;
  const rate = LLM_RATES.find((m) => m.name === name);
  if (rate !== undefined) return rate;
  const match = /^p([1-9]\d?)-latency$/.exec(name);
  if (!match) return llmLatency(name);
  const p = Number(match[1]);
  return {
    name,
    label: `p${p} latency`,
    unit: "msec",
    higherIsBetter: false,
    value: (r) => {
      const us = r.client.percentilesUs.get(p);
      return us === undefined ? undefined : us / 1000;
    },
  };
}

const METRICS_HELP =
  "throughput, avg-latency or pN-latency (N from 1 to 99), Model Analyzer's perf_throughput, perf_latency_avg, perf_latency_pN or cpu_used_ram, or for LLM runs request-goodput, output-token-throughput or avg- or pN-time-to-first-token, -time-to-second-token, -inter-token-latency, -request-latency";

/** `min-METRIC=N` / `max-METRIC=N` entries, each possibly a comma-delimited list of them. */
function parseConstraints(entries: readonly string[], errors: string[]): Constraint[] {
  const constraints: Constraint[] = [];
  for (const item of entries.flatMap((e) => e.split(",")).map((s) => s.trim())) {
    if (item === "") continue;
    const match = /^(min|max)-([a-z0-9_-]+)\s*=\s*(.+)$/.exec(item);
    const metric = match ? parseMetric(match[2]!) : undefined;
    const limit = Number(match?.[3]);
    if (!match || !metric || !Number.isFinite(limit) || limit < 0) {
      errors.push(
        `Invalid constraint "${item}" for --constraints: expected min-METRIC=N or max-METRIC=N ` +
          `with METRIC ${METRICS_HELP} and N >= 0`,
      );
      continue;
    }
    constraints.push({ metric, bound: match[1] as "min" | "max", limit });
  }
  return constraints;
}

/**
 * Parses --objective and --constraints; throws UsageError listing every
 * problem. `percentiles` are the latency percentiles the points will have.
 */
export function parseGoals(
  objective: string,
  constraints: readonly string[],
  options: { percentiles?: readonly number[] } = {},
): Goals {
  const errors: string[] = [];
  const metric = parseMetric(objective);
  if (!metric) {
    errors.push(`Invalid value "${objective}" for --objective: expected ${METRICS_HELP}`);
  }
  const goals = {
    objective: metric ?? THROUGHPUT,
    constraints: parseConstraints(constraints, errors),
  };
  if (options.percentiles) {
    const measured = new Set(options.percentiles);
    for (const m of [goals.objective, ...goals.constraints.map((c) => c.metric)]) {
      // LLM latencies have genai-perf's percentiles besides --percentile.
      const p = /^p(\d+)-/.exec(m.name)?.[1];
      const llm = m.name !== `p${p}-latency` && LLM_PERCENTILES.includes(Number(p));
      if (p !== undefined && !llm && !measured.has(Number(p))) {
        errors.push(
          `Metric "${m.name}" needs --percentile ${p}: points report ${
            [...measured].map((q) => `p${q}`).join(", ")
          } latency`,
        );
      }
    }
  }
  if (errors.length > 0) throw new UsageError(errors);
  return goals;
}

/** `max-p99-latency=20`: the form --constraints takes, for checkpoints and reports. */
export function constraintText(c: Constraint): string {
  return `${c.bound}-${c.metric.name}=${c.limit}`;
}

/** `highest throughput; constraints: max-p99-latency=20`: what the best points are judged by. */
export function describeGoals(goals: Goals): string {
  const aim = goals.objective.higherIsBetter ? "highest" : "lowest";
  const constraints = goals.constraints.length > 0
    ? `; constraints: ${goals.constraints.map(constraintText).join(", ")}`
    : "";
  return `${aim} ${goals.objective.label}${constraints}`;
}

/** `12.5 infer/sec`, `3.142 msec`: a metric's value as reports show it (latencies to the usec). */
export function formatMetric(metric: Metric, value: number): string {
  return `${
    formatGeneral(metric.unit === "msec" ? Number(value.toFixed(3)) : value)
  } ${metric.unit}`;
}

/** What reports say of a model none of whose points can be the best. */
export const NO_BEST_POINT =
  "none; no point is stable, free of failed requests and within the constraints";

/** Why `result` breaks a constraint, or undefined when it meets it. */
function violation(result: LevelResult, c: Constraint): string | undefined {
  const value = c.metric.value(result);
  if (value === undefined) return `${c.metric.label} not measured`;
  const ok = c.bound === "min" ? value >= c.limit : value <= c.limit;
  if (ok) return undefined;
  const shown = Number(value.toFixed(value < 10 ? 3 : 1));
  return `${c.metric.label} ${shown} ${c.bound === "min" ? "<" : ">"} ${c.limit} ${c.metric.unit}`;
}

export interface Verdict {
  /** Why the point can not be the best: unstable, failed requests, broken constraints. */
  reasons: string[];
  best: boolean;
}

/**
 * Judges points: those that are stable, had no failed request, sent on time
 * (open loop) and meet every constraint compete on the objective within their group (the model); the
 * first of equal points wins.
 */
export function judge<T>(
  points: readonly T[],
  options: { goals: Goals; result: (point: T) => LevelResult; group: (point: T) => string },
): Verdict[] {
  const { goals } = options;
  const verdicts = points.map((point): Verdict => {
    const result = options.result(point);
    const reasons: string[] = [];
    if (!result.stable) reasons.push("unstable");
    if (result.client.errorCount > 0) reasons.push(`${result.client.errorCount} failed requests`);
    if (result.openLoop && result.openLoop.behindSchedule) {
      reasons.push("send lag over --max-send-lag");
    }
    if (goals.objective.value(result) === undefined) {
      reasons.push(`${goals.objective.label} not measured`);
    }
    for (const c of goals.constraints) {
      const why = violation(result, c);
      if (why) reasons.push(why);
    }
    return { reasons: [...new Set(reasons)], best: false };
  });
  const bestByGroup = new Map<string, { index: number; value: number }>();
  points.forEach((point, index) => {
    if (verdicts[index]!.reasons.length > 0) return;
    const value = goals.objective.value(options.result(point))!;
    const group = options.group(point);
    const current = bestByGroup.get(group);
    const better = !current ||
      (goals.objective.higherIsBetter ? value > current.value : value < current.value);
    if (better) bestByGroup.set(group, { index, value });
  });
  for (const { index } of bestByGroup.values()) verdicts[index]!.best = true;
  return verdicts;
}
