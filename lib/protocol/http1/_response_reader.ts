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
  CR,
  EMPTY,
  findHeadEnd,
  HeadParser,
  hexValue,
  indexOfCrlf,
  isWhitespace,
  LF,
  quote,
  type ResponseHead,
  SEMICOLON,
} from "./_head.ts";

/** Anything bytes can be read from; Deno.Conn satisfies it. */
export interface ByteSource {
  read(p: Uint8Array): Promise<number | null>;
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
  readonly #parser = new HeadParser();
  readonly head: ResponseHead = this.#parser.head;
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
      const found = findHeadEnd(this.#buf, start + Math.max(0, scanned - 3), this.#end);
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
      this.#parser.parse(this.#buf, start, found);
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
}
