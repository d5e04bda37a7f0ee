/**
 * A Triton model repository directory as the reference server's models: each
 * model's config.pbtxt, or the `config` override of a repository API load (its
 * JSON form), becomes a simulated model with the configuration's tensors,
 * instance count, max_batch_size and dynamic batching. The latency is the
 * identity backend's `execute_delay_ms` parameter; a `bls_models` parameter
 * ("a,b") makes it a BLS model calling those models by name in order, as a
 * Python model's BLS code would (this server has no Python to run).
 */
import {
  type ConfigMessage,
  ConfigSyntaxError,
  type ModelConfig as TritonConfig,
  parseModelConfig as parseTritonConfig,
} from "../protocol/model_config.ts";
import type { Datatype } from "../types/datatype.ts";
import type { ModelConfig, TensorConfig } from "./config_types.ts";
import { ServerError } from "./errors.ts";

/** The model's versions: its numeric subdirectories, oldest first (Triton's version folders). */
function versionsOf(directory: string): string[] {
  const versions: string[] = [];
  for (const entry of Deno.readDirSync(directory)) {
    if (entry.isDirectory && /^[1-9][0-9]*$/.test(entry.name)) versions.push(entry.name);
  }
  return versions.sort((a, b) => Number(a) - Number(b));
}

function parameter(config: TritonConfig, key: string): string | undefined {
  const value = (config.parameters?.[key] as ConfigMessage | undefined)?.string_value;
  return value === undefined ? undefined : String(value);
}

function tensors(list: unknown): TensorConfig[] {
  return (Array.isArray(list) ? list as ConfigMessage[] : []).map((t) => {
    const type = String(t.data_type ?? "TYPE_INVALID").replace(/^TYPE_/, "");
    return {
      name: String(t.name),
      datatype: (type === "STRING" ? "BYTES" : type) as Datatype,
      dims: (Array.isArray(t.dims) ? t.dims : []).map(Number),
    };
  });
}

/** The simulated model a Triton configuration describes. */
export function simulatedModel(
  name: string,
  config: TritonConfig,
  versions: string[],
): ModelConfig {
  const instances = (config.instance_group ?? []).reduce(
    (n, g) => n + Number(g.count ?? 1),
    0,
  );
  const batching = config.dynamic_batching;
  const sequence = config.sequence_batching;
  const calls = parameter(config, "bls_models");
  const model: ModelConfig = {
    name,
    versions,
    platform: config.platform || config.backend || "simulated",
    max_batch_size: Number(config.max_batch_size ?? 0),
    inputs: tensors(config.input),
    outputs: tensors(config.output),
    kind: calls === undefined ? "identity" : "bls",
    compute_ms: Number(parameter(config, "execute_delay_ms") ?? 0),
    instances: Math.max(instances, 1),
  };
  if (calls !== undefined) model.bls_models = calls.split(",").map((m) => m.trim());
  if (batching !== undefined) {
    const preferred = batching.preferred_batch_size;
    model.dynamic_batching = {
      max_queue_delay_ms: Number(batching.max_queue_delay_microseconds ?? 0) / 1000,
      ...(Array.isArray(preferred) ? { preferred_batch_sizes: preferred.map(Number) } : {}),
    };
  }
  if (sequence !== undefined) {
    model.sequence_batching = {
      max_sequence_idle_ms: Number(sequence.max_sequence_idle_microseconds ?? 1_000_000) / 1000,
    };
  }
  return model;
}

/** Triton's answer to a load it can not even start: the model is not in the repository. */
function notPolled(name: string): ServerError {
  return new ServerError(
    `failed to load '${name}', failed to poll from model repository`,
    "internal",
  );
}

/** A model repository directory: the models it holds and their configurations. */
export class ModelDirectory {
  constructor(readonly path: string) {}

  /** The model directories' names, sorted as Triton's index is. */
  names(): string[] {
    const names: string[] = [];
    for (const entry of Deno.readDirSync(this.path)) {
      if (entry.isDirectory) names.push(entry.name);
    }
    return names.sort();
  }

  /**
   * The simulated model `name` is loaded as: its config.pbtxt, or `override`
   * (the configuration's JSON text) in its place. Throws Triton's ServerErrors.
   */
  model(name: string, override?: string): ModelConfig {
    const directory = `${this.path}/${name}`;
    let versions: string[];
    try {
      versions = versionsOf(directory);
    } catch {
      throw notPolled(name);
    }
    let config: TritonConfig;
    try {
      config = override === undefined
        ? parseTritonConfig(Deno.readTextFileSync(`${directory}/config.pbtxt`), name)
        : JSON.parse(override);
    } catch (error) {
      if (override !== undefined || error instanceof Deno.errors.NotFound) throw notPolled(name);
      throw new ServerError(
        `load failed for model '${name}': ${
          error instanceof ConfigSyntaxError ? error.message : (error as Error).message
        }`,
        "invalid_argument",
      );
    }
    if (typeof config !== "object" || config === null) throw notPolled(name);
    // Triton takes the name from the request; an override naming another model is refused.
    if (config.name !== undefined && config.name !== "" && config.name !== name) {
      throw notPolled(name);
    }
    if (versions.length === 0) {
      throw new ServerError(
        `load failed for model '${name}': at least one version must be available under the version policy of model '${name}'\n`,
        "invalid_argument",
      );
    }
    return simulatedModel(name, config, versions);
  }
}
