/**
 * The LLM metrics every output reports, in genai-perf's order, names and
 * units: one table that the console, CSV, summary JSON and HTML report read,
 * so that they agree.
 */
import { describeSources } from "../measure/tokens.ts";
import type { Distribution, LlmSummary } from "../types/results.ts";

export interface LlmMetric {
  /** genai-perf's or AIPerf's metric name, e.g. "time_to_first_token"; inferperf's own otherwise. */
  name: string;
  unit: "ms" | "tokens" | "tokens/sec" | "tokens/sec/user";
  /** The distribution in `unit`; undefined when the level has none. */
  of(l: LlmSummary): Distribution | undefined;
}

/** The statistics of a metric row, as genai-perf's CSV orders them (std after them). */
export const LLM_STATISTICS = ["avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25"];

function scaled(d: Distribution | undefined, by: number): Distribution | undefined {
  if (d === undefined) return undefined;
  return {
    avg: d.avg * by,
    std: d.std * by,
    min: d.min * by,
    max: d.max * by,
    percentiles: new Map([...d.percentiles].map(([p, v]) => [p, v * by])),
  };
}

const ms = (d: Distribution | undefined) => scaled(d, 1e-3);

export const LLM_METRICS: readonly LlmMetric[] = [
  { name: "time_to_first_token", unit: "ms", of: (l) => ms(l.timeToFirstTokenUs) },
  { name: "time_to_second_token", unit: "ms", of: (l) => ms(l.timeToSecondTokenUs) },
  { name: "request_latency", unit: "ms", of: (l) => ms(l.requestLatencyUs) },
  { name: "inter_token_latency", unit: "ms", of: (l) => ms(l.interTokenLatencyUs) },
  // AIPerf's: every gap between consecutive chunks, not one mean per request.
  { name: "inter_chunk_latency", unit: "ms", of: (l) => ms(l.interChunkLatencyUs) },
  {
    name: "output_token_throughput_per_user",
    unit: "tokens/sec/user",
    of: (l) => l.outputTokenThroughputPerUser,
  },
  { name: "prefill_throughput", unit: "tokens/sec", of: (l) => l.prefillThroughput },
  { name: "output_sequence_length", unit: "tokens", of: (l) => l.outputSequenceLength },
  { name: "reasoning_token_count", unit: "tokens", of: (l) => l.reasoningTokenCount },
  { name: "input_sequence_length", unit: "tokens", of: (l) => l.inputSequenceLength },
  // inferperf's: the prompt as the server counted it (chat template included).
  {
    name: "server_input_sequence_length",
    unit: "tokens",
    of: (l) => l.serverInputSequenceLength,
  },
  {
    name: "corrected_time_to_first_token",
    unit: "ms",
    of: (l) => ms(l.corrected?.timeToFirstTokenUs),
  },
  { name: "corrected_request_latency", unit: "ms", of: (l) => ms(l.corrected?.requestLatencyUs) },
];

/** genai-perf's display name: "Time To First Token (ms)". */
export function metricTitle(name: string, unit: string): string {
  const words = name.split("_").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(" ");
  return `${words} (${unit})`;
}

/** A statistic of a distribution: "avg", "std", "min", "max" or "pN". */
export function statistic(d: Distribution, name: string): number | undefined {
  switch (name) {
    case "avg":
      return d.avg;
    case "std":
      return d.std;
    case "min":
      return d.min;
    case "max":
      return d.max;
    default:
      return d.percentiles.get(Number(name.slice(1)));
  }
}

/** The level-wide rates and counts (genai-perf's "system metrics"), name, unit and value. */
export function llmSystemMetrics(l: LlmSummary): Array<[string, string, number]> {
  const rows: Array<[string, string, number]> = [
    ["output_token_throughput", "tokens/sec", l.outputTokenThroughput],
    ["request_throughput", "per sec", l.requestThroughput],
  ];
  if (l.goodput) rows.push(["request_goodput", "per sec", l.goodput.requestGoodput]);
  rows.push(["request_count", "count", l.requestCount]);
  return rows;
}

/** Where the output and input token counts came from, as every output says it. */
export function tokenCountSources(l: LlmSummary): { output: string; input: string } {
  return {
    output: describeSources(l.outputTokenSources, "chunks", l.tokenizer),
    input: describeSources(l.inputTokenSources, "unknown", l.tokenizer),
  };
}
