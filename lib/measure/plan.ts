/** The measurement part of a run's plan. */
import type { GoodputObjective } from "../types/results.ts";
import type { Slo } from "./slo.ts";

/** How each load level is measured (the Measurement options of the CLI). */
export interface MeasurementOptions {
  batchSize: number;
  measurementMode: "time_windows" | "count_windows";
  measurementIntervalMs: number;
  measurementRequestCount: number;
  stabilityPercentage: number;
  maxTrials: number;
  /** Stabilize on and report this percentile instead of the average. */
  percentile?: number;
  /** One window of exactly this many requests, no stabilization (0 = off). */
  requestCount: number;
  /**
   * AIPerf's --benchmark-duration: one window of this many milliseconds of
   * sends, no stabilization (0 = off)...
   */
  benchmarkDurationMs: number;
  /** ...after which requests in flight get this long (--benchmark-grace-period), then are cancelled. */
  benchmarkGraceMs: number;
  warmupRequestCount: number;
  /** AIPerf's --warmup-duration: the warmup ends after this many milliseconds (0 or absent: none). */
  warmupDurationMs?: number;
  /**
   * AIPerf's --warmup-grace-period: after --warmup-duration, how long the
   * warmup's requests in flight may still take before they are cancelled
   * (absent: until they end).
   */
  warmupGraceMs?: number;
  /** --stall-timeout: requests in flight are given up on when nothing completed for this long (0 = never). */
  stallTimeoutMs: number;
}

/** Token-streaming (LLM) runs: what their summaries judge. */
export interface TokenPlan {
  /** --goodput objectives; empty without. */
  goodput: GoodputObjective[];
  /** --slice-duration in ms: the metrics of each slice of a level too; 0: none. */
  sliceDurationMs: number;
}

/** --collect-metrics: the server's Prometheus metrics scraped during the windows. */
export interface MetricsPlan {
  collectMetrics: boolean;
  /** --metrics-url, else the host of -u on port 8002. */
  metricsUrl: string;
  metricsIntervalMs: number;
  /**
   * --require-metrics: an endpoint that cannot be read before the load stops
   * the run (exit 99); without it the run measures on without metrics.
   */
  requireMetrics: boolean;
}

/** --slo, --slo-attainment and the CI gates: what every level is judged by. */
export interface SloPlan {
  /** --slo; empty without. */
  slos: Slo[];
  /** --slo-attainment: the share of requests that must meet every per-request SLO (default 1). */
  sloAttainment: number;
  /** --threshold: k6's thresholds, judged on every level; a breach is exit code 4. */
  thresholds: Slo[];
  /** --abort-on-fail: the first level that breaches a threshold ends the run. */
  abortOnFail: boolean;
  /** --failed-request-threshold: the run ends once this many (or this share of) requests failed. */
  failedRequestThreshold?: { count: number } | { fraction: number };
}
