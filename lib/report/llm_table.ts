/**
 * The LLM metrics every output reports, in genai-perf's order, names and
 * units (the table itself is lib/measure/metrics.ts's, which SLOs read too):
 * what the console, CSV, summary JSON and HTML report read, so that they agree.
 */
import { describeSources } from "../measure/tokens.ts";
import type { LlmSummary } from "../types/results.ts";

/** The statistics of a metric row, as genai-perf's CSV orders them (std after them). */
export const LLM_STATISTICS = ["avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25"];

/** Words shown in capitals, as AIPerf shows them ("OSL Mismatch Diff"). */
const ACRONYMS: Record<string, string> = { osl: "OSL", isl: "ISL" };

/** genai-perf's display name: "Time To First Token (ms)". */
export function metricTitle(name: string, unit: string): string {
  const words = name.split("_")
    .map((w) => ACRONYMS[w] ?? w.charAt(0).toUpperCase() + w.slice(1))
    .join(" ");
  return `${words} (${unit})`;
}

/** The level-wide rates and counts (genai-perf's "system metrics"), name, unit and value. */
export function llmSystemMetrics(l: LlmSummary): Array<[string, string, number]> {
  const rows: Array<[string, string, number]> = [
    ["output_token_throughput", "tokens/sec", l.outputTokenThroughput],
    ["request_throughput", "per sec", l.requestThroughput],
  ];
  if (l.goodput) rows.push(["request_goodput", "per sec", l.goodput.requestGoodput]);
  rows.push(["request_count", "count", l.requestCount]);
  const check = l.usageCheck;
  const compared = [
    ["usage_prompt_tokens", check?.prompt],
    ["usage_completion_tokens", check?.completion],
    ["usage_reasoning_tokens", check?.reasoning],
  ] as const;
  for (const [name, c] of compared) {
    if (c === undefined) continue;
    rows.push([`${name}_mismatch`, "count", c.mismatched]);
    rows.push([`${name}_avg_diff`, "tokens", c.avgDiff]);
  }
  if (check) rows.push(["usage_discrepancy", "count", check.discrepancyCount]);
  if (l.oslMismatch) rows.push(["osl_mismatch", "count", l.oslMismatch.count]);
  return rows;
}

/** Where the output and input token counts came from, as every output says it. */
export function tokenCountSources(l: LlmSummary): { output: string; input: string } {
  return {
    output: describeSources(l.outputTokenSources, "chunks", l.tokenizer),
    input: describeSources(l.inputTokenSources, "unknown", l.tokenizer),
  };
}
