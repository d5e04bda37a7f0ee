/**
 * KServe v2 / Triton HTTP front end: health, metadata, model configuration,
 * inference (JSON and the binary tensor extension), statistics, system
 * shared memory and trace settings.
 */
import type { Tensor } from "../types/tensor.ts";
import type { Datatype } from "../types/datatype.ts";
import { type JsonElement, tensorToJson } from "../input/codec.ts";
import type { ModelSpec } from "./config.ts";
import { ServerError, type ServerErrorCode } from "./errors.ts";
import { responseParameters } from "./behaviour.ts";
import type { SimulatedModel } from "./model.ts";
import { type ModelControl, type ModelRepository, perModel } from "./repository.ts";
import { statisticsFields } from "./statistics.ts";
import type { SharedMemoryRegistry } from "./shm.ts";
import type { TraceSettingsStore } from "./trace.ts";
import { traceSettingsToJson } from "../protocol/trace.ts";
import { errorResponse, type HttpHandler, type HttpRequest, type HttpResponse } from "./_http.ts";
import {
  checkJsonDatatype,
  HttpStatusError,
  invalid,
  isRecord,
  type ParsedInfer,
  parseInfer,
  plainError,
  unparsable,
} from "./_kserve_request.ts";

export interface ServerIdentity {
  name: string;
  version: string;
}

export const KSERVE_EXTENSIONS: readonly string[] = [
  "binary_tensor_data",
  "statistics",
  "model_configuration",
  "parameters",
  "system_shared_memory",
  "trace",
];

const TRITON_TYPES: Record<Datatype, string> = {
  BOOL: "TYPE_BOOL",
  UINT8: "TYPE_UINT8",
  UINT16: "TYPE_UINT16",
  UINT32: "TYPE_UINT32",
  UINT64: "TYPE_UINT64",
  INT8: "TYPE_INT8",
  INT16: "TYPE_INT16",
  INT32: "TYPE_INT32",
  INT64: "TYPE_INT64",
  FP16: "TYPE_FP16",
  BF16: "TYPE_BF16",
  FP32: "TYPE_FP32",
  FP64: "TYPE_FP64",
  BYTES: "TYPE_STRING",
};

const HTTP_STATUS: Record<ServerErrorCode, number> = {
  invalid_argument: 400,
  not_found: 404,
  unavailable: 503,
  internal: 500,
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Triton answers health, readiness and routing with text/plain, the rest with JSON. */
const OK: HttpResponse = { status: 200, contentType: "text/plain" };
const OK_JSON: HttpResponse = { status: 200, contentType: "application/json" };
const NOT_FOUND = plainError(404, "Not Found");
const METHOD_NOT_ALLOWED = plainError(405, "Method Not Allowed");

function json(value: unknown): HttpResponse {
  return {
    status: 200,
    contentType: "application/json",
    body: encoder.encode(JSON.stringify(value)),
  };
}

function failure(error: unknown): HttpResponse {
  if (error instanceof ServerError) return errorResponse(HTTP_STATUS[error.code], error.message);
  return errorResponse(500, (error as Error).message);
}

function tensorMetadata(spec: ModelSpec, tensors: ModelSpec["inputs"]) {
  return tensors.map((t) => ({
    name: t.name,
    datatype: t.datatype,
    shape: spec.maxBatchSize > 0 ? [-1, ...t.dims] : t.dims,
  }));
}

/** Triton's model configuration JSON for one model. */
function modelConfig(spec: ModelSpec) {
  return {
    name: spec.name,
    platform: spec.platform,
    backend: "",
    version_policy: spec.versions.length === 1
      ? { latest: { num_versions: 1 } }
      : { specific: { versions: spec.versions.map(Number) } },
    max_batch_size: spec.maxBatchSize,
    input: spec.inputs.map((t) => ({
      name: t.name,
      data_type: TRITON_TYPES[t.datatype],
      format: "FORMAT_NONE",
      dims: t.dims,
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: false,
    })),
    output: spec.outputs.map((t) => ({
      name: t.name,
      data_type: TRITON_TYPES[t.datatype],
      dims: t.dims,
      label_filename: "",
      is_shape_tensor: false,
    })),
    batch_input: [],
    batch_output: [],
    instance_group: [{ name: spec.name, kind: "KIND_GPU", count: spec.instances, gpus: [] }],
    ...(spec.dynamicBatching === undefined ? {} : {
      dynamic_batching: {
        preferred_batch_size: spec.dynamicBatching.preferredBatchSizes,
        max_queue_delay_microseconds: Math.round(spec.dynamicBatching.maxQueueDelayMs * 1000),
        preserve_ordering: false,
      },
    }),
    ...(spec.sequence === undefined ? {} : {
      sequence_batching: {
        max_sequence_idle_microseconds: Math.round(spec.sequence.maxSequenceIdleMs * 1000),
      },
    }),
    model_transaction_policy: { decoupled: spec.decoupled !== undefined },
    parameters: {},
  };
}

function statistics(models: readonly SimulatedModel[]): HttpResponse {
  return json({
    model_stats: models.map((m) => ({
      ...statisticsFields(m),
      response_stats: {},
      memory_usage: [],
    })),
  });
}

/** Flat JSON values; NaN and infinities become strings, which the codec reads back. */
function jsonArray(values: readonly JsonElement[]): string {
  let text = "[";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) text += ",";
    if (typeof v === "string") text += JSON.stringify(v);
    else if (typeof v === "number" && !Number.isFinite(v)) text += `"${v}"`;
    else text += String(v);
  }
  return text + "]";
}

/** One model version's routes, with everything that does not vary per request precomputed. */
class ModelEndpoint {
  readonly metadata: HttpResponse;
  readonly config: HttpResponse;
  /** Every inference response header, after the id: the model, its version and parameters. */
  readonly #prefix: string;

  constructor(readonly model: SimulatedModel, readonly sharedMemory: SharedMemoryRegistry) {
    const spec = model.spec;
    this.metadata = json({
      name: spec.name,
      versions: spec.versions,
      platform: spec.platform,
      inputs: tensorMetadata(spec, spec.inputs),
      outputs: tensorMetadata(spec, spec.outputs),
    });
    this.config = json(modelConfig(spec));
    const parameters = responseParameters(spec);
    this.#prefix = `"model_name":${JSON.stringify(spec.name)},"model_version":"${model.version}"` +
      (parameters === undefined ? "" : `,"parameters":${JSON.stringify(parameters)}`);
  }

  infer(request: HttpRequest): Promise<HttpResponse> {
    if (this.model.spec.decoupled !== undefined) {
      // As Triton: responses of a decoupled model need the gRPC stream.
      return Promise.resolve(
        plainError(501, "HTTP end point doesn't support models with decoupled transaction policy"),
      );
    }
    let parsed: ParsedInfer;
    try {
      parsed = parseInfer(request, { sharedMemory: this.sharedMemory, model: this.model.name });
    } catch (error) {
      // Triton counts requests that fail before scheduling as failures of the model.
      this.model.stats.fail.add(performance.now() - request.arrival);
      throw error;
    }
    return this.model.infer(parsed.core).then((outputs) => {
      try {
        return this.#encode(parsed, outputs);
      } catch (error) {
        return error instanceof HttpStatusError ? error.response : failure(error);
      }
    }, failure);
  }

  #encode(parsed: ParsedInfer, outputs: Tensor[]): HttpResponse {
    const id = parsed.core.id;
    let header = `{${id === "" ? "" : `"id":${JSON.stringify(id)},`}${this.#prefix},"outputs":[`;
    const parts: Uint8Array[] = [];
    const binary = parsed.binary;
    for (let i = 0; i < outputs.length; i++) {
      const t = outputs[i];
      if (i > 0) header += ",";
      header += `{"name":${JSON.stringify(t.name)},"datatype":"${t.datatype}","shape":[${
        t.shape.join(",")
      }]`;
      const ref = parsed.shared[i];
      if (ref !== undefined) {
        this.sharedMemory.write(ref, t.data, `output '${t.name}'`);
        header += `,"parameters":{"shared_memory_region":${JSON.stringify(ref.region)},` +
          `"shared_memory_byte_size":${t.data.byteLength}}}`;
      } else if (typeof binary === "boolean" ? binary : binary[i]) {
        header += `,"parameters":{"binary_data_size":${t.data.byteLength}}}`;
        parts.push(t.data);
      } else {
        checkJsonDatatype(t.datatype, {});
        header += `,"data":${jsonArray(tensorToJson(t.datatype, t.data))}}`;
      }
    }
    header += "]}";
    const head = encoder.encode(header);
    if (parts.length === 0) return { status: 200, contentType: "application/json", body: head };
    parts.unshift(head);
    return {
      status: 200,
      contentType: "application/octet-stream",
      headers: { "Inference-Header-Content-Length": String(head.byteLength) },
      body: parts,
    };
  }
}

function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalid(`Malformed percent-encoding in "${segment}"`);
  }
}

function requestJson(request: HttpRequest): unknown {
  try {
    return JSON.parse(decoder.decode(request.body));
  } catch (error) {
    throw invalid(`failed to parse the request JSON buffer: ${(error as Error).message}`);
  }
}

/**
 * Triton's system shared-memory routes: `path` follows "/v2/systemsharedmemory"
 * ("/status", "/region/NAME/register", ...).
 */
function sharedMemoryRoute(
  request: HttpRequest,
  options: { path: string; registry: SharedMemoryRegistry },
): HttpResponse {
  const match = /^(?:\/region\/([^/]+))?\/(status|register|unregister)$/.exec(options.path);
  if (match === null) return NOT_FOUND;
  const methodNotAllowed = errorResponse(405, "Method Not Allowed");
  const name = match[1] === undefined ? "" : decodeSegment(match[1]);
  const action = match[2];
  const registry = options.registry;
  if (action === "status") {
    if (request.method !== "GET") return methodNotAllowed;
    return json(
      registry.status(name).map((r) => ({
        name: r.name,
        key: r.key,
        offset: r.offset,
        byte_size: r.byteSize,
      })),
    );
  }
  if (request.method !== "POST") return methodNotAllowed;
  if (action === "unregister") {
    registry.unregister(name);
    return OK_JSON;
  }
  if (name === "") return NOT_FOUND;
  const body = requestJson(request);
  const { key, offset = 0, byte_size: byteSize } = isRecord(body) ? body : {};
  for (const [field, value] of [["key", key], ["byte_size", byteSize]]) {
    if (value === undefined) {
      throw invalid(`Shared memory register request has no '${field}' field`);
    }
  }
  if (typeof key !== "string") throw unparsable("key", "JSON non-string as string");
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(byteSize)) {
    throw unparsable(Number.isSafeInteger(offset) ? "byte_size" : "offset", "JSON non-number");
  }
  registry.register({ name, key, offset: offset as number, byteSize: byteSize as number });
  return OK_JSON;
}

/** Triton built for CPU: no CUDA region exists, and none can be registered. */
function cudaSharedMemoryRoute(request: HttpRequest, path: string): HttpResponse {
  const match = /^\/v2\/cudasharedmemory(?:\/region\/([^/]+))?\/(status|register|unregister)$/
    .exec(path);
  if (match === null) return NOT_FOUND;
  const name = match[1] === undefined ? "" : decodeSegment(match[1]);
  if (request.method !== (match[2] === "status" ? "GET" : "POST")) {
    return errorResponse(405, "Method Not Allowed");
  }
  switch (match[2]) {
    case "status":
      if (name === "") return json([]);
      return errorResponse(404, `Unable to find cuda shared memory region: '${name}'`);
    case "unregister":
      return OK_JSON;
    default:
      return errorResponse(
        400,
        `failed to register CUDA shared memory region: '${name}', GPUs not supported`,
      );
  }
}

/** Triton's global trace settings: GET reads them, POST updates them and answers with all. */
function traceRoute(request: HttpRequest, trace: TraceSettingsStore): HttpResponse {
  if (request.method === "GET") return json(traceSettingsToJson(trace.get()));
  if (request.method !== "POST") return METHOD_NOT_ALLOWED;
  const body = requestJson(request);
  if (!isRecord(body)) throw invalid("The trace setting request must be a JSON object");
  return json(traceSettingsToJson(trace.update(body)));
}

/** The KServe v2 HTTP routes over a model repository. */
export function createKServeHandler(
  repository: ModelRepository,
  identity: ServerIdentity,
  options: {
    sharedMemory: SharedMemoryRegistry;
    trace: TraceSettingsStore;
    control?: ModelControl;
  },
): HttpHandler {
  const serverMetadata = json({ ...identity, extensions: KSERVE_EXTENSIONS });
  const endpointOf = perModel((m: SimulatedModel) => new ModelEndpoint(m, options.sharedMemory));
  const endpoint = (name: string, version: string | undefined) =>
    endpointOf(repository.get(name, version));

  /** The endpoint, or the text/plain 404 Triton answers inference and readiness with. */
  const endpointOrError = (name: string, version: string | undefined) => {
    try {
      return endpoint(name, version);
    } catch (error) {
      return plainError(404, (error as Error).message);
    }
  };

  function modelRoute(request: HttpRequest, path: string): HttpResponse | Promise<HttpResponse> {
    const parts = path.split("/");
    if (parts.length === 1 && parts[0] === "stats") {
      return request.method === "GET" ? statistics(repository.models) : METHOD_NOT_ALLOWED;
    }
    const name = decodeSegment(parts[0]);
    let version: string | undefined;
    let i = 1;
    if (parts[1] === "versions") {
      if (parts.length < 3 || parts[2] === "") return NOT_FOUND;
      version = decodeSegment(parts[2]);
      i = 3;
    }
    if (parts.length > i + 1) return NOT_FOUND;
    const action = parts[i] ?? "";
    const method = request.method;
    switch (action) {
      case "infer": {
        if (method !== "POST") return METHOD_NOT_ALLOWED;
        const found = endpointOrError(name, version);
        return found instanceof ModelEndpoint ? found.infer(request) : found;
      }
      case "":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return endpoint(name, version).metadata;
      case "config":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return endpoint(name, version).config;
      case "ready": {
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        const found = endpointOrError(name, version);
        return found instanceof ModelEndpoint ? OK : found;
      }
      case "stats":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return statistics(repository.statisticsOf(name, version ?? ""));
      default:
        return NOT_FOUND;
    }
  }

  /** Triton's model repository extension: index, load (with a `config` override), unload. */
  function repositoryRoute(request: HttpRequest, path: string): HttpResponse {
    const control = options.control;
    const parts = path.split("/");
    const action = parts[0] === "index" && parts.length === 1
      ? "index"
      : parts[0] === "models" && parts.length === 3 && parts[1] !== ""
      ? parts[2]
      : undefined;
    if (control === undefined || !["index", "load", "unload"].includes(action ?? "")) {
      return NOT_FOUND;
    }
    // Triton answers these routes' refusals in JSON.
    if (request.method !== "POST") return errorResponse(405, "Method Not Allowed");
    let body: unknown = {};
    try {
      if (request.body.byteLength > 0) body = JSON.parse(decoder.decode(request.body));
    } catch {
      // Triton's repository routes answer RapidJSON's words with a 500.
      throw new ServerError(
        "failed to parse the request JSON buffer: Invalid value. at 0",
        "internal",
      );
    }
    if (action === "index") return json(control.index(isRecord(body) && body.ready === true));
    const name = decodeSegment(parts[1]);
    if (action === "unload") control.unload(name);
    else {
      const config = isRecord(body) && isRecord(body.parameters)
        ? body.parameters.config
        : undefined;
      control.load(name, typeof config === "string" ? config : undefined);
    }
    return OK_JSON;
  }

  function route(request: HttpRequest): HttpResponse | Promise<HttpResponse> {
    const path = request.path;
    if (path.startsWith("/v2/models/")) return modelRoute(request, path.slice(11));
    if (path.startsWith("/v2/systemsharedmemory/")) {
      return sharedMemoryRoute(request, { path: path.slice(22), registry: options.sharedMemory });
    }
    if (path.startsWith("/v2/cudasharedmemory/")) return cudaSharedMemoryRoute(request, path);
    if (path.startsWith("/v2/repository/")) return repositoryRoute(request, path.slice(15));
    switch (path) {
      case "/v2":
      case "/v2/":
        return request.method === "GET" ? serverMetadata : METHOD_NOT_ALLOWED;
      case "/v2/trace/setting":
        return traceRoute(request, options.trace);
      case "/v2/health/live":
      case "/v2/health/ready":
        return request.method === "GET" ? OK : METHOD_NOT_ALLOWED;
      default:
        return NOT_FOUND;
    }
  }

  return (request) => {
    try {
      // Inference promises settle with a response, errors included.
      return route(request);
    } catch (error) {
      if (error instanceof HttpStatusError) return error.response;
      return failure(error);
    }
  };
}
