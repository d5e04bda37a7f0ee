/**
 * Conversion between raw tensor bytes (row-major, little-endian, BYTES elements
 * as a 4-byte LE length + payload) and flat JSON values.
 *
 * All multi-byte access goes through DataView with littleEndian=true, so the
 * codec is correct on any host and for views at any byte offset.
 */
import { type Datatype, elementCount, elementSize } from "../types/datatype.ts";

export type JsonElement = number | bigint | boolean | string;

const utf8Encoder = new TextEncoder();
// Non-fatal: output validation and export must still show tensors a server filled with non-UTF-8.
const utf8Decoder = new TextDecoder();

/** Bytes of a fully defined tensor of a fixed-size datatype. */
export function byteSizeOf(datatype: Datatype, shape: readonly number[]): number {
  const size = elementSize(datatype);
  if (size === 0) {
    throw new TypeError(`Datatype "${datatype}" has no fixed element size`);
  }
  return size * elementCount(shape);
}

/** Whether `a` and `b` hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The parts one after the other (a single part is returned as it is). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let total = 0;
  for (const p of parts) total += p.byteLength;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/** Concatenates elements as BYTES tensor data; strings are encoded as UTF-8. */
export function encodeBytesElements(elements: readonly (string | Uint8Array)[]): Uint8Array {
  const encoded = elements.map((e) => typeof e === "string" ? utf8Encoder.encode(e) : e);
  let total = 0;
  for (const e of encoded) total += 4 + e.byteLength;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const e of encoded) {
    view.setUint32(offset, e.byteLength, true);
    out.set(e, offset + 4);
    offset += 4 + e.byteLength;
  }
  return out;
}

/** Splits BYTES tensor data into its elements (views into `data`, not copies). */
export function decodeBytesElements(data: Uint8Array): Uint8Array[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const elements: Uint8Array[] = [];
  let offset = 0;
  while (offset < data.byteLength) {
    if (offset + 4 > data.byteLength) {
      throw new RangeError(
        `Truncated BYTES length prefix at byte ${offset} of ${data.byteLength}`,
      );
    }
    const length = view.getUint32(offset, true);
    const start = offset + 4;
    if (start + length > data.byteLength) {
      throw new RangeError(
        `Truncated BYTES element ${elements.length}: length ${length} at byte ${offset} ` +
          `exceeds the ${data.byteLength} bytes of data`,
      );
    }
    elements.push(data.subarray(start, start + length));
    offset = start + length;
  }
  return elements;
}

// Scratch space for reading the exponent of a double.
const scratch = new DataView(new ArrayBuffer(8));

/** floor(log2(a)) for a positive normal double; below -1022 for zero and subnormals. */
function exponentOf(a: number): number {
  scratch.setFloat64(0, a);
  return ((scratch.getUint16(0) >>> 4) & 0x7ff) - 1023;
}

// Exact powers of two 2^-POW2_LIMIT .. 2^POW2_LIMIT: Math.pow dominated 10 MB conversions.
const POW2_LIMIT = 160;
const POW2 = Float64Array.from({ length: 2 * POW2_LIMIT + 1 }, (_, i) => 2 ** (i - POW2_LIMIT));

function pow2(k: number): number {
  return POW2[k + POW2_LIMIT];
}

function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const fraction = v - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * Rounds a number to a 16-bit float with the given mantissa width and exponent
 * bias, to nearest even. Rounds from the double directly: going through float32
 * first could round twice.
 */
function toHalfBits(x: number, mantissaBits: number, bias: number): number {
  const implicit = 1 << mantissaBits;
  const infinity = (2 * bias + 1) << mantissaBits;
  if (Number.isNaN(x)) return infinity | (implicit >>> 1);
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  let exponent = exponentOf(a);
  if (exponent > bias) return sign | infinity;
  if (exponent < 1 - bias) {
    // Subnormal in the target; a result of `implicit` is exactly the smallest normal.
    return sign | roundHalfEven(a * pow2(bias - 1 + mantissaBits));
  }
  let mantissa = roundHalfEven(a * pow2(mantissaBits - exponent));
  if (mantissa === 2 * implicit) {
    exponent++;
    mantissa = implicit;
    if (exponent > bias) return sign | infinity;
  }
  return sign | ((exponent + bias) << mantissaBits) | (mantissa - implicit);
}

function fromHalfBits(bits: number, mantissaBits: number, bias: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const maxExponent = 2 * bias + 1;
  const exponent = (bits >>> mantissaBits) & maxExponent;
  const mantissa = bits & ((1 << mantissaBits) - 1);
  if (exponent === 0) return sign * mantissa * pow2(1 - bias - mantissaBits);
  if (exponent === maxExponent) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * ((1 << mantissaBits) + mantissa) * pow2(exponent - bias - mantissaBits);
}

/** IEEE 754 binary16 bits of any number (not only float32 values), rounded to nearest even. */
export function f32ToF16Bits(x: number): number {
  return toHalfBits(x, 10, 15);
}

/** Every value of a 16-bit format, built on first use; a lookup beats decoding per element. */
function decodeTable(mantissaBits: number, bias: number): Float64Array {
  return Float64Array.from(
    { length: 0x10000 },
    (_, bits) => fromHalfBits(bits, mantissaBits, bias),
  );
}

let f16Table: Float64Array | undefined;
let bf16Table: Float64Array | undefined;

export function f16BitsToF32(bits: number): number {
  f16Table ??= decodeTable(10, 15);
  return f16Table[bits & 0xffff];
}

/** bfloat16 bits of `x`, rounded to nearest even. */
export function f32ToBf16Bits(x: number): number {
  return toHalfBits(x, 7, 127);
}

export function bf16BitsToF32(bits: number): number {
  bf16Table ??= decodeTable(7, 127);
  return bf16Table[bits & 0xffff];
}

/** Inclusive [min, max] of an integer datatype; undefined for BOOL, floats and BYTES. */
export function integerRange(datatype: Datatype): readonly [bigint, bigint] | undefined {
  const signed = datatype.startsWith("INT");
  if (!signed && !datatype.startsWith("UINT")) return undefined;
  const bits = BigInt(8 * elementSize(datatype));
  return signed ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n] : [0n, (1n << bits) - 1n];
}

function numberRange(datatype: Datatype): readonly [number, number] {
  const [min, max] = integerRange(datatype)!;
  return [Number(min), Number(max)];
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

function checkLength(datatype: Datatype, data: Uint8Array): number {
  const size = elementSize(datatype);
  if (data.byteLength % size !== 0) {
    throw new RangeError(
      `${datatype} data of ${data.byteLength} bytes is not a multiple of ${size} bytes`,
    );
  }
  return data.byteLength / size;
}

/**
 * Raw row-major little-endian bytes -> flat JSON elements. BOOL -> boolean;
 * 64-bit ints -> number when |v| <= 2^53-1, else bigint; FP16/BF16 -> number;
 * BYTES (4-byte LE length + bytes per element) -> string (UTF-8, invalid
 * sequences replaced by U+FFFD).
 */
export function tensorToJson(datatype: Datatype, data: Uint8Array): JsonElement[] {
  if (datatype === "BYTES") {
    return decodeBytesElements(data).map((e) => utf8Decoder.decode(e));
  }
  const n = checkLength(datatype, data);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: JsonElement[] = new Array(n);
  switch (datatype) {
    case "BOOL":
      for (let i = 0; i < n; i++) out[i] = data[i] !== 0;
      break;
    case "UINT8":
      for (let i = 0; i < n; i++) out[i] = data[i];
      break;
    case "INT8":
      for (let i = 0; i < n; i++) out[i] = view.getInt8(i);
      break;
    case "UINT16":
      for (let i = 0; i < n; i++) out[i] = view.getUint16(2 * i, true);
      break;
    case "INT16":
      for (let i = 0; i < n; i++) out[i] = view.getInt16(2 * i, true);
      break;
    case "UINT32":
      for (let i = 0; i < n; i++) out[i] = view.getUint32(4 * i, true);
      break;
    case "INT32":
      for (let i = 0; i < n; i++) out[i] = view.getInt32(4 * i, true);
      break;
    case "UINT64":
      for (let i = 0; i < n; i++) {
        const v = view.getBigUint64(8 * i, true);
        out[i] = v <= MAX_SAFE ? Number(v) : v;
      }
      break;
    case "INT64":
      for (let i = 0; i < n; i++) {
        const v = view.getBigInt64(8 * i, true);
        out[i] = v <= MAX_SAFE && v >= MIN_SAFE ? Number(v) : v;
      }
      break;
    case "FP16":
      for (let i = 0; i < n; i++) out[i] = f16BitsToF32(view.getUint16(2 * i, true));
      break;
    case "BF16":
      for (let i = 0; i < n; i++) out[i] = bf16BitsToF32(view.getUint16(2 * i, true));
      break;
    case "FP32":
      for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case "FP64":
      for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i, true);
      break;
  }
  return out;
}

const MAX_DESCRIBED = 64;

function describe(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = `"${value}"`;
  else if (typeof value === "bigint") text = `${value}n`;
  else if (typeof value === "object" && value !== null) {
    text = JSON.stringify(value, (_, v) => typeof v === "bigint" ? `${v}n` : v);
  } else text = String(value);
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}...` : text;
}

function invalid(datatype: Datatype, index: number, value: unknown, why: string): TypeError {
  return new TypeError(`Invalid ${datatype} element ${index}: ${describe(value)} ${why}`);
}

function outOfRange(
  datatype: Datatype,
  index: number,
  value: unknown,
  range: readonly [number | bigint, number | bigint],
): RangeError {
  return new RangeError(
    `Invalid ${datatype} element ${index}: ${describe(value)} is outside [${range[0]}, ${
      range[1]
    }]`,
  );
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

/** An integer element as bigint, or a TypeError naming it. */
function toBigInt(datatype: Datatype, index: number, value: unknown): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  if (typeof value === "string" && INTEGER_TEXT.test(value)) return BigInt(value.trim());
  throw invalid(datatype, index, value, "is not an integer");
}

/** An integer element as a number within [min, max], or an error naming it. */
function toInteger(
  datatype: Datatype,
  index: number,
  value: unknown,
  range: readonly [number, number],
): number {
  const v = typeof value === "number" && Number.isInteger(value)
    ? value
    : Number(toBigInt(datatype, index, value));
  if (v < range[0] || v > range[1]) throw outOfRange(datatype, index, value, range);
  return v;
}

function toBigIntInRange(
  datatype: Datatype,
  index: number,
  value: unknown,
  range: readonly [bigint, bigint],
): bigint {
  const v = toBigInt(datatype, index, value);
  if (v < range[0] || v > range[1]) throw outOfRange(datatype, index, value, range);
  return v;
}

function toFloat(datatype: Datatype, index: number, value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && value.trim() !== "") {
    // JSON cannot carry NaN or infinities, so they arrive as strings.
    const v = Number(value);
    if (!Number.isNaN(v) || value.trim() === "NaN") return v;
  }
  throw invalid(datatype, index, value, "is not a number");
}

function toBool(datatype: Datatype, index: number, value: unknown): number {
  if (value === true || value === 1 || value === 1n) return 1;
  if (value === false || value === 0 || value === 0n) return 0;
  throw invalid(datatype, index, value, "is not a boolean (true, false, 0 or 1)");
}

/**
 * Flat JSON values -> raw bytes. Throws a TypeError (wrong kind of value) or
 * RangeError (integer out of range) naming the element index and value.
 *
 * - BOOL: true, false, 0 or 1.
 * - Integer types: integral numbers, bigints and integer strings ("-12"), so
 *   64-bit values beyond 2^53 survive JSON parsing as strings or bigints.
 * - Float types: numbers, bigints and numeric strings, including "NaN",
 *   "Infinity" and "-Infinity"; FP16/BF16 round to nearest even.
 * - BYTES: strings (encoded as UTF-8) or Uint8Arrays (raw bytes).
 */
export function tensorFromJson(datatype: Datatype, values: readonly unknown[]): Uint8Array {
  if (datatype === "BYTES") {
    return encodeBytesElements(values.map((v, i) => {
      if (typeof v === "string" || v instanceof Uint8Array) return v;
      throw invalid(datatype, i, v, "is not a string");
    }));
  }
  const n = values.length;
  const out = new Uint8Array(n * elementSize(datatype));
  const view = new DataView(out.buffer);
  switch (datatype) {
    case "BOOL":
      for (let i = 0; i < n; i++) out[i] = toBool(datatype, i, values[i]);
      break;
    case "UINT8":
    case "INT8": {
      const range = numberRange(datatype);
      for (let i = 0; i < n; i++) view.setInt8(i, toInteger(datatype, i, values[i], range));
      break;
    }
    case "UINT16":
    case "INT16": {
      const range = numberRange(datatype);
      for (let i = 0; i < n; i++) {
        view.setInt16(2 * i, toInteger(datatype, i, values[i], range), true);
      }
      break;
    }
    case "UINT32":
    case "INT32": {
      const range = numberRange(datatype);
      for (let i = 0; i < n; i++) {
        view.setInt32(4 * i, toInteger(datatype, i, values[i], range), true);
      }
      break;
    }
    case "UINT64":
    case "INT64": {
      const range = integerRange(datatype)!;
      for (let i = 0; i < n; i++) {
        // asUintN gives the two's complement pattern, so one setter serves both signs.
        const v = toBigIntInRange(datatype, i, values[i], range);
        view.setBigUint64(8 * i, BigInt.asUintN(64, v), true);
      }
      break;
    }
    case "FP16":
      for (let i = 0; i < n; i++) {
        view.setUint16(2 * i, f32ToF16Bits(toFloat(datatype, i, values[i])), true);
      }
      break;
    case "BF16":
      for (let i = 0; i < n; i++) {
        view.setUint16(2 * i, f32ToBf16Bits(toFloat(datatype, i, values[i])), true);
      }
      break;
    case "FP32":
      for (let i = 0; i < n; i++) view.setFloat32(4 * i, toFloat(datatype, i, values[i]), true);
      break;
    case "FP64":
      for (let i = 0; i < n; i++) view.setFloat64(8 * i, toFloat(datatype, i, values[i]), true);
      break;
  }
  return out;
}

// JSON.parse's reviver sees the source text of each value (V8), which TypeScript does not know yet.
const parseWithSource = JSON.parse as (
  text: string,
  reviver: (key: string, value: unknown, context?: { source?: string }) => unknown,
) => unknown;
const INTEGER_SOURCE = /^-?\d+$/;
/** Only text with a long digit run can hold an integer that a double cannot. */
const LONG_DIGITS = /\d{16}/;

/**
 * JSON.parse that keeps integers beyond 2^53 exact, as bigints (for INT64 and
 * UINT64 tensors); text without 16-digit runs takes the plain, fast path.
 */
export function parseJsonExact(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  return parseWithSource(
    text,
    (_key, value, context) =>
      typeof value === "number" && !Number.isSafeInteger(value) &&
        context?.source !== undefined && INTEGER_SOURCE.test(context.source)
        ? BigInt(context.source)
        : value,
  );
}
