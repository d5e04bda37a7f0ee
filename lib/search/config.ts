/**
 * A model configuration search's options (--profile-models with
 * --model-repository, Model Analyzer's `profile`) -> a validated plan: the
 * models and their variants' settings, the launch mode, the concurrency
 * sweep, the objectives and constraints, and the options every point passes
 * on to a normal profile run.
 */
import { buildProfileConfig } from "../cli/config.ts";
import { optionDef, optionLabel, type RawOptions, type RawValue } from "../cli/options.ts";
import { dictOption, parseEnvironment, parseFlags } from "./settings.ts";
import { type Goals, parseGoals, type Settings } from "../sweep/mod.ts";
import { UsageError } from "../types/errors.ts";
import type { LoadMode } from "../types/results.ts";
import { type Objectives, parseObjectives } from "./objectives.ts";
import { checkFields, DEFAULT_SERVER_FIELDS, defaultInferenceFields } from "./fields.ts";
import { type BlsComposing, checkBls, parseBlsComposing } from "./bls.ts";

export type LaunchMode = "local" | "remote" | "c_api";

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

export interface SearchModel {
  name: string;
  /** Model Analyzer's model_config_parameters: a manual search. */
  configParameters?: { [key: string]: Plain };
  /** The concurrency values to sweep (parameters.concurrency), else powers of two. */
  concurrency?: number[];
  /** The request rates to sweep (parameters.request_rate): the model is swept by request rate. */
  requestRate?: number[];
  /** Client batch sizes (parameters.batch_sizes), default [1]. */
  batchSizes: number[];
  /** perf_analyzer_flags: options of every point's profile run. */
  flags?: Record<string, RawValue>;
  /** triton_server_environment of the local server. */
  environment?: Record<string, string>;
  /** cpu_only: the variants' instances are KIND_CPU whatever the model's configuration says. */
  cpuOnly?: boolean;
  /** weighting: the model's share when a concurrent search combines the models' scores (1). */
  weighting?: number;
  /** bls_composing_models: the model is a BLS model calling these, searched with it. */
  blsComposing?: BlsComposing[];
  objectives: Objectives;
  goals: Goals;
}

export interface OptunaSettings {
  /** optuna_min_trials / optuna_max_trials when given (Model Analyzer: 20, 200). */
  minTrials?: number;
  maxTrials?: number;
  /** min/max_percentage_of_search_space (5, 10), and whether they were given. */
  minPercentage: number;
  maxPercentage: number;
  minPercentageGiven: boolean;
  maxPercentageGiven: boolean;
  /** optuna_early_exit_threshold: trials without a better score that end the search (10). */
  earlyExit: number;
  seed: number;
  /** optuna_sampler: one joint Parzen estimator (multivariate) or one per parameter. */
  multivariate: boolean;
  /** use_concurrency_formula: the load is 2 x instances x max batch size, not searched. */
  concurrencyFormula: boolean;
  /** concurrency_sweep_disable: no sweep of the best configurations afterwards. */
  sweepDisable: boolean;
}

export interface SearchConfig {
  modelRepository: string;
  models: SearchModel[];
  outputRepository: string;
  override: boolean;
  launch: {
    mode: LaunchMode;
    serverPath: string;
    logFile?: string;
    flags: string[];
    http: string;
    grpc: string;
  };
  /** run_config_profile_models_concurrently_enable: the models measured together. */
  concurrent: boolean;
  /** --run-config-search-mode: every variant, hill climbing, or TPE-sampled points. */
  searchMode: "brute" | "quick" | "optuna";
  optuna: OptunaSettings;
  /** --run-config-search-disable: the model's own configuration only. */
  disabled: boolean;
  instanceCounts: number[];
  maxBatchSizes: number[];
  /** The default concurrency sweep: powers of two. */
  concurrencies: number[];
  /**
   * Models are swept by request rate (Model Analyzer's request_rate_search_enable, or
   * run_config_search_min/max_request_rate given), over these powers of two.
   */
  requestRateSearch: boolean;
  requestRates: number[];
  /** Steps of the binary search between a point within a latency constraint and one beyond it. */
  binarySearchSteps: number;
  exportPath: string;
  numConfigs: number;
  /** num_top_model_configs: the best configurations across models (0: no such report). */
  numTopConfigs: number;
  /** The search's own objectives and constraints, which rank across models. */
  across: Pick<SearchModel, "goals" | "objectives">;
  /** inference_output_fields, server_output_fields: the CSVs' columns. */
  inferenceFields: string[];
  serverFields: string[];
  checkpointDirectory: string;
  protocol: string;
  /** Options each point passes to a normal profile run (with -m, -u, --concurrency-range set per point). */
  pointOptions: RawOptions;
  percentile?: number;
  settings: Settings;
}

/** How a model's points load the server: by request rate, or by concurrency (the default). */
export function loadModeOf(
  config: Pick<SearchConfig, "requestRateSearch">,
  model: SearchModel,
): LoadMode {
  if (model.concurrency) return "concurrency";
  return model.requestRate || config.requestRateSearch ? "request_rate" : "concurrency";
}

/** The loads a model's sweep walks: its own list, else the search's powers of two. */
export function loadsOf(
  config: Pick<SearchConfig, "requestRateSearch" | "requestRates" | "concurrencies">,
  model: SearchModel,
): number[] {
  return loadModeOf(config, model) === "request_rate"
    ? model.requestRate ?? config.requestRates
    : model.concurrency ?? config.concurrencies;
}

/** The keys of a model's settings in profile_models. */
const MODEL_KEYS = [
  "model_config_parameters",
  "parameters",
  "constraints",
  "objectives",
  "perf_analyzer_flags",
  "triton_server_environment",
  "cpu_only",
  "weighting",
];

/** The options of a model's points: the search's, with the model's perf_analyzer_flags over them. */
export function withFlags(
  options: RawOptions,
  model: Pick<SearchModel, "flags"> | undefined,
): RawOptions {
  const raw = new Map(options);
  for (const [name, value] of Object.entries(model?.flags ?? {})) raw.set(name, value);
  return raw;
}

/** Powers of two from `min` to `max`, `min` rounded up to one. */
export function powersOfTwo(min: number, max: number): number[] {
  const values: number[] = [];
  for (let v = 2 ** Math.ceil(Math.log2(Math.max(1, min))); v <= max; v *= 2) values.push(v);
  return values;
}

/** Options of the search itself, not passed on to the points. */
const SEARCH_ONLY = new Set([
  "profile-models",
  "checkpoint-directory",
  "objective",
  "constraints",
  "latency-report-file",
  "report-html",
  "model-repository",
  // A BLS search's points name its composing models themselves (planOf).
  "bls-composing-models",
]);

/**
 * Options that do not change what a point measures: a checkpoint is resumed
 * whatever they are, and `inferperf report` takes them anew. The checkpoint
 * keeps every other option, so that the report can rebuild the search.
 */
const NOT_COMPARED = new Set([
  "checkpoint-directory",
  "export-path",
  "output-model-repository-path",
  "override-output-model-repository",
  "triton-output-path",
  "num-configs-per-model",
  "num-top-model-configs",
  "inference-output-fields",
  "server-output-fields",
  "verbose",
  "config",
]);

/** The checkpoint setting that holds each model's own config.pbtxt (not an option). */
export const MODEL_CONFIGS = "model-configs";

/**
 * The options of the search a checkpoint holds, with `given` (the report's
 * own, and its objectives and constraints) over them; undefined when the
 * checkpoint is a sweep's.
 */
export function storedSearchOptions(settings: Settings, given: RawOptions): RawOptions | undefined {
  if (!("model-repository" in settings) || !("profile-models" in settings)) return undefined;
  return storedOptions(settings, given);
}

/** A checkpoint's options (a search's, an engine search's) with `given` over them. */
export function storedOptions(settings: Settings, given: RawOptions): RawOptions {
  const raw: RawOptions = new Map();
  for (const [name, value] of Object.entries(settings)) {
    if (value !== null && name !== MODEL_CONFIGS) raw.set(name, value);
  }
  for (const name of [...NOT_COMPARED, "objectives", "constraints"]) {
    const value = given.get(name);
    if (value !== undefined) raw.set(name, value);
  }
  return raw;
}

function list(raw: RawOptions, name: string): string[] {
  const value = raw.get(name);
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [String(value)]).flatMap((v) => v.split(","))
    .map((s) => s.trim()).filter((s) => s !== "");
}

function isMapping(v: Plain | undefined): v is { [key: string]: Plain } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Positive integers of a YAML list (or one integer); errors name `what`. */
function integers(value: Plain, what: string, errors: string[]): number[] | undefined {
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || (v as number) < 1)) {
    errors.push(`Invalid ${what}: expected a positive integer or a list of them`);
    return undefined;
  }
  return values as number[];
}

/** --constraints and --objectives given to the search, globally or for one model. */
function goalsOf(
  options: { constraints: string[]; objectives: string[]; where: string },
  errors: string[],
): { goals: Goals; objectives: Objectives } | undefined {
  try {
    const goals = parseGoals("throughput", options.constraints);
    const objectives = parseObjectives(options.objectives);
    return { goals, objectives };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    errors.push(...error.errors.map((e) => `${e}${options.where}`));
    return undefined;
  }
}

/** The models of --profile-models: names, or Model Analyzer's mapping of per-model settings. */
function parseModels(
  raw: RawOptions,
  defaults: {
    constraints: string[];
    objectives: string[];
    flags?: Record<string, RawValue>;
    environment?: Record<string, string>;
  },
  errors: string[],
): SearchModel[] {
  const items = list(raw, "profile-models");
  const given = raw.get("profile-models");
  const structured = Array.isArray(given) && given.length === 1 && /^[[{]/.test(given[0]!);
  let entries: Array<[string, Plain]>;
  if (structured) {
    const parsed = JSON.parse(given[0]!) as Plain;
    entries = isMapping(parsed)
      ? Object.entries(parsed)
      : (parsed as Plain[]).flatMap((item): Array<[string, Plain]> =>
        isMapping(item) ? Object.entries(item) : [[String(item), null]]
      );
  } else entries = items.map((name) => [name, null]);
  const models: SearchModel[] = [];
  for (const [name, settings] of entries) {
    const where = ` (profile_models: ${name})`;
    if (settings !== null && !isMapping(settings)) {
      errors.push(`Invalid settings of model "${name}" in profile_models: expected a mapping`);
      continue;
    }
    const s = settings ?? {};
    for (const key of Object.keys(s)) {
      if (!MODEL_KEYS.includes(key)) {
        errors.push(
          `Unknown key "${key}" for model "${name}" in profile_models: expected ${
            MODEL_KEYS.join(", ")
          }`,
        );
      }
    }
    if (s.cpu_only !== undefined && typeof s.cpu_only !== "boolean") {
      errors.push(`Invalid cpu_only${where}: expected true or false`);
    }
    const weighting = s.weighting === undefined
      ? undefined
      : integers(s.weighting, `weighting${where}`, errors)?.[0];
    const flags = parseFlags(s.perf_analyzer_flags, where, errors) ?? defaults.flags;
    const environment = parseEnvironment(s.triton_server_environment, where, errors) ??
      defaults.environment;
    const parameters = s.parameters ?? {};
    if (!isMapping(parameters)) {
      errors.push(`Invalid parameters${where}: expected a mapping of concurrency and batch_sizes`);
      continue;
    }
    for (const key of Object.keys(parameters)) {
      if (!["concurrency", "request_rate", "batch_sizes"].includes(key)) {
        errors.push(
          `Unknown parameter "${key}"${where}: expected concurrency, request_rate or batch_sizes`,
        );
      }
    }
    if (parameters.concurrency !== undefined && parameters.request_rate !== undefined) {
      errors.push(`Parameters concurrency and request_rate can not be used together${where}`);
    }
    const concurrency = parameters.concurrency === undefined
      ? undefined
      : integers(parameters.concurrency, `parameters.concurrency${where}`, errors);
    const requestRate = parameters.request_rate === undefined
      ? undefined
      : integers(parameters.request_rate, `parameters.request_rate${where}`, errors);
    const batchSizes = parameters.batch_sizes === undefined
      ? [1]
      : integers(parameters.batch_sizes, `parameters.batch_sizes${where}`, errors) ?? [1];
    const configParameters = s.model_config_parameters;
    if (configParameters !== undefined && !isMapping(configParameters)) {
      errors.push(`Invalid model_config_parameters${where}: expected a mapping of config fields`);
      continue;
    }
    const goals = goalsOf({
      constraints: isMapping(s.constraints ?? null)
        ? Object.entries(s.constraints as { [key: string]: Plain }).flatMap(([metric, bounds]) =>
          Object.entries(isMapping(bounds) ? bounds : {}).map(([b, n]) => `${b}-${metric}=${n}`)
        )
        : defaults.constraints,
      objectives: isMapping(s.objectives ?? null)
        ? Object.entries(s.objectives as { [key: string]: Plain }).map(([k, w]) => `${k}=${w}`)
        : Array.isArray(s.objectives)
        ? s.objectives.map(String)
        : defaults.objectives,
      where,
    }, errors);
    if (!goals) continue;
    models.push({
      name,
      ...(configParameters ? { configParameters } : {}),
      ...(concurrency ? { concurrency } : {}),
      ...(requestRate ? { requestRate } : {}),
      batchSizes,
      ...goals,
      ...(flags ? { flags } : {}),
      ...(environment ? { environment } : {}),
      cpuOnly: s.cpu_only === true,
      ...(weighting ? { weighting } : {}),
    });
  }
  if (models.length === 0 && errors.length === 0) {
    errors.push("Option --profile-models needs at least one model");
  }
  return models;
}

function int(raw: RawOptions, name: string, errors: string[]): number {
  const value = Number(raw.get(name) ?? optionDef(name).default);
  if (!Number.isInteger(value) || value < 1) {
    errors.push(
      `Invalid value "${raw.get(name)}" for ${optionLabel(name)}: expected an integer >= 1`,
    );
    return 1;
  }
  return value;
}

function range(raw: RawOptions, name: string, errors: string[]): [number, number] {
  const min = int(raw, `run-config-search-min-${name}`, errors);
  const max = int(raw, `run-config-search-max-${name}`, errors);
  if (min > max) {
    errors.push(
      `${optionLabel(`run-config-search-min-${name}`)} ${min} is above ${
        optionLabel(`run-config-search-max-${name}`)
      } ${max}`,
    );
  }
  return [min, max];
}

/** Model Analyzer's Optuna options; a trial count or a percentage counts only where given. */
function optunaSettings(raw: RawOptions, errors: string[]): OptunaSettings {
  const given = (name: string) => raw.has(name) ? int(raw, name, errors) : undefined;
  const percentage = (name: string) => {
    const value = int(raw, name, errors);
    if (value > 100) {
      errors.push(
        `Invalid value "${value}" for ${optionLabel(name)}: expected a percentage <= 100`,
      );
    }
    return value;
  };
  const settings: OptunaSettings = {
    ...(raw.has("optuna-min-trials") ? { minTrials: given("optuna-min-trials")! } : {}),
    ...(raw.has("optuna-max-trials") ? { maxTrials: given("optuna-max-trials")! } : {}),
    minPercentage: percentage("min-percentage-of-search-space"),
    maxPercentage: percentage("max-percentage-of-search-space"),
    minPercentageGiven: raw.has("min-percentage-of-search-space"),
    maxPercentageGiven: raw.has("max-percentage-of-search-space"),
    earlyExit: int(raw, "optuna-early-exit-threshold", errors),
    seed: Number(raw.get("optuna-seed") ?? optionDef("optuna-seed").default),
    multivariate: text(raw, "optuna-sampler") === "multivariate",
    concurrencyFormula: raw.get("use-concurrency-formula") === true,
    sweepDisable: raw.get("concurrency-sweep-disable") === true,
  };
  if (!Number.isInteger(settings.seed) || settings.seed < 0) {
    errors.push(
      `Invalid value "${raw.get("optuna-seed")}" for --optuna-seed: expected an integer >= 0`,
    );
  }
  return settings;
}

const text = (raw: RawOptions, name: string) =>
  String(raw.get(name) ?? optionDef(name).default ?? "");

/** Converts and validates a search; throws UsageError listing every problem. */
export function buildSearchConfig(raw: RawOptions): SearchConfig {
  const errors: string[] = [];
  const mode = text(raw, "triton-launch-mode");
  if (mode === "docker") {
    throw new UsageError([
      "--triton-launch-mode docker is not supported (no container runtime is assumed): use local, remote or c_api",
    ]);
  }
  if (raw.has("model-name")) {
    errors.push("Options --profile-models and -m/--model-name can not be used together");
  }
  for (const name of ["concurrency-range", "request-rate-range", "objective"]) {
    if (raw.has(name)) {
      errors.push(
        `Option ${optionLabel(name)} does not apply to a model config search: use ${
          name === "objective"
            ? "--objectives"
            : name === "concurrency-range"
            ? "--run-config-search-min/max-concurrency"
            : "--run-config-search-min/max-request-rate"
        }`,
      );
    }
  }
  const globalFlags = parseFlags(dictOption(raw, "perf-analyzer-flags"), "", errors);
  const globalEnvironment = parseEnvironment(
    dictOption(raw, "triton-server-environment"),
    "",
    errors,
  );
  const defaults = {
    constraints: list(raw, "constraints"),
    objectives: list(raw, "objectives"),
    ...(globalFlags ? { flags: globalFlags } : {}),
    ...(globalEnvironment ? { environment: globalEnvironment } : {}),
  };
  const models = parseModels(raw, defaults, errors);
  const [minInstances, maxInstances] = range(raw, "instance-count", errors);
  const [minBatch, maxBatch] = range(raw, "model-batch-size", errors);
  const [minConcurrency, maxConcurrency] = range(raw, "concurrency", errors);
  const [minRate, maxRate] = range(raw, "request-rate", errors);
  const binarySearchSteps = int(raw, "run-config-search-max-binary-search-steps", errors);
  const optuna = optunaSettings(raw, errors);
  const concurrent = raw.get("run-config-profile-models-concurrently-enable") === true;
  const blsComposing = parseBlsComposing(raw, errors);
  if (blsComposing) {
    errors.push(...checkBls({
      ...(raw.has("run-config-search-mode")
        ? { searchMode: text(raw, "run-config-search-mode") }
        : {}),
      models: models.length,
      concurrent,
    }));
    if (mode !== "remote") {
      errors.push(
        `A BLS search (--bls-composing-models) runs with --triton-launch-mode remote only (given ${mode}): its composing variants are loaded under their models' own names`,
      );
    }
    if (models[0]) models[0].blsComposing = blsComposing;
  }
  const numTopConfigs = Number(raw.get("num-top-model-configs") ?? 0);
  if (!Number.isInteger(numTopConfigs) || numTopConfigs < 0) {
    errors.push(
      `Invalid value "${
        raw.get("num-top-model-configs")
      }" for --num-top-model-configs: expected an integer >= 0`,
    );
  }
  // As Model Analyzer: giving either bound of the request rate asks for a request-rate search.
  const requestRateSearch = raw.get("request-rate-search-enable") === true ||
    raw.has("run-config-search-min-request-rate") || raw.has("run-config-search-max-request-rate");
  const inferenceFields = raw.has("inference-output-fields")
    ? list(raw, "inference-output-fields")
    : defaultInferenceFields(requestRateSearch || models.some((m) => m.requestRate));
  const serverFields = raw.has("server-output-fields")
    ? list(raw, "server-output-fields")
    : DEFAULT_SERVER_FIELDS;
  errors.push(
    ...checkFields(inferenceFields, { option: "--inference-output-fields", server: false }),
    ...checkFields(serverFields, { option: "--server-output-fields", server: true }),
  );
  const protocol = text(raw, "protocol") || "http";

  const pointOptions: RawOptions = new Map(raw);
  for (const name of raw.keys()) {
    const group = optionDef(name).group;
    if (
      SEARCH_ONLY.has(name) ||
      group === "Model config search (--profile-models with --model-repository)"
    ) {
      pointOptions.delete(name);
    }
  }
  if (mode === "c_api") pointOptions.set("service-kind", "triton_c_api");
  // Checked now with a stand-in model and server, so that bad client options fail before a server
  // starts: each model's, with its perf_analyzer_flags.
  let percentile: number | undefined;
  for (const model of models.length > 0 ? models : [undefined]) {
    try {
      const check = withFlags(pointOptions, model);
      check.set("model-name", model?.name ?? "model");
      if (mode === "c_api") check.set("model-repository", text(raw, "model-repository"));
      const checked = buildProfileConfig(check).percentile;
      if (model === models[0]) percentile = checked;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      errors.push(
        ...error.errors.map((e) =>
          model?.flags ? `${e} (perf_analyzer_flags of ${model.name})` : e
        ),
      );
    }
  }
  const environments = new Set(models.map((m) => JSON.stringify(m.environment ?? {})));
  if (environments.size > 1) {
    errors.push(
      "The models' triton_server_environment differ: one server serves them all, so it must be the same",
    );
  }
  if (mode !== "local" && models.some((m) => m.environment)) {
    errors.push(
      `triton_server_environment applies to --triton-launch-mode local only (given with ${mode})`,
    );
  }
  if (errors.length > 0) throw new UsageError(errors);
  const config: SearchConfig = {
    modelRepository: text(raw, "model-repository"),
    models,
    outputRepository: text(raw, "output-model-repository-path").replace(/\/+$/, ""),
    override: raw.get("override-output-model-repository") === true,
    launch: {
      mode: mode as LaunchMode,
      serverPath: text(raw, "triton-server-path"),
      ...(raw.has("triton-output-path") ? { logFile: text(raw, "triton-output-path") } : {}),
      flags: list(raw, "triton-server-flags"),
      http: text(raw, "triton-http-endpoint"),
      grpc: text(raw, "triton-grpc-endpoint"),
    },
    // As Model Analyzer: composing models are searched quick unless asked otherwise.
    searchMode:
      (blsComposing && !raw.has("run-config-search-mode")
        ? "quick"
        : text(raw, "run-config-search-mode")) as SearchConfig["searchMode"],
    concurrent,
    optuna,
    disabled: raw.get("run-config-search-disable") === true,
    instanceCounts: Array.from(
      { length: maxInstances - minInstances + 1 },
      (_, i) => minInstances + i,
    ),
    maxBatchSizes: powersOfTwo(minBatch, maxBatch),
    concurrencies: powersOfTwo(minConcurrency, maxConcurrency),
    requestRateSearch,
    requestRates: powersOfTwo(minRate, maxRate),
    binarySearchSteps,
    exportPath: text(raw, "export-path").replace(/\/+$/, "") || ".",
    numConfigs: int(raw, "num-configs-per-model", errors),
    numTopConfigs,
    across: goalsOf({ ...defaults, where: "" }, errors) ?? {
      goals: parseGoals("throughput", []),
      objectives: parseObjectives([]),
    },
    inferenceFields,
    serverFields,
    checkpointDirectory: text(raw, "checkpoint-directory"),
    protocol,
    pointOptions,
    ...(percentile === undefined ? {} : { percentile }),
    settings: {},
  };
  config.settings = searchSettings(raw);
  return config;
}

/** What a search's checkpoint must match to be resumed: its options but those that change nothing measured. */
export function searchSettings(raw: RawOptions): Settings {
  return Object.fromEntries(
    [...raw].filter(([name]) => !NOT_COMPARED.has(name)).sort(([a], [b]) => a.localeCompare(b)),
  );
}
