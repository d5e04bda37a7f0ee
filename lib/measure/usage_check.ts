/**
 * The client's token counts against the server's `usage`, as AIPerf
 * compares them (aiperf/metrics/types/usage_diff_metrics.py,
 * osl_mismatch_metrics.py): per request the percent difference of the
 * prompt's, the answer's and its reasoning's counts
 * (usage_prompt_tokens_diff_pct, usage_completion_tokens_diff_pct,
 * usage_reasoning_tokens_diff_pct), the requests beyond 10 %
 * (usage_discrepancy_count), the answers whose length missed the max_tokens
 * asked by more than min(5 %, 50 tokens) (osl_mismatch_diff_pct,
 * osl_mismatch_count); beside them inferperf's count of requests whose
 * counts differ at all and the mean difference in tokens, and the usage's
 * cached prompt tokens. Computed when a level ends, from its windows' figures.
 */
import type {
  CountComparison,
  Distribution,
  LevelResult,
  LlmSummary,
  UsageCheck,
} from "../types/results.ts";

/** AIPerf's AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD default. */
export const USAGE_DIFF_THRESHOLD_PCT = 10;
/** AIPerf's OSL_MISMATCH_PCT_THRESHOLD and OSL_MISMATCH_MAX_TOKEN_THRESHOLD defaults. */
export const OSL_MISMATCH_PCT = 5;
export const OSL_MISMATCH_MAX_TOKENS = 50;

/** Per request, aligned by index; NaN where a count is unknown. */
export interface CountFigures {
  /** The tokenizer's input sequence length (the rendered template's with --apply-chat-template). */
  clientInput: Float64Array;
  /** usage's prompt tokens. */
  serverInput: Float64Array;
  /** The tokenizer's count of an answer that came with usage. */
  clientOutput: Float64Array;
  /** usage's completion tokens. */
  usageOutput: Float64Array;
  /** The tokenizer's count of the reasoning text of an answer whose usage gives its reasoning tokens. */
  clientReasoning: Float64Array;
  /** usage's reasoning tokens (completion_tokens_details). */
  usageReasoning: Float64Array;
  /** The output sequence length reported (usage, else the tokenizer's, else the chunks). */
  output: Float64Array;
  /** max_tokens asked. */
  requested: Float64Array;
  /** usage's cached prompt tokens. */
  cached: Float64Array;
}

/** |server - client| / client in percent where both are known and client > 0, and the comparison. */
function compare(
  client: Float64Array,
  server: Float64Array,
): { pct: Float64Array; comparison: CountComparison | undefined } {
  const pct = new Float64Array(client.length).fill(NaN);
  let compared = 0;
  let mismatched = 0;
  let diff = 0;
  for (let i = 0; i < client.length; i++) {
    const c = client[i];
    const s = server[i];
    if (Number.isNaN(c) || Number.isNaN(s)) continue;
    compared++;
    if (c !== s) mismatched++;
    diff += s - c;
    if (c > 0) pct[i] = Math.abs(s - c) / c * 100;
  }
  const comparison = compared > 0 ? { compared, mismatched, avgDiff: diff / compared } : undefined;
  return { pct, comparison };
}

/**
 * The comparison figures of a level's requests (`of`: their distribution,
 * undefined when none has a value).
 */
export function compareCounts(
  c: CountFigures,
  of: (values: Float64Array) => Distribution | undefined,
): Partial<LlmSummary> {
  const prompt = compare(c.clientInput, c.serverInput);
  const completion = compare(c.clientOutput, c.usageOutput);
  const reasoning = compare(c.clientReasoning, c.usageReasoning);
  const out: Partial<LlmSummary> = {
    cachedPromptTokens: of(c.cached),
    usagePromptDiffPct: of(prompt.pct),
    usageCompletionDiffPct: of(completion.pct),
    usageReasoningDiffPct: of(reasoning.pct),
  };
  if (prompt.comparison || completion.comparison) {
    let discrepancies = 0;
    const beyond = (pct: Float64Array, i: number) => pct[i] > USAGE_DIFF_THRESHOLD_PCT;
    for (let i = 0; i < prompt.pct.length; i++) {
      if (beyond(prompt.pct, i) || beyond(completion.pct, i) || beyond(reasoning.pct, i)) {
        discrepancies++;
      }
    }
    const check: UsageCheck = {
      discrepancyCount: discrepancies,
      thresholdPct: USAGE_DIFF_THRESHOLD_PCT,
    };
    if (prompt.comparison) check.prompt = prompt.comparison;
    if (completion.comparison) check.completion = completion.comparison;
    if (reasoning.comparison) check.reasoning = reasoning.comparison;
    out.usageCheck = check;
  }
  const osl = new Float64Array(c.output.length).fill(NaN);
  let asked = 0;
  let mismatches = 0;
  for (let i = 0; i < osl.length; i++) {
    const requested = c.requested[i];
    if (!(requested > 0)) continue;
    asked++;
    osl[i] = (c.output[i] - requested) / requested * 100;
    const bound = Math.min(requested * OSL_MISMATCH_PCT / 100, OSL_MISMATCH_MAX_TOKENS);
    if (Math.abs(c.output[i] - requested) > bound) mismatches++;
  }
  if (asked > 0) {
    out.oslMismatchDiffPct = of(osl);
    out.oslMismatch = { asked, count: mismatches };
  }
  return out;
}

const signed = (n: number) => `${n >= 0 ? "+" : ""}${Number(n.toFixed(1))}`;

/**
 * The run's warnings, one per kind at most: usage differing from the
 * client's counts beyond the threshold in some request, and answers
 * shorter or longer than the max_tokens asked (AIPerf's end-of-run panel).
 */
export function countWarnings(
  results: readonly LevelResult[],
  options: { chatTemplate: boolean },
): string[] {
  let discrepancies = 0;
  let checked = 0;
  const diffs = { prompt: { sum: 0, n: 0 }, completion: { sum: 0, n: 0 } };
  let oslMismatches = 0;
  let asked = 0;
  for (const { llm } of results) {
    const check = llm?.usageCheck;
    if (check) {
      discrepancies += check.discrepancyCount;
      checked += Math.max(check.prompt?.compared ?? 0, check.completion?.compared ?? 0);
      for (const kind of ["prompt", "completion"] as const) {
        const c = check[kind];
        if (c === undefined) continue;
        diffs[kind].sum += c.avgDiff * c.compared;
        diffs[kind].n += c.compared;
      }
    }
    if (llm?.oslMismatch) {
      oslMismatches += llm.oslMismatch.count;
      asked += llm.oslMismatch.asked;
    }
  }
  const warnings: string[] = [];
  if (discrepancies > 0) {
    // A server that counts more prompt tokens than the prompt's own applies a chat template.
    const hint = options.chatTemplate
      ? " (does it apply another template than the model directory's?)"
      : " (its chat template? --tokenizer DIR --apply-chat-template counts it)";
    const parts: string[] = [];
    for (const kind of ["prompt", "completion"] as const) {
      const { sum, n } = diffs[kind];
      if (n === 0) continue;
      const what = kind === "prompt" ? "prompt" : "output";
      parts.push(`${signed(sum / n)} ${what} tokens${kind === "prompt" && sum > 0 ? hint : ""}`);
    }
    warnings.push(
      `The server's usage differs from the client's token counts by more than ` +
        `${USAGE_DIFF_THRESHOLD_PCT} % in ${discrepancies} of ${checked} requests: per request ` +
        `the server counts ${parts.join(" and ")} on average`,
    );
  }
  if (oslMismatches > 0) {
    warnings.push(
      `${oslMismatches} of ${asked} answers missed the max_tokens asked by more than ` +
        `min(${OSL_MISMATCH_PCT} %, ${OSL_MISMATCH_MAX_TOKENS} tokens) ` +
        "(--output-tokens-mean-deterministic asks for exact lengths: min_tokens, ignore_eos)",
    );
  }
  return warnings;
}
