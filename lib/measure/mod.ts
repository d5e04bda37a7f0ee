/**
 * Measurement math: window summaries, server statistics, stability, latency
 * histograms, GPU metrics and their scraping.
 */
export type * from "./plan.ts";
export * from "./interrupt.ts";
export * from "./stats.ts";
export * from "./stability.ts";
export * from "./gpu_metrics.ts";
export * from "./histogram.ts";
export * from "./prometheus.ts";
export * from "./metrics_scraper.ts";
