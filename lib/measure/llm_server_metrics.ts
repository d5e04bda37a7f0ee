/**
 * What an LLM server's Prometheus endpoint says about a level (inferperf's
 * own figures): its generated and prompt token counters over the level, to
 * check against the client's counts, and its running and waiting requests
 * and KV-cache usage while the level ran. llama.cpp (`--metrics`), vLLM,
 * SGLang and TGI name them differently; each figure takes the first family a scrape
 * has, summed over label sets (one per model).
 */
import type { LlmServerMetrics } from "../types/results.ts";
import type { PrometheusSample } from "./prometheus.ts";

/** One scrape's figures; undefined where the server has no such family. */
export interface LlmServerSample {
  generatedTokens?: number;
  promptTokens?: number;
  /** Prompt tokens served from the prefix cache. */
  cachedPromptTokens?: number;
  running?: number;
  waiting?: number;
  /** 0..1 */
  kvCacheUsage?: number;
}

/** Per figure, the families that hold it, by server; the first present wins. */
const FAMILIES: Record<keyof LlmServerSample, readonly string[]> = {
  generatedTokens: [
    "llamacpp:tokens_predicted_total",
    "vllm:generation_tokens_total",
    "sglang:generation_tokens_total",
    // TGI counts them per request, in a histogram: its sum is every request's.
    "tgi_request_generated_tokens_sum",
  ],
  promptTokens: [
    "llamacpp:prompt_tokens_total",
    "vllm:prompt_tokens_total",
    "sglang:prompt_tokens_total",
  ],
  cachedPromptTokens: ["llamacpp:prompt_tokens_cached_total", "sglang:cached_tokens_total"],
  running: [
    "llamacpp:requests_processing",
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "tgi_batch_current_size",
  ],
  waiting: [
    "llamacpp:requests_deferred",
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "tgi_queue_size",
  ],
  kvCacheUsage: [
    "llamacpp:kv_cache_usage_ratio",
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
  ],
};

/** The LLM figures of one scrape; undefined when it has none (not an LLM server). */
export function llmServerSampleOf(
  samples: readonly PrometheusSample[],
): LlmServerSample | undefined {
  const sums = new Map<string, number>();
  for (const s of samples) sums.set(s.name, (sums.get(s.name) ?? 0) + s.value);
  const sample: LlmServerSample = {};
  for (const [key, names] of Object.entries(FAMILIES)) {
    const name = names.find((n) => sums.has(n));
    if (name !== undefined) sample[key as keyof LlmServerSample] = sums.get(name);
  }
  return Object.keys(sample).length > 0 ? sample : undefined;
}

/**
 * The level's figures from the scrape at (or last before) its start,
 * `before`, those taken while it ran, `during`, and the one at (or first
 * after) its end, `after`: counters as after - before, gauges' average and
 * maximum over `during` and `after`.
 */
export function summarizeLlmServer(
  before: LlmServerSample,
  during: readonly LlmServerSample[],
  after: LlmServerSample,
): LlmServerMetrics {
  const out: LlmServerMetrics = { scrapes: during.length + 2 };
  const delta = (key: "generatedTokens" | "promptTokens" | "cachedPromptTokens") => {
    const a = after[key];
    const b = before[key];
    // A counter that went backwards (a restart) tells nothing about the level.
    if (a !== undefined && b !== undefined && a >= b) out[key] = a - b;
  };
  delta("generatedTokens");
  delta("promptTokens");
  delta("cachedPromptTokens");
  for (const key of ["running", "waiting", "kvCacheUsage"] as const) {
    const values = during.map((s) => s[key]).filter((v) => v !== undefined);
    if (values.length === 0) continue;
    let sum = 0;
    for (const v of values) sum += v;
    out[key] = { avg: sum / values.length, max: Math.max(...values) };
  }
  return out;
}
