/**
 * The frames a session sends: encoded into one buffer and written by one
 * loop, so that the frames queued in a tick leave in one write; frames
 * queued while a write is in flight go to a second buffer.
 */
import { FRAME_HEADER, Http2Error, type Transport, writeUint32 } from "./_frames.ts";

export class FrameWriter {
  readonly #transport: Transport;
  readonly #events: { failed(error: Error): void; idle(): void };
  #out = new Uint8Array(64 * 1024);
  #length = 0;
  #spare = new Uint8Array(64 * 1024);
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
    return this.#length;
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
    while (this.#length > 0) {
      const current = this.#out;
      const length = this.#length;
      // Frames queued while this write is in flight go to the other buffer.
      this.#out = this.#spare;
      this.#length = 0;
      try {
        await this.#transport.write(current.subarray(0, length));
      } catch (error) {
        this.#length = 0;
        this.#events.failed(
          new Http2Error(`Writing to the connection failed: ${(error as Error).message}`),
        );
      }
      this.#spare = current;
    }
    this.#writing = false;
    this.#events.idle();
  }
}
