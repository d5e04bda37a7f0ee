/**
 * Collects completed requests into the current window. A request belongs to
 * the window in which its last response arrived, so windows can be rotated at
 * any moment without waiting for in-flight requests (they carry over).
 */
import type { RequestTiming } from "../types/timing.ts";
import type { Histogram } from "../types/results.ts";
import { SampleList } from "./samples.ts";
import {
  type CompletedRequest,
  isTokenTiming,
  type RequestSink,
  type TokenTiming,
} from "../types/timing.ts";
import type { TokenWindowData, WindowData } from "../types/results.ts";

/** Distinct error messages kept per window; the rest are grouped so a flood of unique messages stays bounded. */
const MAX_ERROR_KINDS = 50;
const OTHER_ERRORS = "(other errors)";
/** perf_analyzer calls a send "delayed" when it leaves more than this late. */
const DELAYED_SEND_MS = 1;

/** A window with nothing recorded that starts (and so far ends) at `startMs`; `fields` override. */
export function emptyWindow(startMs: number, fields: Partial<WindowData> = {}): WindowData {
  return {
    startMs,
    endMs: startMs,
    startWallNs: BigInt(Math.round((performance.timeOrigin + startMs) * 1e6)),
    latenciesUs: [],
    sendUsSum: 0,
    recvUsSum: 0,
    waitUsSum: 0,
    responseCount: 0,
    firstResponseUsSum: 0,
    errorCount: 0,
    errors: new Map(),
    delayedCount: 0,
    correctedLatenciesUs: [],
    sendCount: 0,
    sendLagsUs: [],
    blockedCount: 0,
    ...fields,
  };
}

function emptyTokens(): TokenWindowData {
  return {
    ttftUs: [],
    ttstUs: [],
    latencyUs: [],
    streamUs: [],
    chunks: [],
    usageTokens: [],
    texts: [],
    inputTokens: [],
    serverInputTokens: [],
    reasoningUsage: [],
    cachedTokens: [],
    requestedTokens: [],
    reasoningChunks: [],
    reasoningTexts: [],
    sendLagUs: [],
    sendEpochMs: [],
    gapsUs: [],
    gapsPerRequest: [],
    gapSumUs: [],
    gapCount: [],
  };
}

/** Gaps by position beyond this are pooled in the last slot (the chart's bound). */
const MAX_GAP_POSITIONS = 1000;

/**
 * Answers with usage keep their text for the tokenizer to count when the
 * level ends, beside the server's count, among a window's first this many
 * requests: a bound on the memory a long run keeps for the comparison
 * (answers without usage keep theirs all).
 */
export const MAX_COMPARED_TEXTS = 500;

/** A valid token-streaming request's raw figures; tokens.ts derives genai-perf's metrics. */
function recordTokens(w: WindowData, timing: TokenTiming, intendedMs: number | undefined): void {
  const t = w.tokens ??= emptyTokens();
  const start = timing.start;
  const streamed = timing.streamed !== false;
  const first = timing.firstResponse;
  const second = timing.secondResponse;
  const times = timing.chunkTimes;
  t.ttftUs.push(streamed && first !== undefined ? (first - start) * 1000 : NaN);
  // genai-perf and AIPerf: the second token's time after the first, not after the send.
  t.ttstUs.push(
    streamed && first !== undefined && second !== undefined ? (second - first) * 1000 : NaN,
  );
  // Both peers end the request at its last output (the usage chunk and [DONE] come after).
  const last = streamed ? timing.lastResponse ?? timing.end : timing.end;
  t.latencyUs.push((last - start) * 1000);
  t.streamUs.push(streamed && first !== undefined ? (last - first) * 1000 : NaN);
  t.chunks.push(timing.responses);
  t.usageTokens.push(timing.usage ? timing.outputTokens : -1);
  // Read before this request's figures are pushed: the window's requests so far.
  const kept = !timing.usage || t.texts.length < MAX_COMPARED_TEXTS;
  t.texts.push(kept ? timing.outputText : undefined);
  t.inputTokens.push(timing.inputTokens);
  t.serverInputTokens.push(timing.serverInputTokens ?? -1);
  const reasoningUsage = timing.reasoningUsage ?? -1;
  t.reasoningUsage.push(reasoningUsage);
  t.cachedTokens.push(timing.cachedTokens ?? -1);
  t.requestedTokens.push(timing.requestedTokens ?? -1);
  t.reasoningChunks.push(timing.reasoningChunks ?? 0);
  t.reasoningTexts.push(reasoningUsage < 0 || kept ? timing.reasoningText || undefined : undefined);
  t.sendLagUs.push(intendedMs === undefined ? NaN : (start - intendedMs) * 1000);
  t.sendEpochMs.push(performance.timeOrigin + start);
  if (timing.model !== undefined) (t.models ??= []).push(timing.model);
  t.gapsPerRequest.push(streamed && times !== undefined ? Math.max(0, times.length - 1) : 0);
  if (streamed && times !== undefined) {
    for (let i = 1; i < times.length; i++) {
      const gap = (times[i] - times[i - 1]) * 1000;
      const slot = Math.min(i - 1, MAX_GAP_POSITIONS - 1);
      t.gapsUs.push(gap);
      t.gapSumUs[slot] = (t.gapSumUs[slot] ?? 0) + gap;
      t.gapCount[slot] = (t.gapCount[slot] ?? 0) + 1;
    }
  }
}

/** What a load reports to: a Recorder, or a worker thread's batch of records for one. */
export type RequestRecorder = Pick<
  Recorder,
  "record" | "recordSend" | "recordError" | "recordCancelled" | "lastCompletedMs"
>;

export class Recorder {
  #window: WindowData;
  // The current window's samples; rotate() hands them to the window it ends.
  readonly #latenciesUs = new SampleList();
  readonly #correctedLatenciesUs = new SampleList();
  readonly #sendLagsUs = new SampleList();
  #target = Infinity;
  #lastCompletedMs = -Infinity;
  #onTarget: (() => void) | undefined;
  readonly #sink: RequestSink | undefined;
  readonly #newHistogram: (() => Histogram) | undefined;
  /** Refilled for every request handed to the sink, so forwarding allocates nothing. */
  readonly #completed: CompletedRequest = {
    timing: undefined,
    intendedMs: undefined,
    error: undefined,
  };

  /**
   * `sink` receives every completed request too (the profile export).
   * `newHistogram`: each window also records its latencies into a histogram
   * made by it, for the reports that export or merge them; a factory so that
   * runs without those reports never load the histogram library.
   */
  constructor(
    options: { sink?: RequestSink; newHistogram?: () => Histogram } = {},
  ) {
    this.#sink = options.sink;
    this.#newHistogram = options.newHistogram;
    this.#window = emptyWindow(performance.now(), { histogram: this.#newHistogram?.() });
  }

  /** When a request (valid or failed) last completed: performance.now() time. */
  get lastCompletedMs(): number {
    return this.#lastCompletedMs;
  }

  /** Valid requests recorded in the current window so far. */
  get count(): number {
    return this.#latenciesUs.length;
  }

  /** Requests (valid, failed or cancelled) completed in the current window so far. */
  get completed(): number {
    return this.#latenciesUs.length + this.#window.errorCount + (this.#window.cancelledCount ?? 0);
  }

  /**
   * A valid request. Latency is measured from the send (`timing.start`), as
   * perf_analyzer does; open-loop loads also pass the intended send time, from
   * which the corrected latency is measured.
   */
  record(timing: RequestTiming, intendedMs?: number): void {
    const w = this.#window;
    this.#lastCompletedMs = timing.end;
    const latencyMs = timing.end - timing.start;
    this.#latenciesUs.push(latencyMs * 1000);
    w.histogram?.recordMs(latencyMs);
    if (intendedMs !== undefined) this.#correctedLatenciesUs.push((timing.end - intendedMs) * 1000);
    w.sendUsSum += (timing.sendEnd - timing.start) * 1000;
    w.waitUsSum += (timing.recvStart - timing.sendEnd) * 1000;
    w.recvUsSum += (timing.end - timing.recvStart) * 1000;
    w.responseCount += timing.responses;
    w.firstResponseUsSum! += ((timing.firstResponse ?? timing.end) - timing.start) * 1000;
    if (isTokenTiming(timing)) recordTokens(w, timing, intendedMs);
    const sink = this.#sink;
    if (sink) {
      const c = this.#completed;
      c.timing = timing;
      c.intendedMs = intendedMs;
      c.error = undefined;
      sink.add(c);
    }
    this.#check();
  }

  /**
   * An open-loop send leaving at `dispatchedMs` that was due at `intendedMs`;
   * `blocked` when it waited for capacity (--max-inflight or a busy sequence).
   */
  recordSend(intendedMs: number, dispatchedMs: number, blocked: boolean): void {
    const w = this.#window;
    const lagMs = dispatchedMs - intendedMs;
    w.sendCount++;
    this.#sendLagsUs.push(lagMs * 1000);
    if (lagMs > DELAYED_SEND_MS) w.delayedCount++;
    if (blocked) w.blockedCount++;
  }

  /** A failed request; `timing` when it was sent (then its start is the send time). */
  recordError(message: string, timing?: RequestTiming): void {
    const w = this.#window;
    this.#lastCompletedMs = performance.now();
    w.errorCount++;
    const key = w.errors.has(message) || w.errors.size < MAX_ERROR_KINDS ? message : OTHER_ERRORS;
    w.errors.set(key, (w.errors.get(key) ?? 0) + 1);
    const sink = this.#sink;
    if (sink) {
      const c = this.#completed;
      c.timing = timing;
      c.intendedMs = undefined;
      c.error = message;
      sink.add(c);
    }
    this.#check();
  }

  /**
   * A request the client cancelled on purpose: counted apart, in neither the
   * latencies nor the failures (nor the export).
   */
  recordCancelled(): void {
    const w = this.#window;
    this.#lastCompletedMs = performance.now();
    w.cancelledCount = (w.cancelledCount ?? 0) + 1;
    this.#check();
  }

  /** Resolves once `count` requests (valid or failed) completed in the current window. */
  waitForCompleted(count: number): Promise<void> {
    return new Promise((resolve) => {
      this.#target = count;
      this.#onTarget = resolve;
      this.#check();
    });
  }

  /** Ends the current window now and starts the next one where it ended. */
  rotate(): WindowData {
    const now = performance.now();
    const done = this.#window;
    done.endMs = now;
    done.latenciesUs = this.#latenciesUs.take();
    done.correctedLatenciesUs = this.#correctedLatenciesUs.take();
    done.sendLagsUs = this.#sendLagsUs.take();
    this.#window = emptyWindow(now, { histogram: this.#newHistogram?.() });
    this.#sink?.rotated?.(now);
    this.#target = Infinity;
    this.#onTarget?.();
    this.#onTarget = undefined;
    // A finished window records no more: its histogram shrinks to a few KB (about 1 ms of work).
    done.histogram?.freeze();
    return done;
  }

  #check(): void {
    if (this.completed >= this.#target) {
      const resolve = this.#onTarget;
      this.#target = Infinity;
      this.#onTarget = undefined;
      resolve?.();
    }
  }
}
