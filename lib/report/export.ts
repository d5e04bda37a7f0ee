/**
 * --profile-export-file: perf_analyzer's profile export (every experiment,
 * the requests its windows counted with their send time, the arrival time
 * and outputs of each response, their inputs, window boundaries), written
 * as windows end so that memory holds one window's records, whatever the
 * run length.
 *
 * The file is written under a temporary name and renamed when finished, so
 * the target either does not exist or is complete, valid JSON: finish() closes
 * every open array, and is synchronous so that a hard interrupt can call it
 * just before the process exits.
 *
 * Beyond perf_analyzer (additive fields, ignored by its readers):
 * `intended_timestamp` of open-loop requests, the `inferperf_*` token counts
 * of LLM requests, `failed_requests` and `window_latency_histograms`, one
 * HdrHistogram (nanoseconds, compressed base64) per window, so runs from
 * several machines can be merged.
 */
import { parseJsonExact } from "../input/codec.ts";
import { windowHistogram } from "../measure/histogram.ts";
import { PartialFile } from "./_partial_file.ts";
import { type CompletedRequest, isTokenTiming } from "../types/timing.ts";
import { TokenColumns } from "./_export_tokens.ts";
import { headJson, Stretch, tailJson } from "./_export_stretch.ts";
import {
  experimentJson,
  factsOf,
  NO_FACTS,
  type RequestFacts,
  tensorsJson,
  wallClockText,
} from "./_export_json.ts";
import {
  ExportingSession,
  type RequestTracer,
  type SeenRequest,
  SlotDetail,
} from "./_export_session.ts";
import type { Tokenizer } from "../input/tokenizer.ts";
import type { LoadMode, WindowData } from "../types/results.ts";
import type { InferenceClient, OutputTensors, PreparedRequest } from "../protocol/types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { RequestTiming } from "../types/timing.ts";

export { exportTargetProblem } from "./export_target.ts";
export { doubleJson, experimentJson, tensorValueJson, wallClockNs } from "./_export_json.ts";
export type { RequestTracer, SeenRequest } from "./_export_session.ts";

/**
 * Pending records are written this often, from a timer outside the request
 * loop. Small batches keep each write short: at 5,000 req/s, 250 ms batches
 * held the event loop for milliseconds (send lag p99 3.7 ms instead of 0.5)
 * and their multi-megabyte strings raised RSS by ~60 MB.
 */
const FLUSH_INTERVAL_MS = 10;
/**
 * Bytes of claimed records serialized and written per flush: a window's
 * records are claimed at once when it ends, and written over the next
 * flushes so that no flush holds the event loop long (128 KB per 10 ms is
 * 12.8 MB/s, about three times what 5,000 req/s of 900-byte records
 * produce).
 */
const DRAIN_BYTES = 128 * 1024;

const encoder = new TextEncoder();

export interface ExportHeader {
  /** inferperf's version. */
  version: string;
  /** --service-kind. */
  serviceKind: string;
  /** --endpoint as given, whatever the service kind; "" without it. */
  endpoint: string;
}

/** Stretches kept for reuse (their typed arrays): one fills while others wait or are written. */
const SPARE_STRETCHES = 4;

/**
 * Collects completed requests (as the RequestSink of every level) and writes
 * them out. Requests are kept by reference in column arrays until the next
 * flush; serializing happens on a timer, never in the request loop.
 *
 * As perf_analyzer, an experiment holds the requests its windows counted, and
 * only them: those of the warmup, and those that completed after the last
 * window, are left out. Records go into the stretch the recorder is filling;
 * a stretch is serialized and written once a reported window is known to end
 * where it ends, and dropped when none does. Failed requests (perf_analyzer
 * stops at the first) go to the experiment's `failed_requests`, so that
 * `requests` holds answered requests only.
 *
 * The recorder reports timings only; which request was sent and what came
 * back is seen by the client wrapped with wrapClient(), which also decodes
 * every response so that outputs can be exported.
 */
export class ProfileExportWriter implements RequestTracer {
  readonly path: string;
  readonly #facts = new WeakMap<PreparedRequest, RequestFacts>();
  readonly #sources = new WeakMap<PreparedRequest, InferRequest>();
  readonly #details = new WeakMap<RequestTiming, SlotDetail>();
  /** Stand-ins for requests prepared in worker threads: facts are kept by prepared request. */
  readonly #remoteKeys = new WeakMap<InferRequest, PreparedRequest>();
  readonly #file: PartialFile;
  #opened = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #finished = false;
  /** The experiment being written: requests so far (for the separating commas) and windows. */
  #experiment:
    | {
      requests: number;
      boundaries: string[];
      histograms: string[];
      failed: string[];
      wholeRun: boolean;
      behindSchedule?: true;
    }
    | undefined;
  #experiments = 0;
  /** The stretch being filled, and those ended that no window claimed yet. */
  #stretch = new Stretch();
  #ended: Stretch[] = [];
  #spare: Stretch[] = [];
  /**
   * Stretches that windows claimed, written from #readyAt on a little at
   * each flush: the next record and its first response.
   */
  #ready: Stretch[] = [];
  #readyAt = 0;
  #readyRecord = 0;
  #readyResponse = 0;
  // Pending records, one column per field, cleared by each flush.
  #start: number[] = [];
  /** Responses per record (0 for a failed request); their times follow each other in #responsesMs. */
  #responseCounts: number[] = [];
  #responsesMs: number[] = [];
  /** The outputs of each response, beside its time; undefined: written as {}. */
  #responseOutputs: (OutputTensors | undefined)[] = [];
  #intended: number[] = [];
  /** Token-streaming requests: their token counts. */
  readonly #tokens: TokenColumns;
  #requests: (PreparedRequest | undefined)[] = [];
  #errors: (string | undefined)[] = [];
  /** Reused for every write, so that flushes do not leave buffers behind for the collector. */
  #scratch = new Uint8Array(0);
  /** The outputs last held and their JSON: clients return the same outputs for equal responses. */
  #lastOutputs: OutputTensors | undefined;
  #lastOutputsJson = "{}";

  /** `tokenizer`: counts the output text of LLM requests the server sent no usage for. */
  constructor(path: string, options: { tokenizer?: Tokenizer } = {}) {
    this.path = path;
    this.#file = new PartialFile(path, "the profile export");
    this.#tokens = new TokenColumns(options.tokenizer);
  }

  /**
   * `client` seen through the export: prepared requests are remembered (their
   * inputs are encoded once, when first written) and sessions note what each
   * load slot sent and received. Everything else passes through.
   */
  wrapClient<C extends InferenceClient>(client: C): C {
    const prepare = (request: InferRequest, target: { model: string; version: string }) => {
      const prepared = client.prepare(request, target);
      this.#sources.set(prepared, request);
      return prepared;
    };
    const openSession = async () => new ExportingSession(await client.openSession(), this.#details);
    return new Proxy(client, {
      get(target, key) {
        if (key === "prepare") return prepare;
        if (key === "openSession") return openSession;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /**
   * --workers N > 1, in a worker thread (whose writer writes nothing): what
   * the client wrapped there saw of the latest request sent with `timing`.
   */
  seen(timing: RequestTiming): SeenRequest | undefined {
    const detail = this.#details.get(timing);
    if (detail === undefined) return undefined;
    const perResponse = detail.messagesMs.length > 0;
    return {
      request: detail.request && this.#sources.get(detail.request),
      sent: timing.start !== detail.startBefore,
      responsesMs: perResponse ? detail.messagesMs : detail.responsesMs,
      outputs: detail.outputs,
      ...(perResponse ? { responseOutputs: detail.messageOutputs } : {}),
    };
  }

  /**
   * --workers N > 1, on the main thread: what a worker's client saw (its
   * seen()) of the request replayed next with `timing`, which add() then
   * writes as if this thread's client had sent it.
   */
  noteRemote(timing: RequestTiming, seen: SeenRequest): void {
    let detail = this.#details.get(timing);
    if (detail === undefined) {
      detail = new SlotDetail();
      this.#details.set(timing, detail);
    }
    let key = seen.request && this.#remoteKeys.get(seen.request);
    if (seen.request && key === undefined) {
      key = { byteLength: 0 };
      this.#remoteKeys.set(seen.request, key);
      this.#sources.set(key, seen.request);
    }
    detail.request = key;
    detail.startBefore = seen.sent ? NaN : timing.start;
    detail.reset();
    const perResponse = seen.responseOutputs;
    if (perResponse !== undefined) {
      for (let i = 0; i < perResponse.length; i++) {
        detail.messagesMs.push(seen.responsesMs[i]);
        detail.messageOutputs.push(perResponse[i]);
      }
    } else for (const ms of seen.responsesMs) detail.responsesMs.push(ms);
    detail.outputs = seen.outputs;
  }

  /** A completed request (hot path: keeps references, allocates nothing per request). */
  add(c: CompletedRequest): void {
    if (this.#experiment === undefined || this.#finished) return;
    const timing = c.timing;
    const detail = timing === undefined ? undefined : this.#details.get(timing);
    // A request is dated by its send; one that failed before the client sent it (or that the
    // load gave no timing for) by its failure.
    const sent = timing !== undefined && timing.start !== detail?.startBefore;
    this.#start.push(sent ? timing.start : performance.now());
    if (c.error !== undefined) this.#responseCounts.push(0);
    else if (detail !== undefined && detail.messagesMs.length > 0) {
      // Every message of the answer with what it carried, as perf_analyzer keeps them.
      const times = detail.messagesMs;
      this.#responseCounts.push(times.length);
      for (let i = 0; i < times.length; i++) {
        this.#responsesMs.push(times[i]);
        this.#responseOutputs.push(detail.messageOutputs[i]);
      }
    } else if (detail === undefined || detail.responsesMs.length === 0) {
      // Clients that report no responses one by one answer once, at the end.
      this.#responseCounts.push(1);
      this.#responsesMs.push(timing!.end);
      this.#responseOutputs.push(detail?.outputs);
    } else {
      // A token stream's own times are when each chunk was read, those its metrics use; the
      // callback's come after the chunk's JSON was parsed.
      const chunks = isTokenTiming(timing!) ? timing.chunkTimes : undefined;
      const times = chunks?.length === detail.responsesMs.length ? chunks : detail.responsesMs;
      this.#responseCounts.push(times.length);
      for (let i = 0; i < times.length; i++) {
        this.#responsesMs.push(times[i]);
        this.#responseOutputs.push(i === times.length - 1 ? detail.outputs : undefined);
      }
    }
    this.#tokens.add(c.error === undefined ? timing : undefined);
    this.#intended.push(c.intendedMs ?? NaN);
    this.#requests.push(detail?.request);
    this.#errors.push(c.error);
  }

  /** The recorder ended a window at `atMs`: what was added since is that stretch. */
  rotated(atMs: number): void {
    if (this.#experiment === undefined || this.#finished) return;
    this.#compact();
    this.#stretch.endMs = atMs;
    this.#stretch.lastOutputs = undefined;
    this.#ended.push(this.#stretch);
    this.#stretch = this.#newStretch();
  }

  /**
   * Starts the next experiment (load level); opens the file on the first.
   * `wholeRun`: its one window is written from 0 to the largest 64-bit time,
   * as perf_analyzer writes a run without measurement windows.
   */
  beginExperiment(mode: LoadMode, value: number, options: { wholeRun?: boolean } = {}): void {
    if (this.#finished) return;
    this.#endExperiment();
    if (!this.#opened) {
      this.#opened = true;
      this.#file.open();
      this.#write('{"experiments":[');
      this.#timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
      Deno.unrefTimer(this.#timer);
    }
    this.#write(
      `${this.#experiments++ > 0 ? "," : ""}{"experiment":${experimentJson(mode, value)},` +
        `"requests":[`,
    );
    this.#experiment = {
      requests: 0,
      boundaries: [],
      histograms: [],
      failed: [],
      wholeRun: options.wholeRun ?? false,
    };
  }

  /**
   * A window of the current experiment ended: its boundaries and histogram,
   * and the requests it counted (the stretch that ended with it); stretches
   * that ended before it belong to no window.
   */
  addWindow(window: WindowData): void {
    const experiment = this.#experiment;
    if (experiment === undefined || this.#finished) return;
    if (experiment.wholeRun) experiment.boundaries = ["0", "18446744073709551615"];
    else {
      if (experiment.boundaries.length === 0) {
        experiment.boundaries.push(wallClockText(window.startMs));
      }
      experiment.boundaries.push(wallClockText(window.endMs));
    }
    experiment.histograms.push(windowHistogram(window).encode());
    let claimed = 0;
    for (const stretch of this.#ended) {
      if (stretch.endMs > window.endMs) break;
      claimed++;
      if (stretch.endMs !== window.endMs) this.#release(stretch);
      else {
        this.#ready.push(stretch);
        for (const record of stretch.failed) experiment.failed.push(record);
      }
    }
    this.#ended.splice(0, claimed);
  }

  /** The current experiment's send-lag p99 exceeded --max-send-lag (an open-loop level). */
  markBehindSchedule(): void {
    if (this.#experiment) this.#experiment.behindSchedule = true;
  }

  /**
   * Moves the pending requests into the stretch being filled, and writes
   * part of the records that windows claimed.
   */
  flush(): void {
    this.#compact();
    this.#drain(DRAIN_BYTES);
  }

  /**
   * The pending requests into the stretch being filled, without the objects
   * they referred to: what the prepared request was (its facts), the JSON of
   * outputs and token counts.
   */
  #compact(): void {
    const count = this.#start.length;
    if (this.#experiment === undefined || count === 0) return;
    const stretch = this.#stretch;
    let response = 0;
    for (let i = 0; i < count; i++) {
      const responses = this.#responseCounts[i];
      if (this.#errors[i] === undefined) {
        stretch.start.push(this.#start[i]);
        stretch.intended.push(this.#intended[i]);
        const facts = this.#factsOf(this.#requests[i]);
        if (facts !== stretch.lastFacts) {
          stretch.lastFacts = facts;
          stretch.lastFactsAt = stretch.facts.push(facts) - 1;
        }
        stretch.factsAt.push(stretch.lastFactsAt);
        const tokens = this.#tokens.json(i);
        stretch.tokensAt.push(tokens === "" ? 0 : stretch.tokens.push(tokens) - 1);
        stretch.responseCounts.push(responses);
        for (let r = response; r < response + responses; r++) {
          stretch.responsesMs.push(this.#responsesMs[r]);
          stretch.outputsAt.push(this.#outputsAt(stretch, this.#responseOutputs[r]));
        }
      } else stretch.failed.push(this.#failedJson(i));
      response += responses;
    }
    this.#start.length = 0;
    this.#responseCounts.length = 0;
    this.#responsesMs.length = 0;
    this.#responseOutputs.length = 0;
    this.#intended.length = 0;
    this.#tokens.clear();
    this.#requests.length = 0;
    this.#errors.length = 0;
  }

  /**
   * Closes every open array, writes the header fields and renames the file
   * into place. Synchronous and idempotent; nothing is written when no
   * experiment started.
   */
  finish(header: ExportHeader): void {
    if (this.#finished) return;
    this.#endExperiment();
    this.#finished = true;
    clearInterval(this.#timer);
    this.#write(
      `],"version":${JSON.stringify(header.version)},` +
        `"service_kind":${JSON.stringify(header.serviceKind)},` +
        `"endpoint":${JSON.stringify(header.endpoint)}}\n`,
    );
    this.#file.finish();
  }

  /**
   * Serializes and writes claimed records, about `bytes` bytes of them. Each
   * record is encoded as soon as it is serialized: a batch's text kept whole
   * until written outlives the young generation and stays until a full
   * collection (the last window's, written at once when a level ends, took
   * 45 MB at 5,000 req/s).
   */
  #drain(bytes: number): void {
    const experiment = this.#experiment;
    const ready = this.#ready;
    if (experiment === undefined || ready.length === this.#readyAt) return;
    let used = 0;
    let written = 0;
    while (this.#readyAt < ready.length && written + used < bytes) {
      const stretch = ready[this.#readyAt];
      const i = this.#readyRecord;
      if (i === stretch.count) {
        this.#release(stretch);
        this.#readyAt++;
        this.#readyRecord = 0;
        this.#readyResponse = 0;
        continue;
      }
      const json = `${experiment.requests++ > 0 ? "," : ""}${stretch.json(i, this.#readyResponse)}`;
      this.#readyRecord++;
      this.#readyResponse += stretch.responseCounts.data[i];
      // UTF-8 takes at most 3 bytes per UTF-16 code unit.
      if (used + json.length * 3 > this.#scratch.byteLength) {
        this.#writeBytes(this.#scratch.subarray(0, used));
        written += used;
        used = 0;
        this.#reserve(Math.max(DRAIN_BYTES, json.length * 3));
      }
      used += encoder.encodeInto(json, this.#scratch.subarray(used)).written;
    }
    if (this.#readyAt === ready.length) {
      ready.length = 0;
      this.#readyAt = 0;
    }
    this.#writeBytes(this.#scratch.subarray(0, used));
  }

  /** Ends the experiment; requests no window of it counted are dropped. */
  #endExperiment(): void {
    const experiment = this.#experiment;
    if (experiment === undefined) return;
    this.#compact();
    this.#drain(Infinity);
    this.#experiment = undefined;
    this.#release(this.#stretch);
    for (const stretch of this.#ended) this.#release(stretch);
    this.#stretch = this.#newStretch();
    this.#ended = [];
    this.#write(
      `],"window_boundaries":[${experiment.boundaries.join(",")}],` +
        `"failed_requests":[${experiment.failed.join(",")}],` +
        `"window_latency_histograms":${JSON.stringify(experiment.histograms)}` +
        (experiment.behindSchedule ? `,"${BEHIND_SCHEDULE_FIELD}":true}` : "}"),
    );
  }

  #factsOf(prepared: PreparedRequest | undefined): RequestFacts {
    if (prepared === undefined) return NO_FACTS;
    let facts = this.#facts.get(prepared);
    if (facts === undefined) {
      const source = this.#sources.get(prepared);
      facts = source ? factsOf(source) : NO_FACTS;
      this.#facts.set(prepared, facts);
    }
    return facts;
  }

  /** Failed pending record `i`: no responses, and why. */
  #failedJson(i: number): string {
    const head = headJson(this.#start[i], this.#factsOf(this.#requests[i]));
    return `${head},"error":${JSON.stringify(this.#errors[i])}${tailJson(this.#intended[i])}`;
  }

  /** Where `outputs` are in the stretch's outputs; 0 (`{}`) for none. */
  #outputsAt(stretch: Stretch, outputs: OutputTensors | undefined): number {
    if (outputs === undefined) return 0;
    if (outputs !== stretch.lastOutputs) {
      if (outputs !== this.#lastOutputs) {
        this.#lastOutputs = outputs;
        this.#lastOutputsJson = tensorsJson(outputs);
      }
      stretch.lastOutputs = outputs;
      stretch.lastOutputsAt = stretch.outputs.push(this.#lastOutputsJson) - 1;
    }
    return stretch.lastOutputsAt;
  }

  #newStretch(): Stretch {
    return this.#spare.pop() ?? new Stretch();
  }

  /** A stretch written or dropped: its storage is reused. */
  #release(stretch: Stretch): void {
    stretch.reset();
    if (this.#spare.length < SPARE_STRETCHES) this.#spare.push(stretch);
  }

  #write(text: string): void {
    if (!this.#file.writable) return;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.#reserve(text.length * 3);
    this.#writeBytes(this.#scratch.subarray(0, encoder.encodeInto(text, this.#scratch).written));
  }

  #reserve(bytes: number): void {
    if (this.#scratch.byteLength < bytes) this.#scratch = new Uint8Array(bytes);
  }

  #writeBytes(bytes: Uint8Array): void {
    this.#file.write(bytes);
  }
}

/** A request of a profile export as read back (timestamps in ns since the epoch). */
export interface ExportedRequest {
  timestamp: bigint;
  sequence_id?: number | bigint;
  request_inputs: Record<string, unknown>;
  response_timestamps: bigint[];
  response_outputs: Record<string, unknown>[];
  intended_timestamp?: bigint;
  inferperf_output_tokens?: number;
  inferperf_input_tokens?: number;
  inferperf_server_input_tokens?: number;
  inferperf_reasoning_responses?: number;
  inferperf_token_source?: "usage" | "tokenizer" | "chunks";
}

/** A failed request (inferperf only): no responses, and why. */
export interface FailedRequest {
  timestamp: bigint;
  sequence_id?: number | bigint;
  request_inputs: Record<string, unknown>;
  error: string;
  intended_timestamp?: bigint;
}

export interface ExportedExperiment {
  experiment: { mode: "concurrency" | "request_rate"; value: number };
  requests: ExportedRequest[];
  window_boundaries: bigint[];
  /** inferperf only. */
  failed_requests?: FailedRequest[];
  /** HdrHistogram compressed base64, one per window (inferperf only). */
  window_latency_histograms?: string[];
  /** inferperf only: present (true) when the level's send-lag p99 exceeded --max-send-lag. */
  inferperf_behind_schedule?: true;
}

/** The experiment's field that marks a level behind schedule; named so that no tool takes it for its own. */
export const BEHIND_SCHEDULE_FIELD = "inferperf_behind_schedule";

export interface ProfileExport {
  experiments: ExportedExperiment[];
  version: string;
  service_kind: string;
  endpoint: string;
}

/**
 * Parses a profile export keeping nanosecond timestamps exact: integers
 * beyond 2^53 become bigints. The structure is not validated.
 */
export function parseProfileExport(text: string): ProfileExport {
  return parseJsonExact(text) as ProfileExport;
}
