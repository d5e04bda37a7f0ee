/**
 * HTTP client capacity: inferperf's closed loop against wrk replaying the
 * same request bytes, both against a server that is never the bottleneck.
 */
import * as inferperf from "./inferperf.ts";
import { type ProcessSample } from "./process.ts";
import { startProbe } from "./probe.ts";
import type { HttpTarget } from "./targets.ts";
import { type BenchRow, type CaseResult, ratio } from "./types.ts";
import { parseRawRequest, runWrk } from "./wrk.ts";

/** 153,600 FP32 values: a 600 KiB tensor. */
const LARGE_ELEMENTS = 153_600;
const TARGET_CONCURRENCY = 64;
const TARGET_RATIO = 0.8;
/** Warmup before inferperf's measured requests: JIT and connections settle. */
const WARMUP_SECONDS = 1;
const MIN_REQUESTS = 200;

export interface HttpCapacityOptions {
  /** Levels of the small request. Default [1, 16, 64]. */
  concurrencies?: number[];
  /** Concurrency of the 600 KB request. Default 16. */
  largeConcurrency?: number;
  /** Measured seconds per tool and level. Default 5. */
  seconds?: number;
  /** wrk threads; default 1, the one event loop inferperf has. */
  wrkThreads?: number;
}

interface Variant {
  label: string;
  args: string[];
  concurrency: number;
}

/** CPU use of a sampled run as a percentage of one core. */
function cpuPercent(samples: readonly ProcessSample[]): number {
  if (samples.length < 2) return NaN;
  const first = samples[0];
  const last = samples[samples.length - 1];
  return ((last.cpuMs - first.cpuMs) / (last.timeMs - first.timeMs)) * 100;
}

/** The exact request inferperf sends with `args`, captured by the probe server. */
async function captureRequest(args: readonly string[]): Promise<Uint8Array> {
  const probe = startProbe();
  try {
    await inferperf.profile(["-u", probe.addr, ...args, "--request-count", "1"]);
    return (await probe.firstInfer).bytes;
  } finally {
    await probe.close();
  }
}

async function measureVariant(
  target: HttpTarget,
  variant: Variant,
  options: { seconds: number; wrk: string; wrkThreads: number },
): Promise<{ row: BenchRow; details: unknown }> {
  const request = parseRawRequest(await captureRequest(variant.args));
  const wrkRun = await runWrk(options.wrk, request, {
    url: `http://${target.addr}${request.path}`,
    connections: variant.concurrency,
    threads: options.wrkThreads,
    seconds: options.seconds,
  });
  // Sized from wrk's rate so both tools are measured for about the same time.
  const count = Math.max(MIN_REQUESTS, Math.round(wrkRun.requestsPerSecond * options.seconds));
  const warmup = Math.max(MIN_REQUESTS, Math.round(wrkRun.requestsPerSecond * WARMUP_SECONDS));
  const run = await inferperf.profile([
    "-u",
    target.addr,
    ...variant.args,
    "--concurrency-range",
    String(variant.concurrency),
    "--warmup-request-count",
    String(warmup),
    "--request-count",
    String(count),
  ]);
  const level = run.levels[0];
  const inferperfCpu = cpuPercent(run.samples);
  const wrkCpu = cpuPercent(wrkRun.samples);
  const r = ratio(level.throughput, wrkRun.requestsPerSecond);
  const targeted = variant.concurrency === TARGET_CONCURRENCY && !variant.label.includes("600");
  const row: BenchRow = {
    name: `HTTP ${variant.label} c=${variant.concurrency}`,
    unit: "infer/s",
    inferperf: level.throughput,
    reference: wrkRun.requestsPerSecond,
    referenceName: "wrk",
    ...(r === undefined ? {} : { ratio: r }),
    ...(targeted ? { target: `>= ${TARGET_RATIO} x wrk`, met: (r ?? 0) >= TARGET_RATIO } : {}),
    note: `p50 ${(level.p50Us / 1000).toFixed(2)} vs ${(wrkRun.p50Us / 1000).toFixed(2)} ms, ` +
      `CPU ${inferperfCpu.toFixed(0)}% vs ${wrkCpu.toFixed(0)}%` +
      (wrkRun.errors > 0 ? `, wrk errors ${wrkRun.errors}` : ""),
  };
  return {
    row,
    details: {
      variant: variant.label,
      concurrency: variant.concurrency,
      requestBytes: request.body.byteLength,
      inferperf: {
        throughput: level.throughput,
        p50Us: level.p50Us,
        p99Us: level.p99Us,
        requests: count,
        warmup,
        cpuPercent: inferperfCpu,
        peakRssKb: Math.max(...run.samples.map((s) => s.hwmKb)),
      },
      wrk: {
        throughput: wrkRun.requestsPerSecond,
        p50Us: wrkRun.p50Us,
        p99Us: wrkRun.p99Us,
        errors: wrkRun.errors,
        cpuPercent: wrkCpu,
        threads: Math.min(options.wrkThreads, variant.concurrency),
      },
    },
  };
}

/** Runs every level against `target`; `wrk` is the path of the wrk executable. */
export async function httpCapacity(
  target: HttpTarget,
  wrk: string,
  options: HttpCapacityOptions = {},
): Promise<CaseResult> {
  const seconds = options.seconds ?? 5;
  const wrkThreads = options.wrkThreads ?? 1;
  const small = ["-m", "simple", "--input-data", "zero"];
  const variants: Variant[] = [
    ...(options.concurrencies ?? [1, 16, TARGET_CONCURRENCY]).map((concurrency) => ({
      label: "small",
      args: small,
      concurrency,
    })),
    {
      label: "600 KiB",
      args: ["-m", "identity_fp32", "--input-data", "zero", "--shape", `INPUT0:${LARGE_ELEMENTS}`],
      concurrency: options.largeConcurrency ?? 16,
    },
  ];
  const rows: BenchRow[] = [];
  const details: unknown[] = [];
  for (const variant of variants) {
    const measured = await measureVariant(target, variant, { seconds, wrk, wrkThreads });
    rows.push(measured.row);
    details.push(measured.details);
  }
  const server = target.kind === "nginx"
    ? "nginx (1 worker) with canned KServe v2 responses"
    : "the reference server (nginx is not installed: run bench/setup.sh)";
  return {
    id: "http",
    title: "HTTP client capacity (KServe v2 binary infer)",
    rows,
    notes: [
      `Server: ${server}.`,
      `wrk -t ${wrkThreads} replays the exact request inferperf sends (captured), ${seconds} s per level; ` +
      `inferperf runs the CLI with --warmup-request-count and --request-count sized to the same duration.`,
    ],
    details,
  };
}
