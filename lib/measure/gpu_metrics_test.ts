import assert from "node:assert/strict";
import type { GpuMetrics } from "../types/results.ts";
import { mergeGpuMetrics } from "./gpu_metrics.ts";

const sample = (util: number, power: number, used: number, total: number): GpuMetrics => ({
  utilization: new Map([["gpu0", util]]),
  powerWatts: new Map([["gpu0", power]]),
  memoryUsedBytes: new Map([["gpu0", used]]),
  memoryTotalBytes: new Map([["gpu0", total]]),
});

Deno.test("mergeGpuMetrics averages utilization and power, keeps max used and first total", () => {
  const second = sample(0.5, 60, 9000, 50001);
  second.utilization.set("gpu1", 0.9);
  const merged = mergeGpuMetrics([sample(0.25, 50, 10000, 50000), second]);
  assert.deepEqual([...merged.utilization], [["gpu0", 0.375], ["gpu1", 0.9]]);
  assert.deepEqual([...merged.powerWatts], [["gpu0", 55]]);
  assert.deepEqual([...merged.memoryUsedBytes], [["gpu0", 10000]]);
  assert.deepEqual([...merged.memoryTotalBytes], [["gpu0", 50000]]);
  assert.equal(mergeGpuMetrics([]).utilization.size, 0);
});
