/**
 * --prefill-concurrency: at most `limit` streamed requests waiting for their
 * first token. A request takes a permit as it is sent and hands it back at
 * its first response (InferOptions.onResponse), or at its end when none came.
 */
import type { InferOptions } from "../protocol/types.ts";
import { type ConcurrencySteps, concurrencySteps, rampShape } from "./shape.ts";
import { StepTimer } from "./_steps.ts";

export class PrefillGate {
  #limit: number;
  /** --prefill-concurrency-ramp-duration: the limit's steps from each start, and their timer. */
  readonly #steps: ConcurrencySteps | undefined;
  readonly #timer = new StepTimer();
  #taken = 0;
  /** Closed-loop lanes waiting for a permit, in order. */
  readonly #waiting: (() => void)[] = [];
  /** A permit came back with nobody waiting (the open loop resumes its pacer). */
  onFree: (() => void) | undefined;

  constructor(limit: number, options: { rampMs?: number } = {}) {
    this.#limit = limit;
    if (options.rampMs !== undefined) {
      // AIPerf's ramp: from 1, one more at even intervals, reaching the limit at the end.
      this.#steps = concurrencySteps(
        rampShape(limit, { durationMs: options.rampMs, strategy: "linear", start: 1 }),
      );
    }
  }

  /** A start of the load: a ramped limit starts over from 1. */
  begin(): void {
    const steps = this.#steps;
    if (steps === undefined) return;
    this.#limit = steps.initial;
    void this.#timer.follow(steps, (n) => this.#raise(n));
  }

  /** The load stops: a ramp's timer too. */
  end(): void {
    this.#timer.stop();
  }

  /** The limit grows to `n`: waiting lanes take the new permits, then the open loop resumes. */
  #raise(n: number): void {
    this.#limit = n;
    for (
      let next = this.#waiting[0];
      next !== undefined && this.#taken < n;
      next = this.#waiting[0]
    ) {
      this.#waiting.shift();
      this.#taken++;
      next();
    }
    if (this.#taken < n) this.onFree?.();
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
