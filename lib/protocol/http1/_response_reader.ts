/**
 * Incremental HTTP/1.1 response parser over one growable buffer.
 *
 * The buffer is reused for every response of a connection: the head is parsed
 * in place, a wanted body is returned as a view into the buffer, and an
 * unwanted body is skipped without copying. Only the header fields the
 * clients act on are kept.
 */
import { ProtocolError } from "../errors.ts";
import { Body, HeadReader } from "./_head.ts";

export { type ByteSource, MAX_HEAD_BYTES, type ResponseHead } from "./_head.ts";

const MAX_LINE_BYTES = 8192;
const EMPTY = new Uint8Array(0);

/** Reads responses: their heads (HeadReader) and bodies. */
export class ResponseReader extends HeadReader {
  /** The body of the current response, as a view valid until the next call on this reader. */
  async readBody(): Promise<Uint8Array> {
    switch (this.body) {
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
    switch (this.body) {
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

  /** Consumes the body of the current response without copying it. */
  async skipBody(): Promise<void> {
    switch (this.body) {
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

  /** Makes room for `bytes` from pos without reallocating while they arrive. */
  #reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const kept = this.end - this.pos;
    let size = this.buf.length;
    while (size < bytes) size *= 2;
    if (size === this.buf.length) {
      this.buf.copyWithin(0, this.pos, this.end);
    } else {
      const grown = new Uint8Array(size);
      grown.set(this.buf.subarray(this.pos, this.end));
      this.buf = grown;
    }
    this.pos = 0;
    this.end = kept;
  }

  async #readLength(length: number): Promise<Uint8Array> {
    this.#reserve(length);
    while (this.end - this.pos < length) {
      if (!this.received(await this.readMore())) throw this.eof();
    }
    const start = this.pos;
    this.pos += length;
    this.body = Body.Done;
    return this.buf.subarray(start, start + length);
  }

  async #skipLength(length: number, onData?: (data: Uint8Array) => void): Promise<void> {
    let left = length;
    for (;;) {
      const available = this.end - this.pos;
      if (onData !== undefined && available > 0) {
        onData(this.buf.subarray(this.pos, this.pos + Math.min(available, left)));
      }
      if (available >= left) {
        this.pos += left;
        this.body = Body.Done;
        return;
      }
      left -= available;
      this.pos = this.end;
      if (!this.received(await this.readMore())) throw this.eof();
    }
  }

  async #readUntilClose(
    keep: boolean,
    onData?: (data: Uint8Array) => void,
  ): Promise<Uint8Array> {
    for (;;) {
      if (!keep) {
        if (onData !== undefined && this.end > this.pos) {
          onData(this.buf.subarray(this.pos, this.end));
        }
        this.pos = this.end;
      }
      if (!this.received(await this.readMore())) break;
    }
    const start = this.pos;
    this.pos = this.end;
    this.body = Body.Done;
    return this.buf.subarray(start, this.end);
  }

  /**
   * Decodes a chunked body. With `keep` the chunk data is moved together in
   * place into buf[pos, pos + out); otherwise consumed bytes are dropped as
   * they are parsed, after `onData` saw them. `scan` and `out` are relative
   * to pos, which readMore() keeps valid.
   */
  async #readChunked(keep: boolean, onData?: (data: Uint8Array) => void): Promise<Uint8Array> {
    let out = 0;
    let scan = 0;
    // Not async functions: each read is awaited in this one (a promise, a generator and a
    // microtask fewer per piece of a stream).
    /** Drops or compacts what was parsed, then reads. */
    const more = (): Promise<number | null> => {
      if (keep) {
        if (out < scan) {
          this.buf.copyWithin(this.pos + out, this.pos + scan, this.end);
          this.end -= scan - out;
          scan = out;
        }
      } else {
        this.pos += scan;
        scan = 0;
      }
      return this.readMore();
    };
    /** The end of the line at pos + scan, or -1 when it has not fully arrived. */
    const line = (): number => {
      const at = this.indexOfCrlf(this.pos + scan, this.end);
      if (at === -1 && this.end - this.pos - scan > MAX_LINE_BYTES) {
        throw new ProtocolError(`Chunk line exceeds ${MAX_LINE_BYTES} bytes`);
      }
      return at;
    };
    for (;;) {
      let lineEnd: number;
      while ((lineEnd = line()) === -1) if (!this.received(await more())) throw this.eof();
      const size = this.chunkSize(this.pos + scan, lineEnd);
      scan = lineEnd + 2 - this.pos;
      if (size === 0) break;
      let left = size;
      while (left > 0) {
        const available = this.end - this.pos - scan;
        if (available === 0) {
          if (!this.received(await more())) throw this.eof();
          continue;
        }
        const take = Math.min(available, left);
        if (onData !== undefined) {
          const from = this.pos + scan;
          onData(this.buf.subarray(from, from + take));
        }
        if (keep) {
          if (out !== scan) {
            const from = this.pos + scan;
            this.buf.copyWithin(this.pos + out, from, from + take);
          }
          out += take;
        }
        scan += take;
        left -= take;
      }
      while (this.end - this.pos - scan < 2) {
        if (!this.received(await more())) throw this.eof();
      }
      const at = this.pos + scan;
      if (this.indexOfCrlf(at, at + 2) !== at) {
        throw new ProtocolError("Chunk data is not followed by CRLF");
      }
      scan += 2;
      if (!keep) {
        this.pos += scan;
        scan = 0;
      }
    }
    // Trailer fields are not needed: skip lines up to the empty one.
    for (;;) {
      let lineEnd: number;
      while ((lineEnd = line()) === -1) if (!this.received(await more())) throw this.eof();
      const empty = lineEnd === this.pos + scan;
      scan = lineEnd + 2 - this.pos;
      if (empty) break;
    }
    const start = this.pos;
    this.pos += scan;
    this.body = Body.Done;
    return this.buf.subarray(start, start + (keep ? out : 0));
  }
}
