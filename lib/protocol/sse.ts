/**
 * Server-sent events (`text/event-stream`, the WHATWG event stream format)
 * parsed incrementally from the bytes of a streamed response body, as the
 * OpenAI-compatible streaming endpoints send them.
 */
import { ProtocolError } from "./errors.ts";

/** Receives each complete event: its data lines joined by "\n", and its type ("message" by default). */
export type SseHandler = (data: string, type: string) => void;

/** A line longer than this (1 MiB) is refused rather than buffered without bound. */
export const MAX_SSE_LINE = 1 << 20;

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

export class SseParser {
  readonly #onEvent: SseHandler;
  #decoder = new TextDecoder();
  /** The start of a line whose end has not arrived yet. */
  #partial = "";
  /** The previous piece ended in CR: a LF starting the next one belongs to it. */
  #skipLf = false;
  #data = "";
  #dataLines = 0;
  #type = "";

  constructor(onEvent: SseHandler) {
    this.#onEvent = onEvent;
  }

  /** Parses the next piece of the stream; events complete in it are handed over at once. */
  push(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes, { stream: true });
    let start = 0;
    if (this.#skipLf && text.length > 0) {
      this.#skipLf = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      const piece = text.slice(start, i);
      const line = this.#partial === "" ? piece : this.#partial + piece;
      this.#partial = "";
      if (c === CR) {
        if (i + 1 === text.length) this.#skipLf = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      start = i + 1;
      this.#line(line);
    }
    if (start < text.length) {
      this.#partial += text.slice(start);
      if (this.#partial.length > MAX_SSE_LINE) {
        throw new ProtocolError(`A server-sent event line exceeds ${MAX_SSE_LINE} characters`);
      }
    }
  }

  /** Forgets everything buffered (the next stream starts afresh). An unfinished event is dropped. */
  reset(): void {
    this.#decoder = new TextDecoder();
    this.#partial = "";
    this.#skipLf = false;
    this.#data = "";
    this.#dataLines = 0;
    this.#type = "";
  }

  #line(line: string): void {
    if (line.length === 0) {
      if (this.#dataLines > 0) {
        const data = this.#data;
        const type = this.#type === "" ? "message" : this.#type;
        this.#data = "";
        this.#dataLines = 0;
        this.#type = "";
        this.#onEvent(data, type);
      } else {
        this.#type = "";
      }
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let valueStart = colon < 0 ? line.length : colon + 1;
    if (line.charCodeAt(valueStart) === SPACE) valueStart++;
    const value = line.slice(valueStart);
    if (field === "data") {
      this.#data = this.#dataLines === 0 ? value : `${this.#data}\n${value}`;
      this.#dataLines++;
    } else if (field === "event") {
      this.#type = value;
    }
    // "id" and "retry" concern reconnecting event sources, which a benchmark never does.
  }
}
