/**
 * The KServe HTTP infer request, read as Triton reads it (its checks, its
 * messages and status codes), and Triton's plain-text refusals.
 */
import type { Tensor } from "../types/tensor.ts";
import { type Datatype, elementCount, isDatatype } from "../types/datatype.ts";
import { parseJsonExact, tensorFromJson } from "../input/codec.ts";
import { ServerError } from "./errors.ts";
import type { CoreRequest } from "./model.ts";
import { type RegionRef, regionRef, type SharedMemoryRegistry } from "./shm.ts";
import { errorResponse, type HttpRequest, type HttpResponse } from "./_http.ts";

const decoder = new TextDecoder();

export function plainError(status: number, message: string): HttpResponse {
  return { ...errorResponse(status, message), contentType: "text/plain" };
}

export function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

/** Triton's refusal of a request JSON it cannot read: an HTTP 500, in its parser's words. */
export function unparsable(
  field: string,
  problem = `non-existing object member '${field}'`,
): ServerError {
  return new ServerError(`Unable to parse '${field}': attempt to access ${problem}`, "internal");
}

/** Triton takes and gives half floats only as binary data (refusing outputs as text/plain). */
export function checkJsonDatatype(datatype: Datatype, tensor: { input?: string }): void {
  if (datatype !== "FP16" && datatype !== "BF16") return;
  if (tensor.input === undefined) {
    throw new HttpStatusError(plainError(
      400,
      `sending ${datatype} data via JSON is not supported. Please use the binary data format ` +
        "for output",
    ));
  }
  throw invalid(
    `receiving ${datatype} data via JSON is not supported. Please use the binary data format ` +
      `for input ${tensor.input}`,
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface ParsedInfer {
  core: CoreRequest;
  /** Per requested output, or one flag for all outputs. */
  binary: boolean | boolean[];
  /** Per requested output: where it goes in shared memory, if there. */
  shared: (RegionRef | undefined)[];
}

/** Where the next binary input starts in the request body, and the shared-memory regions. */
interface BodyCursor {
  body: Uint8Array;
  offset: number;
  sharedMemory: SharedMemoryRegistry;
  /** Named by Triton's messages about the body. */
  model: string;
}

/** Reads one input; binary data is taken at the cursor, which advances past it. */
function parseInput(value: unknown, cursor: BodyCursor): Tensor {
  if (!isRecord(value)) throw unparsable("inputs", "JSON non-object as object");
  const { name, datatype, shape, parameters, data } = value;
  if (typeof name !== "string") throw unparsable("name");
  if (typeof datatype !== "string") throw unparsable("datatype");
  if (!isDatatype(datatype)) throw invalid(`invalid datatype for input ${name}`);
  if (!Array.isArray(shape)) throw unparsable("shape");
  if (!shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw unparsable("shape", "JSON non-unsigned-integer as unsigned integer");
  }
  const params = isRecord(parameters) ? parameters : {};
  const ref = regionRef(params, `input '${name}'`);
  if (ref !== undefined) {
    if (data !== undefined) {
      throw invalid(`input '${name}' has both 'data' and shared memory parameters`);
    }
    return { name, datatype, shape, data: cursor.sharedMemory.read(ref, `input '${name}'`) };
  }
  const size = params.binary_data_size;
  if (size !== undefined) {
    if (!Number.isInteger(size) || (size as number) < 0) {
      throw invalid(`Unable to parse 'binary_data_size' of input '${name}'`);
    }
    const { body, offset } = cursor;
    const end = offset + (size as number);
    if (end > body.byteLength) {
      throw invalid(
        `unexpected size for input '${name}', expecting ${end - body.byteLength} additional ` +
          `bytes for model '${cursor.model}'`,
      );
    }
    cursor.offset = end;
    return { name, datatype, shape, data: body.subarray(offset, end) };
  }
  if (data === undefined) {
    throw invalid(
      "Input must set only one of the following fields: 'data', 'binary_data_size' in " +
        "'parameters', 'shared_memory_region' in 'parameters'. But no field is set",
    );
  }
  checkJsonDatatype(datatype, { input: name });
  const values = Array.isArray(data) && Array.isArray(data[0]) ? data.flat(Infinity) : data;
  if (!Array.isArray(values)) throw unparsable("data", "JSON non-array as array");
  if (values.length !== elementCount(shape)) {
    throw new ServerError(
      "Failed to parse 'data' field: shape does not match true shape",
      "internal",
    );
  }
  try {
    return { name, datatype, shape, data: tensorFromJson(datatype, values) };
  } catch (error) {
    throw new ServerError(`Unable to parse 'data': ${(error as Error).message}`, "internal");
  }
}

export function parseInfer(
  request: HttpRequest,
  target: { sharedMemory: SharedMemoryRegistry; model: string },
): ParsedInfer {
  const body = request.body;
  const lengthText = request.header("inference-header-content-length");
  const headerLength = lengthText === undefined ? body.byteLength : Number(lengthText);
  if (!/^\d+$/.test(lengthText ?? "0")) {
    throw new HttpStatusError(
      plainError(400, `Unable to parse Inference-Header-Content-Length, got: ${lengthText}`),
    );
  }
  if (headerLength > body.byteLength) {
    throw new HttpStatusError(plainError(
      400,
      `inference header size should be in range (0, ${body.byteLength}), got: ${headerLength}`,
    ));
  }
  let parsed: unknown;
  try {
    parsed = parseJsonExact(decoder.decode(body.subarray(0, headerLength)));
  } catch (error) {
    throw new ServerError(
      `failed to parse the request JSON buffer: ${(error as Error).message}`,
      "internal",
    );
  }
  if (!isRecord(parsed)) throw unparsable("inputs");
  const id = parsed.id ?? "";
  if (typeof id !== "string") throw unparsable("id", "JSON non-string as string");
  const inputs = parsed.inputs;
  if (inputs === undefined) throw unparsable("inputs");
  if (!Array.isArray(inputs)) throw unparsable("inputs", "JSON non-array as array");
  const tensors = new Array<Tensor>(inputs.length);
  const cursor: BodyCursor = { body, offset: headerLength, ...target };
  for (let i = 0; i < inputs.length; i++) tensors[i] = parseInput(inputs[i], cursor);
  if (cursor.offset !== body.byteLength) {
    throw invalid(
      `${body.byteLength - cursor.offset} unexpected bytes follow the binary input data in ` +
        "the request body",
    );
  }
  const parameters = isRecord(parsed.parameters) ? parsed.parameters : {};
  const binaryDefault = parameters.binary_data_output === true;
  const outputs = parsed.outputs;
  const names: string[] = [];
  const shared: (RegionRef | undefined)[] = [];
  let binary: boolean | boolean[] = binaryDefault;
  if (outputs !== undefined) {
    if (!Array.isArray(outputs)) throw unparsable("outputs", "JSON non-array as array");
    const flags: boolean[] = [];
    for (const output of outputs) {
      if (!isRecord(output) || typeof output.name !== "string") throw unparsable("name");
      const params = isRecord(output.parameters) ? output.parameters : {};
      const ref = regionRef(params, `output '${output.name}'`);
      // Fails before inference when the region is unknown, as Triton does.
      if (ref !== undefined) target.sharedMemory.status(ref.region);
      shared.push(ref);
      names.push(output.name);
      flags.push(typeof params.binary_data === "boolean" ? params.binary_data : binaryDefault);
    }
    if (names.length > 0) binary = flags;
  }
  const core: CoreRequest = { id, inputs: tensors, outputs: names, arrival: request.arrival };
  const sequenceId = parameters.sequence_id;
  if (sequenceId !== undefined) {
    if (
      typeof sequenceId !== "string" &&
      !(Number.isSafeInteger(sequenceId) && sequenceId as number >= 0)
    ) {
      throw unparsable("sequence_id", "JSON non-string as string");
    }
    core.sequence = {
      id: sequenceId as number | string,
      start: parameters.sequence_start === true,
      end: parameters.sequence_end === true,
    };
  }
  return { core, binary, shared };
}

/** A refusal answered exactly as given (Triton's text/plain ones). */
export class HttpStatusError extends Error {
  constructor(readonly response: HttpResponse) {
    super(decoder.decode(response.body as Uint8Array));
  }
}
