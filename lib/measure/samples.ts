/**
 * Per-request samples of the window being recorded, kept in a typed array
 * rather than a growing JS array: the values live outside the JS heap (V8
 * sizes its heap to a multiple of the live data, so at 5,000 req/s and 40 s
 * windows the samples inflated it by tens of MB) and the storage is reused
 * from window to window instead of being regrown and dropped.
 */

const INITIAL_CAPACITY = 1024;

export class SampleList {
  #data = new Float64Array(INITIAL_CAPACITY);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(value: number): void {
    if (this.#length === this.#data.length) {
      const grown = new Float64Array(this.#data.length * 2);
      grown.set(this.#data);
      this.#data = grown;
    }
    this.#data[this.#length++] = value;
  }

  /** The samples so far, in order, in an array of their own; the list starts over empty. */
  take(): Float64Array {
    const taken = this.#data.slice(0, this.#length);
    this.#length = 0;
    return taken;
  }
}
