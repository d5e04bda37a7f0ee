/**
 * An engine search's options (`profile --config FILE` with `engine` and
 * `engine_parameters`) -> a validated plan: the engine's launch (or the
 * running engine of remote mode), its variants, the client loads of each
 * variant's sweep, the objectives and constraints, and the options every
 * point passes on to a normal LLM profile run. Every problem is reported
 * at once, before an engine starts.
 */
import { buildProfileConfig } from "../cli/config.ts";
import { optionDef, optionLabel, type RawOptions } from "../cli/options.ts";
import { parseRange, rangeLevels } from "../load/range.ts";
import { parseGoals } from "../sweep/mod.ts";
import type { LoadMode } from "../types/results.ts";
import { UsageError } from "../types/errors.ts";
import { type SearchModel, searchSettings } from "./config.ts";
import {
  BUILT_IN_PLACEHOLDERS,
  type EngineVariant,
  engineVariants,
  type ParameterConstraint,
  type ParameterValue,
  parseConstraint,
  placeholdersOf,
  splitCommand,
} from "./engine_variants.ts";
import { type CacheClear, ENGINE_PRESETS, type ReadyCheck } from "./engine_presets.ts";
import { parseObjectives } from "./objectives.ts";
import type { SearchRunConfig } from "./run.ts";

export type EngineLaunch =
  | {
    mode: "local";
    /** The preset's name, if one. */
    preset?: string;
    /** The command template, split into arguments. */
    template: string[];
    ready: ReadyCheck;
    /** engine.port, else a free loopback port per start. */
    port?: number;
    /** Where each variant's log goes. */
    logDirectory: string;
  }
  | { mode: "remote"; url: string; ready: ReadyCheck };

export interface EngineSearchConfig extends SearchRunConfig {
  launch: EngineLaunch;
  /** --search-recipe: each variant's point is the capacity search (the highest load within --slo). */
  capacity: boolean;
  /** Between points: the engine's cache reset, if asked for. */
  clearCache?: CacheClear;
  /** Requests sent after each start, before the first point. */
  warmup: number;
  model: SearchModel;
  variants: EngineVariant[];
  /** Combinations engine.constraints left out. */
  excluded: number;
  exportPath: string;
  checkpointDirectory: string;
  numConfigs: number;
  percentile?: number;
  settings: Record<string, string | number | boolean | null | string[]>;
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
const isMapping = (v: Json | undefined): v is { [key: string]: Json } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A structured option's value: its YAML mapping (kept as JSON text), or a plain string. */
function structured(raw: RawOptions, name: string, errors: string[]): Json | undefined {
  const value = raw.get(name);
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : String(value);
  if (!/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    errors.push(`Invalid ${optionLabel(name)}: ${(error as Error).message}`);
    return undefined;
  }
}

const ENGINE_KEYS = [
  "preset",
  "command",
  "ready",
  "env",
  "port",
  "warmup",
  "clear_cache",
  "constraints",
  "url",
  "logs",
];

const DEFAULT_READY: ReadyCheck = { path: "/v1/models", status: 200, timeoutMs: 120_000 };

function parseReady(value: Json | undefined, fallback: ReadyCheck, errors: string[]): ReadyCheck {
  if (value === undefined) return fallback;
  if (!isMapping(value)) {
    errors.push("Invalid engine.ready: expected {url: PATH, status: N} or {log: TEXT}, timeout: S");
    return fallback;
  }
  for (const key of Object.keys(value)) {
    if (!["url", "status", "log", "timeout"].includes(key)) {
      errors.push(`Unknown key "${key}" in engine.ready: expected url, status, log or timeout`);
    }
  }
  const timeout = value.timeout ?? fallback.timeoutMs / 1000;
  if (typeof timeout !== "number" || !(timeout > 0)) {
    errors.push(`Invalid engine.ready.timeout ${JSON.stringify(timeout)}: expected seconds > 0`);
  }
  const status = value.status ?? 200;
  if (!Number.isInteger(status)) {
    errors.push(`Invalid engine.ready.status ${JSON.stringify(status)}: expected an HTTP status`);
  }
  if (value.log !== undefined && typeof value.log !== "string") {
    errors.push("Invalid engine.ready.log: expected the text a ready engine logs");
  }
  if (value.url !== undefined && (typeof value.url !== "string" || !value.url.startsWith("/"))) {
    errors.push(`Invalid engine.ready.url ${JSON.stringify(value.url)}: expected a path, /health`);
  }
  const timeoutMs = Number(timeout) * 1000;
  if (typeof value.log === "string") return { log: value.log, status: 200, timeoutMs };
  return {
    path: String(value.url ?? fallback.path ?? "/v1/models"),
    status: Number(status),
    timeoutMs,
  };
}

function parseClearCache(
  value: Json | undefined,
  preset: CacheClear | undefined,
  errors: string[],
): CacheClear | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) {
    if (!preset) errors.push("engine.clear_cache: true needs a preset; give {method, path}");
    return preset;
  }
  if (value === "llama.cpp") return { kind: "llama.cpp-slots" };
  if (
    isMapping(value) && typeof value.path === "string" && value.path.startsWith("/") &&
    (value.method === undefined || value.method === "POST" || value.method === "GET")
  ) {
    return {
      kind: "request",
      method: (value.method ?? "POST") as "POST" | "GET",
      path: value.path,
    };
  }
  errors.push(
    `Invalid engine.clear_cache ${
      JSON.stringify(value)
    }: expected true (the preset's), "llama.cpp" or {method: POST, path: /reset_prefix_cache}`,
  );
  return undefined;
}

/** A parameter's values: a scalar, a list, or {start, stop, step}. */
function parameterValues(name: string, value: Json, errors: string[]): ParameterValue[] {
  if (isMapping(value)) {
    const { start, stop, step = 1 } = value;
    if (
      typeof start !== "number" || typeof stop !== "number" || typeof step !== "number" ||
      !(step > 0) || stop < start || Object.keys(value).some((k) =>
        !["start", "stop", "step"].includes(k)
      )
    ) {
      errors.push(
        `Invalid range of parameter "${name}" in engine_parameters: expected {start: N, stop: M, step: S} with M >= N and S > 0`,
      );
      return [];
    }
    const values: number[] = [];
    for (let v = start; v <= stop + 1e-9; v += step) values.push(Number(v.toFixed(9)));
    return values;
  }
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) {
    errors.push(`Parameter "${name}" of engine_parameters has no values`);
    return [];
  }
  const bad = values.find((v) =>
    typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean"
  );
  if (bad !== undefined) {
    errors.push(
      `Invalid value ${
        JSON.stringify(bad)
      } of parameter "${name}" in engine_parameters: expected strings or numbers`,
    );
    return [];
  }
  return [...new Set(values as ParameterValue[])];
}

/** The client loads of each variant: --concurrency-range or --request-rate-range, listed or ranged. */
function parseLoads(raw: RawOptions, errors: string[]): { mode: LoadMode; values: number[] } {
  const rate = raw.has("request-rate-range");
  const name = rate ? "request-rate-range" : "concurrency-range";
  const mode: LoadMode = rate ? "request_rate" : "concurrency";
  if (rate && raw.has("concurrency-range")) {
    errors.push("Options --concurrency-range and --request-rate-range can not be used together");
  }
  const given = raw.get(name);
  const text = given === undefined
    ? "1,2,4,8"
    : Array.isArray(given)
    ? given.join(",")
    : String(given);
  const fail = (why: string) => {
    errors.push(`Invalid value "${text}" for ${optionLabel(name)}: ${why}`);
    return { mode, values: [1] };
  };
  if (text.includes(",")) {
    const values = text.split(",").map((s) => Number(s.trim()));
    if (values.some((v) => !(v > 0) || (!rate && !Number.isInteger(v)))) {
      return fail(`expected a list of ${rate ? "numbers" : "integers"} > 0`);
    }
    return { mode, values: [...new Set(values)] };
  }
  try {
    const range = parseRange(text, { integer: !rate });
    if (range.end === 0) return fail("the end must be given");
    return { mode, values: [...rangeLevels(range)] };
  } catch (error) {
    return fail((error as Error).message);
  }
}

/** Options of the search itself, not passed on to the points. */
const SEARCH_ONLY = new Set([
  "engine",
  "engine-parameters",
  "objectives",
  "constraints",
  "checkpoint-directory",
  "concurrency-range",
  "request-rate-range",
  "url",
  "model-name",
]);

const text = (raw: RawOptions, name: string) =>
  String(raw.get(name) ?? optionDef(name).default ?? "");

/** Converts and validates an engine search; throws UsageError listing every problem. */
export function buildEngineSearchConfig(raw: RawOptions): EngineSearchConfig {
  const errors: string[] = [];
  let engine = structured(raw, "engine", errors) ?? {};
  if (typeof engine === "string") engine = { command: engine };
  if (!isMapping(engine)) {
    errors.push("Invalid engine: expected a mapping of command, ready, env, ... (or the command)");
    engine = {};
  }
  for (const key of Object.keys(engine)) {
    if (!ENGINE_KEYS.includes(key)) {
      errors.push(`Unknown key "${key}" in engine: expected ${ENGINE_KEYS.join(", ")}`);
    }
  }
  const presetName = engine.preset;
  const preset = typeof presetName === "string" ? ENGINE_PRESETS[presetName] : undefined;
  if (presetName !== undefined && !preset) {
    errors.push(
      `Unknown engine.preset ${JSON.stringify(presetName)}: expected ${
        Object.keys(ENGINE_PRESETS).join(", ")
      }`,
    );
  }
  // A running engine: the preset still names its readiness check and cache reset.
  const remote = typeof engine.url === "string";
  const ready = parseReady(engine.ready, preset?.ready ?? DEFAULT_READY, errors);
  const clearCache = parseClearCache(engine.clear_cache, preset?.clearCache, errors);
  const warmup = engine.warmup ?? 2;
  if (!Number.isInteger(warmup) || (warmup as number) < 0) {
    errors.push(`Invalid engine.warmup ${JSON.stringify(warmup)}: expected requests >= 0`);
  }
  const env: Record<string, string> = {
    ...(clearCache && preset?.clearCacheEnv ? preset.clearCacheEnv : {}),
  };
  if (engine.env !== undefined) {
    if (!isMapping(engine.env)) errors.push("Invalid engine.env: expected a mapping NAME: VALUE");
    else for (const [k, v] of Object.entries(engine.env)) env[k] = String(v);
  }

  let template: string[] = [];
  const command = engine.command ?? preset?.command;
  if (!remote || engine.command !== undefined) {
    if (
      Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === "string")
    ) {
      template = command as string[];
    } else if (typeof command === "string") {
      try {
        template = splitCommand(command);
      } catch (error) {
        errors.push(`Invalid engine.command: ${(error as Error).message}`);
      }
      if (template.length === 0) errors.push("Invalid engine.command: it is empty");
    } else {
      errors.push(
        "Option engine needs command (the server's command line), a preset, or url (a running engine: remote mode)",
      );
    }
  } else if (raw.has("engine-parameters")) {
    errors.push(
      "engine_parameters need engine.command: remote mode (engine.url) sweeps only the client's load",
    );
  }
  if (typeof engine.url === "string" && engine.command !== undefined) {
    errors.push("engine.url and engine.command can not be used together: url is remote mode");
  }

  const given = structured(raw, "engine-parameters", errors) ?? {};
  const parameters: Record<string, ParameterValue[]> = {};
  if (!isMapping(given)) {
    errors.push("Invalid engine_parameters: expected a mapping of NAME: [values]");
  } else {
    for (const [name, value] of Object.entries(given)) {
      parameters[name] = parameterValues(name, value, errors);
    }
  }
  const used = placeholdersOf(template);
  for (const name of used) {
    if (!(name in parameters) && !(BUILT_IN_PLACEHOLDERS as readonly string[]).includes(name)) {
      errors.push(
        `Unknown placeholder {${name}} in engine.command: expected a parameter of engine_parameters, {host} or {port}`,
      );
    }
  }
  for (const name of remote ? [] : Object.keys(parameters)) {
    if (!used.includes(name) && !name.startsWith("-")) {
      errors.push(
        `Parameter "${name}" of engine_parameters is not used: put {${name}} in engine.command, or name it as a flag (-${name} or --${name}) to append it`,
      );
    }
  }
  if (!remote && !used.includes("port") && engine.port === undefined) {
    errors.push(
      "engine.command needs {port} (the port inferperf gives each start), or give engine.port",
    );
  }
  const constraints: ParameterConstraint[] = [];
  const constraintTexts = engine.constraints ?? [];
  for (const c of Array.isArray(constraintTexts) ? constraintTexts : [constraintTexts]) {
    try {
      const parsed = parseConstraint(String(c));
      const unknown = parsed.names.filter((n) => !(n in parameters));
      const text = parameters &&
        parsed.names.filter((n) => parameters[n]?.some((v) => typeof v !== "number"));
      if (unknown.length > 0) {
        errors.push(`Invalid engine.constraints "${c}": ${unknown.join(", ")} is not a parameter`);
      } else if (text.length > 0) {
        errors.push(
          `Invalid engine.constraints "${c}": ${text.join(", ")} has values that are not numbers`,
        );
      } else constraints.push(parsed);
    } catch (error) {
      errors.push(`Invalid engine.constraints "${c}": ${(error as Error).message}`);
    }
  }
  const port = engine.port;
  if (
    port !== undefined &&
    (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535)
  ) {
    errors.push(`Invalid engine.port ${JSON.stringify(port)}: expected a port from 1 to 65535`);
  }

  const model = raw.get("model-name");
  if (model === undefined) {
    errors.push("An engine search needs -m/--model-name: the model the points request");
  }
  for (const name of ["profile-models", "model-repository"]) {
    if (raw.has(name)) {
      errors.push(`Option ${optionLabel(name)} does not apply to an engine search`);
    }
  }
  // --search-recipe: each variant's one point is the capacity search over the given range.
  const capacity = raw.has("search-recipe");
  const loads = capacity
    ? {
      mode: (raw.get("search-recipe") === "max-rate-under-sla"
        ? "request_rate"
        : "concurrency") as LoadMode,
      values: [0],
    }
    : parseLoads(raw, errors);
  let objectives, goals;
  try {
    const entries = typeof raw.get("objectives") === "undefined"
      ? ["output-token-throughput"]
      : [raw.get("objectives")!].flat().map(String).flatMap((e) => e.split(","));
    objectives = parseObjectives(entries);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    errors.push(...error.errors);
  }
  try {
    const list = raw.get("constraints");
    goals = parseGoals("throughput", list === undefined ? [] : [list].flat().map(String));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    errors.push(...error.errors);
  }

  const pointOptions: RawOptions = new Map(raw);
  for (const name of raw.keys()) {
    const range = name === "concurrency-range" || name === "request-rate-range";
    if (
      (SEARCH_ONLY.has(name) && !(capacity && range)) ||
      optionDef(name).group === "Model config search (--profile-models with --model-repository)"
    ) {
      pointOptions.delete(name);
    }
  }
  if (!pointOptions.has("service-kind")) pointOptions.set("service-kind", "openai");
  if (!pointOptions.has("endpoint")) pointOptions.set("endpoint", "v1/chat/completions");
  let percentile: number | undefined;
  try {
    const check = new Map(pointOptions);
    check.set("model-name", String(model ?? "model"));
    check.set("url", "127.0.0.1:8000");
    const plan = buildProfileConfig(check);
    percentile = plan.percentile;
    if (plan.serviceKind !== "openai") {
      errors.push(
        `An engine search measures LLMs: --service-kind ${plan.serviceKind} is not openai`,
      );
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    errors.push(...error.errors);
  }
  if (errors.length > 0) throw new UsageError(errors);

  const exportPath = text(raw, "export-path").replace(/\/+$/, "") || ".";
  const logDirectory = typeof engine.logs === "string" ? engine.logs : `${exportPath}/logs`;
  if (clearCache && preset?.clearCacheArgs && !template.includes(preset.clearCacheArgs("")[0]!)) {
    template.push(...preset.clearCacheArgs(logDirectory));
  }
  const { variants, left } = remote
    ? {
      variants: [{ name: "default", model: String(model), parameters: {}, command: [], env: {} }],
      left: 0,
    }
    : engineVariants({ template, env, parameters, constraints, model: String(model) });
  if (variants.length === 0) {
    throw new UsageError([
      `engine.constraints leave none of the ${left} combinations of engine_parameters`,
    ]);
  }
  return {
    launch: remote ? { mode: "remote", url: String(engine.url), ready } : {
      mode: "local",
      ...(typeof presetName === "string" ? { preset: presetName } : {}),
      template,
      ready,
      ...(port === undefined ? {} : { port: Number(port) }),
      logDirectory: typeof engine.logs === "string" ? engine.logs : `${exportPath}/logs`,
    },
    ...(clearCache ? { clearCache } : {}),
    capacity,
    warmup: Number(warmup),
    model: {
      name: String(model),
      batchSizes: [1],
      ...(loads.mode === "request_rate"
        ? { requestRate: loads.values }
        : { concurrency: loads.values }),
      objectives: objectives!,
      goals: goals!,
    },
    variants,
    excluded: left,
    exportPath,
    checkpointDirectory: text(raw, "checkpoint-directory"),
    numConfigs: Number(
      raw.get("num-configs-per-model") ?? optionDef("num-configs-per-model").default,
    ),
    protocol: "http",
    pointOptions,
    searchMode: "brute",
    disabled: false,
    concurrencies: loads.values,
    requestRates: loads.values,
    requestRateSearch: loads.mode === "request_rate",
    binarySearchSteps: 0,
    ...(percentile === undefined ? {} : { percentile }),
    settings: searchSettings(raw),
  };
}
