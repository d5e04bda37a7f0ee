/**
 * The reference server (lib/server) held to the real Triton: the same
 * requests go to both, and the answers must agree. The reference server
 * serves fixtures/triton/models.yaml, the twins of the identity-backend
 * models in fixtures/triton/models.
 *
 * HTTP goes through inferperf's own HTTP/1.1 client and compares what a
 * client sees: status, content type, the binary header length and the body
 * (JSON compared as values, binary tensors byte for byte). gRPC goes through
 * @grpc/grpc-js, an independent client, and compares status codes and
 * messages, decoded responses, and every message of a stream.
 *
 * Not compared, on purpose: the reference server keeps trace settings (this
 * Triton build has no tracing) and names itself in its metadata; its model
 * configuration JSON lists fewer fields; a malformed JSON body is quoted by
 * another parser; a simulated decoupled model ends with an empty final
 * response when asked, as models that send the final flag on its own do
 * (Triton's identity backend flags its one response instead); and a string
 * correlation id is refused with application/json, not text/plain.
 */
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { Buffer } from "node:buffer";
import { Http1Client } from "../lib/protocol/http1/client.ts";
import {
  decodeMessage,
  encodeMessage,
  Messages,
  type MessageType,
} from "../lib/protocol/grpc/messages.ts";
import { loadModelConfig } from "../lib/server/config.ts";
import { type RunningServer, startServerInWorker } from "../lib/server/mod.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";

const MODELS = new URL("../fixtures/triton/models.yaml", import.meta.url).pathname;
const real = "reason" in triton ? undefined : await startTriton();
const TWINS = real && await loadModelConfig(MODELS);
const reference: RunningServer | undefined = TWINS && await startServerInWorker({ models: TWINS });
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// ---------------------------------------------------------------- HTTP

interface HttpCase {
  name: string;
  method?: "GET" | "POST";
  path: string;
  /** A JSON body, or a binary-tensor body: JSON header then raw tensors. */
  body?: unknown;
  tensors?: Uint8Array[];
  headers?: Record<string, string>;
  /** Compare the error message only up to this prefix (another parser's words follow). */
  errorPrefix?: string;
  /** Skip the content type (see the file comment). */
  anyContentType?: boolean;
  /**
   * A list of models: compare the entries of the models that have a twin
   * (the repository also holds models such as an ensemble that have none).
   */
  twinsOnly?: boolean;
}

const F16 = Array.from({ length: 16 }, (_, i) => i + 1);
const fp32 = (data: number[] = F16, shape = [data.length]) => ({
  name: "INPUT0",
  datatype: "FP32",
  shape,
  data,
});
const int4 = { name: "INPUT0", datatype: "INT32", shape: [4], data: [1, 2, 3, 4] };
const INFER = "/v2/models/identity_fp32/infer";
const binaryOut = { outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }] };
const float32 = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);

const HTTP_CASES: HttpCase[] = [
  { name: "metadata of an unknown model", path: "/v2/models/nope" },
  { name: "metadata of an unknown version", path: "/v2/models/slow/versions/7" },
  { name: "configuration of an unknown model", path: "/v2/models/nope/config" },
  { name: "readiness of an unknown model", path: "/v2/models/nope/ready" },
  { name: "readiness of an unknown version", path: "/v2/models/slow/versions/7/ready" },
  { name: "statistics of an unknown model", path: "/v2/models/nope/stats" },
  { name: "statistics of an unknown version", path: "/v2/models/slow/versions/7/stats" },
  { name: "inference on an unknown model", path: "/v2/models/nope/infer", body: { inputs: [] } },
  {
    name: "inference on an unknown version",
    path: "/v2/models/slow/versions/7/infer",
    body: { inputs: [fp32()] },
  },
  { name: "JSON in, JSON out, response parameters", path: INFER, body: { inputs: [fp32()] } },
  { name: "the request id comes back", path: INFER, body: { id: "abc", inputs: [fp32()] } },
  { name: "binary output", path: INFER, body: { inputs: [fp32()], ...binaryOut } },
  {
    name: "binary_data_output",
    path: INFER,
    body: { inputs: [fp32()], parameters: { binary_data_output: true } },
  },
  {
    name: "binary input and output",
    path: INFER,
    body: {
      inputs: [{ ...fp32(), data: undefined, parameters: { binary_data_size: 64 } }],
      ...binaryOut,
    },
    tensors: [float32(F16)],
  },
  {
    name: "binary input shorter than announced",
    path: INFER,
    body: { inputs: [{ ...fp32(), data: undefined, parameters: { binary_data_size: 64 } }] },
    tensors: [float32(F16).subarray(0, 60)],
  },
  {
    name: "a header length beyond the body",
    path: INFER,
    body: { inputs: [] },
    headers: { "Inference-Header-Content-Length": "500" },
  },
  {
    name: "a header length that is no number",
    path: INFER,
    body: { inputs: [] },
    headers: { "Inference-Header-Content-Length": "abc" },
  },
  { name: "wrong shape", path: INFER, body: { inputs: [fp32([1, 2, 3, 4])] } },
  {
    name: "wrong shape, with an id",
    path: INFER,
    body: { id: "r1", inputs: [fp32([1, 2, 3, 4])] },
  },
  { name: "wrong datatype", path: INFER, body: { inputs: [{ ...fp32(), datatype: "INT32" }] } },
  {
    name: "unknown input",
    path: INFER,
    body: { id: "r", inputs: [{ ...fp32(), name: "INPUTX" }] },
  },
  { name: "an input twice", path: INFER, body: { inputs: [fp32(), fp32()] } },
  { name: "no inputs", path: INFER, body: { inputs: [] } },
  { name: "no 'inputs' member", path: INFER, body: {} },
  {
    name: "an input without data",
    path: INFER,
    body: { inputs: [{ ...fp32(), data: undefined }] },
  },
  {
    name: "data that does not fill the shape",
    path: INFER,
    body: { inputs: [fp32([1, 2, 3], [16])] },
  },
  {
    name: "unknown output",
    path: INFER,
    body: { id: "r", inputs: [fp32()], outputs: [{ name: "OUTPUTX" }] },
  },
  {
    name: "malformed JSON",
    path: INFER,
    body: '{"inputs":',
    errorPrefix: "failed to parse the request JSON buffer: ",
  },
  {
    name: "FP16 input as JSON",
    path: "/v2/models/mixed/infer",
    body: {
      inputs: [int4, { name: "INPUT1", datatype: "FP16", shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }],
    },
  },
  {
    name: "FP16 output as JSON",
    path: "/v2/models/mixed/infer",
    body: {
      inputs: [int4, {
        name: "INPUT1",
        datatype: "FP16",
        shape: [2, 3],
        parameters: { binary_data_size: 12 },
      }],
    },
    tensors: [new Uint8Array(12)],
  },
  {
    name: "BYTES as JSON",
    path: "/v2/models/strings/infer",
    body: { inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [3], data: ["ab", "", "é"] }] },
  },
  {
    name: "a sequence model without a correlation id",
    path: "/v2/models/sequence/infer",
    body: { inputs: [int4] },
  },
  {
    name: "a sequence without START",
    path: "/v2/models/sequence/infer",
    body: { id: "r", parameters: { sequence_id: 99 }, inputs: [int4] },
  },
  {
    name: "a one-request sequence",
    path: "/v2/models/sequence/infer",
    body: {
      parameters: { sequence_id: 98, sequence_start: true, sequence_end: true },
      inputs: [int4],
    },
  },
  {
    name: "a string correlation id the model does not declare",
    path: "/v2/models/sequence/infer",
    body: { parameters: { sequence_id: "s1", sequence_start: true }, inputs: [int4] },
    anyContentType: true,
  },
  {
    name: "a decoupled model over HTTP",
    path: "/v2/models/decoupled/infer",
    body: { inputs: [fp32()] },
  },
  {
    name: "a batching model without the batch dimension",
    path: "/v2/models/batched/infer",
    body: { inputs: [fp32()] },
  },
  {
    name: "a batch beyond max_batch_size",
    path: "/v2/models/batched/infer",
    body: { inputs: [fp32(Array(16 * 9).fill(1), [9, 16])] },
  },
  {
    name: "a batch of 2",
    path: "/v2/models/batched/infer",
    body: { inputs: [fp32(Array(32).fill(0.5), [2, 16])] },
  },
  { name: "version 2", path: "/v2/models/versioned/versions/2/infer", body: { inputs: [fp32()] } },
  { name: "GET on infer", path: INFER },
  { name: "an unknown route", path: "/v2/nothing" },
  { name: "shared-memory status", path: "/v2/systemsharedmemory/status" },
  { name: "status of an unknown region", path: "/v2/systemsharedmemory/region/nope/status" },
  {
    name: "unregistering an unknown region",
    method: "POST",
    path: "/v2/systemsharedmemory/region/nope/unregister",
  },
  {
    name: "registering without a key",
    path: "/v2/systemsharedmemory/region/r/register",
    body: { byte_size: 64 },
  },
  {
    name: "inference from an unknown region",
    path: INFER,
    body: {
      inputs: [{
        ...fp32(),
        data: undefined,
        parameters: { shared_memory_region: "nope", shared_memory_byte_size: 64 },
      }],
    },
  },
  {
    name: "registering CUDA shared memory on a CPU build",
    path: "/v2/cudasharedmemory/region/c/register",
    body: { raw_handle: { b64: "" }, device_id: 0, byte_size: 64 },
  },
  { name: "CUDA shared-memory status", path: "/v2/cudasharedmemory/status" },
  { name: "status of an unknown CUDA region", path: "/v2/cudasharedmemory/region/c/status" },
  { name: "liveness", path: "/v2/health/live" },
  { name: "readiness", path: "/v2/health/ready" },
  { name: "model readiness", path: "/v2/models/slow/ready" },
  { name: "POST on readiness", method: "POST", path: "/v2/health/ready" },
  {
    name: "the repository index",
    method: "POST",
    path: "/v2/repository/index",
    twinsOnly: true,
  },
];

function requestOf(
  c: HttpCase,
): { method: string; body?: Uint8Array; headers: Record<string, string> } {
  const method = c.method ?? (c.body === undefined ? "GET" : "POST");
  if (c.body === undefined) return { method, headers: c.headers ?? {} };
  const json = encoder.encode(typeof c.body === "string" ? c.body : JSON.stringify(c.body));
  if (c.tensors === undefined) {
    return { method, body: json, headers: { "Content-Type": "application/json", ...c.headers } };
  }
  const body = new Uint8Array([json, ...c.tensors].reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of [json, ...c.tensors]) {
    body.set(part, offset);
    offset += part.length;
  }
  return {
    method,
    body,
    headers: { "Inference-Header-Content-Length": String(json.length), ...c.headers },
  };
}

/** What a client sees of an answer, in comparable form. */
async function httpAnswer(client: Http1Client, c: HttpCase): Promise<Record<string, unknown>> {
  const { method, body, headers } = requestOf(c);
  const response = await client.request(method, c.path, { headers, ...(body ? { body } : {}) });
  const length = response.headers.inferenceHeaderContentLength;
  const head = length >= 0 ? response.body.subarray(0, length) : response.body;
  const text = decoder.decode(head);
  let json: unknown = text;
  try {
    json = text === "" ? "" : JSON.parse(text);
  } catch {
    // Compared as text.
  }
  if (c.twinsOnly && Array.isArray(json)) {
    const twins = new Set(TWINS!.map((m) => m.name));
    json = json.filter((entry: { name: string }) => twins.has(entry.name));
  }
  if (c.errorPrefix !== undefined) {
    const error = (json as { error: string }).error;
    assert.ok(error.startsWith(c.errorPrefix), `${c.name}: ${error}`);
    json = c.errorPrefix;
  }
  return {
    status: response.status,
    ...(c.anyContentType ? {} : { contentType: response.headers.contentType }),
    headerLength: length,
    json,
    tensors: length >= 0 ? [...response.body.subarray(length)] : [],
  };
}

tritonTest("HTTP: the reference server answers every request as Triton does", async () => {
  const clients = [real!.http, reference!.addr].map((addr) => {
    const [hostname, port] = addr.split(":");
    return new Http1Client({ hostname, port: Number(port) });
  });
  try {
    const differences: string[] = [];
    for (const c of HTTP_CASES) {
      const [triton, ours] = [await httpAnswer(clients[0], c), await httpAnswer(clients[1], c)];
      try {
        assert.deepEqual(ours, triton);
      } catch {
        differences.push(
          `${c.name}:\n  Triton:    ${JSON.stringify(triton)}\n  reference: ${
            JSON.stringify(ours)
          }`,
        );
      }
    }
    assert.deepEqual(differences, []);
  } finally {
    clients.forEach((client) => client.close());
  }
});

// ---------------------------------------------------------------- gRPC

const SERVICE = "/inference.GRPCInferenceService/";
const raw = (floats: number) => [new Uint8Array(floats * 4)];
const infer = (model: string, extra: Record<string, unknown> = {}) => ({
  model_name: model,
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [16] }],
  raw_input_contents: raw(16),
  ...extra,
});
const sequence = (parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  model_name: "sequence",
  parameters,
  inputs: [{ name: "INPUT0", datatype: "INT32", shape: [4] }],
  raw_input_contents: raw(4),
  ...extra,
});
const wrongShape = {
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [4] }],
  raw_input_contents: raw(4),
};

type UnaryCase = [name: string, method: string, request: Record<string, unknown>];
const M = Messages;
/** Request and response types of each method the cases call. */
const METHODS: Record<string, [MessageType, MessageType]> = {
  ModelMetadata: [M.ModelMetadataRequest, M.ModelMetadataResponse],
  ModelConfig: [M.ModelConfigRequest, M.ModelConfigResponse],
  ModelReady: [M.ModelReadyRequest, M.ModelReadyResponse],
  ModelStatistics: [M.ModelStatisticsRequest, M.ModelStatisticsResponse],
  ModelInfer: [M.ModelInferRequest, M.ModelInferResponse],
  SystemSharedMemoryStatus: [M.SystemSharedMemoryStatusRequest, M.SystemSharedMemoryStatusResponse],
  SystemSharedMemoryUnregister: [
    M.SystemSharedMemoryUnregisterRequest,
    M.SystemSharedMemoryUnregisterResponse,
  ],
};

const UNARY_CASES: UnaryCase[] = [
  ["metadata of an unknown model", "ModelMetadata", { name: "nope" }],
  ["configuration of an unknown model", "ModelConfig", { name: "nope" }],
  ["readiness of an unknown model", "ModelReady", { name: "nope" }],
  ["readiness of an unknown version", "ModelReady", { name: "slow", version: "7" }],
  ["readiness", "ModelReady", { name: "slow" }],
  ["statistics of an unknown model", "ModelStatistics", { name: "nope" }],
  ["statistics of an unknown version", "ModelStatistics", { name: "slow", version: "7" }],
  ["inference on an unknown model", "ModelInfer", infer("nope")],
  ["inference, response parameters", "ModelInfer", infer("identity_fp32")],
  ["the request id comes back", "ModelInfer", infer("identity_fp32", { id: "abc" })],
  ["version 2", "ModelInfer", infer("versioned", { model_version: "2" })],
  ["wrong shape", "ModelInfer", infer("identity_fp32", wrongShape)],
  ["wrong shape, with an id", "ModelInfer", infer("identity_fp32", { ...wrongShape, id: "q" })],
  [
    "wrong datatype",
    "ModelInfer",
    infer("identity_fp32", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [16] }] }),
  ],
  [
    "fewer bytes than the shape",
    "ModelInfer",
    infer("identity_fp32", { raw_input_contents: raw(3) }),
  ],
  ["no data at all", "ModelInfer", infer("identity_fp32", { raw_input_contents: [] })],
  [
    "contents beside raw_input_contents",
    "ModelInfer",
    infer("identity_fp32", {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [16], contents: {} }],
    }),
  ],
  ["a decoupled model over unary ModelInfer", "ModelInfer", infer("decoupled")],
  ["a sequence without START", "ModelInfer", sequence({ sequence_id: { int64_param: 77 } })],
  [
    "a string correlation id the model does not declare",
    "ModelInfer",
    sequence({ sequence_id: { string_param: "x" }, sequence_start: { bool_param: true } }),
  ],
  [
    "inference from an unknown region",
    "ModelInfer",
    infer("identity_fp32", {
      inputs: [{
        name: "INPUT0",
        datatype: "FP32",
        shape: [16],
        parameters: {
          shared_memory_region: { string_param: "nope" },
          shared_memory_byte_size: { int64_param: 64 },
        },
      }],
      raw_input_contents: [],
    }),
  ],
  ["unregistering an unknown region", "SystemSharedMemoryUnregister", { name: "nope" }],
  ["status of an unknown region", "SystemSharedMemoryStatus", { name: "nope" }],
];

/** A decoded message as plain values (int64 as strings, bytes as base64). */
function plain(type: MessageType, message: Uint8Array): unknown {
  return type.toObject(decodeMessage(type, message) as never, {
    longs: String,
    bytes: String,
    defaults: false,
  });
}

function unary(address: string, [, method, request]: UnaryCase): Promise<unknown> {
  const [requestType, responseType] = METHODS[method];
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      SERVICE + method,
      (value: Record<string, unknown>) => Buffer.from(encodeMessage(requestType, value)),
      (bytes: Buffer) => plain(responseType, new Uint8Array(bytes)),
      request,
      (error, value) => {
        client.close();
        resolve(error ? { code: grpc.status[error.code], details: error.details } : value);
      },
    );
  });
}

/** Every message of a ModelStreamInfer call that sends `requests`, then the final status. */
function stream(address: string, requests: Record<string, unknown>[]): Promise<unknown[]> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    const out: unknown[] = [];
    const call = client.makeBidiStreamRequest(
      SERVICE + "ModelStreamInfer",
      (value: Record<string, unknown>) => Buffer.from(encodeMessage(M.ModelInferRequest, value)),
      (bytes: Buffer) => plain(M.ModelStreamInferResponse, new Uint8Array(bytes)),
    );
    call.on("data", (message: unknown) => out.push(message));
    call.on("error", () => {});
    call.on("status", (status: grpc.StatusObject) => {
      out.push({ code: grpc.status[status.code], details: status.details });
    });
    call.on("end", () => {
      client.close();
      resolve(out);
    });
    for (const request of requests) call.write(request);
    call.end();
  });
}

const STREAM_CASES: [string, Record<string, unknown>[]][] = [
  ["a response with its id and parameters, flagged final", [infer("identity_fp32", { id: "s1" })]],
  ["an unknown model, then a good request", [infer("nope", { id: "r1" }), infer("identity_fp32")]],
  ["wrong shape, with an id", [infer("identity_fp32", { ...wrongShape, id: "r2" })]],
  [
    "unknown output, with an id",
    [infer("identity_fp32", { id: "r3", outputs: [{ name: "OUTPUTX" }] })],
  ],
  [
    "a sequence without START, with an id",
    [sequence({ sequence_id: { int64_param: 71 } }, { id: "r4" })],
  ],
  [
    "a sequence of three",
    [
      sequence({ sequence_id: { int64_param: 72 }, sequence_start: { bool_param: true } }),
      sequence({ sequence_id: { int64_param: 72 } }),
      sequence({ sequence_id: { int64_param: 72 }, sequence_end: { bool_param: true } }),
    ],
  ],
  ["a decoupled model's one response", [infer("decoupled")]],
];

tritonTest("gRPC: the reference server answers every call as Triton does", async () => {
  for (const c of UNARY_CASES) {
    assert.deepEqual(await unary(reference!.grpcAddr, c), await unary(real!.grpc, c), c[0]);
  }
});

tritonTest("gRPC streams: the reference server sends the messages Triton sends", async () => {
  for (const [name, requests] of STREAM_CASES) {
    assert.deepEqual(
      await stream(reference!.grpcAddr, requests),
      await stream(real!.grpc, requests),
      name,
    );
  }
});

tritonTest("both servers stop", async () => {
  await Promise.all([real!.stop(), reference!.close()]);
});
