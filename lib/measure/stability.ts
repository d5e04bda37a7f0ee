/**
 * perf_analyzer's stability rule: the last windows agree on throughput and
 * on the stabilizing latency (the mean, or the --percentile latency).
 */
import { mean, percentile } from "./stats.ts";
import type { ClientSummary, WindowData } from "../types/results.ts";

/** The figures of one window that stability compares. */
export interface WindowFigures {
  /** Inferences per second. */
  throughput: number;
  /** The stabilizing latency in microseconds. */
  latencyUs: number;
}

export interface StabilityOptions {
  /** -s: allowed spread in percent between the largest and smallest value. */
  stabilityPercentage: number;
  /** How many trailing windows must agree. */
  count?: number;
  /**
   * False judges throughput only. perf_analyzer falls back to that in async
   * mode when latency never settles (and warns).
   */
  checkLatency?: boolean;
}

/** Windows perf_analyzer compares. */
export const STABILITY_WINDOWS = 3;

/** Valid requests x batch size per second of the window. */
export function windowThroughput(window: WindowData, batchSize: number): number {
  const seconds = (window.endMs - window.startMs) / 1000;
  return seconds > 0 ? (window.latenciesUs.length * batchSize) / seconds : 0;
}

/** The window's mean latency, or its `percentile` latency when given (microseconds). */
export function stabilizingLatencyUs(window: WindowData, percentileValue?: number): number {
  if (percentileValue === undefined) return mean(window.latenciesUs);
  if (window.latenciesUs.length === 0) return 0;
  return percentile(Float64Array.from(window.latenciesUs).sort(), percentileValue);
}

/** A level's stabilizing latency: its `percentile` latency when given, else the average. */
export function stabilizingLatency(client: ClientSummary, percentile?: number): number {
  return percentile === undefined ? client.avgLatencyUs : client.percentilesUs.get(percentile)!;
}

function withinSpread(values: readonly number[], limit: number): boolean {
  // A zero minimum makes the ratio Infinity (or NaN for 0/0): never stable.
  return Math.max(...values) / Math.min(...values) <= limit;
}

/**
 * True when the last `count` windows all have throughput > 0 and both their
 * throughputs and latencies stay within max/min <= 1 + s/100.
 */
export function isStable(windows: readonly WindowFigures[], options: StabilityOptions): boolean {
  const count = options.count ?? STABILITY_WINDOWS;
  if (windows.length < count) return false;
  const recent = windows.slice(-count);
  if (recent.some((w) => !(w.throughput > 0))) return false;
  const limit = 1 + options.stabilityPercentage / 100;
  return withinSpread(recent.map((w) => w.throughput), limit) &&
    (options.checkLatency === false || withinSpread(recent.map((w) => w.latencyUs), limit));
}

/**
 * perf_analyzer ends a level early once it has `count` windows and any of the
 * last `count` reached the latency limit (-l, milliseconds; 0 = none).
 */
export function exceedsLatencyLimit(
  windows: readonly WindowFigures[],
  options: { latencyLimitMs: number; count?: number },
): boolean {
  const count = options.count ?? STABILITY_WINDOWS;
  if (options.latencyLimitMs <= 0 || windows.length < count) return false;
  return windows.slice(-count).some((w) => w.latencyUs >= options.latencyLimitMs * 1000);
}
