/**
 * Periodic concurrency mode (--periodic-concurrency-range): one experiment
 * instead of a sweep, whose result covers every request of the pattern as
 * one window.
 */
import type { Range } from "../load/range.ts";
import { PeriodicLoad } from "../load/periodic.ts";
import type { Histogram } from "../types/results.ts";
import { Recorder } from "../measure/recorder.ts";
import { summarizeClient } from "../measure/stats.ts";
import type { LevelResult } from "../types/results.ts";
import type { RequestSink } from "../types/timing.ts";
import type { InferenceClient, PreparedRequest } from "../protocol/types.ts";
import type { Interrupt } from "../measure/interrupt.ts";

export interface PeriodicRunOptions {
  periodic: { range: Range; requestPeriod: number };
  batchSize: number;
  /** Reported beside perf_analyzer's percentiles. */
  percentile?: number;
  requests: readonly PreparedRequest[];
  interrupt: Interrupt;
  /** Receives every completed request (the profile export). */
  sink?: RequestSink;
  /** Makes the window's latency histogram (for exports). */
  newHistogram?: () => Histogram;
}

/** Runs the pattern once, or until an interrupt, recording it as one window. */
export async function runPeriodic(
  client: InferenceClient,
  options: PeriodicRunOptions,
): Promise<LevelResult> {
  const { periodic, interrupt } = options;
  const recorder = new Recorder({ sink: options.sink, newHistogram: options.newHistogram });
  const load = new PeriodicLoad(client, { ...periodic, requests: options.requests });
  recorder.rotate();
  await interrupt.race(load.run(recorder));
  const window = recorder.rotate();
  return {
    mode: "concurrency",
    value: periodic.range.end,
    client: summarizeClient([window], {
      batchSize: options.batchSize,
      percentiles: options.percentile === undefined ? [] : [options.percentile],
    }),
    stable: true,
    windows: [window],
  };
}
