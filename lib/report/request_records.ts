/**
 * --profile-export-jsonl: one JSON line per request, valid or failed, with
 * every figure of that request, in AIPerf's `profile_export.jsonl` record
 * layout (`metadata`, `metrics` as `{value, unit}`, `error`) and its metric
 * names, plus inferperf's own (the server's counts beside the client's). The
 * request loop only copies the request's numbers into a record; lines are
 * formatted and written from a timer, to a temporary file renamed into place
 * at the end. docs/request_records.schema.json is the schema.
 */
import { errorCause } from "../measure/error_causes.ts";
import { interpolatedPercentile, mean } from "../measure/stats.ts";
import type { Tokenizer } from "../input/tokenizer.ts";
import {
  type CompletedRequest,
  isTokenTiming,
  type RequestSink,
  type RequestTiming,
} from "../types/timing.ts";
import { PartialFile } from "./_partial_file.ts";
import { wallClockText } from "./_export_json.ts";

/** Pending lines are written this often, outside the request loop. */
const FLUSH_INTERVAL_MS = 50;

/** What a request left, copied when it completed (its timing object is reused). */
interface Raw {
  index: number;
  level: number;
  start: number;
  recvStart: number;
  end: number;
  intendedMs: number | undefined;
  error: string | undefined;
  /** Token streaming requests only. */
  llm?: {
    streamed: boolean;
    first: number | undefined;
    second: number | undefined;
    last: number | undefined;
    chunks: number;
    chunkTimes: number[] | undefined;
    usage: boolean;
    outputTokens: number;
    inputTokens: number;
    serverInputTokens: number;
    reasoningUsage: number;
    reasoningChunks: number;
    cachedTokens: number;
    requestedTokens: number;
    outputText: string | undefined;
    reasoningText: string | undefined;
    model: string | undefined;
    sessionId: string | undefined;
    turnIndex: number | undefined;
  };
}

const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
/** A performance.now() time as integer nanoseconds since the epoch, exact (a raw JSON number). */
const wallNs = (ms: number) => rawJson(wallClockText(ms));
const value = (v: unknown, unit: string) => ({ value: v, unit });
const round = (ms: number) => Math.round(ms * 1e6) / 1e6;

/** The copy of a request the loop keeps. */
function rawOf(c: CompletedRequest, options: { index: number; level: number }): Raw {
  const t: RequestTiming | undefined = c.timing;
  const raw: Raw = {
    ...options,
    start: t?.start ?? performance.now(),
    recvStart: t?.recvStart ?? 0,
    end: t?.end ?? performance.now(),
    intendedMs: c.intendedMs,
    error: c.error,
  };
  if (t !== undefined && isTokenTiming(t)) {
    raw.llm = {
      streamed: t.streamed !== false,
      first: t.firstResponse,
      second: t.secondResponse,
      last: t.lastResponse,
      chunks: t.responses,
      chunkTimes: t.chunkTimes?.slice(),
      usage: t.usage,
      outputTokens: t.outputTokens,
      inputTokens: t.inputTokens,
      serverInputTokens: t.serverInputTokens ?? -1,
      reasoningUsage: t.reasoningUsage ?? -1,
      reasoningChunks: t.reasoningChunks ?? 0,
      cachedTokens: t.cachedTokens ?? -1,
      requestedTokens: t.requestedTokens ?? -1,
      outputText: t.outputText,
      reasoningText: t.reasoningText,
      model: t.model,
      sessionId: t.sessionId,
      turnIndex: t.turnIndex,
    };
  }
  return raw;
}

/** Count, mean, min, max and numpy's percentiles of the gaps between outputs (ms). */
function gapStats(gaps: number[]) {
  const sorted = [...gaps].sort((a, b) => a - b);
  const at = (p: number) => round(interpolatedPercentile(sorted, p));
  return {
    count: gaps.length,
    avg: round(mean(gaps)),
    min: round(sorted[0]),
    max: round(sorted[sorted.length - 1]),
    p50: at(50),
    p90: at(90),
    p99: at(99),
  };
}

/** The LLM figures of a valid request, AIPerf's names (inferperf's for the server's counts). */
function llmMetrics(
  r: Raw,
  llm: NonNullable<Raw["llm"]>,
  tokenizer: Tokenizer | undefined,
): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const clientOutput = tokenizer !== undefined && llm.outputText !== undefined
    ? tokenizer.count(llm.outputText)
    : undefined;
  const osl = llm.usage ? llm.outputTokens : clientOutput ?? llm.chunks;
  const latency = (llm.streamed && llm.last !== undefined ? llm.last : r.end) - r.start;
  if (llm.inputTokens >= 0) m.input_sequence_length = value(llm.inputTokens, "tokens");
  if (llm.serverInputTokens >= 0) {
    m.server_input_sequence_length = value(llm.serverInputTokens, "tokens");
  }
  m.request_latency = value(round(latency), "ms");
  if (llm.streamed && llm.first !== undefined) {
    const ttft = llm.first - r.start;
    m.time_to_first_token = value(round(ttft), "ms");
    if (llm.second !== undefined) {
      m.time_to_second_token = value(round(llm.second - llm.first), "ms");
    }
    if (llm.inputTokens > 0 && ttft > 0) {
      m.prefill_throughput = value(round(llm.inputTokens / ttft * 1000), "tokens/sec");
    }
    const times = llm.chunkTimes;
    if (times !== undefined && times.length > 1) {
      const gaps = times.slice(1).map((t, i) => round(t - times[i]));
      m.inter_chunk_latency = value(gaps, "ms");
      m.inter_chunk_latency_stats = value(gapStats(gaps), "ms");
    }
    if (osl > 1 && llm.chunks > 1) {
      const itl = (latency - ttft) / (osl - 1);
      m.inter_token_latency = value(round(itl), "ms");
      if (itl > 0) {
        m.output_token_throughput_per_user = value(round(1000 / itl), "tokens/sec/user");
      }
    }
  }
  m.output_sequence_length = value(osl, "tokens");
  if (llm.usage) m.server_output_sequence_length = value(llm.outputTokens, "tokens");
  if (clientOutput !== undefined) m.client_output_sequence_length = value(clientOutput, "tokens");
  m.output_token_count_source = value(
    llm.usage ? "usage" : clientOutput !== undefined ? "tokenizer" : "chunks",
    "",
  );
  const reasoning = llm.reasoningUsage >= 0
    ? llm.reasoningUsage
    : tokenizer !== undefined && llm.reasoningText !== undefined && llm.reasoningText !== ""
    ? tokenizer.count(llm.reasoningText)
    : llm.reasoningChunks;
  if (reasoning > 0) m.reasoning_token_count = value(reasoning, "tokens");
  if (llm.cachedTokens >= 0) m.cached_prompt_token_count = value(llm.cachedTokens, "tokens");
  if (llm.requestedTokens >= 0) {
    m.requested_output_sequence_length = value(llm.requestedTokens, "tokens");
  }
  return m;
}

/** One request's line. */
export function recordLine(r: Raw, options: { tokenizer?: Tokenizer } = {}): string {
  const llm = r.llm;
  const metadata = {
    session_num: r.index,
    ...(llm?.sessionId === undefined ? {} : { conversation_id: llm.sessionId }),
    turn_index: llm?.turnIndex ?? 0,
    request_start_ns: wallNs(r.start),
    ...(llm?.streamed && r.recvStart > 0 ? { request_ack_ns: wallNs(r.recvStart) } : {}),
    request_end_ns: wallNs(r.end),
    ...(r.intendedMs === undefined ? {} : { intended_start_ns: wallNs(r.intendedMs) }),
    benchmark_phase: "profiling",
    inferperf_level: r.level,
    ...(llm?.model === undefined ? {} : { model_name: llm.model }),
    was_cancelled: false,
  };
  const metrics: Record<string, unknown> = r.error !== undefined
    ? {}
    : llm !== undefined
    ? llmMetrics(r, llm, options.tokenizer)
    : { request_latency: value(round(r.end - r.start), "ms") };
  if (r.error !== undefined && llm !== undefined && llm.inputTokens >= 0) {
    metrics.error_isl = value(llm.inputTokens, "tokens");
  }
  const error = r.error === undefined ? null : {
    code: Number(/^Server returned (\d{3})/.exec(r.error)?.[1] ?? 0) || null,
    type: errorCause(r.error),
    message: r.error,
  };
  return JSON.stringify({
    metadata,
    metrics: r.error !== undefined && llm === undefined ? null : metrics,
    error,
  }) + "\n";
}

/** Receives every request (a RequestSink) and writes its line from a timer. */
export class RequestRecordsWriter implements RequestSink {
  readonly #file: PartialFile;
  readonly #tokenizer: Tokenizer | undefined;
  #pending: Raw[] = [];
  #count = 0;
  #level = 0;
  #opened = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #finished = false;

  constructor(path: string, options: { tokenizer?: Tokenizer } = {}) {
    this.#file = new PartialFile(path, "the request records");
    this.#tokenizer = options.tokenizer;
  }

  /** The load level (concurrency, rate) the next requests belong to; opens the file on the first. */
  levelStart(level: number): void {
    this.#level = level;
    if (this.#opened || this.#finished) return;
    this.#opened = true;
    if (!this.#file.open()) return;
    this.#timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
    Deno.unrefTimer(this.#timer);
  }

  add(request: CompletedRequest): void {
    if (!this.#file.writable) return;
    this.#pending.push(rawOf(request, { index: this.#count++, level: this.#level }));
  }

  /** Writes the pending lines. */
  flush(): void {
    const pending = this.#pending;
    if (pending.length === 0 || !this.#file.writable) return;
    this.#pending = [];
    let text = "";
    for (const raw of pending) {
      text += recordLine(raw, this.#tokenizer ? { tokenizer: this.#tokenizer } : {});
    }
    this.#file.write(new TextEncoder().encode(text));
  }

  /** Writes what is pending and renames the file into place; synchronous and idempotent. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearInterval(this.#timer);
    this.flush();
    this.#file.finish();
  }
}
