/**
 * Model Analyzer's concurrent multi-model search
 * (run_config_profile_models_concurrently_enable): the models of
 * profile_models are loaded together and measured under load at the same
 * time, one client load per model, their levels started together and ended
 * together (stable when every model's windows are, as perf_analyzer's MPI
 * ranks). A combination is one variant of each model, and each model has its
 * own load at a point. Brute nests the models as Model Analyzer's brute
 * generator nests their run config generators: every configuration and load
 * of the first model, and under each all of the second's, each model's loads
 * ending at its plateau; quick climbs every model's instance count and max
 * batch size, each model at the concurrency its coordinates give; Optuna
 * samples all models' coordinates in one study. Combinations are compared by
 * the models' objectives combined with their `weighting`.
 */
import type { ProfilePlan } from "../profile/plan.ts";
import { runProfile } from "../profile/run.ts";
import { UnstableError } from "../load/sweep.ts";
import type { LevelCoordinator, Verdict } from "../measure/level.ts";
import { Interrupt } from "../measure/interrupt.ts";
import {
  type CheckpointStore,
  judge,
  pointKey,
  type PointRecord,
  type SweepPoint,
} from "../sweep/mod.ts";
import type { LevelResult } from "../types/results.ts";
import { loadModeOf, loadsOf, type SearchConfig, type SearchModel } from "./config.ts";
import { compareResults } from "./objectives.ts";
import { NO_CANDIDATE, type OptunaReport, runTrials, searchSpace } from "./optuna.ts";
import { inputDataOf, planOf, pointInterruptOf } from "./run.ts";
import { type SearchServer, VariantLoadError } from "./server.ts";
import type { Variant } from "./variants.ts";
import { clamp, formulaLoad, type ModelPlan, PLATEAU_GAIN, PLATEAU_POINTS } from "./walks.ts";

/**
 * Collectives among `size` runs in this process: each call returns once
 * every member made it, with the members' values reduced; a member that
 * fails fails the group, so that the others do not wait for it.
 */
class Group {
  #rounds = new Map<number, { values: unknown[]; waiters: Array<(v: unknown) => void> }>();
  #calls: number[];
  #failed: Error | undefined;
  #rejects = new Set<(e: Error) => void>();

  constructor(readonly size: number) {
    this.#calls = new Array(size).fill(0);
  }

  collective<T, R>(member: number, value: T, reduce: (values: T[]) => R): Promise<R> {
    if (this.#failed) return Promise.reject(this.#failed);
    const round = this.#calls[member]!++;
    const entry = this.#rounds.get(round) ?? { values: [], waiters: [] };
    this.#rounds.set(round, entry);
    return new Promise<R>((resolve, reject) => {
      this.#rejects.add(reject);
      entry.values.push(value);
      entry.waiters.push((v) => {
        this.#rejects.delete(reject);
        resolve(v as R);
      });
      if (entry.values.length === this.size) {
        this.#rounds.delete(round);
        const reduced = reduce(entry.values as T[]);
        for (const wake of entry.waiters) wake(reduced);
      }
    });
  }

  fail(error: Error): void {
    this.#failed ??= error;
    for (const reject of this.#rejects) reject(this.#failed);
    this.#rejects.clear();
  }

  /** Member `member`'s coordinator: levels begin and windows end together; stable when all are. */
  member(member: number): LevelCoordinator {
    const barrier = () => this.collective(member, 0, () => undefined);
    return {
      begin: barrier,
      ready: barrier,
      drained: () => Promise.resolve(),
      window: (own) => Promise.resolve(own),
      agree: (verdict: Verdict) =>
        this.collective(member, verdict, (all) => ({
          stable: all.every((v) => v.stable),
          stop: all.some((v) => v.stop),
        })),
    };
  }
}

/** Measures several single-level plans at once, their levels coordinated; an unstable level is a result. */
export type MeasureTogether = (
  plans: readonly ProfilePlan[],
  options: { interrupt: Interrupt },
) => Promise<LevelResult[]>;

export const measureTogether: MeasureTogether = async (plans, options) => {
  const group = new Group(plans.length);
  return await Promise.all(plans.map(async (plan, i) => {
    try {
      const outcome = await runProfile(plan, {
        interrupt: options.interrupt,
        rank: { coordinator: group.member(i) },
      });
      return outcome.results[0]!;
    } catch (error) {
      if (error instanceof UnstableError) return error.result;
      group.fail(error as Error);
      throw error;
    }
  }));
};

/** One model's part of a point: its configuration, its own load and client batch size. */
export interface Member {
  variant: Variant;
  value: number;
  batchSize?: number;
}

/** One variant of each model. */
export interface Combination {
  /** `a_config_1+b_config_0` */
  name: string;
  members: Variant[];
}

/** A point of a combination: each model's record (at its own load), in the models' order. */
export interface CombinationPoint {
  parts: PointRecord[];
}

export interface CombinationOutcome {
  combination: Combination;
  points: CombinationPoint[];
  failure?: string;
}

export const combinationOf = (members: readonly Variant[]): Combination => ({
  name: members.map((v) => v.name).join("+"),
  members: [...members],
});

/** Whether every model's part is a candidate under its own goals. */
export function isCandidate(point: CombinationPoint, models: readonly SearchModel[]): boolean {
  return point.parts.every((part, i) =>
    judge([part], { ...models[i]!, result: (r) => r.result, group: () => "" })[0]!.reasons
      .length === 0
  );
}

/** Positive when `a` beats `b`: each model's objective score, combined by the models' weighting. */
export function compareCombined(
  a: CombinationPoint,
  b: CombinationPoint,
  models: readonly SearchModel[],
): number {
  const total = models.reduce((n, m) => n + (m.weighting ?? 1), 0);
  return models.reduce(
    (score, m, i) =>
      score +
      (m.weighting ?? 1) * compareResults(a.parts[i]!.result, b.parts[i]!.result, m.objectives),
    0,
  ) / total;
}

/** A combination's best candidate point. */
export function bestCombinationPoint(
  outcome: CombinationOutcome,
  models: readonly SearchModel[],
): CombinationPoint | undefined {
  return outcome.points.filter((p) => isCandidate(p, models))
    .sort((a, b) => -compareCombined(a, b, models))[0];
}

/** Combinations by their best point, best first; those without a candidate point left out. */
export function rankCombinations(
  outcomes: readonly CombinationOutcome[],
  models: readonly SearchModel[],
): Array<{ outcome: CombinationOutcome; best: CombinationPoint }> {
  return outcomes.flatMap((outcome) => {
    const best = bestCombinationPoint(outcome, models);
    return best ? [{ outcome, best }] : [];
  }).sort((a, b) => -compareCombined(a.best, b.best, models));
}

/** Why a point is no use to go beyond: a model's failed requests or broken latency limit. */
function overloaded(point: CombinationPoint, models: readonly SearchModel[]): string | undefined {
  for (const [i, part] of point.parts.entries()) {
    if (part.result.client.errorCount > 0) return `${models[i]!.name}: requests failed`;
    for (const c of models[i]!.goals.constraints) {
      const value = c.metric.value(part.result);
      if (c.bound === "max" && c.metric.unit === "msec" && value !== undefined && value > c.limit) {
        return `${models[i]!.name}: ${c.metric.label} ${value.toFixed(1)} > ${c.limit} msec`;
      }
    }
  }
  return undefined;
}

/**
 * Why one model's loads end after the latest (`series`: the points measured
 * at each of its loads so far, all the later models' loads under it), as
 * Model Analyzer's perf_analyzer config generator ends them: nothing could be
 * measured at it, or every point there is overloaded, or the best point of
 * each of its last loads gained too little of the models' total throughput.
 */
export function loadStop(
  series: readonly (readonly CombinationPoint[])[],
  options: { models: readonly SearchModel[]; label: string; plateauPoints?: number },
): string | undefined {
  const { models, label, plateauPoints = PLATEAU_POINTS } = options;
  const last = series.at(-1)!;
  if (last.length === 0) return `nothing measured: higher loads of ${label} are skipped`;
  const reasons = last.map((p) => overloaded(p, models));
  if (reasons.every((r) => r !== undefined)) {
    return `${reasons[0]}: higher loads of ${label} are skipped`;
  }
  if (series.length < plateauPoints) return undefined;
  const totals = series.slice(-plateauPoints).map((points) => {
    const best = [...points].sort((a, b) => -compareCombined(a, b, models))[0]!;
    return best.parts.reduce((n, r) => n + r.result.client.throughput, 0);
  });
  const gain = (Math.max(...totals) - totals[0]!) / totals[0]!;
  return gain > PLATEAU_GAIN
    ? undefined
    : `the models' throughput gained ${
      (gain * 100).toFixed(1)
    } % over the last ${plateauPoints} loads of ${label}: higher loads are skipped`;
}

export interface ConcurrentOutcome {
  models: SearchModel[];
  combinations: CombinationOutcome[];
  measured: number;
  resumed: number;
  interrupted: boolean;
}

export interface ConcurrentEvents {
  point?(point: CombinationPoint, combination: Combination): void;
  seriesEnd?(reason: string): void;
  failed?(combination: Combination, message: string): void;
  /** The Optuna study across the models ended its trials. */
  optuna?(report: OptunaReport): void;
}

/**
 * The variants each model walks in brute's passes, as Model Analyzer's:
 * first every model's own configuration together, then every model's
 * searched ones (a model without any keeps its own).
 */
function brutePasses(plans: readonly ModelPlan[]): Variant[][][] {
  const own = plans.map((p) => [p.variants[0]!]);
  if (plans.every((p) => p.variants.length === 1)) return [own];
  return [own, plans.map((p) => p.variants.length > 1 ? p.variants.slice(1) : [p.variants[0]!])];
}

const product = (lists: readonly Variant[][]) =>
  lists.reduce<Variant[][]>(
    (done, list) => done.flatMap((members) => list.map((v) => [...members, v])),
    [[]],
  );

/** The combinations of brute search: the models' own together, then every searched one with every other. */
export function allCombinations(plans: readonly ModelPlan[]): Combination[] {
  return brutePasses(plans).flatMap(product).map(combinationOf);
}

/** A soft or hard interrupt ends the search. */
class Interrupted extends Error {}

/**
 * Measures the combinations of `plans` all together on `server`: brute
 * every combination with every model's loads nested, quick a climb over
 * every model's coordinates, Optuna a study over them. Points already in
 * `store` are not measured again, and each walk decides from the points
 * alone, so a resumed search measures what an uninterrupted one would.
 */
export async function runConcurrentSearch(
  config: SearchConfig,
  options: {
    plans: readonly ModelPlan[];
    store: CheckpointStore;
    interrupt: Interrupt;
    server: SearchServer;
    events?: ConcurrentEvents;
    measure?: MeasureTogether;
  },
): Promise<ConcurrentOutcome> {
  const { plans, store, interrupt, server, events = {}, measure = measureTogether } = options;
  const models = plans.map((p) => p.model);
  const outcome: ConcurrentOutcome = {
    models,
    combinations: [],
    measured: 0,
    resumed: 0,
    interrupted: false,
  };
  const pointInterrupt = pointInterruptOf(interrupt);
  const modes = models.map((m) => loadModeOf(config, m));
  const loads = models.map((m) => loadsOf(config, m));
  const refused = new Map<Variant, string>();
  const loaded: Array<Variant | undefined> = models.map(() => undefined);
  const servedAs = new Map<Variant, string>();

  const outcomeOf = (members: readonly Variant[]) => {
    const combination = combinationOf(members);
    let result = outcome.combinations.find((c) => c.combination.name === combination.name);
    if (!result) {
      result = { combination, points: [] };
      outcome.combinations.push(result);
    }
    return result;
  };

  /** Each model's slot holds its member: the others' variants are replaced. */
  const place = async (members: readonly Variant[]) => {
    for (const [i, v] of members.entries()) {
      if (loaded[i] === v) continue;
      const old = loaded[i];
      loaded[i] = undefined;
      if (old) await server.unload(old).catch(() => {});
      try {
        servedAs.set(v, await server.load(v));
      } catch (error) {
        if (error instanceof VariantLoadError) refused.set(v, error.message);
        throw error;
      }
      loaded[i] = v;
    }
  };

  /** The point of `members`, from the store or measured; undefined when it can not be measured. */
  const pointAt = async (members: readonly Member[]): Promise<CombinationPoint | undefined> => {
    const result = outcomeOf(members.map((m) => m.variant));
    const at = members.map((m) => `${m.variant.name}:${m.value}`).join("+");
    const points = members.map((m, i): SweepPoint => ({
      model: `${m.variant.name}@${at}`,
      batchSize: m.batchSize ?? models[i]!.batchSizes[0]!,
      protocol: config.protocol,
      inputData: inputDataOf(config),
      mode: modes[i]!,
      value: m.value,
    }));
    const keys = points.map(pointKey);
    const known = result.points.find((p) => p.parts.every((r, i) => pointKey(r.point) === keys[i]));
    if (known) return known;
    const stored = keys.map((k) => store.records.get(k));
    let parts: PointRecord[];
    if (stored.every((r) => r !== undefined)) {
      parts = stored as PointRecord[];
      outcome.resumed++;
    } else {
      const refusal = members.map((m) => refused.get(m.variant)).find((r) => r !== undefined);
      if (refusal !== undefined) {
        result.failure ??= refusal;
        return undefined;
      }
      if (interrupt.soft) throw new Interrupted();
      let measured: LevelResult[];
      try {
        await place(members.map((m) => m.variant));
        const extra = await server.preparePoint?.() ?? {};
        measured = await measure(
          members.map((m, i) =>
            planOf(config, {
              model: models[i]!,
              served: servedAs.get(m.variant)!,
              batchSize: points[i]!.batchSize,
              mode: modes[i]!,
              value: m.value,
              url: server.url(config.protocol),
              extra,
            })
          ),
          { interrupt: pointInterrupt },
        );
      } catch (error) {
        if (interrupt.hard) throw new Interrupted();
        if (result.failure === undefined) {
          result.failure = (error as Error).message;
          events.failed?.(result.combination, result.failure);
        }
        return undefined;
      }
      if (interrupt.hard) throw new Interrupted();
      const ram = await server.usedRamMb();
      const measuredAt = new Date().toISOString();
      parts = measured.map((r, i) => ({
        point: points[i]!,
        result: { ...r, windows: [], ...(ram === undefined ? {} : { serverRamMb: ram }) },
        measuredAt,
      }));
      for (const part of parts) store.add(part);
      store.save();
      outcome.measured++;
    }
    const point = { parts };
    result.points.push(point);
    events.point?.(point, result.combination);
    return point;
  };

  /**
   * Brute's walk, as Model Analyzer's generators nest: each variant of model
   * `level` at each of its loads, under each all of the next models'; the
   * points measured under each load decide whether its next load is walked.
   */
  const nest = async (
    level: number,
    chosen: readonly Member[],
    pass: readonly Variant[][],
  ): Promise<CombinationPoint[]> => {
    const all: CombinationPoint[] = [];
    for (const variant of pass[level]!) {
      const series: CombinationPoint[][] = [];
      for (const value of loads[level]!) {
        const here = [...chosen, { variant, value }];
        const points = level === models.length - 1
          ? [await pointAt(here)].filter((p) => p !== undefined)
          : await nest(level + 1, here, pass);
        all.push(...points);
        series.push(points);
        const stop = loadStop(series, { models, label: variant.name });
        if (stop) {
          events.seriesEnd?.(stop);
          break;
        }
      }
    }
    return all;
  };

  /** Every model's load from its coordinates: Model Analyzer's 2 x instances x max batch size. */
  const derived = (members: readonly Variant[]): Member[] =>
    members.map((variant, m) => ({
      variant,
      value: modes[m] === "concurrency" && !models[m]!.concurrency
        ? clamp(formulaLoad(variant), loads[m]!)
        : loads[m]![0]!,
    }));

  /**
   * Model Analyzer's concurrency sweep after quick and Optuna search: the
   * best `numConfigs` combinations and the models' own, every model at the
   * same concurrency, until the sweep ends as a load's does.
   */
  const finalSweep = async () => {
    if (config.optuna.sweepDisable) return;
    const own = plans.map((p) => p.variants[0]!);
    const top = rankCombinations(outcome.combinations, models).slice(0, config.numConfigs)
      .map((r) => r.outcome.combination.members);
    if (!top.some((members) => combinationOf(members).name === combinationOf(own).name)) {
      top.push(own);
    }
    for (const members of top) {
      const series: CombinationPoint[][] = [];
      for (const value of loads[0]!) {
        const point = await pointAt(members.map((variant) => ({ variant, value })));
        series.push(point ? [point] : []);
        const stop = loadStop(series, { models, label: "every model" });
        if (stop) {
          events.seriesEnd?.(stop);
          break;
        }
      }
    }
  };

  try {
    if (config.searchMode === "optuna") {
      const report = await optunaAcross(plans, {
        config,
        loads,
        modes,
        pointAt,
        baseline: derived(plans.map((p) => p.variants[0]!)),
      });
      events.optuna?.(report);
      await finalSweep();
    } else if (config.searchMode === "quick" && plans.every((p) => !p.model.configParameters)) {
      await climb(plans, { models, pointAt, derived });
      await finalSweep();
    } else {
      for (const pass of brutePasses(plans)) await nest(0, [], pass);
    }
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    outcome.interrupted = true;
  } finally {
    for (const v of loaded) if (v) await server.unload(v).catch(() => {});
  }
  for (const c of outcome.combinations) {
    c.points.sort((a, b) => {
      for (const [i, part] of a.parts.entries()) {
        const d = part.point.value - b.parts[i]!.point.value;
        if (d !== 0) return d;
      }
      return 0;
    });
  }
  return outcome;
}

type PointAt = (members: readonly Member[]) => Promise<CombinationPoint | undefined>;

/** `a` is a candidate and beats `b` (or `b` is none). */
const beats = (
  a: CombinationPoint | undefined,
  b: CombinationPoint | undefined,
  models: readonly SearchModel[],
) =>
  a !== undefined && isCandidate(a, models) &&
  (b === undefined || !isCandidate(b, models) || compareCombined(a, b, models) > 0);

/**
 * Quick search over every model's coordinates, as Model Analyzer's: the
 * models' own configurations first, then from every model's smallest
 * instance count and max batch size, one coordinate of one model a step up
 * at a time, each combination measured once with every model at the
 * concurrency its own coordinates give; the first neighbour that beats the
 * current one is the next, until none does.
 */
async function climb(
  plans: readonly ModelPlan[],
  options: {
    models: readonly SearchModel[];
    pointAt: PointAt;
    derived: (members: readonly Variant[]) => Member[];
  },
): Promise<void> {
  const { models, pointAt, derived } = options;
  await pointAt(derived(plans.map((p) => p.variants[0]!)));
  const grids = plans.map((p) => p.variants.slice(1));
  const at = (m: number, count: number | undefined, batch: number | undefined) =>
    grids[m]!.find((v) => v.coordinates?.count === count && v.coordinates?.maxBatchSize === batch);
  let current = grids.map((g) => g[0]!);
  let best = await pointAt(derived(current));
  for (;;) {
    const neighbours: Variant[][] = [];
    current.forEach((v, m) => {
      const counts = [...new Set(grids[m]!.map((g) => g.coordinates!.count))];
      const batches = [...new Set(grids[m]!.map((g) => g.coordinates!.maxBatchSize))];
      const { count, maxBatchSize } = v.coordinates!;
      const up = [
        at(m, count, batches[batches.indexOf(maxBatchSize) + 1]),
        at(m, counts[counts.indexOf(count) + 1], maxBatchSize),
      ];
      for (const next of up) {
        if (next && next !== v) neighbours.push(current.map((c, k) => k === m ? next : c));
      }
    });
    let moved = false;
    for (const members of neighbours) {
      const point = await pointAt(derived(members));
      if (beats(point, best, models)) {
        current = members;
        best = point;
        moved = true;
        break;
      }
    }
    if (!moved) return;
  }
}

/**
 * Model Analyzer's Optuna search across the models: one study over every
 * model's dimensions (instance count, max batch size and the load, or the
 * load from the concurrency formula), a trial one point of the combination it
 * suggests, scored by its combined gain over the models' own configurations.
 */
async function optunaAcross(
  plans: readonly ModelPlan[],
  options: {
    config: SearchConfig;
    loads: readonly number[][];
    modes: readonly string[];
    pointAt: PointAt;
    baseline: Member[];
  },
): Promise<OptunaReport> {
  const { config, pointAt } = options;
  const models = plans.map((p) => p.model);
  const spaces = plans.map((plan, m) =>
    searchSpace(plan, {
      loads: options.loads[m]!,
      formula: config.optuna.concurrencyFormula && options.modes[m] === "concurrency",
    })
  );
  const named = (m: number, name: string) => `${models[m]!.name}.${name}`;
  const baseline = await pointAt(options.baseline);
  const report = await runTrials({
    parameters: spaces.flatMap((s, m) =>
      s.parameters.map((p) => ({ ...p, name: named(m, p.name) }))
    ),
    size: spaces.reduce((n, s) => n * s.size, 1),
  }, {
    settings: config.optuna,
    score: async (params) => {
      const members = spaces.map((s, m): Member => {
        const own = Object.fromEntries(
          s.parameters.map((p) => [p.name, params[named(m, p.name)]!]),
        );
        const { variant, batchSize, load } = s.point(own);
        return { variant, value: load, batchSize };
      });
      const point = await pointAt(members);
      if (
        !point || !isCandidate(point, models) ||
        point.parts.some((r) => r.result.client.errorCount > 0)
      ) {
        return NO_CANDIDATE;
      }
      return baseline ? compareCombined(point, baseline, models) : 0;
    },
  });
  return report!;
}
