/**
 * Model Analyzer's quick search of an ensemble or a BLS model: the model's own
 * configuration first (at 2 x its max batch size x instances), then the
 * neighbourhood climb (neighborhood.ts) over its composing models'
 * coordinates, each composing model's max batch size (where it batches) and
 * instance count in step order, every coordinate measured end to end
 * through the ensemble at one concurrency: 2 x max batch size x instances of
 * the first composing model, as Model Analyzer's ensemble takes its load
 * from its first composing model's coordinates. A BLS model (bls.ts) has
 * coordinates of its own, climbed before its composing models' and giving
 * its load, as Model Analyzer's. Then the best
 * configurations and the ensemble's own are swept over the concurrencies.
 */
import { meetsConstraints, type PointRecord } from "../sweep/mod.ts";
import { loadsOf, type SearchModel } from "./config.ts";
import { type Coordinate, type Dimension, neighborhoodClimb } from "./neighborhood.ts";
import { compareResults } from "./objectives.ts";
import type { Variant } from "./variants.ts";
import {
  clamp,
  formulaLoad,
  type ModelPlan,
  onePoint,
  type PlanSearchOptions,
  sweepTop,
} from "./walks.ts";

/** Whether a plan is an ensemble's or a BLS model's automatic search (every variant a brute point). */
export function isEnsembleSearch(plan: ModelPlan): boolean {
  const grid = plan.variants.slice(1);
  return grid.length > 0 &&
    grid.every((v) =>
      v.composing?.every((m) => m.coordinates !== undefined) === true &&
      (!v.bls || v.coordinates !== undefined)
    );
}

/** A variant's points on the climb's axes: a BLS model's own first, then its composing models'. */
export const pointsOfVariant = (v: Variant) => [
  ...(v.bls ? [v.coordinates!] : []),
  ...v.composing!.map((m) => m.coordinates!),
];

/** A composing model's axes: its max batch sizes (where it batches) and instance counts. */
interface Axes {
  batches?: number[];
  counts: number[];
}

const sorted = (values: Iterable<number>) => [...new Set(values)].sort((a, b) => a - b);

/** The axes of each model climbed, in order, from the variants. */
function axesOf(grid: readonly Variant[]): Axes[] {
  return pointsOfVariant(grid[0]!).map((_, k) => {
    const points = grid.map((v) => pointsOfVariant(v)[k]!);
    const batches = sorted(points.flatMap((p) => p.maxBatchSize ?? []));
    return { counts: sorted(points.map((p) => p.count)), ...(batches.length ? { batches } : {}) };
  });
}

const keyOf = (points: ReadonlyArray<{ count: number; maxBatchSize?: number }>) =>
  points.map((p) => `${p.count}x${p.maxBatchSize ?? 0}`).join("+");

/** Model Analyzer's constraint_failure_percentage: how far the constraints are missed, summed. */
function failure(model: SearchModel, record: PointRecord): number {
  return model.goals.constraints.reduce((sum, c) => {
    const value = c.metric.value(record.result);
    if (value === undefined) return sum;
    const miss = c.bound === "min" ? c.limit - value : value - c.limit;
    return sum + (miss > 0 ? miss / c.limit : 0);
  }, 0) * 100;
}

export interface ClimbReport {
  /** Coordinates the climb measured, one point each (one it came back to is taken as stored). */
  coordinates: number;
  /** Combinations of the composing models' variants in the space. */
  size: number;
}

/**
 * Runs the quick search of an ensemble's `plan`. Returns what the climb did,
 * or undefined when interrupted.
 */
export async function ensembleQuickSearch(
  plan: ModelPlan,
  options: PlanSearchOptions & { sweepDisable: boolean },
): Promise<ClimbReport | undefined> {
  const { model } = plan;
  const loads = loadsOf(options.config, model);
  const batchSize = model.batchSizes[0]!;
  const grid = plan.variants.slice(1);
  const axes = axesOf(grid);
  const byKey = new Map(grid.map((v) => [keyOf(pointsOfVariant(v)), v]));
  const dimensions: Dimension[] = axes.flatMap((a) => [
    ...(a.batches ? [{ min: 0, max: a.batches.length - 1 }] : []),
    { min: 0, max: a.counts.length - 1 },
  ]);
  const pointsOf = (c: Coordinate) => {
    let i = 0;
    return axes.map((a) => {
      const maxBatchSize = a.batches?.[c[i++]!];
      return { count: a.counts[c[i++]!]!, ...(maxBatchSize ? { maxBatchSize } : {}) };
    });
  };
  const outcomeOf = (variant: Variant) => options.done.find((v) => v.variant === variant);
  /** One point of `variant` at `load`; undefined where it failed (no point, failed requests). */
  const measure = async (variant: Variant, load: number) => {
    const result = await options.walk(variant, onePoint(batchSize, load), outcomeOf(variant));
    const record = result.records.find((r) =>
      r.point.batchSize === batchSize && r.point.value === load
    );
    return record && record.result.client.errorCount === 0 ? record : undefined;
  };
  const own = plan.variants[0]!;
  const start = await measure(own, clamp(formulaLoad(own), loads));
  if (options.interrupted()) return undefined;
  const passes = (r: PointRecord) => meetsConstraints(r.result, model.goals);
  const trace = await neighborhoodClimb<PointRecord>({
    dimensions,
    measure: (c) => {
      const points = pointsOf(c);
      const first = points[0]!;
      return measure(
        byKey.get(keyOf(points))!,
        clamp(2 * (first.maxBatchSize ?? 1) * first.count, loads),
      );
    },
    passes,
    compare: (a, b) => compareResults(b.result, a.result, model.objectives),
    compareConstraints: (a, b) => (failure(model, a) - failure(model, b)) / 100,
    ...(start ? { start } : {}),
    interrupted: options.interrupted,
  });
  if (options.interrupted()) return undefined;
  const report = {
    coordinates: new Set(trace.measured.map((m) => m.coordinate.join(","))).size,
    size: grid.length,
  };
  if (options.sweepDisable) return report;
  const swept = await sweepTop(model, {
    outcomes: [...options.top(options.config.numConfigs), outcomeOf(own)],
    loads,
    walk: options.walk,
    interrupted: options.interrupted,
  });
  return swept ? report : undefined;
}
