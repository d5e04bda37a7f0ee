/** What every bench case returns: rows for the table and results.json. */

export interface BenchRow {
  /** Case and variant, e.g. "http capacity c=64". */
  name: string;
  /** Unit of the two figures, e.g. "infer/s", "ms", "µs CPU/req". */
  unit: string;
  inferperf: number;
  /** The reference tool's figure in the same run, when there is one. */
  reference?: number;
  /** e.g. "wrk", "h2load". */
  referenceName?: string;
  /** inferperf / reference. */
  ratio?: number;
  /** The target, in words, e.g. ">= 0.8 x wrk". */
  target?: string;
  /** Whether the target is met; absent without a target. */
  met?: boolean;
  /** Anything a reader needs to interpret the row (fallback server, detail figures). */
  note?: string;
  /** Issue 29's budget of this figure, µs of client CPU per request or token (bench/budget.ts). */
  budget?: number;
  /** With --baseline: the baseline's figure (median) and this figure / the baseline's per round. */
  baseline?: {
    figure: number;
    ratio?: Spread;
  };
}

/** Values summarized by their median and range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Values it summarizes. */
  count: number;
}

export interface CaseResult {
  /** Stable identifier: "http", "cost", "startup", "grpc", "rate". */
  id: string;
  title: string;
  rows: BenchRow[];
  /** Case-wide remarks (which server, skipped parts and why). */
  notes: string[];
  /** Raw figures for results.json. */
  details?: unknown;
}

export function ratio(inferperf: number, reference: number): number | undefined {
  return reference > 0 && Number.isFinite(inferperf) ? inferperf / reference : undefined;
}
