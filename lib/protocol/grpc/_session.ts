/**
 * The gRPC client's sessions: one request at a time over a shared HTTP/2
 * connection, unary (ModelInfer or another service's method) or on one
 * ModelStreamInfer stream (decoupled models: 0..N responses per request).
 */
import { connect, describeError, type Endpoint } from "../http1/connect.ts";
import { ConnectionError, InferError, oneLine, ProtocolError, TimeoutError } from "../errors.ts";
import {
  type InferOptions,
  type InferSession,
  type OutputTensors,
  type PreparedRequest,
  recordedOutputs,
} from "../types.ts";
import type { Tensor } from "../../types/tensor.ts";
import type { RequestTiming } from "../../types/timing.ts";
import { isDatatype } from "../../types/datatype.ts";
import { Http2Session, type Http2Stream, type StreamHandler, StreamResetError } from "./http2.ts";
import {
  contentsToBytes,
  decodeMessage,
  type Fields,
  Messages,
  toInferParameter,
} from "./messages.ts";
import { connTransport, pump } from "./transport.ts";
import { readStreamResponse, type StreamResponse, Walker } from "./_stream_response.ts";
import { refParameters, type SharedMemoryRef, type SharedOutputReader } from "../shm.ts";
import {
  decodeGrpcMessage,
  decompress,
  GrpcFramingError,
  MessageReader,
  Status,
  statusName,
} from "./wire.ts";

/** What sessions need of the client that opens them (client.ts GrpcClient). */
export interface SessionHost {
  /** "host:port", as used in messages. */
  readonly address: string;
  readonly requestTimeoutMs: number | undefined;
  /** The header block of ModelStreamInfer. */
  readonly streamBlock: Uint8Array;
  /** The connection with room for one more session. */
  assign(): Connection;
  release(connection: Connection): void;
}

/** A unary RPC of another service that sessions can send (TF Serving's Predict). */
export interface UnaryMethod {
  /** "/package.Service/Method". */
  path: string;
  /** Output tensors of a response message (when the caller decodes outputs). */
  decode(message: Uint8Array): Tensor[];
}

/** A request encoded once: the length-prefixed gRPC message, and how to send and read it. */
export class PreparedGrpcRequest implements PreparedRequest {
  readonly byteLength: number;
  readonly decoupled: boolean;
  /** Header block of the unary call. */
  readonly block: Uint8Array;
  readonly decode: (message: Uint8Array) => OutputTensors;
  /** The outputs asked for, which a decoupled model's empty final response is exported with. */
  readonly outputNames: readonly string[];

  constructor(
    readonly framed: Uint8Array,
    options: {
      decoupled: boolean;
      outputNames?: readonly string[];
      block: Uint8Array;
      decode: (message: Uint8Array) => OutputTensors;
    },
  ) {
    this.byteLength = framed.length;
    this.decoupled = options.decoupled;
    this.outputNames = options.outputNames ?? [];
    this.block = options.block;
    this.decode = options.decode;
  }
}

/** One HTTP/2 connection and the sessions assigned to it. */
export class Connection {
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

export function parseStatus(fields: readonly string[], state: CallState): void {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === "grpc-status") state.status = Number(fields[i + 1]);
    else if (name === "grpc-message") state.message = fields[i + 1];
    else if (name === ":status") state.httpStatus = Number(fields[i + 1]);
    else if (name === "grpc-encoding") state.encoding = fields[i + 1];
  }
}

export interface CallState {
  httpStatus: number;
  status: number;
  message: string;
  encoding: string;
}

export function callError(state: CallState): InferError {
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

export function resetState(state: CallState): void {
  state.httpStatus = 0;
  state.status = -1;
  state.message = "";
  state.encoding = "identity";
}

export function newCallState(): CallState {
  return { httpStatus: 0, status: -1, message: "", encoding: "identity" };
}

/** Output tensors of a ModelInferResponse message. */
export function outputsOf(response: Fields): Tensor[] {
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
export function sharedParameters(ref: SharedMemoryRef): Fields {
  const parameters: Fields = {};
  for (const [key, value] of Object.entries(refParameters(ref))) {
    parameters[key] = toInferParameter(value);
  }
  return parameters;
}

/** `outputs` with the data of those in shared memory read from their slots. */
export function withSharedOutputs(outputs: Tensor[], shared: SharedOutputReader): Tensor[] {
  for (const output of outputs) output.data = shared(output) ?? output.data;
  return outputs;
}

/** Output tensors of an encoded ModelInferResponse. */
export function decodeInferResponse(message: Uint8Array): Tensor[] {
  return outputsOf(decodeMessage(Messages.ModelInferResponse, message));
}

/** The error a stream reset or connection loss means for a call. */
export function lossError(error: Error, address: string): Error {
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
export abstract class SessionBase implements InferSession, StreamHandler {
  protected readonly client: SessionHost;
  protected connection: Connection | undefined;
  /** The HTTP/2 stream of the call in flight (unary) or of the open ModelStreamInfer. */
  protected stream: Http2Stream | undefined;
  protected timing: RequestTiming | undefined;
  protected decode = false;
  /** Output tensors of a response message of the request in flight. */
  protected decodeResponse: (message: Uint8Array) => OutputTensors = decodeInferResponse;
  protected onResponse: (() => void) | undefined;
  protected onOutputs: InferOptions["onOutputs"];
  protected readonly state = newCallState();
  protected readonly reader = new MessageReader((message, compressed, truncated) =>
    this.onMessage(message, compressed, truncated)
  );
  #resolve: ((value: OutputTensors | undefined) => void) | undefined;
  #reject: ((error: Error) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onTimeout = (): void => this.timedOut();

  constructor(client: SessionHost) {
    this.client = client;
  }

  infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    this.check(request);
    // A connection already up sends at once: no promise and no turn of the event loop to wait.
    const ready = this.connection?.session;
    if (ready !== undefined && ready.usable) return this.#call(ready, request, timing, options);
    return this.session().then((session) => this.#call(session, request, timing, options));
  }

  #call(
    session: Http2Session,
    request: PreparedGrpcRequest,
    timing: RequestTiming,
    options: InferOptions | undefined,
  ): Promise<OutputTensors | undefined> {
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

  /** One gRPC message of the stream, as the reader delimits it (its head only when truncated). */
  protected abstract onMessage(message: Uint8Array, compressed: boolean, truncated: boolean): void;

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
    this.onOutputs = this.decode ? options?.onOutputs : undefined;
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
    let outputs: OutputTensors | undefined;
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
export class UnarySession extends SessionBase {
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

/**
 * What a streamed response is read for when its outputs are not wanted: the
 * error message, the parameters (triton_final_response) and the output
 * descriptions, which servers write before the tensors' bytes.
 */
const STREAM_HEAD_BYTES = 64 * 1024;

/** ModelStreamInfer: one long-lived stream; requests go one at a time, responses are counted. */
export class StreamSession extends SessionBase {
  readonly #walker = new Walker();
  readonly #response: StreamResponse = {
    error: "",
    hasOutputs: false,
    final: undefined,
    infer: undefined,
  };
  #decoupled = false;
  #outputNames: readonly string[] = [];
  #last: Uint8Array | undefined;

  protected startCall(request: PreparedGrpcRequest): void {
    this.#decoupled = request.decoupled;
    this.#outputNames = request.outputNames;
    this.#last = undefined;
    this.timing!.responses = 0;
    // Responses are only counted unless their outputs are wanted: a large one is read for its
    // head (error, final flag) and its tensors dropped as they arrive, not copied.
    this.reader.headLimit = this.decode ? Infinity : STREAM_HEAD_BYTES;
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

  protected onMessage(message: Uint8Array, compressed: boolean, truncated: boolean): void {
    const now = performance.now();
    const timing = this.timing;
    if (timing === undefined || !this.busy) {
      throw new GrpcFramingError("The server sent a response with no request in flight");
    }
    const body = compressed ? decompress(this.state.encoding, message) : message;
    const response = this.#response;
    readStreamResponse(body, this.#walker, response, truncated);
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
      if (this.decode && response.infer !== undefined) this.#last = response.infer;
      this.onResponse?.();
      if (this.onOutputs !== undefined && response.infer !== undefined) {
        try {
          // A copy: decoded tensors may view the message's bytes, which the reader reuses.
          const outputs = this.decodeResponse(response.infer.slice());
          this.onOutputs(recordedOutputs(this.#outputNames, outputs), now);
        } catch (error) {
          this.fail(error as Error);
          return;
        }
      }
    }
    const final = response.final ?? !this.#decoupled;
    if (!response.hasOutputs && this.#decoupled && this.onOutputs !== undefined) {
      // perf_analyzer keeps empty responses (the final one above all): each output asked for,
      // with no data.
      this.onOutputs(recordedOutputs(this.#outputNames), now);
    }
    if (!final) {
      // Kept past this message, whose bytes the reader may reuse: a copy.
      if (this.#last !== undefined && this.#last === response.infer) {
        this.#last = this.#last.slice();
      }
      return;
    }
    timing.recvStart = now;
    if (timing.responses === 0) timing.firstResponse = now;
    this.complete(this.#last);
  }
}
