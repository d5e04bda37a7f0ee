/** The bench report: a Markdown table (pasted as is into BENCHMARKS.md) and results.json. */
import type { MachineInfo } from "./machine.ts";
import type { BenchRow, CaseResult } from "./types.ts";

export interface BenchReport {
  /** ISO 8601, UTC. */
  date: string;
  command: string;
  machine: MachineInfo;
  /** Load averages when the bench ended (the machine's also has them at the start). */
  loadAverageEnd: number[];
  inferperfVersion: string;
  cases: CaseResult[];
  /** Cases that failed, with their error message. */
  failures: { id: string; message: string }[];
}

/** Three significant figures, whole numbers from 1000 up. */
export function formatFigure(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "";
  if (Math.abs(value) >= 1000) return String(Math.round(value));
  return Number(value.toPrecision(3)).toString();
}

function cells(row: BenchRow): string[] {
  return [
    row.name,
    row.unit,
    formatFigure(row.inferperf),
    row.reference === undefined ? "" : `${formatFigure(row.reference)} (${row.referenceName})`,
    row.ratio === undefined ? "" : row.ratio.toFixed(2),
    row.target ?? "",
    row.met === undefined ? "" : row.met ? "yes" : "NO",
    row.note ?? "",
  ];
}

const HEADER = ["case", "unit", "inferperf", "reference", "ratio", "target", "met", "note"];

/** A Markdown table with padded columns, readable in a terminal too. */
export function formatTable(rows: readonly BenchRow[]): string {
  const table = [HEADER, ...rows.map(cells)];
  const widths = HEADER.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(table[0]), line(widths.map((w) => "-".repeat(w))), ...table.slice(1).map(line)]
    .join("\n");
}

export function formatReport(report: BenchReport): string {
  const m = report.machine;
  const lines = [
    `Date: ${report.date}`,
    `Machine: ${m.cores} cores, ${m.cpuModel}, Linux ${m.kernel}, deno ${m.deno}`,
    `Load average: ${m.loadAverage.join(" ")} at start, ${report.loadAverageEnd.join(" ")} at end`,
    `Command: ${report.command} (${report.inferperfVersion})`,
    "",
    formatTable(report.cases.flatMap((c) => c.rows)),
    "",
    ...report.cases.flatMap((c) => c.notes.map((n) => `- ${c.title}: ${n}`)),
    ...report.failures.map((f) => `- FAILED ${f.id}: ${f.message}`),
  ];
  return lines.join("\n");
}
