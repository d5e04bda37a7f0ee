/**
 * Model Analyzer's weighted objectives: two measurements are compared by the
 * weighted sum of each objective's gain relative to the mean of the two
 * values (throughput up, latency and memory down); a positive score means
 * the first is better. Each configuration competes with its best point that
 * meets the constraints.
 */
import { type Goals, judge, type Metric, parseMetric } from "../sweep/mod.ts";
import { UsageError } from "../types/errors.ts";
import type { LevelResult } from "../types/results.ts";

export interface Objective {
  metric: Metric;
  /** Normalized: the weights of a model's objectives sum to 1. */
  weight: number;
}
export type Objectives = readonly Objective[];

/** `perf_throughput=10` entries (a bare name weighs 1); default perf_throughput. Throws UsageError. */
export function parseObjectives(entries: readonly string[]): Objectives {
  const errors: string[] = [];
  const parsed: Array<{ metric: Metric; weight: number }> = [];
  for (const entry of entries.length > 0 ? entries : ["perf_throughput"]) {
    const [name = "", weightText = "1"] = entry.split("=").map((s) => s.trim());
    const metric = parseMetric(name);
    const weight = Number(weightText);
    if (!metric || !Number.isFinite(weight) || weight <= 0) {
      errors.push(
        `Invalid objective "${entry}" for --objectives: expected METRIC=WEIGHT with METRIC perf_throughput, perf_latency_avg, perf_latency_pN, cpu_used_ram or an LLM metric (output_token_throughput, output_token_throughput_per_user, request_throughput, request_goodput, time_to_first_token_p90, ...) and WEIGHT > 0`,
      );
      continue;
    }
    parsed.push({ metric, weight });
  }
  if (errors.length > 0) throw new UsageError(errors);
  const total = parsed.reduce((sum, o) => sum + o.weight, 0);
  return parsed.map((o) => ({ metric: o.metric, weight: o.weight / total }));
}

/** `perf_throughput 0.67, p99 latency 0.33` */
export function describeObjectives(objectives: Objectives): string {
  return objectives.map((o) =>
    objectives.length === 1 ? o.metric.label : `${o.metric.label} ${Number(o.weight.toFixed(2))}`
  ).join(", ");
}

/** Positive when `a` is better than `b` under the objectives. */
export function compareResults(a: LevelResult, b: LevelResult, objectives: Objectives): number {
  let score = 0;
  for (const { metric, weight } of objectives) {
    const x = metric.value(a);
    const y = metric.value(b);
    if (x === undefined || y === undefined) {
      if (x !== y) return x === undefined ? -1 : 1;
      continue;
    }
    const mean = (x + y) / 2;
    if (mean === 0) continue;
    score += weight * (metric.higherIsBetter ? x - y : y - x) / mean;
  }
  return score;
}

export interface Ranked<T> {
  item: T;
  /** Why it can not be chosen: unstable, failed requests, broken constraints (empty when it can). */
  reasons: string[];
}

/**
 * Judges points against the constraints (stable, no failed request, every
 * bound met), then orders the good ones best first, the others after.
 */
export function rankPoints<T>(
  points: readonly T[],
  options: { goals: Goals; objectives: Objectives; result: (point: T) => LevelResult },
): Array<Ranked<T>> {
  const verdicts = judge(points, { ...options, group: () => "" });
  const ranked = points.map((item, i) => ({ item, reasons: verdicts[i]!.reasons }));
  const good = ranked.filter((r) => r.reasons.length === 0);
  good.sort((a, b) =>
    -compareResults(options.result(a.item), options.result(b.item), options.objectives)
  );
  return [...good, ...ranked.filter((r) => r.reasons.length > 0)];
}
