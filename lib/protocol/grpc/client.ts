/**
 * KServe v2 / Triton gRPC client: ServerMetadata, ModelMetadata, ModelConfig,
 * ModelStatistics, unary ModelInfer and the ModelStreamInfer bidirectional
 * stream (decoupled models: 0..N responses per request).
 *
 * prepare() encodes the gRPC message once (compressed once when asked); a
 * request then costs copying a pre-encoded header block and that message into
 * the connection's write buffer. Sessions share HTTP/2 connections, at most
 * `sessionsPerConnection` each, like the reference client's channel sharing.
 */
import { type Endpoint, formatAddress } from "../http1/connect.ts";
import type { TlsOptions } from "../http1/mod.ts";
import { InferError } from "../errors.ts";
import { memoizeDecode } from "../_response_memo.ts";
import type {
  InferenceClient,
  InferSession,
  PreparedRequest,
  StatisticsSource,
  TraceControl,
  TraceSettings,
} from "../types.ts";
import type { InferRequest } from "../../types/tensor.ts";
import type { ModelInfo, ModelStatistics, ServerInfo } from "../../types/model.ts";
import { traceSettingsFromGrpc, traceSettingsToGrpc } from "../trace.ts";
import {
  headerBlock,
  Http2Error,
  Http2Session,
  type Http2Stream,
  type StreamHandler,
} from "./http2.ts";
import {
  decodeMessage,
  encodeMessage,
  type Fields,
  Messages,
  type MessageType,
  toInferParameter,
  toModelInfo,
  toModelStatistics,
  toServerInfo,
} from "./messages.ts";
import {
  placementOf,
  type SharedMemoryControl,
  type SharedMemoryRegion,
  sharedOutputReader,
} from "../shm.ts";
import {
  compress,
  type Compression,
  decompress,
  formatTimeout,
  frameMessage,
  MessageReader,
  RESERVED_METADATA,
  SERVICE_PATH,
  Status,
} from "./wire.ts";

import {
  callError,
  Connection,
  decodeInferResponse,
  lossError,
  newCallState,
  parseStatus,
  PreparedGrpcRequest,
  type SessionHost,
  sharedParameters,
  StreamSession,
  type UnaryMethod,
  UnarySession,
  withSharedOutputs,
} from "./_session.ts";

export type { UnaryMethod } from "./_session.ts";

export const DEFAULT_GRPC_PORT = 8001;
const DEFAULT_GRPCS_PORT = 443;

export interface GrpcClientOptions {
  /** "host:port", or "grpc://host:port" / "grpcs://host:port"; default port 8001. */
  url: string;
  /** Metadata sent with every call (-H); names are sent lowercase. */
  headers?: Record<string, string>;
  /** Compression of request messages (sent once, at prepare()). Default "none". */
  compression?: Compression;
  /** Connect over TLS with these settings (a grpcs:// URL implies TLS with the default roots). */
  tls?: TlsOptions;
  /** Default 5000. */
  connectTimeoutMs?: number;
  /** Deadline of each call, sent as grpc-timeout; none by default. */
  requestTimeoutMs?: number;
  /** Sessions send over the ModelStreamInfer stream instead of unary ModelInfer. */
  streaming?: boolean;
  /** How many sessions share one HTTP/2 connection. Default 6, as the reference client. */
  sessionsPerConnection?: number;
}

/** Endpoint of a gRPC URL; TLS when the scheme is grpcs:// or https://. */
export function parseGrpcUrl(url: string): Endpoint {
  const match = /^(?:([a-z]+):\/\/)?([^/?#]*)\/?$/i.exec(url.trim());
  const scheme = match?.[1]?.toLowerCase();
  const hostPort = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(match?.[2] ?? "");
  if (
    match === null || hostPort === null ||
    (scheme !== undefined && !["grpc", "grpcs", "http", "https"].includes(scheme))
  ) {
    throw new RangeError(`Invalid gRPC server URL "${url}": expected host:port`);
  }
  const secure = scheme === "grpcs" || scheme === "https";
  const port = hostPort[2] === undefined
    ? (secure ? DEFAULT_GRPCS_PORT : DEFAULT_GRPC_PORT)
    : Number(hostPort[2]);
  if (port < 1 || port > 65535) throw new RangeError(`Invalid port in gRPC server URL "${url}"`);
  const endpoint: Endpoint = { hostname: hostPort[1], port };
  if (secure) endpoint.tls = {};
  return endpoint;
}

/** A unary call on the control connection (metadata, configuration, statistics). */
class ControlCall implements StreamHandler {
  readonly state = newCallState();
  readonly done = Promise.withResolvers<Uint8Array>();
  #message: Uint8Array | undefined;
  readonly #reader = new MessageReader((message, compressed) => {
    this.#message = compressed ? decompress(this.state.encoding, message) : message.slice();
  });

  constructor(readonly address: string) {}

  headers(_stream: Http2Stream, fields: readonly string[], endStream: boolean): void {
    parseStatus(fields, this.state);
    if (endStream) this.#finish();
  }

  data(_stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    try {
      this.#reader.push(data);
    } catch (error) {
      this.done.reject(error);
      return;
    }
    if (endStream) this.#finish();
  }

  reset(_stream: Http2Stream, error: Error): void {
    this.done.reject(lossError(error, this.address));
  }

  #finish(): void {
    if (this.state.status !== Status.OK) this.done.reject(callError(this.state));
    else this.done.resolve(this.#message ?? new Uint8Array(0));
  }
}

export class GrpcClient
  implements InferenceClient, StatisticsSource, SharedMemoryControl, TraceControl, SessionHost {
  readonly protocol = "grpc" as const;
  /** "host:port", as used in messages. */
  readonly address: string;
  readonly requestTimeoutMs: number | undefined;
  /** Header blocks of the two inference RPCs (shared by every stream of every connection). */
  readonly unaryBlock: Uint8Array;
  readonly streamBlock: Uint8Array;
  readonly #endpoint: Endpoint;
  readonly #metadata: Array<[string, string]>;
  readonly #compression: Compression;
  readonly #streaming: boolean;
  readonly #perConnection: number;
  readonly #connections: Connection[] = [];
  readonly #decoupled = new Map<string, boolean>();
  /** Header blocks of unary calls by path, with the request deadline. */
  readonly #blocks = new Map<string, Uint8Array>();
  #control: Connection | undefined;
  readonly #onConnectionClose = (connection: Connection): void => {
    const i = this.#connections.indexOf(connection);
    if (i >= 0) this.#connections.splice(i, 1);
    if (this.#control === connection) this.#control = undefined;
  };

  constructor(options: GrpcClientOptions) {
    const endpoint = parseGrpcUrl(options.url);
    if (options.tls !== undefined) endpoint.tls = options.tls;
    if (endpoint.tls !== undefined) endpoint.tls = { ...endpoint.tls, alpnProtocols: ["h2"] };
    endpoint.connectTimeoutMs = options.connectTimeoutMs;
    this.#endpoint = endpoint;
    this.address = formatAddress(endpoint.hostname, endpoint.port);
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.#compression = options.compression ?? "none";
    this.#streaming = options.streaming === true;
    this.#perConnection = Math.max(1, options.sessionsPerConnection ?? 6);
    this.#metadata = Object.entries(options.headers ?? {}).map(([name, value]) => {
      const key = name.toLowerCase();
      if (RESERVED_METADATA.has(key) || key.startsWith(":")) {
        throw new RangeError(`Header "${name}" can not be sent as gRPC metadata: gRPC sets it`);
      }
      return [key, value];
    });
    this.unaryBlock = this.#unaryBlock(SERVICE_PATH + "ModelInfer");
    this.streamBlock = this.#block(SERVICE_PATH + "ModelStreamInfer", undefined);
  }

  async serverInfo(): Promise<ServerInfo> {
    const response = await this.#call(
      "ServerMetadata",
      Messages.ServerMetadataRequest,
      {},
      Messages.ServerMetadataResponse,
    );
    return toServerInfo(response);
  }

  async modelInfo(model: string, version: string): Promise<ModelInfo> {
    const request = { name: model, version };
    const metadata = await this.#call(
      "ModelMetadata",
      Messages.ModelMetadataRequest,
      request,
      Messages.ModelMetadataResponse,
    );
    let config: Fields | undefined;
    try {
      config = (await this.#call(
        "ModelConfig",
        Messages.ModelConfigRequest,
        request,
        Messages.ModelConfigResponse,
      )).config;
    } catch (error) {
      // Plain KServe servers have no configuration extension: use its defaults.
      if (!(error instanceof InferError && error.status === Status.UNIMPLEMENTED)) throw error;
    }
    const info = toModelInfo(metadata, config, version);
    this.#decoupled.set(model, info.decoupled);
    return info;
  }

  /** Statistics of one model, or of every model when `model` is "". */
  async modelStatistics(model: string, version: string): Promise<ModelStatistics[]> {
    const response = await this.#call(
      "ModelStatistics",
      Messages.ModelStatisticsRequest,
      { name: model, version },
      Messages.ModelStatisticsResponse,
    );
    return toModelStatistics(response);
  }

  async registerSystemSharedMemory(region: SharedMemoryRegion): Promise<void> {
    await this.#call(
      "SystemSharedMemoryRegister",
      Messages.SystemSharedMemoryRegisterRequest,
      { name: region.name, key: region.key, offset: region.offset, byte_size: region.byteSize },
      Messages.SystemSharedMemoryRegisterResponse,
    );
  }

  async unregisterSystemSharedMemory(name: string): Promise<void> {
    await this.#call(
      "SystemSharedMemoryUnregister",
      Messages.SystemSharedMemoryUnregisterRequest,
      { name },
      Messages.SystemSharedMemoryUnregisterResponse,
    );
  }

  async updateTraceSettings(settings: TraceSettings): Promise<TraceSettings> {
    const response = await this.#call(
      "TraceSetting",
      Messages.TraceSettingRequest,
      { settings: traceSettingsToGrpc(settings), model_name: "" },
      Messages.TraceSettingResponse,
    );
    return traceSettingsFromGrpc(response.settings);
  }

  /** Encodes a request of another service's unary method once, for sessions to send. */
  prepareCall(message: Uint8Array, method: UnaryMethod): PreparedRequest {
    return new PreparedGrpcRequest(this.#frame(message), {
      decoupled: false,
      block: this.#unaryBlock(method.path),
      decode: method.decode,
    });
  }

  /** A unary call on the control connection: request and response as encoded messages. */
  async call(path: string, message: Uint8Array): Promise<Uint8Array> {
    this.#control ??= new Connection(this.#endpoint, this.#onConnectionClose);
    let session: Http2Session;
    try {
      session = await this.#control.ready;
    } catch (error) {
      this.#control = undefined;
      throw error;
    }
    const call = new ControlCall(this.address);
    try {
      const stream = session.request(call, this.#unaryBlock(path), false);
      session.sendData(stream, frameMessage(message, false), true);
    } catch (error) {
      throw error instanceof Http2Error ? lossError(error, this.address) : error;
    }
    return await call.done.promise;
  }

  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const decoupled = this.#decoupled.get(target.model) === true;
    const placement = placementOf(request);
    const parameters: Fields = {};
    for (const [name, value] of Object.entries(request.parameters ?? {})) {
      parameters[name] = toInferParameter(value);
    }
    // Without it a decoupled model's last response cannot be told apart (perf_analyzer sets it too).
    if (decoupled && this.#streaming) {
      parameters.triton_enable_empty_final_response = { bool_param: true };
    }
    const message = encodeMessage(Messages.ModelInferRequest, {
      model_name: target.model,
      model_version: target.version,
      parameters,
      inputs: request.inputs.map((t, i) => ({
        name: t.name,
        datatype: t.datatype,
        shape: t.shape,
        ...(placement ? { parameters: sharedParameters(placement.inputs[i]) } : {}),
      })),
      outputs: request.outputs.map((name, i) => ({
        name,
        ...(placement ? { parameters: sharedParameters(placement.outputs[i]) } : {}),
      })),
      // Tensors in shared memory are named by their parameters instead.
      raw_input_contents: placement ? [] : request.inputs.map((t) => t.data),
    });
    const shared = sharedOutputReader(request);
    return new PreparedGrpcRequest(this.#frame(message), {
      decoupled,
      outputNames: request.outputs,
      block: this.unaryBlock,
      decode: shared === undefined
        ? memoizeDecode((message: Uint8Array, _head: void) => decodeInferResponse(message))
        : (response) => withSharedOutputs(decodeInferResponse(response), shared),
    });
  }

  openSession(): Promise<InferSession> {
    return Promise.resolve(this.#streaming ? new StreamSession(this) : new UnarySession(this));
  }

  async close(): Promise<void> {
    const all = [...this.#connections];
    if (this.#control !== undefined) all.push(this.#control);
    this.#connections.length = 0;
    this.#control = undefined;
    await Promise.all(all.map((c) => c.close()));
  }

  /** The connection with room for one more session, opened when all are full. */
  assign(): Connection {
    let best: Connection | undefined;
    for (const c of this.#connections) {
      const limit = Math.min(this.#perConnection, c.session?.peerMaxStreams ?? Infinity);
      if (c.usable && c.users < limit && (best === undefined || c.users < best.users)) best = c;
    }
    if (best === undefined) {
      best = new Connection(this.#endpoint, this.#onConnectionClose);
      this.#connections.push(best);
    }
    best.users++;
    return best;
  }

  release(connection: Connection): void {
    connection.users = Math.max(0, connection.users - 1);
  }

  /** The message framed for sending, compressed when asked (done once per request). */
  #frame(message: Uint8Array): Uint8Array {
    const compressed = this.#compression !== "none";
    return frameMessage(compressed ? compress(this.#compression, message) : message, compressed);
  }

  /** The header block of a unary call to `path`, built once per path. */
  #unaryBlock(path: string): Uint8Array {
    let block = this.#blocks.get(path);
    if (block === undefined) {
      block = this.#block(path, this.requestTimeoutMs);
      this.#blocks.set(path, block);
    }
    return block;
  }

  #block(path: string, timeoutMs: number | undefined): Uint8Array {
    const fields: Array<[string, string]> = [
      [":method", "POST"],
      [":scheme", this.#endpoint.tls ? "https" : "http"],
      [":path", path],
      [":authority", this.address],
      ["content-type", "application/grpc"],
      ["te", "trailers"],
      ["user-agent", "inferperf"],
      ["grpc-accept-encoding", "identity,deflate,gzip"],
    ];
    if (this.#compression !== "none") fields.push(["grpc-encoding", this.#compression]);
    if (timeoutMs !== undefined) fields.push(["grpc-timeout", formatTimeout(timeoutMs)]);
    return headerBlock([...fields, ...this.#metadata]);
  }

  async #call(
    method: string,
    requestType: MessageType,
    request: Fields,
    responseType: MessageType,
  ): Promise<Fields> {
    const response = await this.call(SERVICE_PATH + method, encodeMessage(requestType, request));
    return decodeMessage(responseType, response);
  }
}
