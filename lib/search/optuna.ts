/**
 * Model Analyzer's Optuna search (`run_config_search_mode optuna`): the
 * model's own configuration is measured first, at concurrency 2 x max batch
 * size x instances, as the baseline; then each trial is one point of the
 * whole space (instance count, max batch size, client batch size and the
 * load, or the load from the concurrency formula) suggested by the TPE
 * sampler from the scores so far, a trial's score its gain over the baseline
 * under the objectives. The trials stop at their maximum, or once
 * `optuna_early_exit_threshold` trials after the minimum brought no better
 * score. Then the best configurations are swept over the loads for the
 * reports, as Model Analyzer's concurrency sweep does.
 */
import type { PointRecord } from "../sweep/mod.ts";
import { meetsConstraints } from "../sweep/mod.ts";
import { loadModeOf, loadsOf, type OptunaSettings, type SearchModel } from "./config.ts";
import { compareResults } from "./objectives.ts";
import { isEnsembleSearch, pointsOfVariant } from "./ensemble_quick.ts";
import {
  clamp,
  formulaLoad,
  type ModelPlan,
  onePoint,
  type PlanSearchOptions,
  sweepTop,
} from "./walks.ts";
import { type IntParameter, type Observation, seededRandom, suggest } from "./tpe.ts";
import type { Variant } from "./variants.ts";

/**
 * How many trials, from the size of the space, as Model Analyzer decides:
 * a percentage of the space unless a trial count is given; both given, the
 * fewer of the maxima and the more of the minima.
 */
export function trialBounds(size: number, s: OptunaSettings): { min: number; max: number } {
  const maxShare = Math.floor(size * s.maxPercentage / 100);
  const minShare = Math.floor(size * s.minPercentage / 100);
  const max = s.maxTrials === undefined
    ? maxShare
    : s.maxPercentageGiven
    ? Math.min(s.maxTrials, maxShare)
    : s.maxTrials;
  const min = s.minTrials === undefined
    ? minShare
    : s.minPercentageGiven
    ? Math.max(s.minTrials, minShare)
    : s.minTrials;
  return { min, max };
}

/** A trial's score when its point failed: below every measured one's (gains are > -2). */
export const NO_CANDIDATE = -2;

/** The dimensions of a model's space, each an index into its values. */
export interface SearchSpace {
  parameters: IntParameter[];
  /** The variant, client batch size and load of a suggestion. */
  point(params: Readonly<Record<string, number>>): {
    variant: Variant;
    batchSize: number;
    load: number;
  };
  size: number;
}

/**
 * The space of a plan: instance count and max batch size of the brute grid
 * (or the manual search's variants as one dimension), client batch sizes
 * when several, and the load unless the concurrency formula sets it.
 */
export function searchSpace(
  plan: ModelPlan,
  options: { loads: readonly number[]; formula: boolean },
): SearchSpace {
  const grid = plan.variants.slice(1);
  const dims: Array<{ name: string; values: readonly number[] }> = [];
  // A model's coordinates, or an ensemble's composing models' (Model Analyzer's `<model>::` names),
  // after a BLS model's own.
  const ensemble = isEnsembleSearch(plan);
  const pointsOf = (v: Variant) => ensemble ? pointsOfVariant(v) : [v.coordinates];
  const automatic = ensemble || grid.every((v) => v.coordinates !== undefined);
  const prefixes = ensemble
    ? [...(grid[0]!.bls ? [""] : []), ...grid[0]!.composing!.map((m) => `${m.model}::`)]
    : [""];
  const axes = prefixes.map((prefix, k) => ({
    count: `${prefix}instance_group`,
    batch: `${prefix}max_batch_size`,
    counts: [...new Set(grid.map((v) => pointsOf(v)[k]?.count ?? 0))],
    batches: [...new Set(grid.map((v) => pointsOf(v)[k]?.maxBatchSize ?? 0))],
  }));
  if (automatic) {
    for (const a of axes) {
      dims.push({ name: a.count, values: a.counts });
      if (a.batches.length > 1 || a.batches[0] !== 0) {
        dims.push({ name: a.batch, values: a.batches });
      }
    }
  } else dims.push({ name: "variant", values: grid.map((_, i) => i) });
  if (plan.model.batchSizes.length > 1) {
    dims.push({ name: "batch_sizes", values: plan.model.batchSizes });
  }
  if (!options.formula) dims.push({ name: "load", values: options.loads });
  const value = (params: Readonly<Record<string, number>>, name: string) => {
    const dim = dims.find((d) => d.name === name);
    return dim ? dim.values[params[name]!]! : undefined;
  };
  return {
    parameters: dims.map((d) => ({ name: d.name, low: 0, high: d.values.length - 1 })),
    size: dims.reduce((n, d) => n * d.values.length, 1),
    point(params) {
      const variant = automatic
        ? grid.find((v) =>
          pointsOf(v).every((p, k) =>
            p!.count === value(params, axes[k]!.count) &&
            (p!.maxBatchSize ?? 0) === (value(params, axes[k]!.batch) ?? 0)
          )
        )!
        : grid[value(params, "variant")!]!;
      const load = value(params, "load") ?? clamp(formulaLoad(variant), options.loads);
      return {
        variant,
        batchSize: value(params, "batch_sizes") ?? plan.model.batchSizes[0]!,
        load,
      };
    },
  };
}

/**
 * A trial's score: its gain over the baseline, or NO_CANDIDATE where it had
 * failed requests or broke a constraint. An unstable point is scored by what
 * it measured: it is no candidate for the best, but on a busy machine the
 * best configuration's high loads are the ones that stabilize least, and
 * scoring them as failures steered the sampler away from them.
 */
function scoreOf(model: SearchModel, record: PointRecord | undefined, baseline: PointRecord) {
  const r = record?.result;
  if (!r || r.client.errorCount > 0 || !meetsConstraints(r, model.goals)) return NO_CANDIDATE;
  return compareResults(r, baseline.result, model.objectives);
}

export interface OptunaReport {
  trials: number;
  /** The trial (1-based) with the best score; 0 for the baseline. */
  bestTrial: number;
  bounds: { min: number; max: number };
  size: number;
}

/**
 * The trials of a space: each the TPE sampler's suggestion from the scores
 * so far, scored by `score` (undefined: interrupted); they stop at the
 * maximum, or `earlyExit` trials after the minimum without a better score.
 */
export async function runTrials(
  space: Pick<SearchSpace, "parameters" | "size">,
  options: {
    settings: OptunaSettings;
    score: (params: Readonly<Record<string, number>>) => Promise<number | undefined>;
  },
): Promise<OptunaReport | undefined> {
  const { settings } = options;
  const bounds = trialBounds(space.size, settings);
  const random = seededRandom(settings.seed);
  const history: Observation[] = [];
  let best = { score: 0, trial: 0 };
  for (let trial = 1; trial <= bounds.max; trial++) {
    const params = suggest(space.parameters, history, {
      random,
      multivariate: settings.multivariate,
    });
    const score = await options.score(params);
    if (score === undefined) return undefined;
    if (score > best.score) best = { score, trial };
    history.push({ params, score });
    if (trial >= bounds.min && trial - best.trial >= settings.earlyExit) break;
  }
  return { trials: history.length, bestTrial: best.trial, bounds, size: space.size };
}

/**
 * Runs the Optuna search of `plan`: the baseline, the trials, the sweep of
 * the best configurations. Returns what it did, or undefined when
 * interrupted (or the baseline could not be measured).
 */
export async function optunaSearch(
  plan: ModelPlan,
  options: PlanSearchOptions & { settings: OptunaSettings },
): Promise<OptunaReport | undefined> {
  const { config, settings, walk } = options;
  const model = plan.model;
  const loads = loadsOf(config, model);
  const requestRate = loadModeOf(config, model) === "request_rate";
  const formula = settings.concurrencyFormula && !requestRate;
  const space = searchSpace(plan, { loads, formula });
  const outcomeOf = (variant: Variant) => options.done.find((v) => v.variant === variant);
  /** Measures one point (or finds it measured) and returns its record. */
  const measure = async (variant: Variant, batchSize: number, load: number) => {
    const result = await walk(variant, onePoint(batchSize, load), outcomeOf(variant));
    return result.records.find((r) => r.point.batchSize === batchSize && r.point.value === load);
  };
  const own = plan.variants[0]!;
  const baseline = await measure(
    own,
    model.batchSizes[0]!,
    requestRate ? loads[0]! : clamp(formulaLoad(own), loads),
  );
  if (options.interrupted() || !baseline) return undefined;
  const report = await runTrials(space, {
    settings,
    score: async (params) => {
      const { variant, batchSize, load } = space.point(params);
      const record = await measure(variant, batchSize, load);
      return options.interrupted() ? undefined : scoreOf(model, record, baseline);
    },
  });
  if (!report) return undefined;
  if (settings.sweepDisable || requestRate) return report;
  // The trials' points the sweep meets are taken as measured.
  const top = [...options.top(config.numConfigs), outcomeOf(own)];
  return await sweepTop(model, { outcomes: top, loads, walk, interrupted: options.interrupted })
    ? report
    : undefined;
}
