/**
 * The contract between load generation and protocol clients.
 *
 * A protocol client is a small interface; optional abilities (server
 * statistics, streaming) are separate interfaces that a client may also
 * implement, so callers test for an ability instead of inheriting stubs.
 */
import type { InferRequest, Tensor } from "../types/tensor.ts";
import type { RequestTiming } from "../types/timing.ts";
import type { ModelInfo, ModelStatistics, ServerInfo } from "../types/model.ts";

/**
 * The decoded output tensors of a response (only produced when the caller
 * asks for outputs). Read only: responses with the same bytes may share them.
 */
export type OutputTensors = readonly Readonly<Tensor>[];

/** A request encoded once and sent many times; opaque to the load generator. */
export interface PreparedRequest {
  readonly byteLength: number;
}

export interface InferOptions {
  /** Decode and return outputs (validation, export); otherwise the body is only consumed. */
  decodeOutputs?: boolean;
  /** Called as each response arrives (decoupled models send several per request). */
  onResponse?: () => void;
  /**
   * The profile export: called, when outputs are decoded, with what each
   * message of the answer carried as it arrived at `atMs` (performance.now()),
   * as perf_analyzer records responses: each piece of an OpenAI stream that
   * curl would hand over, as its bytes; every response of a decoupled stream,
   * empty ones included. Clients that do not call it answer with the outputs
   * they return.
   */
  onOutputs?: (outputs: OutputTensors, atMs: number) => void;
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

/**
 * A response's `outputs` as perf_analyzer records them: each output asked
 * for (`names`) that the response lacks is there too, without data (the
 * export writes it as ""); a response without outputs holds only those.
 */
export function recordedOutputs(
  names: readonly string[],
  outputs: OutputTensors = [],
): OutputTensors {
  if (outputs.length >= names.length) return outputs;
  const missing = names.filter((name) => !outputs.some((output) => output.name === name));
  const empty = missing.map((name): Tensor => ({
    name,
    datatype: "BYTES",
    shape: [0],
    data: new Uint8Array(0),
  }));
  return [...outputs, ...empty];
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
