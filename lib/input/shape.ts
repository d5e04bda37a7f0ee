/**
 * The batch-1 shape of a tensor (without the batch dimension): from the
 * data, --shape or the model, checked against the model's dims.
 */
import type { TensorSpec } from "../types/tensor.ts";
import { elementCount } from "../types/datatype.ts";
import { InputError } from "./errors.ts";

/** Where a shape came from, named in messages. */
export type ShapeSource = "the data" | "--shape" | "the model" | "the data size";

export interface ResolvedShape {
  shape: number[];
  source: ShapeSource;
}

export interface ShapeOptions {
  /** Named in messages; default "input". */
  role?: "input" | "output";
  /** The shape given with the data ("shape" of a JSON tensor). */
  given?: readonly number[];
  /** The shape given with --shape. */
  option?: readonly number[];
  /** Elements in the data: fills in a single variable dim when nothing else gives it. */
  elements?: number;
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}

/** True when `shape` has the rank of `dims` and equals it wherever `dims` is fixed. */
export function fitsDims(shape: readonly number[], dims: readonly number[]): boolean {
  return shape.length === dims.length && shape.every((d, i) => dims[i] === -1 || dims[i] === d);
}

/**
 * Refuses `shape` where it does not fit `model` (the model's dims, or --shape
 * standing in for them), in perf_analyzer's words with where each came from.
 */
function checkFits(
  spec: TensorSpec,
  options: { shape: readonly number[]; model: readonly number[]; detail: string; role: string },
): void {
  const { shape, model, role } = options;
  if (!fitsDims(shape, model)) {
    throw new InputError(
      `The supplied shape of ${formatShape(shape)} for ${role} "${spec.name}" is incompatible ` +
        `with the model's ${role} shape of ${formatShape(model)} (${options.detail})`,
    );
  }
}

/** The single variable dim computed from an element count, when it divides exactly. */
function inferDim(dims: readonly number[], elements: number): number[] | undefined {
  if (dims.filter((d) => d === -1).length !== 1) return undefined;
  const fixed = elementCount(dims.filter((d) => d !== -1));
  if (fixed === 0 || elements % fixed !== 0) return undefined;
  return dims.map((d) => d === -1 ? elements / fixed : d);
}

/**
 * The shape of one tensor, in order of precedence: the data's own shape,
 * --shape, the model's dims when fixed, and (beyond perf_analyzer) a single
 * variable dim computed from the data size. As in perf_analyzer, --shape
 * stands for the model's shape: the data's shape must then equal it. Throws
 * an InputError when a shape does not fit or is not fully defined.
 */
export function resolveShape(spec: TensorSpec, options: ShapeOptions): ResolvedShape {
  const { given, option, elements } = options;
  const role = options.role ?? "input";
  const dims = formatShape(spec.dims);
  if (option !== undefined) {
    checkFits(spec, { shape: option, model: spec.dims, role, detail: "given with --shape" });
  }
  if (given !== undefined) {
    const standIn = option === undefined
      ? ""
      : `; --shape ${spec.name}:${option.join(",")} stands in for the model's dims ${dims}`;
    checkFits(spec, {
      shape: given,
      model: option ?? spec.dims,
      role,
      detail: `the shape given with the data${standIn}`,
    });
    return { shape: [...given], source: "the data" };
  }
  if (option !== undefined) return { shape: [...option], source: "--shape" };
  if (!spec.dims.includes(-1)) return { shape: [...spec.dims], source: "the model" };
  const inferred = elements === undefined ? undefined : inferDim(spec.dims, elements);
  if (inferred !== undefined) return { shape: inferred, source: "the data size" };
  throw new InputError(
    `The variable-sized tensor "${spec.name}" with model shape ${dims} ` +
      "needs to have its shape fully defined. See the --shape option.",
  );
}
