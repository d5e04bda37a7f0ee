/**
 * --request-intervals and --fixed-schedule: an open loop that replays the
 * gaps of a file, looped, or sends each input-data step at its timestamp
 * (one level, measured whole). Either fixes the rate.
 */
import { InputError } from "../../input/errors.ts";
import {
  fixedSchedule,
  fixedScheduleRate,
  intervalSchedule,
  intervalsRate,
  parseIntervals,
} from "../schedule.ts";
import type { LoadModeDef, LoadPattern } from "./mode.ts";

async function readIntervals(path: string): Promise<number[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new InputError(
      `Can not read the --request-intervals file "${path}": ${(error as Error).message}`,
    );
  }
  try {
    return parseIntervals(text, path);
  } catch (error) {
    throw new InputError((error as Error).message);
  }
}

const single = (rate: number) => ({ start: rate, end: rate, step: 1 });

export const customIntervals: LoadModeDef = {
  reportAs: "custom_intervals",
  async pattern(plan, inputs): Promise<LoadPattern> {
    const fixed = inputs.timestampsMs;
    if (fixed !== undefined) {
      // As in perf_analyzer, the schedule is played once: the warmup sends its first steps at
      // their timestamps, then the measurement the others at theirs, from its own start. The
      // level's loads start the warmup first, so each start takes the next part.
      const warmup = inputs.warmupRequestCount ?? 0;
      if (warmup >= fixed.length) {
        throw new InputError(
          `--warmup-request-count ${warmup} must be less than the ${fixed.length} steps of the ` +
            "--fixed-schedule input data (the warmup sends the first ones)",
        );
      }
      const parts = warmup > 0 ? [fixed.slice(0, warmup), fixed.slice(warmup)] : [fixed];
      let starts = 0;
      const measured = parts[parts.length - 1];
      return {
        range: single(fixedScheduleRate(fixed)),
        schedule: () => fixedSchedule(parts[Math.min(starts++, parts.length - 1)]),
        // A finite schedule is measured whole: --request-count can only shorten it.
        requestCount: inputs.requestCount > 0
          ? Math.min(inputs.requestCount, measured.length)
          : measured.length,
      };
    }
    // lib/cli chooses this mode for --fixed-schedule or --request-intervals only.
    const intervals = await readIntervals(plan.requestIntervals!);
    return { range: single(intervalsRate(intervals)), schedule: () => intervalSchedule(intervals) };
  },
};
