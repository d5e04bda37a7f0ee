/**
 * --num-profile-runs: every headline figure of every level as the mean of
 * the runs with its Student's t confidence interval and coefficient of
 * variation; the convergence rule of the adaptive mode; the console table,
 * the CSV and the summary JSON's `profile_runs` object.
 */
import { type MeanInterval, meanInterval } from "../measure/confidence.ts";
import type { LoadMode } from "../types/results.ts";
import { csvText } from "./csv.ts";
import {
  type Figure,
  headlineFigures,
  type Json,
  type JsonObject,
  scaled,
  valueAt,
} from "./figures.ts";
import { formatGeneral } from "./format.ts";

/** One figure over the runs: its per-run values (JSON units) and their interval. */
export interface FigureInterval extends Figure, MeanInterval {
  values: number[];
}

export interface LevelConfidence {
  mode: LoadMode;
  value: number;
  figures: FigureInterval[];
}

/** What the repeat runs found, as every output reports it. */
export interface RunsReport {
  /** --num-profile-runs. */
  requested: number;
  completed: number;
  confidenceLevel: number;
  /** --convergence-threshold: the adaptive mode's bound on (ci_high - ci_low) / |mean|. */
  convergenceThreshold?: number;
  /** Adaptive mode: every figure's interval was within the threshold when the runs stopped. */
  converged?: boolean;
  levels: LevelConfidence[];
}

/**
 * The levels measured over the runs (each run's summary levels), matched by
 * mode and value in the order they first appear; each figure from the runs
 * that measured it.
 */
export function levelConfidence(
  runs: ReadonlyArray<readonly JsonObject[]>,
  level: number,
): LevelConfidence[] {
  const groups = new Map<string, JsonObject[]>();
  for (const run of runs) {
    for (const l of run) {
      const id = `${l.mode}:${l.value}`;
      groups.set(id, [...groups.get(id) ?? [], l]);
    }
  }
  return [...groups.values()].map((levels) => {
    const keys = new Map<string, Figure>();
    for (const l of levels) {
      for (const f of headlineFigures(l)) keys.set(f.key, keys.get(f.key) ?? f);
    }
    return {
      mode: levels[0].mode as LoadMode,
      value: levels[0].value as number,
      figures: [...keys.values()].map((figure) => {
        const values = levels.flatMap((l) => valueAt(l, figure.key) ?? []);
        return { ...figure, values, ...meanInterval(values, level) };
      }),
    };
  });
}

/** (ci_high - ci_low) / |mean|: AIPerf's ci_width convergence measure. */
export const relativeWidth = (f: MeanInterval): number =>
  f.mean === 0 ? (f.ciHigh === f.ciLow ? 0 : Infinity) : (f.ciHigh - f.ciLow) / Math.abs(f.mean);

/** Every figure of every level has an interval within `threshold` of its mean. */
export function hasConverged(levels: readonly LevelConfidence[], threshold: number): boolean {
  return levels.length > 0 &&
    levels.every((l) => l.figures.every((f) => f.n >= 2 && relativeWidth(f) <= threshold));
}

/** Runs the adaptive mode measures before it may stop: three, as AIPerf's. */
export const MIN_ADAPTIVE_RUNS = 3;

const pct = (fraction: number) => `${formatGeneral(Number((fraction * 100).toPrecision(3)))} %`;

/** The decimals that give `mean` four significant digits, for every number of its row. */
function decimals(f: Figure, mean: number): number {
  const m = Math.abs(scaled(f, mean));
  return m === 0 ? 2 : Math.min(6, Math.max(0, 3 - Math.floor(Math.log10(m))));
}

function levelName(l: Pick<LevelConfidence, "mode" | "value">): string {
  return l.mode === "concurrency"
    ? `Concurrency: ${l.value}`
    : `Request Rate: ${formatGeneral(l.value)}`;
}

/** The console's table: per level, each figure as mean ± half-width, interval, CV. */
export function formatConfidence(report: RunsReport): string {
  const out = [
    "",
    `Confidence over ${report.completed} of ${report.requested} profile runs ` +
    `(${pct(report.confidenceLevel)} intervals, Student's t)`,
  ];
  const threshold = report.convergenceThreshold;
  if (threshold !== undefined && report.converged) {
    out.push(`Converged: every interval spans at most ${pct(threshold)} of its mean`);
  } else if (threshold !== undefined) {
    const widest = report.levels.flatMap((l) => l.figures.map((f) => ({ l, f })))
      .sort((a, b) => relativeWidth(b.f) - relativeWidth(a.f))[0];
    out.push(
      `Not converged: the interval of ${widest.f.label} at ${
        levelName(widest.l).toLowerCase().replace(":", "")
      } ` +
        `spans ${pct(relativeWidth(widest.f))} of its mean (--convergence-threshold ${threshold})`,
    );
  }
  const width = Math.max(
    0,
    ...report.levels.flatMap((l) => l.figures.map((f) => f.label.length)),
  );
  for (const l of report.levels) {
    out.push(`${levelName(l)}`);
    for (const f of l.figures) {
      const show = (value: number) => scaled(f, value).toFixed(decimals(f, f.mean));
      const interval = f.n < 2
        ? "(1 run: no interval)"
        : `± ${show(f.ciHigh - f.mean)} (${show(f.ciLow)} .. ${show(f.ciHigh)}), CV ${pct(f.cv)}`;
      out.push(`  ${`${f.label}:`.padEnd(width + 1)} ${show(f.mean)} ${f.unit} ${interval}`);
    }
  }
  return `${out.join("\n")}\n`;
}

const CSV_HEADER = [
  "Metric",
  "Unit",
  "Runs",
  "Mean",
  "Std",
  "Min",
  "Max",
  "CV",
  "CI Low",
  "CI High",
  "t Critical",
  "Values",
];

/** -f with repeat runs: one row per level and figure, values in the figure's unit. */
export function formatConfidenceCsv(report: RunsReport): string {
  const mode = report.levels[0]?.mode ?? "concurrency";
  const head = [mode === "concurrency" ? "Concurrency" : "Request Rate", ...CSV_HEADER];
  const rows = report.levels.flatMap((l) =>
    l.figures.map((f) => [
      l.value,
      f.label,
      f.unit,
      f.n,
      ...[f.mean, f.std, f.min, f.max].map((v) => scaled(f, v)),
      f.cv,
      scaled(f, f.ciLow),
      scaled(f, f.ciHigh),
      Number.isNaN(f.tCritical) ? "" : f.tCritical,
      f.values.map((v) => scaled(f, v)).join(" "),
    ])
  );
  return csvText([head, ...rows]);
}

/** The summary JSON's `profile_runs` (docs/summary.schema.json); figures in their JSON units. */
export function confidenceJson(report: RunsReport): Json {
  const json: Record<string, Json> = {
    requested: report.requested,
    completed: report.completed,
    confidence_level: report.confidenceLevel,
    levels: report.levels.map((l) => ({
      mode: l.mode,
      value: l.value,
      figures: Object.fromEntries(l.figures.map((f) => [f.key, {
        label: f.label,
        better: f.better,
        n: f.n,
        mean: f.mean,
        std: f.std,
        min: f.min,
        max: f.max,
        cv: f.cv,
        se: f.se,
        t_critical: Number.isNaN(f.tCritical) ? null : f.tCritical,
        ci_low: f.ciLow,
        ci_high: f.ciHigh,
        values: f.values,
      }])),
    })),
  };
  if (report.convergenceThreshold !== undefined) {
    json.convergence_threshold = report.convergenceThreshold;
    json.converged = report.converged ?? false;
  }
  return json;
}
