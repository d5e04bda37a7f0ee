/**
 * The contract between load generation and protocol clients.
 *
 * A protocol client is a small interface; optional abilities (server
 * statistics, streaming) are separate interfaces that a client may also
 * implement, so callers test for an ability instead of inheriting stubs.
 */
import type { Datatype } from "../input/datatype.ts";

/** One tensor: row-major little-endian bytes; BYTES elements are 4-byte LE length + bytes. */
export interface Tensor {
  name: string;
  datatype: Datatype;
  /** Full shape including the batch dimension when the model batches. */
  shape: number[];
  data: Uint8Array;
}

/**
 * A parameter whose wire type its JS value does not tell (gRPC has int64,
 * uint64 and double parameters; a JS number can be any of them).
 */
export interface TypedParameter {
  type: "int64" | "uint64" | "double";
  value: number | bigint;
}

export type ParameterValue = boolean | number | bigint | string | TypedParameter;

export interface InferRequest {
  inputs: Tensor[];
  /** Outputs to request; empty means all outputs of the model. */
  outputs: string[];
  /** Request-level parameters (sequence_id, custom --request-parameter values, ...). */
  parameters?: Record<string, ParameterValue>;
}

export interface TensorSpec {
  name: string;
  datatype: Datatype;
  /** Dimensions without the batch dimension; -1 marks a variable dimension. */
  dims: number[];
}

/** What the load generator needs to know about a model, merged from metadata and config. */
export interface ModelInfo {
  name: string;
  version: string;
  platform: string;
  versions: string[];
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  /** 0 when the model does not batch. */
  maxBatchSize: number;
  decoupled: boolean;
  sequence: boolean;
  /** Names of composing models for ensembles, from ensemble_scheduling.step. */
  composingModels: string[];
  responseCache: boolean;
}

export interface ServerInfo {
  name: string;
  version: string;
  extensions: string[];
}

/** Cumulative duration statistic as in the statistics extension. */
export interface StatDuration {
  count: number;
  ns: number;
}

export interface ModelStatistics {
  name: string;
  version: string;
  inferenceCount: number;
  executionCount: number;
  success: StatDuration;
  fail: StatDuration;
  queue: StatDuration;
  computeInput: StatDuration;
  computeInfer: StatDuration;
  computeOutput: StatDuration;
  cacheHit: StatDuration;
  cacheMiss: StatDuration;
}

/**
 * Per-request timing filled in by a session. All values are performance.now()
 * milliseconds. The load generator allocates one per slot and reuses it, so the
 * hot path allocates nothing for timing.
 */
export interface RequestTiming {
  /** Before encoding/writing the request. */
  start: number;
  /** The request is fully written. */
  sendEnd: number;
  /** First byte of the (last) response arrived. */
  recvStart: number;
  /** The (last) response is fully read and parsed. */
  end: number;
  /** Responses received for this request (1 for unary). */
  responses: number;
  /**
   * The first response was fully read (decoupled models send several). Clients
   * that always answer with one response leave it unset: it is then `end`.
   */
  firstResponse?: number;
}

/** A decoded output tensor (only produced when the caller asks for outputs). */
export type OutputTensors = Tensor[];

/** A request encoded once and sent many times; opaque to the load generator. */
export interface PreparedRequest {
  readonly byteLength: number;
}

export interface InferOptions {
  /** Decode and return outputs (validation, export); otherwise the body is only consumed. */
  decodeOutputs?: boolean;
  /** Called as each response arrives (decoupled models send several per request). */
  onResponse?: () => void;
}

/** One connection's worth of in-flight capacity: one request at a time. */
export interface InferSession {
  infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined>;
  close(): void;
}

export interface InferenceClient {
  readonly protocol: "http" | "grpc" | "c_api";
  serverInfo(): Promise<ServerInfo>;
  modelInfo(model: string, version: string): Promise<ModelInfo>;
  /** Encodes a request once for repeated sending. */
  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest;
  /** Opens one keep-alive connection (or stream) for one concurrent slot. */
  openSession(): Promise<InferSession>;
  close(): Promise<void>;
}

/** Optional ability: the statistics extension. */
export interface StatisticsSource {
  modelStatistics(model: string, version: string): Promise<ModelStatistics[]>;
}

export function hasStatistics(
  client: InferenceClient,
): client is InferenceClient & StatisticsSource {
  return typeof (client as Partial<StatisticsSource>).modelStatistics === "function";
}

/**
 * Trace settings as Triton's trace extension names them ("trace_level",
 * "trace_rate", ...). Every value is a list of strings, as gRPC carries them;
 * most settings have one.
 */
export type TraceSettings = Record<string, string[]>;

/** Optional ability: Triton's trace extension. */
export interface TraceControl {
  /** Updates the server's global trace settings; resolves to all the settings then in effect. */
  updateTraceSettings(settings: TraceSettings): Promise<TraceSettings>;
}

export function hasTraceControl(
  client: InferenceClient,
): client is InferenceClient & TraceControl {
  return typeof (client as Partial<TraceControl>).updateTraceSettings === "function";
}
