/**
 * perf_analyzer's periodic concurrency mode: launch START requests, then,
 * each time every request of the latest launched set has received
 * `requestPeriod` responses, launch STEP more, until END requests were
 * launched in total; then wait for all of them to finish. Each request is a
 * stream of responses from a decoupled model (an LLM generating tokens,
 * typically), so the pattern measures how a server copes as concurrent
 * generations pile up.
 */
import type { Range } from "./range.ts";
import type { Recorder } from "../measure/recorder.ts";
import type { InferenceClient, InferSession, PreparedRequest } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";

/** One launched set: when, how many, and how many were launched up to it. */
export interface Launch {
  /** performance.now() milliseconds. */
  atMs: number;
  count: number;
  total: number;
}

export interface PeriodicOptions {
  /** Taken round-robin, one per launched request. */
  requests: readonly PreparedRequest[];
  range: Range;
  requestPeriod: number;
}

/** A set still waiting for each of its requests to reach the period. */
interface LaunchSet {
  waiting: number;
}

export class PeriodicLoad {
  /** The launch pattern, for reports and tests. */
  readonly launches: Launch[] = [];
  readonly #client: InferenceClient;
  readonly #options: PeriodicOptions;
  readonly #running: Promise<void>[] = [];
  #launched = 0;
  #recorder: Recorder | undefined;

  constructor(client: InferenceClient, options: PeriodicOptions) {
    if (options.requests.length === 0) throw new RangeError("At least one request is needed");
    this.#client = client;
    this.#options = options;
  }

  /** Runs the whole pattern, recording every request; resolves when all have finished. */
  async run(recorder: Recorder): Promise<void> {
    this.#recorder = recorder;
    const { start, end } = this.#options.range;
    this.#launch(Math.min(start, end));
    for (let i = 0; i < this.#running.length; i++) await this.#running[i];
  }

  #launch(count: number): void {
    const set: LaunchSet = { waiting: count };
    this.launches.push({ atMs: performance.now(), count, total: this.#launched + count });
    for (let i = 0; i < count; i++) {
      const request = this.#options.requests[this.#launched % this.#options.requests.length];
      this.#launched++;
      this.#running.push(this.#one(request, set));
    }
  }

  /** The set reached the period: the next one goes, unless END requests went already. */
  #reached(set: LaunchSet): void {
    if (--set.waiting > 0) return;
    const { end, step } = this.#options.range;
    if (this.#launched < end) this.#launch(Math.min(step, end - this.#launched));
  }

  async #one(request: PreparedRequest, set: LaunchSet): Promise<void> {
    const period = this.#options.requestPeriod;
    const recorder = this.#recorder!;
    const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    let responses = 0;
    let reached = false;
    const reach = () => {
      if (reached) return;
      reached = true;
      this.#reached(set);
    };
    let session: InferSession | undefined;
    try {
      session = await this.#client.openSession();
      await session.infer(request, timing, {
        onResponse: () => {
          if (++responses >= period) reach();
        },
      });
      recorder.record(timing);
    } catch (error) {
      // A request that had a session was sent (or tried): its timing dates it in the export.
      recorder.recordError(
        error instanceof Error ? error.message : String(error),
        session && timing,
      );
    } finally {
      // A request that ends (or fails) short of the period must not stall the pattern.
      reach();
      session?.close();
    }
  }
}
