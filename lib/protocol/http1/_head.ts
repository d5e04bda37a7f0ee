/**
 * The HTTP/1.1 response head: where it ends and its parser, with the
 * byte-level helpers (ASCII classes, searches, numbers, tokens) they and the
 * body reader use.
 */
import { ProtocolError } from "../errors.ts";

/** The parts of a response head the clients act on. */
export interface ResponseHead {
  status: number;
  /** -1 when the response carries no content-length (chunked or read-until-close). */
  contentLength: number;
  chunked: boolean;
  /** False when the server closes the connection after this response. */
  keepAlive: boolean;
  /** "" when absent. */
  contentType: string;
  /** The binary tensor extension's JSON header length; -1 when absent. */
  inferenceHeaderContentLength: number;
}

export const CR = 13;
export const LF = 10;
const SP = 32;
const TAB = 9;
const COLON = 58;
export const SEMICOLON = 59;
const COMMA = 44;

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

export const EMPTY = new Uint8Array(0);
const HTTP_1 = encoder.encode("http/1.");
const CONTENT_LENGTH = encoder.encode("content-length");
const TRANSFER_ENCODING = encoder.encode("transfer-encoding");
const CONNECTION = encoder.encode("connection");
const CONTENT_TYPE = encoder.encode("content-type");
const INFERENCE_HEADER = encoder.encode("inference-header-content-length");
const CHUNKED = encoder.encode("chunked");
const CLOSE = encoder.encode("close");
const KEEP_ALIVE = encoder.encode("keep-alive");

/** Case-insensitive compare of buf[start, end) with a lower-case token. */
function equalsLower(
  buf: Uint8Array,
  start: number,
  end: number,
  lower: Uint8Array,
): boolean {
  if (end - start !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    // Setting bit 5 lower-cases ASCII letters and leaves "-" and digits unchanged.
    if ((buf[start + i] | 0x20) !== lower[i]) return false;
  }
  return true;
}

function isDigit(b: number): boolean {
  return b >= 48 && b <= 57;
}

export function isWhitespace(b: number): boolean {
  return b === SP || b === TAB;
}

// Plain loops instead of Uint8Array.prototype.indexOf: the builtin's per-call
// overhead dominated the profile for the short scans a response head needs.

/** Index of the first `byte` in buf[from, end), or -1. */
function indexOfByte(buf: Uint8Array, byte: number, from: number, end: number): number {
  for (let i = from; i < end; i++) if (buf[i] === byte) return i;
  return -1;
}

/** Index of the CR of the first CRLF in buf[from, end), or -1. */
export function indexOfCrlf(buf: Uint8Array, from: number, end: number): number {
  // Looks at every second byte: only an LF there can end a match, and only a CR means step by one.
  let i = from;
  while (i + 1 < end) {
    const b = buf[i + 1];
    if (b === LF) {
      if (buf[i] === CR) return i;
      i += 2;
    } else {
      i += b === CR ? 1 : 2;
    }
  }
  return -1;
}

export function quote(buf: Uint8Array, start: number, end: number): string {
  return JSON.stringify(latin1.decode(buf.subarray(start, Math.min(end, start + 100))));
}

function parseDecimal(buf: Uint8Array, start: number, end: number, what: string): number {
  if (start === end) throw new ProtocolError(`Invalid ${what} ""`);
  let n = 0;
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (!isDigit(b)) throw new ProtocolError(`Invalid ${what} ${quote(buf, start, end)}`);
    n = n * 10 + (b - 48);
  }
  if (!Number.isSafeInteger(n)) {
    throw new ProtocolError(`Invalid ${what} ${quote(buf, start, end)}`);
  }
  return n;
}

export function hexValue(b: number): number {
  if (isDigit(b)) return b - 48;
  const l = b | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** Whether a comma-separated header value holds the token (case-insensitive). */
function hasToken(buf: Uint8Array, start: number, end: number, token: Uint8Array): boolean {
  let i = start;
  while (i < end) {
    let stop = indexOfByte(buf, COMMA, i, end);
    if (stop === -1) stop = end;
    let a = i;
    let b = stop;
    while (a < b && isWhitespace(buf[a])) a++;
    while (b > a && isWhitespace(buf[b - 1])) b--;
    if (equalsLower(buf, a, b, token)) return true;
    i = stop + 1;
  }
  return false;
}

/** The end of a head in buf[from, end): the index of its final CRLFCRLF, or -1. */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  // Horspool: the byte under the pattern's last position tells how far a match can be, so most
  // bytes of a head are never looked at (this scan was the parser's largest cost).
  let i = from;
  while (i + 3 < end) {
    const last = buf[i + 3];
    if (last === LF) {
      if (buf[i + 2] === CR && buf[i + 1] === LF && buf[i] === CR) return i;
      i += 2;
    } else {
      i += last === CR ? 1 : 4;
    }
  }
  return -1;
}

/**
 * Parses response heads into one ResponseHead, reused for every response.
 * It lives beside the byte helpers and constants it uses on every response:
 * V8 folds a module's own constants into optimized code, but loads an
 * imported binding from its cell at every use: with the helpers in a module
 * of their own, a response cost 2.6 % more instructions at 64 in flight.
 */
export class HeadParser {
  readonly head: ResponseHead = {
    status: 0,
    contentLength: -1,
    chunked: false,
    keepAlive: true,
    contentType: "",
    inferenceHeaderContentLength: -1,
  };
  #contentTypeBytes = new Uint8Array(0);
  #contentTypeString = "";
  /** A transfer coding other than chunked: the body runs until the connection closes. */
  #otherCoding = false;

  /** Parses the head in buf[start, end) (`end` is where its final CRLFCRLF starts). */
  parse(buf: Uint8Array, start: number, end: number): void {
    const head = this.head;
    const lineEnd = indexOfCrlf(buf, start, end + 2);
    // "HTTP/1.x SSS" followed by a space (and reason) or the end of the line.
    if (
      lineEnd - start < 12 || !equalsLower(buf, start, start + 7, HTTP_1) ||
      !isDigit(buf[start + 7]) || buf[start + 8] !== SP || !isDigit(buf[start + 9]) ||
      !isDigit(buf[start + 10]) || !isDigit(buf[start + 11]) ||
      (lineEnd > start + 12 && buf[start + 12] !== SP)
    ) {
      throw new ProtocolError(`Malformed status line ${quote(buf, start, lineEnd)}`);
    }
    head.status = (buf[start + 9] - 48) * 100 + (buf[start + 10] - 48) * 10 + buf[start + 11] - 48;
    head.contentLength = -1;
    head.chunked = false;
    head.keepAlive = buf[start + 7] !== 48;
    head.contentType = "";
    head.inferenceHeaderContentLength = -1;
    this.#otherCoding = false;
    let i = lineEnd + 2;
    while (i < end + 2) {
      const eol = indexOfCrlf(buf, i, end + 2);
      // Folded continuation lines only extend values this parser does not keep.
      if (!isWhitespace(buf[i])) this.#parseField(buf, i, eol);
      i = eol + 2;
    }
    if (head.chunked || this.#otherCoding) head.contentLength = -1;
  }

  #parseField(buf: Uint8Array, start: number, end: number): void {
    const head = this.head;
    const colon = indexOfByte(buf, COLON, start, end);
    if (colon === -1 || colon === start) {
      throw new ProtocolError(`Malformed header line ${quote(buf, start, end)}`);
    }
    const field = this.#knownField(buf, start, colon);
    // Most fields of a response (date, server...) are not kept: their values are never scanned.
    if (field === undefined) return;
    let a = colon + 1;
    let b = end;
    while (a < b && isWhitespace(buf[a])) a++;
    while (b > a && isWhitespace(buf[b - 1])) b--;
    if (field === CONTENT_LENGTH) {
      const length = parseDecimal(buf, a, b, "content-length");
      if (head.contentLength !== -1 && head.contentLength !== length) {
        throw new ProtocolError("Conflicting content-length headers");
      }
      head.contentLength = length;
    } else if (field === TRANSFER_ENCODING) {
      // Chunked must be the final coding; any other coding means read until close.
      head.chunked = b - a >= CHUNKED.length && equalsLower(buf, b - CHUNKED.length, b, CHUNKED);
      this.#otherCoding = !head.chunked;
    } else if (field === CONNECTION) {
      if (hasToken(buf, a, b, CLOSE)) head.keepAlive = false;
      else if (hasToken(buf, a, b, KEEP_ALIVE)) head.keepAlive = true;
    } else if (field === CONTENT_TYPE) {
      head.contentType = this.#contentType(buf, a, b);
    } else {
      head.inferenceHeaderContentLength = parseDecimal(
        buf,
        a,
        b,
        "inference-header-content-length",
      );
    }
  }

  /** The lower-case name of a field this parser keeps, chosen by the name's length first. */
  #knownField(buf: Uint8Array, start: number, end: number): Uint8Array | undefined {
    let name: Uint8Array;
    switch (end - start) {
      case CONTENT_LENGTH.length:
        name = CONTENT_LENGTH;
        break;
      case TRANSFER_ENCODING.length:
        name = TRANSFER_ENCODING;
        break;
      case CONNECTION.length:
        name = CONNECTION;
        break;
      case CONTENT_TYPE.length:
        name = CONTENT_TYPE;
        break;
      case INFERENCE_HEADER.length:
        name = INFERENCE_HEADER;
        break;
      default:
        return undefined;
    }
    return equalsLower(buf, start, end, name) ? name : undefined;
  }

  /** Decodes the content type, reusing the previous string when the bytes repeat. */
  #contentType(buf: Uint8Array, start: number, end: number): string {
    const last = this.#contentTypeBytes;
    let same = last.length === end - start;
    for (let i = 0; same && i < last.length; i++) same = last[i] === buf[start + i];
    if (!same) {
      this.#contentTypeBytes = buf.slice(start, end);
      this.#contentTypeString = latin1.decode(this.#contentTypeBytes);
    }
    return this.#contentTypeString;
  }
}
