/**
 * HTTP client capacity: inferperf's closed loop against wrk replaying the
 * same request bytes, both against a server that is never the bottleneck.
 */
import * as inferperf from "./inferperf.ts";
import { type CountedSample, median, type ProcessSample, steadyState } from "./process.ts";
import { startProbe } from "./probe.ts";
import type { HttpTarget } from "./targets.ts";
import type { BenchRow, CaseResult } from "./types.ts";
import { parseRawRequest, type RawRequest, runWrk } from "./wrk.ts";

/** 153,600 FP32 values: a 600 KiB tensor. */
const LARGE_ELEMENTS = 153_600;
const TARGET_CONCURRENCY = 64;
const TARGET_RATIO = 0.8;
/** Warmup before inferperf's measured requests: JIT, connections and worker threads settle. */
const WARMUP_SECONDS = 1;
const MIN_REQUESTS = 200;
/** Start-up left out of the CPU per request: the runs last only `seconds`. */
const CPU_SKIP_MS = 1000;

/** The small request: Triton's `simple` with zeros. */
export const SMALL_REQUEST_ARGS: readonly string[] = ["-m", "simple", "--input-data", "zero"];

/** Warmup and measured request counts that last about as long as `seconds` at wrk's rate. */
export function requestCounts(
  requestsPerSecond: number,
  seconds: number,
): { warmup: number; requests: number } {
  const count = (s: number) => Math.max(MIN_REQUESTS, Math.round(requestsPerSecond * s));
  return { warmup: count(WARMUP_SECONDS), requests: count(seconds) };
}

/** The server of the HTTP cases, in words for the notes. */
export function describeTarget(target: HttpTarget): string {
  return target.kind === "nginx"
    ? "nginx (1 worker) with canned KServe v2 responses"
    : "the reference server (nginx is not installed: run bench/setup.sh)";
}

export interface HttpCapacityOptions {
  /** Levels of the small request. Default [1, 16, 64]. */
  concurrencies?: number[];
  /** Concurrency of the 600 KB request. Default 16. */
  largeConcurrency?: number;
  /** Measured seconds per tool, level and round. Default 3. */
  seconds?: number;
  /** Alternating wrk/inferperf rounds per level. Default 3. */
  rounds?: number;
  /** wrk threads; default 1, the one event loop inferperf has. */
  wrkThreads?: number;
}

interface Variant {
  label: string;
  args: string[];
  concurrency: number;
  /** Issue 8's target applies (the small request at concurrency 64). */
  targeted: boolean;
}

/** CPU use of a sampled run as a percentage of one core. */
export function cpuPercent(samples: readonly ProcessSample[]): number {
  if (samples.length < 2) return NaN;
  const first = samples[0];
  const last = samples[samples.length - 1];
  return ((last.cpuMs - first.cpuMs) / (last.timeMs - first.timeMs)) * 100;
}

/** The exact request inferperf sends with `args`, captured by the probe server. */
export async function captureRequest(args: readonly string[]): Promise<Uint8Array> {
  const probe = startProbe();
  try {
    await inferperf.profile(["-u", probe.addr, ...args, "--request-count", "1"]);
    return (await probe.firstInfer).bytes;
  } finally {
    await probe.close();
  }
}

interface Round {
  ratio: number;
  inferperf: {
    throughput: number;
    p50Us: number;
    p99Us: number;
    requests: number;
    warmup: number;
    cpuPercent: number;
    /** utime + stime per request the server counted, after the first CPU_SKIP_MS. */
    cpuUsPerRequest: number;
    peakRssKb: number;
  };
  wrk: {
    throughput: number;
    p50Us: number;
    p99Us: number;
    errors: number;
    cpuPercent: number;
    cpuUsPerRequest: number;
  };
}

const cpuPerRequest = (samples: readonly CountedSample[]) =>
  steadyState(samples, { skipMs: CPU_SKIP_MS })?.cpuUsPerRequest ?? NaN;

/** wrk, then inferperf for about as long, back to back so both see the same machine load. */
async function measureRound(
  target: HttpTarget,
  variant: Variant & { request: RawRequest },
  options: { seconds: number; wrk: string; wrkThreads: number },
): Promise<Round> {
  const wrkRun = await runWrk(options.wrk, variant.request, {
    url: `http://${target.addr}${variant.request.path}`,
    connections: variant.concurrency,
    threads: options.wrkThreads,
    seconds: options.seconds,
    counter: () => target.requestCount(),
  });
  const { warmup, requests } = requestCounts(wrkRun.requestsPerSecond, options.seconds);
  const run = await inferperf.countedRun(["-u", target.addr, ...variant.args], {
    concurrency: variant.concurrency,
    warmup,
    requests,
    counter: () => target.requestCount(),
  });
  const level = run.levels[0];
  return {
    ratio: level.throughput / wrkRun.requestsPerSecond,
    inferperf: {
      throughput: level.throughput,
      p50Us: level.p50Us,
      p99Us: level.p99Us,
      requests,
      warmup,
      cpuPercent: cpuPercent(run.samples),
      cpuUsPerRequest: cpuPerRequest(run.samples),
      peakRssKb: Math.max(...run.samples.map((s) => s.hwmKb)),
    },
    wrk: {
      throughput: wrkRun.requestsPerSecond,
      p50Us: wrkRun.p50Us,
      p99Us: wrkRun.p99Us,
      errors: wrkRun.errors,
      cpuPercent: cpuPercent(wrkRun.samples),
      cpuUsPerRequest: cpuPerRequest(wrkRun.samples),
    },
  };
}

/** Medians over `rounds` rounds; the ratio is the median of the per-round ratios. */
async function measureVariant(
  target: HttpTarget,
  variant: Variant,
  options: { seconds: number; rounds: number; wrk: string; wrkThreads: number },
): Promise<{ rows: BenchRow[]; details: unknown }> {
  const request = parseRawRequest(await captureRequest(variant.args));
  const rounds: Round[] = [];
  for (let i = 0; i < options.rounds; i++) {
    rounds.push(await measureRound(target, { ...variant, request }, options));
  }
  const mid = (pick: (r: Round) => number) => median(rounds.map(pick));
  const r = mid((x) => x.ratio);
  const ratios = rounds.map((x) => x.ratio);
  const errors = rounds.reduce((n, x) => n + x.wrk.errors, 0);
  const ms = (us: number) => (us / 1000).toFixed(2);
  const inferperfCpu = mid((x) => x.inferperf.cpuPercent);
  const wrkCpu = mid((x) => x.wrk.cpuPercent);
  const inferperfRate = mid((x) => x.inferperf.throughput);
  const wrkRate = mid((x) => x.wrk.throughput);
  // CPU time per request holds up better than throughput when other work competes for the cores.
  const inferperfUs = mid((x) => x.inferperf.cpuUsPerRequest);
  const wrkUs = mid((x) => x.wrk.cpuUsPerRequest);
  const row: BenchRow = {
    name: `HTTP ${variant.label} c=${variant.concurrency}`,
    unit: "infer/s",
    inferperf: inferperfRate,
    reference: wrkRate,
    referenceName: "wrk",
    ratio: r,
    ...(variant.targeted ? { target: `>= ${TARGET_RATIO} x wrk`, met: r >= TARGET_RATIO } : {}),
    note: `ratio ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} ` +
      `over ${rounds.length} rounds; p50 ${ms(mid((x) => x.inferperf.p50Us))} vs ` +
      `${ms(mid((x) => x.wrk.p50Us))} ms; CPU ${inferperfUs.toFixed(1)} vs ` +
      `${wrkUs.toFixed(1)} µs/req (${inferperfCpu.toFixed(0)}% vs ${wrkCpu.toFixed(0)}% ` +
      `of a core)` + (errors > 0 ? `; wrk errors ${errors}` : ""),
  };
  const cpuRow: BenchRow = {
    name: `HTTP ${variant.label} c=${variant.concurrency}: client CPU`,
    unit: "µs CPU/req",
    inferperf: inferperfUs,
    reference: wrkUs,
    referenceName: "wrk",
    ratio: median(rounds.map((x) => x.inferperf.cpuUsPerRequest / x.wrk.cpuUsPerRequest)),
    note: `utime + stime per request the server counted, after the first ${
      CPU_SKIP_MS / 1000
    } s; rounds: ${
      rounds.map((x) =>
        `${x.inferperf.cpuUsPerRequest.toFixed(1)}/${x.wrk.cpuUsPerRequest.toFixed(1)}`
      )
        .join(", ")
    }`,
  };
  return {
    rows: variant.targeted ? [row, cpuRow] : [row],
    details: {
      variant: variant.label,
      concurrency: variant.concurrency,
      requestBytes: request.body.byteLength,
      wrkThreads: Math.min(options.wrkThreads, variant.concurrency),
      rounds,
    },
  };
}

/** Runs every level against `target`; `wrk` is the path of the wrk executable. */
export async function httpCapacity(
  target: HttpTarget,
  wrk: string,
  options: HttpCapacityOptions = {},
): Promise<CaseResult> {
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 3;
  const wrkThreads = options.wrkThreads ?? 1;
  const variants: Variant[] = [
    ...(options.concurrencies ?? [1, 16, TARGET_CONCURRENCY]).map((concurrency) => ({
      label: "small",
      args: [...SMALL_REQUEST_ARGS],
      concurrency,
      targeted: concurrency === TARGET_CONCURRENCY,
    })),
    {
      label: "600 KiB",
      args: ["-m", "identity_fp32", "--input-data", "zero", "--shape", `INPUT0:${LARGE_ELEMENTS}`],
      concurrency: options.largeConcurrency ?? 16,
      targeted: false,
    },
  ];
  const rows: BenchRow[] = [];
  const details: unknown[] = [];
  for (const variant of variants) {
    const measured = await measureVariant(target, variant, { seconds, rounds, wrk, wrkThreads });
    rows.push(...measured.rows);
    details.push(measured.details);
  }
  return {
    id: "http",
    title: "HTTP client capacity (KServe v2 binary infer)",
    rows,
    notes: [
      `Server: ${describeTarget(target)}.`,
      `wrk -t ${wrkThreads} replays the exact request inferperf sends (captured); per level, ` +
      `${rounds} rounds of wrk for ${seconds} s then the inferperf CLI with --warmup-request-count ` +
      `and --request-count sized to the same duration; medians shown.`,
    ],
    details,
  };
}
