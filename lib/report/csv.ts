/**
 * The -f CSV report in perf_analyzer's layout: rows sorted by ascending
 * throughput, times in whole microseconds.
 */
import type {
  GpuMetrics,
  LevelResult,
  LlmSummary,
  LoadMode,
  OpenLoopSummary,
  ServerSummary,
} from "../types/results.ts";
import { withReported } from "../measure/stats.ts";
import { errorCauses } from "../measure/error_causes.ts";
import { accountedUs, latencyComponents } from "./components.ts";
import { formatGeneral, wholeUs } from "./format.ts";
import { LLM_STATISTICS, llmSystemMetrics, metricTitle, tokenCountSources } from "./llm_table.ts";
import { LLM_METRICS, statistic } from "../measure/metrics.ts";

export interface CsvOptions {
  mode: LoadMode;
  /** --verbose-csv: adds Avg latency (without --percentile), request/response, response wait. */
  verbose?: boolean;
  /** --percentile: its latency column joins p50..p99; the Avg latency column is left out. */
  percentile?: number;
  /** Decoupled model: adds Response Throughput. */
  decoupled?: boolean;
  /** The response cache is enabled: adds Server Cache Hit and Server Cache Miss. */
  cache?: boolean;
  /**
   * The server columns (Network+Server Send/Recv to Server Compute Output,
   * and the cache's): perf_analyzer writes them for Triton (and its C API)
   * when the server has the statistics extension, never for other kinds.
   * Default true.
   */
  serverStats?: boolean;
  /**
   * --collect-metrics: GPU metrics per level, keyed by LevelResult.value.
   * Written with --verbose-csv only, as perf_analyzer does; a level without an
   * entry gets empty cells.
   */
  metrics?: ReadonlyMap<number, GpuMetrics>;
}

/** The columns from the client send to the server's compute, in every CSV perf_analyzer writes. */
const SEND_TO_COMPUTE_COLUMNS = [
  "Client Send",
  "Network+Server Send/Recv",
  "Server Queue",
  "Server Compute Input",
  "Server Compute Infer",
  "Server Compute Output",
];

/** Quotes a cell when RFC 4180 requires it (comma, quote, CR or LF). */
export function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const row = (cells: readonly (string | number)[]) => `${cells.map(csvCell).join(",")}\n`;

/** Rows as CSV text: cells quoted as RFC 4180 needs, each row ended by a newline. */
export function csvText(rows: readonly (readonly (string | number)[])[]): string {
  return rows.map((r) => r.map(csvCell).join(",")).join("\n") + "\n";
}

const byThroughput = (results: readonly LevelResult[]) =>
  [...results].sort((a, b) => a.client.throughput - b.client.throughput);

const levelHeader = (mode: LoadMode) => mode === "concurrency" ? "Concurrency" : "Request Rate";

const levelCell = (r: LevelResult) =>
  r.mode === "concurrency" ? String(r.value) : formatGeneral(r.value);

function percentileColumns(percentile: number | undefined): number[] {
  return withReported(percentile === undefined ? [] : [percentile]);
}

function serverCells(s: ServerSummary | undefined, cache: boolean): number[] {
  const cells = s
    ? [s.queueUs, s.computeInputUs, s.computeInferUs, s.computeOutputUs].map(wholeUs)
    : [0, 0, 0, 0];
  if (cache) cells.push(s ? wholeUs(s.cacheHitUs) : 0, s ? wholeUs(s.cacheMissUs) : 0);
  return cells;
}

/** `uuid:value;uuid:value;` as perf_analyzer writes a metric cell. */
function metricCell(map: Map<string, number>, value: (v: number) => string): string {
  return [...map.keys()].sort().map((uuid) => `${uuid}:${value(map.get(uuid)!)};`).join("");
}

function metricCells(m: GpuMetrics | undefined): string[] {
  if (!m) return ["", "", "", ""];
  const bytes = (v: number) => String(Math.trunc(v));
  return [
    metricCell(m.utilization, formatGeneral),
    metricCell(m.powerWatts, formatGeneral),
    metricCell(m.memoryUsedBytes, bytes),
    metricCell(m.memoryTotalBytes, bytes),
  ];
}

/** Beyond perf_analyzer, in open-loop modes: corrected latency and send punctuality. */
function openLoopColumns(percentiles: readonly number[]): string[] {
  return [
    "Corrected Avg latency",
    ...percentiles.map((p) => `Corrected p${p} latency`),
    "Send Rate",
    "Send Lag p50",
    "Send Lag p99",
    "Send Lag Max",
    "Blocked Sends",
    "Trustworthy",
  ];
}

function openLoopCells(
  o: OpenLoopSummary | undefined,
  percentiles: readonly number[],
): (string | number)[] {
  if (!o) return openLoopColumns(percentiles).map(() => "");
  return [
    wholeUs(o.correctedAvgUs),
    ...percentiles.map((p) => wholeUs(o.correctedPercentilesUs.get(p) ?? 0)),
    formatGeneral(o.sendRate),
    wholeUs(o.sendLagP50Us),
    wholeUs(o.sendLagP99Us),
    wholeUs(o.sendLagMaxUs),
    o.blockedCount,
    o.behindSchedule ? "no" : "yes",
  ];
}

/** genai-perf's number format: two decimals, thousands separated. */
const genaiNumber = (value: number) =>
  value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** genai-perf's statistics columns, then (beyond it) the standard deviation. */
const LLM_CSV_STATISTICS = [...LLM_STATISTICS, "p10", "p5", "p1", "std"];

/**
 * Token-streaming (LLM) runs: genai-perf's CSV per level, a metric per row
 * with its statistics as columns, a blank line, then the rates. Several
 * levels follow each other, each block after a line naming its level.
 */
export function formatLlmCsv(results: readonly LevelResult[], mode: LoadMode): string {
  let text = "";
  for (const r of results) {
    const l = r.llm!;
    if (results.length > 1) {
      text += `${text === "" ? "" : "\n"}${row([levelHeader(mode), levelCell(r)])}`;
    }
    text += llmBlock(l);
    const sources = tokenCountSources(l);
    text += row(["Output Token Counts", sources.output]);
    text += row(["Input Token Counts", sources.input]);
    text += row(["Failed Request Count (count)", genaiNumber(r.client.errorCount)]);
    for (const { cause, count } of errorCauses(r.client.errors)) {
      text += row([`Failed Requests: ${cause} (count)`, genaiNumber(count)]);
    }
    if (r.client.cancelledCount) {
      text += row(["Cancelled Request Count (count)", genaiNumber(r.client.cancelledCount)]);
    }
    for (const slice of l.slices ?? []) {
      text += "\n" +
        row(["Time Slice (s)", `${genaiNumber(slice.startS)}-${genaiNumber(slice.endS)}`]);
      text += llmBlock(slice.llm);
    }
    for (const turn of l.turns ?? []) {
      text += "\n" + row(["Turn Index", String(turn.turnIndex)]);
      text += llmBlock(turn.llm);
    }
    for (const { model, llm } of l.models ?? []) {
      text += "\n" + row(["Model", model]);
      text += llmBlock(llm);
    }
  }
  return text;
}

/** genai-perf's rows of one summary: a metric per row with its statistics, a blank line, the rates. */
function llmBlock(l: LlmSummary): string {
  let text = row(["Metric", ...LLM_CSV_STATISTICS]);
  for (const metric of LLM_METRICS) {
    const d = metric.of(l);
    if (!d) continue;
    const cells = LLM_CSV_STATISTICS.map((name) => {
      const value = statistic(d, name);
      return value === undefined ? "N/A" : genaiNumber(value);
    });
    text += row([metricTitle(metric.name, metric.unit), ...cells]);
  }
  text += "\n" + row(["Metric", "Value"]);
  for (const [name, unit, value] of llmSystemMetrics(l)) {
    text += row([metricTitle(name, unit), genaiNumber(value)]);
  }
  return text;
}

/**
 * The CSV text. Columns: perf_analyzer's, then (beyond it) `Errors`, the
 * failed request count, in open-loop modes the corrected latencies and
 * send figures, for every service kind (LLM runs' genai-perf layout is
 * formatLlmCsv, --llm-csv).
 * Without server statistics the server columns are 0
 * and Network+Server Send/Recv holds the whole response wait.
 */
export function formatCsv(results: readonly LevelResult[], options: CsvOptions): string {
  const percentiles = percentileColumns(options.percentile);
  const serverStats = options.serverStats ?? true;
  const cache = serverStats && (options.cache ?? false);
  const verbose = options.verbose ?? false;
  // --sweep-size: levels of several modes, each named by its strategy.
  const named = results.some((r) => r.strategy !== undefined);
  const header = [named ? "Strategy" : levelHeader(options.mode), "Inferences/Second"];
  if (options.decoupled) header.push("Response Throughput");
  header.push(...(serverStats ? SEND_TO_COMPUTE_COLUMNS : SEND_TO_COMPUTE_COLUMNS.slice(0, 1)));
  if (cache) header.push("Server Cache Hit", "Server Cache Miss");
  header.push("Client Recv", ...percentiles.map((p) => `p${p} latency`));
  if (verbose) {
    if (options.percentile === undefined) header.push("Avg latency");
    header.push("request/response", "response wait");
    if (options.metrics) {
      header.push(
        "Avg GPU Utilization",
        "Avg GPU Power Usage",
        "Max GPU Memory Usage",
        "Total GPU Memory",
      );
    }
  }
  header.push("Errors");
  const openLoop = results.some((r) => r.openLoop !== undefined);
  if (openLoop) header.push(...openLoopColumns(percentiles));

  let text = row(header);
  for (const r of byThroughput(results)) {
    const c = r.client;
    const server = r.server?.[0];
    const cells: (string | number)[] = [
      named ? csvCell(r.strategy ?? "") : levelCell(r),
      formatGeneral(c.throughput),
    ];
    if (options.decoupled) cells.push(formatGeneral(c.responseThroughput));
    const networkUs = latencyComponents(r).networkUs;
    cells.push(wholeUs(c.avgSendUs));
    if (serverStats) cells.push(wholeUs(networkUs), ...serverCells(server, cache));
    cells.push(
      wholeUs(c.avgRecvUs),
      ...percentiles.map((p) => wholeUs(c.percentilesUs.get(p) ?? 0)),
    );
    if (verbose) {
      const send = wholeUs(c.avgSendUs);
      const recv = wholeUs(c.avgRecvUs);
      if (options.percentile === undefined) cells.push(wholeUs(c.avgLatencyUs));
      cells.push(send + recv, wholeUs(c.avgSendUs + c.avgWaitUs + c.avgRecvUs) - send - recv);
      if (options.metrics) cells.push(...metricCells(options.metrics.get(r.value)));
    }
    cells.push(c.errorCount);
    if (openLoop) cells.push(...openLoopCells(r.openLoop, percentiles));
    text += row(cells);
  }
  return text;
}

/**
 * perf_analyzer's per-composing-model CSV for ensembles (it writes it to
 * `<model>_v<version>.<csv file name>`). Throughput is the level's scaled by
 * the model's share of the ensemble's successful requests; the
 * Network+Server Send/Recv column holds the model's server overhead. Levels
 * without statistics for the model are left out.
 */
export function formatComposingCsv(
  results: readonly LevelResult[],
  options: { mode: LoadMode; model: string; version: string; cache?: boolean },
): string {
  const cache = options.cache ?? false;
  const header = [
    levelHeader(options.mode),
    "Inferences/Second",
    ...SEND_TO_COMPUTE_COLUMNS,
  ];
  if (cache) header.push("Server Cache Hit", "Server Cache Miss");
  header.push("Client Recv");
  let text = row(header);
  for (const r of byThroughput(results)) {
    const [top, ...composing] = r.server ?? [];
    const s = composing.find((m) => m.model === options.model && m.version === options.version);
    if (!top || !s) continue;
    const share = top.successCount > 0 ? s.successCount / top.successCount : 0;
    const overheadUs = Math.max(0, s.avgRequestUs - accountedUs(s));
    text += row([
      levelCell(r),
      formatGeneral(share * r.client.throughput),
      0,
      wholeUs(overheadUs),
      ...serverCells(s, cache),
      0,
    ]);
  }
  return text;
}
