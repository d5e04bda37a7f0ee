/**
 * Completed requests on their way from a worker thread to the main thread's
 * Recorder: a worker's loads record into a RecordBatch, which packs each
 * record into a row of doubles; the batch leaves as one transferred
 * Float64Array (plus the distinct error messages) and replay() calls the
 * Recorder as the loads would have, with times moved to the main thread's
 * clock.
 */
import type { RequestRecorder } from "../../measure/recorder.ts";
import { isTokenTiming, type TokenTiming } from "../../measure/types.ts";
import type { RequestTiming } from "../../protocol/types.ts";

const VALID = 0;
const FAILED = 1;
const SEND = 2;

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
const COLUMNS = 12;

/** Rows a batch holds before it must leave. */
const CAPACITY = 4096;

/** What crosses the thread boundary. */
export interface RecordMessage {
  rows: Float64Array<ArrayBuffer>;
  messages: string[];
}

export class RecordBatch implements RequestRecorder {
  readonly #rows = new Float64Array(CAPACITY * COLUMNS);
  #count = 0;
  #messages: string[] = [];
  readonly #messageIndex = new Map<string, number>();
  readonly #onFull: () => void;

  /** `onFull` must take() the batch: it is called when no row is left. */
  constructor(onFull: () => void) {
    this.#onFull = onFull;
  }

  get size(): number {
    return this.#count;
  }

  record(timing: RequestTiming, intendedMs?: number): void {
    const row = this.#row(VALID, timing);
    const rows = this.#rows;
    rows[row + INTENDED] = intendedMs ?? NaN;
    if (isTokenTiming(timing)) {
      rows[row + OUTPUT_TOKENS] = timing.outputTokens;
      rows[row + INPUT_TOKENS] = timing.inputTokens;
      rows[row + USAGE] = timing.usage ? 1 : 0;
    }
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
    const row = this.#row(FAILED, timing);
    let index = this.#messageIndex.get(message);
    if (index === undefined) {
      index = this.#messages.push(message) - 1;
      this.#messageIndex.set(message, index);
    }
    this.#rows[row + DETAIL] = index;
    this.#added();
  }

  /** The rows so far, copied to their own buffer (to be transferred), and an empty batch. */
  take(): RecordMessage {
    const message = {
      rows: this.#rows.slice(0, this.#count * COLUMNS),
      messages: this.#messages,
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
  options: { recorder: RequestRecorder; offsetMs: number },
): void {
  const { rows, messages } = message;
  const { recorder, offsetMs } = options;
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
    }
    if (kind === FAILED) {
      recorder.recordError(messages[rows[row + DETAIL]], timed ? t : undefined);
    } else {
      const intended = rows[row + INTENDED];
      recorder.record(t, Number.isNaN(intended) ? undefined : intended + offsetMs);
    }
  }
}
