/**
 * The load part of a run's plan: which load mode runs over which levels, how
 * open-loop sends are bounded and judged, and how sequences are grouped.
 */
import type { CapacityRecipe } from "./capacity.ts";
import type { Range } from "./range.ts";
import type { RampStrategy, Stage } from "./shape.ts";

/** --sequence-* options: how requests of sequence models are grouped. */
export interface SequenceConfig {
  /** Live sequences an open-loop load cycles through (--num-of-sequences). */
  count: number;
  length: number;
  variationPct: number;
  idRange: { start: number; end: number };
  serial: boolean;
}

/** AIPerf's --request-cancellation-rate and --request-cancellation-delay. */
export interface CancellationPlan {
  /** Percentage of requests to cancel, above 0 and up to 100. */
  percent: number;
  /** How long after its send a drawn request is cancelled, milliseconds. */
  delayMs: number;
}

export interface LoadPlan {
  /** The name of an entry of lib/load/modes/mod.ts: perf_analyzer's modes, or one of ours. */
  loadMode: string;
  /** --concurrency-range; used when loadMode is "concurrency". */
  concurrency: Range;
  /** --request-rate-range (floats); used when loadMode is "request_rate". */
  requestRate: Range;
  requestDistribution: "constant" | "poisson" | "gamma";
  /** --burstiness (vLLM's; AIPerf's --arrival-smoothness): the gamma gaps' shape, 1 for Poisson. */
  burstiness: number;
  /**
   * --request-rate-ramp-duration or --concurrency-ramp-duration: each level
   * ramps the load mode's value from `start` to the level's over `durationMs`.
   */
  ramp?: { durationMs: number; strategy: RampStrategy; start: number };
  /**
   * --request-rate-stages or --concurrency-stages (k6's stages): one level
   * whose rate or concurrency goes from target to target, measured as one
   * window of their whole duration.
   */
  stages?: readonly Stage[];
  /**
   * --prefill-concurrency: at most this many streamed requests waiting for
   * their first token; a send waits for one of them to get it.
   */
  prefillConcurrency?: number;
  /** --prefill-concurrency-ramp-duration: that limit ramps from 1 over this many milliseconds. */
  prefillRampMs?: number;
  /** --request-intervals file; loadMode is then "custom_intervals". */
  requestIntervals?: string;
  /**
   * --fixed-schedule: each input-data step is sent at its timestamp, as one
   * window; loadMode is then "custom_intervals" (a single open-loop level).
   */
  fixedSchedule: boolean;
  /** --periodic-concurrency-range with --request-period (replaces the sweep). */
  periodic?: { range: Range; requestPeriod: number };
  /**
   * --session-concurrency: this many multi-turn sessions of the input data
   * in flight (replaces the sweep; OpenAI chat only).
   */
  sessionConcurrency?: number;
  binarySearch: boolean;
  /**
   * --search-recipe: the levels are chosen by the capacity search (capacity.ts)
   * within the range (an end of 0: none, bracketing from its start).
   */
  capacity?: { recipe: CapacityRecipe; resolution: number; checkpoint: string };
  latencyThresholdMs: number;
  async: boolean;
  maxInflight: number;
  /**
   * AIPerf's --request-rate with --concurrency: the open loop's cap on
   * requests in flight (maxInflight is then the same); sends that waited
   * for it are the blocked ones.
   */
  concurrencyCap?: number;
  /**
   * AIPerf's --concurrency-ramp-duration with that cap: the cap ramps from 1
   * to it over this many milliseconds at each level.
   */
  capRampMs?: number;
  /** --send-batching: open-loop wake-ups at least this many milliseconds apart. */
  sendBatchMs: number;
  /** --workers: threads that drive the load (1: the main thread alone). */
  workers: number;
  /** --max-send-lag (default 1): a level whose send-lag p99 exceeds it is behind schedule. */
  maxSendLagMs: number;
  /**
   * A level behind schedule fails the run (exit code 2): --max-send-lag given
   * explicitly, without --ignore-send-lag. By default it is a warning, as in
   * perf_analyzer.
   */
  sendLagFails: boolean;
  sequences: SequenceConfig;
  /** Requests cancelled on purpose after a delay, counted apart; absent: none. */
  cancellation?: CancellationPlan;
}
