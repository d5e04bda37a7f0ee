/**
 * Multi-core (issue 8, case 6): the small HTTP infer at concurrency 64 with
 * one and two load threads, inferperf `--workers 1` and `--workers 2`
 * against `wrk -t 1` and `wrk -t 2` replaying the same request bytes, in
 * alternating rounds against the same server, so that both speed-ups are
 * measured on the same machine at the same time.
 */
import {
  captureRequest,
  cpuPercent,
  describeTarget,
  requestCounts,
  SMALL_REQUEST_ARGS,
} from "./http_capacity.ts";
import * as inferperf from "./inferperf.ts";
import { median } from "./process.ts";
import type { HttpTarget } from "./targets.ts";
import type { BenchRow, CaseResult } from "./types.ts";
import { parseRawRequest, runWrk } from "./wrk.ts";

const THREADS = [1, 2];

export interface MulticoreOptions {
  /** Default 64. */
  concurrency?: number;
  /** Measured seconds per tool, thread count and round. Default 3. */
  seconds?: number;
  /** Default 3. */
  rounds?: number;
}

interface Sample {
  throughput: number;
  cpuPercent: number;
}

interface Round {
  /** By thread count. */
  wrk: Record<number, Sample>;
  inferperf: Record<number, Sample>;
}

export async function multicore(
  target: HttpTarget,
  wrk: string,
  options: MulticoreOptions = {},
): Promise<CaseResult> {
  const concurrency = options.concurrency ?? 64;
  const seconds = options.seconds ?? 3;
  const request = parseRawRequest(await captureRequest(SMALL_REQUEST_ARGS));
  const rounds: Round[] = [];
  for (let i = 0; i < (options.rounds ?? 3); i++) {
    const round: Round = { wrk: {}, inferperf: {} };
    for (const threads of THREADS) {
      const w = await runWrk(wrk, request, {
        url: `http://${target.addr}${request.path}`,
        connections: concurrency,
        threads,
        seconds,
      });
      round.wrk[threads] = { throughput: w.requestsPerSecond, cpuPercent: cpuPercent(w.samples) };
      const { warmup, requests } = requestCounts(w.requestsPerSecond, seconds);
      const run = await inferperf.profile([
        ...["-u", target.addr, ...SMALL_REQUEST_ARGS, "--concurrency-range", String(concurrency)],
        ...["--workers", String(threads)],
        ...["--warmup-request-count", String(warmup), "--request-count", String(requests)],
      ]);
      round.inferperf[threads] = {
        throughput: run.levels[0].throughput,
        cpuPercent: cpuPercent(run.samples),
      };
    }
    rounds.push(round);
  }
  const mid = (tool: "wrk" | "inferperf", threads: number, pick: keyof Sample) =>
    median(rounds.map((r) => r[tool][threads][pick]));
  const speedups = (tool: "wrk" | "inferperf") =>
    rounds.map((r) => r[tool][2].throughput / r[tool][1].throughput);
  const range = (values: number[]) =>
    `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
  const rows: BenchRow[] = THREADS.map((threads) => {
    const ours = mid("inferperf", threads, "throughput");
    const theirs = mid("wrk", threads, "throughput");
    return {
      name: `Multi-core c=${concurrency}, ${threads} thread${threads > 1 ? "s" : ""}`,
      unit: "infer/s",
      inferperf: ours,
      reference: theirs,
      referenceName: `wrk -t ${threads}`,
      ratio: ours / theirs,
      note: `--workers ${threads}; CPU ${mid("inferperf", threads, "cpuPercent").toFixed(0)}% vs ` +
        `${mid("wrk", threads, "cpuPercent").toFixed(0)}% of a core`,
    };
  });
  const ours = median(speedups("inferperf"));
  const theirs = median(speedups("wrk"));
  rows.push({
    name: `Multi-core c=${concurrency}: speed-up 2/1`,
    unit: "x",
    inferperf: ours,
    reference: theirs,
    referenceName: "wrk",
    ratio: ours / theirs,
    note: `median of per-round speed-ups; inferperf ${range(speedups("inferperf"))}, wrk ` +
      `${range(speedups("wrk"))} over ${rounds.length} rounds`,
  });
  return {
    id: "multicore",
    title: "Multi-core: 1 vs 2 load threads (HTTP small binary infer)",
    rows,
    notes: [
      `Server: ${
        describeTarget(target)
      }, on the same ${navigator.hardwareConcurrency} cores as the client: ` +
      "a second client thread competes with it, so the speed-up is bounded by what the " +
      "server leaves free.",
      `Per round, for 1 then 2 threads: wrk -t N for ${seconds} s, then inferperf --workers N ` +
      "with --warmup-request-count and --request-count sized to the same duration; medians shown.",
    ],
    details: { concurrency, seconds, rounds },
  };
}
