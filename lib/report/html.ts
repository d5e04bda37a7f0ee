/**
 * --report-html: one self-contained HTML file (inline data, style and
 * script; no network access when opened) with the throughput-vs-latency
 * curve, the stacked latency components of each level, latency percentiles
 * per level, the per-window time series, for LLM runs every LLM metric and
 * the server's own figures, and the failed requests by cause.
 */
import { LatencyHistogram, windowFigures, windowHistogram } from "../measure/histogram.ts";
import type { LevelResult, LoadMode } from "../types/results.ts";
import { chartSection as section, escapeHtml, htmlPage, SCRIPT } from "./html_template.ts";
import { latencyComponents, reportedWindows } from "./components.ts";
import { LLM_SECTIONS, type LlmChartData, llmChartData } from "./_llm_html.ts";
import { llmSystemMetrics, metricTitle } from "./llm_table.ts";
import { LLM_METRICS, statistic } from "../measure/metrics.ts";
import { errorCauses } from "../measure/error_causes.ts";
import { formatGeneral } from "./format.ts";
import type { RunsReport } from "./confidence.ts";
import { confidenceTable, type LevelInterval, levelInterval } from "./_confidence_html.ts";

/** Percentiles of the distribution chart: log-spaced towards the tail, as HdrHistogram plots them. */
export const DISTRIBUTION_PERCENTILES: readonly number[] = [50, 75, 90, 95, 99, 99.9, 99.99];

/** The stacked parts of a level's average latency, bottom first. */
export const COMPONENT_NAMES: readonly string[] = [
  "Client send/recv",
  "Network + server send/recv",
  "Server queue",
  "Server compute",
];

export interface HtmlReportContext {
  /** inferperf's version. */
  version: string;
  model: { name: string; version: string };
  mode: LoadMode;
  batchSize: number;
  /** --percentile: the latency levels are judged and plotted by; else the average. */
  percentile?: number;
  /** Why the sweep stopped early. */
  note?: string;
  /** --num-profile-runs: the levels' intervals over the runs (`results` are the last run's). */
  runs?: RunsReport;
  /** --search-recipe: the capacity search's section (lib/report/capacity.ts), as HTML. */
  capacity?: string;
}

/** What the page's script draws; exported for tests. */
export interface HtmlReportData {
  mode: LoadMode;
  latencyLabel: string;
  componentNames: readonly string[];
  distributionPercentiles: readonly number[];
  levels: Array<{
    value: number;
    label: string;
    /** Where the level goes along the curves: its value, or (--sweep-size) its throughput. */
    order: number;
    stable: boolean;
    /** Open-loop levels: the send-lag p99 exceeded --max-send-lag. */
    behindSchedule?: boolean;
    throughput: number;
    latencyMs: number;
    componentsMs: number[];
    distributionMs: number[];
    windows: Array<{
      startS: number;
      endS: number;
      throughput: number;
      avgLatencyMs: number;
      reported: boolean;
    }>;
    /** Token-streaming levels: what the LLM charts draw. */
    llm?: LlmChartData;
    /** --num-profile-runs: [mean, low, high] of throughput and latency (the error bars). */
    ci?: LevelInterval;
  }>;
}

const ms = (us: number) => us / 1000;

export function htmlReportData(
  results: readonly LevelResult[],
  context: HtmlReportContext,
): HtmlReportData {
  const originMs = Math.min(...results.map((r) => r.windows[0]?.startMs ?? Infinity));
  return {
    mode: context.mode,
    latencyLabel: context.percentile === undefined
      ? "Average latency"
      : `p${context.percentile} latency`,
    componentNames: COMPONENT_NAMES,
    distributionPercentiles: DISTRIBUTION_PERCENTILES,
    levels: results.map((r) => {
      const c = latencyComponents(r);
      const reported = reportedWindows(r);
      const histogram = LatencyHistogram.merge(reported.map(windowHistogram));
      const llm = llmChartData(r);
      const ci = context.runs &&
        levelInterval(context.runs, {
          mode: r.mode,
          value: r.value,
          ...(context.percentile === undefined ? {} : { percentile: context.percentile }),
        });
      return {
        ...(llm ? { llm } : {}),
        ...(ci ? { ci } : {}),
        value: r.value,
        label: r.strategy ?? formatGeneral(r.value),
        // A sweep's levels of several modes run along the curve by throughput.
        order: r.strategy === undefined ? r.value : r.client.throughput,
        stable: r.stable,
        ...(r.openLoop ? { behindSchedule: r.openLoop.behindSchedule } : {}),
        throughput: r.client.throughput,
        latencyMs: ms(
          context.percentile === undefined
            ? r.client.avgLatencyUs
            : r.client.percentilesUs.get(context.percentile) ?? 0,
        ),
        componentsMs: [
          c.clientSendUs + c.clientRecvUs,
          c.networkUs,
          c.serverQueueUs,
          c.serverComputeInputUs + c.serverComputeInferUs + c.serverComputeOutputUs +
          c.serverCacheHitUs + c.serverCacheMissUs,
        ].map(ms),
        distributionMs: histogram.percentilesNs(DISTRIBUTION_PERCENTILES).map((ns) => ns / 1e6),
        windows: r.windows.map((w) => {
          const figures = windowFigures(w, { batchSize: context.batchSize, percentiles: [] });
          return {
            startS: (w.startMs - originMs) / 1000,
            endS: (w.endMs - originMs) / 1000,
            throughput: figures.throughput,
            avgLatencyMs: figures.meanNs / 1e6,
            reported: reported.includes(w),
          };
        }),
      };
    }),
  };
}

function levelTable(data: HtmlReportData, unit: string): string {
  const openLoop = data.mode !== "concurrency";
  const rows = data.levels.map((l) =>
    `<tr><td>${escapeHtml(l.label)}</td><td>${formatGeneral(l.throughput)}</td>` +
    `<td>${formatGeneral(l.latencyMs)}</td>` +
    `<td>${l.distributionMs.map((v) => formatGeneral(v)).join(" / ")}</td>` +
    `<td>${l.stable ? "yes" : "no"}</td>` +
    (openLoop ? `<td>${l.behindSchedule ? "yes" : "no"}</td>` : "") + "</tr>"
  );
  return `<table><thead><tr><th>${unit}</th><th>Throughput (infer/sec)</th>` +
    `<th>${escapeHtml(data.latencyLabel)} (ms)</th>` +
    `<th>p${DISTRIBUTION_PERCENTILES.join(" / p")} (ms)</th><th>Stable</th>` +
    (openLoop ? "<th>Behind schedule</th>" : "") + "</tr></thead>" +
    `<tbody>${rows.join("")}</tbody></table>\n`;
}

/** Open loop: the levels whose client sent late, named above the charts. */
function behindScheduleNote(data: HtmlReportData): string {
  const late = data.levels.filter((l) => l.behindSchedule).map((l) => l.label);
  if (late.length === 0) return "";
  return `<p class="note">Behind schedule at request rate ${escapeHtml(late.join(", "))}: ` +
    "the p99 send lag exceeded --max-send-lag, so latencies from the send understate the " +
    "server's (the corrected latencies in the console, CSV and JSON include the lag).</p>\n";
}

/** The statistics of the LLM metrics table. */
const TABLE_STATISTICS = ["avg", "p50", "p90", "p99", "max"];

/**
 * Every LLM metric of every level (and of each of its --slice-duration
 * slices) in one table, in the console's and CSV's names and units: a row per
 * level and metric, then the level's rates.
 */
function llmMetricsTable(results: readonly LevelResult[], unit: string): string {
  const rows: string[] = [];
  const cell = (text: string) => `<td>${escapeHtml(text)}</td>`;
  const levels = results.flatMap((r) =>
    r.llm === undefined ? [] : [
      { level: formatGeneral(r.value), l: r.llm },
      ...(r.llm.slices ?? []).map((s) => ({
        level: `${formatGeneral(r.value)}, ${formatGeneral(s.startS)}-${formatGeneral(s.endS)} s`,
        l: s.llm,
      })),
      ...(r.llm.turns ?? []).map((t) => ({
        level: `${formatGeneral(r.value)}, turn ${t.turnIndex}`,
        l: t.llm,
      })),
      ...(r.llm.models ?? []).map((m) => ({
        level: `${formatGeneral(r.value)}, model ${m.model}`,
        l: m.llm,
      })),
    ]
  );
  for (const { level, l } of levels) {
    for (const metric of LLM_METRICS) {
      const d = metric.of(l);
      if (d === undefined) continue;
      const values = TABLE_STATISTICS.map((name) => formatGeneral(statistic(d, name)!));
      rows.push(
        `<tr>${cell(level)}${cell(metricTitle(metric.name, metric.unit))}` +
          `${values.map(cell).join("")}</tr>`,
      );
    }
    for (const [name, metricUnit, value] of llmSystemMetrics(l)) {
      rows.push(
        `<tr>${cell(level)}${cell(metricTitle(name, metricUnit))}${cell(formatGeneral(value))}` +
          `${"<td></td>".repeat(TABLE_STATISTICS.length - 1)}</tr>`,
      );
    }
  }
  if (rows.length === 0) return "";
  return `<h2>LLM metrics</h2>\n<table class="llm-metrics"><thead><tr><th>${
    escapeHtml(unit)
  }</th>` +
    `<th>Metric</th>${TABLE_STATISTICS.map((s) => `<th>${s}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>\n`;
}

/** An LLM server's own figures per level (its Prometheus metrics); "" without any. */
function llmServerTable(results: readonly LevelResult[], unit: string): string {
  const gauge = (g: { avg: number; max: number } | undefined) =>
    g ? `${formatGeneral(g.avg)} / ${formatGeneral(g.max)}` : "";
  const number = (n: number | undefined) => n === undefined ? "" : formatGeneral(n);
  const rows = results.flatMap((r) => {
    const m = r.llmServer;
    if (m === undefined) return [];
    const cells = [
      formatGeneral(r.value),
      number(m.generatedTokens),
      number(r.llm?.totalOutputTokens),
      number(m.promptTokens),
      number(m.cachedPromptTokens),
      gauge(m.running),
      gauge(m.waiting),
      gauge(m.kvCacheUsage),
    ];
    return [`<tr>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`];
  });
  if (rows.length === 0) return "";
  const heads = [
    unit,
    "Generated tokens (server)",
    "Output tokens (client)",
    "Prompt tokens",
    "Cached prompt tokens",
    "Running avg / max",
    "Waiting avg / max",
    "KV cache usage avg / max",
  ];
  return `<h2>LLM server metrics</h2>\n<table class="llm-server"><thead><tr>` +
    `${heads.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>\n`;
}

/** Failed requests of every level by cause, with an example message of each; "" without any. */
function errorTable(results: readonly LevelResult[], unit: string): string {
  const rows = results.flatMap((r) =>
    errorCauses(r.client.errors).map((e) =>
      `<tr><td>${escapeHtml(formatGeneral(r.value))}</td><td>${escapeHtml(e.cause)}</td>` +
      `<td>${e.count}</td><td>${escapeHtml(e.example)}</td></tr>`
    )
  );
  if (rows.length === 0) return "";
  return `<h2>Failed requests</h2>\n<table class="errors"><thead><tr><th>${escapeHtml(unit)}</th>` +
    "<th>Cause</th><th>Requests</th><th>Example</th></tr></thead>" +
    `<tbody>${rows.join("")}</tbody></table>\n`;
}

/** --collect-metrics without an endpoint: the levels that have no metrics, and why. */
function metricsNote(results: readonly LevelResult[], unit: string): string {
  const missing = results.filter((r) => r.metricsUnavailable !== undefined);
  if (missing.length === 0) return "";
  const values = missing.map((r) => String(r.value)).join(", ");
  return `<p class="note">No server metrics at ${unit.toLowerCase()} ${escapeHtml(values)}: ` +
    `${escapeHtml(missing[0].metricsUnavailable!)}.</p>\n`;
}

/** The complete HTML document. */
export function renderHtmlReport(
  results: readonly LevelResult[],
  context: HtmlReportContext,
): string {
  const data = htmlReportData(results, context);
  const unit = context.mode === "concurrency" ? "Concurrency" : "Request rate";
  const model = `${context.model.name}${context.model.version ? ` v${context.model.version}` : ""}`;
  const title = `inferperf report: ${model}`;
  const meta = `inferperf ${escapeHtml(context.version)} · ${data.levels.length} load levels · ` +
    `batch size ${context.batchSize}`;
  return htmlPage(
    title,
    [
      `<div class="meta">${meta}</div>\n`,
      context.note ? `<p class="note">${escapeHtml(context.note)}</p>\n` : "",
      context.capacity ?? "",
      behindScheduleNote(data),
      metricsNote(results, unit),
      section(
        "throughput-latency",
        "Throughput vs latency",
        `${escapeHtml(data.latencyLabel)} against throughput, one point per load level.`,
      ),
      section(
        "components",
        "Latency components",
        "Where the average latency goes at each level (the CSV's columns).",
      ),
      section(
        "percentiles",
        "Latency percentiles",
        "Latency distribution of each level's reported windows (HdrHistogram).",
      ),
      section(
        "window-throughput",
        "Throughput per window",
        "Every measurement window; filled points are the windows a level reports.",
      ),
      section("window-latency", "Latency per window", "Average latency of every window."),
      ...(data.levels.some((l) => l.llm) ? LLM_SECTIONS.map((s) => section(...s)) : []),
      `<h2>Levels</h2>\n${levelTable(data, unit)}`,
      context.runs ? confidenceTable(context.runs, unit) : "",
      llmMetricsTable(results, unit),
      llmServerTable(results, unit),
      errorTable(results, unit),
    ].join(""),
    { data, script: SCRIPT },
  );
}
