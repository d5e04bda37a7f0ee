/**
 * The frames a session receives: the transport's chunks, buffered only when
 * a frame spans them, cut into frames handed on as views valid during the
 * call. A server first checks the client's connection preface.
 */
import {
  ErrorCode,
  FRAME_HEADER,
  Http2Error,
  MAX_STREAM_ID,
  PREFACE,
  readUint32,
  RECEIVE_MAX_FRAME,
} from "./_frames.ts";

export interface FrameReaderOptions {
  /** Expect the client's connection preface first (servers). */
  preface: boolean;
  onFrame(type: number, flags: number, stream: number, payload: Uint8Array): void;
  /** True once the session ended: the frames after are dropped. */
  stopped(): boolean;
}

export class FrameReader {
  readonly #options: FrameReaderOptions;
  #buffer = new Uint8Array(64 * 1024);
  #buffered = 0;
  #prefaceMissing: number;

  constructor(options: FrameReaderOptions) {
    this.#options = options;
    this.#prefaceMissing = options.preface ? PREFACE.length : 0;
  }

  /** Hands on every frame `chunk` completes; throws Http2Error when the peer breaks the protocol. */
  receive(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.#prefaceMissing > 0) bytes = this.#checkPreface(bytes);
    if (this.#buffered === 0) {
      const used = this.#parse(bytes, bytes.length);
      if (used < bytes.length) this.#keep(bytes.subarray(used));
    } else {
      this.#keep(bytes);
      const used = this.#parse(this.#buffer, this.#buffered);
      this.#buffer.copyWithin(0, used, this.#buffered);
      this.#buffered -= used;
    }
  }

  #checkPreface(bytes: Uint8Array): Uint8Array {
    const start = PREFACE.length - this.#prefaceMissing;
    const n = Math.min(this.#prefaceMissing, bytes.length);
    for (let i = 0; i < n; i++) {
      if (bytes[i] !== PREFACE[start + i]) {
        throw new Http2Error("The client did not send the HTTP/2 connection preface");
      }
    }
    this.#prefaceMissing -= n;
    return bytes.subarray(n);
  }

  #keep(bytes: Uint8Array): void {
    const needed = this.#buffered + bytes.length;
    if (needed > this.#buffer.length) {
      const next = new Uint8Array(Math.max(needed, this.#buffer.length * 2));
      next.set(this.#buffer.subarray(0, this.#buffered));
      this.#buffer = next;
    }
    this.#buffer.set(bytes, this.#buffered);
    this.#buffered = needed;
  }

  /** Handles every complete frame in bytes[0, end); returns the octets consumed. */
  #parse(bytes: Uint8Array, end: number): number {
    const options = this.#options;
    let pos = 0;
    while (end - pos >= FRAME_HEADER && !options.stopped()) {
      const length = (bytes[pos] << 16) | (bytes[pos + 1] << 8) | bytes[pos + 2];
      if (length > RECEIVE_MAX_FRAME) {
        throw new Http2Error(
          `Frame of ${length} octets exceeds ${RECEIVE_MAX_FRAME}`,
          ErrorCode.FRAME_SIZE_ERROR,
        );
      }
      if (end - pos < FRAME_HEADER + length) break;
      const type = bytes[pos + 3];
      const flags = bytes[pos + 4];
      const stream = readUint32(bytes, pos + 5) & MAX_STREAM_ID;
      const payload = bytes.subarray(pos + FRAME_HEADER, pos + FRAME_HEADER + length);
      pos += FRAME_HEADER + length;
      options.onFrame(type, flags, stream, payload);
    }
    return pos;
  }
}
