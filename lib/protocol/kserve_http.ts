/**
 * KServe v2 (Open Inference Protocol) client over HTTP/1.1, with Triton's
 * binary tensor, model configuration and statistics extensions.
 *
 * prepare() encodes the whole HTTP request once; a session then only writes
 * those bytes and reads the response on its own keep-alive connection.
 */
import { type Datatype, isDatatype } from "../types/datatype.ts";
import { concatBytes, parseJsonExact, tensorFromJson, tensorToJson } from "../input/codec.ts";
import { ProtocolError } from "./errors.ts";
import { memoizeDecode } from "./_response_memo.ts";
import { Http1Client, type HttpResponse, isSuccess, type ResponseHead } from "./http1/mod.ts";
import {
  type HttpClientOptions,
  HttpSessions,
  HttpTarget,
  isObject,
  type JsonObject,
  mergeHeaders,
  PreparedHttpRequest,
  preview,
  serverError,
} from "./_http_session.ts";
import type {
  InferenceClient,
  InferSession,
  PreparedRequest,
  StatisticsSource,
  TraceControl,
  TraceSettings,
} from "./types.ts";
import type { InferRequest, ParameterValue, Tensor, TensorSpec } from "../types/tensor.ts";
import {
  markOptional,
  type ModelInfo,
  type ModelStatistics,
  type ServerInfo,
  type StatDuration,
} from "../types/model.ts";
import { traceSettingsFromJson, traceSettingsToJson } from "./trace.ts";
import {
  placementOf,
  refParameters,
  type SharedMemoryControl,
  type SharedMemoryRegion,
  type SharedOutputReader,
  sharedOutputReader,
} from "./shm.ts";

export { DEFAULT_HTTP_PORT, mergeHeaders, parseKServeUrl, serverError } from "./_http_session.ts";

export type TensorFormat = "binary" | "json";

export interface KServeHttpOptions extends HttpClientOptions {
  /** Inputs as raw bytes after the JSON header (binary tensor extension) or as JSON `data`. */
  inputFormat: TensorFormat;
  /** Ask for outputs as raw bytes or as JSON `data`. */
  outputFormat: TensorFormat;
}

// JSON.rawJSON is in V8 but not yet in TypeScript's lib.
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** JSON.stringify that writes bigints as bare integers and non-finite numbers as strings. */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (typeof v === "bigint") return rawJson(v.toString());
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    return v;
  });
}

/** A JSON body with integers beyond 2^53 kept exact; malformed JSON is a ProtocolError. */
function parseJson(bytes: Uint8Array, what: string): unknown {
  const text = decoder.decode(bytes);
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw new ProtocolError(`Invalid JSON in ${what}: ${preview(text)}`, { cause: error });
  }
}

function asObject(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw new ProtocolError(`Expected a JSON object for ${what}`);
  return value;
}

function asArray(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ProtocolError(`Expected a JSON array for ${what}`);
  return value;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== "string") throw new ProtocolError(`Expected a string for ${what}`);
  return value;
}

/** Counters arrive as JSON numbers, bigints (beyond 2^53) or decimal strings; absent is 0. */
function asNumber(value: unknown, what: string): number {
  if (value === undefined || value === null) return 0;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n === "bigint") return Number(n);
  if (typeof n !== "number" || !Number.isFinite(n)) {
    throw new ProtocolError(`Expected a number for ${what}, got ${stringify(value)}`);
  }
  return n;
}

function asDatatype(value: unknown, what: string): Datatype {
  const text = asString(value, what);
  if (!isDatatype(text)) throw new ProtocolError(`Unsupported datatype "${text}" for ${what}`);
  return text;
}

function asShape(value: unknown, what: string): number[] {
  return asArray(value, what).map((d, i) => asNumber(d, `${what}[${i}]`));
}

/**
 * Output tensors of an infer response (binary tensor extension, JSON `data`,
 * or, with `shared`, outputs the server wrote to shared memory).
 */
export function decodeInferResponse(
  body: Uint8Array,
  jsonLength: number,
  shared?: SharedOutputReader,
): Tensor[] {
  const headerEnd = jsonLength >= 0 ? jsonLength : body.byteLength;
  if (headerEnd > body.byteLength) {
    throw new ProtocolError(
      `Inference-Header-Content-Length ${jsonLength} exceeds the body (${body.byteLength} bytes)`,
    );
  }
  const header = asObject(parseJson(body.subarray(0, headerEnd), "infer response"), "response");
  let offset = headerEnd;
  return asArray(header.outputs, "outputs").map((value, i) => {
    const output = asObject(value, `outputs[${i}]`);
    const name = asString(output.name, `outputs[${i}].name`);
    const what = `output "${name}"`;
    const datatype = asDatatype(output.datatype, `${what} datatype`);
    const shape = asShape(output.shape, `${what} shape`);
    const parameters = isObject(output.parameters) ? output.parameters : {};
    let data: Uint8Array;
    if (parameters.binary_data_size !== undefined) {
      const size = asNumber(parameters.binary_data_size, `${what} binary_data_size`);
      if (offset + size > body.byteLength) {
        throw new ProtocolError(`Binary data of ${what} runs past the end of the body`);
      }
      data = body.slice(offset, offset + size);
      offset += size;
    } else if (Array.isArray(output.data)) {
      data = tensorFromJson(datatype, output.data.flat(Infinity));
    } else {
      const fromShared = shared?.({ name, datatype, shape });
      if (fromShared === undefined) {
        throw new ProtocolError(`The response has neither data nor binary_data_size for ${what}`);
      }
      data = fromShared;
    }
    return { name, datatype, shape, data };
  });
}

/** Outputs of an infer response whose tensors all came in the body. */
const decodeBody = (body: Uint8Array, head: ResponseHead): Tensor[] =>
  decodeInferResponse(body, head.inferenceHeaderContentLength);

function emptyDuration(): StatDuration {
  return { count: 0, ns: 0 };
}

function parseDuration(value: unknown, what: string): StatDuration {
  if (value === undefined || value === null) return emptyDuration();
  const duration = asObject(value, what);
  return {
    count: asNumber(duration.count, `${what}.count`),
    ns: asNumber(duration.ns, `${what}.ns`),
  };
}

export function parseModelStatistics(value: unknown, index: number): ModelStatistics {
  const what = `model_stats[${index}]`;
  const stats = asObject(value, what);
  const inference = isObject(stats.inference_stats) ? stats.inference_stats : {};
  const duration = (key: string) => parseDuration(inference[key], `${what}.inference_stats.${key}`);
  return {
    name: asString(stats.name, `${what}.name`),
    version: stats.version === undefined ? "" : String(stats.version),
    inferenceCount: asNumber(stats.inference_count, `${what}.inference_count`),
    executionCount: asNumber(stats.execution_count, `${what}.execution_count`),
    success: duration("success"),
    fail: duration("fail"),
    queue: duration("queue"),
    computeInput: duration("compute_input"),
    computeInfer: duration("compute_infer"),
    computeOutput: duration("compute_output"),
    cacheHit: duration("cache_hit"),
    cacheMiss: duration("cache_miss"),
  };
}

function parseTensorSpecs(value: unknown, what: string, batched: boolean): TensorSpec[] {
  return asArray(value, what).map((item, i) => {
    const tensor = asObject(item, `${what}[${i}]`);
    const name = asString(tensor.name, `${what}[${i}].name`);
    const shape = asShape(tensor.shape, `${what} "${name}" shape`);
    return {
      name,
      datatype: asDatatype(tensor.datatype, `${what} "${name}"`),
      // Metadata shapes of batching models lead with the batch dimension (-1).
      dims: batched && shape.length > 0 ? shape.slice(1) : shape,
    };
  });
}

/**
 * What the load generator needs of a model, from its metadata and
 * configuration JSON (Triton's HTTP endpoints and its C API give the same).
 */
export function modelInfoFromJson(
  metadataJson: unknown,
  configJson: unknown,
  target: { model: string; version: string },
): ModelInfo {
  const { model, version } = target;
  const metadata = asObject(metadataJson, "model metadata");
  const config = asObject(configJson, "model config");
  const maxBatchSize = asNumber(config.max_batch_size, "max_batch_size");
  const policy = isObject(config.model_transaction_policy) ? config.model_transaction_policy : {};
  const ensemble = isObject(config.ensemble_scheduling) ? config.ensemble_scheduling : {};
  const composing = asArray(ensemble.step, "ensemble_scheduling.step")
    .map((step) => isObject(step) ? step.model_name : undefined)
    .filter((name): name is string => typeof name === "string");
  const cache = isObject(config.response_cache) ? config.response_cache : {};
  const optional = new Set(
    (Array.isArray(config.input) ? config.input : [])
      .filter((input) => isObject(input) && input.optional === true)
      .map((input) => String(input.name)),
  );
  return {
    name: asString(metadata.name ?? model, "model name"),
    version,
    platform: typeof metadata.platform === "string" ? metadata.platform : "",
    versions: asArray(metadata.versions, "versions").map(String),
    inputs: markOptional(parseTensorSpecs(metadata.inputs, "inputs", maxBatchSize > 0), optional),
    outputs: parseTensorSpecs(metadata.outputs, "outputs", maxBatchSize > 0),
    maxBatchSize,
    decoupled: policy.decoupled === true,
    sequence: isObject(config.sequence_batching),
    composingModels: [...new Set(composing)],
    responseCache: cache.enable === true,
  };
}

export class KServeHttpClient
  implements InferenceClient, StatisticsSource, SharedMemoryControl, TraceControl {
  readonly protocol = "http" as const;
  readonly #target: HttpTarget;
  readonly #inputFormat: TensorFormat;
  readonly #outputFormat: TensorFormat;
  readonly #control: Http1Client;
  readonly #sessions: HttpSessions;

  constructor(options: KServeHttpOptions) {
    this.#target = new HttpTarget(options);
    this.#inputFormat = options.inputFormat;
    this.#outputFormat = options.outputFormat;
    this.#control = new Http1Client(this.#target.endpoint);
    this.#sessions = new HttpSessions(this.#target.endpoint, "a KServe HTTP client");
  }

  async serverInfo(): Promise<ServerInfo> {
    const info = asObject(await this.#getJson(`${this.#target.basePath}/v2`), "server metadata");
    return {
      name: typeof info.name === "string" ? info.name : "",
      version: typeof info.version === "string" ? info.version : "",
      extensions: asArray(info.extensions, "extensions").map(String),
    };
  }

  async modelInfo(model: string, version: string): Promise<ModelInfo> {
    const path = this.#modelPath(model, version);
    const metadata = await this.#getJson(path);
    const configResponse = await this.#get(`${path}/config`);
    // Plain KServe servers have no configuration extension: use its defaults.
    const config = isSuccess(configResponse.status)
      ? parseJson(configResponse.body, "model config")
      : {};
    return modelInfoFromJson(metadata, config, { model, version });
  }

  /** Statistics of one model, or of every model when `model` is "". */
  async modelStatistics(model: string, version: string): Promise<ModelStatistics[]> {
    const path = model === ""
      ? `${this.#target.basePath}/v2/models/stats`
      : `${this.#modelPath(model, version)}/stats`;
    const stats = asObject(await this.#getJson(path), "model statistics");
    return asArray(stats.model_stats, "model_stats").map(parseModelStatistics);
  }

  async registerSystemSharedMemory(region: SharedMemoryRegion): Promise<void> {
    const name = encodeURIComponent(region.name);
    await this.#post(`${this.#target.basePath}/v2/systemsharedmemory/region/${name}/register`, {
      key: region.key,
      offset: region.offset,
      byte_size: region.byteSize,
    });
  }

  async unregisterSystemSharedMemory(name: string): Promise<void> {
    const region = name === "" ? "" : `/region/${encodeURIComponent(name)}`;
    await this.#post(`${this.#target.basePath}/v2/systemsharedmemory${region}/unregister`);
  }

  async updateTraceSettings(settings: TraceSettings): Promise<TraceSettings> {
    const path = `${this.#target.basePath}/v2/trace/setting`;
    const body = await this.#post(path, traceSettingsToJson(settings));
    return traceSettingsFromJson(parseJson(body, `the response to POST ${path}`));
  }

  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const placement = placementOf(request);
    // Tensors in shared memory leave only the JSON header to send.
    const binaryInput = this.#inputFormat === "binary" && placement === undefined;
    const binaryOutput = this.#outputFormat === "binary";
    const parameters: Record<string, ParameterValue> = {};
    // JSON numbers carry no int/uint/double distinction: typed parameters go as their value.
    for (const [name, value] of Object.entries(request.parameters ?? {})) {
      parameters[name] = typeof value === "object" ? value.value : value;
    }
    if (binaryOutput && request.outputs.length === 0) parameters.binary_data_output = true;
    const header: JsonObject = {
      inputs: request.inputs.map((t, i) => ({
        name: t.name,
        datatype: t.datatype,
        shape: t.shape,
        ...(placement !== undefined
          ? { parameters: refParameters(placement.inputs[i]) }
          : binaryInput
          ? { parameters: { binary_data_size: t.data.byteLength } }
          : { data: tensorToJson(t.datatype, t.data) }),
      })),
    };
    if (request.outputs.length > 0) {
      header.outputs = request.outputs.map((name, i) => ({
        name,
        parameters: placement === undefined
          ? { binary_data: binaryOutput }
          : refParameters(placement.outputs[i]),
      }));
    }
    if (Object.keys(parameters).length > 0) header.parameters = parameters;
    const json = encoder.encode(stringify(header));
    let body: Uint8Array = json;
    const headers: Record<string, string> = {
      "Content-Type": binaryInput ? "application/octet-stream" : "application/json",
    };
    if (binaryInput) {
      headers["Inference-Header-Content-Length"] = String(json.byteLength);
      body = concatBytes([json, ...request.inputs.map((t) => t.data)]);
    }
    const path = `${this.#modelPath(target.model, target.version)}/infer`;
    const shared = sharedOutputReader(request);
    return new PreparedHttpRequest(
      this.#target.post(path, { headers, body }),
      shared === undefined
        ? memoizeDecode(decodeBody, { key: (head) => head.inferenceHeaderContentLength })
        : (body, head) => decodeInferResponse(body, head.inferenceHeaderContentLength, shared),
    );
  }

  openSession(): Promise<InferSession> {
    return this.#sessions.open();
  }

  close(): Promise<void> {
    this.#sessions.closeAll();
    this.#control.close();
    return Promise.resolve();
  }

  #modelPath(model: string, version: string): string {
    const versionPath = version === "" ? "" : `/versions/${encodeURIComponent(version)}`;
    return `${this.#target.basePath}/v2/models/${encodeURIComponent(model)}${versionPath}`;
  }

  #get(path: string): Promise<HttpResponse> {
    return this.#control.request("GET", path, { headers: this.#target.headers });
  }

  /** The response body of a successful POST. */
  async #post(path: string, body?: JsonObject): Promise<Uint8Array> {
    const response = await this.#control.request("POST", path, {
      headers: mergeHeaders({ "Content-Type": "application/json" }, this.#target.headers),
      ...(body === undefined ? {} : { body: encoder.encode(JSON.stringify(body)) }),
    });
    if (!isSuccess(response.status)) throw serverError(response.status, response.body);
    return response.body;
  }

  async #getJson(path: string): Promise<unknown> {
    const response = await this.#get(path);
    if (!isSuccess(response.status)) throw serverError(response.status, response.body);
    return parseJson(response.body, `the response to GET ${path}`);
  }
}
