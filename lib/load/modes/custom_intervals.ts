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
      return {
        range: single(fixedScheduleRate(fixed)),
        schedule: () => fixedSchedule(fixed),
        // A finite schedule is measured whole: --request-count can only shorten it.
        requestCount: inputs.requestCount > 0
          ? Math.min(inputs.requestCount, fixed.length)
          : fixed.length,
      };
    }
    // lib/cli chooses this mode for --fixed-schedule or --request-intervals only.
    const intervals = await readIntervals(plan.requestIntervals!);
    return { range: single(intervalsRate(intervals)), schedule: () => intervalSchedule(intervals) };
  },
};
