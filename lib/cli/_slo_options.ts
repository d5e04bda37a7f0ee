/**
 * --slo, --slo-attainment, --search-recipe and the CI gates: parsed with
 * lib/measure/slo.ts and checked against the run (its service kind, load
 * mode, percentiles and range) before anything runs, one line per problem.
 */
import type { LoadPlan } from "../load/plan.ts";
import type { Range } from "../load/range.ts";
import type { SloPlan } from "../measure/plan.ts";
import { checkSlos, parseSlos, type Slo, sloObjectives } from "../measure/slo.ts";
import type { GoodputObjective } from "../types/results.ts";
import { UsageError } from "../types/errors.ts";
import type { Reader } from "./_reader.ts";
import type { RawOptions } from "./options.ts";

function slosOf(r: Reader, flag: "slo" | "threshold"): Slo[] {
  try {
    return parseSlos(r.list(flag), { flag: `--${flag}` });
  } catch (error) {
    r.errors.push(...(error as UsageError).errors);
    return [];
  }
}

/** `5` (requests) or `5%` (of the requests sent). */
function parseFailedThreshold(r: Reader): SloPlan["failedRequestThreshold"] {
  const text = r.string("failed-request-threshold");
  if (text === undefined) return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  const n = Number(match?.[1]);
  if (match && match[2] === "%" && n > 0 && n <= 100) return { fraction: n / 100 };
  if (match && match[2] === "" && Number.isInteger(n) && n >= 1) return { count: n };
  r.errors.push(
    `Invalid value "${text}" for --failed-request-threshold: expected a count >= 1 or a ` +
      "percentage above 0 and up to 100 (5%)",
  );
  return undefined;
}

/**
 * The SLOs and gates, and the --goodput objectives the levels count good
 * requests by (the per-request SLOs', or --goodput's).
 */
export function parseSloPlan(
  r: Reader,
  options: {
    serviceKind: string;
    goodput: GoodputObjective[];
    openLoop: boolean;
    percentile?: number;
  },
): SloPlan & { goodput: GoodputObjective[] } {
  const slos = slosOf(r, "slo");
  const thresholds = slosOf(r, "threshold");
  const context = { ...options, llm: options.serviceKind === "openai" };
  r.errors.push(...checkSlos(slos, context));
  r.errors.push(...checkSlos(thresholds, { ...context, flag: "--threshold" }));
  const fromSlo = sloObjectives(slos);
  const fromThreshold = sloObjectives(thresholds);
  if (fromSlo.length > 0 && fromThreshold.length > 0) {
    r.errors.push(
      "Per-request bounds in both --slo and --threshold: a level counts its good requests by " +
        "one set of bounds; give them in one of the options",
    );
  }
  const perRequest = fromSlo.length > 0 ? fromSlo : fromThreshold;
  if (perRequest.length > 0 && options.goodput.length > 0) {
    r.errors.push(
      "Options --goodput and per-request SLOs (such as request_latency<=30) both say which " +
        "requests are good: give one",
    );
  }
  if (r.has("slo-attainment") && perRequest.length === 0) {
    r.errors.push(
      "Option --slo-attainment needs a per-request SLO: a metric without statistic, such as " +
        "--slo request_latency<=30",
    );
  }
  const abortOnFail = r.flag("abort-on-fail");
  if (abortOnFail && thresholds.length === 0) {
    r.errors.push("Option --abort-on-fail needs --threshold");
  }
  const failedRequestThreshold = parseFailedThreshold(r);
  const gates = ["threshold", "failed-request-threshold"].filter((n) => r.has(n));
  if (gates.length > 0 && Number(r.string("num-profile-runs") ?? 1) > 1) {
    r.errors.push(
      `Options ${gates.map((n) => `--${n}`).join(", ")} judge one run's levels: they can not ` +
        "be used with --num-profile-runs",
    );
  }
  return {
    slos,
    sloAttainment: r.has("slo-attainment")
      ? r.bounded("slo-attainment", (n) => n > 0 && n <= 1, "a number above 0 and up to 1")
      : 1,
    thresholds,
    abortOnFail,
    ...(failedRequestThreshold ? { failedRequestThreshold } : {}),
    goodput: perRequest.length > 0 ? perRequest : options.goodput,
  };
}

/** What a capacity search changes of the load: the mode and the range it searches. */
export interface CapacityLoad {
  capacity?: LoadPlan["capacity"];
  loadMode: string;
  concurrency: Range;
  requestRate: Range;
}

/** The levels the search brackets from when no range is given. */
const OPEN_FROM_ONE: Range = { start: 1, end: 0, step: 1 };

/**
 * --search-recipe with its range and resolution. Without a range option it
 * brackets from 1; a range of a single level leaves nothing to search.
 */
export function parseCapacity(
  r: Reader,
  options: {
    raw: RawOptions;
    load: CapacityLoad;
    slos: readonly Slo[];
    binarySearch: boolean;
    latencyThresholdMs: number;
  },
): CapacityLoad {
  const { raw, load } = options;
  const recipe = r.string("search-recipe") as NonNullable<LoadPlan["capacity"]>["recipe"];
  const unchanged = {
    loadMode: load.loadMode,
    concurrency: load.concurrency,
    requestRate: load.requestRate,
  };
  if (recipe === undefined) {
    if (r.has("search-resolution")) {
      r.errors.push("Option --search-resolution needs --search-recipe");
    }
    return unchanged;
  }
  const refuse = (what: string) => r.errors.push(`Option --search-recipe ${recipe} ${what}`);
  if (options.slos.length === 0) refuse("needs --slo: the objectives its answer meets");
  if (recipe === "max-goodput-under-slo" && !options.slos.some((s) => s.perRequest)) {
    refuse("needs a per-request --slo (a metric without statistic, such as request_latency<=30)");
  }
  if (options.binarySearch) refuse("can not be used with --binary-search: each chooses the levels");
  if (options.latencyThresholdMs > 0) {
    refuse("can not be used with -l/--latency-threshold: give the bound as --slo latency:p99<=N");
  }
  const other = load.loadMode === "custom_intervals"
    ? "--request-intervals or --fixed-schedule"
    : raw.has("periodic-concurrency-range")
    ? "--periodic-concurrency-range"
    : raw.has("session-concurrency")
    ? "--session-concurrency"
    : undefined;
  if (other !== undefined) refuse(`can not be used with ${other}: they send one fixed load`);
  if (r.flag("enable-mpi")) {
    refuse("can not be used with --enable-mpi: each rank would choose its own levels");
  }
  if (raw.has("num-profile-runs") && Number(raw.get("num-profile-runs")) > 1) {
    refuse(
      "can not be used with --num-profile-runs: the search measures its boundary again itself",
    );
  }
  const rate = recipe === "max-rate-under-sla" ||
    (recipe === "max-goodput-under-slo" && raw.has("request-rate-range"));
  if (recipe === "max-concurrency-under-sla" && raw.has("request-rate-range")) {
    refuse("searches concurrencies: give --concurrency-range, not --request-rate-range");
  }
  if (
    recipe === "max-rate-under-sla" && raw.has("concurrency-range") &&
    !raw.has("request-rate-range")
  ) {
    refuse("searches request rates: give --request-rate-range, not --concurrency-range");
  }
  const rangeOption = rate ? "request-rate-range" : "concurrency-range";
  const given = raw.has(rangeOption);
  const range = !given ? OPEN_FROM_ONE : rate ? load.requestRate : load.concurrency;
  if (given && range.end !== 0 && range.end <= range.start) {
    refuse(
      `needs levels to search: --${rangeOption} ${raw.get(rangeOption)} is a single level ` +
        `(give START:END, or START:0 to bracket from START)`,
    );
  }
  const resolution = r.has("search-resolution")
    ? r.bounded("search-resolution", (n) => n > 0, "a number > 0")
    : rate
    ? 5
    : 1;
  if (!rate && !Number.isInteger(resolution)) {
    r.errors.push(
      `Invalid value "${resolution}" for --search-resolution: expected an integer >= 1 in concurrency`,
    );
  }
  return {
    capacity: {
      recipe,
      resolution: rate ? resolution / 100 : resolution,
      checkpoint: r.string("search-checkpoint")!,
    },
    loadMode: rate ? "request_rate" : load.loadMode,
    concurrency: rate ? load.concurrency : range,
    requestRate: rate ? range : load.requestRate,
  };
}
