/**
 * Model Analyzer's quick search (its QuickRunConfigGenerator and
 * Neighborhood): a hill climb over integer coordinates, one per search
 * dimension (an index into a dimension's values). Around the home coordinate
 * a neighbourhood of every coordinate within Euclidean distance 3 is
 * measured until 3 of them are; the step is each dimension's mean gain
 * over home, rounded by 0.09 / 0.3 / 1.0 to 1, 2 or 3 indexes. Where some
 * of the neighbourhood meet the constraints and others do not (slow mode),
 * every adjacent coordinate is measured and the best becomes home; a home
 * that breaks the constraints after one met them, or that could not be
 * measured, steps back towards the best so far. The climb ends at a step to
 * home itself or to a coordinate that was home twice. Pure: what a
 * coordinate measures comes from `measure`.
 */

/** Index bounds of a dimension, inclusive. */
export interface Dimension {
  min: number;
  max: number;
}

export type Coordinate = readonly number[];

/** Model Analyzer's RADIUS and MIN_INITIALIZED. */
export const RADIUS = 3;
export const MIN_INITIALIZED = 3;
/** A mean gain above each bound moves one index more (Neighborhood.TRANSLATION_LIST). */
const TRANSLATION = [0.09, 0.3, 1.0];

export interface ClimbOptions<M> {
  dimensions: readonly Dimension[];
  /** The measurement at a coordinate; undefined where it could not be measured. */
  measure(coordinate: Coordinate): Promise<M | undefined>;
  /** Whether a measurement meets the constraints. */
  passes(m: M): boolean;
  /** Positive when `b` is better than `a`, as Model Analyzer's a.compare_measurements(b). */
  compare(a: M, b: M): number;
  /** Positive when `b` breaks the constraints by less than `a` (both break them). */
  compareConstraints(a: M, b: M): number;
  /**
   * The model's own configuration's measurement: Model Analyzer records it
   * at the starting coordinate before measuring that (the best so far, and
   * whether home has passed, start from it).
   */
  start?: M;
  /** Checked after each measurement: the climb stops where it is. */
  interrupted?: () => boolean;
}

const key = (c: Coordinate) => c.join(",");
/** Whether `a` sorts after `b`, value by value. */
const later = (a: Coordinate, b: Coordinate) => {
  const i = a.findIndex((v, j) => v !== b[j]);
  return i >= 0 && a[i]! > b[i]!;
};
const distance = (a: Coordinate, b: Coordinate) =>
  Math.sqrt(a.reduce((sum, v, i) => sum + (v - b[i]!) ** 2, 0));

/**
 * Every step vector within `radius`, in Model Analyzer's order: its
 * recursion flips signs in place, so the order (which breaks ties between
 * equally good coordinates) is reproduced with the same mutation.
 */
export function potentialSteps(dimensions: number, radius: number): number[][] {
  const result: number[][] = [];
  const step = new Array<number>(dimensions).fill(0);
  const signs = (index: number) => {
    if (index + 1 === step.length) {
      result.push([...step]);
      if (step[index]) {
        step[index] = -step[index]!;
        result.push([...step]);
      }
      return;
    }
    signs(index + 1);
    if (step[index]) {
      step[index] = -step[index]!;
      signs(index + 1);
    }
  };
  const permute = (index: number) => {
    for (let i = 0; i <= radius; i++) {
      step[index] = i;
      if (index === step.length - 1) {
        if (distance(step, new Array(step.length).fill(0)) > radius) return;
        signs(0);
      } else permute(index + 1);
    }
  };
  permute(0);
  return result;
}

/** What the climb measured, and in which order (a coordinate measured again counts again). */
export interface ClimbTrace<M> {
  measured: Array<{ coordinate: Coordinate; measurement: M | undefined }>;
  best?: Coordinate;
}

/** Runs the climb from every dimension's minimum. */
export async function neighborhoodClimb<M>(options: ClimbOptions<M>): Promise<ClimbTrace<M>> {
  const { dimensions, passes } = options;
  const data = new Map<string, M | undefined>();
  const visits = new Map<string, number>();
  const measurementOf = (c: Coordinate) => data.get(key(c));
  const isMeasured = (c: Coordinate) => data.has(key(c));
  const inBounds = (c: Coordinate) =>
    c.every((v, i) => v >= dimensions[i]!.min && v <= dimensions[i]!.max);
  const steps = potentialSteps(dimensions.length, RADIUS);
  const same = (a: Coordinate, b: Coordinate) => key(a) === key(b);

  let home: Coordinate = dimensions.map((d) => d.min);
  let toMeasure = home;
  let best = home;
  let bestMeasurement: M | undefined;
  let homeHasPassed = false;
  let done = false;
  const trace: ClimbTrace<M> = { measured: [] };

  const neighborhoodOf = (center: Coordinate, forceSlow: boolean) => {
    const coordinates = steps.map((s) => s.map((v, i) => v + center[i]!)).filter(inBounds);
    const others = () =>
      coordinates.filter((c) => !same(c, center) && measurementOf(c) !== undefined);
    const homeMeasurement = () => measurementOf(center);
    const adjacent = () =>
      dimensions.flatMap((d, i) => {
        const down = center.map((v, j) => j === i ? v - 1 : v);
        const up = center.map((v, j) => j === i ? v + 1 : v);
        return [...(down[i]! >= d.min ? [down] : []), ...(up[i]! <= d.max ? [up] : [])];
      });
    const slow = () => {
      if (forceSlow) return true;
      const h = homeMeasurement();
      if (h === undefined) return false;
      const all = others();
      const passing = all.filter((c) => passes(measurementOf(c)!));
      const anyFailing = all.length !== passing.length;
      return passes(h) ? anyFailing : passing.length > 0;
    };
    return {
      coordinates,
      enoughInitialized: () =>
        slow() ? adjacent().every(isMeasured) : others().length >= MIN_INITIALIZED,
      newHome: (): Coordinate => {
        const h = homeMeasurement()!;
        if (slow()) {
          const candidates: Array<[Coordinate, M]> = others()
            .filter((c) => passes(measurementOf(c)!))
            .map((c) => [c, measurementOf(c)!]);
          if (candidates.length === 0) return center;
          if (passes(h)) candidates.push([center, h]);
          // Model Analyzer sorts (measurement, coordinate) pairs: equal ones by coordinate.
          return candidates.reduce((a, b) => {
            const order = options.compare(a[1], b[1]);
            return order > 0 || (order === 0 && later(b[0], a[0])) ? b : a;
          })[0];
        }
        // Each dimension's weights of its measured neighbours, signed by their side of home,
        // divided by the sum of their distances from home along it.
        const weightsOf = passes(h)
          ? (m: M) => options.compare(h, m)
          : (m: M) => options.compareConstraints(h, m);
        const sums = center.map(() => 0);
        const spans = center.map(() => 0);
        for (const c of others()) {
          const weight = weightsOf(measurementOf(c)!) || 0;
          c.forEach((v, i) => {
            const d = v - center[i]!;
            if (d === 0) return;
            sums[i]! += d > 0 ? weight : -weight;
            spans[i]! += Math.abs(d);
          });
        }
        return center.map((v, i) => {
          const mean = spans[i] ? sums[i]! / spans[i]! : 0;
          let move = 0;
          TRANSLATION.forEach((bound, j) => {
            if (mean > bound) move = j + 1;
            if (mean < -bound) move = -(j + 1);
          });
          return Math.min(dimensions[i]!.max, Math.max(dimensions[i]!.min, v + move));
        });
      },
      pick: (): Coordinate | undefined => {
        if (slow()) return adjacent().find((c) => !isMeasured(c));
        const covered = dimensions.map((_, i) => new Set(others().map((c) => c[i])));
        let pick: Coordinate | undefined;
        let most = -1;
        for (const c of coordinates) {
          if (isMeasured(c)) continue;
          const uncovered = c.filter((v, i) => !covered[i]!.has(v)).length;
          if (uncovered > most) [pick, most] = [c, uncovered];
        }
        return pick;
      },
      nearest: (target: Coordinate): Coordinate =>
        coordinates.reduce<[Coordinate, number]>(
          (found, c) => distance(c, target) < found[1] ? [c, distance(c, target)] : found,
          [center, Infinity],
        )[0],
    };
  };

  let neighborhood = neighborhoodOf(home, false);
  const moveHome = (to: Coordinate, forceSlow: boolean) => {
    home = to;
    toMeasure = to;
    neighborhood = neighborhoodOf(home, forceSlow);
    visits.set(key(home), (visits.get(key(home)) ?? 0) + 1);
  };
  const record = (m: M | undefined) => {
    data.set(key(toMeasure), m);
    if (m === undefined) return;
    const better = bestMeasurement === undefined ||
      (passes(m) && !passes(bestMeasurement)) ||
      (passes(m) && passes(bestMeasurement) && options.compare(bestMeasurement, m) > 0) ||
      (!passes(m) && !passes(bestMeasurement) &&
        options.compareConstraints(bestMeasurement, m) > 0);
    if (better) [best, bestMeasurement] = [toMeasure, m];
    if (same(toMeasure, home) && passes(m)) homeHasPassed = true;
  };

  if (options.start !== undefined) record(options.start);
  while (!done) {
    const m = await options.measure(toMeasure);
    trace.measured.push({ coordinate: toMeasure, measurement: m });
    if (options.interrupted?.()) break;
    record(m);
    const homeNow = measurementOf(home);
    const stepBack = same(toMeasure, home) &&
      (homeNow === undefined || (!passes(homeNow) && homeHasPassed));
    if (stepBack) {
      const to = neighborhood.nearest(best);
      if (same(to, home)) done = true;
      moveHome(to, true);
    } else if (neighborhood.enoughInitialized()) {
      const to = neighborhood.newHome();
      if (same(to, home) || (visits.get(key(to)) ?? 0) >= 2) done = true;
      moveHome(to, false);
    } else {
      const next = neighborhood.pick();
      if (next) toMeasure = next;
      else done = true;
    }
  }
  if (bestMeasurement !== undefined) trace.best = best;
  return trace;
}
