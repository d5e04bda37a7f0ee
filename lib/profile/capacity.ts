/**
 * A run's SLO judgements: the capacity search's judge and report
 * (--search-recipe, the search itself is lib/load/capacity.ts), its
 * checkpoint (each measured level saved; a rerun with the same settings
 * replays them and goes on), and the CI gates (--threshold,
 * --failed-request-threshold).
 */
import type { CapacityOutcome, CapacityPoint, Judgement } from "../load/capacity.ts";
import { evaluateSlos, formatSlos, isFloor, slosMet } from "../measure/slo.ts";
import { resultReplacer, resultReviver } from "../report/result_json.ts";
import { writeFileAtomic } from "../report/output_file.ts";
import { UsageError } from "../types/errors.ts";
import type { CapacityLevel, CapacityReport, LevelResult, WindowData } from "../types/results.ts";
import type { ProfilePlan } from "./plan.ts";

type SloSettings = Pick<ProfilePlan, "slos" | "sloAttainment" | "sendLagFails">;

/**
 * A level passes when every SLO holds and it is trustworthy: no
 * failed request (unless an SLO bounds the errors), on schedule when
 * --max-send-lag was given (otherwise late sends are a warning, as in a sweep).
 */
export function judgeLevel(result: LevelResult, plan: SloSettings): Judgement {
  // Lower bounds on throughput break at low loads: the report checks them at the answer.
  const bisected = plan.slos.filter((s) => !isFloor(s));
  const verdicts = evaluateSlos(result, bisected, { attainment: plan.sloAttainment });
  // An unstable level is judged on its last windows, as reported: an overloaded open loop's
  // latency grows there, while a loaded client's noise alone must not fail a level.
  const reasons = verdicts.filter((v) => !v.met).map((v) => v.text);
  const errorsBounded = plan.slos.some((s) => s.metric.def.name.startsWith("error_"));
  if (result.client.errorCount > 0 && !errorsBounded) {
    reasons.push(`${result.client.errorCount} failed requests`);
  }
  if (result.openLoop?.behindSchedule && plan.sendLagFails) {
    reasons.push("send lag over --max-send-lag");
  }
  return { pass: reasons.length === 0, reasons };
}

/** The SLO line of a level's report: "SLOs met: ..." or "SLOs broken: ...". */
export function describeSlos(result: LevelResult, plan: SloSettings): string {
  const verdicts = evaluateSlos(result, plan.slos, { attainment: plan.sloAttainment });
  return `SLOs ${slosMet(verdicts) ? "met" : "broken"}: ${verdicts.map((v) => v.text).join("; ")}`;
}

/** The search's outcome as reports show it; `index` finds a result among the reported levels. */
export function capacityReport(
  outcome: CapacityOutcome,
  options: { plan: ProfilePlan; index: (result: LevelResult) => number },
): CapacityReport {
  const { plan } = options;
  const level = (p: CapacityPoint): CapacityLevel => {
    const slos = evaluateSlos(p.result, plan.slos, { attainment: plan.sloAttainment })
      .map((v) => v.text);
    // Then what else failed it (failed requests, late sends), and whether it settled.
    const other = p.judgement.reasons.filter((r) => !slos.includes(r))
      .concat(p.result.stable ? [] : ["unstable"]);
    return { value: p.value, index: options.index(p.result), verdicts: [...slos, ...other] };
  };
  // A throughput floor the answer misses is missed below it too: no level meets every SLO.
  const floors = outcome.passing
    ? evaluateSlos(outcome.passing.result, plan.slos.filter(isFloor)).filter((v) => !v.met)
    : [];
  const missed = floors.length > 0
    ? {
      stopped: `the highest level within the other SLOs, ${outcome.passing!.value}, breaks ${
        floors.map((v) => v.text).join("; ")
      }: no level meets every SLO`,
    }
    : {};
  return {
    recipe: plan.capacity!.recipe,
    mode: plan.loadMode === "concurrency" ? "concurrency" : "request_rate",
    ...(outcome.value === undefined || floors.length > 0 ? {} : { value: outcome.value }),
    slo: formatSlos(plan.slos, { attainment: plan.sloAttainment }),
    ...(outcome.passing ? { passing: level(outcome.passing) } : {}),
    ...(outcome.failing ? { failing: level(outcome.failing) } : {}),
    points: outcome.points.length,
    stopped: outcome.stopped,
    notes: outcome.notes,
    ...missed,
  };
}

const FORMAT = "inferperf capacity checkpoint";
const VERSION = 1;

/** What must match for a checkpoint to be resumed: the search and how levels are measured. */
function settingsKey(plan: ProfilePlan): string {
  return JSON.stringify({
    recipe: plan.capacity!.recipe,
    resolution: plan.capacity!.resolution,
    slo: formatSlos(plan.slos, { attainment: plan.sloAttainment }),
    model: plan.model,
    url: plan.url,
    serviceKind: plan.serviceKind,
    protocol: plan.protocol,
    loadMode: plan.loadMode,
    range: plan.loadMode === "concurrency" ? plan.concurrency : plan.requestRate,
    batchSize: plan.batchSize,
    measurement: [
      plan.measurementMode,
      plan.measurementIntervalMs,
      plan.measurementRequestCount,
      plan.requestCount,
      plan.benchmarkDurationMs,
      plan.percentile ?? null,
    ],
  });
}

/**
 * The levels a search measured, saved after each one (written aside and
 * renamed, so an interrupted write leaves the previous file). A rerun with
 * the same settings replays them in order: the search takes the same path
 * and measures from where the last run stopped.
 */
export class CapacityCheckpoint {
  readonly #file: string;
  readonly #key: string;
  readonly #saved: LevelResult[];
  #replay: LevelResult[];

  private constructor(file: string, key: string, saved: LevelResult[]) {
    this.#file = file;
    this.#key = key;
    this.#saved = saved;
    this.#replay = [...saved];
  }

  /** Opens `plan`'s checkpoint; a file from another search is a UsageError (nothing is lost). */
  static open(plan: ProfilePlan): CapacityCheckpoint {
    const file = plan.capacity!.checkpoint;
    const key = settingsKey(plan);
    let text: string;
    try {
      text = Deno.readTextFileSync(file);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return new CapacityCheckpoint(file, key, []);
      throw new UsageError([
        `Can not read --search-checkpoint "${file}": ${(error as Error).message}`,
      ]);
    }
    let data: { format?: unknown; version?: unknown; settings?: unknown; levels?: unknown };
    try {
      data = JSON.parse(text, resultReviver);
    } catch (error) {
      throw new UsageError([
        `--search-checkpoint "${file}" is corrupt: ${(error as Error).message}`,
      ]);
    }
    if (data.format !== FORMAT || data.version !== VERSION || !Array.isArray(data.levels)) {
      throw new UsageError([
        `--search-checkpoint "${file}" is not an inferperf capacity checkpoint`,
      ]);
    }
    if (data.settings !== key) {
      throw new UsageError([
        `--search-checkpoint "${file}" is from another search (recipe, SLOs, target or ` +
        "measurement differ): remove it, or name another file",
      ]);
    }
    return new CapacityCheckpoint(file, key, data.levels as LevelResult[]);
  }

  /** Levels saved by earlier runs. */
  get resumed(): number {
    return this.#saved.length - this.#replay.length;
  }

  get stored(): number {
    return this.#saved.length;
  }

  get file(): string {
    return this.#file;
  }

  /** The saved measurement of `value` that comes next, if the earlier run took this path. */
  next(value: number): LevelResult | undefined {
    if (this.#replay[0]?.value !== value) {
      this.#replay = [];
      return undefined;
    }
    return this.#replay.shift();
  }

  /** Saves a new measurement, after the replayed ones (its windows are not kept). */
  add(result: LevelResult): void {
    this.#saved.splice(this.resumed, this.#replay.length, { ...result, windows: [] });
    this.#replay = [];
    writeFileAtomic(
      this.#file,
      JSON.stringify(
        { format: FORMAT, version: VERSION, settings: this.#key, levels: this.#saved },
        resultReplacer,
      ),
    );
  }
}

/** --threshold breaches of a level, in words; empty when every threshold holds. */
export function thresholdBreaches(result: LevelResult, plan: ProfilePlan): string[] {
  if (plan.thresholds.length === 0) return [];
  return evaluateSlos(result, plan.thresholds, { attainment: plan.sloAttainment })
    .filter((v) => !v.met)
    .map((v) => v.text);
}

/** --failed-request-threshold: counts the run's requests window by window. */
export class FailedRequestGate {
  #failed = 0;
  #sent = 0;
  constructor(readonly threshold: NonNullable<ProfilePlan["failedRequestThreshold"]>) {}

  /** Adds a window; returns why the run must stop once the threshold is reached. */
  add(window: WindowData): string | undefined {
    this.#failed += window.errorCount;
    this.#sent += window.errorCount + window.latenciesUs.length;
    const t = this.threshold;
    const reached = "count" in t
      ? this.#failed >= t.count
      : this.#sent > 0 && this.#failed / this.#sent >= t.fraction;
    if (!reached || this.#failed === 0) return undefined;
    return `--failed-request-threshold ${
      "count" in t ? t.count : `${Number((t.fraction * 100).toFixed(4))}%`
    } reached: ${this.#failed} of ${this.#sent} requests failed`;
  }
}
