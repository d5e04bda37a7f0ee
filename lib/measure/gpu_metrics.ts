/**
 * GPU metrics per GPU UUID (--collect-metrics) and their aggregation over the
 * samples taken during a level's stable windows.
 */
import type { GpuMetrics } from "../types/results.ts";

function aggregate(
  maps: readonly Map<string, number>[],
  reduce: (values: number[]) => number,
): Map<string, number> {
  const values = new Map<string, number[]>();
  for (const map of maps) {
    for (const [uuid, value] of map) {
      const list = values.get(uuid);
      if (list) list.push(value);
      else values.set(uuid, [value]);
    }
  }
  return new Map([...values].map(([uuid, list]) => [uuid, reduce(list)]));
}

/**
 * perf_analyzer's aggregation: utilization and power averaged, memory used
 * the maximum, total memory the first sample (each per GPU, over the samples
 * that have that GPU).
 */
export function mergeGpuMetrics(samples: readonly GpuMetrics[]): GpuMetrics {
  const average = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  return {
    utilization: aggregate(samples.map((s) => s.utilization), average),
    powerWatts: aggregate(samples.map((s) => s.powerWatts), average),
    memoryUsedBytes: aggregate(samples.map((s) => s.memoryUsedBytes), (v) => Math.max(...v)),
    memoryTotalBytes: aggregate(samples.map((s) => s.memoryTotalBytes), (v) => v[0]),
  };
}
