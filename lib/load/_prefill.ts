/**
 * --prefill-concurrency: at most `limit` streamed requests waiting for their
 * first token. A request takes a permit as it is sent and hands it back at
 * its first response (InferOptions.onResponse), or at its end when none came.
 */
import type { InferOptions } from "../protocol/types.ts";

export class PrefillGate {
  readonly #limit: number;
  #taken = 0;
  /** Closed-loop lanes waiting for a permit, in order. */
  readonly #waiting: (() => void)[] = [];
  /** A permit came back with nobody waiting (the open loop resumes its pacer). */
  onFree: (() => void) | undefined;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** No permit left: an open-loop send holds back. */
  get full(): boolean {
    return this.#taken >= this.#limit;
  }

  /** Takes a permit now; the caller checked `full`. */
  take(): void {
    this.#taken++;
  }

  /** Takes a permit, waiting for one to come back when none is left. */
  acquire(): Promise<void> | undefined {
    if (this.#taken < this.#limit) {
      this.#taken++;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** A permit comes back: the longest waiting lane takes it, else it is free. */
  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) return next();
    this.#taken--;
    this.onFree?.();
  }

  /** Lanes still waiting when the load stops get their permit, so that they can see the stop. */
  releaseWaiting(): void {
    for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) {
      this.#taken++;
      next();
    }
  }
}

/**
 * One request slot's hold on the gate, made once per slot or lane: the
 * InferOptions its sends pass (so that a send allocates nothing) and the
 * hand-back at the first response or the end, whichever comes first.
 */
export class PrefillHold {
  #holding = false;
  readonly plain: InferOptions;
  readonly decode: InferOptions;

  constructor(readonly gate: PrefillGate) {
    const onResponse = () => this.end();
    this.plain = { onResponse };
    this.decode = { decodeOutputs: true, onResponse };
  }

  begin(): void {
    this.#holding = true;
  }

  end(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.gate.release();
  }
}
