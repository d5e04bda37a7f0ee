/**
 * The RPCs of the reference server's gRPC front end (grpc.ts), independent
 * of connections: metadata, configuration, statistics, shared memory, trace
 * settings and inference.
 */
import type { Tensor } from "../types/tensor.ts";
import { isDatatype } from "../types/datatype.ts";
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
import { GrpcFramingError, Status } from "../protocol/grpc/wire.ts";
import type { ModelSpec } from "./config.ts";
import { responseParameters } from "./behaviour.ts";
import { ServerError, type ServerErrorCode } from "./errors.ts";
import type { CoreRequest, SimulatedModel } from "./model.ts";
import { type ModelRepository, perModel } from "./repository.ts";
import { statisticsFields } from "./statistics.ts";
import { type RegionRef, regionRef, SharedMemoryRegistry } from "./shm.ts";
import { KSERVE_EXTENSIONS } from "./kserve_http.ts";
import { TraceSettingsStore } from "./trace.ts";
import { traceSettingsFromGrpc, traceSettingsToGrpc } from "../protocol/trace.ts";
import { TfServingService } from "./tfserving.ts";

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

export class GrpcStatusError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export function statusOf(error: unknown): GrpcStatusError {
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
export interface InferCall {
  model: SimulatedModel;
  core: CoreRequest;
  id: string;
  /** triton_enable_empty_final_response: end a decoupled request with an empty response. */
  emptyFinal: boolean;
  /** Per requested output: where it goes in shared memory, if there. */
  shared: (RegionRef | undefined)[];
}

/** Bytes of `value` as a protobuf varint. */
function varintSize(value: number): number {
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) size++;
  return size;
}

/** Writes `value` as a protobuf varint at `offset`; returns the offset after it. */
function writeVarint(out: Uint8Array, offset: number, value: number): number {
  let at = offset;
  let rest = value;
  while (rest >= 0x80) {
    out[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  out[at++] = rest;
  return at;
}

/** The id of a request that could not be taken (a malformed one has none). */
export function idOf(message: Uint8Array): string {
  try {
    return decodeMessage(Messages.ModelInferRequest, message).id;
  } catch {
    return "";
  }
}

export const FINAL = { triton_final_response: { bool_param: true } };
export const NOT_FINAL = { triton_final_response: { bool_param: false } };

/** The RPCs, independent of connections. */
export class InferenceService {
  /** TF Serving's PredictionService, served beside KServe's. */
  readonly tfserving: TfServingService;
  readonly #repository: ModelRepository;
  readonly #sharedMemory: SharedMemoryRegistry;
  readonly #trace: TraceSettingsStore;
  readonly #serverMetadata: Uint8Array;
  readonly #metadata = perModel((model: SimulatedModel) => {
    const spec = model.spec;
    return encodeMessage(Messages.ModelMetadataResponse, {
      name: spec.name,
      versions: spec.versions,
      platform: spec.platform,
      inputs: tensorMetadata(spec, spec.inputs),
      outputs: tensorMetadata(spec, spec.outputs),
    });
  });
  readonly #config = perModel((model: SimulatedModel) =>
    encodeMessage(Messages.ModelConfigResponse, { config: modelConfig(model.spec) })
  );
  /** Parameters each model attaches to its responses, as InferParameters. */
  readonly #parameters = perModel((spec: ModelSpec) => {
    const own = responseParameters(spec);
    return own === undefined
      ? undefined
      : Object.fromEntries(Object.entries(own).map(([k, v]) => [k, toInferParameter(v)])) as Fields;
  });

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
        return this.#metadata(model(Messages.ModelMetadataRequest));
      case "ModelConfig":
        return this.#config(model(Messages.ModelConfigRequest));
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
    const own = outputs.length > 0 ? this.#parameters(call.model.spec) : undefined;
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
    const out = new Uint8Array(1 + varintSize(infer!.length) + infer!.length);
    out[0] = 0x12;
    out.set(infer!, writeVarint(out, 1, infer!.length));
    return out;
  }
}
