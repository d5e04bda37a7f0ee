/**
 * Model configuration of the reference server: what each simulated model
 * looks like (tensors, batching) and how it behaves (outputs, timing), so tests
 * know the ground truth.
 */
import { parse } from "yaml";
import { type Datatype, isDatatype } from "../types/datatype.ts";
import { checkFaults, faultsToConfig } from "./faults.ts";

import {
  BEHAVIOUR_KINDS,
  type BehaviourKind,
  type ComputeDistribution,
  DEFAULT_SEQUENCE_IDLE_MS,
  type DistributionKind,
  DISTRIBUTIONS,
  LLM_ERROR_KINDS,
  type LlmErrorKind,
  type ModelConfig,
  ModelConfigError,
  type ModelSpec,
  type TensorConfig,
} from "./config_types.ts";

export * from "./config_types.ts";
export { DEFAULT_MODELS } from "./default_models.ts";

const FIELDS = new Set([
  "name",
  "versions",
  "platform",
  "max_batch_size",
  "inputs",
  "outputs",
  "kind",
  "compute_ms",
  "compute_input_ms",
  "compute_output_ms",
  "instances",
  "dynamic_batching",
  "sequence_batching",
  "decoupled",
  "llm",
  "faults",
  "bls_models",
]);
const TENSOR_FIELDS = new Set(["name", "datatype", "dims"]);
const DISTRIBUTION_FIELDS = new Set(["dist", "mean_ms", "stddev_ms", "min_ms", "max_ms"]);
const BATCHING_FIELDS = new Set(["max_queue_delay_ms", "preferred_batch_sizes"]);
const SEQUENCE_FIELDS = new Set(["max_sequence_idle_ms", "string_ids"]);
const DECOUPLED_FIELDS = new Set(["responses", "gap_ms"]);
const LLM_FIELDS = new Set([
  "ttft_ms",
  "itl_ms",
  "output_tokens",
  "close_after_stream",
  "itl_jitter_ms",
  "output_tokens_stddev",
  "usage",
  "error_rate",
  "error_after_tokens",
  "error_kind",
  "chat_template_tokens",
  "reasoning_tokens",
]);
/** llama.cpp's chat template tokens around one user message (../shared/llama's model). */
const DEFAULT_CHAT_TEMPLATE_TOKENS = 28;
/** The tensors of an LLM model that leaves them out. */
const TEXT_INPUTS: readonly TensorConfig[] = [{ name: "text_input", datatype: "BYTES", dims: [1] }];
const TEXT_OUTPUTS: readonly TensorConfig[] = [
  { name: "text_output", datatype: "BYTES", dims: [1] },
];
/** Model names appear in URL paths unescaped. */
const NAME = /^[A-Za-z0-9_.-]+$/;
const VERSION = /^[1-9][0-9]*$/;
const ARITHMETIC: ReadonlySet<Datatype> = new Set<Datatype>([
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "FP32",
  "FP64",
]);

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks one model, collecting every problem prefixed with the model and the field. */
class ModelChecker {
  readonly problems: string[] = [];
  readonly #label: string;

  constructor(readonly value: Record<string, unknown>, index: number) {
    this.#label = typeof value.name === "string"
      ? `models[${index}] ("${value.name}")`
      : `models[${index}]`;
  }

  add(field: string, message: string): void {
    this.problems.push(`${this.#label}: field "${field}" ${message}`);
  }

  unknownFields(value: Record<string, unknown>, where: { at: string; known: ReadonlySet<string> }) {
    for (const key of Object.keys(value)) {
      if (!where.known.has(key)) {
        this.add(where.at === "" ? key : `${where.at}.${key}`, "is not a known field");
      }
    }
  }

  /** A finite number >= 0; undefined when absent or reported. */
  number(field: string, value: unknown): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      this.add(field, `must be a number >= 0, got ${show(value)}`);
      return undefined;
    }
    return value;
  }

  /** An integer >= min; undefined when absent or reported. */
  integer(field: string, { value, min }: { value: unknown; min: number }): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
      this.add(field, `must be an integer >= ${min}, got ${show(value)}`);
      return undefined;
    }
    return value;
  }

  tensors(field: "inputs" | "outputs"): TensorConfig[] {
    const value = this.value[field];
    if (value === undefined && this.value.llm !== undefined) {
      return (field === "inputs" ? TEXT_INPUTS : TEXT_OUTPUTS).map((t) => ({
        ...t,
        dims: [...t.dims],
      }));
    }
    if (!Array.isArray(value) || value.length === 0) {
      this.add(field, `must be a non-empty list of tensors, got ${show(value)}`);
      return [];
    }
    const tensors: TensorConfig[] = [];
    const seen = new Set<string>();
    value.forEach((t, i) => {
      const at = `${field}[${i}]`;
      if (!isRecord(t)) {
        this.add(at, `must be a {name, datatype, dims} mapping, got ${show(t)}`);
        return;
      }
      this.unknownFields(t, { at, known: TENSOR_FIELDS });
      let ok = true;
      if (typeof t.name !== "string" || t.name === "") {
        this.add(`${at}.name`, `must be a non-empty string, got ${show(t.name)}`);
        ok = false;
      } else if (seen.has(t.name)) {
        this.add(`${at}.name`, `repeats the tensor name "${t.name}"`);
        ok = false;
      } else {
        seen.add(t.name);
      }
      if (typeof t.datatype !== "string" || !isDatatype(t.datatype)) {
        this.add(
          `${at}.datatype`,
          `must be a KServe v2 datatype (e.g. "INT32"), got ${show(t.datatype)}`,
        );
        ok = false;
      }
      if (
        !Array.isArray(t.dims) ||
        !t.dims.every((d) => Number.isInteger(d) && (d > 0 || d === -1))
      ) {
        this.add(`${at}.dims`, `must be a list of positive integers or -1, got ${show(t.dims)}`);
        ok = false;
      }
      if (ok) {
        tensors.push({
          name: t.name as string,
          datatype: t.datatype as Datatype,
          dims: [...(t.dims as number[])],
        });
      }
    });
    return tensors.length === value.length ? tensors : [];
  }

  versions(): string[] {
    const value = this.value.versions;
    if (value === undefined) return ["1"];
    const versions = Array.isArray(value) ? value.map((v) => String(v)) : [];
    if (versions.length === 0 || !versions.every((v) => VERSION.test(v))) {
      this.add("versions", `must be a non-empty list of positive integers, got ${show(value)}`);
      return ["1"];
    }
    if (new Set(versions).size !== versions.length) {
      this.add("versions", `must not repeat a version, got ${show(value)}`);
    }
    return versions;
  }

  compute(): number | ComputeDistribution {
    const value = this.value.compute_ms;
    if (value === undefined || typeof value === "number") {
      return this.number("compute_ms", value) ?? 0;
    }
    if (!isRecord(value)) {
      this.add("compute_ms", `must be milliseconds or a distribution mapping, got ${show(value)}`);
      return 0;
    }
    this.unknownFields(value, { at: "compute_ms", known: DISTRIBUTION_FIELDS });
    const dist = value.dist as DistributionKind;
    if (!(DISTRIBUTIONS as readonly unknown[]).includes(dist)) {
      this.add("compute_ms.dist", `must be one of ${DISTRIBUTIONS.join(", ")}, got ${show(dist)}`);
    }
    if (value.mean_ms === undefined) this.add("compute_ms.mean_ms", "is required");
    const out: ComputeDistribution = {
      dist,
      mean_ms: this.number("compute_ms.mean_ms", value.mean_ms) ?? 0,
    };
    if (value.stddev_ms !== undefined) {
      if (dist === "exponential") {
        this.add("compute_ms.stddev_ms", 'is not used by the "exponential" distribution');
      }
      out.stddev_ms = this.number("compute_ms.stddev_ms", value.stddev_ms);
    } else if (dist === "normal") {
      this.add("compute_ms.stddev_ms", 'is required by the "normal" distribution');
    }
    const min = this.number("compute_ms.min_ms", value.min_ms);
    const max = this.number("compute_ms.max_ms", value.max_ms);
    if (min !== undefined) out.min_ms = min;
    if (max !== undefined) out.max_ms = max;
    if (min !== undefined && max !== undefined && min > max) {
      this.add("compute_ms.max_ms", `must be >= min_ms (${min}), got ${max}`);
    }
    return out;
  }

  batching(maxBatchSize: number): ModelSpec["dynamicBatching"] {
    const value = this.value.dynamic_batching;
    if (value === undefined) return undefined;
    if (!isRecord(value)) {
      this.add("dynamic_batching", `must be a mapping, got ${show(value)}`);
      return undefined;
    }
    this.unknownFields(value, { at: "dynamic_batching", known: BATCHING_FIELDS });
    if (maxBatchSize === 0) this.add("dynamic_batching", "needs max_batch_size > 0");
    if (value.max_queue_delay_ms === undefined) {
      this.add("dynamic_batching.max_queue_delay_ms", "is required");
    }
    const maxQueueDelayMs =
      this.number("dynamic_batching.max_queue_delay_ms", value.max_queue_delay_ms) ?? 0;
    const preferred = value.preferred_batch_sizes ?? [];
    if (
      !Array.isArray(preferred) ||
      !preferred.every((p) => Number.isInteger(p) && p >= 1 && p <= Math.max(maxBatchSize, 1))
    ) {
      this.add(
        "dynamic_batching.preferred_batch_sizes",
        `must be a list of integers in [1, ${maxBatchSize}], got ${show(preferred)}`,
      );
      return { maxQueueDelayMs, preferredBatchSizes: [] };
    }
    return {
      maxQueueDelayMs,
      preferredBatchSizes: [...new Set(preferred as number[])].sort((a, b) => a - b),
    };
  }

  sequence(): ModelSpec["sequence"] {
    const value = this.value.sequence_batching;
    if (value === undefined) return undefined;
    if (!isRecord(value)) {
      this.add("sequence_batching", `must be a mapping, got ${show(value)}`);
      return undefined;
    }
    this.unknownFields(value, { at: "sequence_batching", known: SEQUENCE_FIELDS });
    const idle = this.number("sequence_batching.max_sequence_idle_ms", value.max_sequence_idle_ms);
    const stringIds = value.string_ids ?? false;
    if (typeof stringIds !== "boolean") {
      this.add("sequence_batching.string_ids", `must be true or false, got ${show(stringIds)}`);
    }
    return { maxSequenceIdleMs: idle ?? DEFAULT_SEQUENCE_IDLE_MS, stringIds: stringIds === true };
  }

  decoupled(): ModelSpec["decoupled"] {
    const value = this.value.decoupled;
    if (value === undefined) return undefined;
    if (!isRecord(value)) {
      this.add("decoupled", `must be a {responses, gap_ms} mapping, got ${show(value)}`);
      return undefined;
    }
    this.unknownFields(value, { at: "decoupled", known: DECOUPLED_FIELDS });
    if (value.responses === undefined) this.add("decoupled.responses", "is required");
    return {
      responses: this.integer("decoupled.responses", { value: value.responses, min: 0 }) ?? 0,
      gapMs: this.number("decoupled.gap_ms", value.gap_ms) ?? 0,
    };
  }

  llm(): ModelSpec["llm"] {
    const value = this.value.llm;
    if (value === undefined) return undefined;
    if (!isRecord(value)) {
      this.add("llm", `must be a {ttft_ms, itl_ms, output_tokens} mapping, got ${show(value)}`);
      return undefined;
    }
    this.unknownFields(value, { at: "llm", known: LLM_FIELDS });
    for (const field of ["ttft_ms", "itl_ms", "output_tokens"]) {
      if (value[field] === undefined) this.add(`llm.${field}`, "is required");
    }
    const flag = (field: string, fallback: boolean): boolean => {
      const v = value[field] ?? fallback;
      if (typeof v !== "boolean") this.add(`llm.${field}`, `must be true or false, got ${show(v)}`);
      return v === true;
    };
    const itlMs = this.number("llm.itl_ms", value.itl_ms) ?? 0;
    const itlJitterMs = this.number("llm.itl_jitter_ms", value.itl_jitter_ms) ?? 0;
    if (itlJitterMs > itlMs / 2) {
      this.add("llm.itl_jitter_ms", `must be at most half of itl_ms (${itlMs / 2})`);
    }
    const errorRate = this.number("llm.error_rate", value.error_rate) ?? 0;
    if (errorRate > 1) this.add("llm.error_rate", `must be at most 1, got ${errorRate}`);
    const errorKind = value.error_kind ?? "event";
    if (!(LLM_ERROR_KINDS as readonly unknown[]).includes(errorKind)) {
      this.add(
        "llm.error_kind",
        `must be one of ${LLM_ERROR_KINDS.join(", ")}, got ${show(errorKind)}`,
      );
    }
    return {
      ttftMs: this.number("llm.ttft_ms", value.ttft_ms) ?? 0,
      itlMs,
      itlJitterMs,
      outputTokens: this.integer("llm.output_tokens", { value: value.output_tokens, min: 1 }) ?? 1,
      outputTokensStddev: this.number("llm.output_tokens_stddev", value.output_tokens_stddev) ?? 0,
      closeAfterStream: flag("close_after_stream", false),
      usage: flag("usage", true),
      errorRate,
      errorAfterTokens:
        this.integer("llm.error_after_tokens", { value: value.error_after_tokens, min: 0 }) ?? 1,
      errorKind: errorKind as LlmErrorKind,
      chatTemplateTokens: this.integer("llm.chat_template_tokens", {
        value: value.chat_template_tokens,
        min: 0,
      }) ?? DEFAULT_CHAT_TEMPLATE_TOKENS,
      reasoningTokens:
        this.integer("llm.reasoning_tokens", { value: value.reasoning_tokens, min: 0 }) ?? 0,
    };
  }

  bls(kind: unknown): Pick<ModelSpec, "blsModels"> {
    const value = this.value.bls_models;
    if (kind !== "bls") {
      if (value !== undefined) this.add("bls_models", 'is only for kind "bls"');
      return {};
    }
    if (
      !Array.isArray(value) || value.length === 0 ||
      !value.every((m) => typeof m === "string" && NAME.test(m))
    ) {
      this.add("bls_models", `must be a non-empty list of model names, got ${show(value)}`);
      return {};
    }
    return { blsModels: [...value] };
  }

  behaviour(spec: ModelSpec): void {
    const { inputs, outputs } = spec;
    if (inputs.length === 0 || outputs.length === 0) return;
    switch (spec.kind) {
      case "add_sub": {
        if (inputs.length !== 2) {
          this.add("inputs", `must list 2 tensors for "add_sub", got ${inputs.length}`);
        }
        if (outputs.length !== 2) {
          this.add("outputs", `must list 2 tensors for "add_sub", got ${outputs.length}`);
        }
        const first = inputs[0];
        if (!ARITHMETIC.has(first.datatype)) {
          this.add("inputs[0].datatype", `must be an integer, FP32 or FP64 type for "add_sub"`);
        }
        if (first.dims.includes(-1)) this.add("inputs[0].dims", 'must be fixed for "add_sub"');
        const rest: Array<[string, TensorConfig]> = [
          ...inputs.slice(1).map((t, i): [string, TensorConfig] => [`inputs[${i + 1}]`, t]),
          ...outputs.map((t, i): [string, TensorConfig] => [`outputs[${i}]`, t]),
        ];
        for (const [at, t] of rest) {
          if (t.datatype !== first.datatype) {
            this.add(`${at}.datatype`, `must equal inputs[0].datatype ("${first.datatype}")`);
          }
          if (t.dims.join() !== first.dims.join()) {
            this.add(`${at}.dims`, `must equal inputs[0].dims ([${first.dims.join(",")}])`);
          }
        }
        break;
      }
      case "identity":
        if (outputs.length > inputs.length) {
          this.add("outputs", `must not outnumber inputs for "identity" (${inputs.length})`);
        }
        outputs.forEach((t, i) => {
          const input = inputs[i];
          if (input === undefined) return;
          if (t.datatype !== input.datatype) {
            this.add(
              `outputs[${i}].datatype`,
              `must equal inputs[${i}].datatype ("${input.datatype}")`,
            );
          }
          if (!sameDims(t.dims, input.dims)) {
            this.add(
              `outputs[${i}].dims`,
              `must match inputs[${i}].dims ([${input.dims.join(",")}])`,
            );
          }
        });
        break;
      case "accumulate": {
        if (spec.sequence === undefined) this.add("kind", '"accumulate" needs sequence_batching');
        if (inputs.length !== 1 || outputs.length !== 1) {
          this.add("inputs", 'must list 1 tensor, and outputs 1 tensor, for "accumulate"');
          break;
        }
        const [input, output] = [inputs[0], outputs[0]];
        if (!ARITHMETIC.has(input.datatype)) {
          this.add("inputs[0].datatype", 'must be an integer, FP32 or FP64 type for "accumulate"');
        }
        if (input.dims.includes(-1)) this.add("inputs[0].dims", 'must be fixed for "accumulate"');
        if (output.datatype !== input.datatype || output.dims.join() !== input.dims.join()) {
          this.add("outputs[0]", 'must have the datatype and dims of inputs[0] for "accumulate"');
        }
        break;
      }
      case "zeros":
        outputs.forEach((t, i) => {
          const source = inputs[Math.min(i, inputs.length - 1)];
          if (t.dims.includes(-1) && t.dims.length !== source.dims.length) {
            this.add(
              `outputs[${i}].dims`,
              `has -1 dims, so it must have the rank of input "${source.name}" ` +
                `(${source.dims.length})`,
            );
          }
        });
        break;
    }
  }

  /** The model with defaults filled in, or undefined when a problem was found. */
  check(): ModelSpec | undefined {
    const value = this.value;
    this.unknownFields(value, { at: "", known: FIELDS });
    if (typeof value.name !== "string" || !NAME.test(value.name)) {
      this.add(
        "name",
        `must be a non-empty string of letters, digits, "_", "." or "-", got ${show(value.name)}`,
      );
    }
    if (value.platform !== undefined && typeof value.platform !== "string") {
      this.add("platform", `must be a string, got ${show(value.platform)}`);
    }
    const kind = value.kind ?? (value.llm === undefined ? undefined : "identity");
    if (!(BEHAVIOUR_KINDS as readonly unknown[]).includes(kind)) {
      this.add("kind", `must be one of ${BEHAVIOUR_KINDS.join(", ")}, got ${show(value.kind)}`);
    }
    const maxBatchSize = this.integer("max_batch_size", { value: value.max_batch_size, min: 0 }) ??
      0;
    const spec: ModelSpec = {
      name: String(value.name),
      versions: this.versions(),
      platform: typeof value.platform === "string" ? value.platform : "simulated",
      maxBatchSize,
      inputs: this.tensors("inputs"),
      outputs: this.tensors("outputs"),
      kind: kind as BehaviourKind,
      compute: this.compute(),
      computeInputMs: this.number("compute_input_ms", value.compute_input_ms) ?? 0,
      computeOutputMs: this.number("compute_output_ms", value.compute_output_ms) ?? 0,
      instances: this.integer("instances", { value: value.instances, min: 1 }) ?? 1,
      dynamicBatching: this.batching(maxBatchSize),
      sequence: this.sequence(),
      decoupled: this.decoupled(),
      llm: this.llm(),
      faults: checkFaults(value.faults, (field, message) => this.add(field, message)),
      ...this.bls(kind),
    };
    if (this.problems.length === 0) this.behaviour(spec);
    return this.problems.length === 0 ? spec : undefined;
  }
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i] || d === -1 || b[i] === -1);
}

/**
 * Validates models given as data (a list, or `{models: [...]}` as in a file)
 * and fills in defaults. Throws one ModelConfigError listing every problem.
 */
export function resolveModelSpecs(value: unknown, source: string): ModelSpec[] {
  const list = isRecord(value) && Object.keys(value).length === 1 && "models" in value
    ? value.models
    : value;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ModelConfigError(source, [
      `must be a non-empty list of models or a mapping {models: [...]}, got ${show(list)}`,
    ]);
  }
  const problems: string[] = [];
  const specs: ModelSpec[] = [];
  const names = new Map<string, number>();
  list.forEach((model, i) => {
    if (!isRecord(model)) {
      problems.push(`models[${i}]: must be a mapping, got ${show(model)}`);
      return;
    }
    const checker = new ModelChecker(model, i);
    const spec = checker.check();
    problems.push(...checker.problems);
    if (spec !== undefined) specs.push(spec);
    const name = model.name;
    if (typeof name !== "string") return;
    const first = names.get(name);
    if (first === undefined) names.set(name, i);
    else {problems.push(
        `models[${i}] ("${name}"): field "name" repeats the name of models[${first}]`,
      );}
  });
  if (problems.length > 0) throw new ModelConfigError(source, problems);
  return specs;
}

function specToConfig(spec: ModelSpec): ModelConfig {
  const config: ModelConfig = {
    name: spec.name,
    versions: spec.versions,
    platform: spec.platform,
    max_batch_size: spec.maxBatchSize,
    inputs: spec.inputs,
    outputs: spec.outputs,
    kind: spec.kind,
    compute_ms: spec.compute,
    compute_input_ms: spec.computeInputMs,
    compute_output_ms: spec.computeOutputMs,
    instances: spec.instances,
  };
  if (spec.dynamicBatching !== undefined) {
    config.dynamic_batching = {
      max_queue_delay_ms: spec.dynamicBatching.maxQueueDelayMs,
      preferred_batch_sizes: spec.dynamicBatching.preferredBatchSizes,
    };
  }
  if (spec.sequence !== undefined) {
    config.sequence_batching = {
      max_sequence_idle_ms: spec.sequence.maxSequenceIdleMs,
      string_ids: spec.sequence.stringIds,
    };
  }
  if (spec.decoupled !== undefined) {
    config.decoupled = { responses: spec.decoupled.responses, gap_ms: spec.decoupled.gapMs };
  }
  if (spec.llm !== undefined) {
    const l = spec.llm;
    config.llm = {
      ttft_ms: l.ttftMs,
      itl_ms: l.itlMs,
      output_tokens: l.outputTokens,
      close_after_stream: l.closeAfterStream,
      itl_jitter_ms: l.itlJitterMs,
      output_tokens_stddev: l.outputTokensStddev,
      usage: l.usage,
      error_rate: l.errorRate,
      error_after_tokens: l.errorAfterTokens,
      error_kind: l.errorKind,
      chat_template_tokens: l.chatTemplateTokens,
      reasoning_tokens: l.reasoningTokens,
    };
  }
  if (spec.faults !== undefined) config.faults = faultsToConfig(spec.faults);
  if (spec.blsModels !== undefined) config.bls_models = spec.blsModels;
  return config;
}

/**
 * Validates models given as data (a list, or `{models: [...]}` as in a file).
 * Returns them with every default filled in; throws one ModelConfigError
 * listing every problem.
 */
export function validateModelConfigs(value: unknown, source: string): ModelConfig[] {
  return resolveModelSpecs(value, source).map(specToConfig);
}

/** Parses YAML or JSON text (JSON is YAML) holding model configurations. */
export function parseModelConfig(text: string, source: string): ModelConfig[] {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new ModelConfigError(source, [(error as Error).message.split("\n")[0]]);
  }
  return validateModelConfigs(value, source);
}

/** Reads a YAML or JSON model configuration file. */
export async function loadModelConfig(path: string): Promise<ModelConfig[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ModelConfigError(path, [`cannot be read: ${(error as Error).message}`]);
  }
  return parseModelConfig(text, path);
}
