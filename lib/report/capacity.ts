/**
 * The capacity search's answer (--search-recipe) in every output: the
 * console block, the summary JSON's `capacity` object, the CSV's lines and
 * the HTML report's curves (one per SLO, its bound drawn and the answer
 * marked; plain inline SVG, so the page stays self-contained).
 */
import { evaluateSlos, type Slo } from "../measure/slo.ts";
import type { CapacityLevel, CapacityReport, LevelResult } from "../types/results.ts";
import { csvText } from "./csv.ts";
import { formatGeneral } from "./format.ts";
import { escapeHtml } from "./html_template.ts";

const levelName = (report: CapacityReport, value: number) =>
  `${report.mode === "concurrency" ? "concurrency" : "request rate"} ${formatGeneral(value)}`;

/** "concurrency 6", or "none" (why: `stopped`). */
export function capacityAnswer(report: CapacityReport): string {
  return report.value === undefined
    ? "none: no level meets every SLO"
    : levelName(report, report.value);
}

/** The console block after the levels' summary. */
export function formatCapacity(report: CapacityReport): string {
  const level = (title: string, l: CapacityLevel | undefined) =>
    l ? [`  ${title}: ${levelName(report, l.value)} (${l.verdicts.join("; ")})`] : [];
  return [
    `Capacity search (${report.recipe}): ${capacityAnswer(report)}`,
    `  SLOs: ${report.slo}`,
    ...level("Last passing", report.passing),
    ...level("First failing", report.failing),
    `  Points measured: ${report.points}`,
    `  Stopped: ${report.stopped}`,
    ...report.notes.map((n) => `  Note: ${n}`),
  ].join("\n") + "\n";
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function levelJson(l: CapacityLevel | undefined): Json {
  return l ? { value: l.value, level_index: l.index, verdicts: l.verdicts } : null;
}

/** The summary JSON's top-level `capacity` object (docs/summary.schema.json). */
export function capacityJson(report: CapacityReport): Json {
  return {
    recipe: report.recipe,
    mode: report.mode,
    value: report.value ?? null,
    slo: report.slo,
    passing: levelJson(report.passing),
    failing: levelJson(report.failing),
    points: report.points,
    stopped: report.stopped,
    notes: report.notes,
  };
}

/** Lines after the CSV's table: a blank line, then one row per figure of the answer. */
export function capacityCsv(report: CapacityReport): string {
  const rows: Array<[string, string | number]> = [
    ["Capacity recipe", report.recipe],
    ["Capacity", report.value ?? "none"],
    ["SLOs", report.slo],
    ["Last passing", report.passing?.value ?? "none"],
    ["First failing", report.failing?.value ?? "none"],
    ["Points measured", report.points],
    ["Stopped", report.stopped],
  ];
  return "\n" + csvText(rows);
}

const WIDTH = 640;
const HEIGHT = 260;
const PAD = { left: 56, right: 16, top: 16, bottom: 36 };

/** One SLO's curve: its figure at every measured level, the bound, the answer. */
function sloChart(
  slo: Slo,
  options: { report: CapacityReport; results: readonly LevelResult[]; attainment: number },
): string {
  const { report, results } = options;
  const points = results.flatMap((r) => {
    const verdict = evaluateSlos(r, [slo], { attainment: options.attainment })[0];
    return verdict.value === undefined ? [] : [{ x: r.value, y: verdict.value, met: verdict.met }];
  });
  if (points.length === 0) return "";
  const bound = slo.perRequest ? options.attainment : slo.limit;
  const xs = points.map((p) => p.x);
  const ys = [...points.map((p) => p.y), bound];
  const xMax = Math.max(...xs) * 1.05;
  const yMax = Math.max(...ys) * 1.1 || 1;
  const sx = (x: number) => PAD.left + (x / xMax) * (WIDTH - PAD.left - PAD.right);
  const sy = (y: number) => HEIGHT - PAD.bottom - (y / yMax) * (HEIGHT - PAD.top - PAD.bottom);
  const sorted = [...points].sort((a, b) => a.x - b.x);
  const path = sorted.map((p, i) =>
    `${i === 0 ? "M" : "L"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`
  )
    .join(" ");
  const ticks = [...new Set(xs)].map((x) =>
    `<text x="${sx(x).toFixed(1)}" y="${HEIGHT - PAD.bottom + 14}" text-anchor="middle">${
      escapeHtml(formatGeneral(x))
    }</text>`
  ).join("");
  const marks = points.map((p) =>
    `<circle data-point="${p.met ? "met" : "broken"}" cx="${sx(p.x).toFixed(1)}" ` +
    `cy="${sy(p.y).toFixed(1)}" r="4" fill="${p.met ? "#2e7d32" : "#c62828"}"/>`
  ).join("");
  const answer = report.value === undefined
    ? ""
    : `<line data-answer="${report.value}" x1="${sx(report.value).toFixed(1)}" x2="${
      sx(report.value).toFixed(1)
    }" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}" ` +
      `stroke="#1565c0" stroke-width="2"/><text x="${(sx(report.value) + 4).toFixed(1)}" y="${
        PAD.top + 12
      }">answer ${escapeHtml(formatGeneral(report.value))}</text>`;
  const name = slo.perRequest ? "share of requests within the per-request SLOs" : slo.text;
  const unit = report.mode === "concurrency" ? "concurrency" : "request rate";
  return `<h3>${
    escapeHtml(name)
  }</h3>\n<svg data-chart="capacity-slo" viewBox="0 0 ${WIDTH} ${HEIGHT}">` +
    `<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${HEIGHT - PAD.bottom}" ` +
    `y2="${HEIGHT - PAD.bottom}"/><line class="axis" x1="${PAD.left}" x2="${PAD.left}" ` +
    `y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}"/>` +
    `<text x="${WIDTH / 2}" y="${HEIGHT - 8}">${unit}</text>` +
    `<text x="4" y="${PAD.top + 4}">${
      escapeHtml(formatGeneral(Number(yMax.toPrecision(3))))
    }</text>` +
    `<line data-slo="${escapeHtml(slo.text)}" x1="${PAD.left}" x2="${WIDTH - PAD.right}" ` +
    `y1="${sy(bound).toFixed(1)}" y2="${sy(bound).toFixed(1)}" stroke="#e0a800" ` +
    `stroke-dasharray="6 4" stroke-width="2"/><text x="${WIDTH - PAD.right - 120}" y="${
      (sy(bound) - 4).toFixed(1)
    }">SLO ${escapeHtml(formatGeneral(bound))}</text>` +
    `<path d="${path}" fill="none" stroke="#5b6b7c"/>${ticks}${marks}${answer}</svg>\n`;
}

/** The HTML report's section: the answer and a curve per SLO. */
export function capacityHtml(
  report: CapacityReport,
  options: { results: readonly LevelResult[]; slos: readonly Slo[]; attainment: number },
): string {
  const perRequest = options.slos.find((s) => s.perRequest);
  const charted = [...options.slos.filter((s) => !s.perRequest), ...perRequest ? [perRequest] : []];
  const lines = formatCapacity(report).trimEnd().split("\n").slice(1);
  return `<h2>Capacity search: ${escapeHtml(capacityAnswer(report))}</h2>\n` +
    `<p class="caption">${lines.map((l) => escapeHtml(l.trim())).join("<br>")}</p>\n` +
    charted.map((slo) => sloChart(slo, { ...options, report })).join("");
}
