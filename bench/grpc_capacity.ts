/**
 * gRPC client capacity at concurrency 64 against the reference server (in a
 * worker thread of this process): inferperf's unary ModelInfer throughput
 * against h2load (apt: nghttp2-client) replaying the same request frames,
 * when it is installed, and against @grpc/grpc-js's own unary rate
 * (bench/grpc_js.ts); then inferperf --streaming (ModelStreamInfer), as an
 * absolute figure: h2load opens a stream per request and cannot keep
 * messages flowing on long-lived streams, so it has no comparable figure.
 */
import { GrpcClient } from "../lib/protocol/grpc/client.ts";
import { grpcJsUnary } from "./grpc_js.ts";
import * as inferperf from "./inferperf.ts";
import { type CountedSample, findExecutable, median, runSampled, steadyState } from "./process.ts";
import { startNginx, startReferenceTarget } from "./targets.ts";
import { type BenchRow, type CaseResult, ratio } from "./types.ts";

/** gRPC message framing: compressed flag and length before each message. */
const FRAME_HEADER_BYTES = 5;
/** Start-up left out of the CPU per request (h2load runs only `seconds`). */
const CPU_SKIP_MS = 1000;
const SAMPLE_MS = 250;

export interface GrpcCapacityOptions {
  /** Requests in flight. Default 64. */
  concurrency?: number;
  /** Measurement window of inferperf and duration of h2load, seconds. Default 3. */
  seconds?: number;
  /** HTTP/2 connections of h2load; streams per connection follow. Default 11 (6 streams each, as the reference client). */
  h2loadConnections?: number;
  /** Alternating rounds of inferperf unary, h2load and inferperf streaming. Default 3. */
  rounds?: number;
}

export interface GrpcCapacityFigures {
  concurrency: number;
  /** Medians over the rounds. */
  inferperf: number;
  h2load?: number;
  grpcJs: number;
  inferperfStreaming: number;
  /** Each round's figures, in order. */
  rounds: Round[];
}

/** A client's rate, and its CPU per request (utime + stime) over the steady part of its run. */
export interface ClientFigure {
  rate: number;
  cpuUsPerRequest: number | undefined;
}

/** One figure of a round (undefined when not measured). */
type Figure<R> = (round: R) => number | undefined;

/** The median over the rounds of a per-round ratio to h2load. */
function medianRatio<R>(rounds: readonly R[], of: Figure<R>, h2: Figure<R>): number {
  return median(rounds.map((r) => of(r)! / h2(r)!));
}

/** "rounds: a/b, ..." of a figure and h2load's. */
function roundsNote<R>(
  rounds: readonly R[],
  options: { of: Figure<R>; h2: Figure<R>; digits: number },
): string {
  const { of, h2, digits } = options;
  return `rounds: ${
    rounds.map((r) => `${of(r)?.toFixed(digits)}/${h2(r)?.toFixed(digits)}`).join(", ")
  }`;
}

/** inferperf unary and h2load, run one after the other. */
interface UnaryPair {
  unary: ClientFigure;
  h2load?: ClientFigure;
}

interface Round extends UnaryPair {
  streaming: ClientFigure;
}

const cpuPerRequest = (samples: readonly CountedSample[]) =>
  steadyState(samples, { skipMs: CPU_SKIP_MS })?.cpuUsPerRequest;

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

/**
 * h2load's unary rate replaying `frame` with `streams` streams on each of
 * `connections`; with `counter` (the server's requests), its CPU per request.
 */
export async function runH2load(
  h2load: string,
  options: {
    url: string;
    frame: Uint8Array;
    seconds: number;
    connections: number;
    streams: number;
    counter?: () => Promise<number>;
  },
): Promise<ClientFigure> {
  const data = await Deno.makeTempFile({ prefix: "inferperf-grpc-", suffix: ".bin" });
  try {
    await Deno.writeFile(data, options.frame);
    const result = await runSampled(h2load, [
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
    ], { intervalMs: SAMPLE_MS, ...(options.counter ? { counter: options.counter } : {}) });
    const match = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(result.stdout);
    if (result.code !== 0 || match === null) {
      throw new Error(`h2load failed (${result.code}): ${result.stderr || result.stdout}`);
    }
    return { rate: Number(match[1]), cpuUsPerRequest: cpuPerRequest(result.samples) };
  } finally {
    await Deno.remove(data);
  }
}

/** inferperf's throughput with `concurrency` requests in flight, unary or over streams. */
async function inferperfRate(
  addr: string,
  options: {
    concurrency: number;
    seconds: number;
    streaming: boolean;
    counter: () => Promise<number>;
  },
): Promise<ClientFigure> {
  const args = ["-m", "simple", "-i", "grpc", "-u", addr];
  if (options.streaming) args.push("--streaming");
  const run = await inferperf.stableLevel(args, options);
  return { rate: run.levels[0].throughput, cpuUsPerRequest: cpuPerRequest(run.samples) };
}

/**
 * Alternating rounds of inferperf unary and h2load against nginx's canned
 * gRPC answers (not the bottleneck, unlike the reference server); none
 * without nginx.
 */
async function againstNginx(
  h2load: string,
  options: {
    frame: Uint8Array;
    concurrency: number;
    seconds: number;
    connections: number;
    rounds: number;
  },
): Promise<UnaryPair[]> {
  const nginx = findExecutable("nginx");
  if (nginx === undefined) return [];
  const target = await startNginx(nginx, { grpc: true });
  try {
    const counter = () => target.requestCount();
    const { concurrency, seconds, connections } = options;
    const rounds: UnaryPair[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const unary = await inferperfRate(target.addr, {
        concurrency,
        seconds,
        streaming: false,
        counter,
      });
      const h2 = await runH2load(h2load, {
        url: target.addr,
        frame: options.frame,
        seconds,
        connections,
        streams: Math.ceil(concurrency / connections),
        counter,
      });
      rounds.push({ unary, h2load: h2 });
    }
    return rounds;
  } finally {
    await target.close();
  }
}

/** Measures and returns the figures and the bench table rows. */
export async function grpcCapacity(
  options: GrpcCapacityOptions = {},
): Promise<CaseResult & { details: GrpcCapacityFigures }> {
  const concurrency = options.concurrency ?? 64;
  const seconds = options.seconds ?? 3;
  const notes = [
    "Reference server in a worker thread of the bench process, each client in its own process, " +
    "on the same 2 cores: every rate is bounded by the server, and a client that costs the " +
    "server more per request (h2load's framing does) gets fewer. The CPU rows are the clients' " +
    "own cost.",
    "@grpc/grpc-js 1.14 under Deno: the same pre-encoded request, one channel, responses not " +
    "decoded (inferperf does not decode them either at this level).",
  ];
  const server = await startReferenceTarget();
  try {
    const addr = server.grpcAddr;
    const counter = () => server.requestCount();
    const frame = await requestFrame(addr);
    const h2load = findExecutable("h2load");
    if (h2load === undefined) {
      notes.push("h2load not installed (apt-get install nghttp2-client): no reference figure.");
    }
    const connections = options.h2loadConnections ?? Math.ceil(concurrency / 6);
    const rounds: GrpcCapacityFigures["rounds"] = [];
    // Alternating, so that a slow stretch of the shared machine hits every tool alike.
    for (let round = 0; round < (options.rounds ?? 3); round++) {
      const unary = await inferperfRate(addr, { concurrency, seconds, streaming: false, counter });
      const reference = h2load === undefined ? undefined : await runH2load(h2load, {
        url: addr,
        frame,
        seconds,
        connections,
        streams: Math.ceil(concurrency / connections),
        counter,
      });
      const streaming = await inferperfRate(addr, {
        concurrency,
        seconds,
        streaming: true,
        counter,
      });
      rounds.push({ unary, streaming, ...(reference === undefined ? {} : { h2load: reference }) });
    }
    const grpcJs = await grpcJsUnary({
      addr,
      message: frame.subarray(FRAME_HEADER_BYTES),
      concurrency,
      seconds,
    });
    const nginxRounds = h2load === undefined ? [] : await againstNginx(h2load, {
      frame,
      concurrency,
      seconds,
      connections,
      rounds: options.rounds ?? 3,
    });
    const rateOf = (figure: ClientFigure) => figure.rate;
    const unary = median(rounds.map((r) => r.unary.rate));
    const streaming = median(rounds.map((r) => r.streaming.rate));
    const references = rounds.flatMap((r) => r.h2load === undefined ? [] : [r.h2load.rate]);
    const figures: GrpcCapacityFigures = {
      concurrency,
      inferperf: unary,
      grpcJs,
      inferperfStreaming: streaming,
      rounds,
      ...(references.length === 0 ? {} : { h2load: median(references) }),
    };
    const ratioToH2load = (of: Figure<Round>, h2: Figure<Round>) => medianRatio(rounds, of, h2);
    const perRound = (of: Figure<Round>, h2: Figure<Round>, digits = 0) =>
      roundsNote(rounds, { of, h2, digits });
    const h2Rate = (r: Round) => r.h2load!.rate;
    const rows: BenchRow[] = [
      {
        name: `gRPC unary c=${concurrency}`,
        unit: "infer/s",
        inferperf: unary,
        ...(figures.h2load === undefined ? {} : {
          reference: figures.h2load,
          referenceName: "h2load",
          ratio: ratioToH2load((r) => r.unary.rate, h2Rate),
          target: ">= 1.0 x h2load",
          met: ratioToH2load((r) => r.unary.rate, h2Rate) >= 1,
          note: perRound((r) => rateOf(r.unary), (r) => r.h2load?.rate),
        }),
      },
      {
        name: `gRPC unary c=${concurrency}`,
        unit: "infer/s",
        inferperf: unary,
        reference: grpcJs,
        referenceName: "@grpc/grpc-js",
        ratio: ratio(unary, grpcJs),
        target: "> @grpc/grpc-js",
        met: unary > grpcJs,
      },
      {
        name: `gRPC streaming c=${concurrency}`,
        unit: "infer/s",
        inferperf: streaming,
        ...(figures.h2load === undefined ? {} : {
          reference: figures.h2load,
          referenceName: "h2load unary",
          ratio: ratioToH2load((r) => r.streaming.rate, h2Rate),
          target: ">= 1.2 x h2load unary",
          met: ratioToH2load((r) => r.streaming.rate, h2Rate) >= 1.2,
        }),
        note:
          `--streaming: ${concurrency} ModelStreamInfer streams, one request in flight on each; ` +
          `${(streaming / unary).toFixed(2)} x unary; ${
            perRound((r) => rateOf(r.streaming), (r) => r.h2load?.rate)
          }`,
      },
    ];
    const measured = rounds.every((r) =>
      r.unary.cpuUsPerRequest !== undefined && r.streaming.cpuUsPerRequest !== undefined &&
      r.h2load?.cpuUsPerRequest !== undefined
    );
    if (measured) {
      // The clients' own cost, which the server's share of the two cores does not bound.
      const h2Cpu = (r: Round) => r.h2load!.cpuUsPerRequest!;
      for (
        const [kind, of] of [["unary", (r: Round) => r.unary], [
          "streaming",
          (r: Round) => r.streaming,
        ]] as const
      ) {
        rows.push({
          name: `gRPC ${kind} c=${concurrency}: client CPU`,
          unit: "µs CPU/req",
          inferperf: median(rounds.map((r) => of(r).cpuUsPerRequest!)),
          reference: median(rounds.map(h2Cpu)),
          referenceName: "h2load unary",
          ratio: ratioToH2load((r) => of(r).cpuUsPerRequest, h2Cpu),
          note: `utime + stime per request the server counted, after the first ${
            CPU_SKIP_MS / 1000
          } s; ${perRound((r) => of(r).cpuUsPerRequest, (r) => r.h2load?.cpuUsPerRequest, 1)}`,
        });
      }
    }
    if (nginxRounds.length > 0) {
      notes.push(
        "nginx: its canned gRPC answers to `simple` over cleartext HTTP/2 (bench/targets.ts), " +
          "headers Huffman-coded and indexed as gRPC servers send them; nginx cannot answer " +
          "ModelStreamInfer, so only unary.",
      );
      const unaryRate = (r: UnaryPair) => r.unary.rate;
      const h2Rate = (r: UnaryPair) => r.h2load?.rate;
      const cpu = (r: UnaryPair) => r.unary.cpuUsPerRequest;
      const h2Cpu = (r: UnaryPair) => r.h2load?.cpuUsPerRequest;
      const medianOf = (of: Figure<UnaryPair>) => median(nginxRounds.map((r) => of(r)!));
      const ratioOf = (of: Figure<UnaryPair>, h2: Figure<UnaryPair>) =>
        medianRatio(nginxRounds, of, h2);
      const roundsOf = (of: Figure<UnaryPair>, h2: Figure<UnaryPair>, digits: number) =>
        roundsNote(nginxRounds, { of, h2, digits });
      rows.push({
        name: `gRPC unary c=${concurrency}, nginx`,
        unit: "infer/s",
        inferperf: medianOf(unaryRate),
        reference: medianOf(h2Rate),
        referenceName: "h2load",
        ratio: ratioOf(unaryRate, h2Rate),
        target: ">= 1.0 x h2load",
        met: ratioOf(unaryRate, h2Rate) >= 1,
        note: roundsOf(unaryRate, h2Rate, 0),
      });
      if (nginxRounds.every((r) => cpu(r) !== undefined && h2Cpu(r) !== undefined)) {
        rows.push({
          name: `gRPC unary c=${concurrency}, nginx: client CPU`,
          unit: "µs CPU/req",
          inferperf: medianOf(cpu),
          reference: medianOf(h2Cpu),
          referenceName: "h2load",
          ratio: ratioOf(cpu, h2Cpu),
          note: roundsOf(cpu, h2Cpu, 1),
        });
      }
    }
    return {
      id: "grpc",
      title: "gRPC capacity",
      rows,
      notes,
      details: figures,
    };
  } finally {
    await server.close();
  }
}

if (import.meta.main) console.log(JSON.stringify(await grpcCapacity(), null, 2));
