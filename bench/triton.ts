/**
 * The real Triton server (started as tests/_triton.ts does, from
 * ../shared/tritonserver or TRITONSERVER_DIR) with the identity model of
 * fixtures/triton/models without delay: inferperf over HTTP and gRPC (unary,
 * and --streaming) at concurrency 1, 16 and 64, each beside a reference
 * client replaying the same request on the same machine just before it: wrk
 * over HTTP, @grpc/grpc-js over gRPC (and h2load when installed).
 */
import { GrpcClient } from "../lib/protocol/grpc/client.ts";
import { KServeHttpClient } from "../lib/protocol/kserve_http.ts";
import type { InferenceClient } from "../lib/protocol/types.ts";
import { startTriton, triton, type TritonServer } from "../tests/_triton.ts";
import { runH2load } from "./grpc_capacity.ts";
import { grpcJsUnary } from "./grpc_js.ts";
import * as inferperf from "./inferperf.ts";
import { findExecutable, median } from "./process.ts";
import { type BenchRow, type CaseResult, ratio } from "./types.ts";
import { parseRawRequest, runWrk } from "./wrk.ts";
import { requestCounts } from "./http_capacity.ts";

const MODEL = "identity_fp32";
/** gRPC message framing: compressed flag and length before each message. */
const FRAME_HEADER_BYTES = 5;
/** The reference client's channel sharing, which inferperf keeps too. */
const STREAMS_PER_CONNECTION = 6;
/** Sizes inferperf's window when no reference client measured the rate first. */
const UNKNOWN_RATE = 5000;

export interface TritonBenchOptions {
  concurrencies?: number[];
  /** Measured seconds per tool and level. Default 3. */
  seconds?: number;
  /** Rounds over every level and tool; the table shows medians. Default 3. */
  rounds?: number;
}

interface Level {
  protocol: "http" | "grpc" | "grpc --streaming";
  concurrency: number;
  throughput: number;
  p50Us: number;
  p99Us: number;
  reference?: { name: string; throughput: number; p50Us?: number; p99Us?: number };
  h2load?: number;
}

/** The bytes inferperf sends for one request of zeros (HTTP: the request; gRPC: the framed message). */
async function requestBytes(client: InferenceClient): Promise<Uint8Array> {
  try {
    const info = await client.modelInfo(MODEL, "");
    const prepared = client.prepare({
      inputs: info.inputs.map((t) => ({
        name: t.name,
        datatype: t.datatype,
        shape: t.dims,
        data: new Uint8Array(4 * t.dims.reduce((n, d) => n * d, 1)),
      })),
      outputs: info.outputs.map((o) => o.name),
    }, { model: MODEL, version: "" });
    const fields = prepared as unknown as { bytes?: Uint8Array; framed?: Uint8Array };
    return fields.bytes ?? fields.framed!;
  } finally {
    await client.close();
  }
}

/**
 * inferperf on the identity model with a request of zeros, one window of
 * requests sized to last about `seconds` at the reference client's `rate`.
 */
async function inferperfLevel(
  args: string[],
  options: { concurrency: number; seconds: number; rate: number },
): Promise<inferperf.CsvLevel> {
  const run = await inferperf.countedRun(["-m", MODEL, ...args, "--input-data", "zero"], {
    concurrency: options.concurrency,
    ...requestCounts(options.rate, options.seconds),
  });
  return run.levels[0];
}

/** Every figure of the same level, each the median over the rounds. */
function medianLevel(rounds: readonly Level[]): Level {
  const mid = (pick: (level: Level) => number | undefined) => median(rounds.map((l) => pick(l)!));
  const [first] = rounds;
  const reference = first.reference;
  return {
    ...first,
    throughput: mid((l) => l.throughput),
    p50Us: mid((l) => l.p50Us),
    p99Us: mid((l) => l.p99Us),
    ...(reference === undefined ? {} : {
      reference: {
        name: reference.name,
        throughput: mid((l) => l.reference!.throughput),
        ...(reference.p50Us === undefined ? {} : {
          p50Us: mid((l) => l.reference!.p50Us),
          p99Us: mid((l) => l.reference!.p99Us),
        }),
      },
    }),
    ...(first.h2load === undefined ? {} : { h2load: mid((l) => l.h2load) }),
  };
}

async function measure(
  server: TritonServer,
  options: { concurrencies: number[]; seconds: number },
): Promise<Level[]> {
  const { seconds } = options;
  const wrk = findExecutable("wrk");
  const h2load = findExecutable("h2load");
  const [hostname, port] = server.http.split(":");
  const httpRequest = parseRawRequest(
    await requestBytes(
      new KServeHttpClient({ url: server.http, inputFormat: "binary", outputFormat: "binary" }),
    ),
  );
  const grpcFrame = await requestBytes(new GrpcClient({ url: server.grpc }));
  const levels: Level[] = [];
  for (const concurrency of options.concurrencies) {
    const wrkRun = wrk === undefined ? undefined : await runWrk(wrk, httpRequest, {
      url: `http://${hostname}:${port}${httpRequest.path}`,
      connections: concurrency,
      threads: 1,
      seconds,
    });
    const http: Level = {
      protocol: "http",
      concurrency,
      ...await inferperfLevel(["-u", server.http], {
        concurrency,
        seconds,
        rate: wrkRun?.requestsPerSecond ?? UNKNOWN_RATE,
      }),
      ...(wrkRun === undefined ? {} : {
        reference: {
          name: "wrk",
          throughput: wrkRun.requestsPerSecond,
          p50Us: wrkRun.p50Us,
          p99Us: wrkRun.p99Us,
        },
      }),
    };
    const grpcJs = await grpcJsUnary({
      addr: server.grpc,
      message: grpcFrame.subarray(FRAME_HEADER_BYTES),
      concurrency,
      seconds,
    });
    // grpc-js is slower than inferperf: the window is sized by h2load's rate when there is one.
    const connections = Math.ceil(concurrency / STREAMS_PER_CONNECTION);
    const h2loadRate = h2load === undefined ? undefined : await runH2load(h2load, {
      url: server.grpc,
      frame: grpcFrame,
      seconds,
      connections,
      streams: Math.ceil(concurrency / connections),
    }).then((figure) => figure.rate);
    const grpcRate = { concurrency, seconds, rate: h2loadRate ?? 4 * grpcJs };
    const grpc: Level = {
      protocol: "grpc",
      concurrency,
      ...await inferperfLevel(["-i", "grpc", "-u", server.grpc], grpcRate),
      reference: { name: "@grpc/grpc-js", throughput: grpcJs },
      ...(h2loadRate === undefined ? {} : { h2load: h2loadRate }),
    };
    const streaming: Level = {
      protocol: "grpc --streaming",
      concurrency,
      ...await inferperfLevel(["-i", "grpc", "--streaming", "-u", server.grpc], grpcRate),
    };
    levels.push(http, grpc, streaming);
  }
  return levels;
}

function rowsOf(level: Level): BenchRow[] {
  const ms = (us: number) => (us / 1000).toFixed(2);
  const name = `Triton ${level.protocol} c=${level.concurrency}`;
  const latency = `p50 ${ms(level.p50Us)} ms, p99 ${ms(level.p99Us)} ms`;
  const reference = level.reference;
  const rows: BenchRow[] = [{
    name,
    unit: "infer/s",
    inferperf: level.throughput,
    ...(reference === undefined ? {} : {
      reference: reference.throughput,
      referenceName: reference.name,
      ratio: ratio(level.throughput, reference.throughput),
    }),
    note: reference?.p50Us === undefined
      ? latency
      : `${latency}; ${reference.name} p50 ${ms(reference.p50Us)} ms, p99 ${
        ms(reference.p99Us!)
      } ms`,
  }];
  if (level.h2load !== undefined) {
    rows.push({
      name,
      unit: "infer/s",
      inferperf: level.throughput,
      reference: level.h2load,
      referenceName: "h2load",
      ratio: ratio(level.throughput, level.h2load),
    });
  }
  return rows;
}

export async function tritonBench(options: TritonBenchOptions = {}): Promise<CaseResult> {
  if ("reason" in triton) {
    throw new Error(`The Triton case needs the real server: ${triton.reason}`);
  }
  const server = await startTriton();
  try {
    const seconds = options.seconds ?? 3;
    const rounds: Level[][] = [];
    for (let i = 0; i < (options.rounds ?? 3); i++) {
      rounds.push(
        await measure(server, { concurrencies: options.concurrencies ?? [1, 16, 64], seconds }),
      );
    }
    const levels = rounds[0].map((_, i) => medianLevel(rounds.map((round) => round[i])));
    return {
      id: "triton",
      title: "Real Triton (identity backend, FP32[16], no delay)",
      rows: levels.flatMap(rowsOf),
      notes: [
        `tritonserver (CPU build, ${triton.dir}) on the same 2 cores as the clients; model ` +
        `${MODEL} with 2 instances: every figure is bounded by the server and the shared cores.`,
        `Per level the reference clients run ${seconds} s with inferperf's request bytes, then ` +
        `inferperf runs one window of as many requests as the fastest did in that time (after ` +
        `1 s worth of warmup); ${rounds.length} rounds over every level, medians shown.`,
        ...(findExecutable("wrk") === undefined
          ? ["wrk is not installed: no HTTP reference."]
          : []),
      ],
      details: rounds,
    };
  } finally {
    await server.stop();
  }
}

if (import.meta.main) console.log(JSON.stringify(await tritonBench(), null, 2));
