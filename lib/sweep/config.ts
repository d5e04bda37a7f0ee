/**
 * Sweep configuration: raw options (command line over --config YAML) -> the
 * matrix of points. Every combination of models and the values of the
 * [sweep] options is a series; each load value of a series is a point,
 * measured with its own ProfilePlan built by the normal validation.
 */
import { buildProfileConfig } from "../cli/config.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { RawOptions, RawValue } from "../cli/options.ts";
import { UsageError } from "../types/errors.ts";
import { optionDef, optionLabel } from "../cli/options.ts";
import { parseRange, type Range, rangeLevels } from "../load/range.ts";
import { REPORTED_PERCENTILES } from "../measure/stats.ts";
import { formatGeneral } from "../report/format.ts";
import type { LoadMode } from "../types/results.ts";
import { constraintText, type Goals, parseGoals } from "./goals.ts";

/** One measurement of a sweep: what is measured at which load. */
export interface SweepPoint {
  model: string;
  batchSize: number;
  protocol: string;
  /** The --input-data value of this point ("random" when not given). */
  inputData: string;
  mode: LoadMode;
  /** Concurrency or request rate. */
  value: number;
}

/** `concurrency 2`, `request rate 50.5` */
export function describeLoad(point: SweepPoint): string {
  return point.mode === "concurrency"
    ? `concurrency ${point.value}`
    : `request rate ${formatGeneral(point.value)}`;
}

/** `slow, batch size 1, http, input data random, concurrency 2` */
export function describePoint(point: SweepPoint): string {
  return `${point.model}, batch size ${point.batchSize}, ${point.protocol}, input data ${point.inputData}, ${
    describeLoad(point)
  }`;
}

/** Identifies a point in checkpoints. */
export function pointKey(p: SweepPoint): string {
  return JSON.stringify([p.model, p.batchSize, p.protocol, p.inputData, p.mode, p.value]);
}

/** Points that differ only in load, measured in order of load. */
export interface Series {
  /** The point with the series' first load value. */
  point: SweepPoint;
  /** The load values: a list, or an open-ended range (until the latency threshold). */
  loads: readonly number[] | Range;
  /** Validated configuration of the first point. */
  config: ProfilePlan;
}

/** Values that decide what a measurement means: a checkpoint is only resumed with equal ones. */
export type Settings = Record<string, string | number | boolean | null | string[]>;

export interface SweepConfig {
  series: Series[];
  checkpointDirectory: string;
  goals: Goals;
  /** Stop a series once a point's latency reaches this (0: never). */
  latencyThresholdMs: number;
  percentile?: number;
  /** Where the CSV goes: -f, else results.csv in the checkpoint directory. */
  csvFile: string;
  /** Where the HTML report goes: --report-html, else report.html in the checkpoint directory. */
  htmlFile: string;
  settings: Settings;
}

/** The checkpoint directory and what `inferperf report` writes. */
export interface ReportConfig {
  checkpointDirectory: string;
  csvFile: string;
  htmlFile: string;
  /** Given on the command line; otherwise the checkpoint's own goals apply. */
  objective?: string;
  constraints?: string[];
}

/** Options read by the sweep itself, not passed on to the points. */
const SWEEP_OPTIONS = [
  "profile-models",
  "checkpoint-directory",
  "objective",
  "constraints",
  "latency-report-file",
  "report-html",
];
/** Options whose meaning has no place in a sweep of single points. */
const NOT_IN_SWEEPS = [
  "binary-search",
  "request-intervals",
  "verbose-csv",
  "num-profile-runs",
  "confidence-level",
  "convergence-threshold",
  "profile-run-cooldown-seconds",
];

const DEFAULT_INPUT_DATA = "random";

/** The ProfilePlan fields that make up Settings, under their option names. */
const SETTINGS: Array<[string, (c: ProfilePlan) => Settings[string]]> = [
  ["url", (c) => c.url],
  ["model-version", (c) => c.modelVersion],
  ["service-kind", (c) => c.serviceKind],
  ["measurement-mode", (c) => c.measurementMode],
  ["measurement-interval", (c) => c.measurementIntervalMs],
  ["measurement-request-count", (c) => c.measurementRequestCount],
  ["stability-percentage", (c) => c.stabilityPercentage],
  ["max-trials", (c) => c.maxTrials],
  ["percentile", (c) => c.percentile ?? null],
  ["request-count", (c) => c.requestCount],
  ["warmup-request-count", (c) => c.warmupRequestCount],
  ["request-timeout", (c) => c.requestTimeoutMs],
  ["stall-timeout", (c) => c.stallTimeoutMs],
  ["request-distribution", (c) => c.requestDistribution],
  ["max-inflight", (c) => c.maxInflight],
  ["send-batching", (c) => c.sendBatchMs],
  ["async", (c) => c.async],
  ["shape", (c) => [...c.shapes].map(([name, dims]) => `${name}:${dims.join(",")}`)],
  ["string-length", (c) => c.stringLength],
  ["string-data", (c) => c.stringData ?? null],
  ["input-tensor-format", (c) => c.inputTensorFormat],
  ["output-tensor-format", (c) => c.outputTensorFormat],
  ["header", (c) => Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`)],
];

function settingsOf(config: ProfilePlan): Settings {
  return Object.fromEntries(SETTINGS.map(([name, read]) => [name, read(config)]));
}

/** Items of a comma-list option, from the command line or YAML. */
function commaList(value: RawValue | undefined): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : [String(value)];
  return items.flatMap((item) => item.split(",")).map((s) => s.trim()).filter((s) => s !== "");
}

/**
 * The values of a [sweep] option: A,B,C or START:END[:STEP]. An open end (0)
 * is returned as the range itself; `errors` collects problems.
 */
function sweepValues(
  name: string,
  text: string,
  options: { integer: boolean; openEnd: boolean; errors: string[] },
): readonly number[] | Range {
  const fail = (why: string) => {
    options.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: ${why}`);
    return [1];
  };
  if (text.includes(",")) {
    const values = text.split(",").map((s) => Number(s.trim()));
    const kind = options.integer ? "integers" : "numbers";
    if (
      values.some((v) => !Number.isFinite(v) || v <= 0 || (options.integer && !Number.isInteger(v)))
    ) {
      return fail(`expected a comma-delimited list of ${kind} > 0`);
    }
    return [...new Set(values)];
  }
  try {
    const range = parseRange(text, { integer: options.integer });
    if (range.end === 0 && !options.openEnd) return fail("the end must be given");
    return range.end === 0 ? range : [...rangeLevels(range)];
  } catch (e) {
    return fail((e as Error).message);
  }
}

type Setting = [name: string, value: RawValue | undefined];

/** Every combination of one value per dimension, the first dimension outermost. */
function combinations(
  dimensions: ReadonlyArray<[name: string, values: ReadonlyArray<RawValue | undefined>]>,
): Setting[][] {
  return dimensions.reduce<Setting[][]>(
    (done, [name, values]) => done.flatMap((c) => values.map((v): Setting[] => [...c, [name, v]])),
    [[]],
  );
}

/** The first load value of a series. */
function firstLoad(loads: readonly number[] | Range): number {
  return Array.isArray(loads) ? loads[0]! : (loads as Range).start;
}

/** Converts and validates a sweep (--profile-models given); throws UsageError listing every problem. */
export function buildSweepConfig(raw: RawOptions): SweepConfig {
  const errors: string[] = [];
  const models = commaList(raw.get("profile-models"));
  if (models.length === 0) errors.push("Option --profile-models needs at least one model");
  if (raw.has("model-name")) {
    errors.push("Options --profile-models and -m/--model-name can not be used together");
  }
  for (const name of NOT_IN_SWEEPS) {
    if (raw.has(name)) errors.push(`Option ${optionLabel(name)} does not apply to sweeps`);
  }
  const rate = raw.has("request-rate-range");
  const loadOption = rate ? "request-rate-range" : "concurrency-range";
  const mode: LoadMode = rate ? "request_rate" : "concurrency";
  const loads = sweepValues(loadOption, String(raw.get(loadOption) ?? "1"), {
    integer: !rate,
    openEnd: true,
    errors,
  });
  // Without an open end the values are a list.
  const batchSizes = raw.has("batch-size")
    ? sweepValues("batch-size", String(raw.get("batch-size")), {
      integer: true,
      openEnd: false,
      errors,
    }) as readonly number[]
    : [];
  const protocols = commaList(raw.get("protocol"));
  const dataSets = (raw.get("input-data") as string[] | undefined) ?? [];

  const base: RawOptions = new Map(raw);
  for (const name of [...SWEEP_OPTIONS, ...NOT_IN_SWEEPS]) base.delete(name);
  base.set(loadOption, String(firstLoad(loads)));
  const dimensions: Array<[string, ReadonlyArray<RawValue | undefined>]> = [
    ["model-name", models],
    ["protocol", protocols.length > 0 ? protocols : [undefined]],
    ["input-data", dataSets.length > 0 ? dataSets.map((d) => [d]) : [undefined]],
    ["batch-size", batchSizes.length > 0 ? batchSizes.map(String) : [undefined]],
  ];
  const series: Series[] = [];
  const pointErrors = new Set<string>();
  for (const combination of combinations(dimensions)) {
    const pointRaw: RawOptions = new Map(base);
    for (const [name, value] of combination) if (value !== undefined) pointRaw.set(name, value);
    try {
      const config = buildProfileConfig(pointRaw);
      const data = pointRaw.get("input-data") as string[] | undefined;
      series.push({
        point: {
          model: config.model,
          batchSize: config.batchSize,
          protocol: config.protocol,
          inputData: data?.[0] ?? DEFAULT_INPUT_DATA,
          mode,
          value: firstLoad(loads),
        },
        loads,
        config,
      });
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      e.errors.forEach((m) => pointErrors.add(m));
    }
  }
  errors.push(...pointErrors);
  const first = series[0]?.config;
  if (!Array.isArray(loads) && Number(raw.get("latency-threshold") ?? 0) === 0) {
    errors.push(
      `The end of the ${
        optionLabel(loadOption)
      } and -l/--latency-threshold can not both be 0: the sweep would never stop`,
    );
  }
  let goals: Goals | undefined;
  try {
    goals = parseGoals(
      String(raw.get("objective") ?? optionDef("objective").default),
      commaList(raw.get("constraints")),
      { percentiles: [...REPORTED_PERCENTILES, ...(first?.percentile ? [first.percentile] : [])] },
    );
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    errors.push(...e.errors);
  }
  if (errors.length > 0 || !first || !goals) throw new UsageError(errors);
  const checkpointDirectory = String(
    raw.get("checkpoint-directory") ?? optionDef("checkpoint-directory").default,
  );
  return {
    series,
    checkpointDirectory,
    goals,
    latencyThresholdMs: first.latencyThresholdMs,
    percentile: first.percentile,
    ...reportFiles(raw, checkpointDirectory),
    settings: settingsOf(first),
  };
}

/** -f and --report-html, by default results.csv and report.html in the checkpoint directory. */
function reportFiles(raw: RawOptions, directory: string): { csvFile: string; htmlFile: string } {
  const file = (option: string, name: string) =>
    String(raw.get(option) ?? `${directory.replace(/\/+$/, "")}/${name}`);
  return {
    csvFile: file("latency-report-file", "results.csv"),
    htmlFile: file("report-html", "report.html"),
  };
}

/** Options of `inferperf report`. */
export function buildReportConfig(raw: RawOptions): ReportConfig {
  const checkpointDirectory = String(
    raw.get("checkpoint-directory") ?? optionDef("checkpoint-directory").default,
  );
  const constraints = commaList(raw.get("constraints"));
  return {
    checkpointDirectory,
    ...reportFiles(raw, checkpointDirectory),
    ...(raw.has("objective") ? { objective: String(raw.get("objective")) } : {}),
    ...(raw.has("constraints") ? { constraints } : {}),
  };
}

/** The load values of a series, lazily: open-ended ranges go on until the caller stops. */
export function seriesLoads(series: Series): Iterable<number> {
  return Array.isArray(series.loads) ? series.loads : rangeLevels(series.loads as Range);
}

/** Number of points in the matrix; undefined when a series is open-ended. */
export function countPoints(sweep: SweepConfig): number | undefined {
  let total = 0;
  for (const s of sweep.series) {
    if (!Array.isArray(s.loads)) return undefined;
    total += s.loads.length;
  }
  return total;
}

/** The ProfilePlan that measures one load value of a series, as a single level (as `--concurrency-range VALUE`). */
export function pointConfig(series: Series, value: number): ProfilePlan {
  const level = { start: value, end: 1, step: 1 };
  return series.point.mode === "concurrency"
    ? { ...series.config, concurrency: level, latencyThresholdMs: 0 }
    : { ...series.config, requestRate: level, latencyThresholdMs: 0 };
}

/** Goals as checkpoints store them (the text --objective and --constraints take). */
export function goalsText(goals: Goals): { objective: string; constraints: string[] } {
  return { objective: goals.objective.name, constraints: goals.constraints.map(constraintText) };
}
