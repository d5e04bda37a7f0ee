/**
 * Over-saturation of an open-loop level, GuideLLM's rule on windows: the
 * server takes no more than it is sent when, over the level's windows, the
 * requests in flight and the latency both grow steadily, that is each
 * regression line's slope is positive and its confidence interval excludes
 * zero (Student's t, n - 2 degrees of freedom).
 */
import { studentTQuantile } from "./confidence.ts";
import { mean } from "./stats.ts";
import type { OverSaturation, WindowData } from "../types/results.ts";

/** Windows a trend needs: two degrees of freedom. */
export const MIN_TREND_WINDOWS = 4;

/** The least-squares slope of y on x and its margin of error at `level` (two-sided). */
export function slopeWithMargin(
  xs: readonly number[],
  ys: readonly number[],
  level: number,
): { slope: number; margin: number } {
  const n = xs.length;
  const mx = mean(xs);
  const my = mean(ys);
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i] - mx) ** 2;
    sxy += (xs[i] - mx) * (ys[i] - my);
    syy += (ys[i] - my) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const residual = Math.max(0, syy - slope * sxy);
  const se = sxx > 0 ? Math.sqrt(residual / (n - 2) / sxx) : Infinity;
  return { slope, margin: studentTQuantile(1 - (1 - level) / 2, n - 2) * se };
}

/**
 * The trend of an open-loop level's windows when it is over-saturated, else
 * undefined. Requests in flight at each window's end: the sends so far less
 * the requests completed so far (valid and failed); the latency: each
 * window's average.
 */
export function overSaturation(
  windows: readonly WindowData[],
  options: { level: number },
): OverSaturation | undefined {
  if (windows.length < MIN_TREND_WINDOWS) return undefined;
  const origin = windows[0].startMs;
  let inflight = 0;
  const times: number[] = [];
  const inflights: number[] = [];
  const latencyTimes: number[] = [];
  const latencies: number[] = [];
  for (const w of windows) {
    const valid = w.histogram?.count ?? w.latenciesUs.length;
    inflight += w.sendCount - valid - w.errorCount - (w.cancelledCount ?? 0);
    const t = (w.endMs - origin) / 1000;
    times.push(t);
    inflights.push(inflight);
    if (valid > 0) {
      latencyTimes.push(t);
      latencies.push(averageLatencyMs(w));
    }
  }
  if (latencies.length < MIN_TREND_WINDOWS) return undefined;
  const a = slopeWithMargin(times, inflights, options.level);
  const b = slopeWithMargin(latencyTimes, latencies, options.level);
  const growing = (t: { slope: number; margin: number }) => t.slope > 0 && t.margin < t.slope;
  if (!growing(a) || !growing(b)) return undefined;
  return { inflightPerS: a.slope, latencyMsPerS: b.slope, windows: windows.length };
}

function averageLatencyMs(w: WindowData): number {
  if (w.histogram) return w.histogram.summary([]).meanNs / 1e6;
  let sum = 0;
  for (const us of w.latenciesUs) sum += us;
  return w.latenciesUs.length > 0 ? sum / w.latenciesUs.length / 1000 : 0;
}
