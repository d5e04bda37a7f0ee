/**
 * Fault injection for tests of the load generator: a model can stall (no
 * responses for a while, as in a long GC pause), fail a fraction of its
 * requests, start slow, or slow down while overloaded (a server that
 * thrashes once its queue is long, which an automatic sweep must see as
 * over-saturation). Times count from the model's first request, so a
 * test places a fault relative to the load it sends.
 */

/** As written in a model configuration (snake_case). */
export interface FaultConfig {
  /** No response leaves from start_ms for duration_ms (repeating every period_ms when given). */
  stall?: { start_ms: number; duration_ms: number; period_ms?: number };
  /** Fraction (0..1) of requests that fail with an internal error. */
  error_rate?: number;
  /** Extra compute time: extra_ms at the first request, falling linearly to 0 at duration_ms. */
  slow_start?: { duration_ms: number; extra_ms: number };
  /** Extra compute time of an execution that starts while more than `queue` requests wait. */
  overload?: { queue: number; extra_ms: number };
}

/** Validated faults (camelCase). */
export interface FaultSpec {
  stall?: { startMs: number; durationMs: number; periodMs: number };
  errorRate: number;
  slowStart?: { durationMs: number; extraMs: number };
  overload?: { queue: number; extraMs: number };
}

export const FAULT_FIELDS: ReadonlySet<string> = new Set([
  "stall",
  "error_rate",
  "slow_start",
  "overload",
]);
const OVERLOAD_FIELDS = ["queue", "extra_ms"];
const STALL_FIELDS = ["start_ms", "duration_ms", "period_ms"];
const SLOW_START_FIELDS = ["duration_ms", "extra_ms"];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reports a problem with a field under `faults`. */
export type FaultProblem = (field: string, message: string) => void;

function numbers(
  value: unknown,
  where: { at: string; fields: readonly string[]; required: readonly string[] },
  problem: FaultProblem,
): Record<string, number> | undefined {
  if (!isRecord(value)) {
    problem(where.at, `must be a mapping of ${where.fields.join(", ")}, got ${String(value)}`);
    return undefined;
  }
  const out: Record<string, number> = {};
  let ok = true;
  for (const key of Object.keys(value)) {
    if (!where.fields.includes(key)) {
      problem(`${where.at}.${key}`, "is not a known field");
      ok = false;
    }
  }
  for (const key of where.fields) {
    const v = value[key];
    if (v === undefined) {
      if (where.required.includes(key)) {
        problem(`${where.at}.${key}`, "is required");
        ok = false;
      }
      continue;
    }
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      problem(`${where.at}.${key}`, `must be a number >= 0, got ${JSON.stringify(v)}`);
      ok = false;
      continue;
    }
    out[key] = v;
  }
  return ok ? out : undefined;
}

/** Checks `faults` of a model configuration; undefined when absent or a problem was reported. */
export function checkFaults(value: unknown, problem: FaultProblem): FaultSpec | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    problem("faults", `must be a mapping, got ${JSON.stringify(value)}`);
    return undefined;
  }
  let ok = true;
  const report: FaultProblem = (field, message) => {
    ok = false;
    problem(field, message);
  };
  for (const key of Object.keys(value)) {
    if (!FAULT_FIELDS.has(key)) report(`faults.${key}`, "is not a known field");
  }
  const spec: FaultSpec = { errorRate: 0 };
  if (value.stall !== undefined) {
    const s = numbers(value.stall, {
      at: "faults.stall",
      fields: STALL_FIELDS,
      required: ["start_ms", "duration_ms"],
    }, report);
    if (s) {
      const periodMs = s.period_ms ?? 0;
      if (periodMs > 0 && periodMs <= s.duration_ms) {
        report("faults.stall.period_ms", `must exceed duration_ms (${s.duration_ms})`);
      }
      spec.stall = { startMs: s.start_ms, durationMs: s.duration_ms, periodMs };
    }
  }
  if (value.error_rate !== undefined) {
    const rate = value.error_rate;
    if (typeof rate !== "number" || !(rate >= 0 && rate <= 1)) {
      report("faults.error_rate", `must be a number from 0 to 1, got ${JSON.stringify(rate)}`);
    } else spec.errorRate = rate;
  }
  /** A mapping of numbers that needs every field. */
  const complete = (name: string, fields: readonly string[]) =>
    value[name] === undefined
      ? undefined
      : numbers(value[name], { at: `faults.${name}`, fields, required: fields }, report);
  const slow = complete("slow_start", SLOW_START_FIELDS);
  if (slow) spec.slowStart = { durationMs: slow.duration_ms, extraMs: slow.extra_ms };
  const overload = complete("overload", OVERLOAD_FIELDS);
  if (overload) spec.overload = { queue: overload.queue, extraMs: overload.extra_ms };
  return ok ? spec : undefined;
}

/** Back to the configuration form (what the server reports and the worker clones). */
export function faultsToConfig(spec: FaultSpec): FaultConfig {
  const config: FaultConfig = {};
  if (spec.stall) {
    config.stall = { start_ms: spec.stall.startMs, duration_ms: spec.stall.durationMs };
    if (spec.stall.periodMs > 0) config.stall.period_ms = spec.stall.periodMs;
  }
  if (spec.errorRate > 0) config.error_rate = spec.errorRate;
  if (spec.slowStart) {
    config.slow_start = {
      duration_ms: spec.slowStart.durationMs,
      extra_ms: spec.slowStart.extraMs,
    };
  }
  if (spec.overload) {
    config.overload = { queue: spec.overload.queue, extra_ms: spec.overload.extraMs };
  }
  return config;
}

/** The faults of one model version as it runs. Times are performance.now() milliseconds. */
export class Faults {
  readonly #spec: FaultSpec;
  readonly #random: () => number;
  /** The first request's arrival: the origin of every fault time. */
  #origin: number | undefined;

  constructor(spec: FaultSpec, random: () => number) {
    this.#spec = spec;
    this.#random = random;
  }

  /** Called for every request; the first one sets the origin. */
  arrive(now: number): void {
    this.#origin ??= now;
  }

  /** Whether this request is to fail (error_rate). */
  fails(): boolean {
    return this.#spec.errorRate > 0 && this.#random() < this.#spec.errorRate;
  }

  /** Extra compute time of an execution starting at `start` with `queued` waiting (overload). */
  extraComputeMs(start: number, queued = 0): number {
    const overload = this.#spec.overload;
    return this.#slowStartMs(start) +
      (overload && queued > overload.queue ? overload.extraMs : 0);
  }

  /** slow_start's extra time at `start`. */
  #slowStartMs(start: number): number {
    const slow = this.#spec.slowStart;
    if (!slow || this.#origin === undefined || slow.durationMs === 0) return 0;
    const elapsed = start - this.#origin;
    return elapsed >= slow.durationMs
      ? 0
      : slow.extraMs * (1 - Math.max(0, elapsed) / slow.durationMs);
  }

  /** When a response due at `due` can leave: the end of the stall covering `due`, else `due`. */
  releaseAt(due: number): number {
    const stall = this.#spec.stall;
    if (!stall || this.#origin === undefined) return due;
    const t = due - this.#origin - stall.startMs;
    if (t < 0) return due;
    const offset = stall.periodMs > 0 ? t % stall.periodMs : t;
    return offset < stall.durationMs ? due + (stall.durationMs - offset) : due;
  }
}
