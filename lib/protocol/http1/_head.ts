/**
 * The HTTP/1.1 response head: a connection's receive buffer, where a head
 * ends in it and its parser, with the byte-level helpers (ASCII classes,
 * searches, numbers, tokens) they and the body reader use.
 */
import { ConnectionError, ProtocolError } from "../errors.ts";

/** Anything bytes can be read from; Deno.Conn satisfies it. */
export interface ByteSource {
  read(p: Uint8Array): Promise<number | null>;
}

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

const CR = 13;
const LF = 10;
const SP = 32;
const TAB = 9;
const COLON = 58;
const SEMICOLON = 59;
const COMMA = 44;

/** Longest response head and chunk-size or trailer line accepted. */
export const MAX_HEAD_BYTES = 65536;
const MIN_BUFFER_BYTES = 1024;

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

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

function isWhitespace(b: number): boolean {
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
function indexOfCrlf(buf: Uint8Array, from: number, end: number): number {
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

function quote(buf: Uint8Array, start: number, end: number): string {
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

function hexValue(b: number): number {
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

/** Field by field: the head object is reused and read on every request. */
function copyHead(from: ResponseHead, to: ResponseHead): void {
  to.status = from.status;
  to.contentLength = from.contentLength;
  to.chunked = from.chunked;
  to.keepAlive = from.keepAlive;
  to.contentType = from.contentType;
  to.inferenceHeaderContentLength = from.inferenceHeaderContentLength;
}

/** What the body of the current response still needs. */
export const enum Body {
  /** No head read yet, or the body is consumed. */
  Done,
  Length,
  Chunked,
  UntilClose,
}

/**
 * Reads response heads from a connection's buffer into one ResponseHead,
 * reused for every response; ResponseReader adds the bodies. Finding and
 * parsing a head are private methods of this class, in the module of the
 * constants and helpers they use on every byte, none of them exported: V8
 * folds a module's own constants into optimized code, but loads an imported
 * or exported binding from its cell at every use, and a call on another
 * object costs lookups a private method does not (issue 29: together 10 %
 * more instructions per response). The body reader reaches the helpers it
 * shares through protected methods.
 */
export class HeadReader {
  readonly head: ResponseHead = {
    status: 0,
    contentLength: -1,
    chunked: false,
    keepAlive: true,
    contentType: "",
    inferenceHeaderContentLength: -1,
  };
  /** performance.now() when the first byte of the current response was available. */
  firstByteAt = 0;
  protected buf: Uint8Array;
  /** Unconsumed bytes are buf[pos, end). */
  protected pos = 0;
  protected end = 0;
  protected body = Body.Done;
  #source: ByteSource;
  #address: string;
  #started = false;
  #contentTypeBytes = new Uint8Array(0);
  #contentTypeString = "";
  /** A transfer coding other than chunked: the body runs until the connection closes. */
  #otherCoding = false;
  /** How far the search for the end of the head got in the bytes buffered so far. */
  #scanned = 0;
  /**
   * The bytes of the last head parsed, up to its final CRLFCRLF, and what it
   * parsed to: a server answers a request it is sent over and over with the
   * same head (its Date changes once a second), which is then compared instead
   * of parsed, a word at a time (the parse was 9 % of the client's CPU against
   * nginx at 64 in flight).
   */
  #lastHead = new Uint8Array(0);
  #lastHeadWords = new Int32Array(0);
  #lastHeadBytes = 0;
  readonly #lastParsed: ResponseHead = { ...this.head };
  /** buf as 32-bit words, for comparing heads that start at a multiple of 4. */
  #words: Int32Array<ArrayBufferLike> = new Int32Array(0);

  /** `address` names the peer in errors. */
  constructor(source: ByteSource, address: string, initialBufferBytes = 16384) {
    this.#source = source;
    this.#address = address;
    this.buf = new Uint8Array(Math.max(MIN_BUFFER_BYTES, initialBufferBytes));
  }

  /** Switches to a new connection, dropping whatever was buffered from the old one. */
  reset(source: ByteSource): void {
    this.#source = source;
    this.pos = 0;
    this.end = 0;
    this.body = Body.Done;
    this.#started = false;
  }

  /** Whether any byte of the current response has arrived. */
  get responseStarted(): boolean {
    return this.#started;
  }

  /** Whether the body of the last head read has not been consumed yet. */
  get bodyPending(): boolean {
    return this.body !== Body.Done;
  }

  /** Bytes received and not consumed yet (the start of the next pipelined response). */
  get buffered(): number {
    return this.end - this.pos;
  }

  /**
   * Reads the next response head, skipping 1xx interim responses. The returned
   * object is reused for every response.
   */
  async readHead(): Promise<ResponseHead> {
    this.expectHead();
    for (;;) {
      const head = this.bufferedHead();
      if (head !== undefined) return head;
      if (!this.received(await this.readMore())) throw this.eof();
    }
  }

  /**
   * Starts reading the next response: then bufferedHead(), and readMore()
   * with received() until it gives the head. readHead() does it all; these
   * pieces let a connection's request path await its socket's own promises
   * instead of a chain of async calls (one promise, one generator and one
   * microtask fewer per level on every request).
   */
  expectHead(): void {
    if (this.body !== Body.Done) {
      throw new TypeError("The previous response body was not consumed");
    }
    this.#scanned = 0;
    this.#started = this.end > this.pos;
    if (this.#started) this.firstByteAt = performance.now();
  }

  /** The next response head if all of it has arrived (1xx interim responses skipped), else undefined. */
  bufferedHead(): ResponseHead | undefined {
    for (;;) {
      const start = this.pos;
      let found: number;
      if (this.#sameHead(start)) {
        found = start + this.#lastHeadBytes - 4;
        this.#restoreHead();
      } else {
        found = this.#findHeadEnd(start + Math.max(0, this.#scanned - 3));
        if (found === -1) {
          this.#scanned = this.end - start;
          if (this.#scanned > MAX_HEAD_BYTES) {
            throw new ProtocolError(`Response head exceeds ${MAX_HEAD_BYTES} bytes`);
          }
          return undefined;
        }
        if (found - start > MAX_HEAD_BYTES) {
          throw new ProtocolError(`Response head exceeds ${MAX_HEAD_BYTES} bytes`);
        }
        this.#parseHead(start, found);
        this.#rememberHead(start, found + 4);
      }
      this.pos = found + 4;
      this.#scanned = 0;
      const status = this.head.status;
      if (status >= 100 && status < 200) {
        if (status === 101) throw new ProtocolError("Unexpected 101 Switching Protocols response");
        continue;
      }
      this.body = status === 204 || status === 304
        ? Body.Done
        : this.head.chunked
        ? Body.Chunked
        : this.head.contentLength >= 0
        ? Body.Length
        : Body.UntilClose;
      if (this.body === Body.Length && this.head.contentLength === 0) this.body = Body.Done;
      if (this.body === Body.UntilClose) this.head.keepAlive = false;
      return this.head;
    }
  }

  /**
   * Consumes the body of the current response if all of it has arrived
   * (returns true), without the promise chain of skipBody(): the common case
   * of a small response read in one piece.
   */
  skipBufferedBody(): boolean {
    if (this.body === Body.Done) return true;
    if (this.body !== Body.Length || this.end - this.pos < this.head.contentLength) return false;
    this.pos += this.head.contentLength;
    this.body = Body.Done;
    return true;
  }

  /** The error of a stream that ended before the current response did. */
  eof(): ConnectionError {
    const message = this.#started
      ? `Connection to "${this.#address}" closed in the middle of a response`
      : `Connection to "${this.#address}" closed before a response arrived`;
    this.body = Body.Done;
    return new ConnectionError(message, this.#address);
  }

  /**
   * The next read into the buffer, after buf[end], keeping buf[pos, end)
   * (compacted to the front or in a larger buffer), so offsets relative to pos
   * stay valid; its result goes to received(). Every read is awaited where it
   * is needed, not in an async helper: on streams that is one promise, one
   * generator and one microtask fewer per piece.
   */
  readMore(): Promise<number | null> {
    if (this.pos === this.end) {
      this.pos = 0;
      this.end = 0;
    } else if (this.end === this.buf.length) {
      const kept = this.end - this.pos;
      if (this.pos > 0) {
        this.buf.copyWithin(0, this.pos, this.end);
      } else {
        const grown = new Uint8Array(this.buf.length * 2);
        grown.set(this.buf);
        this.buf = grown;
      }
      this.pos = 0;
      this.end = kept;
    }
    // Reading into the whole buffer when it is empty avoids allocating a view.
    return this.#source.read(this.end === 0 ? this.buf : this.buf.subarray(this.end));
  }

  /** Takes in what readMore() read: false at the end of the stream. */
  received(n: number | null): boolean {
    if (n === null) return false;
    this.end += n;
    if (!this.#started) {
      this.#started = true;
      this.firstByteAt = performance.now();
    }
    return true;
  }

  /** Index of the CR of the first CRLF in buf[from, end), or -1. */
  protected indexOfCrlf(from: number, end: number): number {
    return indexOfCrlf(this.buf, from, end);
  }

  /** The size on the chunk-size line buf[start, end) (extensions ignored). */
  protected chunkSize(start: number, end: number): number {
    const buf = this.buf;
    let size = 0;
    let i = start;
    while (i < end && !isWhitespace(buf[i]) && buf[i] !== SEMICOLON) {
      const v = hexValue(buf[i]);
      if (v === -1 || size > 0xfffffffffff) {
        throw new ProtocolError(`Invalid chunk size line ${quote(buf, start, end)}`);
      }
      size = size * 16 + v;
      i++;
    }
    if (i === start) throw new ProtocolError(`Invalid chunk size line ${quote(buf, start, end)}`);
    return size;
  }

  /** Whether the bytes at `start` are the last head parsed again. */
  #sameHead(start: number): boolean {
    const n = this.#lastHeadBytes;
    if (n === 0 || this.end - start < n) return false;
    const buf = this.buf;
    const last = this.#lastHead;
    let i = 0;
    if ((start & 3) === 0) {
      let words = this.#words;
      if (words.buffer !== buf.buffer) {
        words = this.#words = new Int32Array(buf.buffer, 0, buf.length >> 2);
      }
      const lastWords = this.#lastHeadWords;
      const base = start >> 2;
      const count = n >> 2;
      for (let w = 0; w < count; w++) if (words[base + w] !== lastWords[w]) return false;
      i = count << 2;
    }
    for (; i < n; i++) if (buf[start + i] !== last[i]) return false;
    return true;
  }

  /** Keeps buf[start, end) and the head parsed from it for #sameHead(). */
  #rememberHead(start: number, end: number): void {
    const n = end - start;
    if (this.#lastHead.length < n) {
      this.#lastHeadWords = new Int32Array((n + 3) >> 2);
      this.#lastHead = new Uint8Array(this.#lastHeadWords.buffer);
    }
    this.#lastHead.set(this.buf.subarray(start, end));
    this.#lastHeadBytes = n;
    copyHead(this.head, this.#lastParsed);
  }

  #restoreHead(): void {
    copyHead(this.#lastParsed, this.head);
  }

  /** End of the head (index of its final CRLFCRLF) searching from `from`, or -1. */
  #findHeadEnd(from: number): number {
    const buf = this.buf;
    const end = this.end;
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

  /** Parses the head in buf[start, end) (`end` is where its final CRLFCRLF starts). */
  #parseHead(start: number, end: number): void {
    const buf = this.buf;
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
      if (!isWhitespace(buf[i])) this.#parseField(i, eol);
      i = eol + 2;
    }
    if (head.chunked || this.#otherCoding) head.contentLength = -1;
  }

  #parseField(start: number, end: number): void {
    const buf = this.buf;
    const head = this.head;
    const colon = indexOfByte(buf, COLON, start, end);
    if (colon === -1 || colon === start) {
      throw new ProtocolError(`Malformed header line ${quote(buf, start, end)}`);
    }
    const field = this.#knownField(start, colon);
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
      head.contentType = this.#contentType(a, b);
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
  #knownField(start: number, end: number): Uint8Array | undefined {
    const buf = this.buf;
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
  #contentType(start: number, end: number): string {
    const buf = this.buf;
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
