/**
 * The frames a session sends: encoded into one buffer and written by one
 * loop, so that the frames queued in a tick leave in one write; frames
 * queued while a write is in flight go to a second buffer. Large DATA
 * payloads are not copied: they are written from the caller's buffer in
 * their place between the buffered bytes.
 */
import { FRAME_HEADER, Http2Error, type Transport, writeUint32 } from "./_frames.ts";

/**
 * Payloads from this size on are written from the caller's buffer. Copying one
 * costs more than the extra write it takes (a 600 KB tensor's copy was 60-220
 * µs of the client's CPU per request against Triton, whose frames are MBs).
 */
export const DIRECT_PAYLOAD = 64 * 1024;

/** A payload written from the caller's buffer after the buffered bytes before `at`. */
interface DirectPayload {
  at: number;
  bytes: Uint8Array;
}

export class FrameWriter {
  readonly #transport: Transport;
  readonly #events: { failed(error: Error): void; idle(): void };
  #out = new Uint8Array(64 * 1024);
  #length = 0;
  #spare = new Uint8Array(64 * 1024);
  #direct: DirectPayload[] = [];
  #directBytes = 0;
  #spareDirect: DirectPayload[] = [];
  #writing = false;
  #flushScheduled = false;
  readonly #flush = (): void => {
    this.#flushScheduled = false;
    if (!this.#writing) this.#writeLoop();
  };

  /** `failed`: a write failed (the rest is dropped); `idle`: every queued frame is written. */
  constructor(transport: Transport, events: { failed(error: Error): void; idle(): void }) {
    this.#transport = transport;
    this.#events = events;
  }

  /** Bytes queued and not yet handed to a write. */
  get queued(): number {
    return this.#length + this.#directBytes;
  }

  get writing(): boolean {
    return this.#writing;
  }

  header(length: number, frame: { type: number; flags: number; stream: number }): void {
    this.#reserve(FRAME_HEADER);
    const out = this.#out;
    const o = this.#length;
    out[o] = length >>> 16;
    out[o + 1] = (length >>> 8) & 0xff;
    out[o + 2] = length & 0xff;
    out[o + 3] = frame.type;
    out[o + 4] = frame.flags;
    writeUint32(out, o + 5, frame.stream);
    this.#length = o + FRAME_HEADER;
  }

  append(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#out.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  /**
   * A DATA payload: copied when small; a large one is written from `bytes`,
   * which must stay unchanged until the write loop has written it.
   */
  payload(bytes: Uint8Array): void {
    if (bytes.length < DIRECT_PAYLOAD) return this.append(bytes);
    this.#direct.push({ at: this.#length, bytes });
    this.#directBytes += bytes.length;
  }

  uint16(value: number): void {
    this.#reserve(2);
    this.#out[this.#length++] = value >> 8;
    this.#out[this.#length++] = value & 0xff;
  }

  uint32(value: number): void {
    this.#reserve(4);
    this.#length = writeUint32(this.#out, this.#length, value);
  }

  /** Frames queued in the same tick go out in one write. */
  scheduleFlush(): void {
    if (this.#flushScheduled || this.#writing) return;
    this.#flushScheduled = true;
    queueMicrotask(this.#flush);
  }

  /** Writes what is queued now, unless a write is in flight (which writes it next). */
  flush(): void {
    if (!this.#writing) this.#writeLoop();
  }

  #reserve(n: number): void {
    const needed = this.#length + n;
    if (needed <= this.#out.length) return;
    const next = new Uint8Array(Math.max(needed, this.#out.length * 2));
    next.set(this.#out.subarray(0, this.#length));
    this.#out = next;
  }

  async #writeLoop(): Promise<void> {
    this.#writing = true;
    while (this.queued > 0) {
      const current = this.#out;
      const length = this.#length;
      const direct = this.#direct;
      // Frames queued while this write is in flight go to the other buffer.
      this.#out = this.#spare;
      this.#length = 0;
      this.#direct = this.#spareDirect;
      this.#directBytes = 0;
      try {
        if (direct.length === 0) await this.#transport.write(current.subarray(0, length));
        else await this.#writeWith(current.subarray(0, length), direct);
      } catch (error) {
        this.#length = 0;
        this.#direct.length = 0;
        this.#directBytes = 0;
        this.#events.failed(
          new Http2Error(`Writing to the connection failed: ${(error as Error).message}`),
        );
      }
      // Truncating an empty array is a call into the runtime; most writes have no direct payload.
      if (direct.length > 0) direct.length = 0;
      this.#spareDirect = direct;
      this.#spare = current;
    }
    this.#writing = false;
    this.#events.idle();
  }

  /** Buffered bytes with the direct payloads in their places. */
  async #writeWith(buffered: Uint8Array, direct: readonly DirectPayload[]): Promise<void> {
    let from = 0;
    for (const { at, bytes } of direct) {
      if (at > from) await this.#transport.write(buffered.subarray(from, at));
      await this.#transport.write(bytes);
      from = at;
    }
    if (buffered.length > from) await this.#transport.write(buffered.subarray(from));
  }
}
