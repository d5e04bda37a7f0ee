/**
 * TorchServe inference API of the reference server: `POST
 * /predictions/{model}[/{version}]` with the raw request body as the model's
 * one input (UINT8 bytes or a single BYTES element), answered with the first
 * output (its bytes, or JSON for numeric outputs) after the model's simulated
 * compute time; `GET /ping` for health. Errors in TorchServe's shape.
 */
import { decodeBytesElements, encodeBytesElements, tensorToJson } from "../input/codec.ts";
import type { Tensor } from "../types/tensor.ts";
import { ServerError, type ServerErrorCode } from "./errors.ts";
import type { SimulatedModel } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import type { HttpHandler, HttpRequest, HttpResponse } from "./_http.ts";

const encoder = new TextEncoder();
const HEALTHY = json(200, { status: "Healthy" });
const NOT_FOUND = json(404, {
  code: 404,
  type: "ResourceNotFoundException",
  message: "Requested resource is not found",
});
const METHOD_NOT_ALLOWED = json(405, {
  code: 405,
  type: "MethodNotAllowedException",
  message: "Method not allowed",
});

const STATUS: Record<ServerErrorCode, number> = {
  invalid_argument: 400,
  not_found: 404,
  unavailable: 503,
  internal: 500,
};

function json(status: number, value: unknown): HttpResponse {
  return { status, contentType: "application/json", body: encoder.encode(JSON.stringify(value)) };
}

function failure(error: unknown): HttpResponse {
  const status = error instanceof ServerError ? STATUS[error.code] : 500;
  const type = status === 404 ? "ModelNotFoundException" : "InternalServerException";
  return json(status, { code: status, type, message: (error as Error).message });
}

/** The body as the model's single input, with the batch dimension when the model batches. */
function inputOf(model: SimulatedModel, body: Uint8Array): Tensor {
  const spec = model.spec;
  const [input] = spec.inputs;
  const batch = spec.maxBatchSize > 0 ? [1] : [];
  if (spec.inputs.length !== 1 || (input.datatype !== "UINT8" && input.datatype !== "BYTES")) {
    throw new ServerError(
      `Model "${spec.name}" can not take a TorchServe request: it needs a single UINT8 or BYTES ` +
        "input for the request body",
      "invalid_argument",
    );
  }
  if (input.datatype === "BYTES") {
    return {
      name: input.name,
      datatype: "BYTES",
      shape: [...batch, 1],
      data: encodeBytesElements([body]),
    };
  }
  return { name: input.name, datatype: "UINT8", shape: [...batch, body.byteLength], data: body };
}

/** The first output: raw bytes, the one BYTES element, or JSON values of numeric outputs. */
function responseOf(output: Tensor): HttpResponse {
  if (output.datatype === "UINT8") {
    return { status: 200, contentType: "application/octet-stream", body: output.data };
  }
  if (output.datatype === "BYTES") {
    const [first] = decodeBytesElements(output.data);
    return {
      status: 200,
      contentType: "application/octet-stream",
      body: first ?? new Uint8Array(0),
    };
  }
  return json(
    200,
    tensorToJson(output.datatype, output.data).map((v) => typeof v === "bigint" ? Number(v) : v),
  );
}

function predict(repository: ModelRepository, request: HttpRequest): Promise<HttpResponse> {
  const [name, version, ...rest] = request.path.slice("/predictions/".length).split("/");
  if (rest.length > 0 || name === "") {
    return Promise.resolve(NOT_FOUND);
  }
  try {
    const model = repository.get(
      decodeURIComponent(name),
      version === undefined ? undefined : decodeURIComponent(version),
    );
    return model.infer({
      id: "",
      inputs: [inputOf(model, request.body)],
      outputs: [],
      arrival: request.arrival,
    }).then((outputs) => responseOf(outputs[0]), failure);
  } catch (error) {
    return Promise.resolve(failure(error));
  }
}

/** The TorchServe routes (`/predictions/...`, `/ping`) over the models of `repository`. */
export function createTorchServeHandler(repository: ModelRepository): HttpHandler {
  return (request) => {
    if (request.path === "/ping") return request.method === "GET" ? HEALTHY : METHOD_NOT_ALLOWED;
    if (request.method !== "POST") return METHOD_NOT_ALLOWED;
    return predict(repository, request);
  };
}
