/**
 * The profile export's JSON text as perf_analyzer's rapidjson writer makes
 * it: timestamps as integer nanoseconds since the epoch, tensor values
 * (numbers as written, floats as doubles, BYTES as strings), a request's
 * facts written once, the experiment's mode and value.
 */
import { decodeBytesElements, tensorToJson } from "../input/codec.ts";
import type { LoadMode } from "../types/results.ts";
import type { InferRequest, Tensor } from "../types/tensor.ts";

const utf8 = new TextDecoder();
const NS_PER_S = 1e9;
// The time origin split into whole seconds and nanoseconds, so that timestamps are sums of
// safe integers: exact to the nanosecond without BigInt arithmetic per request.
const ORIGIN_NS = Math.round((performance.timeOrigin % 1000) * 1e6);
const ORIGIN_S = Math.floor(performance.timeOrigin / 1000);

/** A performance.now() time as decimal integer nanoseconds since the epoch. */
export function wallClockText(ms: number): string {
  const ns = ORIGIN_NS + Math.round(ms * 1e6);
  const seconds = Math.floor(ns / NS_PER_S);
  return `${ORIGIN_S + seconds}${String(ns - seconds * NS_PER_S).padStart(9, "0")}`;
}

/**
 * A performance.now() time as integer nanoseconds since the epoch. The origin
 * is added as an integer so that differences keep performance.now()'s precision.
 */
export function wallClockNs(ms: number): bigint {
  return BigInt(wallClockText(ms));
}

/** Typed arrays whose native join() writes valid JSON numbers (floats only when all finite). */
const TYPED_ARRAYS: Partial<
  Record<
    Tensor["datatype"],
    {
      new (
        buffer: ArrayBufferLike,
        offset: number,
        length: number,
      ): ArrayLike<number | bigint> & { join(separator: string): string };
      BYTES_PER_ELEMENT: number;
    }
  >
> = {
  UINT8: Uint8Array,
  INT8: Int8Array,
  UINT16: Uint16Array,
  INT16: Int16Array,
  UINT32: Uint32Array,
  INT32: Int32Array,
  UINT64: BigUint64Array,
  INT64: BigInt64Array,
  FP32: Float32Array,
  FP64: Float64Array,
};
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * The elements of a numeric tensor joined by commas, straight from a typed
 * array view (the export's hot spot); undefined when the bytes cannot be
 * viewed in place or hold non-finite floats.
 */
function joinedElements(tensor: Tensor): string | undefined {
  const Type = TYPED_ARRAYS[tensor.datatype];
  const data = tensor.data;
  if (!Type || !LITTLE_ENDIAN_HOST) return undefined;
  const size = Type.BYTES_PER_ELEMENT;
  if (data.byteOffset % size !== 0 || data.byteLength % size !== 0) return undefined;
  const view = new Type(data.buffer, data.byteOffset, data.byteLength / size);
  if (view.length === 0) return '""';
  if (tensor.datatype === "FP32" || tensor.datatype === "FP64") {
    // Written as doubles, as perf_analyzer's JSON writer does: 1 is 1.0.
    let text = "";
    for (let i = 0; i < view.length; i++) {
      const value = view[i] as number;
      if (!Number.isFinite(value)) return undefined;
      text += `${i > 0 ? "," : ""}${doubleJson(value)}`;
    }
    return view.length > 1 ? `[${text}]` : text;
  }
  return view.length > 1 ? `[${view.join(",")}]` : String(view[0]);
}

/**
 * A JSON scalar of one tensor element: floats as doubles, non-finite ones as
 * strings, 64-bit integers exact.
 */
function elementJson(value: number | bigint | boolean | string, float: boolean): string {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return `"${value}"`;
    return float ? doubleJson(value) : String(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}

/**
 * A tensor's value as perf_analyzer writes it: one element as a scalar, more
 * as an array, none as "". BYTES elements are strings without their length
 * prefix (perf_analyzer writes one BYTES element only; several become an
 * array of strings here).
 */
export function tensorValueJson(tensor: Tensor): string {
  const joined = joinedElements(tensor);
  if (joined !== undefined) return joined;
  let elements: (number | bigint | boolean | string)[];
  try {
    elements = tensor.datatype === "BYTES"
      ? decodeBytesElements(tensor.data).map((e) => utf8.decode(e))
      : tensorToJson(tensor.datatype, tensor.data);
  } catch {
    // A tensor whose bytes do not match its datatype is exported as null rather than dropped.
    return "null";
  }
  if (elements.length === 0) return '""';
  const float = tensor.datatype.startsWith("FP") || tensor.datatype === "BF16";
  if (elements.length === 1) return elementJson(elements[0], float);
  return `[${elements.map((e) => elementJson(e, float)).join(",")}]`;
}

/** `{"NAME":value,...}` of a list of tensors. */
export function tensorsJson(tensors: readonly Tensor[]): string {
  return `{${tensors.map((t) => `${JSON.stringify(t.name)}:${tensorValueJson(t)}`).join(",")}}`;
}

/** What the export writes once per distinct prepared request. */
export interface RequestFacts {
  inputsJson: string;
  /** 0 when the request belongs to no sequence (then not written, as perf_analyzer does). */
  sequenceId: bigint;
}

export function factsOf(request: InferRequest): RequestFacts {
  const id = request.parameters?.sequence_id;
  return {
    inputsJson: tensorsJson(request.inputs),
    sequenceId: typeof id === "number" || typeof id === "bigint" ? BigInt(id) : 0n,
  };
}

export const NO_FACTS: RequestFacts = { inputsJson: "{}", sequenceId: 0n };

/**
 * A number as rapidjson writes a double (perf_analyzer's JSON writer): the
 * shortest text that reads back the same, always with a fraction or an
 * exponent, so that 8 is `8.0` and 1e21 is `1e21`.
 */
export function doubleJson(value: number): string {
  if (Object.is(value, -0)) return "-0.0";
  const text = String(value);
  if (text.includes("e")) return text.replace("e+", "e");
  return text.includes(".") || !Number.isFinite(value) ? text : `${text}.0`;
}

/**
 * `{"mode":...,"value":...}` as perf_analyzer writes it: a concurrency as an
 * integer, a request rate (and request intervals, counted as one) as a double.
 */
export function experimentJson(mode: LoadMode, value: number): string {
  return mode === "concurrency"
    ? `{"mode":"concurrency","value":${Math.round(value)}}`
    : `{"mode":"request_rate","value":${doubleJson(value)}}`;
}
