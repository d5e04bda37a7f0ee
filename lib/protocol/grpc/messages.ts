/**
 * Protobuf messages of the KServe v2 gRPC service, from the descriptor
 * generated out of proto/ at build time (no .proto file is read at run time),
 * and their conversion to and from inferperf's protocol types.
 */
import protobuf from "protobufjs/light.js";
import { type Datatype, isDatatype } from "../../types/datatype.ts";
import { encodeBytesElements, tensorFromJson } from "../../input/codec.ts";
import { ProtocolError } from "../errors.ts";
import {
  markOptional,
  type ModelInfo,
  type ModelStatistics,
  type ServerInfo,
  type StatDuration,
} from "../../types/model.ts";
import type { ParameterValue, TensorSpec } from "../../types/tensor.ts";
import { DESCRIPTOR } from "./_descriptor.ts";

// int64 fields decode to JS numbers (exact up to 2^53, ample for shapes and counters).
protobuf.util.Long = null as unknown as typeof protobuf.util.Long;
protobuf.configure();

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const type = (name: string) => root.lookupType(`inference.${name}`);

export const Messages = {
  ServerLiveRequest: type("ServerLiveRequest"),
  ServerLiveResponse: type("ServerLiveResponse"),
  ServerReadyRequest: type("ServerReadyRequest"),
  ServerReadyResponse: type("ServerReadyResponse"),
  ModelReadyRequest: type("ModelReadyRequest"),
  ModelReadyResponse: type("ModelReadyResponse"),
  ServerMetadataRequest: type("ServerMetadataRequest"),
  ServerMetadataResponse: type("ServerMetadataResponse"),
  ModelMetadataRequest: type("ModelMetadataRequest"),
  ModelMetadataResponse: type("ModelMetadataResponse"),
  ModelInferRequest: type("ModelInferRequest"),
  ModelInferResponse: type("ModelInferResponse"),
  ModelStreamInferResponse: type("ModelStreamInferResponse"),
  ModelConfigRequest: type("ModelConfigRequest"),
  ModelConfigResponse: type("ModelConfigResponse"),
  ModelStatisticsRequest: type("ModelStatisticsRequest"),
  ModelStatisticsResponse: type("ModelStatisticsResponse"),
  SystemSharedMemoryStatusRequest: type("SystemSharedMemoryStatusRequest"),
  SystemSharedMemoryStatusResponse: type("SystemSharedMemoryStatusResponse"),
  SystemSharedMemoryRegisterRequest: type("SystemSharedMemoryRegisterRequest"),
  SystemSharedMemoryRegisterResponse: type("SystemSharedMemoryRegisterResponse"),
  SystemSharedMemoryUnregisterRequest: type("SystemSharedMemoryUnregisterRequest"),
  SystemSharedMemoryUnregisterResponse: type("SystemSharedMemoryUnregisterResponse"),
  TraceSettingRequest: type("TraceSettingRequest"),
  TraceSettingResponse: type("TraceSettingResponse"),
} as const;

/** TF Serving's PredictionService messages (package tensorflow.serving) and TensorProto. */
export const TfServingMessages = {
  PredictRequest: root.lookupType("tensorflow.serving.PredictRequest"),
  PredictResponse: root.lookupType("tensorflow.serving.PredictResponse"),
  GetModelMetadataRequest: root.lookupType("tensorflow.serving.GetModelMetadataRequest"),
  GetModelMetadataResponse: root.lookupType("tensorflow.serving.GetModelMetadataResponse"),
  SignatureDefMap: root.lookupType("tensorflow.serving.SignatureDefMap"),
  TensorProto: root.lookupType("tensorflow.TensorProto"),
} as const;

/** tensorflow.DataType enum values by name ("DT_FLOAT": 1). */
export const TF_DATA_TYPES: Readonly<Record<string, number>> =
  root.lookupEnum("tensorflow.DataType").values;

export type MessageType = protobuf.Type;

/** inference.ModelConfig: what config.pbtxt holds (lib/protocol/model_config.ts reads and writes it). */
export const MODEL_CONFIG_TYPE: MessageType = type("ModelConfig");

/** inference.DataType enum values by name ("TYPE_FP32": 11). */
export const DATA_TYPES: Readonly<Record<string, number>> = root.lookupEnum("inference.DataType")
  .values;

/** A decoded message as plain fields (snake_case, proto3 defaults filled in). */
// deno-lint-ignore no-explicit-any
export type Fields = Record<string, any>;

export function encodeMessage(type: MessageType, fields: Fields): Uint8Array {
  const bytes = type.encode(fields).finish();
  return bytes.constructor === Uint8Array
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Decodes a message; a malformed one is a ProtocolError naming the message type. */
export function decodeMessage(type: MessageType, bytes: Uint8Array): Fields {
  try {
    return type.decode(bytes) as Fields;
  } catch (error) {
    throw new ProtocolError(`Malformed ${type.name} message: ${(error as Error).message}`);
  }
}

/** ModelInferRequest / ModelInferResponse parameter maps. */
export type InferParameter =
  | { bool_param: boolean }
  | { int64_param: number | LongBits }
  | { uint64_param: number | LongBits }
  | { double_param: number }
  | { string_param: string };

/** protobufjs takes 64-bit integers beyond 2^53 as low/high words. */
interface LongBits {
  low: number;
  high: number;
  unsigned: boolean;
}

function longBits(value: bigint, unsigned: boolean): number | LongBits {
  if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(value);
  }
  const bits = BigInt.asUintN(64, value);
  return { low: Number(bits & 0xffffffffn), high: Number(bits >> 32n), unsigned };
}

/** Integers (number or bigint) go as int64, other numbers as double, unless typed. */
export function toInferParameter(value: ParameterValue): InferParameter {
  switch (typeof value) {
    case "boolean":
      return { bool_param: value };
    case "string":
      return { string_param: value };
    case "bigint":
      return { int64_param: longBits(value, false) };
    case "number":
      return Number.isInteger(value) ? { int64_param: value } : { double_param: value };
    default:
      switch (value.type) {
        case "double":
          return { double_param: Number(value.value) };
        case "uint64":
          return { uint64_param: longBits(BigInt(value.value), true) };
        case "int64":
          return { int64_param: longBits(BigInt(value.value), false) };
      }
  }
}

/** The value of a decoded InferParameter (undefined when none of the oneof is set). */
export function fromInferParameter(parameter: Fields): ParameterValue | undefined {
  switch (parameter.parameter_choice) {
    case "bool_param":
      return parameter.bool_param as boolean;
    case "int64_param":
      return parameter.int64_param as number;
    case "uint64_param":
      return parameter.uint64_param as number;
    case "double_param":
      return parameter.double_param as number;
    case "string_param":
      return parameter.string_param as string;
    default:
      return undefined;
  }
}

export function parametersOf(map: Fields | undefined): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, parameter] of Object.entries(map ?? {})) {
    const value = fromInferParameter(parameter as Fields);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function asDatatype(value: unknown, what: string): Datatype {
  const text = String(value);
  if (!isDatatype(text)) throw new ProtocolError(`Unsupported datatype "${text}" for ${what}`);
  return text;
}

/** Typed InferTensorContents as raw bytes, for servers that do not answer with raw contents. */
export function contentsToBytes(datatype: Datatype, contents: Fields | undefined): Uint8Array {
  if (contents === undefined || contents === null) return new Uint8Array(0);
  if (datatype === "BYTES") {
    return encodeBytesElements((contents.bytes_contents ?? []) as Uint8Array[]);
  }
  const field = datatype === "BOOL"
    ? "bool_contents"
    : datatype === "FP32"
    ? "fp32_contents"
    : datatype === "FP64"
    ? "fp64_contents"
    : datatype === "INT64"
    ? "int64_contents"
    : datatype === "UINT64"
    ? "uint64_contents"
    : datatype.startsWith("UINT")
    ? "uint_contents"
    : "int_contents";
  return tensorFromJson(datatype, (contents[field] ?? []) as unknown[]);
}

export function toServerInfo(message: Fields): ServerInfo {
  return {
    name: message.name,
    version: message.version,
    extensions: [...message.extensions],
  };
}

function tensorSpecs(list: Fields[], what: string, batched: boolean): TensorSpec[] {
  return list.map((t) => {
    const shape = (t.shape as number[]).map(Number);
    return {
      name: t.name,
      datatype: asDatatype(t.datatype, `${what} "${t.name}"`),
      // Metadata shapes of batching models lead with the batch dimension (-1).
      dims: batched && shape.length > 0 ? shape.slice(1) : shape,
    };
  });
}

/** ModelInfo from ModelMetadataResponse and the ModelConfig of ModelConfigResponse. */
export function toModelInfo(
  metadata: Fields,
  config: Fields | undefined,
  version: string,
): ModelInfo {
  const maxBatchSize = Number(config?.max_batch_size ?? 0);
  const steps = (config?.ensemble_scheduling?.step ?? []) as Fields[];
  const optional = new Set(
    ((config?.input ?? []) as Fields[]).filter((i) => i.optional === true).map((i) => i.name),
  );
  return {
    name: metadata.name,
    version,
    platform: metadata.platform,
    versions: [...metadata.versions],
    inputs: markOptional(tensorSpecs(metadata.inputs, "inputs", maxBatchSize > 0), optional),
    outputs: tensorSpecs(metadata.outputs, "outputs", maxBatchSize > 0),
    maxBatchSize,
    decoupled: config?.model_transaction_policy?.decoupled === true,
    sequence: config?.sequence_batching != null,
    composingModels: [...new Set(steps.map((s) => String(s.model_name)))],
    responseCache: config?.response_cache?.enable === true,
  };
}

function duration(value: Fields | undefined): StatDuration {
  return { count: Number(value?.count ?? 0), ns: Number(value?.ns ?? 0) };
}

export function toModelStatistics(message: Fields): ModelStatistics[] {
  return (message.model_stats as Fields[]).map((s) => {
    const i = (s.inference_stats ?? {}) as Fields;
    return {
      name: s.name,
      version: s.version,
      inferenceCount: Number(s.inference_count),
      executionCount: Number(s.execution_count),
      success: duration(i.success),
      fail: duration(i.fail),
      queue: duration(i.queue),
      computeInput: duration(i.compute_input),
      computeInfer: duration(i.compute_infer),
      computeOutput: duration(i.compute_output),
      cacheHit: duration(i.cache_hit),
      cacheMiss: duration(i.cache_miss),
    };
  });
}
