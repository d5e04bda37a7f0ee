/** What a load mode is: the interface every entry of the registry (mod.ts) implements. */
import type { Rng } from "../../input/generate.ts";
import type { LoadMode } from "../../types/results.ts";
import type { LoadPlan } from "../plan.ts";
import type { Range } from "../range.ts";
import type { Schedule } from "../schedule.ts";
import type { ConcurrencySteps } from "../shape.ts";

/**
 * A run's load as its mode shapes it. A closed loop (no `schedule`) keeps
 * `value` requests in flight; an open loop sends when its pure pacer says.
 */
export interface LoadPattern {
  /** The levels to sweep: concurrencies or request rates. */
  range: Range;
  /** An open loop's pacer: when each send of level `value` is due (seeded: runs repeat exactly). */
  schedule?(value: number, rng: Rng): Schedule;
  /** A closed loop whose concurrency moves: when it changes in level `value` (pure). */
  steps?(value: number): ConcurrencySteps;
  /** Each level is one window of exactly this many requests. */
  requestCount?: number;
  /** Each level is one window of this many milliseconds: a shape that ends (stages). */
  durationMs?: number;
}

/** What a mode reads beyond the plan, once, before the first level. */
export interface PatternInputs {
  /** --request-count (0: none). */
  requestCount: number;
  /** --fixed-schedule: when each input-data step is due, ms from the start of the load. */
  timestampsMs?: readonly number[];
  /** --warmup-request-count (0: none): a fixed schedule's first steps are the warmup. */
  warmupRequestCount?: number;
}

export interface LoadModeDef {
  /** How results and reports name its levels (perf_analyzer's modes). */
  readonly reportAs: LoadMode;
  /** The run's pattern; may read files (a mode's own options), not the network. */
  pattern(plan: LoadPlan, inputs: PatternInputs): LoadPattern | Promise<LoadPattern>;
}
