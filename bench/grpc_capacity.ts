/**
 * gRPC client capacity: inferperf's unary ModelInfer throughput at
 * concurrency 64 against the reference server (in a worker thread of this
 * process), and h2load (apt: nghttp2-client) replaying the same request
 * frames against the same server when it is installed.
 */
import { GrpcClient } from "../lib/protocol/grpc/client.ts";
import { startServerInWorker } from "../lib/server/mod.ts";
import * as inferperf from "./inferperf.ts";
import { findExecutable, runCommand } from "./process.ts";
import { type BenchRow, type CaseResult, ratio } from "./types.ts";

/** What the lead measured for @grpc/grpc-js unary under Deno on this machine (c=64). */
const GRPC_JS_UNARY = 10_600;

export interface GrpcCapacityOptions {
  /** Requests in flight. Default 64. */
  concurrency?: number;
  /** Measurement window of inferperf and duration of h2load, seconds. Default 3. */
  seconds?: number;
  /** HTTP/2 connections of h2load; streams per connection follow. Default 11 (6 streams each, as the reference client). */
  h2loadConnections?: number;
}

export interface GrpcCapacityFigures {
  concurrency: number;
  inferperf: number;
  h2load?: number;
}

/** The framed ModelInfer request inferperf sends for `simple` (batch 1, zeros). */
async function requestFrame(url: string): Promise<Uint8Array> {
  const client = new GrpcClient({ url });
  try {
    const info = await client.modelInfo("simple", "");
    const prepared = client.prepare({
      inputs: info.inputs.map((t) => ({
        name: t.name,
        datatype: t.datatype,
        shape: [1, ...t.dims],
        data: new Uint8Array(4 * t.dims.reduce((n, d) => n * d, 1)),
      })),
      outputs: info.outputs.map((o) => o.name),
    }, { model: "simple", version: "" });
    return (prepared as unknown as { framed: Uint8Array }).framed;
  } finally {
    await client.close();
  }
}

async function runH2load(
  h2load: string,
  options: { url: string; seconds: number; connections: number; streams: number },
): Promise<number> {
  const data = await Deno.makeTempFile({ prefix: "inferperf-grpc-", suffix: ".bin" });
  try {
    await Deno.writeFile(data, await requestFrame(options.url));
    const result = await runCommand(h2load, [
      "-D",
      String(options.seconds),
      "-c",
      String(options.connections),
      "-m",
      String(options.streams),
      "-d",
      data,
      "-H",
      "content-type: application/grpc",
      "-H",
      "te: trailers",
      `http://${options.url}/inference.GRPCInferenceService/ModelInfer`,
    ]);
    const match = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(result.stdout);
    if (result.code !== 0 || match === null) {
      throw new Error(`h2load failed (${result.code}): ${result.stderr || result.stdout}`);
    }
    return Number(match[1]);
  } finally {
    await Deno.remove(data);
  }
}

/** Measures and returns the figures and the bench table rows. */
export async function grpcCapacity(
  options: GrpcCapacityOptions = {},
): Promise<CaseResult & { details: GrpcCapacityFigures }> {
  const concurrency = options.concurrency ?? 64;
  const seconds = options.seconds ?? 3;
  const notes = [
    "Reference server in a worker thread of the bench process, client in its own process, on the same 2 cores.",
  ];
  const server = await startServerInWorker();
  try {
    const run = await inferperf.profile([
      "-m",
      "simple",
      "-i",
      "grpc",
      "-u",
      server.grpcAddr,
      "--concurrency-range",
      String(concurrency),
      "--warmup-request-count",
      "2000",
      "-p",
      String(seconds * 1000),
      "-s",
      "50",
      "-r",
      "5",
    ]);
    const figures: GrpcCapacityFigures = { concurrency, inferperf: run.levels[0].throughput };
    const h2load = findExecutable("h2load");
    if (h2load === undefined) {
      notes.push("h2load not installed (apt-get install nghttp2-client): no reference figure.");
    } else {
      const connections = options.h2loadConnections ?? Math.ceil(concurrency / 6);
      figures.h2load = await runH2load(h2load, {
        url: server.grpcAddr,
        seconds,
        connections,
        streams: Math.ceil(concurrency / connections),
      });
    }
    const rows: BenchRow[] = [{
      name: `grpc unary c=${concurrency}`,
      unit: "infer/s",
      inferperf: figures.inferperf,
      ...(figures.h2load === undefined ? {} : {
        reference: figures.h2load,
        referenceName: "h2load",
        ratio: ratio(figures.inferperf, figures.h2load),
      }),
      target: `> @grpc/grpc-js (${GRPC_JS_UNARY} infer/s)`,
      met: figures.inferperf > GRPC_JS_UNARY,
      note: "the server shares the machine: both figures are bounded by it",
    }];
    return {
      id: "grpc",
      title: "gRPC unary capacity",
      rows,
      notes,
      details: figures,
    };
  } finally {
    await server.close();
  }
}

if (import.meta.main) console.log(JSON.stringify(await grpcCapacity(), null, 2));
