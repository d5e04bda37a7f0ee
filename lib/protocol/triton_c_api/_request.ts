/**
 * What a C API request is made of before it is sent: datatype codes, the
 * model version as the API takes it, and each request's inputs and
 * settings (sequence id and flags, priority, timeout, custom parameters)
 * prepared once as FFI arguments.
 */
import type { Datatype } from "../../types/datatype.ts";
import type { ParameterValue } from "../../types/tensor.ts";
import type { PreparedRequest } from "../types.ts";
import { SEQUENCE_END, SEQUENCE_START, type TritonLibrary } from "./ffi.ts";
import { cString } from "./server.ts";

/** TRITONSERVER_DataType codes. */
export const DATATYPE_CODES: Record<Datatype, number> = {
  BOOL: 1,
  UINT8: 2,
  UINT16: 3,
  UINT32: 4,
  UINT64: 5,
  INT8: 6,
  INT16: 7,
  INT32: 8,
  INT64: 9,
  FP16: 10,
  FP32: 11,
  FP64: 12,
  BYTES: 13,
  BF16: 14,
};
export const DATATYPE_NAMES = new Map(
  Object.entries(DATATYPE_CODES).map(([name, code]) => [code, name as Datatype]),
);

/** "" (latest) or a version number, as the C API takes it (-1: latest). */
export function versionNumber(version: string): number {
  if (version === "") return -1;
  const n = Number(version);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`Invalid model version "${version}"`);
  return n;
}

export interface PreparedInput {
  name: Uint8Array<ArrayBuffer>;
  datatype: number;
  shape: BigInt64Array<ArrayBuffer>;
  data: Uint8Array;
  pointer: Deno.PointerValue;
}

export type RequestSetting = (lib: TritonLibrary, request: Deno.PointerObject) => Deno.PointerValue;

/** A parameter as the matching TRITONSERVER_InferenceRequestSet*Parameter call. */
function parameterSetting(name: string, value: ParameterValue): RequestSetting {
  const key = cString(name);
  const s = (lib: TritonLibrary) => lib.symbols;
  if (typeof value === "boolean") {
    return (lib, r) => s(lib).TRITONSERVER_InferenceRequestSetBoolParameter(r, key, value);
  }
  if (typeof value === "string") {
    const text = cString(value);
    return (lib, r) => s(lib).TRITONSERVER_InferenceRequestSetStringParameter(r, key, text);
  }
  const typed = typeof value === "object" ? value : undefined;
  const n: number | bigint = typed ? typed.value : value as number | bigint;
  if (typed?.type === "double" || (typeof n === "number" && !Number.isInteger(n))) {
    return (lib, r) => s(lib).TRITONSERVER_InferenceRequestSetDoubleParameter(r, key, Number(n));
  }
  return (lib, r) => s(lib).TRITONSERVER_InferenceRequestSetIntParameter(r, key, BigInt(n));
}

/** The request-level settings of `parameters`: sequence id and flags, priority, timeout, custom. */
export function requestSettings(parameters: Record<string, ParameterValue>): RequestSetting[] {
  const settings: RequestSetting[] = [];
  let flags = 0;
  for (const [name, value] of Object.entries(parameters)) {
    const plain = typeof value === "object" ? value.value : value;
    switch (name) {
      case "sequence_id":
        if (typeof plain === "string") {
          const id = cString(plain);
          settings.push((lib, r) =>
            lib.symbols.TRITONSERVER_InferenceRequestSetCorrelationIdString(r, id)
          );
        } else {
          const id = BigInt(plain);
          settings.push((lib, r) =>
            lib.symbols.TRITONSERVER_InferenceRequestSetCorrelationId(r, id)
          );
        }
        break;
      case "sequence_start":
        if (plain === true) flags |= SEQUENCE_START;
        break;
      case "sequence_end":
        if (plain === true) flags |= SEQUENCE_END;
        break;
      case "priority": {
        const priority = BigInt(plain as number);
        settings.push((lib, r) =>
          lib.symbols.TRITONSERVER_InferenceRequestSetPriorityUInt64(r, priority)
        );
        break;
      }
      case "timeout": {
        const us = BigInt(plain as number);
        settings.push((lib, r) =>
          lib.symbols.TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(r, us)
        );
        break;
      }
      default:
        settings.push(parameterSetting(name, value));
    }
  }
  if (flags !== 0) {
    settings.push((lib, r) => lib.symbols.TRITONSERVER_InferenceRequestSetFlags(r, flags));
  }
  return settings;
}

export class PreparedCApiRequest implements PreparedRequest {
  readonly model: Uint8Array<ArrayBuffer>;
  readonly version: bigint;
  readonly inputs: PreparedInput[];
  readonly outputs: Array<Uint8Array<ArrayBuffer>>;
  readonly settings: RequestSetting[];
  /** Decoupled models may answer with an empty final response, which is not counted. */
  readonly decoupled: boolean;
  /** `outputs` by name, which the export writes a response without data with. */
  readonly outputNames: readonly string[];
  /** The response allocator's userp: the output regions' table (_regions.ts), or null. */
  readonly outputRegions: Deno.PointerValue;
  readonly byteLength: number;

  constructor(parts: Omit<PreparedCApiRequest, "byteLength">) {
    this.model = parts.model;
    this.version = parts.version;
    this.inputs = parts.inputs;
    this.outputs = parts.outputs;
    this.settings = parts.settings;
    this.decoupled = parts.decoupled;
    this.outputNames = parts.outputNames;
    this.outputRegions = parts.outputRegions;
    this.byteLength = parts.inputs.reduce((sum, input) => sum + input.data.byteLength, 0);
  }
}
