/**
 * The reference gRPC client: @grpc/grpc-js's own unary rate, run under Deno
 * in a process of its own as the inferperf CLI is. N calls in flight on one
 * channel (grpc-js's default: one HTTP/2 connection), each sending the same
 * pre-encoded ModelInferRequest; responses are taken as raw bytes, so the
 * figure is grpc-js's ceiling (a client that decodes them is slower).
 *
 * `deno run --allow-net --allow-read --allow-env bench/grpc_js.ts ADDR MESSAGE_FILE
 * CONCURRENCY SECONDS` prints `{"rate": infer/s, "requests": n}`.
 */
import * as grpc from "@grpc/grpc-js";
import { BENCH_ROOT } from "./inferperf.ts";
import { runCommand } from "./process.ts";

const METHOD = "/inference.GRPCInferenceService/ModelInfer";
/** Calls that run before the measured time, for connection set-up and the JIT. */
const WARMUP_MS = 1000;

export interface GrpcJsOptions {
  /** host:port of the gRPC server. */
  addr: string;
  /** A serialized ModelInferRequest (no gRPC message framing). */
  message: Uint8Array;
  concurrency: number;
  seconds: number;
}

/** Runs the grpc-js loop in this process: completed calls per second over `seconds`. */
async function unaryLoop(
  options: GrpcJsOptions,
): Promise<{ rate: number; requests: number }> {
  const client = new grpc.Client(options.addr, grpc.credentials.createInsecure());
  const request = Buffer.from(options.message);
  const serialize = (value: Buffer) => value;
  const deserialize = (value: Buffer) => value;
  const call = () =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        METHOD,
        serialize,
        deserialize,
        request,
        (error) => error ? reject(error) : resolve(),
      )
    );
  const start = performance.now();
  const measureFrom = start + WARMUP_MS;
  const end = measureFrom + options.seconds * 1000;
  let requests = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await call();
      if (performance.now() >= measureFrom) requests++;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    client.close();
  }
  return { rate: requests / options.seconds, requests };
}

/** Runs the grpc-js client as a child process and returns its rate, infer/s. */
export async function grpcJsUnary(options: GrpcJsOptions): Promise<number> {
  const file = await Deno.makeTempFile({ prefix: "inferperf-grpc-js-", suffix: ".bin" });
  try {
    await Deno.writeFile(file, options.message);
    const result = await runCommand(Deno.execPath(), [
      "run",
      "--allow-net",
      "--allow-read",
      "--allow-env",
      new URL(import.meta.url).pathname,
      options.addr,
      file,
      String(options.concurrency),
      String(options.seconds),
    ], { cwd: BENCH_ROOT });
    if (result.code !== 0) {
      throw new Error(`The grpc-js client failed (${result.code}): ${result.stderr.trim()}`);
    }
    return (JSON.parse(result.stdout) as { rate: number }).rate;
  } finally {
    await Deno.remove(file);
  }
}

if (import.meta.main) {
  const [addr, file, concurrency, seconds] = Deno.args;
  const result = await unaryLoop({
    addr,
    message: await Deno.readFile(file),
    concurrency: Number(concurrency),
    seconds: Number(seconds),
  });
  console.log(JSON.stringify(result));
}
