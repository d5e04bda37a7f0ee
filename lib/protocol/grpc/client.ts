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
import { connect, describeError, type Endpoint, formatAddress } from "../http1/connect.ts";
import type { TlsOptions } from "../http1/mod.ts";
import { ConnectionError, InferError, oneLine, ProtocolError, TimeoutError } from "../errors.ts";
import type {
  InferenceClient,
  InferOptions,
  InferRequest,
  InferSession,
  ModelInfo,
  ModelStatistics,
  OutputTensors,
  PreparedRequest,
  RequestTiming,
  ServerInfo,
  StatisticsSource,
  Tensor,
  TraceControl,
  TraceSettings,
} from "../types.ts";
import { traceSettingsFromGrpc, traceSettingsToGrpc } from "../trace.ts";
import { isDatatype } from "../../input/datatype.ts";
import {
  headerBlock,
  Http2Error,
  Http2Session,
  type Http2Stream,
  type StreamHandler,
  StreamResetError,
} from "./http2.ts";
import {
  contentsToBytes,
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
import { connTransport, pump } from "./transport.ts";
import { readStreamResponse, type StreamResponse, Walker } from "./_stream_response.ts";
import {
  placementOf,
  refParameters,
  type SharedMemoryControl,
  type SharedMemoryRef,
  type SharedMemoryRegion,
  type SharedOutputReader,
  sharedOutputReader,
} from "../shm.ts";
import {
  compress,
  type Compression,
  decodeGrpcMessage,
  decompress,
  formatTimeout,
  frameMessage,
  GrpcFramingError,
  MessageReader,
  RESERVED_METADATA,
  SERVICE_PATH,
  Status,
  statusName,
} from "./wire.ts";

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

/** A unary RPC of another service that sessions can send (TF Serving's Predict). */
export interface UnaryMethod {
  /** "/package.Service/Method". */
  path: string;
  /** Output tensors of a response message (when the caller decodes outputs). */
  decode(message: Uint8Array): Tensor[];
}

/** A request encoded once: the length-prefixed gRPC message, and how to send and read it. */
class PreparedGrpcRequest implements PreparedRequest {
  readonly byteLength: number;
  readonly decoupled: boolean;
  /** Header block of the unary call. */
  readonly block: Uint8Array;
  readonly decode: (message: Uint8Array) => Tensor[];

  constructor(
    readonly framed: Uint8Array,
    options: {
      decoupled: boolean;
      block: Uint8Array;
      decode: (message: Uint8Array) => Tensor[];
    },
  ) {
    this.byteLength = framed.length;
    this.decoupled = options.decoupled;
    this.block = options.block;
    this.decode = options.decode;
  }
}

/** One HTTP/2 connection and the sessions assigned to it. */
class Connection {
  users = 0;
  session: Http2Session | undefined;
  readonly ready: Promise<Http2Session>;
  #pumping: Promise<void> | undefined;

  constructor(endpoint: Endpoint, onClose: (connection: Connection) => void) {
    this.ready = (async () => {
      const conn = await connect(endpoint);
      const session = new Http2Session(connTransport(conn), {
        role: "client",
        onClose: () => onClose(this),
      });
      this.session = session;
      this.#pumping = pump(conn, session);
      return session;
    })();
    // A failed connect is reported to whoever awaits `ready`; this keeps it from being unhandled.
    this.ready.catch(() => onClose(this));
  }

  get usable(): boolean {
    return this.session === undefined || this.session.usable;
  }

  async close(): Promise<void> {
    try {
      (await this.ready).close();
    } catch {
      // Never connected.
    }
    await this.#pumping;
  }
}

function parseStatus(fields: readonly string[], state: CallState): void {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === "grpc-status") state.status = Number(fields[i + 1]);
    else if (name === "grpc-message") state.message = fields[i + 1];
    else if (name === ":status") state.httpStatus = Number(fields[i + 1]);
    else if (name === "grpc-encoding") state.encoding = fields[i + 1];
  }
}

interface CallState {
  httpStatus: number;
  status: number;
  message: string;
  encoding: string;
}

function callError(state: CallState): InferError {
  if (state.status === -1) {
    return new InferError(
      state.httpStatus !== 200 && state.httpStatus !== 0
        ? `Server answered HTTP ${state.httpStatus} instead of a gRPC response`
        : "Server ended the call without a gRPC status",
      Status.UNKNOWN,
    );
  }
  const message = oneLine(decodeGrpcMessage(state.message));
  return new InferError(
    `Server returned ${statusName(state.status)}: ${message || "no message"}`,
    state.status,
  );
}

function resetState(state: CallState): void {
  state.httpStatus = 0;
  state.status = -1;
  state.message = "";
  state.encoding = "identity";
}

function newCallState(): CallState {
  return { httpStatus: 0, status: -1, message: "", encoding: "identity" };
}

/** Output tensors of a ModelInferResponse message. */
function outputsOf(response: Fields): Tensor[] {
  const raw = response.raw_output_contents as Uint8Array[];
  return (response.outputs as Fields[]).map((output, i) => {
    const datatype = String(output.datatype);
    if (!isDatatype(datatype)) {
      throw new ProtocolError(`Unsupported datatype "${datatype}" of output "${output.name}"`);
    }
    return {
      name: output.name,
      datatype,
      shape: (output.shape as number[]).map(Number),
      data: raw.length > 0
        ? (raw[i] ?? new Uint8Array(0)).slice()
        : contentsToBytes(datatype, output.contents),
    };
  });
}

/** InferParameters of a tensor's place in shared memory. */
function sharedParameters(ref: SharedMemoryRef): Fields {
  const parameters: Fields = {};
  for (const [key, value] of Object.entries(refParameters(ref))) {
    parameters[key] = toInferParameter(value);
  }
  return parameters;
}

/** `outputs` with the data of those in shared memory read from their slots. */
function withSharedOutputs(outputs: Tensor[], shared: SharedOutputReader): Tensor[] {
  for (const output of outputs) output.data = shared(output) ?? output.data;
  return outputs;
}

/** Output tensors of an encoded ModelInferResponse. */
function decodeInferResponse(message: Uint8Array): Tensor[] {
  return outputsOf(decodeMessage(Messages.ModelInferResponse, message));
}

/** The error a stream reset or connection loss means for a call. */
function lossError(error: Error, address: string): Error {
  if (error instanceof StreamResetError && !error.retryable) {
    return new InferError(error.message, Status.CANCELLED);
  }
  return new ConnectionError(
    `Connection to "${address}" failed: ${describeError(error)}`,
    address,
    { cause: error },
  );
}

/** Shared machinery of both session kinds: connection slot, sending, deadline, settling. */
abstract class SessionBase implements InferSession, StreamHandler {
  protected readonly client: GrpcClient;
  protected connection: Connection | undefined;
  /** The HTTP/2 stream of the call in flight (unary) or of the open ModelStreamInfer. */
  protected stream: Http2Stream | undefined;
  protected timing: RequestTiming | undefined;
  protected decode = false;
  /** Output tensors of a response message of the request in flight. */
  protected decodeResponse: (message: Uint8Array) => Tensor[] = decodeInferResponse;
  protected onResponse: (() => void) | undefined;
  protected readonly state = newCallState();
  protected readonly reader = new MessageReader((message, compressed) =>
    this.onMessage(message, compressed)
  );
  #resolve: ((value: OutputTensors | undefined) => void) | undefined;
  #reject: ((error: Error) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onTimeout = (): void => this.timedOut();

  constructor(client: GrpcClient) {
    this.client = client;
  }

  async infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    this.check(request);
    const session = await this.session();
    const done = this.begin(timing, options);
    this.decodeResponse = request.decode;
    this.startCall(request);
    timing.start = performance.now();
    try {
      this.send(session, request);
    } catch (error) {
      this.fail(lossError(error as Error, this.client.address));
      return done;
    }
    timing.sendEnd = performance.now();
    return done;
  }

  /** Resets the per-request state before `request` is sent. */
  protected abstract startCall(request: PreparedGrpcRequest): void;

  /** Writes `request` to its stream; throws what the HTTP/2 session throws. */
  protected abstract send(session: Http2Session, request: PreparedGrpcRequest): void;

  /** One gRPC message of the stream, as the reader delimits it. */
  protected abstract onMessage(message: Uint8Array, compressed: boolean): void;

  abstract headers(stream: Http2Stream, fields: readonly string[], endStream: boolean): void;

  abstract data(stream: Http2Stream, data: Uint8Array, endStream: boolean): void;

  close(): void {
    this.abort(new ConnectionError("The session was closed", this.client.address));
    if (this.connection !== undefined) this.client.release(this.connection);
    this.connection = undefined;
  }

  /** A live session of this session's connection, reconnecting after a loss. */
  protected async session(): Promise<Http2Session> {
    let connection = this.connection;
    if (connection !== undefined && !connection.usable) {
      this.client.release(connection);
      connection = undefined;
    }
    connection ??= this.client.assign();
    this.connection = connection;
    try {
      return await connection.ready;
    } catch (error) {
      this.client.release(connection);
      this.connection = undefined;
      throw error;
    }
  }

  protected begin(
    timing: RequestTiming,
    options: InferOptions | undefined,
  ): Promise<OutputTensors | undefined> {
    this.timing = timing;
    this.decode = options?.decodeOutputs === true;
    this.onResponse = options?.onResponse;
    const { promise, resolve, reject } = Promise.withResolvers<OutputTensors | undefined>();
    this.#resolve = resolve;
    this.#reject = reject;
    const timeoutMs = this.client.requestTimeoutMs;
    if (timeoutMs !== undefined) this.#timer = setTimeout(this.#onTimeout, timeoutMs);
    return promise;
  }

  protected get busy(): boolean {
    return this.#resolve !== undefined;
  }

  protected settle(outputs: OutputTensors | undefined): void {
    const resolve = this.#resolve;
    this.#clear();
    resolve?.(outputs);
  }

  /** Settles the call in flight with the outputs of its last response message, when asked. */
  protected complete(message: Uint8Array | undefined): void {
    let outputs: Tensor[] | undefined;
    if (this.decode) {
      try {
        outputs = message === undefined ? [] : this.decodeResponse(message);
      } catch (error) {
        this.fail(error as Error);
        return;
      }
    }
    this.timing!.end = performance.now();
    this.settle(outputs);
  }

  protected fail(error: Error): void {
    const reject = this.#reject;
    if (reject === undefined) return;
    const timing = this.timing!;
    timing.end = performance.now();
    this.#clear();
    reject(error);
  }

  /** A request this session can send, and none in flight. */
  protected check(request: PreparedRequest): asserts request is PreparedGrpcRequest {
    if (!(request instanceof PreparedGrpcRequest)) {
      throw new TypeError("The request was not prepared by a gRPC client");
    }
    if (this.busy) throw new TypeError("A request is already in flight on this session");
  }

  reset(_stream: Http2Stream, error: Error): void {
    this.stream = undefined;
    this.fail(lossError(error, this.client.address));
  }

  /**
   * Resets the stream and fails the call in flight: later messages of an
   * abandoned request must not be taken for the next one's.
   */
  protected abort(error: Error): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined) this.connection?.session?.resetStream(stream);
    this.fail(error);
  }

  /** The deadline passed. */
  protected timedOut(): void {
    this.abort(this.timeoutError());
  }

  protected timeoutError(): TimeoutError {
    const ms = this.client.requestTimeoutMs ?? 0;
    return new TimeoutError(`Request to "${this.client.address}" timed out after ${ms} ms`, ms);
  }

  #clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#resolve = undefined;
    this.#reject = undefined;
  }
}

/** Unary ModelInfer: one HTTP/2 stream per request. */
class UnarySession extends SessionBase {
  #response: Uint8Array | undefined;

  protected startCall(): void {
    resetState(this.state);
    this.reader.reset();
    this.#response = undefined;
  }

  protected send(session: Http2Session, request: PreparedGrpcRequest): void {
    this.stream = session.request(this, request.block, false);
    session.sendData(this.stream, request.framed, true);
  }

  headers(_stream: Http2Stream, fields: readonly string[], endStream: boolean): void {
    parseStatus(fields, this.state);
    if (endStream) this.#finish();
  }

  data(_stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    if (this.decode) {
      try {
        this.reader.push(data);
      } catch (error) {
        this.abort(error as Error);
        return;
      }
    }
    if (endStream) this.#finish();
  }

  protected onMessage(message: Uint8Array, compressed: boolean): void {
    this.#response = compressed ? decompress(this.state.encoding, message) : message.slice();
  }

  #finish(): void {
    this.stream = undefined;
    const timing = this.timing!;
    const now = performance.now();
    timing.recvStart = now;
    timing.firstResponse = now;
    timing.responses = 1;
    const state = this.state;
    if (state.status !== Status.OK) {
      this.fail(callError(state));
      return;
    }
    this.onResponse?.();
    if (!this.decode) {
      timing.end = now;
      this.settle(undefined);
      return;
    }
    if (this.#response === undefined) {
      this.fail(new ProtocolError("The server sent no response message"));
      return;
    }
    this.complete(this.#response);
  }
}

/** ModelStreamInfer: one long-lived stream; requests go one at a time, responses are counted. */
class StreamSession extends SessionBase {
  readonly #walker = new Walker();
  readonly #response: StreamResponse = {
    error: "",
    hasOutputs: false,
    final: undefined,
    infer: undefined,
  };
  #decoupled = false;
  #last: Uint8Array | undefined;

  protected startCall(request: PreparedGrpcRequest): void {
    this.#decoupled = request.decoupled;
    this.#last = undefined;
    this.timing!.responses = 0;
  }

  protected send(session: Http2Session, request: PreparedGrpcRequest): void {
    if (this.stream === undefined) {
      resetState(this.state);
      this.reader.reset();
      this.stream = session.request(this, this.client.streamBlock, false);
    }
    session.sendData(this.stream, request.framed, false);
  }

  headers(_stream: Http2Stream, fields: readonly string[], endStream: boolean): void {
    parseStatus(fields, this.state);
    if (!endStream) return;
    this.stream = undefined;
    const state = this.state;
    this.fail(
      state.status === Status.OK
        ? new ProtocolError("The server ended the stream with a request in flight")
        : callError(state),
    );
  }

  data(_stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    try {
      this.reader.push(data);
    } catch (error) {
      this.abort(error as Error);
      return;
    }
    if (endStream) {
      this.stream = undefined;
      this.fail(new ProtocolError("The server ended the stream without a status"));
    }
  }

  protected onMessage(message: Uint8Array, compressed: boolean): void {
    const now = performance.now();
    const timing = this.timing;
    if (timing === undefined || !this.busy) {
      throw new GrpcFramingError("The server sent a response with no request in flight");
    }
    const body = compressed ? decompress(this.state.encoding, message) : message;
    const response = this.#response;
    readStreamResponse(body, this.#walker, response);
    if (response.error !== "") {
      timing.recvStart = now;
      this.fail(
        new InferError(`Server returned an error: ${oneLine(response.error)}`, Status.UNKNOWN),
      );
      return;
    }
    if (response.hasOutputs || !this.#decoupled) {
      if (timing.responses === 0) timing.firstResponse = now;
      timing.responses++;
      if (this.decode && response.infer !== undefined) this.#last = response.infer.slice();
      this.onResponse?.();
    }
    const final = response.final ?? !this.#decoupled;
    if (!final) return;
    timing.recvStart = now;
    if (timing.responses === 0) timing.firstResponse = now;
    this.complete(this.#last);
  }
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
  implements InferenceClient, StatisticsSource, SharedMemoryControl, TraceControl {
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
      block: this.unaryBlock,
      decode: shared === undefined
        ? decodeInferResponse
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
