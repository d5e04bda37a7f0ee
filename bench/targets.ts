/**
 * Servers the bench loads: nginx answering canned KServe v2 responses over
 * HTTP/1.1 or gRPC (never the bottleneck), or the reference server when
 * nginx is absent.
 */
import { DEFAULT_MODELS, type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import {
  encodeMessage,
  type Fields,
  Messages,
  type MessageType,
} from "../lib/protocol/grpc/messages.ts";
import { frameMessage, SERVICE_PATH } from "../lib/protocol/grpc/wire.ts";
import { findExecutable, freePort, waitForPort } from "./process.ts";

export interface CannedTensor {
  name: string;
  datatype: "INT32" | "FP32";
  /** Without the batch dimension; -1 is variable. */
  dims: number[];
}

export interface CannedModel {
  name: string;
  maxBatchSize: number;
  inputs: CannedTensor[];
  outputs: CannedTensor[];
}

export interface CannedResponse {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  /** ASCII text (the infer body's data is ASCII "0"s). */
  body: string;
}

export interface HttpTarget {
  kind: "nginx" | "reference";
  /** host:port, as `-u` takes it. */
  addr: string;
  /** Requests served so far, read from the server itself. */
  requestCount(): Promise<number>;
  close(): Promise<void>;
}

/** Triton's `simple` (two INT32[16] inputs, two outputs) and a variable-size FP32 model for large bodies. */
export const CANNED_MODELS: readonly CannedModel[] = [
  {
    name: "simple",
    maxBatchSize: 8,
    inputs: [
      { name: "INPUT0", datatype: "INT32", dims: [16] },
      { name: "INPUT1", datatype: "INT32", dims: [16] },
    ],
    outputs: [
      { name: "OUTPUT0", datatype: "INT32", dims: [16] },
      { name: "OUTPUT1", datatype: "INT32", dims: [16] },
    ],
  },
  {
    name: "identity_fp32",
    maxBatchSize: 8,
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [-1] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [-1] }],
  },
];

/** Variable dimensions of canned outputs: the response stays small whatever was sent. */
const CANNED_VARIABLE_DIM = 16;
const SERVER_METADATA = {
  name: "canned-nginx",
  version: "1.0",
  extensions: ["binary_tensor_data"],
};
const STATUS_PATH = "/nginx_status";

function tensorMetadata(model: CannedModel, tensor: CannedTensor) {
  const shape = model.maxBatchSize > 0 ? [-1, ...tensor.dims] : tensor.dims;
  return { name: tensor.name, datatype: tensor.datatype, shape };
}

/** The binary infer response: JSON header, then each output's bytes (ASCII "0", any value will do). */
function inferResponse(model: CannedModel): CannedResponse {
  const outputs = model.outputs.map((t) => {
    const dims = t.dims.map((d) => d === -1 ? CANNED_VARIABLE_DIM : d);
    const shape = model.maxBatchSize > 0 ? [1, ...dims] : dims;
    const size = shape.reduce((a, b) => a * b, 1) * 4;
    return { name: t.name, datatype: t.datatype, shape, parameters: { binary_data_size: size } };
  });
  const header = JSON.stringify({ model_name: model.name, model_version: "1", outputs });
  const data = outputs.map((o) => "0".repeat(o.parameters.binary_data_size)).join("");
  return {
    method: "POST",
    path: `/v2/models/${model.name}/infer`,
    headers: {
      "Content-Type": "application/octet-stream",
      "Inference-Header-Content-Length": String(header.length),
    },
    body: header + data,
  };
}

/** Everything inferperf asks a KServe v2 server for a profile of these models. */
export function cannedResponses(models: readonly CannedModel[]): CannedResponse[] {
  const json = (path: string, value: unknown): CannedResponse => ({
    method: "GET",
    path,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(value),
  });
  return [
    json("/v2", SERVER_METADATA),
    ...models.flatMap((m) => [
      json(`/v2/models/${m.name}`, {
        name: m.name,
        versions: ["1"],
        platform: "canned",
        inputs: m.inputs.map((t) => tensorMetadata(m, t)),
        outputs: m.outputs.map((t) => tensorMetadata(m, t)),
      }),
      json(`/v2/models/${m.name}/config`, { name: m.name, max_batch_size: m.maxBatchSize }),
      inferResponse(m),
    ]),
  ];
}

/** nginx.conf for one worker on loopback: no logs, unlimited keep-alive, bodies read and discarded. */
/** The nginx.conf around `servers`: one worker on loopback, no logs, unlimited keep-alive. */
function nginxMain(dir: string, servers: string): string {
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((name) => `  ${name}_temp_path ${dir}/${name};\n`)
    .join("");
  return `daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {
  worker_connections 4096;
}
http {
  access_log off;
  server_tokens off;
  keepalive_requests 1000000000;
  keepalive_timeout 300s;
  client_max_body_size 64m;
  client_body_buffer_size 1m;
  http2_max_concurrent_streams 1024;
  # "$" of a canned body: nginx has no escape for it in a string.
  geo $inferperf_dollar {
    default "$";
  }
${temp}${servers}}
`;
}

const STATUS_LOCATION = `    location = ${STATUS_PATH} {\n      stub_status;\n    }\n`;

/** nginx.conf for one worker on loopback: no logs, unlimited keep-alive, bodies read and discarded. */
export function nginxConfig(options: { dir: string; port: number }): string {
  const { dir, port } = options;
  const locations = cannedResponses(CANNED_MODELS).map((r) => {
    const headers = Object.entries(r.headers)
      .filter(([name]) => name !== "Content-Type")
      .map(([name, value]) => `      add_header ${name} ${value};\n`)
      .join("");
    return `    location = ${r.path} {\n      default_type ${r.headers["Content-Type"]};\n` +
      `${headers}      return 200 '${r.body}';\n    }\n`;
  }).join("");
  return nginxMain(
    dir,
    `  server {\n    listen 127.0.0.1:${port} backlog=4096;\n${STATUS_LOCATION}${locations}  }\n`,
  );
}

/** A gRPC message as nginx config string content: quotes and backslashes escaped, "$" through a variable. */
function configString(bytes: Uint8Array): string {
  // Latin-1: one character per byte, written back as that byte.
  let text = "";
  for (const byte of bytes) {
    const c = String.fromCharCode(byte);
    text += c === "'" || c === "\\" ? `\\${c}` : c === "$" ? "${inferperf_dollar}" : c;
  }
  return text;
}

/**
 * The framed gRPC answers of the KServe v2 service for CANNED_MODELS: server
 * and model metadata, model configuration, and an infer response whose
 * outputs are ASCII "0"s.
 */
export function cannedGrpcResponses(): Map<string, Uint8Array> {
  const frame = (type: MessageType, fields: Fields) =>
    frameMessage(encodeMessage(type, fields), false);
  const answers = new Map<string, Uint8Array>();
  answers.set(
    "ServerMetadata",
    frame(Messages.ServerMetadataResponse, { ...SERVER_METADATA, extensions: [] }),
  );
  // One model per method path: the request names it, and nginx cannot read it.
  const model = CANNED_MODELS[0];
  const shapeOf = (t: CannedTensor) => model.maxBatchSize > 0 ? [-1, ...t.dims] : t.dims;
  answers.set(
    "ModelMetadata",
    frame(Messages.ModelMetadataResponse, {
      name: model.name,
      versions: ["1"],
      platform: "canned",
      inputs: model.inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: shapeOf(t) })),
      outputs: model.outputs.map((t) => ({
        name: t.name,
        datatype: t.datatype,
        shape: shapeOf(t),
      })),
    }),
  );
  answers.set(
    "ModelConfig",
    frame(Messages.ModelConfigResponse, {
      config: { name: model.name, max_batch_size: model.maxBatchSize },
    }),
  );
  answers.set(
    "ModelInfer",
    frame(Messages.ModelInferResponse, {
      model_name: model.name,
      model_version: "1",
      outputs: model.outputs.map((t) => ({
        name: t.name,
        datatype: t.datatype,
        shape: [1, ...t.dims],
      })),
      raw_output_contents: model.outputs.map((t) =>
        new Uint8Array(4 * t.dims.reduce((n, d) => n * d, 1)).fill(0x30)
      ),
    }),
  );
  return answers;
}

/**
 * nginx.conf answering gRPC over cleartext HTTP/2 (prior knowledge, as gRPC
 * clients connect) with the canned answers of `simple`, whatever the request
 * (ModelStreamInfer excepted), and stub_status over HTTP/1.1 on `statusPort`.
 * nginx writes its own headers Huffman-coded and indexed, as gRPC servers do.
 */
export function nginxGrpcConfig(
  options: { dir: string; port: number; statusPort: number },
): string {
  const locations = [...cannedGrpcResponses()].map(([method, bytes]) =>
    `    location = ${SERVICE_PATH}${method} {\n      default_type application/grpc;\n` +
    `      add_trailer grpc-status 0;\n      return 200 '${configString(bytes)}';\n    }\n`
  ).join("");
  return nginxMain(
    options.dir,
    `  server {\n    listen 127.0.0.1:${options.port} http2 backlog=4096;\n${locations}  }\n` +
      `  server {\n    listen 127.0.0.1:${options.statusPort};\n${STATUS_LOCATION}  }\n`,
  );
}

/**
 * Starts nginx as a child process (stopped by its PID on close) with the
 * canned responses: KServe v2 over HTTP/1.1, or with `grpc` over gRPC.
 */
export async function startNginx(
  nginx: string,
  options: { grpc?: boolean } = {},
): Promise<HttpTarget> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf-bench-nginx-" });
  const port = freePort();
  const statusPort = options.grpc ? freePort() : port;
  const conf = `${dir}/nginx.conf`;
  const text = options.grpc
    ? nginxGrpcConfig({ dir, port, statusPort })
    : nginxConfig({ dir, port });
  // Latin-1: canned gRPC answers are bytes, one character each.
  await Deno.writeFile(conf, Uint8Array.from(text, (c) => c.charCodeAt(0)));
  const child = new Deno.Command(nginx, {
    args: ["-p", dir, "-c", conf, "-e", `${dir}/error.log`],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const exited = child.status.then((s) => s);
  const cleanup = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    await exited;
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await Promise.race([
      waitForPort(statusPort, { timeoutMs: 5000 }),
      exited.then(async (s) => {
        const log = await Deno.readTextFile(`${dir}/error.log`).catch(() => "");
        throw new Error(`nginx exited with code ${s.code} at start: ${log.trim()}`);
      }),
    ]);
  } catch (error) {
    await cleanup();
    throw error;
  }
  const addr = `127.0.0.1:${port}`;
  return {
    kind: "nginx",
    addr,
    async requestCount() {
      const text = await (await fetch(`http://127.0.0.1:${statusPort}${STATUS_PATH}`)).text();
      // "server accepts handled requests\n A H R": the third number on the third line.
      return Number(text.split("\n")[2].trim().split(/\s+/)[2]);
    },
    close: cleanup,
  };
}

/** The reference server on a second thread of the bench process. */
export async function startReferenceTarget(
  models: readonly ModelConfig[] = DEFAULT_MODELS,
): Promise<HttpTarget & { grpcAddr: string }> {
  const server = await startServerInWorker({ models });
  return {
    kind: "reference",
    addr: server.addr,
    grpcAddr: server.grpcAddr,
    async requestCount() {
      const stats = await (await fetch(`http://${server.addr}/v2/models/stats`)).json() as {
        model_stats: { inference_count: number }[];
      };
      return stats.model_stats.reduce((n, s) => n + s.inference_count, 0);
    },
    close: () => server.close(),
  };
}

/** nginx when installed, else the reference server (the report says which). */
export function startHttpTarget(): Promise<HttpTarget> {
  const nginx = findExecutable("nginx");
  return nginx ? startNginx(nginx) : startReferenceTarget();
}

/** nginx's canned gRPC answers when nginx is installed, else the reference server's gRPC. */
export async function startGrpcTarget(): Promise<HttpTarget> {
  const nginx = findExecutable("nginx");
  if (nginx) return startNginx(nginx, { grpc: true });
  const server = await startReferenceTarget();
  return { ...server, addr: server.grpcAddr };
}
