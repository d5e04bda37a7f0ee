/**
 * The loaded models, looked up by name and version for every front end, and
 * Triton's model repository extension over them: the index, and in explicit
 * model control loading (a model directory's config.pbtxt or a `config`
 * override) and unloading.
 */
import { type ModelConfig, ModelConfigError, type ModelSpec, resolveModelSpecs } from "./config.ts";
import { ServerError, unknownModel } from "./errors.ts";
import { type ModelOptions, SimulatedModel } from "./model.ts";
import type { ModelDirectory } from "./triton_models.ts";

/** One line of Triton's repository index. */
export interface IndexEntry {
  name: string;
  version?: string;
  state?: string;
  reason?: string;
}

export class ModelRepository {
  #models: SimulatedModel[] = [];
  readonly #byName = new Map<string, SimulatedModel[]>();
  /** Models unloaded since: their versions, for the index and Triton's "no available versions". */
  readonly #unloaded = new Map<string, readonly string[]>();
  readonly #options: ModelOptions;

  constructor(specs: readonly ModelSpec[], options: ModelOptions = {}) {
    // A BLS model's calls find the models loaded when they are made.
    this.#options = { ...options, resolve: (name) => this.get(name) };
    for (const spec of specs) this.load(spec);
  }

  /** Every model version, in load order. */
  get models(): readonly SimulatedModel[] {
    return this.#models;
  }

  /** The loaded models' specifications. */
  get specs(): ModelSpec[] {
    return [...this.#byName.values()].map((versions) => versions[0].spec);
  }

  /** Loads `spec` in place of the model of its name, whose requests in flight still finish. */
  load(spec: ModelSpec): void {
    const versions = [...spec.versions]
      .sort((a, b) => Number(a) - Number(b))
      .map((v) => new SimulatedModel(spec, v, this.#options));
    this.#byName.set(spec.name, versions);
    this.#unloaded.delete(spec.name);
    this.#models = [...this.#models.filter((m) => m.name !== spec.name), ...versions];
  }

  /** Unloads a model; an unknown name is no error (Triton's). */
  unload(name: string): void {
    const versions = this.#byName.get(name);
    if (versions === undefined) return;
    this.#byName.delete(name);
    this.#unloaded.set(name, versions.map((m) => m.version));
    this.#models = this.#models.filter((m) => m.name !== name);
  }

  /** The index entries of `name`, loaded or unloaded; undefined for a model never loaded. */
  entries(name: string): IndexEntry[] | undefined {
    const loaded = this.#byName.get(name);
    if (loaded) return loaded.map((m) => ({ name, version: m.version, state: "READY" }));
    return this.#unloaded.get(name)?.map((version) => ({
      name,
      version,
      state: "UNAVAILABLE",
      reason: "unloaded",
    }));
  }

  /** Names of the models loaded or unloaded. */
  get names(): string[] {
    return [...new Set([...this.#byName.keys(), ...this.#unloaded.keys()])];
  }

  /** Versions of a model, oldest first; throws a not_found ServerError. */
  versions(name: string): readonly SimulatedModel[] {
    const versions = this.#byName.get(name);
    if (versions !== undefined) return versions;
    if (this.#unloaded.has(name)) {
      throw new ServerError(
        `Request for unknown model: '${name}' has no available versions`,
        "not_found",
      );
    }
    throw unknownModel(name);
  }

  /** One version ("" or undefined = the latest); throws a not_found ServerError. */
  get(name: string, version?: string): SimulatedModel {
    const versions = this.versions(name);
    if (version === undefined || version === "") return versions[versions.length - 1];
    const model = versions.find((m) => m.version === version);
    if (model === undefined) throw unknownModel(name, version);
    return model;
  }

  /**
   * The versions ModelStatistics reports: every model for "", every version
   * of `name` for version "". Triton refuses unknown ones as invalid
   * arguments, in words of its own.
   */
  statisticsOf(name: string, version: string): readonly SimulatedModel[] {
    if (name === "") return this.#models;
    const versions = this.#byName.get(name);
    if (versions === undefined) {
      throw new ServerError(`requested model '${name}' is not available`, "invalid_argument");
    }
    if (version === "") return versions;
    const model = versions.find((m) => m.version === version);
    if (model === undefined) {
      throw new ServerError(
        `requested model version is not available for model '${name}'`,
        "invalid_argument",
      );
    }
    return [model];
  }

  close(): void {
    for (const model of this.#models) model.close();
  }
}

/** How models are loaded: all at start ("none"), or by the repository API ("explicit"). */
export type ModelControlMode = "none" | "explicit";

/**
 * Triton's model repository extension over the repository: the index of the
 * model directory's models (and the configured ones), and loads and unloads
 * where the model control mode is explicit, with Triton's messages.
 */
export class ModelControl {
  constructor(
    readonly repository: ModelRepository,
    readonly options: {
      mode: ModelControlMode;
      directory?: ModelDirectory;
      /** The models given as configurations (not from the directory): a load reloads them. */
      configured?: readonly ModelConfig[];
    },
  ) {}

  /** The index, sorted by name; `ready` keeps the loaded models only, as Triton's. */
  index(ready: boolean): IndexEntry[] {
    const names = new Set([
      ...this.options.directory?.names() ?? [],
      ...this.repository.names,
    ]);
    return [...names].sort().flatMap((name) => this.repository.entries(name) ?? [{ name }])
      .filter((e) => !ready || e.state === "READY");
  }

  #explicit(): void {
    if (this.options.mode !== "explicit") {
      throw new ServerError(
        "explicit model load / unload is not allowed if polling is enabled",
        "unavailable",
      );
    }
  }

  /** Loads `name` from the directory (its config.pbtxt, or `override`) or the configured models. */
  load(name: string, override?: string): void {
    this.#explicit();
    const configured = this.options.configured?.find((m) => m.name === name);
    const model = configured && override === undefined
      ? configured
      : this.options.directory?.model(name, override);
    if (model === undefined) {
      throw new ServerError(
        `failed to load '${name}', failed to poll from model repository`,
        "internal",
      );
    }
    let spec: ModelSpec;
    try {
      [spec] = resolveModelSpecs([model], name);
    } catch (error) {
      if (!(error instanceof ModelConfigError)) throw error;
      throw new ServerError(
        `load failed for model '${name}': ${error.problems.join("; ")}`,
        "invalid_argument",
      );
    }
    this.repository.load(spec);
  }

  unload(name: string): void {
    this.#explicit();
    this.repository.unload(name);
  }
}

/**
 * `make(model)` computed once per loaded model (a front end's encoded
 * metadata, say): built on first use, as models load after the start.
 */
export function perModel<K extends object, V>(make: (model: K) => V): (model: K) => V {
  const made = new WeakMap<K, V>();
  return (model) => {
    let value = made.get(model);
    if (value === undefined) {
      value = make(model);
      made.set(model, value);
    }
    return value;
  };
}
