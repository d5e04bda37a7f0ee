/**
 * What makes a sweep point the best of its model: an objective (a metric to
 * maximize or minimize) and constraints (bounds on metrics), as Model
 * Analyzer's objectives and constraints.
 */
import { UsageError } from "../types/errors.ts";
import type { LevelResult } from "../types/results.ts";
import { measuredPercentiles, type Metric } from "../measure/metrics.ts";
import { parseMetricName } from "../measure/slo.ts";
import { formatGeneral } from "../report/format.ts";

export type { Metric };

export interface Constraint {
  metric: Metric;
  bound: "min" | "max";
  limit: number;
}

export interface Goals {
  objective: Metric;
  constraints: Constraint[];
}

/**
 * The metric named `given` (throughput, avg-latency, pN-latency; Model
 * Analyzer's perf_throughput, perf_latency_avg, perf_latency_pN,
 * cpu_used_ram; genai-perf's avg-/pN-time-to-first-token...; any name of
 * lib/measure/metrics.ts), or undefined. Latencies are in milliseconds, like -l.
 */
export function parseMetric(given: string): Metric | undefined {
  // AIPerf's snake_case with the statistic after (time_to_first_token_p90): constraints' keys.
  const suffixed = given.startsWith("perf_latency_")
    ? null
    : /^([a-z][a-z_]*[a-z])_(avg|std|min|max|p\d+)$/.exec(given);
  const name = MODEL_ANALYZER_NAMES[given] ??
    (suffixed
      ? `${suffixed[1]}:${suffixed[2]}`
      : given.replace(/^perf_latency_(p\d+|avg)$/, "$1-latency"));
  const metric = parseMetricName(name);
  // A bound on each request is no figure of a point.
  if (typeof metric === "string" || metric.def.stat !== undefined && !metric.statistic) {
    return undefined;
  }
  return { ...metric, name: suffixed ? given : name };
}

/** Model Analyzer's metric names for the sweeps' own. */
const MODEL_ANALYZER_NAMES: Readonly<Record<string, string>> = {
  perf_throughput: "throughput",
  perf_latency: "p99-latency",
};

const METRICS_HELP =
  "throughput, avg-latency or pN-latency (N from 1 to 99), Model Analyzer's perf_throughput, perf_latency_avg, perf_latency_pN or cpu_used_ram, or for LLM runs request-goodput, output-token-throughput or avg- or pN-time-to-first-token, -time-to-second-token, -inter-token-latency, -request-latency (also AIPerf's names with the statistic after: time_to_first_token_p90, output_token_throughput_per_user_avg)";

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
    objective: metric ?? parseMetric("throughput")!,
    constraints: parseConstraints(constraints, errors),
  };
  if (options.percentiles) {
    for (const m of [goals.objective, ...goals.constraints.map((c) => c.metric)]) {
      const p = m.statistic?.startsWith("p") ? Number(m.statistic.slice(1)) : undefined;
      // The client latency has --percentile's; LLM distributions genai-perf's too.
      const measured = m.def.name === "latency"
        ? options.percentiles
        : measuredPercentiles(m.def, { llm: true }).concat(options.percentiles);
      if (p !== undefined && !measured.includes(p)) {
        errors.push(
          `Metric "${m.name}" needs --percentile ${p}: points report ${
            options.percentiles.map((q) => `p${q}`).join(", ")
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

/** Whether `result` meets every constraint (stability and failures aside). */
export function meetsConstraints(result: LevelResult, goals: Goals): boolean {
  return goals.constraints.every((c) => violation(result, c) === undefined);
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
