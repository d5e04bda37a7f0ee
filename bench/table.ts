/** The bench report: a Markdown table (pasted as is into BENCHMARKS.md) and results.json. */
import { formatBudget } from "./budget.ts";
import type { MachineInfo } from "./machine.ts";
import type { BenchRow, CaseResult, Spread } from "./types.ts";

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
  /** How servers and clients were placed on CPUs (describePinning). */
  pinning: string;
  /** With --baseline: the commit compared with and the paired rounds run. */
  baseline?: { ref: string; commit: string; title: string; rounds: number };
}

/** Three significant figures, whole numbers from 1000 up. */
export function formatFigure(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "";
  if (Math.abs(value) >= 1000) return String(Math.round(value));
  return Number(value.toPrecision(3)).toString();
}

/** "0.97 (0.91-1.02, 8 rounds)": the median of the per-round ratios and their range. */
export function formatSpread(s: Spread): string {
  return `${s.median.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)}, ${s.count} rounds)`;
}

interface Column {
  title: string;
  cell: (row: BenchRow) => string;
}

const COLUMNS: Column[] = [
  { title: "case", cell: (r) => r.name },
  { title: "unit", cell: (r) => r.unit },
  { title: "inferperf", cell: (r) => formatFigure(r.inferperf) },
  {
    title: "reference",
    cell: (r) =>
      r.reference === undefined ? "" : `${formatFigure(r.reference)} (${r.referenceName})`,
  },
  { title: "ratio", cell: (r) => r.ratio === undefined ? "" : r.ratio.toFixed(2) },
];

/** With --baseline: the baseline's figure and this one's ratio to it. */
const BASELINE_COLUMNS: Column[] = [
  { title: "baseline", cell: (r) => r.baseline ? formatFigure(r.baseline.figure) : "" },
  {
    title: "× baseline",
    cell: (r) => r.baseline?.ratio ? formatSpread(r.baseline.ratio) : "",
  },
];

const BUDGET_COLUMN: Column = { title: "budget", cell: formatBudget };

const TARGET_COLUMNS: Column[] = [
  { title: "target", cell: (r) => r.target ?? "" },
  { title: "met", cell: (r) => r.met === undefined ? "" : r.met ? "yes" : "NO" },
  { title: "note", cell: (r) => r.note ?? "" },
];

/** A Markdown table with padded columns, readable in a terminal too. */
export function formatTable(rows: readonly BenchRow[]): string {
  const columns = [
    ...COLUMNS,
    ...(rows.some((r) => r.baseline !== undefined) ? BASELINE_COLUMNS : []),
    ...(rows.some((r) => r.budget !== undefined) ? [BUDGET_COLUMN] : []),
    ...TARGET_COLUMNS,
  ];
  const table = [columns.map((c) => c.title), ...rows.map((r) => columns.map((c) => c.cell(r)))];
  const widths = columns.map((_, i) => Math.max(...table.map((r) => r[i].length)));
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
    `CPUs: ${report.pinning}`,
    ...(report.baseline === undefined ? [] : [
      `Baseline: ${report.baseline.ref} = ${report.baseline.title}; ${report.baseline.rounds} ` +
      `paired rounds, current first in even rounds and baseline first in odd ones; ` +
      `"× baseline" is this figure / the baseline's per round (median, min-max)`,
    ]),
    "",
    formatTable(report.cases.flatMap((c) => c.rows)),
    "",
    ...report.cases.flatMap((c) => c.notes.map((n) => `- ${c.title}: ${n}`)),
    ...report.failures.map((f) => `- FAILED ${f.id}: ${f.message}`),
  ];
  return lines.join("\n");
}
