/**
 * `inferperf compare --html FILE`: one self-contained page with the two
 * runs' throughput-vs-latency curves overlaid (average and p99 latency; the
 * runs' confidence intervals as error bars when a file holds several runs)
 * and the comparison table.
 */
import type { Comparison } from "./compare.ts";
import { type JsonObject, valueAt } from "./figures.ts";
import { formatGeneral } from "./format.ts";
import { CHART_HELPERS, chartSection, escapeHtml, htmlPage } from "./html_template.ts";

interface CurvePoint {
  value: number;
  throughput: number[];
  avgMs: number[];
  p99Ms?: number[];
}

/** [mean, low, high] over the runs of a figure, else [the level's value]. */
function figure(
  doc: JsonObject,
  level: JsonObject,
  key: string,
  scale: number,
): number[] | undefined {
  const runs = (doc.profile_runs as JsonObject | undefined)?.levels as JsonObject[] | undefined;
  const match = runs?.find((l) => l.mode === level.mode && l.value === level.value);
  const f = (match?.figures as JsonObject | undefined)?.[key] as JsonObject | undefined;
  if (f && (f.n as number) >= 2) {
    return [f.mean, f.ci_low, f.ci_high].map((v) => (v as number) * scale);
  }
  const v = valueAt(level, key);
  return v === undefined ? undefined : [v * scale];
}

function curve(doc: JsonObject): CurvePoint[] {
  const levels = (Array.isArray(doc.levels) ? doc.levels : []) as JsonObject[];
  return levels.flatMap((l) => {
    const throughput = figure(doc, l, "client.throughput", 1);
    const avgMs = figure(doc, l, "client.avg_latency_us", 1e-3);
    if (!throughput || !avgMs) return [];
    const p99Ms = figure(doc, l, "client.percentiles_us.99", 1e-3);
    return [{ value: l.value as number, throughput, avgMs, ...(p99Ms ? { p99Ms } : {}) }];
  }).sort((a, b) => a.value - b.value);
}

const SCRIPT = String.raw`
(function () {
  "use strict";
${CHART_HELPERS}
  function overlay(name, pick, yTitle) {
    var series = data.series.filter(function (s) { return s.points.some(pick); });
    var all = [];
    series.forEach(function (s) { s.points.forEach(function (p) { if (pick(p)) all.push(p); }); });
    var hi = function (a) { return a[a.length - 1]; };
    var f = frame(name, { title: yTitle, x: [0, max(all.map(function (p) { return hi(p.throughput); })) * 1.05],
      y: [0, max(all.map(function (p) { return hi(pick(p)); })) * 1.1],
      xTitle: "Throughput (infer/sec)", yTitle: yTitle + " (ms)" });
    series.forEach(function (s, i) {
      var pts = s.points.filter(pick);
      line(f.svg, pts.map(function (p) { return [f.x(p.throughput[0]), f.y(pick(p)[0])]; }), color(i), i > 0);
      pts.forEach(function (p) {
        var y = pick(p), x = p.throughput, cx = f.x(x[0]), cy = f.y(y[0]);
        if (x.length === 3) el("line", { x1: f.x(x[1]), x2: f.x(x[2]), y1: cy, y2: cy, stroke: color(i), "data-error-bar": "" }, f.svg);
        if (y.length === 3) el("line", { x1: cx, x2: cx, y1: f.y(y[1]), y2: f.y(y[2]), stroke: color(i), "data-error-bar": "" }, f.svg);
        point(f.svg, { cx: cx, cy: cy, r: 5, fill: color(i), "data-series": s.name, "data-level": p.value },
          s.name + ", " + data.unit + " " + p.value + ": " + fmt(x[0]) + " infer/sec, " + fmt(y[0]) + " ms");
        el("text", { x: cx + 7, y: cy - 7 }, f.svg, String(p.value));
      });
    });
    legend(name, series.map(function (s, i) { return { label: s.name, color: color(i) }; }));
  }
  render(function () {
    overlay("compare-avg", function (p) { return p.avgMs; }, "Average latency");
    overlay("compare-tail", function (p) { return p.p99Ms; }, "p99 latency");
  });
})();
`;

function table(c: Comparison): string {
  const cell = (text: string, cls = "") =>
    `<td${cls ? ` class="${cls}"` : ""}>${escapeHtml(text)}</td>`;
  const rows = c.levels.flatMap((l) =>
    l.figures.map((f) => {
      const show = (v: number) => formatGeneral(Number((v * f.scale).toPrecision(4)));
      return `<tr data-verdict="${f.verdict === "~" ? "same" : f.verdict}">` +
        cell(l.name, "text") + cell(`${f.label} (${f.unit})`, "text") +
        cell(show(f.baseline)) + cell(show(f.candidate)) +
        cell(Number.isNaN(f.ratio) ? "" : f.ratio.toFixed(3)) +
        cell(f.difference ? `${show(f.difference.ciLow)} .. ${show(f.difference.ciHigh)}` : "") +
        cell(f.difference ? formatGeneral(Number(f.difference.p.toPrecision(2))) : "") +
        cell(f.source === "none" ? "no test" : `${f.samples[0]} + ${f.samples[1]} ${f.source}`) +
        cell(
          f.source === "none" ? "" : f.verdict === "~" ? "no significant difference" : f.verdict,
        ) +
        "</tr>";
    })
  );
  return `<h2>Figures</h2>\n<div class="scroll"><table><thead><tr><th>Level</th>` +
    `<th class="text">Figure</th><th>Baseline</th><th>Candidate</th><th>Ratio</th>` +
    `<th>Difference (${formatGeneral(c.confidenceLevel * 100)} % CI)</th><th>p</th>` +
    `<th>Samples</th><th>Verdict</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>\n`;
}

/** The complete page. */
export function renderCompareHtml(
  docs: { baseline: JsonObject; candidate: JsonObject },
  options: { comparison: Comparison; names: { baseline: string; candidate: string } },
): string {
  const mode = ((docs.baseline.levels as JsonObject[] | undefined)?.[0]?.mode) ?? "concurrency";
  const data = {
    unit: mode === "concurrency" ? "concurrency" : "request rate",
    series: [
      { name: `baseline: ${options.names.baseline}`, points: curve(docs.baseline) },
      { name: `candidate: ${options.names.candidate}`, points: curve(docs.candidate) },
    ],
  };
  return htmlPage(
    "inferperf compare",
    [
      `<div class="meta">Baseline ${escapeHtml(options.names.baseline)} · candidate ` +
      `${escapeHtml(options.names.candidate)}</div>\n`,
      chartSection(
        "compare-avg",
        "Throughput vs average latency",
        "One point per load level; the candidate dashed. Error bars: the runs' confidence intervals.",
      ),
      chartSection("compare-tail", "Throughput vs p99 latency", "The same levels at their p99."),
      table(options.comparison),
    ].join(""),
    { data, script: SCRIPT },
  );
}
