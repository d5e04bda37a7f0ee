/**
 * Output validation: responses compared with the expected outputs of the
 * steps a request was built from (`validation_data`, or output files of a
 * data directory).
 *
 * As perf_analyzer, values must match byte for byte by default (floats
 * included). `tolerance` relaxes float outputs only: |got - expected| <=
 * tolerance x max(1, |expected|), an absolute bound near zero and a relative
 * one for large values; NaN matches NaN. Integers, BOOL and BYTES stay exact.
 */
import type { Tensor } from "../types/tensor.ts";
import {
  bf16BitsToF32,
  decodeBytesElements,
  equalBytes,
  f16BitsToF32,
  tensorToJson,
} from "./codec.ts";
import { type Datatype, elementSize } from "../types/datatype.ts";

/** Checks a response's outputs; returns why they do not match, or undefined. */
export type OutputCheck = (outputs: readonly Tensor[]) => string | undefined;

export interface CheckOptions {
  /** Where each step of the request comes from (one per batch element). */
  steps: readonly string[];
  /** Allowed difference of float outputs; 0 (the default) compares bytes. */
  tolerance?: number;
}

const PREFIX = "Output doesn't match expected output:";
const utf8 = new TextDecoder();
const MAX_SHOWN = 40;

function show(datatype: Datatype, element: Uint8Array): string {
  const [value] = tensorToJson(datatype, element);
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
}

/** The index of the first differing element of fixed-size data, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array, size: number): number {
  const n = a.byteLength;
  let i = 0;
  // Word compares are several times faster on large tensors; aligned views are the common case.
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const words = n >>> 2;
    const x = new Uint32Array(a.buffer, a.byteOffset, words);
    const y = new Uint32Array(b.buffer, b.byteOffset, words);
    while (i < words && x[i] === y[i]) i++;
    i <<= 2;
  }
  while (i < n && a[i] === b[i]) i++;
  return i === n ? -1 : Math.floor(i / size);
}

function readFloat(datatype: Datatype, view: DataView, index: number): number {
  switch (datatype) {
    case "FP16":
      return f16BitsToF32(view.getUint16(2 * index, true));
    case "BF16":
      return bf16BitsToF32(view.getUint16(2 * index, true));
    case "FP32":
      return view.getFloat32(4 * index, true);
    default:
      return view.getFloat64(8 * index, true);
  }
}

function firstOutsideTolerance(
  datatype: Datatype,
  pair: { got: Uint8Array; expected: Uint8Array },
  tolerance: number,
): number {
  const got = new DataView(pair.got.buffer, pair.got.byteOffset, pair.got.byteLength);
  const want = new DataView(
    pair.expected.buffer,
    pair.expected.byteOffset,
    pair.expected.byteLength,
  );
  const n = pair.got.byteLength / elementSize(datatype);
  for (let i = 0; i < n; i++) {
    const a = readFloat(datatype, got, i);
    const e = readFloat(datatype, want, i);
    if (Number.isNaN(a) && Number.isNaN(e)) continue;
    if (a === e) continue;
    if (!(Math.abs(a - e) <= tolerance * Math.max(1, Math.abs(e)))) return i;
  }
  return -1;
}

const FLOATS: ReadonlySet<Datatype> = new Set(["FP16", "BF16", "FP32", "FP64"]);

/** Why one output differs from its expected value, or undefined. */
function compareOutput(
  expected: Tensor,
  got: Tensor | undefined,
  options: CheckOptions,
): string | undefined {
  const { name, datatype } = expected;
  const { steps } = options;
  const all = steps.length === 1 ? steps[0] : `${steps[0]} (and ${steps.length - 1} more steps)`;
  if (got === undefined) return `${PREFIX} ${name} is missing from the response (${all})`;
  if (got.datatype !== datatype) {
    return `${PREFIX} ${name} is ${got.datatype}, expected ${datatype} (${all})`;
  }
  const size = elementSize(datatype);
  let index: number;
  let elements: number;
  let value: (data: Uint8Array, i: number) => string;
  if (size === 0) {
    const want = decodeBytesElements(expected.data);
    let have: Uint8Array[];
    try {
      have = decodeBytesElements(got.data);
    } catch (error) {
      return `${PREFIX} ${name} is not valid BYTES data: ${(error as Error).message} (${all})`;
    }
    if (have.length !== want.length) {
      return `${PREFIX} ${name} has ${have.length} elements, expected ${want.length} (${all})`;
    }
    elements = want.length;
    index = want.findIndex((w, i) => !equalBytes(w, have[i]));
    value = (data, i) => {
      const text = JSON.stringify(utf8.decode(decodeBytesElements(data)[i]));
      return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
    };
  } else {
    if (got.data.byteLength !== expected.data.byteLength) {
      return `${PREFIX} ${name} has ${got.data.byteLength / size} elements, expected ` +
        `${expected.data.byteLength / size} (${all})`;
    }
    elements = expected.data.byteLength / size;
    const tolerance = options.tolerance ?? 0;
    index = tolerance > 0 && FLOATS.has(datatype)
      ? firstOutsideTolerance(datatype, { got: got.data, expected: expected.data }, tolerance)
      : firstDifference(got.data, expected.data, size);
    value = (data, i) => show(datatype, data.subarray(i * size, (i + 1) * size));
  }
  if (index === -1) return undefined;
  const perStep = elements / steps.length;
  const step = Math.floor(index / perStep);
  return `${PREFIX} ${name} at ${steps[step]}, element ${index % perStep}: expected ` +
    `${value(expected.data, index)}, got ${value(got.data, index)}`;
}

/**
 * A check of responses against `expected` (batched outputs, each the
 * concatenation of the steps' expected values). The message names the
 * output, the step and the first differing element with both values.
 */
export function createOutputCheck(expected: readonly Tensor[], options: CheckOptions): OutputCheck {
  return (outputs) => {
    for (const want of expected) {
      const problem = compareOutput(want, outputs.find((o) => o.name === want.name), options);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}
