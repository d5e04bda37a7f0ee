/**
 * Summary of the open-loop figures of merged windows: latency from the
 * intended send time and the punctuality of the sends. Latency from the
 * intended time already contains the send lag, so no further correction
 * (such as HdrHistogram's expected-interval filling) is applied.
 */
import { mean, percentile, pooledSorted, sampleStdDev, withReported } from "./stats.ts";
import type { OpenLoopSummary, WindowData } from "../types/results.ts";

export interface OpenLoopOptions {
  /** Percentiles besides 50, 90, 95 and 99 (the --percentile value). */
  percentiles?: readonly number[];
  /** --max-send-lag: a send-lag p99 above it puts the level behind schedule. */
  maxSendLagMs: number;
}

export function summarizeOpenLoop(
  windows: readonly WindowData[],
  options: OpenLoopOptions,
): OpenLoopSummary {
  const corrected = pooledSorted(windows, (w) => w.correctedLatenciesUs);
  const lags = pooledSorted(windows, (w) => w.sendLagsUs);
  let sendCount = 0;
  let blockedCount = 0;
  let durationMs = 0;
  for (const w of windows) {
    sendCount += w.sendCount;
    blockedCount += w.blockedCount;
    durationMs += w.endMs - w.startMs;
  }
  const wanted = withReported(options.percentiles);
  const at = (sorted: Float64Array, p: number) => sorted.length > 0 ? percentile(sorted, p) : 0;
  const correctedAvgUs = mean(corrected);
  const sendLagP99Us = at(lags, 99);
  const maxSendLagUs = options.maxSendLagMs * 1000;
  return {
    correctedAvgUs,
    correctedStdUs: sampleStdDev(corrected, correctedAvgUs),
    correctedPercentilesUs: new Map(wanted.map((p) => [p, at(corrected, p)])),
    sendCount,
    sendRate: durationMs > 0 ? sendCount / (durationMs / 1000) : 0,
    sendLagP50Us: at(lags, 50),
    sendLagP99Us,
    sendLagMaxUs: lags.length > 0 ? lags[lags.length - 1] : 0,
    blockedCount,
    maxSendLagUs,
    behindSchedule: sendLagP99Us > maxSendLagUs,
  };
}
