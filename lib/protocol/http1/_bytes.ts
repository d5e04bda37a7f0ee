/** Byte-level helpers of the HTTP/1.1 response reader: ASCII classes, searches, numbers, tokens. */
import { ProtocolError } from "../errors.ts";

export const CR = 13;
export const LF = 10;
export const SP = 32;
const TAB = 9;
export const COLON = 58;
export const SEMICOLON = 59;
const COMMA = 44;

const encoder = new TextEncoder();
export const latin1 = new TextDecoder("latin1");

export const EMPTY = new Uint8Array(0);
export const HTTP_1 = encoder.encode("http/1.");
export const CONTENT_LENGTH = encoder.encode("content-length");
export const TRANSFER_ENCODING = encoder.encode("transfer-encoding");
export const CONNECTION = encoder.encode("connection");
export const CONTENT_TYPE = encoder.encode("content-type");
export const INFERENCE_HEADER = encoder.encode("inference-header-content-length");
export const CHUNKED = encoder.encode("chunked");
export const CLOSE = encoder.encode("close");
export const KEEP_ALIVE = encoder.encode("keep-alive");

/** Case-insensitive compare of buf[start, end) with a lower-case token. */
export function equalsLower(
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

export function isDigit(b: number): boolean {
  return b >= 48 && b <= 57;
}

export function isWhitespace(b: number): boolean {
  return b === SP || b === TAB;
}

// Plain loops instead of Uint8Array.prototype.indexOf: the builtin's per-call
// overhead dominated the profile for the short scans a response head needs.

/** Index of the first `byte` in buf[from, end), or -1. */
export function indexOfByte(buf: Uint8Array, byte: number, from: number, end: number): number {
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

export function parseDecimal(buf: Uint8Array, start: number, end: number, what: string): number {
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
export function hasToken(buf: Uint8Array, start: number, end: number, token: Uint8Array): boolean {
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
