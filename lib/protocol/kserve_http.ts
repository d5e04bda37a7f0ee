/**
 * KServe v2 (Open Inference Protocol) client over HTTP/1.1, with Triton's
 * binary tensor, model configuration and statistics extensions.
 *
 * prepare() encodes the whole HTTP request once; a session then only writes
 * those bytes and reads the response on its own keep-alive connection.
 */
import { type Datatype, isDatatype } from "../input/datatype.ts";
import { parseJsonExact, tensorFromJson, tensorToJson } from "../input/codec.ts";
import { InferError, ProtocolError } from "./errors.ts";
import {
  buildRequest,
  type Endpoint,
  Http1Client,
  Http1Connection,
  type HttpResponse,
  type TlsOptions,
} from "./http1/mod.ts";
import type {
  InferenceClient,
  InferOptions,
  InferRequest,
  InferSession,
  ModelInfo,
  ModelStatistics,
  OutputTensors,
  ParameterValue,
  PreparedRequest,
  RequestTiming,
  ServerInfo,
  StatDuration,
  StatisticsSource,
  Tensor,
  TensorSpec,
} from "./types.ts";
import {
  placementOf,
  refParameters,
  type SharedMemoryControl,
  type SharedMemoryRegion,
  type SharedOutputReader,
  sharedOutputReader,
} from "./shm.ts";

export type TensorFormat = "binary" | "json";

export interface KServeHttpOptions {
  /** "host:port", "http://host:port[/base/path]" or "https://..."; default port 8000 (443 for https). */
  url: string;
  /** Extra header fields sent with every request (-H). */
  headers?: Record<string, string>;
  /** Inputs as raw bytes after the JSON header (binary tensor extension) or as JSON `data`. */
  inputFormat: TensorFormat;
  /** Ask for outputs as raw bytes or as JSON `data`. */
  outputFormat: TensorFormat;
  /** Default 5000. */
  connectTimeoutMs?: number;
  /** No limit by default. */
  requestTimeoutMs?: number;
  /** Certificates for https URLs. */
  tls?: TlsOptions;
}

export const DEFAULT_HTTP_PORT = 8000;
const DEFAULT_HTTPS_PORT = 443;

/** Endpoint and base path of a KServe URL. */
export function parseKServeUrl(url: string): { endpoint: Endpoint; basePath: string } {
  const match = /^(?:(https?):\/\/)?([^/?#]*)([^?#]*)$/i.exec(url.trim());
  const authority = match?.[2] ?? "";
  const hostPort = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(authority);
  if (match === null || hostPort === null) {
    throw new RangeError(`Invalid server URL "${url}": expected host:port or http(s)://host:port`);
  }
  const secure = match[1]?.toLowerCase() === "https";
  const port = hostPort[2] === undefined
    ? (secure ? DEFAULT_HTTPS_PORT : DEFAULT_HTTP_PORT)
    : Number(hostPort[2]);
  if (port < 1 || port > 65535) throw new RangeError(`Invalid port in server URL "${url}"`);
  const endpoint: Endpoint = { hostname: hostPort[1], port };
  if (secure) endpoint.tls = {};
  return { endpoint, basePath: match[3].replace(/\/+$/, "") };
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
    const preview = JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}...` : text);
    throw new ProtocolError(`Invalid JSON in ${what}: ${preview}`, { cause: error });
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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

const MAX_ERROR_TEXT = 500;

/**
 * The server's `{"error": "..."}` message (OpenAI-style servers: `{"error":
 * {"message": "..."}}`), or the body text, as an InferError.
 */
export function serverError(status: number, body: Uint8Array): InferError {
  const text = decoder.decode(body).trim();
  let message = text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}...` : text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && typeof parsed.error === "string") message = parsed.error;
    else if (
      isObject(parsed) && isObject(parsed.error) && typeof parsed.error.message === "string"
    ) {
      message = parsed.error.message;
    }
  } catch {
    // Not JSON (a proxy's error page, say): the text itself is the message.
  }
  return new InferError(`Server returned ${status}: ${message || "empty response"}`, status);
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Header fields with `extra` overriding `base` regardless of case. */
export function mergeHeaders(
  base: Record<string, string>,
  extra: Record<string, string>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  const overridden = new Set(Object.keys(extra).map((k) => k.toLowerCase()));
  for (const [name, value] of Object.entries(base)) {
    if (!overridden.has(name.toLowerCase())) merged[name] = value;
  }
  return Object.assign(merged, extra);
}

/** A request encoded once: the complete HTTP/1.1 request bytes. */
class PreparedHttpRequest implements PreparedRequest {
  readonly byteLength: number;
  constructor(readonly bytes: Uint8Array, readonly shared?: SharedOutputReader) {
    this.byteLength = bytes.byteLength;
  }
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

class KServeHttpSession implements InferSession {
  #connection: Http1Connection;
  #onClose: (session: KServeHttpSession) => void;

  constructor(connection: Http1Connection, onClose: (session: KServeHttpSession) => void) {
    this.#connection = connection;
    this.#onClose = onClose;
  }

  async infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    if (!(request instanceof PreparedHttpRequest)) {
      throw new TypeError("The request was not prepared by a KServe HTTP client");
    }
    const connection = this.#connection;
    timing.start = performance.now();
    const head = await connection.send(request.bytes, timing);
    if (!isSuccess(head.status)) {
      const body = await connection.readBody();
      timing.end = performance.now();
      timing.responses = 1;
      throw serverError(head.status, body);
    }
    if (options?.decodeOutputs !== true) {
      await connection.skipBody();
      timing.end = performance.now();
      timing.responses = 1;
      return undefined;
    }
    const jsonLength = head.inferenceHeaderContentLength;
    const body = await connection.readBody();
    // Decoding is the caller's post-processing, not part of the measured exchange.
    timing.end = performance.now();
    timing.responses = 1;
    return decodeInferResponse(body, jsonLength, request.shared);
  }

  close(): void {
    this.#connection.close();
    this.#onClose(this);
  }
}

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

function parseModelStatistics(value: unknown, index: number): ModelStatistics {
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

export class KServeHttpClient implements InferenceClient, StatisticsSource, SharedMemoryControl {
  readonly protocol = "http" as const;
  readonly #endpoint: Endpoint;
  readonly #basePath: string;
  readonly #host: string;
  readonly #headers: Record<string, string>;
  readonly #inputFormat: TensorFormat;
  readonly #outputFormat: TensorFormat;
  readonly #control: Http1Client;
  readonly #sessions = new Set<KServeHttpSession>();
  readonly #forget = (session: KServeHttpSession): void => {
    this.#sessions.delete(session);
  };

  constructor(options: KServeHttpOptions) {
    const { endpoint, basePath } = parseKServeUrl(options.url);
    endpoint.connectTimeoutMs = options.connectTimeoutMs;
    endpoint.requestTimeoutMs = options.requestTimeoutMs;
    if (endpoint.tls !== undefined && options.tls !== undefined) endpoint.tls = options.tls;
    this.#endpoint = endpoint;
    this.#basePath = basePath;
    this.#headers = { ...options.headers };
    this.#inputFormat = options.inputFormat;
    this.#outputFormat = options.outputFormat;
    this.#control = new Http1Client(endpoint);
    this.#host = this.#control.address;
  }

  async serverInfo(): Promise<ServerInfo> {
    const info = asObject(await this.#getJson(`${this.#basePath}/v2`), "server metadata");
    return {
      name: typeof info.name === "string" ? info.name : "",
      version: typeof info.version === "string" ? info.version : "",
      extensions: asArray(info.extensions, "extensions").map(String),
    };
  }

  async modelInfo(model: string, version: string): Promise<ModelInfo> {
    const path = this.#modelPath(model, version);
    const metadata = asObject(await this.#getJson(path), "model metadata");
    const configResponse = await this.#get(`${path}/config`);
    // Plain KServe servers have no configuration extension: use its defaults.
    const config = isSuccess(configResponse.status)
      ? asObject(parseJson(configResponse.body, "model config"), "model config")
      : {};
    const maxBatchSize = asNumber(config.max_batch_size, "max_batch_size");
    const policy = isObject(config.model_transaction_policy) ? config.model_transaction_policy : {};
    const ensemble = isObject(config.ensemble_scheduling) ? config.ensemble_scheduling : {};
    const composing = asArray(ensemble.step, "ensemble_scheduling.step")
      .map((step) => isObject(step) ? step.model_name : undefined)
      .filter((name): name is string => typeof name === "string");
    const cache = isObject(config.response_cache) ? config.response_cache : {};
    return {
      name: asString(metadata.name ?? model, "model name"),
      version,
      platform: typeof metadata.platform === "string" ? metadata.platform : "",
      versions: asArray(metadata.versions, "versions").map(String),
      inputs: parseTensorSpecs(metadata.inputs, "inputs", maxBatchSize > 0),
      outputs: parseTensorSpecs(metadata.outputs, "outputs", maxBatchSize > 0),
      maxBatchSize,
      decoupled: policy.decoupled === true,
      sequence: isObject(config.sequence_batching),
      composingModels: [...new Set(composing)],
      responseCache: cache.enable === true,
    };
  }

  /** Statistics of one model, or of every model when `model` is "". */
  async modelStatistics(model: string, version: string): Promise<ModelStatistics[]> {
    const path = model === ""
      ? `${this.#basePath}/v2/models/stats`
      : `${this.#modelPath(model, version)}/stats`;
    const stats = asObject(await this.#getJson(path), "model statistics");
    return asArray(stats.model_stats, "model_stats").map(parseModelStatistics);
  }

  async registerSystemSharedMemory(region: SharedMemoryRegion): Promise<void> {
    await this.#post(
      `${this.#basePath}/v2/systemsharedmemory/region/${encodeURIComponent(region.name)}/register`,
      { key: region.key, offset: region.offset, byte_size: region.byteSize },
    );
  }

  async unregisterSystemSharedMemory(name: string): Promise<void> {
    const region = name === "" ? "" : `/region/${encodeURIComponent(name)}`;
    await this.#post(`${this.#basePath}/v2/systemsharedmemory${region}/unregister`);
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
      inputs: request.inputs.map((t, i) =>
        placement !== undefined
          ? {
            name: t.name,
            datatype: t.datatype,
            shape: t.shape,
            parameters: refParameters(placement.inputs[i]),
          }
          : binaryInput
          ? {
            name: t.name,
            datatype: t.datatype,
            shape: t.shape,
            parameters: { binary_data_size: t.data.byteLength },
          }
          : {
            name: t.name,
            datatype: t.datatype,
            shape: t.shape,
            data: tensorToJson(t.datatype, t.data),
          }
      ),
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
    let body = json;
    const headers: Record<string, string> = {
      "Content-Type": binaryInput ? "application/octet-stream" : "application/json",
    };
    if (binaryInput) {
      headers["Inference-Header-Content-Length"] = String(json.byteLength);
      const size = request.inputs.reduce((n, t) => n + t.data.byteLength, json.byteLength);
      body = new Uint8Array(size);
      body.set(json);
      let offset = json.byteLength;
      for (const t of request.inputs) {
        body.set(t.data, offset);
        offset += t.data.byteLength;
      }
    }
    const bytes = buildRequest("POST", `${this.#modelPath(target.model, target.version)}/infer`, {
      host: this.#host,
      headers: mergeHeaders(headers, this.#headers),
      body,
    });
    return new PreparedHttpRequest(bytes, sharedOutputReader(request));
  }

  async openSession(): Promise<InferSession> {
    const session = new KServeHttpSession(await Http1Connection.open(this.#endpoint), this.#forget);
    this.#sessions.add(session);
    return session;
  }

  close(): Promise<void> {
    for (const session of [...this.#sessions]) session.close();
    this.#control.close();
    return Promise.resolve();
  }

  #modelPath(model: string, version: string): string {
    const versionPath = version === "" ? "" : `/versions/${encodeURIComponent(version)}`;
    return `${this.#basePath}/v2/models/${encodeURIComponent(model)}${versionPath}`;
  }

  #get(path: string): Promise<HttpResponse> {
    return this.#control.request("GET", path, { headers: this.#headers });
  }

  async #post(path: string, body?: JsonObject): Promise<void> {
    const response = await this.#control.request("POST", path, {
      headers: mergeHeaders({ "Content-Type": "application/json" }, this.#headers),
      ...(body === undefined ? {} : { body: encoder.encode(JSON.stringify(body)) }),
    });
    if (!isSuccess(response.status)) throw serverError(response.status, response.body);
  }

  async #getJson(path: string): Promise<unknown> {
    const response = await this.#get(path);
    if (!isSuccess(response.status)) throw serverError(response.status, response.body);
    return parseJson(response.body, `the response to GET ${path}`);
  }
}
