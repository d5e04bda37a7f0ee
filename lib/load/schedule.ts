/**
 * Open-loop schedules: when each send is due, in milliseconds from the start
 * of the load. Pure: no clock and no I/O, randomness only from a seeded
 * generator, so every schedule can be checked exactly without a network.
 * The pacer adds the due times to its start time on the monotonic clock.
 */
import { type Rng, standardNormal } from "../input/generate.ts";

/** A sequence of due times; each call returns the next one, never a smaller one. */
export interface Schedule {
  /** Milliseconds from the start of the load; Infinity once the schedule has no more sends. */
  next(): number;
}

function checkRate(rate: number): void {
  if (!(rate > 0 && Number.isFinite(rate))) {
    throw new RangeError(`Request rate "${rate}" must be a finite number > 0`);
  }
}

/**
 * Evenly spaced sends: the n-th (from 1) is due at n / rate seconds, computed
 * by multiplication so that long runs do not accumulate rounding drift.
 */
export function constantSchedule(rate: number): Schedule {
  checkRate(rate);
  const periodMs = 1000 / rate;
  let n = 0;
  return { next: () => ++n * periodMs };
}

/** A Poisson process: exponentially distributed gaps with mean 1 / rate. */
export function poissonSchedule(rate: number, rng: Rng): Schedule {
  checkRate(rate);
  const meanMs = 1000 / rate;
  let due = 0;
  // 1 - rng() is in (0, 1], so the logarithm stays finite.
  return { next: () => due += -meanMs * Math.log(1 - rng()) };
}

/**
 * A gamma draw of shape `k` and mean 1, by Marsaglia and Tsang's method
 * (shapes below 1 through the k + 1 draw times U^(1/k)). Shape 1 is the
 * exponential draw itself, so burstiness 1 walks the Poisson schedule exactly.
 */
export function unitGamma(k: number, rng: Rng): number {
  if (k === 1) return -Math.log(1 - rng());
  if (k < 1) return unitGamma(k + 1, rng) * (k + 1) / k * (1 - rng()) ** (1 / k);
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = standardNormal(rng);
    const v = (1 + c * x) ** 3;
    if (v <= 0) continue;
    const u = 1 - rng();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v / k;
  }
}

/**
 * vLLM's --burstiness: gamma-distributed gaps with mean 1 / rate and shape
 * `burstiness`, so their coefficient of variation is 1 / sqrt(burstiness)
 * (1 is Poisson; below it burstier, above it more even).
 */
export function gammaSchedule(rate: number, options: { burstiness: number; rng: Rng }): Schedule {
  checkRate(rate);
  const { burstiness, rng } = options;
  if (!(burstiness > 0 && Number.isFinite(burstiness))) {
    throw new RangeError(`Burstiness "${burstiness}" must be a finite number > 0`);
  }
  const meanMs = 1000 / rate;
  let due = 0;
  return { next: () => due += meanMs * unitGamma(burstiness, rng) };
}

/**
 * Unit-mean gaps of an arrival process, for shaped schedules (shape.ts):
 * even (1 each), Poisson (exponential) or gamma of shape `burstiness`.
 */
export function arrivalGaps(
  distribution: "constant" | "poisson" | "gamma",
  options: { burstiness: number; rng: Rng },
): () => number {
  const { burstiness, rng } = options;
  if (distribution === "constant") return () => 1;
  const k = distribution === "poisson" ? 1 : burstiness;
  return () => unitGamma(k, rng);
}

/**
 * The gaps of --request-intervals, looped: 100000, 200000, 500000 us give
 * sends at 0.1, 0.3, 0.8, 0.9, 1.1, 1.6 s and so on. Each due time is
 * computed from whole cycles plus a prefix sum, so looping does not drift.
 */
export function intervalSchedule(intervalsUs: readonly number[]): Schedule {
  if (intervalsUs.length === 0) throw new RangeError("At least one interval is needed");
  const prefixMs = new Float64Array(intervalsUs.length);
  let total = 0;
  intervalsUs.forEach((us, i) => {
    if (!(us >= 0 && Number.isFinite(us))) {
      throw new RangeError(`Interval "${us}" must be a finite number of microseconds >= 0`);
    }
    total += us / 1000;
    prefixMs[i] = total;
  });
  if (total <= 0) throw new RangeError("The intervals must not all be 0");
  const count = intervalsUs.length;
  let n = 0;
  return {
    next: () => {
      const cycle = Math.floor(n / count);
      const due = cycle * total + prefixMs[n % count];
      n++;
      return due;
    },
  };
}

/** Sends at given times (milliseconds from the start), then no more. */
export function fixedSchedule(timestampsMs: readonly number[]): Schedule {
  for (let i = 1; i < timestampsMs.length; i++) {
    if (!(timestampsMs[i] >= timestampsMs[i - 1])) {
      throw new RangeError(
        `Timestamps must not decrease: ${timestampsMs[i]} follows ${timestampsMs[i - 1]}`,
      );
    }
  }
  let n = 0;
  return { next: () => n < timestampsMs.length ? timestampsMs[n++] : Infinity };
}

/**
 * Reads a --request-intervals file: one interval in microseconds per line;
 * blank lines are skipped. Throws a RangeError naming the line.
 */
export function parseIntervals(text: string, source: string): number[] {
  const intervals: number[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    const us = Number(line);
    if (!/^\d+(\.\d*)?$/.test(line) || !Number.isFinite(us)) {
      throw new RangeError(
        `Invalid interval "${line}" on line ${i + 1} of "${source}": expected microseconds >= 0`,
      );
    }
    intervals.push(us);
  }
  if (intervals.length === 0 || intervals.every((us) => us === 0)) {
    throw new RangeError(`"${source}" holds no interval > 0`);
  }
  return intervals;
}

/**
 * The average send rate of a fixed schedule, requests per second (the level's
 * value in reports): its sends over the time to the last one, at least 1 ms.
 */
export function fixedScheduleRate(timestampsMs: readonly number[]): number {
  return (timestampsMs.length * 1000) / Math.max(1, timestampsMs[timestampsMs.length - 1]);
}

/** The average send rate of intervals, requests per second (the level's value in reports). */
export function intervalsRate(intervalsUs: readonly number[]): number {
  const totalUs = intervalsUs.reduce((sum, us) => sum + us, 0);
  return (intervalsUs.length * 1e6) / totalUs;
}
