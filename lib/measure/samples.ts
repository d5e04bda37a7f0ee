/**
 * Typed arrays that grow as values are appended, taken as a copy of their
 * own. The per-request samples of the window being recorded live in one
 * (SampleList) rather than in a growing JS array: the values stay outside the
 * JS heap (V8 sizes its heap to a multiple of the live data, so at 5,000
 * req/s and 40 s windows the samples inflated it by tens of MB) and the
 * storage is reused from window to window instead of being regrown and
 * dropped. Worker threads pack their records into them too.
 */

const INITIAL_CAPACITY = 1024;

export class GrowableArray<
  T extends Float64Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Uint8Array<ArrayBuffer>,
> {
  #data: T;
  /** Elements appended since the last take(). */
  length = 0;
  readonly #make: (length: number) => T;

  constructor(make: (length: number) => T) {
    this.#make = make;
    this.#data = make(INITIAL_CAPACITY);
  }

  /** Room for `n` more elements, to be written from `length` on. */
  reserve(n: number): T {
    if (this.length + n > this.#data.length) {
      const data = this.#make(Math.max(this.#data.length * 2, this.length + n));
      data.set(this.#data.subarray(0, this.length));
      this.#data = data;
    }
    return this.#data;
  }

  /** The storage: the values from 0 to `length`, until the next append. */
  get data(): T {
    return this.#data;
  }

  push(value: number): void {
    this.reserve(1)[this.length++] = value;
  }

  /** The values so far, in order, in an array of their own (transferable); the array starts over empty. */
  take(): T {
    const taken = this.#data.slice(0, this.length) as T;
    this.length = 0;
    return taken;
  }
}

/** Samples of doubles: latencies, send lags. */
export class SampleList extends GrowableArray<Float64Array<ArrayBuffer>> {
  constructor() {
    super((length) => new Float64Array(length));
  }
}
