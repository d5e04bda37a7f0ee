/**
 * Sweep reports as text: a line per point while measuring, then the best
 * point of each model and the full table; the same data as CSV. Latencies in
 * the table and CSV are whole microseconds, like perf_analyzer's reports.
 */
import { csvText } from "../report/csv.ts";
import { formatGeneral, wholeUs } from "../report/format.ts";
import type { PointRecord } from "./checkpoint.ts";
import { describeLoad, describePoint, type SweepPoint } from "./config.ts";
import {
  describeGoals,
  formatMetric,
  type Goals,
  judge,
  NO_BEST_POINT,
  type Verdict,
} from "./goals.ts";
import type { PointFailure, PointInfo } from "./runner.ts";

/** The line announcing a point: `[3/8] slow, batch size 1, ...`. */
export function formatPointStart(point: SweepPoint, info: PointInfo): string {
  return `[${info.index}${info.total === undefined ? "" : `/${info.total}`}] ${
    describePoint(point)
  }\n`;
}

/** The line after a point: its throughput and stabilizing latency. */
export function formatPointResult(record: PointRecord, options: { percentile?: number }): string {
  const c = record.result.client;
  const latency = options.percentile === undefined
    ? `avg latency ${wholeUs(c.avgLatencyUs)} usec`
    : `p${options.percentile} latency ${
      wholeUs(c.percentilesUs.get(options.percentile) ?? 0)
    } usec`;
  const notes = [
    ...(record.result.stable ? [] : ["unstable"]),
    ...(c.errorCount > 0 ? [`${c.errorCount} failed requests`] : []),
  ];
  return `    throughput ${formatGeneral(c.throughput)} infer/sec, ${latency}${
    notes.length > 0 ? ` (${notes.join(", ")})` : ""
  }\n`;
}

/** The load column: named after the mode when all points share it. */
function loadColumn(records: readonly PointRecord[]): [string, (p: SweepPoint) => string] {
  const modes = new Set(records.map((r) => r.point.mode));
  if (modes.size === 1 && modes.has("concurrency")) return ["Concurrency", (p) => String(p.value)];
  if (modes.size === 1) return ["Request Rate", (p) => formatGeneral(p.value)];
  return ["Load", describeLoad];
}

/** A point's percentile in whole usec; `missing` when it was not measured, never 0. */
const percentileCell = (us: number | undefined, missing: string) =>
  us === undefined ? missing : String(wholeUs(us));

function percentiles(records: readonly PointRecord[]): number[] {
  const all = new Set(records.flatMap((r) => [...r.result.client.percentilesUs.keys()]));
  return [...all].sort((a, b) => a - b);
}

function verdicts(records: readonly PointRecord[], goals: Goals): Verdict[] {
  return judge(records, { goals, result: (r) => r.result, group: (r) => r.point.model });
}

/** Left-aligned text columns, right-aligned numbers, two spaces apart. */
function table(rows: readonly string[][], numeric: readonly boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r.map((cell, i) =>
      i === r.length - 1 ? cell : numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)
    ).join("  ").trimEnd() + "\n"
  ).join("");
}

/**
 * The closing summary: the best point of each model under the goals, the
 * table of every point, and the points that failed.
 */
export function formatSweepSummary(
  records: readonly PointRecord[],
  options: { goals: Goals; failures?: readonly PointFailure[] },
): string {
  const { goals, failures = [] } = options;
  const judged = verdicts(records, goals);
  const out = [`Best point per model (${describeGoals(goals)}):`];
  const models = [...new Set([...records, ...failures].map((r) => r.point.model))];
  for (const model of models) {
    const i = records.findIndex((r, j) => r.point.model === model && judged[j]!.best);
    if (i < 0) {
      out.push(`  ${model}: ${NO_BEST_POINT}`);
      continue;
    }
    const { point, result } = records[i]!;
    out.push(
      `  ${describePoint(point)}: ${goals.objective.label} ${
        formatMetric(goals.objective, goals.objective.value(result)!)
      }`,
    );
  }
  const [loadHeader, loadCell] = loadColumn(records);
  const ps = percentiles(records);
  const header = [
    "Model",
    "Batch",
    "Protocol",
    "Input data",
    loadHeader,
    "Infer/sec",
    "Avg latency",
    ...ps.map((p) => `p${p} latency`),
    "Status",
  ];
  const rows = records.map(({ point, result }, i) => {
    const c = result.client;
    const verdict = judged[i]!;
    return [
      point.model,
      String(point.batchSize),
      point.protocol,
      point.inputData,
      loadCell(point),
      formatGeneral(c.throughput),
      String(wholeUs(c.avgLatencyUs)),
      ...ps.map((p) => percentileCell(c.percentilesUs.get(p), "-")),
      verdict.best ? "best" : verdict.reasons.join("; "),
    ];
  });
  const numeric = header.map((_, i) => i === 1 || (i >= 4 && i < header.length - 1));
  const text = [out.join("\n") + "\n"];
  if (records.length > 0) {
    text.push(
      `Measured points: ${records.length} (latencies in usec)\n` +
        table([header, ...rows], numeric),
    );
  }
  if (failures.length > 0) {
    text.push(
      "Failed points (not saved; measured again on the next run):\n" +
        failures.map((f) => `  ${describePoint(f.point)}: ${f.message}\n`).join(""),
    );
  }
  return text.join("\n");
}

/** The sweep's CSV: a row per point, perf_analyzer's latency columns, and the verdict. */
export function formatSweepCsv(records: readonly PointRecord[], options: { goals: Goals }): string {
  const judged = verdicts(records, options.goals);
  const [loadHeader, loadCell] = loadColumn(records);
  const ps = percentiles(records);
  const header = [
    "Model",
    "Batch Size",
    "Protocol",
    "Input Data",
    loadHeader,
    "Inferences/Second",
    "Avg latency",
    ...ps.map((p) => `p${p} latency`),
    "Client Send",
    "Client Recv",
    "Server Queue",
    "Server Compute Input",
    "Server Compute Infer",
    "Server Compute Output",
    "Errors",
    "Stable",
    "Best",
    "Notes",
    "Measured At",
  ];
  const lines: Array<Array<string | number>> = [header];
  records.forEach(({ point, result, measuredAt }, i) => {
    const c = result.client;
    const s = result.server?.[0];
    const cells: Array<string | number> = [
      point.model,
      point.batchSize,
      point.protocol,
      point.inputData,
      loadCell(point),
      formatGeneral(c.throughput),
      wholeUs(c.avgLatencyUs),
      ...ps.map((p) => percentileCell(c.percentilesUs.get(p), "")),
      wholeUs(c.avgSendUs),
      wholeUs(c.avgRecvUs),
      ...(s
        ? [s.queueUs, s.computeInputUs, s.computeInferUs, s.computeOutputUs].map(wholeUs)
        : ["", "", "", ""]),
      c.errorCount,
      String(result.stable),
      String(judged[i]!.best),
      judged[i]!.reasons.join("; "),
      measuredAt,
    ];
    lines.push(cells);
  });
  return csvText(lines);
}
