/**
 * A small HTTP/2 (RFC 9113) connection for gRPC, shared by the client and the
 * reference server.
 *
 * Hand-written instead of node:http2 because the latter aborted the process
 * (nghttp2 assertion, "free(): invalid pointer") under load on Deno 2.9, and
 * because owning the frames lets the hot path copy pre-encoded header blocks
 * and messages into one coalesced write per tick.
 *
 * The session is push-driven: the transport feeds it bytes with receive(),
 * and it writes through Transport.write(). Payloads handed to stream handlers
 * are views valid only during the call.
 */
import { encodeHeaders, HpackDecoder, HpackError } from "./hpack.ts";

import { FrameReader } from "./_frame_reader.ts";
import { FrameWriter } from "./_frame_writer.ts";
import {
  CONTINUATION,
  DATA,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  errorName,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  GOAWAY,
  HEADERS,
  Http2Error,
  MAX_STREAM_ID,
  MAX_WINDOW,
  PING,
  PREFACE,
  PRIORITY,
  PUSH_PROMISE,
  readUint32,
  RECEIVE_MAX_FRAME,
  RECEIVE_WINDOW,
  RST_STREAM,
  SETTINGS,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_HEADER_TABLE_SIZE,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  StreamResetError,
  type Transport,
  unpad,
  WINDOW_UPDATE,
} from "./_frames.ts";

import { Http2Stream, type StreamHandler } from "./_stream.ts";

export { ErrorCode, errorName, Http2Error, StreamResetError, type Transport } from "./_frames.ts";
export { Http2Stream, type StreamHandler } from "./_stream.ts";

export interface SessionOptions {
  role: "client" | "server";
  /** Server: a new stream started; returns its handler. */
  onStream?: (stream: Http2Stream) => StreamHandler;
  /** The session ended (transport closed, GOAWAY handled, protocol error). */
  onClose?: (error: Error | undefined) => void;
  /** Server: the most streams a client may keep open at once. */
  maxConcurrentStreams?: number;
}

/** Precomputes a header block for repeated use (see hpack.ts). */
export const headerBlock = encodeHeaders;

export class Http2Session {
  readonly #transport: Transport;
  readonly #role: "client" | "server";
  readonly #onStream: ((stream: Http2Stream) => StreamHandler) | undefined;
  readonly #onClose: ((error: Error | undefined) => void) | undefined;
  readonly #streams = new Map<number, Http2Stream>();
  readonly #decoder = new HpackDecoder();
  #nextStreamId: number;
  #lastPeerStreamId = 0;

  // Receiving.
  readonly #reader: FrameReader;
  #connectionUnacked = 0;
  /** A header block split over CONTINUATION frames. */
  #headerBuffer: Uint8Array | undefined;
  #headerLength = 0;
  #headerStream = 0;
  #headerFlags = 0;

  // Sending.
  readonly #writer: FrameWriter;
  #sendWindow = DEFAULT_WINDOW;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  #peerMaxStreams = Infinity;
  readonly #blocked = new Set<Http2Stream>();

  #closed = false;
  #goaway = false;
  #goawayCode: number | undefined;
  #closeNotified = false;
  #error: Error | undefined;
  /** Whether the peer has sent any bytes. */
  #heard = false;
  /** A write that failed before the peer said anything: the read side's end says why. */
  #writeError: Error | undefined;

  constructor(transport: Transport, options: SessionOptions) {
    this.#transport = transport;
    this.#writer = new FrameWriter(transport, {
      failed: (error) => {
        // A peer that hangs up unheard (a gRPC server refusing a TLS client without the
        // certificate it requires) fails the first write or the read, whichever comes first;
        // only the read's error tells which. A failed write means the read ends soon too.
        if (this.#heard) this.#fail(error, false);
        else this.#writeError ??= error;
      },
      idle: () => {
        if (this.#closed) this.#closeTransport();
      },
    });
    this.#role = options.role;
    this.#onStream = options.onStream;
    this.#onClose = options.onClose;
    this.#nextStreamId = options.role === "client" ? 1 : 2;
    this.#reader = new FrameReader({
      preface: options.role === "server",
      onFrame: (type, flags, id, payload) => this.#frame(type, flags, id, payload),
      stopped: () => this.#closed,
    });
    if (options.role === "client") this.#writer.append(PREFACE);
    const settings: Array<[number, number]> = [
      [SETTINGS_INITIAL_WINDOW_SIZE, RECEIVE_WINDOW],
      [SETTINGS_MAX_FRAME_SIZE, RECEIVE_MAX_FRAME],
    ];
    if (options.role === "client") settings.push([SETTINGS_ENABLE_PUSH, 0]);
    else settings.push([SETTINGS_MAX_CONCURRENT_STREAMS, options.maxConcurrentStreams ?? 1024]);
    this.#writer.header(settings.length * 6, { type: SETTINGS, flags: 0, stream: 0 });
    for (const [id, value] of settings) {
      this.#writer.uint16(id);
      this.#writer.uint32(value);
    }
    this.#windowUpdate(0, RECEIVE_WINDOW - DEFAULT_WINDOW);
    this.#writer.scheduleFlush();
  }

  /** False once the session cannot carry new streams (closed, GOAWAY, ids exhausted). */
  get usable(): boolean {
    return !this.#closed && !this.#goaway && this.#nextStreamId <= MAX_STREAM_ID;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Streams open now. */
  get activeStreams(): number {
    return this.#streams.size;
  }

  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS (Infinity until it says). */
  get peerMaxStreams(): number {
    return this.#peerMaxStreams;
  }

  /** Client: starts a stream with a pre-encoded header block. */
  request(handler: StreamHandler, block: Uint8Array, endStream: boolean): Http2Stream {
    if (!this.usable) throw this.#error ?? new Http2Error("The HTTP/2 connection is closing");
    const stream = new Http2Stream(this.#nextStreamId, handler, this.#peerInitialWindow);
    this.#nextStreamId += 2;
    this.#streams.set(stream.id, stream);
    this.sendHeaders(stream, block, endStream);
    return stream;
  }

  /** Sends a header block (response headers or trailers), split into CONTINUATION as needed. */
  sendHeaders(stream: Http2Stream, block: Uint8Array, endStream: boolean): void {
    if (this.#closed || stream.localClosed) return;
    const max = this.#peerMaxFrame;
    let offset = 0;
    let type = HEADERS;
    do {
      const size = Math.min(max, block.length - offset);
      const last = offset + size === block.length;
      const flags = (last ? FLAG_END_HEADERS : 0) |
        (type === HEADERS && endStream ? FLAG_END_STREAM : 0);
      this.#writer.header(size, { type, flags, stream: stream.id });
      this.#writer.append(block.subarray(offset, offset + size));
      offset += size;
      type = CONTINUATION;
    } while (offset < block.length);
    if (endStream) this.#localEnd(stream);
    this.#writer.scheduleFlush();
  }

  /**
   * Sends DATA, as much as flow control allows now; the rest follows as the
   * peer grants credit. `data` must stay unchanged until it is written (large
   * frames are written from it, not copied).
   */
  sendData(stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    if (this.#closed || stream.localClosed) return;
    if (stream.pending.length > 0) {
      stream.pending.push({ data, offset: 0, endStream });
      return;
    }
    const offset = this.#sendDataFrames(stream, data, 0, endStream);
    if (offset < data.length || (endStream && !stream.localClosed)) {
      stream.pending.push({ data, offset, endStream });
      this.#blocked.add(stream);
    }
    this.#writer.scheduleFlush();
  }

  /** Abandons a stream (RST_STREAM); its handler is not called again. */
  resetStream(stream: Http2Stream, code: number = ErrorCode.CANCEL): void {
    if (!this.#streams.has(stream.id)) return;
    this.#forget(stream);
    if (this.#closed) return;
    this.#writer.header(4, { type: RST_STREAM, flags: 0, stream: stream.id });
    this.#writer.uint32(code);
    this.#writer.scheduleFlush();
  }

  /** Feeds bytes read from the transport; `chunk` may be reused by the caller afterwards. */
  receive(chunk: Uint8Array): void {
    if (this.#closed) return;
    this.#heard = true;
    try {
      this.#reader.receive(chunk);
    } catch (error) {
      const failure = error instanceof Http2Error
        ? error
        : error instanceof HpackError
        ? new Http2Error(error.message, ErrorCode.COMPRESSION_ERROR)
        : new Http2Error((error as Error).message, ErrorCode.INTERNAL_ERROR);
      this.#fail(failure, true);
    }
  }

  /** The transport ended (EOF or error): every open stream fails with `error`. */
  transportClosed(error?: Error): void {
    // After a GOAWAY the streams it kept die with the connection: say which the peer sent.
    const after = this.#goawayCode === undefined
      ? ""
      : ` after GOAWAY ${errorName(this.#goawayCode)}`;
    this.#fail(
      error ?? this.#writeError ??
        new Http2Error(`The connection was closed by the peer${after}`),
      false,
    );
  }

  /** Sends GOAWAY, lets queued frames go out, then closes the transport. */
  close(): void {
    if (this.#closed) return;
    this.#sendGoaway(ErrorCode.NO_ERROR);
    this.#fail(new Http2Error("The HTTP/2 session was closed", ErrorCode.NO_ERROR), true);
  }

  // ---- receiving ----

  #frame(type: number, flags: number, id: number, payload: Uint8Array): void {
    if (this.#headerBuffer !== undefined && type !== CONTINUATION) {
      throw new Http2Error("Expected a CONTINUATION frame");
    }
    switch (type) {
      case DATA:
        return this.#onData(flags, id, payload);
      case HEADERS:
        return this.#onHeaders(flags, id, payload);
      case CONTINUATION:
        return this.#onContinuation(flags, id, payload);
      case RST_STREAM:
        return this.#onReset(id, payload);
      case SETTINGS:
        return this.#onSettings(flags, id, payload);
      case PING:
        return this.#onPing(flags, payload);
      case GOAWAY:
        return this.#onGoaway(payload);
      case WINDOW_UPDATE:
        return this.#onWindowUpdate(id, payload);
      case PUSH_PROMISE:
        throw new Http2Error("PUSH_PROMISE received although push is disabled");
      case PRIORITY:
      default:
        return;
    }
  }

  #onData(flags: number, id: number, payload: Uint8Array): void {
    if (id === 0) throw new Http2Error("DATA frame on stream 0");
    this.#connectionUnacked += payload.length;
    if (this.#connectionUnacked >= RECEIVE_WINDOW / 2) {
      this.#windowUpdate(0, this.#connectionUnacked);
      this.#connectionUnacked = 0;
    }
    const stream = this.#streams.get(id);
    // Frames for a stream we reset may still be in flight: only the connection window counts them.
    if (stream === undefined || stream.remoteClosed) return;
    let data = payload;
    if (flags & FLAG_PADDED) data = unpad(payload);
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    stream.unacked += payload.length;
    if (!endStream && stream.unacked >= RECEIVE_WINDOW / 2) {
      this.#windowUpdate(id, stream.unacked);
      stream.unacked = 0;
    }
    if (endStream) this.#remoteEnd(stream);
    stream.handler.data(stream, data, endStream);
  }

  #onHeaders(flags: number, id: number, payload: Uint8Array): void {
    if (id === 0) throw new Http2Error("HEADERS frame on stream 0");
    let block = payload;
    if (flags & FLAG_PADDED) block = unpad(block);
    if (flags & FLAG_PRIORITY) block = block.subarray(5);
    if (flags & FLAG_END_HEADERS) {
      this.#headers(id, flags, block);
      return;
    }
    this.#headerBuffer = block.slice();
    this.#headerLength = block.length;
    this.#headerStream = id;
    this.#headerFlags = flags;
  }

  #onContinuation(flags: number, id: number, payload: Uint8Array): void {
    const buffer = this.#headerBuffer;
    if (buffer === undefined || id !== this.#headerStream) {
      throw new Http2Error("Unexpected CONTINUATION frame");
    }
    const length = this.#headerLength + payload.length;
    const grown = length > buffer.length ? new Uint8Array(length * 2) : buffer;
    if (grown !== buffer) grown.set(buffer.subarray(0, this.#headerLength));
    grown.set(payload, this.#headerLength);
    this.#headerBuffer = grown;
    this.#headerLength = length;
    if (flags & FLAG_END_HEADERS) {
      this.#headerBuffer = undefined;
      this.#headers(id, this.#headerFlags, grown.subarray(0, length));
    }
  }

  /** A complete header block; decoded even for unknown streams to keep HPACK state in step. */
  #headers(id: number, flags: number, block: Uint8Array): void {
    const fields = this.#decoder.decode(block);
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    let stream = this.#streams.get(id);
    if (stream === undefined) {
      stream = this.#accept(id);
      if (stream === undefined) return;
    }
    if (stream.remoteClosed) return;
    if (endStream) this.#remoteEnd(stream);
    stream.handler.headers(stream, fields, endStream);
  }

  /** Server: a new stream from the client, or undefined when it is refused or stale. */
  #accept(id: number): Http2Stream | undefined {
    if (this.#role === "client" || this.#onStream === undefined) return undefined;
    if (id % 2 === 0) throw new Http2Error(`Client opened even stream ${id}`);
    if (id <= this.#lastPeerStreamId) return undefined;
    this.#lastPeerStreamId = id;
    const stream = new Http2Stream(id, REFUSED, this.#peerInitialWindow);
    if (this.#goaway) {
      this.#writeRst(id, ErrorCode.REFUSED_STREAM);
      return undefined;
    }
    this.#streams.set(id, stream);
    stream.handler = this.#onStream(stream);
    return stream;
  }

  #onReset(id: number, payload: Uint8Array): void {
    if (payload.length !== 4) {
      throw new Http2Error("RST_STREAM frame of wrong size", ErrorCode.FRAME_SIZE_ERROR);
    }
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    const code = readUint32(payload, 0);
    this.#forget(stream);
    stream.handler.reset(
      stream,
      new StreamResetError(`The peer reset the stream (${errorName(code)})`, code),
    );
  }

  #onSettings(flags: number, id: number, payload: Uint8Array): void {
    if (id !== 0) throw new Http2Error("SETTINGS frame on a stream");
    if (flags & FLAG_ACK) return;
    if (payload.length % 6 !== 0) {
      throw new Http2Error("SETTINGS frame of wrong size", ErrorCode.FRAME_SIZE_ERROR);
    }
    for (let i = 0; i < payload.length; i += 6) {
      const key = (payload[i] << 8) | payload[i + 1];
      const value = readUint32(payload, i + 2);
      if (key === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) {
          throw new Http2Error(
            "SETTINGS_INITIAL_WINDOW_SIZE too large",
            ErrorCode.FLOW_CONTROL_ERROR,
          );
        }
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const stream of this.#streams.values()) stream.sendWindow += delta;
      } else if (key === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 2 ** 24 - 1) {
          throw new Http2Error(`Invalid SETTINGS_MAX_FRAME_SIZE ${value}`);
        }
        this.#peerMaxFrame = value;
      } else if (key === SETTINGS_MAX_CONCURRENT_STREAMS) {
        this.#peerMaxStreams = value;
      } else if (key === SETTINGS_HEADER_TABLE_SIZE || key === SETTINGS_ENABLE_PUSH) {
        // The encoder never indexes and the server never pushes.
      }
    }
    this.#writer.header(0, { type: SETTINGS, flags: FLAG_ACK, stream: 0 });
    this.#resumeBlocked();
    this.#writer.scheduleFlush();
  }

  #onPing(flags: number, payload: Uint8Array): void {
    if (payload.length !== 8) {
      throw new Http2Error("PING frame of wrong size", ErrorCode.FRAME_SIZE_ERROR);
    }
    if (flags & FLAG_ACK) return;
    this.#writer.header(8, { type: PING, flags: FLAG_ACK, stream: 0 });
    this.#writer.append(payload);
    this.#writer.scheduleFlush();
  }

  #onGoaway(payload: Uint8Array): void {
    if (payload.length < 8) {
      throw new Http2Error("GOAWAY frame too short", ErrorCode.FRAME_SIZE_ERROR);
    }
    const last = readUint32(payload, 0) & MAX_STREAM_ID;
    const code = readUint32(payload, 4);
    this.#goaway = true;
    this.#goawayCode = code;
    const detail = new TextDecoder().decode(payload.subarray(8));
    for (const stream of [...this.#streams.values()]) {
      if (stream.id <= last) continue;
      this.#forget(stream);
      stream.handler.reset(
        stream,
        new StreamResetError(
          `The server closed the connection before handling the request (GOAWAY ${errorName(code)}${
            detail ? `: ${detail}` : ""
          })`,
          code,
          true,
        ),
      );
    }
    if (this.#streams.size === 0) {
      this.#fail(
        new Http2Error(`The peer closed the connection (GOAWAY ${errorName(code)})`),
        true,
      );
    } else this.#notifyClose(undefined);
  }

  #onWindowUpdate(id: number, payload: Uint8Array): void {
    if (payload.length !== 4) {
      throw new Http2Error("WINDOW_UPDATE frame of wrong size", ErrorCode.FRAME_SIZE_ERROR);
    }
    const increment = readUint32(payload, 0) & MAX_WINDOW;
    if (increment === 0) throw new Http2Error("WINDOW_UPDATE with increment 0");
    if (id === 0) {
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) {
        throw new Http2Error(
          "Connection flow-control window overflow",
          ErrorCode.FLOW_CONTROL_ERROR,
        );
      }
    } else {
      const stream = this.#streams.get(id);
      if (stream === undefined) return;
      stream.sendWindow += increment;
    }
    this.#resumeBlocked();
    this.#writer.scheduleFlush();
  }

  #remoteEnd(stream: Http2Stream): void {
    stream.remoteClosed = true;
    if (stream.localClosed) this.#forget(stream);
  }

  #localEnd(stream: Http2Stream): void {
    stream.localClosed = true;
    this.#blocked.delete(stream);
    if (stream.remoteClosed) this.#forget(stream);
  }

  #forget(stream: Http2Stream): void {
    stream.localClosed = true;
    stream.remoteClosed = true;
    // Truncating an empty array is a call into the runtime: most streams end with nothing pending.
    if (stream.pending.length > 0) {
      stream.pending.length = 0;
      this.#blocked.delete(stream);
    }
    this.#streams.delete(stream.id);
    if (this.#goaway && this.#streams.size === 0 && !this.#closed) {
      this.#fail(
        new Http2Error("The peer closed the connection (GOAWAY)", ErrorCode.NO_ERROR),
        true,
      );
    }
  }

  /** Ends the session: streams fail with `error`; `sendFirst` lets queued frames go out. */
  #fail(error: Error, sendFirst: boolean): void {
    if (this.#closed) return;
    if (sendFirst && error instanceof Http2Error && error.code !== ErrorCode.NO_ERROR) {
      this.#sendGoaway(error.code, error.message);
    }
    this.#closed = true;
    this.#error = error;
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    this.#blocked.clear();
    for (const stream of streams) {
      stream.localClosed = stream.remoteClosed = true;
      stream.handler.reset(stream, error);
    }
    if (sendFirst && this.#writer.queued > 0) this.#writer.flush();
    else if (!this.#writer.writing) this.#closeTransport();
    this.#notifyClose(
      error instanceof Http2Error && error.code === ErrorCode.NO_ERROR ? undefined : error,
    );
  }

  #notifyClose(error: Error | undefined): void {
    if (this.#closeNotified) return;
    this.#closeNotified = true;
    this.#onClose?.(error);
  }

  // ---- sending ----

  /** Writes DATA frames within the windows; returns the offset reached. */
  #sendDataFrames(stream: Http2Stream, data: Uint8Array, from: number, endStream: boolean): number {
    let offset = from;
    const max = this.#peerMaxFrame;
    for (;;) {
      const remaining = data.length - offset;
      const credit = Math.min(this.#sendWindow, stream.sendWindow);
      if (remaining > 0 && credit <= 0) return offset;
      const size = remaining === 0 ? 0 : Math.min(remaining, max, credit);
      const last = offset + size === data.length;
      this.#writer.header(size, {
        type: DATA,
        flags: last && endStream ? FLAG_END_STREAM : 0,
        stream: stream.id,
      });
      this.#writer.payload(data.subarray(offset, offset + size));
      offset += size;
      this.#sendWindow -= size;
      stream.sendWindow -= size;
      if (last) {
        if (endStream) this.#localEnd(stream);
        return offset;
      }
    }
  }

  #resumeBlocked(): void {
    for (const stream of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      const pending = stream.pending;
      while (pending.length > 0) {
        const item = pending[0];
        item.offset = this.#sendDataFrames(stream, item.data, item.offset, item.endStream);
        if (item.offset < item.data.length) break;
        pending.shift();
      }
      if (pending.length === 0) this.#blocked.delete(stream);
    }
  }

  #windowUpdate(id: number, increment: number): void {
    this.#writer.header(4, { type: WINDOW_UPDATE, flags: 0, stream: id });
    this.#writer.uint32(increment);
  }

  #writeRst(id: number, code: number): void {
    this.#writer.header(4, { type: RST_STREAM, flags: 0, stream: id });
    this.#writer.uint32(code);
    this.#writer.scheduleFlush();
  }

  #sendGoaway(code: number, message = ""): void {
    const detail = new TextEncoder().encode(message);
    this.#writer.header(8 + detail.length, { type: GOAWAY, flags: 0, stream: 0 });
    this.#writer.uint32(this.#lastPeerStreamId);
    this.#writer.uint32(code);
    this.#writer.append(detail);
  }

  #closeTransport(): void {
    try {
      this.#transport.close();
    } catch {
      // Already closed by the runtime after a failed read or write.
    }
  }
}

/** Placeholder handler of a stream until the server's onStream() returns its own. */
const REFUSED: StreamHandler = {
  headers() {},
  data() {},
  reset() {},
};
