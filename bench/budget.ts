/**
 * Issue 29's budgets: µs of client CPU per request (per token for SSE) on the
 * hot paths, set from a pinned `--baseline` run (BENCHMARKS.md, "Budgets per
 * request"). The table shows each figure against its budget, so that a change
 * that spends more per request is seen in the run that measures it.
 */
import type { BenchRow, CaseResult } from "./types.ts";

export interface Budget {
  case: string;
  /** The row's name (client cost names carry the rate reached; the budget is --cost-rate 5000's). */
  row: RegExp;
  /** µs of client CPU per request (per token for SSE streams). */
  us: number;
}

export const BUDGETS: readonly Budget[] = [
  { case: "http", row: /^HTTP small c=64: client CPU$/, us: 14 },
  { case: "grpc", row: /^gRPC unary c=64, nginx: client CPU$/, us: 13 },
  { case: "grpc", row: /^gRPC streaming c=64: client CPU$/, us: 4.7 },
  { case: "cost", row: /^Client cost: CPU \(rate /, us: 43 },
  { case: "llm", row: /^LLM stream: CPU per token/, us: 13 },
];

/** The budget of a row of case `id`, if it has one. */
export function budgetOf(id: string, row: BenchRow): number | undefined {
  return BUDGETS.find((b) => b.case === id && b.row.test(row.name))?.us;
}

/** The case with each budgeted row's budget set. */
export function withBudgets(result: CaseResult): CaseResult {
  return {
    ...result,
    rows: result.rows.map((row) => {
      const budget = budgetOf(result.id, row);
      return budget === undefined ? row : { ...row, budget };
    }),
  };
}

/** "<= 14: 0.93 x" or "<= 14: OVER 1.10 x". */
export function formatBudget(row: BenchRow): string {
  if (row.budget === undefined) return "";
  const share = row.inferperf / row.budget;
  return `<= ${row.budget}: ${share > 1 ? "OVER " : ""}${share.toFixed(2)} x`;
}
