/** --num-profile-runs in the HTML report: each level's intervals (error bars) and a table. */
import type { LevelConfidence, RunsReport } from "./confidence.ts";
import { scaled } from "./figures.ts";
import { formatGeneral } from "./format.ts";
import { escapeHtml } from "./html_template.ts";

/** A level's mean throughput and latency over the runs, with their intervals. */
export interface LevelInterval {
  throughput: [number, number, number];
  latencyMs: [number, number, number];
}

/** The throughput-vs-latency point of `level` over the runs: [mean, low, high] of each. */
export function levelInterval(
  runs: RunsReport,
  options: { mode: string; value: number; percentile?: number },
): LevelInterval | undefined {
  const level = runs.levels.find((l) => l.mode === options.mode && l.value === options.value);
  const latencyKey = options.percentile === undefined
    ? "client.avg_latency_us"
    : `client.percentiles_us.${options.percentile}`;
  const throughput = level?.figures.find((f) => f.key === "client.throughput");
  const latency = level?.figures.find((f) => f.key === latencyKey);
  if (!throughput || !latency) return undefined;
  const triple = (f: typeof latency): [number, number, number] =>
    [f.mean, f.ciLow, f.ciHigh].map((v) => scaled(f, v)) as [number, number, number];
  return { throughput: triple(throughput), latencyMs: triple(latency) };
}

const cell = (text: string) => `<td>${escapeHtml(text)}</td>`;
const show = (v: number) => formatGeneral(Number(v.toPrecision(5)));

function rows(l: LevelConfidence): string[] {
  return l.figures.map((f) =>
    `<tr>${cell(formatGeneral(l.value))}${cell(`${f.label} (${f.unit})`)}${cell(String(f.n))}` +
    [f.mean, f.ciLow, f.ciHigh, f.std].map((v) => cell(show(scaled(f, v)))).join("") +
    `${cell(`${show(f.cv * 100)} %`)}</tr>`
  );
}

/** Every level's figures over the runs. */
export function confidenceTable(runs: RunsReport, unit: string): string {
  const level = `${formatGeneral(runs.confidenceLevel * 100)} %`;
  return `<h2>Profile runs: ${level} confidence intervals</h2>\n` +
    `<p>${runs.completed} of ${runs.requested} runs; Student's t over the runs' values. ` +
    "The throughput-vs-latency chart plots the means with their intervals as error bars; " +
    "the other charts show the last run.</p>\n" +
    `<table class="confidence"><thead><tr><th>${escapeHtml(unit)}</th><th>Figure</th>` +
    "<th>Runs</th><th>Mean</th><th>CI low</th><th>CI high</th><th>Std</th><th>CV</th></tr>" +
    `</thead><tbody>${runs.levels.flatMap(rows).join("")}</tbody></table>\n`;
}
