/**
 * Completed requests on their way from a worker thread to the main thread's
 * Recorder: a worker's loads record into a RecordBatch, which packs each
 * record into a row of doubles; the batch leaves as one transferred
 * Float64Array (plus the distinct error messages) and replay() calls the
 * Recorder as the loads would have, with times moved to the main thread's
 * clock.
 */
import type { RequestRecorder } from "../../measure/recorder.ts";
import { GrowableArray } from "../../measure/samples.ts";
import { isTokenTiming, type TokenTiming } from "../../types/timing.ts";
import type { InferRequest, Tensor } from "../../types/tensor.ts";
import type { RequestTiming } from "../../types/timing.ts";
import type { ProfileExportWriter, SeenRequest } from "../../report/export.ts";
import type { OutputTensors } from "../../protocol/types.ts";

const VALID = 0;
const FAILED = 1;
const SEND = 2;
const CANCELLED = 3;

// Columns of a row. A send uses START for its intended and SEND_END for its dispatch time.
const KIND = 0;
const START = 1;
const SEND_END = 2;
const RECV_START = 3;
const END = 4;
const RESPONSES = 5;
/** NaN: the client reported no first response (it is then `end`). */
const FIRST_RESPONSE = 6;
/** NaN: closed loop. */
const INTENDED = 7;
/** NaN: not a token-streaming request. */
const OUTPUT_TOKENS = 8;
const INPUT_TOKENS = 9;
const USAGE = 10;
/** Failed requests: the index of the message in the batch's messages; sends: 1 if blocked. */
const DETAIL = 11;
// Token-streaming requests (NaN: none): the second and last output's arrival, the server's prompt
// tokens, the chunks with reasoning and the usage field's reasoning tokens.
const SECOND_RESPONSE = 12;
const LAST_RESPONSE = 13;
const SERVER_INPUT_TOKENS = 14;
const REASONING_CHUNKS = 15;
const REASONING_USAGE = 16;
const CACHED_TOKENS = 17;
const REQUESTED_TOKENS = 18;
const COLUMNS = 19;

/** Rows a batch holds before it must leave. */
const CAPACITY = 4096;

/** What crosses the thread boundary. */
export interface RecordMessage {
  rows: Float64Array<ArrayBuffer>;
  messages: string[];
  /** --profile-export-file: what the worker's client saw of the requests of the rows. */
  seen?: SeenMessage;
}

/**
 * What a worker's client saw of each row that carries a timing, in row order
 * (packed rather than cloned per request, and output bytes copied out of the
 * response buffers they view). `numbers` holds per row: inputs id (-1:
 * unknown), sequence id (0: none), sent (1/0), the response count and times,
 * then an output block: the output count (-1: none; -2: the outputs of the
 * last row that had some) and per output its name and datatype (indices in
 * `strings`), rank, dims and byte length, whose bytes follow each other in
 * `bytes`; or -3 and one output block per response, for clients that report
 * each response's outputs.
 */
export interface SeenMessage {
  numbers: Float64Array<ArrayBuffer>;
  strings: string[];
  bytes: Uint8Array<ArrayBuffer>;
  /** The inputs first used in this batch, by id: sent once, the rows name them by id. */
  inputs: [number, Tensor[]][];
}

/** Output count of a row whose outputs are those of the last row that had some. */
const SAME_OUTPUTS = -2;
/** In place of the output count: one output block per response follows. */
const PER_RESPONSE = -3;

/** Packs what a worker's client saw (ProfileExportWriter.seen) into a SeenMessage. */
class SeenPacker {
  readonly #numbers = new GrowableArray((n) => new Float64Array(n));
  readonly #bytes = new GrowableArray((n) => new Uint8Array(n));
  #strings: string[] = [];
  readonly #stringIndex = new Map<string, number>();
  #inputs: [number, Tensor[]][] = [];
  /** Every inputs array met so far (the plan's, shared by its sequences' requests), by id. */
  readonly #inputIds = new Map<readonly Tensor[], number>();
  /**
   * The outputs last packed in this batch. The client hands the same object
   * for a response with the same bytes (lib/protocol/_response_memo.ts), so
   * a repeat costs one number here, and the main thread gets one object
   * again, whose JSON the export then reuses.
   */
  #lastOutputs: OutputTensors | undefined;

  pack(seen: SeenRequest | undefined, options: { outputs: boolean }): void {
    const numbers = this.#numbers;
    const request = seen?.request;
    numbers.push(request === undefined ? -1 : this.#inputsId(request.inputs));
    const sequenceId = request?.parameters?.sequence_id;
    numbers.push(
      typeof sequenceId === "number" || typeof sequenceId === "bigint" ? Number(sequenceId) : 0,
    );
    numbers.push(seen === undefined || seen.sent ? 1 : 0);
    const times = seen?.responsesMs ?? [];
    numbers.push(times.length);
    for (let i = 0; i < times.length; i++) numbers.push(times[i]);
    const perResponse = options.outputs ? seen?.responseOutputs : undefined;
    if (perResponse !== undefined) {
      numbers.push(PER_RESPONSE);
      for (const outputs of perResponse) this.#packOutputs(outputs);
    } else this.#packOutputs(options.outputs ? seen?.outputs : undefined);
  }

  /** One output block: a count (or SAME_OUTPUTS, or -1 for none), then each tensor. */
  #packOutputs(outputs: OutputTensors | undefined): void {
    const numbers = this.#numbers;
    if (outputs !== undefined && outputs === this.#lastOutputs) {
      numbers.push(SAME_OUTPUTS);
      return;
    }
    if (outputs !== undefined) this.#lastOutputs = outputs;
    numbers.push(outputs === undefined ? -1 : outputs.length);
    for (const tensor of outputs ?? []) {
      numbers.push(this.#string(tensor.name));
      numbers.push(this.#string(tensor.datatype));
      numbers.push(tensor.shape.length);
      for (const dim of tensor.shape) numbers.push(dim);
      numbers.push(tensor.data.byteLength);
      this.#bytes.reserve(tensor.data.byteLength).set(tensor.data, this.#bytes.length);
      this.#bytes.length += tensor.data.byteLength;
    }
  }

  take(): SeenMessage {
    const message = {
      numbers: this.#numbers.take(),
      strings: this.#strings,
      bytes: this.#bytes.take(),
      inputs: this.#inputs,
    };
    this.#strings = [];
    this.#stringIndex.clear();
    this.#inputs = [];
    this.#lastOutputs = undefined;
    return message;
  }

  #inputsId(inputs: readonly Tensor[]): number {
    let id = this.#inputIds.get(inputs);
    if (id === undefined) {
      id = this.#inputIds.size;
      this.#inputIds.set(inputs, id);
      // Copies: a tensor may view a larger buffer, which cloning would copy whole.
      this.#inputs.push([id, inputs.map((t) => ({ ...t, data: t.data.slice() }))]);
    }
    return id;
  }

  #string(text: string): number {
    let index = this.#stringIndex.get(text);
    if (index === undefined) {
      index = this.#strings.push(text) - 1;
      this.#stringIndex.set(text, index);
    }
    return index;
  }
}

export class RecordBatch implements RequestRecorder {
  readonly #rows = new Float64Array(CAPACITY * COLUMNS);
  #count = 0;
  #lastCompletedMs = -Infinity;
  #messages: string[] = [];
  readonly #messageIndex = new Map<string, number>();
  readonly #onFull: () => void;
  readonly #seen: ((timing: RequestTiming) => SeenRequest | undefined) | undefined;
  readonly #packer: SeenPacker | undefined;

  /**
   * `onFull` must take() the batch: it is called when no row is left.
   * `seen` (--profile-export-file): what the client saw of the request of a
   * timing, packed with its row.
   */
  constructor(
    onFull: () => void,
    options: { seen?: (timing: RequestTiming) => SeenRequest | undefined } = {},
  ) {
    this.#onFull = onFull;
    this.#seen = options.seen;
    this.#packer = options.seen && new SeenPacker();
  }

  get size(): number {
    return this.#count;
  }

  /** When a request (valid or failed) last completed on this thread: performance.now() time. */
  get lastCompletedMs(): number {
    return this.#lastCompletedMs;
  }

  record(timing: RequestTiming, intendedMs?: number): void {
    this.#lastCompletedMs = timing.end;
    const row = this.#row(VALID, timing);
    const rows = this.#rows;
    rows[row + INTENDED] = intendedMs ?? NaN;
    if (isTokenTiming(timing)) {
      rows[row + OUTPUT_TOKENS] = timing.outputTokens;
      rows[row + INPUT_TOKENS] = timing.inputTokens;
      rows[row + USAGE] = timing.usage ? 1 : 0;
      rows[row + SECOND_RESPONSE] = timing.secondResponse ?? NaN;
      rows[row + LAST_RESPONSE] = timing.lastResponse ?? NaN;
      rows[row + SERVER_INPUT_TOKENS] = timing.serverInputTokens ?? -1;
      rows[row + REASONING_CHUNKS] = timing.reasoningChunks ?? 0;
      rows[row + REASONING_USAGE] = timing.reasoningUsage ?? -1;
      rows[row + CACHED_TOKENS] = timing.cachedTokens ?? -1;
      rows[row + REQUESTED_TOKENS] = timing.requestedTokens ?? -1;
    }
    this.#packer?.pack(this.#seen!(timing), { outputs: true });
    this.#added();
  }

  recordSend(intendedMs: number, dispatchedMs: number, blocked: boolean): void {
    const row = this.#row(SEND, undefined);
    this.#rows[row + START] = intendedMs;
    this.#rows[row + SEND_END] = dispatchedMs;
    this.#rows[row + DETAIL] = blocked ? 1 : 0;
    this.#added();
  }

  recordError(message: string, timing?: RequestTiming): void {
    this.#lastCompletedMs = performance.now();
    const row = this.#row(FAILED, timing);
    let index = this.#messageIndex.get(message);
    if (index === undefined) {
      index = this.#messages.push(message) - 1;
      this.#messageIndex.set(message, index);
    }
    this.#rows[row + DETAIL] = index;
    if (timing !== undefined) this.#packer?.pack(this.#seen!(timing), { outputs: false });
    this.#added();
  }

  recordCancelled(): void {
    this.#lastCompletedMs = performance.now();
    this.#row(CANCELLED, undefined);
    this.#added();
  }

  /** The rows so far, copied to their own buffer (to be transferred), and an empty batch. */
  take(): RecordMessage {
    const message = {
      rows: this.#rows.slice(0, this.#count * COLUMNS),
      messages: this.#messages,
      ...(this.#packer ? { seen: this.#packer.take() } : {}),
    };
    this.#count = 0;
    this.#messages = [];
    this.#messageIndex.clear();
    return message;
  }

  #row(kind: number, timing: RequestTiming | undefined): number {
    const row = this.#count * COLUMNS;
    const rows = this.#rows;
    rows.fill(NaN, row, row + COLUMNS);
    rows[row + KIND] = kind;
    if (timing !== undefined) {
      rows[row + START] = timing.start;
      rows[row + SEND_END] = timing.sendEnd;
      rows[row + RECV_START] = timing.recvStart;
      rows[row + END] = timing.end;
      rows[row + RESPONSES] = timing.responses;
      rows[row + FIRST_RESPONSE] = timing.firstResponse ?? NaN;
    }
    return row;
  }

  #added(): void {
    if (++this.#count === CAPACITY) this.#onFull();
  }
}

/** How many sequences' requests RemoteRequests keeps before starting afresh. */
const MAX_SEQUENCES = 4096;

/**
 * The main thread's side of one worker's SeenMessages: the worker's requests
 * rebuilt once per inputs and sequence id (so that the export encodes each
 * one's inputs once, as for this thread's own), handed to the export before
 * each row is replayed.
 */
export class RemoteRequests {
  readonly #writer: Pick<ProfileExportWriter, "noteRemote">;
  readonly #inputs = new Map<number, Tensor[]>();
  /** Requests by sequence id (0: none), then inputs id. */
  readonly #requests = new Map<number, InferRequest[]>();
  /** Reused for every replayed request: the export copies what it keeps. */
  readonly #seen: SeenRequest & { responsesMs: number[] } = {
    request: undefined,
    sent: true,
    responsesMs: [],
    outputs: undefined,
  };
  #message: SeenMessage | undefined;
  /** The outputs of the last row that had some, for the rows that repeat them. */
  #lastOutputs: Tensor[] | undefined;
  #number = 0;
  #byte = 0;

  constructor(writer: Pick<ProfileExportWriter, "noteRemote">) {
    this.#writer = writer;
  }

  /** Starts reading `message`. */
  begin(message: SeenMessage): void {
    for (const [id, tensors] of message.inputs) this.#inputs.set(id, tensors);
    this.#message = message;
    this.#number = 0;
    this.#byte = 0;
  }

  /** Hands the export the request of the next row, replayed with `timing`; times move by `offsetMs`. */
  next(timing: RequestTiming, offsetMs: number): void {
    const numbers = this.#message!.numbers;
    let n = this.#number;
    const inputsId = numbers[n++];
    const sequenceId = numbers[n++];
    const seen = this.#seen;
    seen.request = inputsId < 0 ? undefined : this.#request(inputsId, sequenceId);
    seen.sent = numbers[n++] === 1;
    const times = seen.responsesMs;
    times.length = numbers[n++];
    for (let i = 0; i < times.length; i++) times[i] = numbers[n++] + offsetMs;
    this.#number = n;
    if (numbers[n] === PER_RESPONSE) {
      this.#number++;
      seen.outputs = undefined;
      seen.responseOutputs = times.map(() => this.#outputs() ?? []);
    } else {
      seen.outputs = this.#outputs();
      seen.responseOutputs = undefined;
    }
    this.#writer.noteRemote(timing, seen);
  }

  /** The output block at the current position. */
  #outputs(): Tensor[] | undefined {
    const { numbers, strings, bytes } = this.#message!;
    let n = this.#number;
    const outputCount = numbers[n++];
    let outputs: Tensor[] | undefined;
    if (outputCount === SAME_OUTPUTS) outputs = this.#lastOutputs;
    else if (outputCount >= 0) {
      outputs = [];
      for (let i = 0; i < outputCount; i++) {
        const name = strings[numbers[n++]];
        const datatype = strings[numbers[n++]] as Tensor["datatype"];
        const shape = Array.from(numbers.subarray(n + 1, n + 1 + numbers[n]));
        n += 1 + shape.length;
        const data = bytes.subarray(this.#byte, this.#byte + numbers[n++]);
        this.#byte += data.byteLength;
        outputs.push({ name, datatype, shape, data });
      }
      this.#lastOutputs = outputs;
    }
    this.#number = n;
    return outputs;
  }

  #request(inputsId: number, sequenceId: number): InferRequest {
    let requests = this.#requests.get(sequenceId);
    if (requests === undefined) {
      // Sequence ids keep coming: old sequences' requests go (the export keeps what it still needs).
      if (this.#requests.size >= MAX_SEQUENCES) this.#requests.clear();
      requests = [];
      this.#requests.set(sequenceId, requests);
    }
    return requests[inputsId] ??= {
      inputs: this.#inputs.get(inputsId)!,
      outputs: [],
      ...(sequenceId === 0 ? {} : { parameters: { sequence_id: sequenceId } }),
    };
  }
}

/** Reused for every replayed request: the Recorder keeps no reference to a timing. */
const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
const tokenTiming: TokenTiming = { ...timing, outputTokens: 0, inputTokens: -1, usage: false };

/**
 * Feeds `message` to `recorder` in the order the worker recorded it; times
 * move by `offsetMs` (the worker's performance.timeOrigin minus this
 * thread's), which makes them exact on this thread's clock.
 */
export function replay(
  message: RecordMessage,
  options: { recorder: RequestRecorder; offsetMs: number; remote?: RemoteRequests },
): void {
  const { rows, messages } = message;
  const { recorder, offsetMs } = options;
  const remote = message.seen && options.remote;
  if (remote) remote.begin(message.seen!);
  for (let row = 0; row < rows.length; row += COLUMNS) {
    const kind = rows[row + KIND];
    if (kind === SEND) {
      recorder.recordSend(
        rows[row + START] + offsetMs,
        rows[row + SEND_END] + offsetMs,
        rows[row + DETAIL] === 1,
      );
      continue;
    }
    if (kind === CANCELLED) {
      recorder.recordCancelled();
      continue;
    }
    const timed = !Number.isNaN(rows[row + START]);
    const tokens = !Number.isNaN(rows[row + OUTPUT_TOKENS]);
    const t = tokens ? tokenTiming : timing;
    if (timed) {
      t.start = rows[row + START] + offsetMs;
      t.sendEnd = rows[row + SEND_END] + offsetMs;
      t.recvStart = rows[row + RECV_START] + offsetMs;
      t.end = rows[row + END] + offsetMs;
      t.responses = rows[row + RESPONSES];
      const first = rows[row + FIRST_RESPONSE];
      t.firstResponse = Number.isNaN(first) ? undefined : first + offsetMs;
    }
    if (tokens) {
      tokenTiming.outputTokens = rows[row + OUTPUT_TOKENS];
      tokenTiming.inputTokens = rows[row + INPUT_TOKENS];
      tokenTiming.usage = rows[row + USAGE] === 1;
      const second = rows[row + SECOND_RESPONSE];
      const last = rows[row + LAST_RESPONSE];
      tokenTiming.secondResponse = Number.isNaN(second) ? undefined : second + offsetMs;
      tokenTiming.lastResponse = Number.isNaN(last) ? undefined : last + offsetMs;
      tokenTiming.serverInputTokens = rows[row + SERVER_INPUT_TOKENS];
      tokenTiming.reasoningChunks = rows[row + REASONING_CHUNKS];
      tokenTiming.reasoningUsage = rows[row + REASONING_USAGE];
      tokenTiming.cachedTokens = rows[row + CACHED_TOKENS];
      tokenTiming.requestedTokens = rows[row + REQUESTED_TOKENS];
    }
    if (timed) remote?.next(t, offsetMs);
    if (kind === FAILED) {
      recorder.recordError(messages[rows[row + DETAIL]], timed ? t : undefined);
    } else {
      const intended = rows[row + INTENDED];
      recorder.record(t, Number.isNaN(intended) ? undefined : intended + offsetMs);
    }
  }
}
