/**
 * Incremental HTTP/1.1 response parser over one growable buffer.
 *
 * The buffer is reused for every response of a connection: the head is parsed
 * in place, a wanted body is returned as a view into the buffer, and an
 * unwanted body is skipped without copying. Only the header fields the
 * clients act on are kept.
 */
import { ConnectionError, ProtocolError } from "../errors.ts";
import {
  CHUNKED,
  CLOSE,
  COLON,
  CONNECTION,
  CONTENT_LENGTH,
  CONTENT_TYPE,
  CR,
  EMPTY,
  equalsLower,
  hasToken,
  hexValue,
  HTTP_1,
  indexOfByte,
  indexOfCrlf,
  INFERENCE_HEADER,
  isDigit,
  isWhitespace,
  KEEP_ALIVE,
  latin1,
  LF,
  parseDecimal,
  quote,
  SEMICOLON,
  SP,
  TRANSFER_ENCODING,
} from "./_bytes.ts";

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

/** Longest response head and chunk-size or trailer line accepted. */
export const MAX_HEAD_BYTES = 65536;
const MAX_LINE_BYTES = 8192;
const MIN_BUFFER_BYTES = 1024;

/** What the body of the current response still needs. */
const enum Body {
  /** No head read yet, or the body is consumed. */
  Done,
  Length,
  Chunked,
  UntilClose,
}

export class ResponseReader {
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
  #source: ByteSource;
  #address: string;
  #buf: Uint8Array;
  /** Unconsumed bytes are buf[pos, end). */
  #pos = 0;
  #end = 0;
  #body = Body.Done;
  #started = false;
  #contentTypeBytes = new Uint8Array(0);
  #contentTypeString = "";
  /** A transfer coding other than chunked: the body runs until the connection closes. */
  #otherCoding = false;

  /** `address` names the peer in errors. */
  constructor(source: ByteSource, address: string, initialBufferBytes = 16384) {
    this.#source = source;
    this.#address = address;
    this.#buf = new Uint8Array(Math.max(MIN_BUFFER_BYTES, initialBufferBytes));
  }

  /** Switches to a new connection, dropping whatever was buffered from the old one. */
  reset(source: ByteSource): void {
    this.#source = source;
    this.#pos = 0;
    this.#end = 0;
    this.#body = Body.Done;
    this.#started = false;
  }

  /** Whether any byte of the current response has arrived. */
  get responseStarted(): boolean {
    return this.#started;
  }

  /** Whether the body of the last head read has not been consumed yet. */
  get bodyPending(): boolean {
    return this.#body !== Body.Done;
  }

  /** Bytes received and not consumed yet (the start of the next pipelined response). */
  get buffered(): number {
    return this.#end - this.#pos;
  }

  /**
   * Reads the next response head, skipping 1xx interim responses. The returned
   * object is reused for every response.
   */
  async readHead(): Promise<ResponseHead> {
    if (this.#body !== Body.Done) {
      throw new TypeError("The previous response body was not consumed");
    }
    this.#started = this.#end > this.#pos;
    if (this.#started) this.firstByteAt = performance.now();
    let scanned = 0;
    for (;;) {
      const start = this.#pos;
      const found = this.#findHeadEnd(start + Math.max(0, scanned - 3));
      scanned = found === -1 ? this.#end - start : found - start;
      if (scanned > MAX_HEAD_BYTES) {
        throw new ProtocolError(`Response head exceeds ${MAX_HEAD_BYTES} bytes`);
      }
      if (found === -1) {
        if (!await this.#fill()) throw this.#eof();
        if (!this.#started) {
          this.#started = true;
          this.firstByteAt = performance.now();
        }
        continue;
      }
      this.#parseHead(start, found);
      this.#pos = found + 4;
      const status = this.head.status;
      if (status >= 100 && status < 200) {
        if (status === 101) throw new ProtocolError("Unexpected 101 Switching Protocols response");
        scanned = 0;
        continue;
      }
      this.#body = status === 204 || status === 304
        ? Body.Done
        : this.head.chunked
        ? Body.Chunked
        : this.head.contentLength >= 0
        ? Body.Length
        : Body.UntilClose;
      if (this.#body === Body.Length && this.head.contentLength === 0) this.#body = Body.Done;
      if (this.#body === Body.UntilClose) this.head.keepAlive = false;
      return this.head;
    }
  }

  /** The body of the current response, as a view valid until the next call on this reader. */
  async readBody(): Promise<Uint8Array> {
    switch (this.#body) {
      case Body.Done:
        return EMPTY;
      case Body.Length:
        return await this.#readLength(this.head.contentLength);
      case Body.Chunked:
        return await this.#readChunked(true);
      case Body.UntilClose:
        return await this.#readUntilClose(true);
    }
  }

  /**
   * Consumes the body of the current response, handing its data to `onData`
   * piece by piece as it arrives (chunked framing removed): for responses
   * that stream, such as server-sent events. Each view is valid only during
   * the call; an exception thrown by `onData` ends the read mid-body.
   */
  async streamBody(onData: (data: Uint8Array) => void): Promise<void> {
    switch (this.#body) {
      case Body.Done:
        return;
      case Body.Length:
        return await this.#skipLength(this.head.contentLength, onData);
      case Body.Chunked:
        await this.#readChunked(false, onData);
        return;
      case Body.UntilClose:
        await this.#readUntilClose(false, onData);
        return;
    }
  }

  /**
   * Consumes the body of the current response if all of it has arrived
   * (returns true), without the promise chain of skipBody(): the common case
   * of a small response read in one piece.
   */
  skipBufferedBody(): boolean {
    if (this.#body === Body.Done) return true;
    if (this.#body !== Body.Length || this.#end - this.#pos < this.head.contentLength) return false;
    this.#pos += this.head.contentLength;
    this.#body = Body.Done;
    return true;
  }

  /** Consumes the body of the current response without copying it. */
  async skipBody(): Promise<void> {
    switch (this.#body) {
      case Body.Done:
        return;
      case Body.Length:
        return await this.#skipLength(this.head.contentLength);
      case Body.Chunked:
        await this.#readChunked(false);
        return;
      case Body.UntilClose:
        await this.#readUntilClose(false);
        return;
    }
  }

  #eof(): ConnectionError {
    const message = this.#started
      ? `Connection to "${this.#address}" closed in the middle of a response`
      : `Connection to "${this.#address}" closed before a response arrived`;
    this.#body = Body.Done;
    return new ConnectionError(message, this.#address);
  }

  /** End of the head (index of its final CRLFCRLF) searching from `from`, or -1. */
  #findHeadEnd(from: number): number {
    const buf = this.#buf;
    const end = this.#end;
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
   * Reads more bytes after buf[end], keeping buf[pos, end) (compacted to the
   * front or in a larger buffer), so offsets relative to pos stay valid.
   * Returns false at end of stream.
   */
  async #fill(): Promise<boolean> {
    if (this.#pos === this.#end) {
      this.#pos = 0;
      this.#end = 0;
    } else if (this.#end === this.#buf.length) {
      const kept = this.#end - this.#pos;
      if (this.#pos > 0) {
        this.#buf.copyWithin(0, this.#pos, this.#end);
      } else {
        const grown = new Uint8Array(this.#buf.length * 2);
        grown.set(this.#buf);
        this.#buf = grown;
      }
      this.#pos = 0;
      this.#end = kept;
    }
    // Reading into the whole buffer when it is empty avoids allocating a view.
    const target = this.#end === 0 ? this.#buf : this.#buf.subarray(this.#end);
    const n = await this.#source.read(target);
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** Makes room for `bytes` from pos without reallocating while they arrive. */
  #reserve(bytes: number): void {
    if (this.#pos + bytes <= this.#buf.length) return;
    const kept = this.#end - this.#pos;
    let size = this.#buf.length;
    while (size < bytes) size *= 2;
    if (size === this.#buf.length) {
      this.#buf.copyWithin(0, this.#pos, this.#end);
    } else {
      const grown = new Uint8Array(size);
      grown.set(this.#buf.subarray(this.#pos, this.#end));
      this.#buf = grown;
    }
    this.#pos = 0;
    this.#end = kept;
  }

  async #readLength(length: number): Promise<Uint8Array> {
    this.#reserve(length);
    while (this.#end - this.#pos < length) {
      if (!await this.#fill()) throw this.#eof();
    }
    const start = this.#pos;
    this.#pos += length;
    this.#body = Body.Done;
    return this.#buf.subarray(start, start + length);
  }

  async #skipLength(length: number, onData?: (data: Uint8Array) => void): Promise<void> {
    let left = length;
    for (;;) {
      const available = this.#end - this.#pos;
      if (onData !== undefined && available > 0) {
        onData(this.#buf.subarray(this.#pos, this.#pos + Math.min(available, left)));
      }
      if (available >= left) {
        this.#pos += left;
        this.#body = Body.Done;
        return;
      }
      left -= available;
      this.#pos = this.#end;
      if (!await this.#fill()) throw this.#eof();
    }
  }

  async #readUntilClose(
    keep: boolean,
    onData?: (data: Uint8Array) => void,
  ): Promise<Uint8Array> {
    for (;;) {
      if (!keep) {
        if (onData !== undefined && this.#end > this.#pos) {
          onData(this.#buf.subarray(this.#pos, this.#end));
        }
        this.#pos = this.#end;
      }
      if (!await this.#fill()) break;
    }
    const start = this.#pos;
    this.#pos = this.#end;
    this.#body = Body.Done;
    return this.#buf.subarray(start, this.#end);
  }

  /**
   * Decodes a chunked body. With `keep` the chunk data is moved together in
   * place into buf[pos, pos + out); otherwise consumed bytes are dropped as
   * they are parsed, after `onData` saw them. `scan` and `out` are relative
   * to pos, which #fill keeps valid.
   */
  async #readChunked(keep: boolean, onData?: (data: Uint8Array) => void): Promise<Uint8Array> {
    let out = 0;
    let scan = 0;
    const more = async (): Promise<void> => {
      if (keep) {
        if (out < scan) {
          this.#buf.copyWithin(this.#pos + out, this.#pos + scan, this.#end);
          this.#end -= scan - out;
          scan = out;
        }
      } else {
        this.#pos += scan;
        scan = 0;
      }
      if (!await this.#fill()) throw this.#eof();
    };
    const line = async (): Promise<number> => {
      for (;;) {
        const at = indexOfCrlf(this.#buf, this.#pos + scan, this.#end);
        if (at !== -1) return at;
        if (this.#end - this.#pos - scan > MAX_LINE_BYTES) {
          throw new ProtocolError(`Chunk line exceeds ${MAX_LINE_BYTES} bytes`);
        }
        await more();
      }
    };
    for (;;) {
      const lineEnd = await line();
      const size = this.#chunkSize(this.#pos + scan, lineEnd);
      scan = lineEnd + 2 - this.#pos;
      if (size === 0) break;
      let left = size;
      while (left > 0) {
        const available = this.#end - this.#pos - scan;
        if (available === 0) {
          await more();
          continue;
        }
        const take = Math.min(available, left);
        if (onData !== undefined) {
          const from = this.#pos + scan;
          onData(this.#buf.subarray(from, from + take));
        }
        if (keep) {
          if (out !== scan) {
            const from = this.#pos + scan;
            this.#buf.copyWithin(this.#pos + out, from, from + take);
          }
          out += take;
        }
        scan += take;
        left -= take;
      }
      while (this.#end - this.#pos - scan < 2) await more();
      const at = this.#pos + scan;
      if (this.#buf[at] !== CR || this.#buf[at + 1] !== LF) {
        throw new ProtocolError("Chunk data is not followed by CRLF");
      }
      scan += 2;
      if (!keep) {
        this.#pos += scan;
        scan = 0;
      }
    }
    // Trailer fields are not needed: skip lines up to the empty one.
    for (;;) {
      const lineEnd = await line();
      const empty = lineEnd === this.#pos + scan;
      scan = lineEnd + 2 - this.#pos;
      if (empty) break;
    }
    const start = this.#pos;
    this.#pos += scan;
    this.#body = Body.Done;
    return this.#buf.subarray(start, start + (keep ? out : 0));
  }

  #chunkSize(start: number, end: number): number {
    const buf = this.#buf;
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

  #parseHead(start: number, end: number): void {
    const buf = this.#buf;
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
    const buf = this.#buf;
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
    const buf = this.#buf;
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
    const buf = this.#buf;
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
