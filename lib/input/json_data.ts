/**
 * perf_analyzer's JSON input data (`--input-data FILE.json`, repeatable).
 *
 * `data` is an array of steps (sent round-robin) or an array of arrays (one
 * stream per sequence). A step maps every input name to a tensor: a flat
 * array (nested arrays are flattened), `{"b64": "..."}` (raw little-endian
 * bytes; BYTES elements with their 4-byte length prefix), or
 * `{"content": <array or {"b64"}>, "shape": [...]}`, whose shape overrides
 * --shape for variable dims. `validation_data` has the same layout for
 * outputs and must align with `data`. Several files combine as in
 * perf_analyzer: files of steps append steps to one stream, files of
 * streams append streams; the two kinds do not mix.
 */
import type { Tensor, TensorSpec } from "../types/tensor.ts";
import { encodeBytesElements, tensorFromJson } from "./codec.ts";
import {
  type DataSet,
  type DataStep,
  type LoadOptions,
  locate,
  missingTensor,
  readDataFile,
  sizedTensor,
} from "./data_set.ts";
import { InputError } from "./errors.ts";
import { JsonSyntaxError, parseDataJson } from "./_json_syntax.ts";

export interface JsonDataFile {
  streams: DataStep[][];
  /** `data` is an array of arrays: one stream per sequence. */
  nested: boolean;
}

type Role = "input" | "output";

/** `model_inputs`: what `inferperf input-template` writes about each input, read by people only. */
const TOP_FIELDS = new Set(["data", "validation_data", "model_inputs"]);
const TENSOR_FIELDS = new Set(["content", "shape", "b64"]);
/** Step fields that are not tensors: "model" (perf_analyzer ignores it) and "timestamp" (ms). */
const STEP_FIELDS = new Set(["model", "timestamp"]);
const BASE64_INVALID = /[^A-Za-z0-9+/=\s]/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON value for a message, cut at 40 characters. */
export function show(value: unknown): string {
  const text = JSON.stringify(value, (_k, v) => typeof v === "bigint" ? v.toString() : v) ??
    String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function decodeBase64(value: unknown): Uint8Array {
  if (typeof value !== "string") {
    throw new InputError(`the value of "b64" must be a string, got ${show(value)}`);
  }
  const bad = BASE64_INVALID.exec(value);
  if (bad !== null) {
    throw new InputError(
      `invalid base64: character ${JSON.stringify(bad[0])} at offset ${bad.index}`,
    );
  }
  try {
    return Uint8Array.fromBase64(value);
  } catch (error) {
    throw new InputError(`invalid base64: ${(error as Error).message}`);
  }
}

function readShape(value: unknown): number[] {
  if (!Array.isArray(value) || !value.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new InputError(`"shape" must be an array of non-negative integers, got ${show(value)}`);
  }
  return value;
}

/** Tensor bytes of a JSON array of elements. */
function encodeElements(spec: TensorSpec, values: unknown[]): Uint8Array {
  try {
    return spec.datatype === "BYTES"
      ? encodeBytesElements(values.map((v, i) => {
        if (typeof v === "string") return v;
        throw new TypeError(`Invalid BYTES element ${i}: ${show(v)} is not a string`);
      }))
      : tensorFromJson(spec.datatype, values);
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) {
      throw new InputError(error.message);
    }
    throw error;
  }
}

function decodeTensor(
  value: unknown,
  spec: TensorSpec,
  options: { role: Role; option?: readonly number[] },
): Tensor {
  let content: unknown = value;
  let given: number[] | undefined;
  if (isRecord(value)) {
    for (const key of Object.keys(value)) {
      if (!TENSOR_FIELDS.has(key)) {
        throw new InputError(
          `unknown field "${key}" (a tensor object has "content", "shape" or "b64")`,
        );
      }
    }
    if (value.shape !== undefined) given = readShape(value.shape);
    if ("b64" in value && "content" in value) {
      throw new InputError('a tensor has either "b64" or "content", not both');
    }
    if ("b64" in value) content = { b64: value.b64 };
    else if ("content" in value) content = value.content;
    else throw new InputError('missing "content" field');
  }
  let data: Uint8Array;
  let elements: number | undefined;
  if (Array.isArray(content)) {
    const values = content.flat(Infinity);
    data = encodeElements(spec, values);
    elements = values.length;
  } else if (isRecord(content) && Object.keys(content).join() === "b64") {
    data = decodeBase64(content.b64);
  } else {
    throw new InputError(
      `expected an array of elements, {"b64": "..."} or {"content": ..., "shape": [...]}, ` +
        `got ${show(content)}`,
    );
  }
  return sizedTensor(spec, data, {
    role: options.role,
    given,
    option: options.option,
    elements,
    flexible: options.role === "output",
  });
}

interface StepContext {
  where: string;
  role: Role;
  options: LoadOptions;
}

/** A step's "timestamp": milliseconds >= 0, alone or as a one-element array. */
export function readTimestamp(value: unknown): number {
  const ms = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new InputError(`"timestamp" must be milliseconds >= 0, got ${show(value)}`);
  }
  return ms;
}

/** The tensors of one step in model order (optional inputs it leaves out left out), and its timestamp. */
function decodeStep(
  value: unknown,
  context: StepContext,
): { tensors: Tensor[]; timestampMs?: number } {
  const { where, role, options } = context;
  const { model } = options;
  const specs = role === "input" ? model.inputs : model.outputs;
  if (!isRecord(value)) {
    throw new InputError(
      `${where}: must be an object mapping ${role} names to tensors, got ${show(value)}`,
    );
  }
  for (const key of Object.keys(value)) {
    if (specs.some((s) => s.name === key) || STEP_FIELDS.has(key)) continue;
    throw new InputError(
      `${where}: The input or output '${key}' is not found in the model configuration ` +
        `(model "${model.name}" has ${role}s ${specs.map((s) => s.name).join(", ")})`,
    );
  }
  const tensors: Tensor[] = [];
  for (const spec of specs) {
    const at = `${where}.${spec.name}`;
    if (spec.name in value) {
      const option = role === "input" ? options.shapes.get(spec.name) : undefined;
      tensors.push(locate(at, () => decodeTensor(value[spec.name], spec, { role, option })));
      continue;
    }
    if (role === "output") continue;
    const filled = locate(at, () => options.fill?.(spec));
    // perf_analyzer sends a request without an optional input its step leaves out.
    if (filled === undefined && spec.optional) continue;
    if (filled === undefined) throw new InputError(`${where}: ${missingTensor(spec)}`);
    tensors.push(filled);
  }
  if (role === "input" && value.timestamp !== undefined) {
    return { tensors, timestampMs: locate(where, () => readTimestamp(value.timestamp)) };
  }
  return { tensors };
}

function readStep(
  source: string,
  entries: { data: unknown; validation?: unknown },
  paths: { data: string; validation: string },
  options: LoadOptions,
): DataStep {
  const where = `"${source}" ${paths.data}`;
  const input = decodeStep(entries.data, { where, role: "input", options });
  const outputs = entries.validation === undefined ? [] : decodeStep(entries.validation, {
    where: `"${source}" ${paths.validation}`,
    role: "output",
    options,
  }).tensors;
  const step: DataStep = { inputs: input.tensors, outputs, where };
  if (input.timestampMs !== undefined) step.timestampMs = input.timestampMs;
  return step;
}

function misaligned(source: string, what: string): InputError {
  return new InputError(
    `The 'validation_data' field doesn't align with 'data' field in the json file "${source}" ` +
      `(${what})`,
  );
}

/** Parses one JSON data file (text already read); `source` names it in messages. */
export function parseJsonData(
  text: string,
  options: LoadOptions & { source: string },
): JsonDataFile {
  const { source } = options;
  let root: unknown;
  try {
    root = parseDataJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new InputError(
      `"${source}" line ${error.line}, column ${error.column}: invalid JSON: ${error.message}`,
    );
  }
  if (!isRecord(root) || !Array.isArray(root.data)) {
    throw new InputError(`"${source}": the JSON must be an object with a "data" array`);
  }
  for (const key of Object.keys(root)) {
    if (!TOP_FIELDS.has(key)) {
      throw new InputError(
        `"${source}": unknown field "${key}" (expected "data", "validation_data" or "model_inputs")`,
      );
    }
  }
  const data: unknown[] = root.data;
  const validation = root.validation_data;
  if (data.length === 0) throw new InputError(`"${source}": "data" is empty`);
  if (validation !== undefined) {
    if (!Array.isArray(validation)) {
      throw new InputError(`"${source}": "validation_data" must be an array like "data"`);
    }
    if (validation.length !== data.length) {
      throw misaligned(source, `${validation.length} entries for ${data.length}`);
    }
  }
  const nested = Array.isArray(data[0]);
  data.forEach((entry, i) => {
    if (Array.isArray(entry) !== nested) {
      throw new InputError(
        `"${source}" data[${i}]: Inconsistency in input-data provided. Can not have a ` +
          "combination of objects and arrays inside of the Data array",
      );
    }
  });
  if (!nested) {
    const steps = data.map((entry, i) =>
      readStep(source, { data: entry, validation: validation?.[i] }, {
        data: `data[${i}]`,
        validation: `validation_data[${i}]`,
      }, options)
    );
    return { streams: [steps], nested };
  }
  const streams = (data as unknown[][]).map((stream, s) => {
    if (stream.length === 0) throw new InputError(`"${source}" data[${s}]: the stream is empty`);
    const expected: unknown = validation?.[s];
    if (
      validation !== undefined && (!Array.isArray(expected) || expected.length !== stream.length)
    ) {
      const has = Array.isArray(expected) ? `${expected.length} steps` : "no array";
      throw misaligned(
        source,
        `data[${s}] has ${stream.length} steps, validation_data[${s}] ${has}`,
      );
    }
    return stream.map((entry, k) =>
      readStep(source, { data: entry, validation: (expected as unknown[] | undefined)?.[k] }, {
        data: `data[${s}][${k}]`,
        validation: `validation_data[${s}][${k}]`,
      }, options)
    );
  });
  return { streams, nested };
}

const utf8 = new TextDecoder();

/** Loads and combines JSON data files as perf_analyzer does. */
export async function loadJsonData(
  paths: readonly string[],
  options: LoadOptions,
): Promise<DataSet> {
  const files: JsonDataFile[] = [];
  for (const path of paths) {
    const text = utf8.decode(await readDataFile(path));
    const file = parseJsonData(text, { ...options, source: path });
    if (files.length > 0 && file.nested !== files[0].nested) {
      throw new InputError(
        `"${path}": can not combine a file of streams (arrays of steps) with a file of ` +
          `steps ("${paths[0]}")`,
      );
    }
    files.push(file);
  }
  if (files[0].nested) return { streams: files.flatMap((f) => f.streams) };
  return { streams: [files.flatMap((f) => f.streams[0])] };
}
