/** What a server says about itself and a model: metadata and cumulative statistics. */
import type { TensorSpec } from "./tensor.ts";

/** What the load generator needs to know about a model, merged from metadata and config. */
export interface ModelInfo {
  name: string;
  version: string;
  platform: string;
  versions: string[];
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  /** 0 when the model does not batch. */
  maxBatchSize: number;
  decoupled: boolean;
  sequence: boolean;
  /** Names of composing models for ensembles, from ensemble_scheduling.step. */
  composingModels: string[];
  responseCache: boolean;
}

export interface ServerInfo {
  name: string;
  version: string;
  extensions: string[];
}

/** Cumulative duration statistic as in the statistics extension. */
export interface StatDuration {
  count: number;
  ns: number;
}

export interface ModelStatistics {
  name: string;
  version: string;
  inferenceCount: number;
  executionCount: number;
  success: StatDuration;
  fail: StatDuration;
  queue: StatDuration;
  computeInput: StatDuration;
  computeInfer: StatDuration;
  computeOutput: StatDuration;
  cacheHit: StatDuration;
  cacheMiss: StatDuration;
}

/** `inputs` with those named in `optional` (the configuration's `optional: true`) marked so. */
export function markOptional(inputs: TensorSpec[], optional: ReadonlySet<string>): TensorSpec[] {
  if (optional.size === 0) return inputs;
  return inputs.map((spec) => optional.has(spec.name) ? { ...spec, optional: true } : spec);
}
