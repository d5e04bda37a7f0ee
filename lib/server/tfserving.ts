/**
 * TF Serving's PredictionService on the reference server's gRPC front end:
 * Predict (TensorProto inputs keyed by the model's input names, run through
 * the simulated model like any request) and GetModelMetadata (one
 * "serving_default" signature built from the model's tensors).
 */
import {
  DEFAULT_SIGNATURE,
  SIGNATURE_DEF_MAP_URL,
  tensorFromProto,
  tensorToProto,
  TF_DTYPE,
} from "../protocol/tfserving.ts";
import {
  decodeMessage,
  encodeMessage,
  type Fields,
  TfServingMessages,
} from "../protocol/grpc/messages.ts";
import { ProtocolError } from "../protocol/errors.ts";
import type { Tensor } from "../types/tensor.ts";
import type { ModelSpec } from "./config.ts";
import { ServerError } from "./errors.ts";
import type { SimulatedModel } from "./model.ts";
import { type ModelRepository, perModel } from "./repository.ts";

function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

function tensorInfos(spec: ModelSpec, tensors: ModelSpec["inputs"]): Fields {
  const infos: Fields = {};
  for (const t of tensors) {
    const dims = spec.maxBatchSize > 0 ? [-1, ...t.dims] : t.dims;
    infos[t.name] = {
      name: `${t.name}:0`,
      dtype: TF_DTYPE[t.datatype],
      tensor_shape: { dim: dims.map((size) => ({ size })) },
    };
  }
  return infos;
}

export class TfServingService {
  readonly #repository: ModelRepository;
  readonly #metadata = perModel((model: SimulatedModel) => {
    const spec = model.spec;
    const signatures = encodeMessage(TfServingMessages.SignatureDefMap, {
      signature_def: {
        [DEFAULT_SIGNATURE]: {
          inputs: tensorInfos(spec, spec.inputs),
          outputs: tensorInfos(spec, spec.outputs),
          method_name: "tensorflow/serving/predict",
        },
      },
    });
    return encodeMessage(TfServingMessages.GetModelMetadataResponse, {
      model_spec: { name: spec.name, version: { value: Number(model.version) } },
      metadata: { signature_def: { type_url: SIGNATURE_DEF_MAP_URL, value: signatures } },
    });
  });

  constructor(repository: ModelRepository) {
    this.#repository = repository;
  }

  /** Whether `method` ("Predict", ...) is a PredictionService method this service answers. */
  answers(method: string): boolean {
    return method === "Predict" || method === "GetModelMetadata";
  }

  /** Answers a call; rejects with a ServerError. `arrival` is when the request started to arrive. */
  call(method: string, message: Uint8Array, arrival: number): Promise<Uint8Array> {
    try {
      if (method === "GetModelMetadata") {
        const request = decodeMessage(TfServingMessages.GetModelMetadataRequest, message);
        const fields = request.metadata_field as string[];
        if (!fields.includes("signature_def")) {
          throw invalid('Metadata field(s) must be specified: only "signature_def" is supported');
        }
        return Promise.resolve(this.#metadata(this.#model(request.model_spec)));
      }
      return this.#predict(decodeMessage(TfServingMessages.PredictRequest, message), arrival);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #model(spec: Fields | undefined): SimulatedModel {
    const name = String(spec?.name ?? "");
    const version = spec?.version?.value;
    const signature = spec?.signature_name ?? "";
    if (signature !== "" && signature !== DEFAULT_SIGNATURE) {
      throw invalid(`Serving signature name: "${signature}" not found in signature def`);
    }
    try {
      return this.#repository.get(name, version === undefined ? undefined : String(version));
    } catch {
      const which = version === undefined ? `Latest(${name})` : `Specific(${name}, ${version})`;
      throw new ServerError(`Servable not found for request: ${which}`, "not_found");
    }
  }

  async #predict(request: Fields, arrival: number): Promise<Uint8Array> {
    const model = this.#model(request.model_spec);
    const spec = model.spec;
    const given = (request.inputs ?? {}) as Fields;
    for (const alias of Object.keys(given)) {
      if (!spec.inputs.some((t) => t.name === alias)) {
        throw invalid(`input tensor alias not found in signature: ${alias}`);
      }
    }
    const inputs: Tensor[] = spec.inputs.map((t) => {
      const proto = given[t.name];
      if (proto === undefined) {
        throw invalid(`input tensor alias not found in request: ${t.name}`);
      }
      try {
        return tensorFromProto(t.name, proto);
      } catch (error) {
        if (error instanceof ProtocolError) throw invalid(error.message);
        throw error;
      }
    });
    const filter = request.output_filter as string[];
    for (const name of filter) {
      if (!spec.outputs.some((t) => t.name === name)) {
        throw invalid(`output tensor alias not found in signature: ${name}`);
      }
    }
    const outputs = await model.infer({ id: "", inputs, outputs: filter, arrival });
    const protos: Fields = {};
    for (const t of outputs) protos[t.name] = tensorToProto(t);
    return encodeMessage(TfServingMessages.PredictResponse, {
      model_spec: {
        name: spec.name,
        version: { value: Number(model.version) },
        signature_name: DEFAULT_SIGNATURE,
      },
      outputs: protos,
    });
  }
}
