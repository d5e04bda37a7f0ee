/**
 * The HTML report of a sweep (--report-html with --profile-models, and
 * `inferperf report`): the best point of each model, the throughput-latency
 * curve of each series, the latency components of each point and a table of
 * every point. Checkpoints keep per-point summaries only, so everything here
 * comes from them; a figure a point lacks is left out and the page says why,
 * never drawn as 0.
 */
import type { LevelResult } from "../types/results.ts";
import type { PointRecord } from "./checkpoint.ts";
import { describeLoad, describePoint, type SweepPoint } from "./config.ts";
import {
  constraintText,
  describeGoals,
  formatMetric,
  type Goals,
  judge,
  type Metric,
  NO_BEST_POINT,
  parseMetric,
  type Verdict,
} from "./goals.ts";
import type { PointFailure } from "./runner.ts";
import { chartSection, escapeHtml, htmlPage } from "../report/html_template.ts";
import { SWEEP_SCRIPT } from "./_html_script.ts";
import { type LatencyComponents, latencyComponents } from "../report/components.ts";
import { formatGeneral } from "../report/format.ts";

const CLIENT = "Client send/recv";
const NETWORK = "Network + server send/recv";
const QUEUE = "Server queue";
const COMPUTE = "Server compute";
const WAIT = "Waiting for the response (not split: no server statistics)";

/** The stacked parts of a point's average latency, in stacking order. */
export const SWEEP_COMPONENT_NAMES: readonly string[] = [CLIENT, NETWORK, QUEUE, COMPUTE, WAIT];

export interface SweepHtmlContext {
  /** inferperf's version. */
  version: string;
  goals: Goals;
  /** The sweep's --percentile. */
  percentile?: number;
  /** Where the points come from (the checkpoint). */
  source?: string;
  /** Points that could not be measured. */
  failures?: readonly PointFailure[];
  /** Why the sweep is incomplete, or what the page is about. */
  note?: string;
  /** The page's title; default "inferperf sweep report". */
  title?: string;
}

/** What the page's script draws; exported for tests. */
export interface SweepHtmlData {
  /** The latency the curve plots: "p99 latency". */
  latencyLabel: string;
  /** Points that differ only in load, each sorted by load; points without the latency are left out. */
  series: Array<{
    label: string;
    points: Array<{
      /** Concurrency or request rate. */
      value: number;
      /** The load value as shown next to the point. */
      label: string;
      /** "concurrency 2" */
      load: string;
      throughput: number;
      latencyMs: number;
      best: boolean;
      /** Stable, no failed requests, within the constraints. */
      candidate: boolean;
      /** "best", "candidate" or why the point is not one. */
      status: string;
    }>;
  }>;
  /** Constraints on the curve's axes, as dashed lines. */
  limits: Array<{ axis: "throughput" | "latency"; value: number; label: string }>;
  componentNames: readonly string[];
  /** The components some point has, for the legend. */
  componentsShown: string[];
  /** One stacked bar per point, in the table's order. */
  rows: Array<{ label: string; best: boolean; segments: Array<{ name: string; ms: number }> }>;
}

const ms = (us: number) => us / 1000;
/** Milliseconds to the microsecond, as the table shows them. */
const msText = (us: number) => formatGeneral(Number(ms(us).toFixed(3)));

const MODE_NAMES: Record<SweepPoint["mode"], string> = {
  concurrency: "concurrency",
  request_rate: "request rate",
  custom_intervals: "custom intervals",
};

type Dimension = [name: string, text: (p: SweepPoint) => string];

const DIMENSIONS: Dimension[] = [
  ["model", (p) => p.model],
  ["batch size", (p) => `batch size ${p.batchSize}`],
  ["protocol", (p) => p.protocol],
  ["input data", (p) => `input data ${p.inputData}`],
];

/** Splits the dimensions into those the points share (shown once) and those that vary. */
function dimensions(points: readonly SweepPoint[]): { shared: string[]; varying: Dimension[] } {
  const shared: string[] = [];
  const varying: Dimension[] = [];
  for (const dimension of DIMENSIONS) {
    const values = new Set(points.map(dimension[1]));
    // The model names every series, so it is never folded into the shared line.
    if (values.size === 1 && dimension[0] !== "model") shared.push([...values][0]!);
    else varying.push(dimension);
  }
  return { shared, varying };
}

/**
 * The latency the curve plots: the first latency among the objective, the
 * constraints and --percentile that some point has; else the average.
 */
function curveMetric(
  records: readonly PointRecord[],
  goals: Goals,
  percentile: number | undefined,
): Metric {
  const average = parseMetric("avg-latency")!;
  const candidates = [
    goals.objective,
    ...goals.constraints.map((c) => c.metric),
    ...(percentile === undefined ? [] : [parseMetric(`p${percentile}-latency`)]),
  ];
  return candidates.find((m) =>
    m?.unit === "msec" && records.some((r) => m.value(r.result) !== undefined)
  ) ?? average;
}

function statusOf(verdict: Verdict): string {
  if (verdict.best) return "best";
  return verdict.reasons.length > 0 ? verdict.reasons.join("; ") : "candidate";
}

/** Server compute as the chart stacks it: input, infer, output and cache lookups. */
const computeUs = (c: LatencyComponents) =>
  c.serverComputeInputUs + c.serverComputeInferUs + c.serverComputeOutputUs +
  c.serverCacheHitUs + c.serverCacheMissUs;

function segments(result: LevelResult): Array<{ name: string; ms: number }> {
  const c = latencyComponents(result);
  const client = { name: CLIENT, ms: ms(c.clientSendUs + c.clientRecvUs) };
  // Without server statistics the wait can not be split: one segment, named so.
  if (!result.server?.[0]) return [client, { name: WAIT, ms: ms(c.networkUs) }];
  return [
    client,
    { name: NETWORK, ms: ms(c.networkUs) },
    { name: QUEUE, ms: ms(c.serverQueueUs) },
    { name: COMPUTE, ms: ms(computeUs(c)) },
  ];
}

interface Analysis {
  data: SweepHtmlData;
  verdicts: Verdict[];
  metric: Metric;
  shared: string[];
  /** Points the curve leaves out: the metric was not measured. */
  unplotted: number;
}

function analyse(records: readonly PointRecord[], context: SweepHtmlContext): Analysis {
  const { goals } = context;
  const verdicts = judge(records, {
    goals,
    result: (r) => r.result,
    group: (r) => r.point.model,
  });
  const metric = curveMetric(records, goals, context.percentile);
  const { shared, varying } = dimensions(records.map((r) => r.point));
  // With one load mode the series label need not repeat it.
  const modes = new Set(records.map((r) => r.point.mode));
  const seriesLabel = (p: SweepPoint) =>
    [...varying.map(([, text]) => text(p)), ...(modes.size > 1 ? [MODE_NAMES[p.mode]] : [])]
      .join(" · ");
  const bySeries = new Map<string, SweepHtmlData["series"][number]>();
  let unplotted = 0;
  records.forEach(({ point, result }, i) => {
    const latencyMs = metric.value(result);
    if (latencyMs === undefined) {
      unplotted++;
      return;
    }
    const key = JSON.stringify([point.model, point.batchSize, point.protocol, point.inputData]) +
      point.mode;
    let series = bySeries.get(key);
    if (!series) {
      series = { label: seriesLabel(point), points: [] };
      bySeries.set(key, series);
    }
    series.points.push({
      value: point.value,
      label: formatGeneral(point.value),
      load: describeLoad(point),
      throughput: result.client.throughput,
      latencyMs,
      best: verdicts[i]!.best,
      candidate: verdicts[i]!.reasons.length === 0,
      status: statusOf(verdicts[i]!),
    });
  });
  for (const series of bySeries.values()) series.points.sort((a, b) => a.value - b.value);
  const limits = goals.constraints.flatMap((c): SweepHtmlData["limits"] => {
    if (c.metric.name === "throughput") {
      return [{ axis: "throughput", value: c.limit, label: constraintText(c) }];
    }
    return c.metric.name === metric.name
      ? [{ axis: "latency", value: c.limit, label: constraintText(c) }]
      : [];
  });
  const rows = records.map(({ point, result }, i) => ({
    label: [seriesLabel(point), describeLoad(point)].join(" · "),
    best: verdicts[i]!.best,
    segments: segments(result),
  }));
  const shown = new Set(rows.flatMap((r) => r.segments.map((s) => s.name)));
  return {
    data: {
      latencyLabel: metric.label,
      series: [...bySeries.values()],
      limits,
      componentNames: SWEEP_COMPONENT_NAMES,
      componentsShown: SWEEP_COMPONENT_NAMES.filter((n) => shown.has(n)),
      rows,
    },
    verdicts,
    metric,
    shared,
    unplotted,
  };
}

/** Exported for tests: the data the page's script draws. */
export function sweepHtmlData(
  records: readonly PointRecord[],
  context: SweepHtmlContext,
): SweepHtmlData {
  return analyse(records, context).data;
}

function bestList(records: readonly PointRecord[], a: Analysis, context: SweepHtmlContext): string {
  const { goals, failures = [] } = context;
  const models = [...new Set([...records, ...failures].map((r) => r.point.model))];
  const items = models.map((model) => {
    const i = records.findIndex((r, j) => r.point.model === model && a.verdicts[j]!.best);
    if (i < 0) return `<li>${escapeHtml(model)}: ${NO_BEST_POINT}</li>`;
    const { point, result } = records[i]!;
    return `<li><strong>${escapeHtml(describePoint(point))}</strong>: ${goals.objective.label} ` +
      `${formatMetric(goals.objective, goals.objective.value(result)!)}</li>`;
  });
  return `<h2>Best point per model</h2>\n<p class="caption">${
    escapeHtml(describeGoals(goals))
  }</p>\n<ul>${items.join("")}</ul>\n`;
}

function pointTable(records: readonly PointRecord[], a: Analysis): string {
  const percentiles = [
    ...new Set(records.flatMap((r) => [...r.result.client.percentilesUs.keys()])),
  ]
    .sort((x, y) => x - y);
  const missing = (why: string) => `<td class="missing" title="${why}">–</td>`;
  const num = (text: string) => `<td>${text}</td>`;
  const text = (value: string) => `<td class="text">${escapeHtml(value)}</td>`;
  const head = [
    ...["Model", "Batch", "Protocol", "Input data", "Load"].map((h) =>
      `<th class="text">${h}</th>`
    ),
    "<th>Throughput (infer/sec)</th>",
    "<th>Avg latency</th>",
    ...percentiles.map((p) => `<th>p${p} latency</th>`),
    "<th>Client send/recv</th>",
    "<th>Server queue</th>",
    "<th>Server compute</th>",
    "<th>Failed requests</th>",
    '<th class="text">Status</th>',
  ];
  const rows = records.map(({ point, result }, i) => {
    const c = result.client;
    const parts = latencyComponents(result);
    const server = result.server?.[0] !== undefined;
    const noServer = missing("no server statistics");
    const cells = [
      text(point.model),
      num(String(point.batchSize)),
      text(point.protocol),
      text(point.inputData),
      text(describeLoad(point)),
      num(formatGeneral(c.throughput)),
      num(msText(c.avgLatencyUs)),
      ...percentiles.map((p) => {
        const us = c.percentilesUs.get(p);
        return us === undefined ? missing("not measured") : num(msText(us));
      }),
      num(msText(c.avgSendUs + c.avgRecvUs)),
      server ? num(msText(parts.serverQueueUs)) : noServer,
      server ? num(msText(computeUs(parts))) : noServer,
      num(String(c.errorCount)),
      text(statusOf(a.verdicts[i]!)),
    ];
    return `<tr${a.verdicts[i]!.best ? ' class="best"' : ""}>${cells.join("")}</tr>`;
  });
  return `<h2>Points</h2>\n<p class="caption">Every measured point, latencies in ms; ` +
    `the best point of each model is highlighted. – marks a figure the point does not have.</p>\n` +
    `<div class="scroll"><table><thead><tr>${head.join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table></div>\n`;
}

function failureList(failures: readonly PointFailure[]): string {
  if (failures.length === 0) return "";
  const items = failures.map((f) =>
    `<li>${escapeHtml(describePoint(f.point))}: ${escapeHtml(f.message)}</li>`
  );
  return `<h2>Failed points</h2>\n<p class="caption">Not saved; measured again on the next run.</p>\n` +
    `<ul>${items.join("")}</ul>\n`;
}

/** The curve of non-empty `records`: the average latency, at least, every point has. */
function curveSection(a: Analysis, goals: Goals): string {
  const { data, metric } = a;
  const drawn = new Set(data.limits.map((l) => l.label));
  const offAxis = goals.constraints.map(constraintText).filter((t) => !drawn.has(t));
  const notes = [
    ...(a.unplotted > 0
      ? [
        `${a.unplotted} ${
          a.unplotted === 1 ? "point is" : "points are"
        } left out: the ${metric.label} was not measured.`,
      ]
      : []),
    ...(offAxis.length > 0
      ? [`Constraints on other metrics (${offAxis.join(", ")}) are judged in the table.`]
      : []),
  ];
  return chartSection(
    "curve",
    `Throughput vs ${escapeHtml(metric.label)}`,
    "One line per series (points that differ only in load), each point labelled with its load. " +
      "Filled: a candidate (stable, no failed requests, within the constraints); hollow: not; " +
      `ringed: the best point of its model. Dashed: the constraints.${
        notes.map((n) => ` ${escapeHtml(n)}`).join("")
      }`,
  );
}

function componentsSection(records: readonly PointRecord[]): string {
  const without = records.filter((r) => !r.result.server?.[0]).length;
  const note = without === 0
    ? ""
    : without === records.length
    ? " The server reported no statistics, so the wait for the response is not split into network, queue and compute."
    : ` ${without} of the ${records.length} points ${
      without === 1 ? "has" : "have"
    } no server statistics: the wait for the response is then one segment, not split into network, queue and compute.`;
  return chartSection(
    "components",
    "Latency components",
    `Where each point's average latency goes (the CSV's columns).${escapeHtml(note)}`,
  );
}

/** The complete HTML document of a sweep. */
export function renderSweepHtmlReport(
  records: readonly PointRecord[],
  context: SweepHtmlContext,
): string {
  const a = analyse(records, context);
  const shared = a.shared.length > 0 ? ` · every point: ${a.shared.join(", ")}` : "";
  const meta = `inferperf ${context.version} · ${records.length} points${shared}${
    context.source ? ` · from ${context.source}` : ""
  }`;
  const charts = records.length === 0
    ? '<p class="note">No point was measured: nothing to chart.</p>\n'
    : curveSection(a, context.goals) + componentsSection(records);
  return htmlPage(
    context.title ?? "inferperf sweep report",
    [
      `<div class="meta">${escapeHtml(meta)}</div>\n`,
      context.note ? `<p class="note">${escapeHtml(context.note)}</p>\n` : "",
      bestList(records, a, context),
      charts,
      records.length === 0 ? "" : pointTable(records, a),
      failureList(context.failures ?? []),
    ].join(""),
    { data: a.data, script: SWEEP_SCRIPT },
  );
}
