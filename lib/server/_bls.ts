/** A BLS model's calls: one request through the models it calls by name, in order. */
import type { Tensor } from "../types/tensor.ts";
import type { ModelSpec } from "./config.ts";
import { ServerError } from "./errors.ts";

/** What a BLS call needs of a called model (model.ts's SimulatedModel). */
interface Callee {
  readonly spec: ModelSpec;
  infer(request: {
    id: string;
    inputs: readonly Tensor[];
    outputs: readonly string[];
    arrival: number;
  }): Promise<Tensor[]>;
}

function missing(message: string): ServerError {
  return new ServerError(message, "internal");
}

/**
 * Sends the request through `spec.blsModels`, each call scheduled by the
 * called model (looked up when it is made, so a reloaded model's new
 * configuration applies); each step's outputs are the next one's inputs by
 * position, the last step's the BLS model's `outputs` (indexes).
 */
export async function blsCall(
  spec: ModelSpec,
  options: {
    resolve: (name: string) => Callee;
    /** The calling model's clock. */
    now: () => number;
    job: { request: { id: string }; inputs: readonly Tensor[]; outputs: readonly number[] };
  },
): Promise<Tensor[]> {
  const { job } = options;
  let tensors: readonly Tensor[] = job.inputs;
  for (const name of spec.blsModels!) {
    let model: Callee;
    try {
      model = options.resolve(name);
    } catch (error) {
      // The BLS model's execute() fails with the call's error: an internal error of the model.
      throw missing((error as Error).message);
    }
    const inputs = model.spec.inputs.map((input, i) => {
      const tensor = tensors[i];
      if (tensor === undefined) {
        throw missing(
          `BLS model '${spec.name}' has no tensor for input '${input.name}' of model '${name}'`,
        );
      }
      return { ...tensor, name: input.name };
    });
    tensors = await model.infer({
      id: job.request.id,
      inputs,
      outputs: [],
      arrival: options.now(),
    });
  }
  return job.outputs.map((o) => {
    const tensor = tensors[o];
    const name = spec.outputs[o].name;
    if (tensor === undefined) {
      throw missing(`BLS model '${spec.name}' has no tensor for output '${name}'`);
    }
    return { ...tensor, name };
  });
}
