/**
 * TF Serving client (--service-kind tfserving): tensorflow.serving's
 * PredictionService over gRPC. GetModelMetadata gives the signature's inputs
 * and outputs; Predict carries TensorProto inputs keyed by their aliases.
 * Calls run on the gRPC client's connections and sessions. TF Serving has no
 * statistics extension, so reports hold client-side figures only.
 */
import { decodeBytesElements, encodeBytesElements, tensorFromJson } from "../input/codec.ts";
import { type Datatype, elementCount } from "../types/datatype.ts";
import { InferError, ProtocolError } from "./errors.ts";
import { GrpcClient, type GrpcClientOptions } from "./grpc/client.ts";
import {
  decodeMessage,
  encodeMessage,
  type Fields,
  TF_DATA_TYPES,
  TfServingMessages,
} from "./grpc/messages.ts";
import { Status } from "./grpc/wire.ts";
import type { InferenceClient, InferSession, PreparedRequest } from "./types.ts";
import type { InferRequest, Tensor, TensorSpec } from "../types/tensor.ts";
import type { ModelInfo, ServerInfo } from "../types/model.ts";

export const DEFAULT_SIGNATURE = "serving_default";
export const PREDICTION_SERVICE = "/tensorflow.serving.PredictionService/";
const PREDICT = `${PREDICTION_SERVICE}Predict`;
const GET_MODEL_METADATA = `${PREDICTION_SERVICE}GetModelMetadata`;
/** The type URL of the "signature_def" metadata (a google.protobuf.Any). */
export const SIGNATURE_DEF_MAP_URL = "type.googleapis.com/tensorflow.serving.SignatureDefMap";

/** tensorflow.DataType of each KServe datatype. */
export const TF_DTYPE: Readonly<Record<Datatype, number>> = {
  BOOL: TF_DATA_TYPES.DT_BOOL,
  UINT8: TF_DATA_TYPES.DT_UINT8,
  UINT16: TF_DATA_TYPES.DT_UINT16,
  UINT32: TF_DATA_TYPES.DT_UINT32,
  UINT64: TF_DATA_TYPES.DT_UINT64,
  INT8: TF_DATA_TYPES.DT_INT8,
  INT16: TF_DATA_TYPES.DT_INT16,
  INT32: TF_DATA_TYPES.DT_INT32,
  INT64: TF_DATA_TYPES.DT_INT64,
  FP16: TF_DATA_TYPES.DT_HALF,
  BF16: TF_DATA_TYPES.DT_BFLOAT16,
  FP32: TF_DATA_TYPES.DT_FLOAT,
  FP64: TF_DATA_TYPES.DT_DOUBLE,
  BYTES: TF_DATA_TYPES.DT_STRING,
};

const DATATYPE_OF = new Map<number, Datatype>(
  Object.entries(TF_DTYPE).map(([datatype, dtype]) => [dtype, datatype as Datatype]),
);

/** The KServe datatype of a tensorflow.DataType; a ProtocolError for types without one. */
export function datatypeOf(dtype: number, what: string): Datatype {
  const datatype = DATATYPE_OF.get(dtype);
  if (datatype === undefined) {
    const name = Object.entries(TF_DATA_TYPES).find(([, v]) => v === dtype)?.[0] ?? dtype;
    throw new ProtocolError(`Unsupported TensorFlow data type ${name} of ${what}`);
  }
  return datatype;
}

/** TensorProto fields of a tensor: raw tensor_content, or string_val for strings. */
export function tensorToProto(tensor: Tensor): Fields {
  const proto: Fields = {
    dtype: TF_DTYPE[tensor.datatype],
    tensor_shape: { dim: tensor.shape.map((size) => ({ size })) },
  };
  if (tensor.datatype === "BYTES") proto.string_val = decodeBytesElements(tensor.data);
  else proto.tensor_content = tensor.data;
  return proto;
}

/** The typed-value field of each datatype, for TensorProtos sent without tensor_content. */
const VALUE_FIELD: Readonly<Record<Exclude<Datatype, "BYTES">, string>> = {
  BOOL: "bool_val",
  UINT8: "int_val",
  UINT16: "int_val",
  UINT32: "uint32_val",
  UINT64: "uint64_val",
  INT8: "int_val",
  INT16: "int_val",
  INT32: "int_val",
  INT64: "int64_val",
  FP16: "half_val",
  BF16: "half_val",
  FP32: "float_val",
  FP64: "double_val",
};

/** A decoded TensorProto as a tensor named `name` (tensor_content or typed values). */
export function tensorFromProto(name: string, proto: Fields): Tensor {
  const datatype = datatypeOf(proto.dtype ?? 0, `tensor "${name}"`);
  const dims = (proto.tensor_shape?.dim ?? []) as Fields[];
  const shape = dims.map((d) => Number(d.size));
  const count = elementCount(shape);
  if (datatype === "BYTES") {
    return { name, datatype, shape, data: encodeBytesElements(proto.string_val ?? []) };
  }
  const content = proto.tensor_content as Uint8Array | undefined;
  if (content !== undefined && content.byteLength > 0) {
    return { name, datatype, shape, data: content.slice() };
  }
  let values = (proto[VALUE_FIELD[datatype]] ?? []) as number[];
  // A single value fills the whole shape (TensorProto's version 0 rule).
  if (values.length === 1 && count > 1) values = new Array(count).fill(values[0]);
  if (datatype === "FP16" || datatype === "BF16") {
    // half_val holds the 16-bit patterns.
    const bits = Uint16Array.from(values);
    return { name, datatype, shape, data: new Uint8Array(bits.buffer) };
  }
  return { name, datatype, shape, data: tensorFromJson(datatype, values) };
}

function modelSpec(model: string, options: { version: string; signature: string }): Fields {
  const spec: Fields = { name: model, signature_name: options.signature };
  if (options.version !== "") spec.version = { value: Number(options.version) };
  return spec;
}

function tensorSpecs(map: Fields | undefined, batched: boolean): TensorSpec[] {
  return Object.entries(map ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(
    ([name, info]) => {
      const dims = ((info.tensor_shape?.dim ?? []) as Fields[]).map((d) => Number(d.size));
      return {
        name,
        datatype: datatypeOf(info.dtype ?? 0, `signature tensor "${name}"`),
        dims: batched ? dims.slice(1) : dims,
      };
    },
  );
}

/** Whether every input of a signature leads with an unknown (batch) dimension. */
function leadsWithBatch(map: Fields | undefined): boolean {
  const infos = Object.values(map ?? {}) as Fields[];
  return infos.length > 0 &&
    infos.every((info) => Number((info.tensor_shape?.dim ?? [])[0]?.size) === -1);
}

export interface TfServingClientOptions extends Omit<GrpcClientOptions, "streaming"> {
  /** --model-signature-name; default "serving_default". */
  signatureName?: string;
  /**
   * -b: TF Serving signatures do not state a maximum batch size; as in
   * perf_analyzer, a signature whose inputs lead with a -1 dimension takes this.
   */
  batchSize?: number;
}

export class TfServingClient implements InferenceClient {
  readonly protocol = "grpc" as const;
  readonly #grpc: GrpcClient;
  readonly #signature: string;
  readonly #batchSize: number;
  readonly #predict = {
    path: PREDICT,
    decode: (message: Uint8Array): Tensor[] => {
      const response = decodeMessage(TfServingMessages.PredictResponse, message);
      return Object.entries((response.outputs ?? {}) as Fields).map(([name, proto]) =>
        tensorFromProto(name, proto)
      );
    },
  };

  constructor(options: TfServingClientOptions) {
    this.#grpc = new GrpcClient(options);
    this.#signature = options.signatureName ?? DEFAULT_SIGNATURE;
    this.#batchSize = Math.max(1, options.batchSize ?? 1);
  }

  /** TF Serving has no server metadata call. */
  serverInfo(): Promise<ServerInfo> {
    return Promise.resolve({ name: "tfserving", version: "", extensions: [] });
  }

  async modelInfo(model: string, version: string): Promise<ModelInfo> {
    const request = encodeMessage(TfServingMessages.GetModelMetadataRequest, {
      model_spec: modelSpec(model, { version, signature: this.#signature }),
      metadata_field: ["signature_def"],
    });
    const response = decodeMessage(
      TfServingMessages.GetModelMetadataResponse,
      await this.#grpc.call(GET_MODEL_METADATA, request),
    );
    const any = response.metadata?.signature_def as Fields | undefined;
    if (any === undefined || any.value === undefined) {
      throw new ProtocolError(`The metadata of model "${model}" has no signature_def`);
    }
    const signatures = decodeMessage(TfServingMessages.SignatureDefMap, any.value)
      .signature_def as Fields;
    const signature = signatures?.[this.#signature] as Fields | undefined;
    if (signature === undefined) {
      throw new InferError(
        `Model "${model}" has no signature "${this.#signature}" (--model-signature-name; ` +
          `signatures: ${Object.keys(signatures ?? {}).join(", ") || "none"})`,
        Status.NOT_FOUND,
      );
    }
    const batched = leadsWithBatch(signature.inputs);
    const specVersion = response.model_spec?.version?.value;
    return {
      name: model,
      version,
      platform: "tensorflow_serving",
      versions: specVersion === undefined ? [] : [String(specVersion)],
      inputs: tensorSpecs(signature.inputs, batched),
      outputs: tensorSpecs(signature.outputs, batched),
      maxBatchSize: batched ? this.#batchSize : 0,
      decoupled: false,
      sequence: false,
      composingModels: [],
      responseCache: false,
    };
  }

  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const inputs: Fields = {};
    for (const tensor of request.inputs) inputs[tensor.name] = tensorToProto(tensor);
    const message = encodeMessage(TfServingMessages.PredictRequest, {
      model_spec: modelSpec(target.model, { version: target.version, signature: this.#signature }),
      inputs,
      output_filter: request.outputs,
    });
    return this.#grpc.prepareCall(message, this.#predict);
  }

  openSession(): Promise<InferSession> {
    return this.#grpc.openSession();
  }

  close(): Promise<void> {
    return this.#grpc.close();
  }
}
