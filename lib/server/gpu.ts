/** Two simulated GPUs whose utilization follows the busy time of model executions. */
import type { LoadSink } from "./model.ts";

export interface GpuSample {
  uuid: string;
  /** 0..1 over the interval since the previous sample. */
  utilization: number;
  powerWatts: number;
  memoryUsedBytes: number;
  memoryTotalBytes: number;
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const IDLE_WATTS = 70;
const PEAK_WATTS = 300;
/** Shorter intervals would make utilization noise; repeat the last sample instead. */
const MIN_INTERVAL_MS = 50;

export class SimulatedGpus implements LoadSink {
  readonly uuids: readonly string[];
  readonly #busyMs: Float64Array;
  readonly #instances: Int32Array;
  #next = 0;
  #lastBusyMs: Float64Array;
  #lastSampleAt: number;
  #last: GpuSample[];

  constructor(count = 2, now = performance.now()) {
    this.uuids = Array.from(
      { length: count },
      (_, i) => `GPU-1f0e5d2c-7b3a-4c1e-9a8d-${(0x5eed0000 + i).toString(16).padStart(12, "0")}`,
    );
    this.#busyMs = new Float64Array(count);
    this.#lastBusyMs = new Float64Array(count);
    this.#instances = new Int32Array(count);
    this.#lastSampleAt = now;
    this.#last = this.uuids.map((_, i) => this.#describe(i, 0));
  }

  assign(): number {
    const device = this.#next++ % this.uuids.length;
    this.#instances[device]++;
    return device;
  }

  addBusy(device: number, ms: number): void {
    this.#busyMs[device] += ms;
  }

  sample(now = performance.now()): GpuSample[] {
    const elapsed = now - this.#lastSampleAt;
    if (elapsed < MIN_INTERVAL_MS) return this.#last;
    this.#last = this.uuids.map((_, i) => {
      // Executions are booked when they end, so one spanning samples can push a window over 1.
      const utilization = Math.min(1, (this.#busyMs[i] - this.#lastBusyMs[i]) / elapsed);
      return this.#describe(i, utilization);
    });
    this.#lastBusyMs = this.#busyMs.slice();
    this.#lastSampleAt = now;
    return this.#last;
  }

  #describe(device: number, utilization: number): GpuSample {
    return {
      uuid: this.uuids[device],
      utilization,
      powerWatts: IDLE_WATTS + (PEAK_WATTS - IDLE_WATTS) * utilization,
      memoryUsedBytes: GIB + this.#instances[device] * 256 * MIB + Math.round(utilization * GIB),
      memoryTotalBytes: 16 * GIB,
    };
  }
}
