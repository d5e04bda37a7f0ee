/**
 * Input data as perf_analyzer models it: streams of steps, each step holding
 * one batch-1 tensor per model input and, optionally, the outputs the model
 * is expected to return for them (validation data).
 *
 * Loaders (generated, directory, JSON files) produce a DataSet; the load
 * modes turn steps into requests. Without sequences, every stream's steps
 * are sent round-robin; with `-b N`, a request takes N consecutive steps
 * (wrapping), as perf_analyzer does, so single-step data is repeated N times.
 */
import type { Tensor, TensorSpec } from "../types/tensor.ts";
import { concatBytes, decodeBytesElements } from "./codec.ts";
import { elementCount, elementSize } from "../types/datatype.ts";
import { InputError } from "./errors.ts";
import { formatShape, type ResolvedShape, resolveShape, type ShapeOptions } from "./shape.ts";

export interface DataStep {
  /**
   * One tensor per model input, in model order, but for optional inputs the
   * data leaves out; shapes exclude the batch dimension.
   */
  inputs: Tensor[];
  /** Expected outputs (validation data), in model order; only the outputs the data gives. */
  outputs: Tensor[];
  /** Where the step comes from, for messages: `"data.json" data[3]`. */
  where: string;
  /** The step's "timestamp" in milliseconds (for --fixed-schedule), when the data gives one. */
  timestampMs?: number;
  /** --session-concurrency: the conversation this step is a turn of (OpenAI data's "session_id"). */
  sessionId?: string;
  /** --session-concurrency: the pause after this turn's answer before the next turn (its "delay"). */
  delayMs?: number;
}

export interface DataSet {
  /**
   * Generated data, a directory and flat JSON `data` are one stream; nested
   * JSON `data` (an array of arrays) gives one stream per sequence.
   */
  streams: DataStep[][];
}

/** What data is checked against: the model's tensors (dims exclude the batch dimension). */
export interface DataModel {
  name: string;
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
}

/** What loaders need besides the data. */
export interface LoadOptions {
  model: DataModel;
  /** --shape values (without the batch dimension) for variable dims of inputs. */
  shapes: ReadonlyMap<string, readonly number[]>;
  /**
   * Data for an input the data leaves out (--input-data NAME:MODE, or an
   * explicit random/zero next to files); undefined makes it missing.
   */
  fill?: (spec: TensorSpec) => Tensor | undefined;
}

/** Steps sent together as one request. */
export interface Batch {
  /** One tensor per model input; with the batch dimension when the model batches. */
  inputs: Tensor[];
  /** Expected outputs that every step of the batch gives, concatenated in step order. */
  outputs: Tensor[];
  steps: DataStep[];
}

/** Prefixes an InputError's message with where it happened; other errors pass unchanged. */
export function locate<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${where}: ${error.message}`);
    throw error;
  }
}

/** The message for an input without data. */
export function missingTensor(spec: TensorSpec): string {
  const hint = spec.datatype === "BYTES"
    ? " (a BYTES input needs its strings in the data, or --input-data " +
      `${spec.name}:random with --string-length or --string-data)`
    : "";
  return `missing tensor ${spec.name}${hint}`;
}

/** Reads a data file, naming the path and the option in errors. */
export async function readDataFile(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new InputError(`--input-data "${path}": no such file or directory`);
    }
    throw new InputError(`--input-data "${path}": ${(error as Error).message}`);
  }
}

/** A data file's JSON; an InputError naming the file when it cannot be read or parsed. */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = new TextDecoder().decode(await readDataFile(path));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`"${path}": invalid JSON: ${(error as Error).message}`);
  }
}

/** Elements in tensor data; undefined when fixed-size data is not a whole number of elements. */
function countElements(spec: TensorSpec, data: Uint8Array): number | undefined {
  const size = elementSize(spec.datatype);
  if (size > 0) return data.byteLength % size === 0 ? data.byteLength / size : undefined;
  try {
    return decodeBytesElements(data).length;
  } catch (error) {
    throw new InputError(
      `the BYTES data of "${spec.name}" is not a list of 4-byte length + bytes elements: ` +
        (error as Error).message,
    );
  }
}

/**
 * A tensor for raw data after checking that the data holds exactly the
 * elements of its shape (see resolveShape). With `flexible`, data whose shape
 * cannot be determined is taken as a flat list (expected outputs only compare
 * bytes).
 */
export function sizedTensor(
  spec: TensorSpec,
  data: Uint8Array,
  options: ShapeOptions & { flexible?: boolean },
): Tensor {
  const elements = options.elements ?? countElements(spec, data);
  let resolved: ResolvedShape;
  try {
    resolved = resolveShape(spec, { ...options, elements });
  } catch (error) {
    if (!options.flexible || elements === undefined || options.given !== undefined) throw error;
    resolved = { shape: [elements], source: "the data size" };
  }
  const { shape, source } = resolved;
  const expected = elementCount(shape);
  const size = elementSize(spec.datatype);
  const used = `shape ${formatShape(shape)} from ${source}`;
  if (size > 0 && expected * size !== data.byteLength) {
    throw new InputError(
      `mismatch in the data provided for ${spec.name}. Expected: ${expected * size} bytes, ` +
        `Got: ${data.byteLength} bytes (${spec.datatype}, ${used})`,
    );
  }
  if (size === 0 && expected !== elements) {
    throw new InputError(
      `mismatch in the data provided for ${spec.name}. Expected: ${expected} elements, ` +
        `Got: ${elements} elements (BYTES, ${used})`,
    );
  }
  return { name: spec.name, datatype: spec.datatype, shape, data };
}

/** The inputs a step gives, for messages. */
function inputNames(step: DataStep): string {
  return step.inputs.map((t) => t.name).join(", ") || "no input";
}

/**
 * Joins steps into one request's tensors. Every step must give the same
 * inputs (optional ones may be left out) with the same shapes, as
 * perf_analyzer requires; a single step is used as is (no copy).
 */
export function makeBatch(steps: readonly DataStep[], options: { batched: boolean }): Batch {
  const first = steps[0];
  const prefix = options.batched ? [steps.length] : [];
  for (const step of steps) {
    if (inputNames(step) !== inputNames(first)) {
      throw new InputError(
        "For batch sizes larger than 1, the same set of inputs must be specified for each " +
          "batch. You cannot use different set of optional inputs for each individual batch. " +
          `In one batch of ${steps.length}, ${first.where} gives ${inputNames(first)} and ` +
          `${step.where} gives ${inputNames(step)}`,
      );
    }
  }
  const inputs = first.inputs.map((tensor, i) => {
    for (const step of steps) {
      const shape = step.inputs[i].shape;
      if (formatShape(shape) !== formatShape(tensor.shape)) {
        throw new InputError(
          "can not batch tensors with different shapes together (input " +
            `'${tensor.name}' expected shape ${formatShape(tensor.shape)} and received ` +
            `${formatShape(shape)}): ${first.where} has ${formatShape(tensor.shape)} and ` +
            `${step.where} has ${formatShape(shape)}`,
        );
      }
    }
    return {
      ...tensor,
      shape: [...prefix, ...tensor.shape],
      data: concatBytes(steps.map((s) => s.inputs[i].data)),
    };
  });
  const outputs: Tensor[] = [];
  for (const tensor of first.outputs) {
    const parts = steps.map((s) => s.outputs.find((o) => o.name === tensor.name)?.data);
    if (parts.every((p) => p !== undefined)) {
      outputs.push({ ...tensor, shape: [...prefix, ...tensor.shape], data: concatBytes(parts) });
    }
  }
  return { inputs, outputs, steps: [...steps] };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Requests in perf_analyzer's order: the j-th takes steps j*N .. j*N+N-1
 * (wrapping), so the cycle repeats after steps / gcd(steps, N) requests.
 */
export function batchSteps(
  steps: readonly DataStep[],
  options: { batchSize: number; batched: boolean },
): Batch[] {
  const n = steps.length;
  const size = options.batchSize;
  return Array.from({ length: n / gcd(n, size) }, (_, j) =>
    makeBatch(
      Array.from({ length: size }, (_, k) => steps[(j * size + k) % n]),
      options,
    ));
}
