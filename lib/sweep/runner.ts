/**
 * Runs a sweep: every point of the matrix not yet in the checkpoint is
 * measured with the normal stabilization (one single-level profile run) and
 * saved at once. A series (points differing only in load) ends at the first
 * point that is unstable or reaches the latency threshold, as perf_analyzer's
 * sweeps do; the decision is taken from stored points too, so a resumed sweep
 * measures exactly what an uninterrupted one would.
 */
import type { ProfilePlan } from "../profile/plan.ts";
import { UnstableError } from "../load/sweep.ts";
import { NoValidRequestsError } from "../measure/level.ts";
import type { LevelResult } from "../types/results.ts";
import { InputError } from "../input/errors.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { stabilizingLatency } from "../measure/stability.ts";
import { type RunEvents, runProfile } from "../profile/run.ts";
import { InferError, ProtocolError, TimeoutError } from "../protocol/errors.ts";
import type { CheckpointStore, PointRecord } from "./checkpoint.ts";
import {
  countPoints,
  pointConfig,
  pointKey,
  type Series,
  seriesLoads,
  type SweepConfig,
  type SweepPoint,
} from "./config.ts";

export interface PointInfo {
  /** 1-based position in the matrix. */
  index: number;
  /** Points in the matrix; undefined when a series is open-ended. */
  total?: number;
}

export interface SweepEvents {
  /** A point not in the checkpoint starts. */
  pointStart?(point: SweepPoint, info: PointInfo): void;
  /** A point was measured and the checkpoint saved to `file`. */
  point?(record: PointRecord, info: PointInfo & { file: string }): void;
  /** A point could not be measured; the rest of its series is skipped. */
  pointFailed?(point: SweepPoint, error: Error): void;
  /** A point measured by this run ended its series before the last load value. */
  seriesEnd?(series: Series, reason: string): void;
}

export interface PointFailure {
  point: SweepPoint;
  message: string;
}

export interface SweepOutcome {
  /** Measured points of this sweep's matrix (earlier runs' too), in matrix order. */
  records: PointRecord[];
  failures: PointFailure[];
  /** Points measured by this run. */
  measured: number;
  /** Points taken from the checkpoint. */
  resumed: number;
  /** Stopped by an interrupt before the end of the matrix. */
  interrupted: boolean;
}

/** Measures one point; the default runs a single-level profile. */
export type MeasurePoint = (
  config: ProfilePlan,
  options: { interrupt: Interrupt; events?: RunEvents },
) => Promise<LevelResult>;

/** Errors of one point (its model, batch size or data), as opposed to the whole sweep's. */
export const POINT_ERRORS = [
  InputError,
  InferError,
  TimeoutError,
  ProtocolError,
  NoValidRequestsError,
];

/** One single-level profile run; an unstable level is a result too. */
export async function measureWithProfile(
  config: ProfilePlan,
  options: { interrupt: Interrupt; events?: RunEvents },
): Promise<LevelResult> {
  try {
    const outcome = await runProfile(config, {
      interrupt: options.interrupt,
      ...(options.events ? { events: options.events } : {}),
    });
    return outcome.results[0]!;
  } catch (error) {
    // An unstable point is a measurement too: kept and shown as unstable.
    if (error instanceof UnstableError) return error.result;
    throw error;
  }
}

/** Why a series stops after `record`, if it does. */
function seriesStop(record: PointRecord, sweep: SweepConfig): string | undefined {
  if (!record.result.stable) return "the point did not stabilize: higher loads are skipped";
  const thresholdUs = sweep.latencyThresholdMs * 1000;
  if (
    thresholdUs > 0 && stabilizingLatency(record.result.client, sweep.percentile) >= thresholdUs
  ) {
    return `latency reached the -l/--latency-threshold of ${sweep.latencyThresholdMs} msec: higher loads are skipped`;
  }
  return undefined;
}

/**
 * Runs the points of `sweep` that `store` does not have. A soft interrupt
 * stops after the running point (measured and saved); a hard one abandons it.
 */
export async function runSweep(
  sweep: SweepConfig,
  options: {
    store: CheckpointStore;
    interrupt: Interrupt;
    events?: SweepEvents;
    measure?: MeasurePoint;
    /** The run events of each point (a progress display). */
    pointEvents?: RunEvents;
  },
): Promise<SweepOutcome> {
  const { store, interrupt, events = {}, measure = measureWithProfile } = options;
  const measureOptions = {
    interrupt: new Interrupt(),
    ...(options.pointEvents ? { events: options.pointEvents } : {}),
  };
  // The running point only stops early on a hard interrupt: a soft one lets it finish.
  const pointInterrupt = measureOptions.interrupt;
  void interrupt.race(new Promise<never>(() => {})).then(() => {
    pointInterrupt.trigger();
    pointInterrupt.trigger();
  });
  const outcome: SweepOutcome = {
    records: [],
    failures: [],
    measured: 0,
    resumed: 0,
    interrupted: false,
  };
  const total = countPoints(sweep);
  let index = 0;
  for (const series of sweep.series) {
    for (const value of seriesLoads(series)) {
      index++;
      const point: SweepPoint = { ...series.point, value };
      let record = store.records.get(pointKey(point));
      const resumed = record !== undefined;
      if (record) outcome.resumed++;
      else {
        if (interrupt.soft) {
          outcome.interrupted = true;
          return outcome;
        }
        events.pointStart?.(point, { index, total });
        let result: LevelResult | undefined;
        let failure: Error | undefined;
        try {
          result = await measure(pointConfig(series, value), measureOptions);
        } catch (error) {
          if (!interrupt.hard && !POINT_ERRORS.some((type) => error instanceof type)) throw error;
          failure = error as Error;
        }
        if (interrupt.hard) {
          outcome.interrupted = true;
          return outcome;
        }
        if (!result) {
          outcome.failures.push({ point, message: failure!.message });
          events.pointFailed?.(point, failure!);
          break;
        }
        record = {
          point,
          result: { ...result, windows: [] },
          measuredAt: new Date().toISOString(),
        };
        store.add(record);
        const file = store.save()!;
        outcome.measured++;
        events.point?.(record, { index, total, file });
      }
      outcome.records.push(record);
      const stop = seriesStop(record, sweep);
      if (stop) {
        const last = Array.isArray(series.loads) && value === series.loads.at(-1);
        if (!last && !resumed) events.seriesEnd?.(series, stop);
        break;
      }
    }
  }
  return outcome;
}
