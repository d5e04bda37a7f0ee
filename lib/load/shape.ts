/**
 * Load shapes: a load that changes over time within one level, as pieces
 * that each go from one value to another over a duration, linearly or
 * exponentially. A ramp (AIPerf's --request-rate-ramp-duration and
 * --concurrency-ramp-duration) is one piece and then holds the level's
 * value; stages (k6's) are a list of pieces after which the load ends.
 *
 * Pure, like schedule.ts: a rate shape becomes a schedule of due times by
 * time-rescaling (the n-th send is due where the shape's cumulative count
 * of sends reaches the n-th arrival of a unit-rate process), so constant,
 * Poisson and gamma gaps keep their character while the rate moves; a
 * concurrency shape becomes the times at which the number of requests in
 * flight changes.
 */
import type { Schedule } from "./schedule.ts";

export type RampStrategy = "linear" | "exponential";

/** One piece of a shape: the value goes from `from` to `to` over `durationMs`. */
export interface ShapePiece {
  durationMs: number;
  from: number;
  to: number;
  strategy: RampStrategy;
}

export interface LoadShape {
  pieces: readonly ShapePiece[];
  /** After the last piece the load holds its end value (a ramp) or ends (stages). */
  hold: boolean;
}

/** A stage as k6 gives it: reach `target` by the end of `durationMs`. */
export interface Stage {
  durationMs: number;
  target: number;
}

/**
 * The shape of a ramp to `value`: from `start` over `durationMs`, then held.
 * An exponential ramp needs a start above 0.
 */
export function rampShape(
  value: number,
  options: { durationMs: number; strategy: RampStrategy; start: number },
): LoadShape {
  const { durationMs, strategy, start } = options;
  return { pieces: [{ durationMs, from: start, to: value, strategy }], hold: true };
}

/** Stages as one shape, each linear from the previous target (the first from `start`). */
export function stagesShape(stages: readonly Stage[], start: number): LoadShape {
  let from = start;
  const pieces = stages.map((stage) => {
    const piece: ShapePiece = {
      durationMs: stage.durationMs,
      from,
      to: stage.target,
      strategy: "linear",
    };
    from = stage.target;
    return piece;
  });
  return { pieces, hold: false };
}

/** How long a shape lasts: Infinity when it holds. */
export function shapeDurationMs(shape: LoadShape): number {
  return shape.hold ? Infinity : shape.pieces.reduce((sum, p) => sum + p.durationMs, 0);
}

/** Sends of a rate piece (requests per second) in its first `t` ms. */
export function sendsWithin(piece: ShapePiece, t: number): number {
  const { from, to, durationMs: d } = piece;
  if (d === 0 || t <= 0) return 0;
  const a = from / 1000;
  if (from === to) return a * t;
  if (piece.strategy === "exponential") {
    const lnG = Math.log(to / from);
    return a * d * Math.expm1(lnG * t / d) / lnG;
  }
  return a * t + (to - from) / 1000 * t * t / (2 * d);
}

/** The time into a rate piece at which `u` sends (at most the piece's own) are due. */
function timeOfSends(piece: ShapePiece, u: number): number {
  const { from, to, durationMs: d } = piece;
  const a = from / 1000;
  if (from === to) return u / a;
  if (piece.strategy === "exponential") {
    const lnG = Math.log(to / from);
    return d * Math.log1p(u * lnG / (a * d)) / lnG;
  }
  // The root of a t + k t^2 / 2 = u in the form that stays exact when a is 0 or k < 0.
  const k = (to - from) / 1000 / d;
  return 2 * u / (a + Math.sqrt(Math.max(0, a * a + 2 * k * u)));
}

/**
 * The due times of a rate shape (requests per second): `gap()` draws the
 * unit-mean gaps of the arrival process (1 for even spacing, an exponential
 * draw for Poisson, a gamma draw for bursty arrivals), counted in sends of
 * the shape. Infinity once a shape that ends has ended.
 */
export function shapedSchedule(shape: LoadShape, gap: () => number): Schedule {
  const pieces = shape.pieces;
  let index = 0;
  /** Where the current piece starts, in ms and in sends. */
  let startMs = 0;
  let startSends = 0;
  let pieceSends = pieces.length > 0 ? sendsWithin(pieces[0], pieces[0].durationMs) : 0;
  let u = 0;
  const last = pieces[pieces.length - 1];
  const holdRate = shape.hold && last !== undefined ? last.to / 1000 : 0;
  return {
    next: () => {
      u += gap();
      while (index < pieces.length && u - startSends > pieceSends) {
        startMs += pieces[index].durationMs;
        startSends += pieceSends;
        index++;
        if (index < pieces.length) {
          pieceSends = sendsWithin(pieces[index], pieces[index].durationMs);
        }
      }
      if (index < pieces.length) return startMs + timeOfSends(pieces[index], u - startSends);
      return holdRate > 0 ? startMs + (u - startSends) / holdRate : Infinity;
    },
  };
}

/** The concurrency a shape sets from `atMs` on. */
export interface ConcurrencyStep {
  atMs: number;
  value: number;
}

/** When the number of requests in flight changes; `initial` holds from the start. */
export interface ConcurrencySteps {
  initial: number;
  /** Every change, in time order. */
  steps: readonly ConcurrencyStep[];
  /** When the shape ends (Infinity: it holds its last value). */
  endMs: number;
}

/** The time into `piece` at which its value reaches `x` (between its ends). */
function timeOfValue(piece: ShapePiece, x: number): number {
  const { from, to, durationMs: d } = piece;
  if (piece.strategy === "exponential") return d * Math.log(x / from) / Math.log(to / from);
  return d * (x - from) / (to - from);
}

/**
 * A concurrency shape as steps: the concurrency is the shape's line rounded
 * to the nearest whole request, so it changes where the line crosses a half.
 */
export function concurrencySteps(shape: LoadShape): ConcurrencySteps {
  const round = (x: number) => Math.floor(x + 0.5);
  const initial = shape.pieces.length > 0 ? round(shape.pieces[0].from) : 0;
  const steps: ConcurrencyStep[] = [];
  let current = initial;
  let startMs = 0;
  for (const piece of shape.pieces) {
    const end = round(piece.to);
    if (piece.durationMs === 0 || piece.from === piece.to) {
      if (end !== current) steps.push({ atMs: startMs + piece.durationMs, value: end });
    } else {
      const up = end > current;
      for (let v = current + (up ? 1 : -1); up ? v <= end : v >= end; v += up ? 1 : -1) {
        const at = timeOfValue(piece, up ? v - 0.5 : v + 0.5);
        steps.push({ atMs: startMs + Math.min(piece.durationMs, Math.max(0, at)), value: v });
      }
    }
    current = end;
    startMs += piece.durationMs;
  }
  return { initial, steps, endMs: shape.hold ? Infinity : startMs };
}
