/** Cumulative statistics of one model version, as in Triton's statistics extension. */

/** A count and a total duration in nanoseconds. */
export class Duration {
  count = 0;
  ns = 0;

  add(ms: number): void {
    this.count++;
    this.ns += Math.round(ms * 1e6);
  }
}

/** Per batch size: one count per execution. */
export interface BatchStats {
  computeInput: Duration;
  computeInfer: Duration;
  computeOutput: Duration;
}

export class ModelStats {
  /** Batch elements inferred (a batch of 8 counts 8). */
  inferenceCount = 0;
  /** Model executions (a batch counts once). */
  executionCount = 0;
  /** Wall-clock milliseconds since the epoch of the last completed inference; 0 before any. */
  lastInference = 0;
  /** Per request: arrival to response ready. */
  readonly success = new Duration();
  readonly fail = new Duration();
  /** Per request: the timings of the execution the request was part of. */
  readonly queue = new Duration();
  readonly computeInput = new Duration();
  readonly computeInfer = new Duration();
  readonly computeOutput = new Duration();
  /** The simulated models have no response cache; kept so reports see the fields. */
  readonly cacheHit = new Duration();
  readonly cacheMiss = new Duration();
  readonly batches = new Map<number, BatchStats>();

  batch(size: number): BatchStats {
    let stats = this.batches.get(size);
    if (stats === undefined) {
      stats = {
        computeInput: new Duration(),
        computeInfer: new Duration(),
        computeOutput: new Duration(),
      };
      this.batches.set(size, stats);
    }
    return stats;
  }
}
