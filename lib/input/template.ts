/**
 * `inferperf input-template`: an input-data JSON for a model, written from
 * its metadata, that `--input-data` takes as it is. One step gives every
 * input (zeros, false, or `--string-data` for BYTES) with its batch-1 shape;
 * `model_inputs` says what each input is (datatype, the model's dims, and
 * whether the configuration marks it optional, so that a step may leave it
 * out). perf_analyzer reads `data` and ignores the rest; so does inferperf.
 */
import { elementCount } from "../types/datatype.ts";
import { UsageError } from "../types/errors.ts";
import type { TensorSpec } from "../types/tensor.ts";
import { InputError } from "./errors.ts";
import { resolveShape } from "./shape.ts";

/** The documentation field of a template, which the JSON data reader accepts and ignores. */
export const TEMPLATE_FIELD = "model_inputs";

export interface TemplateOptions {
  /** --shape: the shapes of variable-sized inputs. */
  shapes: ReadonlyMap<string, readonly number[]>;
  /** --string-data: the value of each BYTES element ("" without it). */
  stringData?: string;
}

/** A JSON value of the template. */
type Json = string | number | boolean | Json[] | { [key: string]: Json };

function placeholder(spec: TensorSpec, options: TemplateOptions): Json {
  if (spec.datatype === "BYTES") return options.stringData ?? "";
  return spec.datatype === "BOOL" ? false : 0;
}

/**
 * The template of a model with `inputs`. A variable dim needs --shape: a
 * UsageError names each input without one (perf_analyzer's words), and a
 * --shape that does not fit the model's dims.
 */
export function inputTemplate(inputs: readonly TensorSpec[], options: TemplateOptions): Json {
  const described: Record<string, Json> = {};
  const step: Record<string, Json> = {};
  const errors: string[] = [];
  for (const spec of inputs) {
    let shape: number[];
    try {
      shape = resolveShape(spec, { option: options.shapes.get(spec.name) }).shape;
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      errors.push(error.message);
      continue;
    }
    described[spec.name] = {
      datatype: spec.datatype,
      dims: spec.dims,
      optional: spec.optional ?? false,
    };
    const value = placeholder(spec, options);
    step[spec.name] = {
      content: Array.from({ length: elementCount(shape) }, () => value),
      shape,
    };
  }
  if (errors.length > 0) throw new UsageError(errors);
  return { [TEMPLATE_FIELD]: described, data: [step] };
}

/** Short enough to stay on one line. */
const LINE = 80;

/** JSON on one line, with spaces after commas and colons. */
function inline(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(", ")}]`;
  if (typeof value !== "object") return JSON.stringify(value);
  const fields = Object.entries(value).map(([key, v]) => `${JSON.stringify(key)}: ${inline(v)}`);
  return `{ ${fields.join(", ")} }`;
}

/**
 * JSON with two-space indents; arrays of numbers, strings or booleans, and
 * values that fit in a short line, kept on one line.
 */
export function formatTemplate(value: Json, indent = ""): string {
  const short = inline(value);
  if (short.length + indent.length <= LINE) return short;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object")) return short;
    const inner = indent + "  ";
    return `[\n${value.map((v) => inner + formatTemplate(v, inner)).join(",\n")}\n${indent}]`;
  }
  if (typeof value === "object") {
    const inner = indent + "  ";
    const fields = Object.entries(value).map(([key, v]) =>
      `${inner}${JSON.stringify(key)}: ${formatTemplate(v, inner)}`
    );
    return fields.length === 0 ? "{}" : `{\n${fields.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}
