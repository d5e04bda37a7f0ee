/**
 * The model configurations a search measures: the model's own, Model
 * Analyzer's automatic brute search (instance count x max_batch_size with
 * dynamic batching) or every combination of `model_config_parameters`, and
 * the output model repository they are written to.
 */
import {
  type ConfigMessage,
  ConfigSyntaxError,
  type ConfigValue,
  formatModelConfig,
  type ModelConfig,
  parseModelConfig,
} from "../protocol/model_config.ts";
import { UsageError } from "../types/errors.ts";

export interface Variant {
  /** `<model>_config_<N>` or `<model>_config_default`. */
  name: string;
  /** The model it is a variant of. */
  model: string;
  /** The full configuration, named `name`. */
  config: ModelConfig;
  /** A brute search's point: instance count, and max_batch_size where the model batches. */
  coordinates?: { count: number; maxBatchSize?: number };
  /** An ensemble's: the variant of each composing model its steps call, loaded with it. */
  composing?: Variant[];
  /** A BLS model's (bls.ts): `composing` are the models it calls, each under its own name. */
  bls?: true;
}

/** The model's config.pbtxt; a missing model or a file that does not parse is a UsageError. */
export function readModelConfig(repository: string, model: string): ModelConfig {
  const file = `${repository.replace(/\/+$/, "")}/${model}/config.pbtxt`;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new UsageError([
        `Model "${model}" is not in the model repository ${repository}: no ${file}`,
      ]);
    }
    throw new UsageError([`Can not read ${file}: ${(error as Error).message}`]);
  }
  try {
    return parseModelConfig(text, file);
  } catch (error) {
    if (error instanceof ConfigSyntaxError) throw new UsageError([error.message]);
    throw error;
  }
}

/** Whether Triton may batch this model's requests with the dynamic batcher. */
export function canBatch(config: ModelConfig): boolean {
  return (config.max_batch_size ?? 0) > 0 && config.sequence_batching === undefined &&
    config.ensemble_scheduling === undefined;
}

function named(model: string, config: ModelConfig, suffix: string): Variant {
  const name = `${model}_config_${suffix}`;
  return { name, model, config: { ...config, name } };
}

/** The instance kind of the model's first group; KIND_CPU where none is given (no GPU assumed). */
function instanceKind(config: ModelConfig): ConfigValue {
  return config.instance_group?.[0]?.kind ?? "KIND_CPU";
}

export interface BruteRanges {
  instanceCounts: readonly number[];
  maxBatchSizes: readonly number[];
  /** Model Analyzer's cpu_only: KIND_CPU instances whatever the model's kind. */
  cpuOnly?: boolean;
}

/**
 * The model's own configuration, then one variant per instance count and,
 * where the model batches, per max_batch_size with dynamic batching on.
 */
export function bruteVariants(model: string, base: ModelConfig, ranges: BruteRanges): Variant[] {
  const variants = [named(model, base, "default")];
  const batching = canBatch(base);
  const kind = ranges.cpuOnly ? "KIND_CPU" : instanceKind(base);
  for (const count of ranges.instanceCounts) {
    for (const maxBatchSize of batching ? ranges.maxBatchSizes : [undefined]) {
      const config: ModelConfig = { ...base, instance_group: [{ count, kind }] };
      if (maxBatchSize !== undefined) {
        config.max_batch_size = maxBatchSize;
        config.dynamic_batching = base.dynamic_batching ?? {};
      }
      variants.push({
        ...named(model, config, String(variants.length - 1)),
        coordinates: { count, ...(maxBatchSize === undefined ? {} : { maxBatchSize }) },
      });
    }
  }
  return variants;
}

/** The models an ensemble's steps call, each once, in step order; empty for other models. */
export function ensembleSteps(config: ModelConfig): string[] {
  const steps = (config.ensemble_scheduling as ConfigMessage | undefined)?.step;
  const list = Array.isArray(steps) ? steps as ConfigMessage[] : [];
  return [...new Set(list.map((s) => String(s.model_name)))];
}

/** The ensemble's configuration with each step calling `names(model)` instead of `model`. */
export function renameSteps(config: ModelConfig, names: (model: string) => string): ModelConfig {
  const scheduling = config.ensemble_scheduling as ConfigMessage;
  const steps = (scheduling.step as ConfigMessage[]).map((s) => ({
    ...s,
    model_name: names(String(s.model_name)),
  }));
  return { ...config, ensemble_scheduling: { ...scheduling, step: steps } };
}

/**
 * An ensemble's search: its own configuration calling its composing models'
 * own, then one variant per combination of the composing models' searched
 * variants (not their own), each step calling its model's variant; the
 * ensemble's max_batch_size is at most its composing models' smallest, as
 * Triton requires.
 */
export function ensembleVariants(
  model: string,
  base: ModelConfig,
  composing: ReadonlyArray<{ name: string; variants: readonly Variant[] }>,
): Variant[] {
  const combine = (pick: (c: { name: string; variants: readonly Variant[] }) => Variant[]) =>
    composing.reduce<Variant[][]>(
      (done, c) => done.flatMap((members) => pick(c).map((v) => [...members, v])),
      [[]],
    );
  const own = combine((c) => c.variants.slice(0, 1));
  const searched = combine((c) => c.variants.length > 1 ? c.variants.slice(1) : [...c.variants]);
  return [...own, ...searched].map((members, i) => {
    const byModel = new Map(members.map((v) => [v.model, v]));
    const config = renameSteps(base, (step) => byModel.get(step)?.name ?? step);
    const batches = members.map((v) => v.config.max_batch_size ?? 0);
    if ((config.max_batch_size ?? 0) > 0 && batches.every((b) => b > 0)) {
      config.max_batch_size = Math.min(Number(config.max_batch_size), ...batches);
    }
    return {
      ...named(model, config, i === 0 ? "default" : String(i - 1)),
      composing: members,
    };
  });
}

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

const isObject = (v: Plain): v is { [key: string]: Plain } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Every value a `model_config_parameters` entry stands for: a list of
 * scalars (or of lists, as `preferred_batch_size: [[4, 8]]`) is swept; a
 * mapping or a list of mappings sweeps each of its fields.
 */
export function expand(value: Plain): Plain[] {
  if (isObject(value)) {
    return Object.entries(value).reduce<Array<{ [key: string]: Plain }>>(
      (done, [key, v]) => done.flatMap((o) => expand(v).map((x) => ({ ...o, [key]: x }))),
      [{}],
    );
  }
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isObject)) {
      return value.reduce<Plain[][]>(
        (done, item) => done.flatMap((list) => expand(item).map((x) => [...list, x])),
        [[]],
      );
    }
    return value;
  }
  return [value];
}

/** `base` with `change` laid over it: mappings merge field by field, anything else replaces. */
export function overlay(base: ConfigValue | undefined, change: Plain): ConfigValue {
  if (isObject(change) && base !== undefined && typeof base === "object" && !Array.isArray(base)) {
    const merged: ConfigMessage = { ...base };
    for (const [key, value] of Object.entries(change)) merged[key] = overlay(base[key], value);
    return merged;
  }
  return change as ConfigValue;
}

/**
 * The model's own configuration, then one variant per combination of
 * `parameters` (Model Analyzer's model_config_parameters), each checked by
 * writing and reading it: a value of the wrong type is a UsageError.
 */
export function manualVariants(
  model: string,
  base: ModelConfig,
  parameters: { [key: string]: Plain },
): Variant[] {
  const variants = [named(model, base, "default")];
  for (const combination of expand(parameters) as Array<{ [key: string]: Plain }>) {
    const config = overlay(base, combination) as ModelConfig;
    const variant = named(model, config, String(variants.length - 1));
    try {
      parseModelConfig(formatModelConfig(variant.config), `${variant.name}/config.pbtxt`);
    } catch (error) {
      if (!(error instanceof ConfigSyntaxError)) throw error;
      throw new UsageError([
        `Invalid model_config_parameters of "${model}": ${error.why} (variant ${
          JSON.stringify(combination)
        })`,
      ]);
    }
    variants.push(variant);
  }
  return variants;
}

/**
 * Writes a model directory: `config` as config.pbtxt beside links to the
 * source model's other entries (its version folders), which Triton follows.
 */
export function writeModelDirectory(
  directory: string,
  options: { source: string; config: ModelConfig; copy?: boolean },
): void {
  Deno.mkdirSync(directory, { recursive: true });
  Deno.writeTextFileSync(`${directory}/config.pbtxt`, formatModelConfig(options.config));
  for (const entry of Deno.readDirSync(options.source)) {
    if (entry.name === "config.pbtxt") continue;
    const from = Deno.realPathSync(`${options.source}/${entry.name}`);
    if (options.copy) copyTree(from, `${directory}/${entry.name}`);
    else Deno.symlinkSync(from, `${directory}/${entry.name}`);
  }
}

function copyTree(from: string, to: string): void {
  if (!Deno.statSync(from).isDirectory) return Deno.copyFileSync(from, to);
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/**
 * Prepares the output model repository: refused when it exists unless
 * `override` (then emptied). Throws UsageError.
 */
export function prepareOutputRepository(path: string, options: { override: boolean }): void {
  let exists = false;
  try {
    exists = Deno.statSync(path) !== undefined;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (exists && !options.override) {
    throw new UsageError([
      `The output model repository ${path} exists: remove it, choose another --output-model-repository-path, or give --override-output-model-repository`,
    ]);
  }
  if (exists) Deno.removeSync(path, { recursive: true });
  Deno.mkdirSync(path, { recursive: true });
}

/**
 * The best variant as a ready model directory, `<output>/<model>_best`:
 * its configuration without the variant's name (Triton takes the directory's)
 * beside a copy of the model's files. Returns the directory.
 */
export function writeBestDirectory(
  options: { outputRepository: string; modelRepository: string; variant: Variant },
): string {
  const directory = `${options.outputRepository}/${options.variant.model}_best`;
  try {
    Deno.removeSync(directory, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const { variant } = options;
  // An ensemble's best calls its composing models by their own names, each in its <model>_best
  // (as a BLS model's code does).
  const { name: _, ...config } = variant.composing && !variant.bls
    ? renameSteps(
      variant.config,
      (step) => variant.composing!.find((c) => c.name === step)?.model ?? step,
    )
    : variant.config;
  writeModelDirectory(directory, {
    source: `${options.modelRepository}/${variant.model}`,
    config,
    copy: true,
  });
  for (const member of variant.composing ?? []) {
    writeBestDirectory({ ...options, variant: member });
  }
  return directory;
}

/** The first field (a path: `instance_group[0].count`) where two values differ, with both. */
function firstDifference(
  a: unknown,
  b: unknown,
  path: string,
): { field: string; before: unknown; after: unknown } | undefined {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  const container = (v: unknown) => typeof v === "object" && v !== null;
  if (container(a) && container(b) && Array.isArray(a) === Array.isArray(b)) {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
      const field = Array.isArray(a) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      const found = firstDifference(x[key], y[key], field);
      if (found) return found;
    }
  }
  return { field: path, before: a, after: b };
}

const shortJson = (value: unknown) => {
  if (value === undefined) return "not set";
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

/**
 * Why a checkpoint's models' own configurations (config.pbtxt texts, in
 * `models` order) are not today's, in one line:
 * `config.pbtxt of delay: max_batch_size 4 (now 8)`.
 */
export function modelConfigChange(
  models: readonly string[],
  stored: unknown,
  now: unknown,
): string {
  const before = Array.isArray(stored) ? stored.map(String) : [];
  const after = Array.isArray(now) ? now.map(String) : [];
  for (let i = 0; i < Math.max(before.length, after.length); i++) {
    if (before[i] === after[i]) continue;
    const name = models[i] ?? `model ${i + 1}`;
    if (before[i] === undefined || after[i] === undefined) {
      return `config.pbtxt of ${name}: ${
        before[i] === undefined ? "not in the checkpoint" : "gone"
      }`;
    }
    const change = firstDifference(parseModelConfig(before[i]!), parseModelConfig(after[i]!), "")!;
    return `config.pbtxt of ${name}: ${change.field || "the whole file"} ${
      shortJson(change.before)
    } (now ${shortJson(change.after)})`;
  }
  return "config.pbtxt unchanged";
}
