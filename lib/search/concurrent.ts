/**
 * Model Analyzer's concurrent multi-model search
 * (run_config_profile_models_concurrently_enable): the models of
 * profile_models are loaded together and measured under load at the same
 * time, one client load per model, their levels started together and ended
 * together (stable when every model's windows are, as perf_analyzer's MPI
 * ranks). A combination is one variant of each model; brute measures every
 * combination, quick climbs from the smallest over every model's instance
 * count and max batch size. Each combination is swept over the loads, the
 * same load for every model at a point, and combinations are compared by the
 * models' objectives combined with their `weighting`.
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
import { inputDataOf, planOf, pointInterruptOf } from "./run.ts";
import type { SearchServer } from "./server.ts";
import type { Variant } from "./variants.ts";
import { type ModelPlan, PLATEAU_GAIN, PLATEAU_POINTS } from "./walks.ts";

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

/** One variant of each model. */
export interface Combination {
  /** `a_config_1+b_config_0` */
  name: string;
  members: Variant[];
}

/** A point of a combination: each model's record, in the models' order. */
export interface CombinationPoint {
  value: number;
  parts: PointRecord[];
}

export interface CombinationOutcome {
  combination: Combination;
  points: CombinationPoint[];
  failure?: string;
}

export const combinationOf = (members: Variant[]): Combination => ({
  name: members.map((v) => v.name).join("+"),
  members,
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

/** Why a combination's sweep ends after its latest point, as a model's sweep ends. */
function combinationStop(
  points: readonly CombinationPoint[],
  models: readonly SearchModel[],
  plateauPoints: number,
): string | undefined {
  const last = points.at(-1)!;
  for (const [i, part] of last.parts.entries()) {
    if (part.result.client.errorCount > 0) {
      return `${models[i]!.name}: requests failed: higher loads are skipped`;
    }
    for (const c of models[i]!.goals.constraints) {
      const value = c.metric.value(part.result);
      if (c.bound === "max" && c.metric.unit === "msec" && value !== undefined && value > c.limit) {
        return `${models[i]!.name}: ${c.metric.label} ${
          value.toFixed(1)
        } > ${c.limit} msec: higher loads are skipped`;
      }
    }
  }
  if (points.length < plateauPoints) return undefined;
  const totals = points.slice(-plateauPoints).map((p) =>
    p.parts.reduce((n, r) => n + r.result.client.throughput, 0)
  );
  const gain = (Math.max(...totals) - totals[0]!) / totals[0]!;
  return gain > PLATEAU_GAIN
    ? undefined
    : `the models' throughput gained ${
      (gain * 100).toFixed(1)
    } % over the last ${plateauPoints} points: higher loads are skipped`;
}

export interface ConcurrentOutcome {
  models: SearchModel[];
  combinations: CombinationOutcome[];
  measured: number;
  resumed: number;
  interrupted: boolean;
}

export interface ConcurrentEvents {
  combinationStart?(combination: Combination, info: { index: number }): void;
  point?(point: CombinationPoint, combination: Combination): void;
  seriesEnd?(reason: string): void;
  failed?(combination: Combination, message: string): void;
}

/** The combinations of brute search: every variant of each model with every other's. */
export function allCombinations(plans: readonly ModelPlan[]): Combination[] {
  return plans.reduce<Variant[][]>(
    (done, plan) => done.flatMap((members) => plan.variants.map((v) => [...members, v])),
    [[]],
  ).map(combinationOf);
}

/**
 * Measures the combinations of `plans` all together on `server`: brute
 * every combination, quick a climb over every model's coordinates. Points
 * already in `store` are not measured again.
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
  const quick = config.searchMode === "quick" && plans.every((p) => !p.model.configParameters);
  const loads = loadsOf(config, models[0]!);
  const mode = loadModeOf(config, models[0]!);

  /** Sweeps `combination` over `sweep` (from its first load); false when interrupted. */
  const sweepCombination = async (combination: Combination, sweep: readonly number[]) => {
    const result: CombinationOutcome =
      outcome.combinations.find((c) => c.combination.name === combination.name) ??
        { combination, points: [] };
    if (!outcome.combinations.includes(result)) outcome.combinations.push(result);
    events.combinationStart?.(combination, { index: outcome.combinations.length });
    const loaded: Variant[] = [];
    const servedAs = new Map<Variant, string>();
    try {
      const series: CombinationPoint[] = [];
      for (const value of sweep) {
        const points = combination.members.map((variant): SweepPoint => ({
          model: `${variant.name}@${combination.name}`,
          batchSize: models[0]!.batchSizes[0]!,
          protocol: config.protocol,
          inputData: inputDataOf(config),
          mode,
          value,
        }));
        const stored = points.map((p) => store.records.get(pointKey(p)));
        let parts: PointRecord[];
        if (stored.every((r) => r !== undefined)) {
          parts = stored as PointRecord[];
          if (!result.points.some((p) => p.value === value)) outcome.resumed++;
        } else {
          if (interrupt.soft) return false;
          for (const v of combination.members.slice(loaded.length)) {
            servedAs.set(v, await server.load(v));
            loaded.push(v);
          }
          const extra = await server.preparePoint?.() ?? {};
          const measured = await measure(
            combination.members.map((v, i) =>
              planOf(config, {
                model: models[i]!,
                served: servedAs.get(v)!,
                batchSize: points[i]!.batchSize,
                mode,
                value,
                url: server.url(config.protocol),
                extra,
              })
            ),
            { interrupt: pointInterrupt },
          );
          if (interrupt.hard) return false;
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
        const point = { value, parts };
        if (!result.points.some((p) => p.value === value)) result.points.push(point);
        events.point?.(point, combination);
        series.push(point);
        const stop = combinationStop(series, models, quick ? 2 : PLATEAU_POINTS);
        if (stop) {
          events.seriesEnd?.(stop);
          break;
        }
      }
    } catch (error) {
      if (interrupt.hard) return false;
      result.failure = (error as Error).message;
      events.failed?.(combination, result.failure);
    } finally {
      for (const v of loaded) await server.unload(v).catch(() => {});
    }
    result.points.sort((a, b) => a.value - b.value);
    return true;
  };

  if (!quick) {
    for (const combination of allCombinations(plans)) {
      if (!await sweepCombination(combination, loads)) {
        outcome.interrupted = true;
        break;
      }
    }
    return outcome;
  }
  // Quick: from every model's smallest configuration, one coordinate of one model a step up at a
  // time; the first neighbour whose best beats the current best is the next current.
  const grids = plans.map((p) => p.variants.slice(1));
  const at = (m: number, count: number, batch: number | undefined) =>
    grids[m]!.find((v) => v.coordinates?.count === count && v.coordinates?.maxBatchSize === batch);
  let current = grids.map((g) => g[0]!);
  if (!await sweepCombination(combinationOf(current), loads)) outcome.interrupted = true;
  while (!outcome.interrupted) {
    const mine = outcome.combinations.find((c) =>
      c.combination.name === combinationOf(current).name
    )!;
    const best = bestCombinationPoint(mine, models);
    if (!best) break;
    const neighbours: Variant[][] = [];
    current.forEach((v, m) => {
      const counts = [...new Set(grids[m]!.map((g) => g.coordinates!.count))];
      const batches = [...new Set(grids[m]!.map((g) => g.coordinates!.maxBatchSize))];
      const { count, maxBatchSize } = v.coordinates!;
      const up = [
        at(m, count, batches[batches.indexOf(maxBatchSize) + 1]),
        at(m, counts[counts.indexOf(count) + 1]!, maxBatchSize),
      ];
      for (const next of up) {
        if (next && next !== v) neighbours.push(current.map((c, k) => k === m ? next : c));
      }
    });
    let moved = false;
    for (const members of neighbours) {
      const sweep = loads.filter((l) => l >= best.value);
      if (!await sweepCombination(combinationOf(members), sweep)) {
        outcome.interrupted = true;
        break;
      }
      const theirs = outcome.combinations.find((c) =>
        c.combination.name === combinationOf(members).name
      )!;
      const candidateBest = bestCombinationPoint(theirs, models);
      if (candidateBest && compareCombined(candidateBest, best, models) > 0) {
        current = members;
        moved = true;
        break;
      }
    }
    if (!moved) break;
  }
  return outcome;
}
