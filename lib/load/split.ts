/**
 * How a load is shared between worker threads (--workers): counts split as
 * evenly as possible, contiguous ranges, and open-loop schedules taken in
 * stride, so that the workers together send exactly what one would. Pure:
 * no clock, no I/O.
 */
import type { Schedule } from "./schedule.ts";

/** Worker `index` of `count`. */
export interface Part {
  index: number;
  count: number;
}

/** Part `part.index` of `total` split into `part.count`: the first `total % count` get one more. */
export function share(total: number, part: Part): number {
  const base = Math.floor(total / part.count);
  return base + (part.index < total % part.count ? 1 : 0);
}

/**
 * Part `part.index`'s share of `total` when only the first `senders` parts
 * send (a closed loop with fewer lanes than parts): 0 for the idle ones.
 */
export function shareAmong(total: number, part: Part, senders: number): number {
  return part.index < senders ? share(total, { index: part.index, count: senders }) : 0;
}

/** The sum of the shares before `part`: where its slice of 0..total-1 starts. */
export function shareStart(total: number, part: Part): number {
  const base = Math.floor(total / part.count);
  return part.index * base + Math.min(part.index, total % part.count);
}

/** The contiguous slice of the integer range start..end (inclusive) that `part` takes. */
export function shareRange(
  range: { start: number; end: number },
  part: Part,
): { start: number; end: number } {
  const size = range.end - range.start + 1;
  const start = range.start + shareStart(size, part);
  return { start, end: start + share(size, part) - 1 };
}

/**
 * The sends of `schedule` numbered from 0 whose number is `part.index`
 * modulo `part.count`. Every worker walks the whole schedule (so a seeded
 * Poisson schedule draws the same gaps in each) and keeps its own stride:
 * together they send each due time of the schedule exactly once.
 */
export function strideSchedule(schedule: Schedule, part: Part): Schedule {
  let skip = part.index;
  return {
    next: () => {
      for (; skip > 0; skip--) schedule.next();
      skip = part.count - 1;
      return schedule.next();
    },
  };
}

/** `schedule` with every due time moved by `offsetMs` (a start shared by several pacers). */
export function shiftedSchedule(schedule: Schedule, offsetMs: number): Schedule {
  return { next: () => schedule.next() + offsetMs };
}
