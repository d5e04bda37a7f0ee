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
import { type Figure, headlineFigures, type JsonObject, valueAt, windowValue } from "./figures.ts";
import { formatGeneral } from "./format.ts";

export type Verdict = "better" | "worse" | "~";

/**
 * Where a test's samples come from: the runs (--num-profile-runs on both
 * sides), the reported windows, or for an average of a level of one window
 * its requests (mean, deviation and count).
 */
export type SampleSource = "runs" | "windows" | "requests" | "none";

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
  /** "concurrency 4", or the --sweep-size strategies compared ("constant@89.2 / constant@90.1"). */
  name: string;
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

/**
 * How a level is matched with the other file's: by mode and value, or for
 * --sweep-size levels (whose rates each sweep finds anew) by strategy and
 * place, the second "constant@..." with the other's second.
 */
function levelIds(levels: readonly JsonObject[]): Map<string, JsonObject> {
  const seen = new Map<string, number>();
  return new Map(levels.map((l) => {
    if (typeof l.strategy !== "string") return [`${l.mode}:${l.value}`, l];
    const kind = l.strategy.split("@")[0];
    const k = (seen.get(kind) ?? 0) + 1;
    seen.set(kind, k);
    return [`${kind}#${k}`, l];
  }));
}
const levelName = (l: JsonObject) =>
  typeof l.strategy === "string"
    ? l.strategy
    : `${String(l.mode).replace("_", " ")} ${formatGeneral(l.value as number)}`;

/** A mean, its spread and its count: what Welch's test reads. */
type Sample = { mean: number; std: number; n: number };

/**
 * An average figure's own requests (the level's mean, standard deviation
 * and request count), for levels of one window such as --request-count runs.
 */
function requestSample(level: JsonObject, key: string): Sample | undefined {
  const [std, count] = key === "client.avg_latency_us"
    ? ["client.std_latency_us", "client.request_count"]
    : key.startsWith("llm.") && key.endsWith(".avg")
    ? [`${key.slice(0, -".avg".length)}.std`, "llm.request_count"]
    : [];
  if (std === undefined) return undefined;
  const [m, sd, n] = [valueAt(level, key), valueAt(level, std), valueAt(level, count!)];
  if (m === undefined || sd === undefined || n === undefined || n < 2) return undefined;
  // The summary's deviations of LLM figures are the population's (numpy's): made the sample's.
  return { mean: m, std: key.startsWith("llm.") ? sd * Math.sqrt(n / (n - 1)) : sd, n };
}

/** Each side's samples of a figure: the runs', else the windows', else the requests'. */
function samplesOf(
  figure: Figure,
  options: { docs: [Doc, Doc]; levels: [JsonObject, JsonObject]; level: number },
): { source: SampleSource; samples?: [Sample, Sample]; means?: [number, number] } {
  const [a, b] = options.levels;
  const runs = [
    runValues(options.docs[0], a, figure.key),
    runValues(options.docs[1], b, figure.key),
  ];
  if (runs[0] && runs[1]) {
    const [x, y] = [meanInterval(runs[0], options.level), meanInterval(runs[1], options.level)];
    return { source: "runs", samples: [x, y], means: [x.mean, y.mean] };
  }
  const windows = [windowValues(a, figure.key), windowValues(b, figure.key)];
  if (windows[0].length >= 2 && windows[1].length >= 2) {
    return {
      source: "windows",
      samples: [
        meanInterval(windows[0], options.level),
        meanInterval(windows[1], options.level),
      ],
    };
  }
  const requests = [requestSample(a, figure.key), requestSample(b, figure.key)];
  if (requests[0] && requests[1]) {
    return { source: "requests", samples: [requests[0], requests[1]] };
  }
  return { source: "none" };
}

function compareFigure(
  figure: Figure,
  options: { docs: [Doc, Doc]; levels: [JsonObject, JsonObject]; level: number },
): FigureComparison {
  const { source, samples, means } = samplesOf(figure, options);
  const baseline = means?.[0] ?? valueAt(options.levels[0], figure.key)!;
  const candidate = means?.[1] ?? valueAt(options.levels[1], figure.key)!;
  const comparison: FigureComparison = {
    ...figure,
    baseline,
    candidate,
    ratio: baseline === 0 ? NaN : candidate / baseline,
    source,
    samples: samples ? [samples[0].n, samples[1].n] : [0, 0],
    verdict: "~",
  };
  if (!samples) return comparison;
  const test = welchTest(samples[0], samples[1], options.level);
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
  const baselines = levelIds(levelsOf(baseline));
  const candidates = levelIds(levelsOf(candidate));
  const levels = [...baselines].flatMap(([id, a]) => {
    const b = candidates.get(id);
    if (b === undefined) return [];
    const keys = new Set(headlineFigures(b).map((f) => f.key));
    return [{
      mode: String(a.mode),
      value: a.value as number,
      name: typeof a.strategy === "string" && a.strategy !== b.strategy
        ? `${a.strategy} / ${b.strategy}`
        : levelName(a),
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
      baseline: [...baselines].filter(([id]) => !candidates.has(id)).map(([, l]) => levelName(l)),
      candidate: [...candidates].filter(([id]) => !baselines.has(id)).map(([, l]) => levelName(l)),
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
      level: l.name,
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
    title: l.name.charAt(0).toUpperCase() + l.name.slice(1),
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
