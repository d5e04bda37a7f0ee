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

function checkFits(
  spec: TensorSpec,
  shape: readonly number[],
  options: { source: ShapeSource; role: string },
): void {
  if (!fitsDims(shape, spec.dims)) {
    throw new InputError(
      `The supplied shape of ${formatShape(shape)} for ${options.role} "${spec.name}" (from ` +
        `${options.source}) is incompatible with the model's ${options.role} shape of ` +
        formatShape(spec.dims),
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
 * variable dim computed from the data size. Throws an InputError when the
 * shape does not fit the model or is not fully defined.
 */
export function resolveShape(spec: TensorSpec, options: ShapeOptions): ResolvedShape {
  const { given, option, elements } = options;
  const role = options.role ?? "input";
  if (given !== undefined) {
    checkFits(spec, given, { source: "the data", role });
    return { shape: [...given], source: "the data" };
  }
  if (option !== undefined) {
    checkFits(spec, option, { source: "--shape", role });
    return { shape: [...option], source: "--shape" };
  }
  if (!spec.dims.includes(-1)) return { shape: [...spec.dims], source: "the model" };
  const inferred = elements === undefined ? undefined : inferDim(spec.dims, elements);
  if (inferred !== undefined) return { shape: inferred, source: "the data size" };
  throw new InputError(
    `The variable-sized tensor "${spec.name}" with model shape ${formatShape(spec.dims)} ` +
      "needs to have its shape fully defined. See the --shape option.",
  );
}
