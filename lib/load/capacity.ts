/**
 * The capacity search (--search-recipe, AIPerf's recipe names): the highest
 * concurrency or request rate at which a judge (the SLOs) passes. Like the
 * sweep, it only calls `measure(value)`, so it runs for every service kind
 * and load mode, and the LLM engine search calls it per variant.
 *
 * Within a range when one is given; otherwise it brackets by doubling from
 * the start until the judge fails (or throughput stops growing three doublings
 * in a row, or `maxValue`), then bisects between the last passing and the first
 * failing level to `resolution` (absolute in concurrency, a fraction of the
 * level in rate). Noise must not make a wrong answer: the two levels at the
 * boundary are measured again (a third time when the two disagree), a level
 * passes by majority, and a level that turns out the other way moves the
 * boundary and the bisection goes on, so that the answer is monotone: no
 * level at or below it failed, none above the first failing one passed.
 */
import type { Interrupt } from "../measure/interrupt.ts";
import type { LevelResult } from "../types/results.ts";
import type { Range } from "./range.ts";

export type CapacityRecipe =
  | "max-concurrency-under-sla"
  | "max-rate-under-sla"
  | "max-goodput-under-slo";

export const CAPACITY_RECIPES: readonly CapacityRecipe[] = [
  "max-concurrency-under-sla",
  "max-rate-under-sla",
  "max-goodput-under-slo",
];

/** A level's verdict: passing, or why not ("request_latency:p99 41 > 35 msec", "3 failed requests"). */
export interface Judgement {
  pass: boolean;
  reasons: string[];
}

/** One measurement of the search. */
export interface CapacityPoint {
  value: number;
  result: LevelResult;
  judgement: Judgement;
}

export interface CapacityOptions {
  mode: "concurrency" | "request_rate";
  /** `--concurrency-range`/`--request-rate-range`: an end of 0 means none (bracket by doubling). */
  range: Range;
  /** Concurrency: the gap in requests in flight (default 1); rate: a fraction of the level (0.05). */
  resolution: number;
  judge(result: LevelResult): Judgement;
  interrupt: Interrupt;
  /** Bracketing stops here (a passing level there is the answer). */
  maxValue?: number;
  /** At most this many measurements (default 64). */
  maxPoints?: number;
}

export interface CapacityOutcome {
  /** The highest passing level; undefined when the lowest already fails. */
  value?: number;
  /** The answer's measurements (the last one of them). */
  passing?: CapacityPoint;
  /** The lowest failing level's last measurement, when one failed. */
  failing?: CapacityPoint;
  /** Every measurement, in order. */
  points: CapacityPoint[];
  /** Why the search stopped, in words. */
  stopped: string;
  /** Re-measurements that changed a verdict, in words. */
  notes: string[];
}

type Measure = (value: number) => Promise<LevelResult>;

/** The search ended without an answer: interrupted, or a level could not be measured. */
class Stop extends Error {}

const DEFAULT_MAX_POINTS = 64;
/** Bracketing: a doubling whose throughput grew less than this counts as no growth. */
const GROWTH = 1.05;
/**
 * Doublings in a row without growth that end bracketing: the load grew 8 x
 * for no throughput, so only queueing was added (a latency SLO would have
 * broken; SLOs on throughput alone would never).
 */
const FLAT_DOUBLINGS = 3;

export async function searchCapacity(
  measure: Measure,
  options: CapacityOptions,
): Promise<CapacityOutcome> {
  const points: CapacityPoint[] = [];
  const notes: string[] = [];
  const byValue = new Map<number, CapacityPoint[]>();
  const maxPoints = options.maxPoints ?? DEFAULT_MAX_POINTS;
  const integer = options.mode === "concurrency";

  const run = async (value: number): Promise<CapacityPoint> => {
    if (points.length >= maxPoints) throw new Stop(`the limit of ${maxPoints} measurements`);
    const result = await measure(value);
    const point = { value, result, judgement: options.judge(result) };
    points.push(point);
    byValue.set(value, [...byValue.get(value) ?? [], point]);
    if (options.interrupt.soft) throw new Stop("interrupted");
    return point;
  };
  const passes = (value: number) => {
    const seen = byValue.get(value) ?? [];
    const good = seen.filter((p) => p.judgement.pass).length;
    return good * 2 > seen.length;
  };
  /** Measures `value` until two agree (2 or 3 times in all); returns the majority verdict. */
  const settle = async (value: number): Promise<boolean> => {
    const before = passes(value);
    while ((byValue.get(value)?.length ?? 0) < 2 || tied(value)) await run(value);
    const after = passes(value);
    if (after !== before) {
      notes.push(
        `${label(options.mode, value)} ${after ? "passed" : "failed"} when measured again ` +
          `(${countOf(value, true)} of ${byValue.get(value)!.length} measurements passed)`,
      );
    }
    return after;
  };
  const tied = (value: number) => {
    const seen = byValue.get(value)!;
    return seen.filter((p) => p.judgement.pass).length * 2 === seen.length;
  };
  const countOf = (value: number, pass: boolean) =>
    byValue.get(value)!.filter((p) => p.judgement.pass === pass).length;
  const closeEnough = (low: number, high: number) =>
    integer ? high - low <= options.resolution : high - low <= low * options.resolution;
  const middle = (low: number, high: number) =>
    integer ? Math.floor((low + high) / 2) : Number(((low + high) / 2).toPrecision(6));

  const start = options.range.start;
  const end = options.range.end > start ? options.range.end : undefined;
  let low = start;
  let high: number | undefined;
  let stopped = "";
  /** Doubles from `low` until a level fails (it becomes `high`) or bracketing must stop. */
  const bracket = async (): Promise<void> => {
    let flat = 0;
    while (true) {
      const next = integer ? low * 2 : Number((low * 2).toPrecision(6));
      if (options.maxValue !== undefined && next > options.maxValue) {
        stopped = `the SLOs hold at ${label(options.mode, low)}, the highest level searched`;
        return;
      }
      const previous = byValue.get(low)!.at(-1)!.result.client.throughput;
      const point = await run(next);
      if (!point.judgement.pass) {
        high = next;
        return;
      }
      low = next;
      flat = point.result.client.throughput < previous * GROWTH ? flat + 1 : 0;
      if (flat === FLAT_DOUBLINGS) {
        stopped = `throughput stopped growing at ${label(options.mode, low)} ` +
          `while the SLOs held (the server is saturated)`;
        return;
      }
    }
  };
  /** The next failing level above `low`: one measured, the range's end, or bracketing. */
  const nextHigh = async (): Promise<void> => {
    const above = [...byValue.keys()].filter((v) => v > low && !passes(v));
    high = above.length > 0 ? Math.min(...above) : undefined;
    if (high !== undefined) return;
    if (end === undefined && options.range.end > 0) {
      stopped = `the range has the single ${label(options.mode, start)}`;
    } else if (end === undefined) await bracket();
    else if (low < end) {
      if ((await run(end)).judgement.pass) low = end;
      else high = end;
    }
    if (high === undefined && low === end && !(await settle(end))) high = end;
    if (high === undefined && low === end) {
      stopped = `the SLOs hold at the end of the range, ${label(options.mode, end)}`;
    }
  };
  const broken = () => `the SLOs are broken at the lowest ${label(options.mode, start)}`;
  try {
    if (!(await run(start)).judgement.pass && !(await settle(start))) return finish(broken());
    await nextHigh();
    // Bisection, then the boundary confirmed; a level that turns moves the boundary.
    while (high !== undefined) {
      while (!closeEnough(low, high)) {
        const mid = middle(low, high);
        if (mid <= low || mid >= high) break;
        if ((await run(mid)).judgement.pass) low = mid;
        else high = mid;
      }
      if (!(await settle(high))) {
        if (await settle(low)) break;
        // The answer failed again: the highest passing level below it takes its place.
        high = low;
        const below = [...byValue.keys()].filter((v) => v < high! && passes(v));
        if (below.length === 0) return finish(broken());
        low = Math.max(...below);
        continue;
      }
      // The first failing level passed: the boundary is above it.
      low = high;
      await nextHigh();
    }
    if (stopped === "") {
      stopped = `${label(options.mode, low)} passes and ${label(options.mode, high!)} fails, ` +
        `within the resolution of ${
          integer ? options.resolution : `${Number((options.resolution * 100).toFixed(2))} %`
        }`;
    }
    return finish(stopped);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return finish(`${error.message}: the answer is the highest level that passed so far`);
  }

  function finish(why: string): CapacityOutcome {
    // Monotone: the answer is the highest passing level below every failing one.
    const failing = [...byValue.keys()].filter((v) => !passes(v));
    const bound = failing.length > 0 ? Math.min(...failing) : Infinity;
    const passing = [...byValue.keys()].filter((v) => passes(v) && v < bound);
    const value = passing.length > 0 ? Math.max(...passing) : undefined;
    const above = [...byValue.keys()].filter((v) => passes(v) && v > bound);
    if (above.length > 0) {
      notes.push(
        `${above.map((v) => label(options.mode, v)).join(", ")} passed above the failing ` +
          `${label(options.mode, bound)}: the answer stays below it`,
      );
    }
    return {
      ...(value === undefined ? {} : { value, passing: byValue.get(value)!.at(-1)! }),
      ...(Number.isFinite(bound) ? { failing: byValue.get(bound)!.at(-1)! } : {}),
      points,
      stopped: why,
      notes,
    };
  }
}

/** "concurrency 6", "request rate 150". */
export function label(mode: CapacityOptions["mode"], value: number): string {
  return `${mode === "concurrency" ? "concurrency" : "request rate"} ${value}`;
}
