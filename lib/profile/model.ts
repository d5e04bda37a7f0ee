/**
 * The profiled model as perf_analyzer sees it: an ensemble is a sequence
 * model when one of its steps is (at any depth), and so is a BLS model when
 * one of its --bls-composing-models is, or one of their steps. Such a model
 * gets sequence ids and start and end flags, which the server passes on to
 * the sequence model inside (and without which it refuses every request).
 */
import type { InferenceClient } from "../protocol/types.ts";
import type { ModelInfo } from "../types/model.ts";

/** A model named by name and version ("" for the server's choice). */
export interface ModelRef {
  name: string;
  version: string;
}

/**
 * The model's information, a sequence model when a composing model is;
 * composing models' configurations are read until one is found.
 */
export async function discoverModel(
  client: InferenceClient,
  options: { model: ModelRef; composing: readonly ModelRef[] },
): Promise<ModelInfo> {
  const model = await client.modelInfo(options.model.name, options.model.version);
  if (model.sequence) return model;
  const steps = (info: ModelInfo) => info.composingModels.map((name) => ({ name, version: "" }));
  const pending: ModelRef[] = [...steps(model), ...options.composing];
  const seen = new Set([model.name]);
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    if (seen.has(next.name)) continue;
    seen.add(next.name);
    const info = await client.modelInfo(next.name, next.version);
    if (info.sequence) return { ...model, sequence: true };
    pending.push(...steps(info));
  }
  return model;
}
