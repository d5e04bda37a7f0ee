/**
 * LLM figures of token-streaming requests (time to first token, inter-token
 * latency, token counts and rates), pooled over windows like the client
 * summary: distributions over every request, rates over the windows' time.
 */
import { mean, percentile, sampleStdDev, withReported } from "./stats.ts";
import type { Distribution, LlmSummary, Samples, WindowData } from "../types/results.ts";

/** avg, std, min, max and percentiles of `values`, ignoring NaN; undefined when none remain. */
export function distribution(
  values: readonly Samples[],
  percentiles: readonly number[],
): Distribution | undefined {
  let count = 0;
  for (const list of values) for (const v of list) if (!Number.isNaN(v)) count++;
  if (count === 0) return undefined;
  const sorted = new Float64Array(count);
  let i = 0;
  for (const list of values) for (const v of list) if (!Number.isNaN(v)) sorted[i++] = v;
  sorted.sort();
  const avg = mean(sorted);
  return {
    avg,
    std: sampleStdDev(sorted, avg),
    min: sorted[0],
    max: sorted[count - 1],
    percentiles: new Map(percentiles.map((p) => [p, percentile(sorted, p)])),
  };
}

/**
 * The LLM summary of windows, or undefined when they hold no token-streaming
 * request. `percentiles` are those of the client summary (50, 90, 95, 99 and
 * --percentile).
 */
export function summarizeTokens(
  windows: readonly WindowData[],
  options: { percentiles?: readonly number[] } = {},
): LlmSummary | undefined {
  const used = windows.filter((w) => w.tokens !== undefined && w.tokens.ttftUs.length > 0);
  if (used.length === 0) return undefined;
  const wanted = withReported(options.percentiles);
  const tokens = used.map((w) => w.tokens!);
  const of = (pick: (t: NonNullable<WindowData["tokens"]>) => number[]) =>
    distribution(tokens.map(pick), wanted);
  let requestCount = 0;
  let usageCount = 0;
  let outputTotal = 0;
  for (const t of tokens) {
    requestCount += t.ttftUs.length;
    usageCount += t.usageCount;
    for (const n of t.outputTokens) outputTotal += n;
  }
  let seconds = 0;
  for (const w of windows) seconds += (w.endMs - w.startMs) / 1000;
  const known = tokens.map((t) => t.inputTokens.map((n) => n < 0 ? NaN : n));
  const inputTokens = distribution(known, wanted);
  const summary: LlmSummary = {
    requestCount,
    requestThroughput: seconds > 0 ? requestCount / seconds : 0,
    timeToFirstTokenUs: of((t) => t.ttftUs)!,
    endToEndLatencyUs: distribution(used.map((w) => w.latenciesUs), wanted)!,
    outputTokens: of((t) => t.outputTokens)!,
    outputTokensPerSecond: of((t) => t.tokensPerSecond)!,
    outputTokenThroughput: seconds > 0 ? outputTotal / seconds : 0,
    tokenSource: usageCount === requestCount ? "usage" : usageCount === 0 ? "chunks" : "mixed",
  };
  const itl = of((t) => t.itlUs);
  if (itl) summary.interTokenLatencyUs = itl;
  if (inputTokens) summary.inputTokens = inputTokens;
  const correctedTtft = of((t) => t.correctedTtftUs);
  if (correctedTtft) {
    summary.corrected = {
      timeToFirstTokenUs: correctedTtft,
      endToEndLatencyUs: distribution(used.map((w) => w.correctedLatenciesUs), wanted)!,
      outputTokensPerSecond: of((t) => t.correctedTokensPerSecond)!,
    };
  }
  return summary;
}
