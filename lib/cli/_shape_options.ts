/**
 * The load's shape options: gamma arrivals (--burstiness), ramps of the
 * rate or the concurrency (AIPerf's --*-ramp-duration, vLLM's
 * --ramp-up-strategy), k6's stages, --prefill-concurrency and
 * --warmup-duration, read into the load and measurement parts of the plan
 * and checked against the rest of it.
 */
import type { LoadPlan } from "../load/plan.ts";
import type { RampStrategy, Stage } from "../load/shape.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { RawOptions } from "./options.ts";
import type { Reader } from "./_reader.ts";

type ShapeOptions = Pick<
  LoadPlan,
  | "requestDistribution"
  | "burstiness"
  | "ramp"
  | "capRampMs"
  | "stages"
  | "prefillConcurrency"
  | "prefillRampMs"
>;

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A k6 duration ("1m30s", "500ms", "2h") or a number of seconds, in milliseconds. */
export function parseStageDuration(value: unknown): number | undefined {
  if (typeof value === "number") {
    return value >= 0 && Number.isFinite(value) ? value * 1000 : undefined;
  }
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, n, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) {
    ms += Number(n) * UNITS_MS[unit];
  }
  return ms;
}

/** Stages from a list of {duration, target} mappings; `source` names them in errors. */
function stagesOf(list: unknown, source: string): Stage[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw new RangeError(`${source}: expected a list of {duration, target}`);
  }
  return list.map((item, i) => {
    const entry = item as { duration?: unknown; target?: unknown };
    const durationMs = parseStageDuration(entry?.duration);
    const target = entry?.target;
    if (durationMs === undefined || typeof target !== "number" || !(target >= 0)) {
      throw new RangeError(
        `${source}, stage ${i + 1}: expected a duration (seconds, or as 30s, 1m30s, 500ms) ` +
          "and a target >= 0",
      );
    }
    return { durationMs, target };
  });
}

/** The options whose value may name a YAML file of stages. */
export const STAGES_OPTIONS: readonly string[] = ["request-rate-stages", "concurrency-stages"];

let parseYaml: ((text: string) => unknown) | undefined;

/**
 * Loads the YAML parser of stages files before a plan is built (which is synchronous): `yaml`
 * costs about 50 ms of start-up from source, so only a command line that may name such a file
 * (or that has a --config file, which loaded it already) loads it.
 */
export async function loadStagesParser(): Promise<void> {
  parseYaml ??= (await import("yaml")).parse;
}

/** "30s:100,1m:100,10s:0", the JSON a --config list becomes, or a YAML or JSON file. */
export function parseStages(text: string, option: string): Stage[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) return stagesOf(JSON.parse(trimmed), option);
  if (/^[^,:\s]+:[^,:\s]+(\s*,\s*[^,:\s]+:[^,:\s]+)*$/.test(trimmed)) {
    return stagesOf(
      trimmed.split(",").map((pair) => {
        const [duration, target] = pair.trim().split(":");
        return { duration, target: /^\d+(\.\d+)?$/.test(target) ? Number(target) : target };
      }),
      option,
    );
  }
  let file: string;
  try {
    file = Deno.readTextFileSync(trimmed);
  } catch (error) {
    throw new RangeError(
      `${option} "${trimmed}" is neither DURATION:TARGET,... nor a readable file: ` +
        (error as Error).message,
    );
  }
  if (!parseYaml) throw new Error("The stages file parser was not loaded: call loadStagesParser");
  let list: unknown;
  try {
    list = parseYaml(file);
  } catch (error) {
    throw new RangeError(`${option} file "${trimmed}": ${(error as Error).message}`);
  }
  return stagesOf(list, `${option} file "${trimmed}"`);
}

/**
 * The ramp of the load mode's value, and AIPerf's --concurrency-ramp-duration
 * with --request-rate R --concurrency C: the open loop's cap on requests in
 * flight ramped (from 1), beside or without the rate's own ramp.
 */
function parseRamp(r: Reader, raw: RawOptions): Pick<LoadPlan, "ramp" | "capRampMs"> {
  const rateRamp = raw.has("request-rate-ramp-duration");
  const concurrencyRamp = raw.has("concurrency-ramp-duration");
  if (!rateRamp && !concurrencyRamp) {
    for (const name of ["ramp-up-strategy", "ramp-up-start"].filter((n) => raw.has(n))) {
      r.errors.push(
        `Option --${name} needs --request-rate-ramp-duration or --concurrency-ramp-duration`,
      );
    }
    return {};
  }
  const openLoop = raw.has("request-rate-range");
  if (rateRamp && !openLoop) {
    r.errors.push("Option --request-rate-ramp-duration needs --request-rate-range");
  }
  const capRamp = concurrencyRamp && openLoop;
  if (capRamp && !raw.has("concurrency-range")) {
    r.errors.push(
      "Option --concurrency-ramp-duration with --request-rate-range ramps the cap on requests " +
        "in flight: it needs that cap, --concurrency-range C",
    );
  }
  const seconds = (name: string) => r.bounded(name, (n) => n > 0, "a number of seconds > 0");
  const out: Pick<LoadPlan, "ramp" | "capRampMs"> = {};
  if (capRamp) out.capRampMs = seconds("concurrency-ramp-duration") * 1000;
  if (!rateRamp && capRamp) return out;
  const name = rateRamp ? "request-rate-ramp-duration" : "concurrency-ramp-duration";
  const durationS = seconds(name);
  const strategy = r.string("ramp-up-strategy") as RampStrategy;
  const start = raw.has("ramp-up-start")
    ? r.bounded("ramp-up-start", (n) => n >= 0, "a number >= 0")
    : rateRamp && strategy === "linear"
    ? 0
    : 1;
  if (strategy === "exponential" && start === 0) {
    r.errors.push("An exponential ramp needs --ramp-up-start above 0: it grows by a factor");
  }
  if (!rateRamp && !Number.isInteger(start)) {
    r.errors.push(`Invalid value "${start}" for --ramp-up-start: a concurrency is an integer`);
  }
  out.ramp = { durationMs: durationS * 1000, strategy, start };
  return out;
}

function parseStagesOption(r: Reader, raw: RawOptions): Stage[] | undefined {
  const given = STAGES_OPTIONS.filter((n) => raw.has(n));
  if (given.length === 0) return undefined;
  try {
    const stages = parseStages(r.string(given[0])!, `--${given[0]}`);
    if (given[0] === "concurrency-stages" && stages.some((s) => !Number.isInteger(s.target))) {
      r.errors.push("--concurrency-stages: each target is a whole number of requests in flight");
    }
    if (stages.every((s) => s.durationMs === 0)) {
      r.errors.push(`--${given[0]}: the stages last no time`);
    }
    return stages;
  } catch (error) {
    r.errors.push((error as Error).message);
    return undefined;
  }
}

/** The shape options given; problems go to the reader's errors. */
export function parseShapeOptions(r: Reader, raw: RawOptions): ShapeOptions {
  const burstinessGiven = raw.has("burstiness");
  const distribution = raw.has("request-distribution") || !burstinessGiven
    ? r.string("request-distribution") as LoadPlan["requestDistribution"]
    : "gamma";
  const burstiness = r.bounded("burstiness", (n) => n > 0, "a number > 0");
  if (burstinessGiven && distribution !== "gamma") {
    r.errors.push(
      `Option --burstiness shapes gamma gaps: not with --request-distribution ${distribution}`,
    );
  } else if (burstinessGiven && !raw.has("request-rate-range") && !raw.has("request-rate-stages")) {
    r.errors.push(
      "Option --burstiness shapes the gaps of an open loop: it needs --request-rate-range or " +
        "--request-rate-stages",
    );
  }
  const stages = parseStagesOption(r, raw);
  const options: ShapeOptions = {
    requestDistribution: distribution,
    burstiness,
    ...parseRamp(r, raw),
  };
  if (stages) options.stages = stages;
  if (raw.has("prefill-concurrency")) {
    options.prefillConcurrency = r.bounded("prefill-concurrency", (n) => n >= 1, "an integer >= 1");
  }
  if (raw.has("prefill-concurrency-ramp-duration")) {
    const name = "prefill-concurrency-ramp-duration";
    options.prefillRampMs = r.bounded(name, (n) => n > 0, "a number of seconds > 0") * 1000;
    if (!raw.has("prefill-concurrency")) {
      r.errors.push(`Option --${name} needs --prefill-concurrency: it ramps that limit`);
    }
  }
  return options;
}

/** --warmup-duration and --warmup-grace-period, in milliseconds. */
export function parseWarmupDuration(
  r: Reader,
): Pick<ProfilePlan, "warmupDurationMs" | "warmupGraceMs"> {
  const durationMs = r.has("warmup-duration")
    ? r.bounded("warmup-duration", (n) => n > 0, "a number of seconds > 0") * 1000
    : 0;
  if (!r.has("warmup-grace-period")) return { warmupDurationMs: durationMs };
  const graceMs = r.bounded("warmup-grace-period", (n) => n >= 0, "a number of seconds >= 0") *
    1000;
  if (durationMs === 0) r.errors.push("Option --warmup-grace-period needs --warmup-duration");
  return { warmupDurationMs: durationMs, warmupGraceMs: graceMs };
}

/** What a shape can not be combined with, one line each. */
export function checkShapes(errors: string[], config: ProfilePlan): void {
  const shaped = config.stages
    ? `--${config.loadMode === "concurrency" ? "concurrency" : "request-rate"}-stages`
    : config.ramp
    ? `--${config.loadMode === "concurrency" ? "concurrency" : "request-rate"}-ramp-duration`
    : config.capRampMs !== undefined
    ? "--concurrency-ramp-duration"
    : undefined;
  if (
    shaped && (config.loadMode === "custom_intervals" || config.periodic !== undefined ||
      config.sessionConcurrency !== undefined)
  ) {
    errors.push(`Option ${shaped} shapes the closed loop or the request rate, not this load mode`);
  }
  if (shaped && config.stages && config.ramp) {
    errors.push(`Option ${shaped} can not be used with a ramp: the stages are the whole shape`);
  }
  if (config.stages) {
    const refuse = (option: string) =>
      errors.push(`Option ${shaped} can not be used with ${option}: the stages set the one window`);
    if (config.benchmarkDurationMs > 0) refuse("--benchmark-duration");
    if (config.requestCount > 0) refuse("--request-count");
    if (config.binarySearch) refuse("--binary-search");
  }
  const threads = config.workers > 1
    ? `--workers ${config.workers}`
    : config.mpi?.shard
    ? "--shard"
    : undefined;
  const stepped = config.stages || config.capRampMs !== undefined ||
    (config.ramp && config.loadMode === "concurrency");
  if (threads && stepped) {
    errors.push(`Option ${shaped} can not be used with ${threads}: one thread drives the shape`);
  }
  if (config.prefillConcurrency !== undefined) {
    const option = "Option --prefill-concurrency";
    if (config.serviceKind !== "openai" || !config.streaming) {
      errors.push(`${option} needs --service-kind openai --streaming: it waits for first tokens`);
    }
    if (threads) errors.push(`${option} can not be used with ${threads}: one thread counts them`);
    if (config.sessionConcurrency !== undefined || config.periodic !== undefined) {
      errors.push(`${option} gates the closed and open loops, not sessions or periodic sets`);
    }
  }
  if (config.fixedSchedule && (config.warmupDurationMs ?? 0) > 0) {
    errors.push(
      "Option --warmup-duration can not be used with --fixed-schedule: its warmup is the " +
        "schedule's first steps (--warmup-request-count)",
    );
  }
}
