/**
 * The responses perf_analyzer's OpenAI client records of a streamed answer,
 * for the profile export. It hands over one response per call of curl's
 * write callback, holding exactly the bytes of that call: curl calls it once
 * per piece of the body a read brought (a chunked body: once per chunk's
 * piece in that read) and at most CURL_MAX_WRITE_SIZE bytes at a time. So a
 * response may hold several events, part of one, comment, `event:` or `id:`
 * lines: the bytes as sent. The piece that contains `data: [DONE]` is the
 * last (later ones are not recorded); a stream that ends without such a
 * piece gets an empty last response when the transfer completes.
 */
import { encodeBytesElements } from "../input/codec.ts";
import type { OutputTensors } from "./types.ts";

/** curl's CURL_MAX_WRITE_SIZE: the most its write callback is handed at once. */
export const CURL_MAX_WRITE_SIZE = 16384;

/** What perf_analyzer looks for in a piece to end the answer. */
const DONE = new TextEncoder().encode("data: [DONE]");

export type OutputsCallback = (outputs: OutputTensors, atMs: number) => void;

/** The outputs of one response: one BYTES element, as the export writes it. */
export function responseOutputs(name: string, data: string | Uint8Array): OutputTensors {
  return [{ name, datatype: "BYTES", shape: [1], data: encodeBytesElements([data]) }];
}

export class CurlResponses {
  readonly #name: string;
  #onOutputs: OutputsCallback | undefined;
  #done = false;

  /** `name`: the output the responses are recorded under. */
  constructor(name: string) {
    this.#name = name;
  }

  /** A new answer, whose responses go to `onOutputs`. */
  begin(onOutputs: OutputsCallback): void {
    this.#onOutputs = onOutputs;
    this.#done = false;
  }

  /** A piece of the body as the reader handed it over (valid only during the call), read at `atMs`. */
  piece(data: Uint8Array, atMs: number): void {
    for (let at = 0; at < data.length && !this.#done; at += CURL_MAX_WRITE_SIZE) {
      const part = data.subarray(at, at + CURL_MAX_WRITE_SIZE);
      if (includes(part, DONE)) this.#done = true;
      this.#onOutputs!(responseOutputs(this.#name, wholeCharacters(part)), atMs);
    }
  }

  /** The body ended at `atMs`. */
  end(atMs: number): void {
    if (!this.#done) this.#onOutputs!(responseOutputs(this.#name, ""), atMs);
    this.#onOutputs = undefined;
  }
}

function includes(bytes: Uint8Array, pattern: Uint8Array): boolean {
  for (let i = bytes.indexOf(pattern[0]); i !== -1; i = bytes.indexOf(pattern[0], i + 1)) {
    if (i + pattern.length > bytes.length) return false;
    let j = 1;
    while (j < pattern.length && bytes[i + j] === pattern[j]) j++;
    if (j === pattern.length) return true;
  }
  return false;
}

/**
 * `bytes` without the parts of a UTF-8 character cut off at either end. A
 * read can split a character; perf_analyzer writes each half raw, making
 * its file invalid UTF-8, and genai-perf reads the file ignoring what does
 * not decode, so both halves drop out. The export stays valid UTF-8 and
 * reads the same.
 */
export function wholeCharacters(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < 3 && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  let end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= start; back++) {
    const b = bytes[end - back];
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (length > back) end -= back;
    break;
  }
  return start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end);
}
