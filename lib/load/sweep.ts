/**
 * Walks the load levels of a range: linearly (stopping at the latency
 * threshold) or by binary search for the highest level under the threshold.
 * Independent of the load mode: it only calls `measure(value)`.
 */
import { type Range, rangeLevels } from "./range.ts";
import type { LevelResult } from "../types/results.ts";
import type { Interrupt } from "../measure/interrupt.ts";

/** The first level could not stabilize: perf_analyzer's exit code 2. */
export class UnstableError extends Error {
  override name = "UnstableError";
  constructor(readonly result: LevelResult, maxTrials: number) {
    super(
      `Failed to obtain stable measurement within ${maxTrials} measurement windows for ${
        result.mode === "concurrency" ? "concurrency" : "request rate"
      } ${result.value}. Please try to increase the --measurement-interval.`,
    );
  }
}

export interface SweepOptions {
  range: Range;
  binarySearch: boolean;
  latencyThresholdMs: number;
  maxTrials: number;
  /** The latency compared with the threshold: the stabilizing one (average or percentile). */
  latencyUs: (result: LevelResult) => number;
  interrupt: Interrupt;
}

export interface SweepOutcome {
  results: LevelResult[];
  /** Why the sweep ended early, in perf_analyzer's words. */
  note?: string;
}

type Measure = (value: number) => Promise<LevelResult>;

export async function sweep(measure: Measure, options: SweepOptions): Promise<SweepOutcome> {
  const results: LevelResult[] = [];
  const thresholdUs = options.latencyThresholdMs * 1000;
  const over = (r: LevelResult) => thresholdUs > 0 && options.latencyUs(r) >= thresholdUs;
  const overNote =
    `Measured latency went over the set limit of ${options.latencyThresholdMs} msec.`;
  /** Measures one level; `stop` says why the sweep must end regardless of its latency. */
  const run = async (value: number): Promise<{ result?: LevelResult; stop?: string }> => {
    const result = await measure(value);
    if (options.interrupt.soft) {
      // What was measured before the interrupt is kept even though the level could not finish.
      results.push(result);
      const partial = result.stable ? "" : ` (the last level is from its unstable windows)`;
      return { stop: `Interrupted: reporting the levels measured so far${partial}.` };
    }
    if (!result.stable) {
      if (results.length === 0) throw new UnstableError(result, options.maxTrials);
      return { stop: new UnstableError(result, options.maxTrials).message };
    }
    results.push(result);
    return { result };
  };

  if (!options.binarySearch) {
    for (const value of rangeLevels(options.range)) {
      const { result, stop } = await run(value);
      if (stop) return { results, note: stop };
      if (over(result!)) return { results, note: overNote };
    }
    return { results };
  }

  let low = options.range.start;
  let high = options.range.end;
  const first = await run(low);
  if (first.stop) return { results, note: first.stop };
  if (over(first.result!)) return { results, note: overNote };
  const last = await run(high);
  if (last.stop) return { results, note: last.stop };
  if (!over(last.result!)) return { results };
  const step = options.range.step;
  while (high - low > step) {
    const mid = low + Math.max(1, Math.floor((high - low) / 2 / step)) * step;
    const { result, stop } = await run(mid);
    if (stop) return { results, note: stop };
    if (over(result!)) high = mid;
    else low = mid;
  }
  return { results };
}
