/**
 * `inferperf compare BASELINE CANDIDATE`: two summary JSONs, level by level
 * and figure by figure, as benchstat compares benchmarks: both values, their
 * ratio, the confidence interval of the difference and Welch's t test, from
 * the runs' values when both files hold several runs (--num-profile-runs),
 * otherwise from the reported windows' values; the verdict is "better",
 * "worse" or "~" (no significant difference), each figure knowing which
 * direction is better.
 */
import { meanInterval, welchTest } from "../measure/confidence.ts";
import { mean } from "../measure/stats.ts";
import { type Figure, headlineFigures, type JsonObject, valueAt, windowValue } from "./figures.ts";
import { formatGeneral } from "./format.ts";

export type Verdict = "better" | "worse" | "~";

/** Where a test's samples come from. */
export type SampleSource = "runs" | "windows" | "none";

export interface FigureComparison extends Figure {
  /** The level's figure (JSON units): the runs' mean, else the level's own value. */
  baseline: number;
  candidate: number;
  /** candidate / baseline (NaN when the baseline is 0). */
  ratio: number;
  source: SampleSource;
  /** Samples on each side; 0 without a test. */
  samples: [number, number];
  /** Welch's test of candidate - baseline; absent without two samples on each side. */
  difference?: { ciLow: number; ciHigh: number; p: number };
  verdict: Verdict;
}

export interface LevelComparison {
  mode: string;
  value: number;
  figures: FigureComparison[];
}

export interface Comparison {
  confidenceLevel: number;
  levels: LevelComparison[];
  /** Levels only one file has, as "concurrency 8". */
  unmatched: { baseline: string[]; candidate: string[] };
}

type Doc = JsonObject;

const levelsOf = (doc: Doc) => (Array.isArray(doc.levels) ? doc.levels : []) as JsonObject[];

/** The per-run values of a figure at a level, when the file holds several runs of it. */
function runValues(doc: Doc, level: JsonObject, key: string): number[] | undefined {
  const runs = (doc.profile_runs as JsonObject | undefined)?.levels as JsonObject[] | undefined;
  const match = runs?.find((l) => l.mode === level.mode && l.value === level.value);
  const figure = (match?.figures as JsonObject | undefined)?.[key] as JsonObject | undefined;
  const values = figure?.values;
  return Array.isArray(values) && values.length >= 2 ? values as number[] : undefined;
}

/** The reported windows' values of a figure at a level. */
function windowValues(level: JsonObject, key: string): number[] {
  const windows = (Array.isArray(level.windows) ? level.windows : []) as JsonObject[];
  return windows.filter((w) => w.reported === true).flatMap((w) => windowValue(w, key) ?? []);
}

const levelId = (l: JsonObject) => `${l.mode}:${l.value}`;
const levelName = (l: JsonObject) =>
  `${String(l.mode).replace("_", " ")} ${formatGeneral(l.value as number)}`;

function compareFigure(
  figure: Figure,
  options: { docs: [Doc, Doc]; levels: [JsonObject, JsonObject]; level: number },
): FigureComparison {
  const [a, b] = options.levels;
  const [runsA, runsB] = [
    runValues(options.docs[0], a, figure.key),
    runValues(options.docs[1], b, figure.key),
  ];
  const byRuns = runsA !== undefined && runsB !== undefined;
  const samples = byRuns
    ? [runsA, runsB]
    : [windowValues(a, figure.key), windowValues(b, figure.key)];
  const tested = samples[0].length >= 2 && samples[1].length >= 2;
  const baseline = byRuns ? mean(runsA) : valueAt(a, figure.key)!;
  const candidate = byRuns ? mean(runsB) : valueAt(b, figure.key)!;
  const comparison: FigureComparison = {
    ...figure,
    baseline,
    candidate,
    ratio: baseline === 0 ? NaN : candidate / baseline,
    source: tested ? (byRuns ? "runs" : "windows") : "none",
    samples: tested ? [samples[0].length, samples[1].length] : [0, 0],
    verdict: "~",
  };
  if (!tested) return comparison;
  const test = welchTest(
    meanInterval(samples[0], options.level),
    meanInterval(samples[1], options.level),
    options.level,
  );
  comparison.difference = { ciLow: test.ciLow, ciHigh: test.ciHigh, p: test.p };
  if (test.p < 1 - options.level && candidate !== baseline) {
    const higher = candidate > baseline;
    comparison.verdict = higher === (figure.better === "higher") ? "better" : "worse";
  }
  return comparison;
}

/** Compares every level both files measured (matched by mode and value), every figure both have. */
export function compareSummaries(
  baseline: Doc,
  candidate: Doc,
  options: { confidenceLevel: number },
): Comparison {
  const candidates = new Map(levelsOf(candidate).map((l) => [levelId(l), l]));
  const baselines = new Set(levelsOf(baseline).map(levelId));
  const levels = levelsOf(baseline).flatMap((a) => {
    const b = candidates.get(levelId(a));
    if (b === undefined) return [];
    const keys = new Set(headlineFigures(b).map((f) => f.key));
    return [{
      mode: String(a.mode),
      value: a.value as number,
      figures: headlineFigures(a).filter((f) => keys.has(f.key)).map((figure) =>
        compareFigure(figure, {
          docs: [baseline, candidate],
          levels: [a, b],
          level: options.confidenceLevel,
        })
      ),
    }];
  });
  return {
    confidenceLevel: options.confidenceLevel,
    levels,
    unmatched: {
      baseline: levelsOf(baseline).filter((l) => !candidates.has(levelId(l))).map(levelName),
      candidate: levelsOf(candidate).filter((l) => !baselines.has(levelId(l))).map(levelName),
    },
  };
}

/** A worse figure's change in percent of the baseline (its size as a regression). */
export function regressionPct(f: FigureComparison): number {
  return f.baseline === 0 ? Infinity : Math.abs(f.candidate / f.baseline - 1) * 100;
}

/** The significant regressions beyond `pct` percent. */
export function regressionsBeyond(
  c: Comparison,
  pct: number,
): Array<{ level: string; f: FigureComparison }> {
  return c.levels.flatMap((l) =>
    l.figures.filter((f) => f.verdict === "worse" && regressionPct(f) > pct).map((f) => ({
      level: `${l.mode.replace("_", " ")} ${formatGeneral(l.value)}`,
      f,
    }))
  );
}

/** Four significant digits, in the figure's unit. */
function show(f: Figure, value: number): string {
  return formatGeneral(Number((value * f.scale).toPrecision(4)));
}

function signed(text: string): string {
  return text.startsWith("-") ? text : `+${text}`;
}

/** One row of the console table (before the columns are padded). */
function row(f: FigureComparison): string[] {
  const pct = (v: number) => signed(formatGeneral(Number((v * 100).toPrecision(3)))) + " %";
  const change = Number.isNaN(f.ratio) ? "" : pct(f.ratio - 1);
  const interval = f.difference
    ? `${pct(f.difference.ciLow / f.baseline)} .. ${pct(f.difference.ciHigh / f.baseline)}`
    : "";
  const p = f.difference ? `p=${formatGeneral(Number(f.difference.p.toPrecision(2)))}` : "";
  const n = f.source === "none" ? "no test" : `n=${f.samples[0]}+${f.samples[1]} ${f.source}`;
  return [
    `${f.label} (${f.unit})`,
    show(f, f.baseline),
    show(f, f.candidate),
    Number.isNaN(f.ratio) ? "" : f.ratio.toFixed(3),
    change,
    interval,
    p,
    n,
    f.source === "none" ? "" : f.verdict,
  ];
}

/** benchstat's table: per level, each figure's values, ratio, change with its interval, p, verdict. */
export function formatComparison(
  c: Comparison,
  names: { baseline: string; candidate: string },
): string {
  const level = `${formatGeneral(c.confidenceLevel * 100)} %`;
  const head = [
    "",
    "baseline",
    "candidate",
    "ratio",
    "change",
    `${level} interval`,
    "p",
    "samples",
    "",
  ];
  const blocks = c.levels.map((l) => ({
    title: `${l.mode === "concurrency" ? "Concurrency" : "Request rate"} ${formatGeneral(l.value)}`,
    rows: l.figures.map(row),
  }));
  const all = [head, ...blocks.flatMap((b) => b.rows)];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])).join("  ")
      .trimEnd();
  const out = [
    `Baseline:  ${names.baseline}`,
    `Candidate: ${names.candidate}`,
    `Welch's t test at ${level}; "~": no significant difference`,
    "",
    `  ${line(head)}`,
  ];
  for (const b of blocks) {
    out.push(b.title);
    for (const r of b.rows) out.push(`  ${line(r)}`);
  }
  if (c.levels.length === 0) out.push("No level is in both files.");
  for (const [side, names_] of Object.entries(c.unmatched)) {
    if (names_.length > 0) out.push(`Only in the ${side}: ${names_.join(", ")}`);
  }
  return `${out.join("\n")}\n`;
}
