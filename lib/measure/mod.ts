/** Measurement math: window summaries, server statistics, stability, GPU metrics. */
export type * from "./types.ts";
export * from "./stats.ts";
export * from "./stability.ts";
export * from "./gpu_metrics.ts";
