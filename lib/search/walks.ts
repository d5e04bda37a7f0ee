/**
 * How a search walks a variant's loads: the concurrency (or request-rate)
 * sweep that stops as Model Analyzer's does, and the binary search between a
 * load within a latency budget and one beyond it. Each walk decides its next
 * load from the points measured so far alone, so a resumed search walks
 * exactly as an uninterrupted one.
 */
import { type Goals, meetsConstraints, type PointRecord } from "../sweep/mod.ts";
import type { SearchConfig, SearchModel } from "./config.ts";
import type { Variant } from "./variants.ts";
import type { SearchVariant } from "./server.ts";

/** Model Analyzer's plateau rule: this many last points ... */
export const PLATEAU_POINTS = 4;
/** ... gaining no more than this fraction of throughput end a sweep. */
export const PLATEAU_GAIN = 0.05;

export interface VariantOutcome<V extends SearchVariant = Variant> {
  variant: V;
  records: PointRecord[];
  /** Why it was not measured (the server refused it), or why a point failed. */
  failure?: string;
}

export interface ModelPlan<V extends SearchVariant = Variant> {
  model: SearchModel;
  variants: V[];
}

/**
 * The next load of a series from its points so far: a value, a reason to
 * stop (told as the series' end), or undefined at its natural end. Decided
 * from the points alone, so a resumed search walks the same way.
 */
export type Walk = (series: readonly PointRecord[]) => number | string | undefined;

/** Measures `variant` as `walk` leads (into `result` when given), as runSearch's walkOne does. */
export type WalkVariant = (
  variant: Variant,
  walk: (batchSize: number) => Walk | undefined,
  result?: VariantOutcome,
) => Promise<VariantOutcome>;

/** One point: `load` at client batch size `batchSize`. */
export const onePoint = (batchSize: number, load: number) => (b: number): Walk | undefined =>
  b === batchSize ? (series) => series.length === 0 ? load : undefined : undefined;

/** What a search strategy over one plan's variants (quick climb, Optuna) is given. */
export interface PlanSearchOptions {
  config: Pick<SearchConfig, "requestRateSearch" | "requestRates" | "concurrencies" | "numConfigs">;
  done: readonly VariantOutcome[];
  walk: WalkVariant;
  interrupted: () => boolean;
  /** The best `count` variants (with a candidate point), best first. */
  top: (count: number) => VariantOutcome[];
}

/** Clamped to the range of `loads`. */
export const clamp = (value: number, loads: readonly number[]) =>
  Math.min(Math.max(value, Math.min(...loads)), Math.max(...loads));

/** 2 x instances x max batch size, Model Analyzer's concurrency formula. */
export function formulaLoad(variant: Variant): number {
  const count = (variant.config.instance_group ?? []).reduce((n, g) => n + Number(g.count ?? 1), 0);
  return 2 * Math.max(1, count) * Math.max(1, Number(variant.config.max_batch_size ?? 1));
}

/**
 * Model Analyzer's concurrency sweep after a quick or Optuna search: each of
 * `outcomes` (the best configurations and the model's own, once each) swept
 * over `loads`, the points measured before taken as they are. False when
 * interrupted.
 */
export async function sweepTop(
  model: Pick<SearchModel, "goals">,
  options: {
    outcomes: ReadonlyArray<VariantOutcome | undefined>;
    loads: readonly number[];
    walk: WalkVariant;
    interrupted: () => boolean;
  },
): Promise<boolean> {
  for (const v of new Set(options.outcomes)) {
    if (!v) continue;
    await options.walk(v.variant, () => sweepWalk(options.loads, model), v);
    if (options.interrupted()) return false;
    v.records.sort((a, b) =>
      a.point.batchSize - b.point.batchSize || a.point.value - b.point.value
    );
  }
  return true;
}

/** A sweep over `loads` that stops as sweepStop says. */
export function sweepWalk(
  loads: readonly number[],
  model: Pick<SearchModel, "goals">,
  plateauPoints = PLATEAU_POINTS,
): Walk {
  return (series) =>
    (series.length > 0 && sweepStop(series, model, plateauPoints)) ||
    loads[series.length];
}

/**
 * Where a sweep crosses the constraints: the last load within them and the
 * first beyond (0 when the first point already breaks them), as Model
 * Analyzer's binary parameter search starts; undefined when it does not.
 */
export function constraintBoundary(
  series: readonly PointRecord[],
  goals: Goals,
): { pass: number; fail: number } | undefined {
  if (goals.constraints.length === 0 || series.length === 0) return undefined;
  const ok = (r: PointRecord) => meetsConstraints(r.result, goals);
  for (let i = series.length - 1; i >= 1; i--) {
    if (!ok(series[i]!) && ok(series[i - 1]!)) {
      return { pass: series[i - 1]!.point.value, fail: series[i]!.point.value };
    }
  }
  return ok(series[0]!) ? undefined : { pass: 0, fail: series[0]!.point.value };
}

/**
 * Bisects between a load within the constraints and one beyond them: each
 * point halves the interval, for at most `steps` points (Model Analyzer's
 * run_config_search_max_binary_search_steps).
 */
export function bisectWalk(
  bounds: { pass: number; fail: number },
  options: { steps: number; goals: Goals },
): Walk {
  return (series) => {
    if (series.length >= options.steps) return undefined;
    let { pass, fail } = bounds;
    for (const r of series) {
      if (meetsConstraints(r.result, options.goals)) pass = r.point.value;
      else fail = r.point.value;
    }
    const mid = Math.floor((pass + fail) / 2);
    return mid > pass && mid < fail && mid >= 1 ? mid : undefined;
  };
}

/** Why a sweep ends after its latest point (`records` in order), if it does. */
export function sweepStop(
  records: readonly PointRecord[],
  model: Pick<SearchModel, "goals">,
  plateauPoints = PLATEAU_POINTS,
): string | undefined {
  // An unstable point is no candidate, but does not end the sweep: on a busy machine the next
  // concurrency often stabilizes, and the configuration's best point may be there.
  const last = records.at(-1)!.result;
  if (last.client.errorCount > 0) return "requests failed: higher loads are skipped";
  for (const c of model.goals.constraints) {
    const value = c.metric.value(last);
    if (c.bound === "max" && c.metric.unit === "msec" && value !== undefined && value > c.limit) {
      return `${c.metric.label} ${value.toFixed(1)} > ${c.limit} msec: higher loads are skipped`;
    }
  }
  if (records.length >= plateauPoints) {
    const window = records.slice(-plateauPoints).map((r) => r.result.client.throughput);
    const gain = (Math.max(...window) - window[0]!) / window[0]!;
    if (!(gain > PLATEAU_GAIN)) {
      return `throughput gained ${
        (gain * 100).toFixed(1)
      } % over the last ${PLATEAU_POINTS} points: higher loads are skipped`;
    }
  }
  return undefined;
}
