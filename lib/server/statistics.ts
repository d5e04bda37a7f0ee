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

/**
 * A model version's statistics under the statistics extension's field names,
 * which the HTTP JSON and the gRPC ModelStatistics message share.
 */
export function statisticsFields(model: { name: string; version: string; stats: ModelStats }) {
  const s = model.stats;
  const duration = (d: Duration) => ({ count: d.count, ns: d.ns });
  return {
    name: model.name,
    version: model.version,
    last_inference: s.lastInference,
    inference_count: s.inferenceCount,
    execution_count: s.executionCount,
    inference_stats: {
      success: duration(s.success),
      fail: duration(s.fail),
      queue: duration(s.queue),
      compute_input: duration(s.computeInput),
      compute_infer: duration(s.computeInfer),
      compute_output: duration(s.computeOutput),
      cache_hit: duration(s.cacheHit),
      cache_miss: duration(s.cacheMiss),
    },
    batch_stats: [...s.batches].sort((a, b) => a[0] - b[0]).map(([size, b]) => ({
      batch_size: size,
      compute_input: duration(b.computeInput),
      compute_infer: duration(b.computeInfer),
      compute_output: duration(b.computeOutput),
    })),
  };
}
