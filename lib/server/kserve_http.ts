/**
 * KServe v2 / Triton HTTP front end: health, metadata, model configuration,
 * inference (JSON and the binary tensor extension), statistics, system
 * shared memory and trace settings.
 */
import type { Tensor } from "../protocol/types.ts";
import { type Datatype, elementCount, isDatatype } from "../input/datatype.ts";
import { type JsonElement, parseJsonExact, tensorFromJson, tensorToJson } from "../input/codec.ts";
import type { ModelSpec } from "./config.ts";
import { ServerError, type ServerErrorCode, unknownModel } from "./errors.ts";
import { responseParameters } from "./behaviour.ts";
import type { CoreRequest, SimulatedModel } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import { statisticsFields } from "./statistics.ts";
import { type RegionRef, regionRef, type SharedMemoryRegistry } from "./shm.ts";
import type { TraceSettingsStore } from "./trace.ts";
import { traceSettingsToJson } from "../protocol/trace.ts";
import { errorResponse, type HttpHandler, type HttpRequest, type HttpResponse } from "./_http.ts";

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

function plainError(status: number, message: string): HttpResponse {
  return { ...errorResponse(status, message), contentType: "text/plain" };
}

function json(value: unknown): HttpResponse {
  return {
    status: 200,
    contentType: "application/json",
    body: encoder.encode(JSON.stringify(value)),
  };
}

function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

/** Triton's refusal of a request JSON it cannot read: an HTTP 500, in its parser's words. */
function unparsable(field: string, problem = `non-existing object member '${field}'`): ServerError {
  return new ServerError(`Unable to parse '${field}': attempt to access ${problem}`, "internal");
}

/** Triton takes and gives half floats only as binary data (refusing outputs as text/plain). */
function checkJsonDatatype(datatype: Datatype, tensor: { input?: string }): void {
  if (datatype !== "FP16" && datatype !== "BF16") return;
  if (tensor.input === undefined) {
    throw new HttpStatusError(plainError(
      400,
      `sending ${datatype} data via JSON is not supported. Please use the binary data format ` +
        "for output",
    ));
  }
  throw invalid(
    `receiving ${datatype} data via JSON is not supported. Please use the binary data format ` +
      `for input ${tensor.input}`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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

interface ParsedInfer {
  core: CoreRequest;
  /** Per requested output, or one flag for all outputs. */
  binary: boolean | boolean[];
  /** Per requested output: where it goes in shared memory, if there. */
  shared: (RegionRef | undefined)[];
}

/** Where the next binary input starts in the request body, and the shared-memory regions. */
interface BodyCursor {
  body: Uint8Array;
  offset: number;
  sharedMemory: SharedMemoryRegistry;
  /** Named by Triton's messages about the body. */
  model: string;
}

/** Reads one input; binary data is taken at the cursor, which advances past it. */
function parseInput(value: unknown, cursor: BodyCursor): Tensor {
  if (!isRecord(value)) throw unparsable("inputs", "JSON non-object as object");
  const { name, datatype, shape, parameters, data } = value;
  if (typeof name !== "string") throw unparsable("name");
  if (typeof datatype !== "string") throw unparsable("datatype");
  if (!isDatatype(datatype)) throw invalid(`invalid datatype for input ${name}`);
  if (!Array.isArray(shape)) throw unparsable("shape");
  if (!shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw unparsable("shape", "JSON non-unsigned-integer as unsigned integer");
  }
  const params = isRecord(parameters) ? parameters : {};
  const ref = regionRef(params, `input '${name}'`);
  if (ref !== undefined) {
    if (data !== undefined) {
      throw invalid(`input '${name}' has both 'data' and shared memory parameters`);
    }
    return { name, datatype, shape, data: cursor.sharedMemory.read(ref, `input '${name}'`) };
  }
  const size = params.binary_data_size;
  if (size !== undefined) {
    if (!Number.isInteger(size) || (size as number) < 0) {
      throw invalid(`Unable to parse 'binary_data_size' of input '${name}'`);
    }
    const { body, offset } = cursor;
    const end = offset + (size as number);
    if (end > body.byteLength) {
      throw invalid(
        `unexpected size for input '${name}', expecting ${end - body.byteLength} additional ` +
          `bytes for model '${cursor.model}'`,
      );
    }
    cursor.offset = end;
    return { name, datatype, shape, data: body.subarray(offset, end) };
  }
  if (data === undefined) {
    throw invalid(
      "Input must set only one of the following fields: 'data', 'binary_data_size' in " +
        "'parameters', 'shared_memory_region' in 'parameters'. But no field is set",
    );
  }
  checkJsonDatatype(datatype, { input: name });
  const values = Array.isArray(data) && Array.isArray(data[0]) ? data.flat(Infinity) : data;
  if (!Array.isArray(values)) throw unparsable("data", "JSON non-array as array");
  if (values.length !== elementCount(shape)) {
    throw new ServerError(
      "Failed to parse 'data' field: shape does not match true shape",
      "internal",
    );
  }
  try {
    return { name, datatype, shape, data: tensorFromJson(datatype, values) };
  } catch (error) {
    throw new ServerError(`Unable to parse 'data': ${(error as Error).message}`, "internal");
  }
}

function parseInfer(
  request: HttpRequest,
  target: { sharedMemory: SharedMemoryRegistry; model: string },
): ParsedInfer {
  const body = request.body;
  const lengthText = request.header("inference-header-content-length");
  const headerLength = lengthText === undefined ? body.byteLength : Number(lengthText);
  if (!/^\d+$/.test(lengthText ?? "0")) {
    throw new HttpStatusError(
      plainError(400, `Unable to parse Inference-Header-Content-Length, got: ${lengthText}`),
    );
  }
  if (headerLength > body.byteLength) {
    throw new HttpStatusError(plainError(
      400,
      `inference header size should be in range (0, ${body.byteLength}), got: ${headerLength}`,
    ));
  }
  let parsed: unknown;
  try {
    parsed = parseJsonExact(decoder.decode(body.subarray(0, headerLength)));
  } catch (error) {
    throw new ServerError(
      `failed to parse the request JSON buffer: ${(error as Error).message}`,
      "internal",
    );
  }
  if (!isRecord(parsed)) throw unparsable("inputs");
  const id = parsed.id ?? "";
  if (typeof id !== "string") throw unparsable("id", "JSON non-string as string");
  const inputs = parsed.inputs;
  if (inputs === undefined) throw unparsable("inputs");
  if (!Array.isArray(inputs)) throw unparsable("inputs", "JSON non-array as array");
  const tensors = new Array<Tensor>(inputs.length);
  const cursor: BodyCursor = { body, offset: headerLength, ...target };
  for (let i = 0; i < inputs.length; i++) tensors[i] = parseInput(inputs[i], cursor);
  if (cursor.offset !== body.byteLength) {
    throw invalid(
      `${body.byteLength - cursor.offset} unexpected bytes follow the binary input data in ` +
        "the request body",
    );
  }
  const parameters = isRecord(parsed.parameters) ? parsed.parameters : {};
  const binaryDefault = parameters.binary_data_output === true;
  const outputs = parsed.outputs;
  const names: string[] = [];
  const shared: (RegionRef | undefined)[] = [];
  let binary: boolean | boolean[] = binaryDefault;
  if (outputs !== undefined) {
    if (!Array.isArray(outputs)) throw unparsable("outputs", "JSON non-array as array");
    const flags: boolean[] = [];
    for (const output of outputs) {
      if (!isRecord(output) || typeof output.name !== "string") throw unparsable("name");
      const params = isRecord(output.parameters) ? output.parameters : {};
      const ref = regionRef(params, `output '${output.name}'`);
      // Fails before inference when the region is unknown, as Triton does.
      if (ref !== undefined) target.sharedMemory.status(ref.region);
      shared.push(ref);
      names.push(output.name);
      flags.push(typeof params.binary_data === "boolean" ? params.binary_data : binaryDefault);
    }
    if (names.length > 0) binary = flags;
  }
  const core: CoreRequest = { id, inputs: tensors, outputs: names, arrival: request.arrival };
  const sequenceId = parameters.sequence_id;
  if (sequenceId !== undefined) {
    if (
      typeof sequenceId !== "string" &&
      !(Number.isSafeInteger(sequenceId) && sequenceId as number >= 0)
    ) {
      throw unparsable("sequence_id", "JSON non-string as string");
    }
    core.sequence = {
      id: sequenceId as number | string,
      start: parameters.sequence_start === true,
      end: parameters.sequence_end === true,
    };
  }
  return { core, binary, shared };
}

/** A refusal answered exactly as given (Triton's text/plain ones). */
class HttpStatusError extends Error {
  constructor(readonly response: HttpResponse) {
    super(decoder.decode(response.body as Uint8Array));
  }
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
  options: { sharedMemory: SharedMemoryRegistry; trace: TraceSettingsStore },
): HttpHandler {
  const serverMetadata = json({ ...identity, extensions: KSERVE_EXTENSIONS });
  const endpoints = new Map<SimulatedModel, ModelEndpoint>(
    repository.models.map((m) => [m, new ModelEndpoint(m, options.sharedMemory)]),
  );
  const endpoint = (name: string, version: string | undefined) =>
    endpoints.get(repository.get(name, version))!;

  /** The endpoint, or undefined where Triton answers a text/plain 404 (inference, readiness). */
  const endpointOrError = (name: string, version: string | undefined) => {
    try {
      return endpoint(name, version);
    } catch {
      return undefined;
    }
  };
  const notFound = (name: string, version: string | undefined) =>
    plainError(404, unknownModel(name, version).message);

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
      case "infer":
        if (method !== "POST") return METHOD_NOT_ALLOWED;
        return endpointOrError(name, version)?.infer(request) ?? notFound(name, version);
      case "":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return endpoint(name, version).metadata;
      case "config":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return endpoint(name, version).config;
      case "ready":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return endpointOrError(name, version) === undefined ? notFound(name, version) : OK;
      case "stats":
        if (method !== "GET") return METHOD_NOT_ALLOWED;
        return statistics(repository.statisticsOf(name, version ?? ""));
      default:
        return NOT_FOUND;
    }
  }

  function route(request: HttpRequest): HttpResponse | Promise<HttpResponse> {
    const path = request.path;
    if (path.startsWith("/v2/models/")) return modelRoute(request, path.slice(11));
    if (path.startsWith("/v2/systemsharedmemory/")) {
      return sharedMemoryRoute(request, { path: path.slice(22), registry: options.sharedMemory });
    }
    if (path.startsWith("/v2/cudasharedmemory/")) return cudaSharedMemoryRoute(request, path);
    switch (path) {
      case "/v2":
      case "/v2/":
        return request.method === "GET" ? serverMetadata : METHOD_NOT_ALLOWED;
      case "/v2/trace/setting":
        return traceRoute(request, options.trace);
      case "/v2/health/live":
      case "/v2/health/ready":
        return request.method === "GET" ? OK : METHOD_NOT_ALLOWED;
      case "/v2/repository/index":
        if (request.method !== "POST") return METHOD_NOT_ALLOWED;
        return json(
          [...repository.models]
            .sort((a, b) => a.name.localeCompare(b.name) || Number(a.version) - Number(b.version))
            .map((m) => ({ name: m.name, version: m.version, state: "READY" })),
        );
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
