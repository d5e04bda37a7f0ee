/** Measured points for the sweep tests, built on the report fixtures. */
import type { ClientSummary } from "../../types/results.ts";
import { client, server } from "../../report/testdata/fixtures.ts";
import type { PointRecord } from "../checkpoint.ts";
import type { SweepPoint } from "../config.ts";

export function point(overrides: Partial<SweepPoint> = {}): SweepPoint {
  return {
    model: "simple",
    batchSize: 1,
    protocol: "http",
    inputData: "random",
    mode: "concurrency",
    value: 1,
    ...overrides,
  };
}

/** A point with throughput `throughput` and p99 latency `p99Ms`. */
export function record(
  p: Partial<SweepPoint>,
  options: { throughput: number; p99Ms: number; stable?: boolean; client?: Partial<ClientSummary> },
): PointRecord {
  const us = options.p99Ms * 1000;
  return {
    point: point(p),
    result: {
      mode: "concurrency",
      value: p.value ?? 1,
      client: client({
        throughput: options.throughput,
        avgLatencyUs: us * 0.8,
        percentilesUs: new Map([[50, us * 0.7], [90, us * 0.9], [95, us * 0.95], [99, us]]),
        ...options.client,
      }),
      server: [server({ model: p.model ?? "simple" })],
      stable: options.stable ?? true,
      windows: [],
    },
    measuredAt: "2025-01-01T00:00:00.000Z",
  };
}
