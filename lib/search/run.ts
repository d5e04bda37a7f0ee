/**
 * Runs a model configuration search: each variant is loaded into the server
 * and measured over its concurrency sweep with the normal profile run (one
 * stabilized level per point), every point saved to the checkpoint at once.
 * A sweep stops early as Model Analyzer's does: once the last 4 points gain
 * less than 5 % throughput, a latency constraint is broken or requests
 * failed; the decision is also taken from stored points, so a resumed
 * search measures exactly what an uninterrupted one would.
 */
import { buildProfileConfig } from "../cli/config.ts";
import { Interrupt } from "../measure/interrupt.ts";
import type { RunEvents } from "../profile/run.ts";
import {
  type CheckpointStore,
  type MeasurePoint,
  measureWithProfile,
  POINT_ERRORS,
  pointConfig,
  pointKey,
  type PointRecord,
  type SweepPoint,
} from "../sweep/mod.ts";
import type { LevelResult, LoadMode } from "../types/results.ts";
import { loadModeOf, loadsOf, type SearchConfig, type SearchModel, withFlags } from "./config.ts";
import { type SearchServer, type SearchVariant, VariantLoadError } from "./server.ts";
import type { Variant } from "./variants.ts";
import {
  bisectWalk,
  constraintBoundary,
  type ModelPlan,
  PLATEAU_POINTS,
  sweepWalk,
  type VariantOutcome,
  type Walk,
} from "./walks.ts";
import { compareResults, rankPoints } from "./objectives.ts";
import { type OptunaReport, optunaSearch } from "./optuna.ts";
import { type ClimbReport, ensembleQuickSearch, isEnsembleSearch } from "./ensemble_quick.ts";

export interface SearchOutcome<V extends SearchVariant = Variant> {
  models: Array<{ model: SearchModel; variants: VariantOutcome<V>[] }>;
  measured: number;
  resumed: number;
  interrupted: boolean;
}

export interface SearchEvents<V extends SearchVariant = Variant> {
  /** `again`: more points of a variant measured before (quick's final sweep, the binary search). */
  variantStart?(variant: V, info: { index: number; total: number; again: boolean }): void;
  pointStart?(point: SweepPoint): void;
  point?(record: PointRecord): void;
  variantFailed?(variant: V, message: string): void;
  seriesEnd?(reason: string): void;
  serverRestarted?(reason: string): void;
  /** The Optuna search of a model ended its trials. */
  optuna?(model: SearchModel, report: OptunaReport): void;
  /** The quick search of an ensemble ended its climb. */
  climb?(model: SearchModel, report: ClimbReport): void;
}

/**
 * What a search's points share: the options each passes to a profile run,
 * the loads of each variant's sweep (a model's own loads first) and how the
 * variants are walked. An engine search gives it as a Triton search does.
 */
export type SearchRunConfig =
  & Pick<
    SearchConfig,
    | "protocol"
    | "pointOptions"
    | "searchMode"
    | "disabled"
    | "concurrencies"
    | "requestRates"
    | "requestRateSearch"
    | "binarySearchSteps"
    | "numConfigs"
  >
  // Only an Optuna search (searchMode "optuna") has its settings.
  & Partial<Pick<SearchConfig, "optuna">>;

/** The input data every point uses, as sweep points name it. */
export function inputDataOf(config: SearchRunConfig): string {
  const data = config.pointOptions.get("input-data");
  return Array.isArray(data) ? data[0] ?? "random" : "random";
}

/**
 * The running point's interrupt: a soft interrupt of the search lets the
 * point finish; a hard one (the third Ctrl-C) abandons it.
 */
export function pointInterruptOf(interrupt: Interrupt): Interrupt {
  const point = new Interrupt();
  void interrupt.race(new Promise<never>(() => {})).then(() => {
    point.trigger();
    point.trigger();
  });
  return point;
}

/**
 * Measures every variant of `plans` that `store` does not have. A soft
 * interrupt stops after the running point (measured and saved); a hard one
 * abandons it. `restart` replaces a local server that died, once.
 */
export async function runSearch<V extends SearchVariant = Variant>(
  config: SearchRunConfig,
  options: {
    plans: readonly ModelPlan<V>[];
    store: CheckpointStore;
    interrupt: Interrupt;
    server: SearchServer<V>;
    restart?: () => Promise<SearchServer<V>>;
    events?: SearchEvents<V>;
    measure?: MeasurePoint;
    /** The run events of each point (a progress display). */
    pointEvents?: RunEvents;
  },
): Promise<SearchOutcome<V>> {
  const { store, interrupt, events = {}, measure = measureWithProfile } = options;
  let server = options.server;
  let restarted = false;
  const pointInterrupt = pointInterruptOf(interrupt);
  const outcome: SearchOutcome<V> = { models: [], measured: 0, resumed: 0, interrupted: false };
  const total = options.plans.reduce((n, p) => n + p.variants.length, 0);
  let index = 0;

  const seen = new Set<string>();
  /** Measures a variant's series, one per client batch size, as `walk` leads; false when interrupted. */
  const measureVariant = async (
    model: SearchModel,
    variant: V,
    result: VariantOutcome<V>,
    walk: (batchSize: number) => Walk | undefined,
  ): Promise<boolean> => {
    const again = seen.has(variant.name);
    seen.add(variant.name);
    // More points of a variant are told only when one is measured (they may all be known).
    let told = !again;
    if (!again) events.variantStart?.(variant, { index: ++index, total, again });
    let served: string | undefined;
    const load = async () => served ??= await server.load(variant);
    /** A local server that died is started again, once in a search; the point is measured again. */
    const recover = async (reason: string): Promise<boolean> => {
      if (!options.restart || restarted || !await server.lost()) return false;
      restarted = true;
      server = await options.restart();
      events.serverRestarted?.(reason);
      served = undefined;
      return true;
    };
    const mode = loadModeOf(config, model);
    try {
      for (const batchSize of model.batchSizes) {
        const next = walk(batchSize);
        const series: PointRecord[] = [];
        for (let value = next?.(series); next && value !== undefined; value = next(series)) {
          if (typeof value === "string") {
            events.seriesEnd?.(value);
            break;
          }
          const point: SweepPoint = {
            model: variant.name,
            batchSize,
            protocol: config.protocol,
            inputData: inputDataOf(config),
            mode,
            value,
          };
          let record = store.records.get(pointKey(point));
          const known = record !== undefined && result.records.includes(record);
          if (record) {
            if (!known) outcome.resumed++;
          } else {
            if (interrupt.soft) return false;
            if (!told) events.variantStart?.(variant, { index, total, again });
            told = true;
            let measured: LevelResult | undefined;
            while (measured === undefined) {
              try {
                await load();
                const extra = await server.preparePoint?.() ?? {};
                events.pointStart?.(point);
                measured = await measure(
                  planOf(config, {
                    model,
                    served: served!,
                    batchSize,
                    mode,
                    value,
                    url: server.url(config.protocol),
                    extra,
                  }),
                  {
                    interrupt: pointInterrupt,
                    ...(options.pointEvents ? { events: options.pointEvents } : {}),
                  },
                );
                if (measured.client.errorCount > 0 && await recover("requests failed")) {
                  measured = undefined;
                }
              } catch (error) {
                if (interrupt.hard) break;
                if (error instanceof VariantLoadError) throw error;
                if (await recover((error as Error).message)) continue;
                // An engine started per variant that died is that variant's failure.
                if (!options.restart && await server.lost()) {
                  throw new VariantLoadError(
                    `The server stopped during the point (${(error as Error).message})`,
                  );
                }
                if (!POINT_ERRORS.some((type) => error instanceof type)) throw error;
                throw new VariantLoadError((error as Error).message);
              }
            }
            if (interrupt.hard || !measured) return false;
            const ram = await server.usedRamMb();
            record = {
              point,
              result: {
                ...measured,
                windows: [],
                ...(ram === undefined ? {} : { serverRamMb: ram }),
              },
              measuredAt: new Date().toISOString(),
            };
            store.add(record);
            store.save();
            outcome.measured++;
            events.point?.(record);
          }
          series.push(record);
          if (!known) result.records.push(record);
        }
      }
    } catch (error) {
      if (!(error instanceof VariantLoadError)) throw error;
      result.failure = error.message;
      events.variantFailed?.(variant, error.message);
    }
    if (served !== undefined && !server.exited) {
      await server.unload(variant).catch(() => {
        // A variant that does not unload is replaced by the next load anyway.
      });
    }
    return true;
  };

  for (const plan of options.plans) {
    const done: VariantOutcome<V>[] = [];
    outcome.models.push({ model: plan.model, variants: done });
    const quick = config.searchMode === "quick" && !plan.model.configParameters &&
      !config.disabled &&
      plan.variants.slice(1).every((v) => v.coordinates !== undefined && !("bls" in v));
    // Model Analyzer's climb measures each coordinate at a concurrency of its own: where the model
    // fixes its loads or is swept by request rate, its ensemble's combinations are measured as brute.
    const ensembleQuick = config.searchMode === "quick" && !config.disabled &&
      isEnsembleSearch(plan as unknown as ModelPlan) &&
      loadModeOf(config, plan.model) === "concurrency" && !plan.model.concurrency;
    /** Measures `variant`'s points as `walk` leads, into `result`, its outcome so far. */
    const walkOne = async (
      variant: V,
      walk: (batchSize: number) => Walk | undefined,
      result: VariantOutcome<V> = { variant, records: [] },
    ) => {
      if (!done.includes(result)) done.push(result);
      if (!await measureVariant(plan.model, variant, result, walk)) outcome.interrupted = true;
      return result;
    };
    /** Measures `variant`'s sweep over `loads`, or more of it into `result`. */
    const measureOne: MeasureVariant<V> = (variant, loads, result) =>
      // Quick search ends a sweep at the first point that gains under 5 %.
      walkOne(variant, () => sweepWalk(loads, plan.model, quick ? 2 : PLATEAU_POINTS), result);
    const concurrencies = loadsOf(config, plan.model);
    if (quick) {
      await climb(plan, {
        measure: measureOne,
        concurrencies,
        interrupted: () => outcome.interrupted,
      });
      if (!outcome.interrupted) {
        await finalSweep(plan.model, done, {
          measure: measureOne,
          concurrencies,
        });
      }
    } else if (ensembleQuick) {
      const sweepDisable = config.optuna?.sweepDisable ?? false;
      const report = await ensembleQuickSearch(plan as unknown as ModelPlan, {
        config,
        sweepDisable,
        done: done as unknown as VariantOutcome[],
        walk: walkOne as unknown as Parameters<typeof ensembleQuickSearch>[1]["walk"],
        interrupted: () => outcome.interrupted,
        top: (count) => ranked(plan.model, done).slice(0, count) as unknown as VariantOutcome[],
      });
      if (report) events.climb?.(plan.model, report);
      // Model Analyzer's sweep of the best configurations is its brute search's, bisection included.
      if (report && !sweepDisable) {
        await bisectTop(plan.model, done, {
          walk: walkOne,
          steps: config.binarySearchSteps,
          count: config.numConfigs,
        });
      }
    } else if (config.searchMode === "optuna" && config.optuna && !config.disabled) {
      // Optuna samples Triton's coordinates: only a model configuration search has them.
      const report = await optunaSearch(plan as unknown as ModelPlan, {
        config,
        settings: config.optuna,
        done: done as unknown as VariantOutcome[],
        walk: walkOne as unknown as Parameters<typeof optunaSearch>[1]["walk"],
        interrupted: () => outcome.interrupted,
        top: (count) => ranked(plan.model, done).slice(0, count) as unknown as VariantOutcome[],
      });
      if (report) events.optuna?.(plan.model, report);
    } else {
      for (const variant of plan.variants) {
        await measureOne(variant, concurrencies);
        if (outcome.interrupted) break;
      }
      // As Model Analyzer's brute search, where the model does not fix its loads.
      if (!outcome.interrupted && !plan.model.concurrency && !plan.model.requestRate) {
        await bisectTop(plan.model, done, {
          walk: walkOne,
          steps: config.binarySearchSteps,
          count: config.numConfigs,
        });
      }
    }
    if (outcome.interrupted) return outcome;
  }
  return outcome;
}

/** A variant's best point that meets the constraints, if any. */
function bestPoint<V extends SearchVariant>(
  model: SearchModel,
  variant: VariantOutcome<V>,
): PointRecord | undefined {
  return rankPoints(variant.records, { ...model, result: (r) => r.result }).find((r) =>
    r.reasons.length === 0
  )?.item;
}

/**
 * Model Analyzer's brute search ends with a binary search on the latency
 * budget: each of the `count` best configurations (and the model's own)
 * whose sweep crossed a constraint is measured between the last load within
 * it and the first beyond, so its best point is the highest load that fits.
 */
async function bisectTop<V extends SearchVariant>(
  model: SearchModel,
  done: readonly VariantOutcome<V>[],
  options: {
    walk: (
      variant: V,
      walk: (batchSize: number) => Walk | undefined,
      result: VariantOutcome<V>,
    ) => Promise<VariantOutcome<V>>;
    steps: number;
    count: number;
  },
): Promise<void> {
  const top = ranked(model, done).slice(0, options.count);
  const own = done.find((v) => v.variant.name.endsWith("_config_default"));
  if (own && !top.includes(own)) top.push(own);
  for (const v of top) {
    const walks = new Map(model.batchSizes.map((batchSize) => {
      const series = v.records.filter((r) => r.point.batchSize === batchSize);
      const bounds = constraintBoundary(series, model.goals);
      return [
        batchSize,
        bounds && bisectWalk(bounds, { steps: options.steps, goals: model.goals }),
      ];
    }));
    if (![...walks.values()].some((w) => w !== undefined)) continue;
    await options.walk(v.variant, (batchSize) => walks.get(batchSize), v);
    v.records.sort((a, b) =>
      a.point.batchSize - b.point.batchSize || a.point.value - b.point.value
    );
  }
}

/** Variants with a point within the constraints, best first. */
function ranked<V extends SearchVariant>(
  model: SearchModel,
  done: readonly VariantOutcome<V>[],
): VariantOutcome<V>[] {
  return done.flatMap((v) => {
    const best = bestPoint(model, v);
    return best ? [{ v, best }] : [];
  }).sort((a, b) => -compareResults(a.best.result, b.best.result, model.objectives))
    .map(({ v }) => v);
}

/** Measures `variant` at `concurrencies`, adding to `result` when given. */
type MeasureVariant<V extends SearchVariant> = (
  variant: V,
  concurrencies: readonly number[],
  result?: VariantOutcome<V>,
) => Promise<VariantOutcome<V>>;

/**
 * Quick search: hill climbing from the smallest configuration. From the
 * current one it measures the next max batch size up, then the next
 * instance count up, each sweep starting at the concurrency where the
 * current configuration did best, and moves to the first that beats it;
 * it stops when neither does.
 */
async function climb<V extends SearchVariant>(
  plan: ModelPlan<V>,
  options: {
    measure: MeasureVariant<V>;
    concurrencies: readonly number[];
    interrupted: () => boolean;
  },
): Promise<void> {
  const { model } = plan;
  // The model's own configuration is not a step of the climb.
  const grid = plan.variants.slice(1);
  const at = (count: number | undefined, batch: number | undefined) =>
    grid.find((v) => v.coordinates?.count === count && v.coordinates?.maxBatchSize === batch);
  const counts = [...new Set(grid.map((v) => v.coordinates!.count))];
  const batches = [...new Set(grid.map((v) => v.coordinates!.maxBatchSize))];
  let current = await options.measure(grid[0]!, options.concurrencies);
  while (!options.interrupted()) {
    const best = bestPoint(model, current);
    if (!best) return;
    const sweep = options.concurrencies.filter((c) => c >= best.point.value);
    const { count, maxBatchSize } = current.variant.coordinates!;
    const step = [
      at(count, batches[batches.indexOf(maxBatchSize) + 1]),
      at(counts[counts.indexOf(count) + 1], maxBatchSize),
    ];
    let moved = false;
    for (const variant of step) {
      if (!variant || (maxBatchSize === undefined && variant.coordinates!.count === count)) {
        continue;
      }
      const measured = await options.measure(variant, sweep);
      if (options.interrupted()) return;
      // A bigger configuration may meet a latency constraint only below the current best's load.
      const lower = options.concurrencies.filter((c) => c < best.point.value).reverse();
      if (!bestPoint(model, measured) && lower.length > 0) {
        await options.measure(variant, lower.slice(0, 1), measured);
        if (options.interrupted()) return;
      }
      const candidate = bestPoint(model, measured);
      if (candidate && compareResults(candidate.result, best.result, model.objectives) > 0) {
        current = measured;
        moved = true;
        break;
      }
    }
    if (!moved) return;
  }
}

/**
 * Quick search's last step, Model Analyzer's concurrency sweep of its top
 * configurations after the climb, bounded to what quick's 40 % budget
 * against brute leaves: the climb starts each sweep at the current best's
 * concurrency, so the best configuration's curve usually lacks the low end;
 * it is measured at the lowest concurrency too (one point). The runners-up
 * keep the climb's points: a point each more took quick past 40 % of brute's
 * (13 against 30-36 on the 20 ms test model).
 */
async function finalSweep<V extends SearchVariant>(
  model: SearchModel,
  done: readonly VariantOutcome<V>[],
  options: {
    measure: MeasureVariant<V>;
    concurrencies: readonly number[];
  },
): Promise<void> {
  const v = ranked(model, done)[0];
  if (!v) return;
  const lowest = Math.min(...options.concurrencies);
  if (v.records.some((r) => r.point.value === lowest)) return;
  await options.measure(v.variant, [lowest], v);
  // Keep the curve in load order, as a brute sweep's is.
  v.records.sort((a, b) => a.point.value - b.point.value);
}

/** The profile plan of one point: the served model at one load, with what the server adds. */
export function planOf(
  config: SearchRunConfig,
  point: {
    model: SearchModel;
    served: string;
    batchSize: number;
    mode: LoadMode;
    value: number;
    url?: string;
    /** The server's options for this point (c_api's repository, an engine's warmup). */
    extra: Record<string, string>;
  },
) {
  const raw = withFlags(config.pointOptions, point.model);
  raw.set("model-name", point.served);
  raw.set("batch-size", String(point.batchSize));
  if (point.model.blsComposing) {
    raw.set("bls-composing-models", [point.model.blsComposing.map((c) => c.name).join(",")]);
  }
  // Load 0: the point is a capacity search (an engine search's --search-recipe) over the range
  // the options give; its answer is the load it reports.
  if (point.value > 0) {
    raw.set(
      point.mode === "concurrency" ? "concurrency-range" : "request-rate-range",
      String(point.value),
    );
  }
  if (point.url !== undefined) raw.set("url", point.url);
  for (const [name, value] of Object.entries(point.extra)) raw.set(name, value);
  const plan = buildProfileConfig(raw);
  if (point.value === 0) return plan;
  return pointConfig(
    {
      point: {
        model: point.served,
        batchSize: point.batchSize,
        protocol: config.protocol,
        inputData: "",
        mode: point.mode,
        value: point.value,
      },
      loads: [point.value],
      config: plan,
    },
    point.value,
  );
}
