/**
 * KServe v2 / Triton gRPC front end of the reference server: health,
 * metadata, model configuration, statistics, system shared memory, trace
 * settings, unary ModelInfer and the ModelStreamInfer bidirectional stream,
 * with decoupled models answering a request with several responses.
 *
 * Runs on the project's own HTTP/2 layer (lib/protocol/grpc/http2.ts): under
 * Deno 2.9 the node:http2 server, and so @grpc/grpc-js, aborted the process
 * when loaded clients disconnected. Plain TCP and TLS use Deno's listeners;
 * mutual TLS uses node:tls, the one Deno API that requests client certificates.
 */
import type { Tensor } from "../protocol/types.ts";
import { isDatatype } from "../input/datatype.ts";
import {
  headerBlock,
  Http2Session,
  type Http2Session as Session,
  type Http2Stream,
  type StreamHandler,
  type Transport,
} from "../protocol/grpc/http2.ts";
import {
  contentsToBytes,
  DATA_TYPES,
  decodeMessage,
  encodeMessage,
  type Fields,
  Messages,
  type MessageType,
  parametersOf,
  toInferParameter,
} from "../protocol/grpc/messages.ts";
import { connTransport, pump, pumpSocket, socketTransport } from "../protocol/grpc/transport.ts";
import {
  compress,
  type Compression,
  decompress,
  encodeGrpcMessage,
  GrpcFramingError,
  MessageReader,
  SERVICE_PATH,
  Status,
} from "../protocol/grpc/wire.ts";
import type { ModelSpec } from "./config.ts";
import { responseParameters } from "./behaviour.ts";
import { ServerError, type ServerErrorCode } from "./errors.ts";
import type { CoreRequest, SimulatedModel } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import { statisticsFields } from "./statistics.ts";
import { type RegionRef, regionRef, SharedMemoryRegistry } from "./shm.ts";
import { KSERVE_EXTENSIONS } from "./kserve_http.ts";
import { TraceSettingsStore } from "./trace.ts";
import { traceSettingsFromGrpc, traceSettingsToGrpc } from "../protocol/trace.ts";
import { TfServingService } from "./tfserving.ts";
import { PREDICTION_SERVICE } from "../protocol/tfserving.ts";

export interface GrpcTlsOptions {
  /** PEM certificate chain and private key of the server. */
  cert: string;
  key: string;
  /** PEM CAs of accepted client certificates; when set, clients must present one (mutual TLS). */
  clientCaCerts?: string[];
}

export interface GrpcServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  tls?: GrpcTlsOptions;
  /**
   * The system shared-memory regions, shared with the other front ends.
   * Default: regions of this front end's own, unregistered when it closes.
   */
  sharedMemory?: SharedMemoryRegistry;
  /** The trace settings, shared with the other front ends. Default: this front end's own. */
  trace?: TraceSettingsStore;
}

/** What arrived on the wire, for tests that check the client's framing (compression). */
export interface WireStats {
  /** Request messages received. */
  messages: number;
  /** Compressed request messages by grpc-encoding. */
  compressed: Record<string, number>;
  /** Custom metadata of the latest call that had any (-H). */
  metadata: Record<string, string>;
}

export interface GrpcServer {
  readonly port: number;
  readonly wire: WireStats;
  /** Fails streams in flight, closes every connection and the listener. */
  close(): Promise<void>;
}

export interface ServerIdentity {
  name: string;
  version: string;
}

const STATUS_OF: Record<ServerErrorCode, number> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  unavailable: Status.UNAVAILABLE,
  internal: Status.INTERNAL,
};

const SUPPORTED_ENCODINGS = new Set(["identity", "gzip", "deflate"]);
/** Request headers that are protocol, not user metadata. */
const STANDARD_HEADERS = new Set(["te", "user-agent", "grpc-timeout", "content-length"]);
const ACCEPT_ENCODING = "identity,deflate,gzip";

function responseHeaders(encoding: Compression): Uint8Array {
  const fields: Array<[string, string]> = [
    [":status", "200"],
    ["content-type", "application/grpc"],
    ["grpc-accept-encoding", ACCEPT_ENCODING],
  ];
  if (encoding !== "none") fields.push(["grpc-encoding", encoding]);
  return headerBlock(fields);
}

const RESPONSE_HEADERS: Record<Compression, Uint8Array> = {
  none: responseHeaders("none"),
  gzip: responseHeaders("gzip"),
  deflate: responseHeaders("deflate"),
};
const TRAILERS_OK = headerBlock([["grpc-status", "0"]]);

/** Trailers-only response: the status without any message. */
function errorBlock(status: number, message: string, withHeaders: boolean): Uint8Array {
  const fields: Array<[string, string]> = withHeaders
    ? [[":status", "200"], ["content-type", "application/grpc"]]
    : [];
  fields.push(["grpc-status", String(status)], ["grpc-message", encodeGrpcMessage(message)]);
  return headerBlock(fields);
}

class GrpcStatusError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function statusOf(error: unknown): GrpcStatusError {
  if (error instanceof GrpcStatusError) return error;
  if (error instanceof ServerError) {
    return new GrpcStatusError(STATUS_OF[error.code], error.message);
  }
  if (error instanceof GrpcFramingError) {
    return new GrpcStatusError(Status.INVALID_ARGUMENT, error.message);
  }
  return new GrpcStatusError(Status.INTERNAL, (error as Error).message);
}

function tensorMetadata(spec: ModelSpec, tensors: ModelSpec["inputs"]): Fields[] {
  return tensors.map((t) => ({
    name: t.name,
    datatype: t.datatype,
    shape: spec.maxBatchSize > 0 ? [-1, ...t.dims] : t.dims,
  }));
}

function dataType(datatype: string): number {
  return DATA_TYPES[`TYPE_${datatype === "BYTES" ? "STRING" : datatype}`];
}

/** Triton's model configuration for one model, as the ModelConfig message. */
function modelConfig(spec: ModelSpec): Fields {
  const config: Fields = {
    name: spec.name,
    platform: spec.platform,
    version_policy: spec.versions.length === 1
      ? { latest: { num_versions: 1 } }
      : { specific: { versions: spec.versions.map(Number) } },
    max_batch_size: spec.maxBatchSize,
    input: spec.inputs.map((t) => ({
      name: t.name,
      data_type: dataType(t.datatype),
      dims: t.dims,
    })),
    output: spec.outputs.map((t) => ({
      name: t.name,
      data_type: dataType(t.datatype),
      dims: t.dims,
    })),
    instance_group: [{ name: spec.name, kind: 1, count: spec.instances }],
    model_transaction_policy: { decoupled: spec.decoupled !== undefined },
  };
  if (spec.dynamicBatching !== undefined) {
    config.dynamic_batching = {
      preferred_batch_size: spec.dynamicBatching.preferredBatchSizes,
      max_queue_delay_microseconds: Math.round(spec.dynamicBatching.maxQueueDelayMs * 1000),
    };
  }
  if (spec.sequence !== undefined) {
    config.sequence_batching = {
      max_sequence_idle_microseconds: Math.round(spec.sequence.maxSequenceIdleMs * 1000),
    };
  }
  return config;
}

function statistics(models: readonly SimulatedModel[]): Uint8Array {
  return encodeMessage(Messages.ModelStatisticsResponse, {
    model_stats: models.map(statisticsFields),
  });
}

/** A decoded ModelInferRequest as the core's request, plus what the response needs. */
interface InferCall {
  model: SimulatedModel;
  core: CoreRequest;
  id: string;
  /** triton_enable_empty_final_response: end a decoupled request with an empty response. */
  emptyFinal: boolean;
  /** Per requested output: where it goes in shared memory, if there. */
  shared: (RegionRef | undefined)[];
}

function varint(value: number): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Uint8Array.from(bytes);
}

/** The id of a request that could not be taken (a malformed one has none). */
function idOf(message: Uint8Array): string {
  try {
    return decodeMessage(Messages.ModelInferRequest, message).id;
  } catch {
    return "";
  }
}

const FINAL = { triton_final_response: { bool_param: true } };
const NOT_FINAL = { triton_final_response: { bool_param: false } };

/** The RPCs, independent of connections. */
class InferenceService {
  /** TF Serving's PredictionService, served beside KServe's. */
  readonly tfserving: TfServingService;
  readonly #repository: ModelRepository;
  readonly #sharedMemory: SharedMemoryRegistry;
  readonly #trace: TraceSettingsStore;
  readonly #serverMetadata: Uint8Array;
  readonly #metadata = new Map<SimulatedModel, Uint8Array>();
  readonly #config = new Map<SimulatedModel, Uint8Array>();
  /** Parameters each model attaches to its responses, as InferParameters. */
  readonly #parameters = new Map<ModelSpec, Fields>();

  constructor(
    repository: ModelRepository,
    options: {
      identity: ServerIdentity;
      sharedMemory: SharedMemoryRegistry;
      trace: TraceSettingsStore;
    },
  ) {
    const { identity } = options;
    this.tfserving = new TfServingService(repository);
    this.#sharedMemory = options.sharedMemory;
    this.#trace = options.trace;
    this.#repository = repository;
    this.#serverMetadata = encodeMessage(Messages.ServerMetadataResponse, {
      ...identity,
      extensions: KSERVE_EXTENSIONS,
    });
    for (const model of repository.models) {
      const spec = model.spec;
      this.#metadata.set(
        model,
        encodeMessage(Messages.ModelMetadataResponse, {
          name: spec.name,
          versions: spec.versions,
          platform: spec.platform,
          inputs: tensorMetadata(spec, spec.inputs),
          outputs: tensorMetadata(spec, spec.outputs),
        }),
      );
      this.#config.set(
        model,
        encodeMessage(Messages.ModelConfigResponse, { config: modelConfig(spec) }),
      );
      const own = responseParameters(spec);
      if (own !== undefined) {
        this.#parameters.set(
          spec,
          Object.fromEntries(Object.entries(own).map(([k, v]) => [k, toInferParameter(v)])),
        );
      }
    }
  }

  /** Answers a unary RPC other than ModelInfer. */
  simple(method: string, message: Uint8Array): Uint8Array {
    const request = (type: MessageType) => decodeMessage(type, message);
    const model = (type: MessageType) => {
      const r = request(type);
      return this.#repository.get(r.name, r.version === "" ? undefined : r.version);
    };
    switch (method) {
      case "ServerLive":
        return encodeMessage(Messages.ServerLiveResponse, { live: true });
      case "ServerReady":
        return encodeMessage(Messages.ServerReadyResponse, { ready: true });
      case "ModelReady":
        // Triton answers NOT_FOUND for an unknown model or version, not "not ready".
        model(Messages.ModelReadyRequest);
        return encodeMessage(Messages.ModelReadyResponse, { ready: true });
      case "ServerMetadata":
        return this.#serverMetadata;
      case "ModelMetadata":
        return this.#metadata.get(model(Messages.ModelMetadataRequest))!;
      case "ModelConfig":
        return this.#config.get(model(Messages.ModelConfigRequest))!;
      case "ModelStatistics": {
        const r = request(Messages.ModelStatisticsRequest);
        return statistics(this.#repository.statisticsOf(r.name, r.version));
      }
      case "SystemSharedMemoryStatus": {
        const r = request(Messages.SystemSharedMemoryStatusRequest);
        const regions: Fields = {};
        for (const region of this.#sharedMemory.status(r.name)) {
          regions[region.name] = {
            name: region.name,
            key: region.key,
            offset: region.offset,
            byte_size: region.byteSize,
          };
        }
        return encodeMessage(Messages.SystemSharedMemoryStatusResponse, { regions });
      }
      case "SystemSharedMemoryRegister": {
        const r = request(Messages.SystemSharedMemoryRegisterRequest);
        this.#sharedMemory.register({
          name: r.name,
          key: r.key,
          offset: Number(r.offset),
          byteSize: Number(r.byte_size),
        });
        return encodeMessage(Messages.SystemSharedMemoryRegisterResponse, {});
      }
      case "SystemSharedMemoryUnregister":
        this.#sharedMemory.unregister(request(Messages.SystemSharedMemoryUnregisterRequest).name);
        return encodeMessage(Messages.SystemSharedMemoryUnregisterResponse, {});
      case "TraceSetting": {
        const r = request(Messages.TraceSettingRequest);
        if (r.model_name !== "") {
          throw new GrpcStatusError(
            Status.UNIMPLEMENTED,
            "Per-model trace settings are not supported: this server keeps global settings only",
          );
        }
        // An empty value list restores the setting's default, as JSON null does over HTTP.
        const settings = this.#trace.update(traceSettingsFromGrpc(r.settings));
        return encodeMessage(Messages.TraceSettingResponse, {
          settings: traceSettingsToGrpc(settings),
        });
      }
      default:
        throw new GrpcStatusError(Status.UNIMPLEMENTED, `Method not found: ${method}`);
    }
  }

  /** Decodes a ModelInferRequest into the core's terms; throws ServerError or GrpcStatusError. */
  inferCall(message: Uint8Array, arrival: number): InferCall {
    const request = decodeMessage(Messages.ModelInferRequest, message);
    const model = this.#repository.get(
      request.model_name,
      request.model_version === "" ? undefined : request.model_version,
    );
    const raw = request.raw_input_contents as Uint8Array[];
    // raw_input_contents holds the inputs that are not in shared memory, in order.
    let rawIndex = 0;
    const inputs = (request.inputs as Fields[]).map((input): Tensor => {
      const datatype = String(input.datatype);
      if (!isDatatype(datatype)) {
        throw new ServerError(
          `invalid datatype '${datatype}' for input '${input.name}'`,
          "invalid_argument",
        );
      }
      const what = `input '${input.name}'`;
      const ref = regionRef(parametersOf(input.parameters), what);
      // Triton's checks: exactly one place for the data.
      const where = `'${input.name}' for model '${model.name}'`;
      if (ref === undefined && raw.length > 0 && input.contents != null) {
        throw new ServerError(
          `contents field must not be specified when using raw_input_contents for ${where}`,
          "invalid_argument",
        );
      }
      if (ref === undefined && raw.length === 0 && input.contents == null) {
        throw new ServerError(
          `unable to find data for input tensor ${where} in request.`,
          "invalid_argument",
        );
      }
      return {
        name: input.name,
        datatype,
        shape: (input.shape as number[]).map(Number),
        data: ref !== undefined
          ? this.#sharedMemory.read(ref, what)
          : raw.length > 0
          ? raw[rawIndex++] ?? new Uint8Array(0)
          : contentsToBytes(datatype, input.contents),
      };
    });
    if (raw.length > 0 && raw.length !== rawIndex) {
      throw new ServerError(
        `expected ${rawIndex} raw_input_contents, got ${raw.length}`,
        "invalid_argument",
      );
    }
    const requested = request.outputs as Fields[];
    const shared = requested.map((o) =>
      regionRef(parametersOf(o.parameters), `output '${o.name}'`)
    );
    // Fails before inference when a region is unknown, as Triton does.
    for (const ref of shared) if (ref !== undefined) this.#sharedMemory.status(ref.region);
    const parameters = parametersOf(request.parameters);
    const core: CoreRequest = {
      id: request.id,
      inputs,
      outputs: requested.map((o) => o.name as string),
      arrival,
    };
    const sequenceId = parameters.sequence_id;
    if (sequenceId !== undefined) {
      if (typeof sequenceId !== "string" && typeof sequenceId !== "number") {
        throw new ServerError(
          "Request parameter 'sequence_id' must be an unsigned integer or a string",
          "invalid_argument",
        );
      }
      core.sequence = {
        id: sequenceId,
        start: parameters.sequence_start === true,
        end: parameters.sequence_end === true,
      };
    }
    return {
      model,
      core,
      id: request.id,
      emptyFinal: parameters.triton_enable_empty_final_response === true,
      shared,
    };
  }

  /**
   * The model's answer, with the outputs requested into shared memory written
   * there; a model that fails synchronously (no compute time) rejects too.
   */
  run(call: InferCall): Promise<Tensor[]> {
    try {
      return call.model.infer(call.core).then((outputs) => {
        outputs.forEach((t, i) => {
          const ref = call.shared[i];
          if (ref !== undefined) this.#sharedMemory.write(ref, t.data, `output '${t.name}'`);
        });
        return outputs;
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The response message; outputs in shared memory carry no contents. The
   * model's own response parameters go with its outputs (not with an empty
   * final response); `flags` add the stream's.
   */
  inferResponse(call: InferCall, outputs: Tensor[], flags?: Fields): Uint8Array {
    const own = outputs.length > 0 ? this.#parameters.get(call.model.spec) : undefined;
    const parameters = own === undefined ? flags : { ...own, ...flags };
    return encodeMessage(Messages.ModelInferResponse, {
      model_name: call.model.name,
      model_version: call.model.version,
      id: call.id,
      outputs: outputs.map((t, i) => {
        const ref = call.shared[i];
        if (ref === undefined) return { name: t.name, datatype: t.datatype, shape: t.shape };
        return {
          name: t.name,
          datatype: t.datatype,
          shape: t.shape,
          parameters: {
            shared_memory_region: { string_param: ref.region },
            shared_memory_byte_size: { int64_param: t.data.byteLength },
          },
        };
      }),
      // One entry per output keeps the indexes aligned; shared ones stay empty.
      raw_output_contents: outputs.map((t, i) =>
        call.shared[i] === undefined ? t.data : new Uint8Array(0)
      ),
      ...(parameters === undefined ? {} : { parameters }),
    });
  }

  /** A stream response: `infer`, or an error naming the request's id as Triton's do. */
  streamResponse(
    infer: Uint8Array | undefined,
    error?: { message: string; id: string },
  ): Uint8Array {
    if (error !== undefined) {
      return encodeMessage(Messages.ModelStreamInferResponse, {
        error_message: error.message,
        infer_response: { id: error.id },
      });
    }
    // ModelStreamInferResponse.infer_response (field 2, length-delimited) around the encoded response.
    const length = varint(infer!.length);
    const out = new Uint8Array(1 + length.length + infer!.length);
    out[0] = 0x12;
    out.set(length, 1);
    out.set(infer!, 1 + length.length);
    return out;
  }
}

const UNARY_METHODS = new Set([
  "ServerLive",
  "ServerReady",
  "ModelReady",
  "ServerMetadata",
  "ModelMetadata",
  "ModelConfig",
  "ModelStatistics",
  "ModelInfer",
  "SystemSharedMemoryStatus",
  "SystemSharedMemoryRegister",
  "SystemSharedMemoryUnregister",
  "TraceSetting",
]);
const STREAM_METHOD = "ModelStreamInfer";

/** One RPC on one HTTP/2 stream. */
class ServerCall implements StreamHandler {
  readonly #session: Session;
  readonly #service: InferenceService;
  readonly #wire: WireStats;
  readonly #reader: MessageReader;
  readonly #arrival = performance.now();
  #method = "";
  #encoding = "identity";
  #responseEncoding: Compression = "none";
  #stream: Http2Stream | undefined;
  #unary: Uint8Array | undefined;
  #headersSent = false;
  #done = false;
  #clientEnded = false;
  #pending = 0;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(session: Session, service: InferenceService, wire: WireStats) {
    this.#session = session;
    this.#service = service;
    this.#wire = wire;
    this.#reader = new MessageReader((message, compressed) => this.#message(message, compressed));
  }

  headers(stream: Http2Stream, fields: readonly string[], endStream: boolean): void {
    if (this.#stream !== undefined) {
      // Trailers from the client end its side of the stream; nothing else is expected.
      if (endStream) this.#end();
      return;
    }
    this.#stream = stream;
    let method = "";
    let path = "";
    let contentType = "";
    let accept = "";
    for (let i = 0; i < fields.length; i += 2) {
      const value = fields[i + 1];
      switch (fields[i]) {
        case ":method":
          method = value;
          break;
        case ":path":
          path = value;
          break;
        case "content-type":
          contentType = value;
          break;
        case "grpc-encoding":
          this.#encoding = value;
          break;
        case "grpc-accept-encoding":
          accept = value;
          break;
        default:
          if (!fields[i].startsWith(":") && !STANDARD_HEADERS.has(fields[i])) {
            this.#wire.metadata[fields[i]] = value;
          }
      }
    }
    if (method !== "POST" || !contentType.startsWith("application/grpc")) {
      this.#finish(headerBlock([[":status", method !== "POST" ? "405" : "415"]]));
      return;
    }
    if (!SUPPORTED_ENCODINGS.has(this.#encoding)) {
      this.#fail(
        new GrpcStatusError(Status.UNIMPLEMENTED, `Unsupported grpc-encoding "${this.#encoding}"`),
      );
      return;
    }
    // Answer in the client's encoding when it accepts that encoding back.
    const encoding = this.#encoding as Compression | "identity";
    if (encoding !== "identity" && accept.split(",").some((a) => a.trim() === encoding)) {
      this.#responseEncoding = encoding;
    }
    const tfserving = path.startsWith(PREDICTION_SERVICE)
      ? path.slice(PREDICTION_SERVICE.length)
      : "";
    // KServe methods go by name; TF Serving's by path, so the two never mix.
    const name = path.startsWith(SERVICE_PATH)
      ? path.slice(SERVICE_PATH.length)
      : this.#service.tfserving.answers(tfserving)
      ? path
      : "";
    if (!UNARY_METHODS.has(name) && name !== STREAM_METHOD && name !== path) {
      this.#fail(new GrpcStatusError(Status.UNIMPLEMENTED, `Method not found: ${path}`));
      return;
    }
    this.#method = name;
    if (endStream) this.#end();
  }

  data(_stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    if (this.#done || this.#method === "") return;
    try {
      this.#reader.push(data);
    } catch (error) {
      this.#fail(statusOf(error));
      return;
    }
    if (endStream) this.#end();
  }

  reset(): void {
    this.#done = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #message(message: Uint8Array, compressed: boolean): void {
    if (this.#done) return;
    this.#wire.messages++;
    let body = message;
    if (compressed) {
      const encoding = this.#encoding;
      this.#wire.compressed[encoding] = (this.#wire.compressed[encoding] ?? 0) + 1;
      if (encoding === "identity") {
        throw new GrpcFramingError("A compressed message arrived without grpc-encoding");
      }
      body = decompress(encoding, message);
    } else {
      // The payload is a view of the connection's read buffer; the model keeps inputs past this call.
      body = message.slice();
    }
    if (this.#method === STREAM_METHOD) {
      this.#streamInfer(body);
      return;
    }
    if (this.#unary !== undefined) {
      throw new GrpcFramingError(`${this.#method} takes one request message, got more`);
    }
    this.#unary = body;
  }

  /** The client finished sending. */
  #end(): void {
    if (this.#done || this.#clientEnded) return;
    this.#clientEnded = true;
    if (this.#method === STREAM_METHOD) {
      this.#maybeFinishStream();
      return;
    }
    const message = this.#unary ?? new Uint8Array(0);
    if (this.#method.startsWith(PREDICTION_SERVICE)) {
      this.#service.tfserving.call(
        this.#method.slice(PREDICTION_SERVICE.length),
        message,
        this.#arrival,
      ).then(
        (response) => {
          if (!this.#done) this.#reply(response);
        },
        (error) => this.#fail(statusOf(error)),
      );
      return;
    }
    if (this.#method !== "ModelInfer") {
      try {
        this.#reply(this.#service.simple(this.#method, message));
      } catch (error) {
        this.#fail(statusOf(error));
      }
      return;
    }
    let call: InferCall;
    try {
      call = this.#service.inferCall(message, this.#arrival);
    } catch (error) {
      this.#fail(statusOf(error));
      return;
    }
    if (call.model.spec.decoupled !== undefined) {
      this.#fail(
        new GrpcStatusError(
          Status.UNIMPLEMENTED,
          "ModelInfer RPC doesn't support models with decoupled transaction policy",
        ),
      );
      return;
    }
    this.#service.run(call).then(
      (outputs) => {
        if (!this.#done) this.#reply(this.#service.inferResponse(call, outputs));
      },
      (error) => this.#fail(statusOf(error)),
    );
  }

  #reply(message: Uint8Array): void {
    this.#sendMessage(message);
    this.#finish(TRAILERS_OK);
  }

  #streamInfer(message: Uint8Array): void {
    const service = this.#service;
    let call: InferCall;
    try {
      call = service.inferCall(message, performance.now());
    } catch (error) {
      this.#sendMessage(
        service.streamResponse(undefined, { message: statusOf(error).message, id: idOf(message) }),
      );
      return;
    }
    this.#pending++;
    service.run(call).then(
      (outputs) => this.#respond(call, outputs),
      (error) => {
        this.#pending--;
        if (this.#done) return;
        this.#sendMessage(
          service.streamResponse(undefined, { message: statusOf(error).message, id: call.id }),
        );
        this.#maybeFinishStream();
      },
    );
  }

  /** Sends a stream request's responses: one, or a decoupled model's N with gaps. */
  #respond(call: InferCall, outputs: Tensor[]): void {
    const service = this.#service;
    const decoupled = call.model.spec.decoupled;
    if (decoupled === undefined) {
      this.#pending--;
      if (this.#done) return;
      this.#sendMessage(service.streamResponse(service.inferResponse(call, outputs, FINAL)));
      this.#maybeFinishStream();
      return;
    }
    const { responses, gapMs } = decoupled;
    const send = (index: number) => {
      if (this.#done) return;
      if (index < responses) {
        const last = index === responses - 1 && !call.emptyFinal;
        this.#sendMessage(
          service.streamResponse(service.inferResponse(call, outputs, last ? FINAL : NOT_FINAL)),
        );
        if (index + 1 < responses) {
          const timer = setTimeout(() => {
            this.#timers.delete(timer);
            send(index + 1);
          }, gapMs);
          this.#timers.add(timer);
          return;
        }
      }
      if (call.emptyFinal) {
        this.#sendMessage(service.streamResponse(service.inferResponse(call, [], FINAL)));
      }
      this.#pending--;
      this.#maybeFinishStream();
    };
    send(0);
  }

  #maybeFinishStream(): void {
    if (this.#clientEnded && this.#pending === 0 && !this.#done) this.#finish(TRAILERS_OK);
  }

  #sendMessage(message: Uint8Array): void {
    const stream = this.#stream!;
    const session = this.#session;
    if (!this.#headersSent) {
      this.#headersSent = true;
      session.sendHeaders(stream, RESPONSE_HEADERS[this.#responseEncoding], false);
    }
    const compressed = this.#responseEncoding !== "none";
    const body = compressed ? compress(this.#responseEncoding, message) : message;
    const prefix = new Uint8Array(5);
    prefix[0] = compressed ? 1 : 0;
    new DataView(prefix.buffer).setUint32(1, body.length);
    session.sendData(stream, prefix, false);
    session.sendData(stream, body, false);
  }

  #fail(error: GrpcStatusError): void {
    this.#finish(errorBlock(error.status, error.message, !this.#headersSent));
  }

  #finish(block: Uint8Array): void {
    if (this.#done) return;
    this.#done = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#session.sendHeaders(this.#stream!, block, true);
  }
}

/** Starts the gRPC front end over `repository`. */
export async function serveGrpc(
  repository: ModelRepository,
  identity: ServerIdentity,
  options: GrpcServerOptions,
): Promise<GrpcServer> {
  const sharedMemory = options.sharedMemory ?? new SharedMemoryRegistry();
  const service = new InferenceService(repository, {
    identity,
    sharedMemory,
    trace: options.trace ?? new TraceSettingsStore(),
  });
  const wire: WireStats = { messages: 0, compressed: {}, metadata: {} };
  const sessions = new Set<Http2Session>();
  const connections = new Set<Promise<void>>();
  const session = (transport: Transport) => {
    const s: Http2Session = new Http2Session(transport, {
      role: "server",
      onStream: () => new ServerCall(s, service, wire),
    });
    sessions.add(s);
    return s;
  };
  const track = (done: Promise<void>, s: Http2Session) => {
    const tracked = done.finally(() => {
      sessions.delete(s);
      connections.delete(tracked);
    });
    connections.add(tracked);
  };

  const closeSessions = async () => {
    for (const s of sessions) s.close();
    await Promise.all(connections);
    if (options.sharedMemory === undefined) sharedMemory.close();
  };

  const mutual = options.tls?.clientCaCerts;
  if (options.tls !== undefined && mutual !== undefined) {
    // Imported here: a static import of a Node built-in would load it at every start-up.
    const tls = await import("node:tls");
    const server = tls.createServer({
      key: options.tls.key,
      cert: options.tls.cert,
      ca: mutual,
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ["h2"],
    }, (socket) => {
      const s = session(socketTransport(socket));
      track(pumpSocket(socket, s), s);
    });
    // A client that fails the handshake (no or wrong certificate) only loses its own connection.
    server.on("tlsClientError", () => {});
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.hostname, () => resolve());
    });
    const address = server.address();
    return {
      port: typeof address === "object" && address !== null ? address.port : options.port,
      wire,
      async close() {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await closeSessions();
        await closed;
      },
    };
  }

  const listener = options.tls === undefined
    ? Deno.listen({ hostname: options.hostname, port: options.port })
    : Deno.listenTls({
      hostname: options.hostname,
      port: options.port,
      cert: options.tls.cert,
      key: options.tls.key,
      alpnProtocols: ["h2"],
    });
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return;
      }
      if (options.tls === undefined) (conn as Deno.TcpConn).setNoDelay(true);
      const s = session(connTransport(conn));
      track(pump(conn, s), s);
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    wire,
    async close() {
      listener.close();
      await accepting;
      await closeSessions();
    },
  };
}
