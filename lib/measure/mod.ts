/**
 * Measurement: recorders of completed requests, windows and their
 * stability, one level measured end to end (level.ts), statistics, latency
 * histograms, GPU metrics and their scraping, the table of a level's
 * figures by name (metrics.ts) and the SLOs judged by it (slo.ts), Ctrl-C (interrupt.ts) and the
 * measurement part of a plan (plan.ts).
 * May import lib/types, lib/input and lib/protocol (the scraper's HTTP client).
 *
 * @module
 */
export type * from "./plan.ts";
export * from "./interrupt.ts";
export * from "./level.ts";
export * from "./recorder.ts";
export * from "./stats.ts";
export * from "./metrics.ts";
export * from "./slo.ts";
export * from "./stability.ts";
export * from "./stall.ts";
export * from "./error_causes.ts";
export * from "./gpu_metrics.ts";
export * from "./histogram.ts";
export * from "./prometheus.ts";
export * from "./metrics_scraper.ts";
