/** perf_analyzer's `start:end:step` ranges. */

export interface Range {
  start: number;
  /** 0 means open-ended (sweep until the latency threshold). */
  end: number;
  step: number;
}

/**
 * Parses `start[:end[:step]]` with perf_analyzer's defaults, end 1 and step 1.
 * An end below the start is kept: a linear sweep then measures the start
 * alone, as perf_analyzer's does, so a lone start is a single level. Throws
 * RangeError saying what is wrong (the caller names the option).
 */
export function parseRange(text: string, options: { integer: boolean }): Range {
  const parts = text.split(":");
  if (parts.length > 3 || parts.some((p) => p.trim() === "")) {
    throw new RangeError("expected START[:END[:STEP]]");
  }
  const values = parts.map((p) => Number(p.trim()));
  for (const v of values) {
    if (!Number.isFinite(v) || v < 0 || (options.integer && !Number.isInteger(v))) {
      throw new RangeError(
        `expected ${options.integer ? "non-negative integers" : "non-negative numbers"}`,
      );
    }
  }
  const [start, end = 1, step = 1] = values as [number, number?, number?];
  if (start <= 0) throw new RangeError("the start must be greater than 0");
  if (step <= 0) throw new RangeError("the step must be greater than 0");
  return { start, end, step };
}

/**
 * The levels of a linear sweep: the start, then each step up to the end;
 * open-ended ranges yield until the caller stops.
 */
export function* rangeLevels(range: Range): Generator<number> {
  let v = range.start;
  do {
    yield v;
    v += range.step;
  } while (range.end === 0 || v <= range.end + 1e-9);
}
