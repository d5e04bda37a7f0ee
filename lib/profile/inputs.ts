/**
 * Builds the requests of a run from the model's metadata and the input
 * options. Every problem is an InputError naming the tensor and what is
 * wrong, raised before any load is sent.
 */
import { generateTensor } from "../input/generate.ts";
import type { InferRequest, ModelInfo, Tensor, TensorSpec } from "../protocol/types.ts";

/** Input data that does not fit the model (exit code 99, before any load). */
export class InputError extends Error {
  override name = "InputError";
}

export interface InputOptions {
  batchSize: number;
  shapes: Map<string, number[]>;
  /** "random" or "zero"; the first one applies to every input. */
  inputData: string[];
  stringLength: number;
  stringData?: string;
}

export function checkBatchSize(model: ModelInfo, batchSize: number): void {
  if (model.maxBatchSize === 0 && batchSize > 1) {
    throw new InputError(
      `Can not use batch size ${batchSize}: model "${model.name}" does not support batching (max_batch_size 0)`,
    );
  }
  if (model.maxBatchSize > 0 && batchSize > model.maxBatchSize) {
    throw new InputError(
      `Can not use batch size ${batchSize}: model "${model.name}" supports at most ${model.maxBatchSize}`,
    );
  }
}

/** The full shape of one input: --shape for variable dims, batch dimension prepended. */
export function resolveShape(
  spec: TensorSpec,
  options: { model: ModelInfo; batchSize: number; shapes: Map<string, number[]> },
): number[] {
  const given = options.shapes.get(spec.name);
  let dims = spec.dims;
  if (given) {
    const fits = given.length === spec.dims.length &&
      given.every((d, i) => spec.dims[i] === -1 || spec.dims[i] === d);
    if (!fits) {
      throw new InputError(
        `The supplied shape of ${spec.name} is incompatible with the model's input shape: --shape gave [${given}], the model has [${spec.dims}]`,
      );
    }
    dims = given;
  } else if (dims.includes(-1)) {
    throw new InputError(
      `${spec.name} needs to have its shape fully defined. See the --shape option.`,
    );
  }
  return options.model.maxBatchSize > 0 ? [options.batchSize, ...dims] : [...dims];
}

/** One request with data generated once, reused for every send (like perf_analyzer). */
export function buildRequests(model: ModelInfo, options: InputOptions): InferRequest[] {
  checkBatchSize(model, options.batchSize);
  for (const name of options.shapes.keys()) {
    if (!model.inputs.some((i) => i.name === name)) {
      throw new InputError(
        `Option --shape names "${name}", which is not an input of model "${model.name}"`,
      );
    }
  }
  const mode = options.inputData[0] === "zero" ? "zero" : "random";
  const inputs: Tensor[] = model.inputs.map((spec) =>
    generateTensor(
      {
        name: spec.name,
        datatype: spec.datatype,
        shape: resolveShape(spec, { ...options, model }),
      },
      { mode, stringLength: options.stringLength, stringData: options.stringData },
    )
  );
  return [{ inputs, outputs: model.outputs.map((o) => o.name) }];
}
