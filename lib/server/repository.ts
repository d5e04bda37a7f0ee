/** The loaded models, looked up by name and version for every front end. */
import type { ModelSpec } from "./config.ts";
import { ServerError, unknownModel } from "./errors.ts";
import { type ModelOptions, SimulatedModel } from "./model.ts";

export class ModelRepository {
  /** Every model version, in configuration order. */
  readonly models: readonly SimulatedModel[];
  readonly #byName = new Map<string, SimulatedModel[]>();

  constructor(readonly specs: readonly ModelSpec[], options: ModelOptions = {}) {
    const models: SimulatedModel[] = [];
    for (const spec of specs) {
      const versions = [...spec.versions]
        .sort((a, b) => Number(a) - Number(b))
        .map((v) => new SimulatedModel(spec, v, options));
      this.#byName.set(spec.name, versions);
      models.push(...versions);
    }
    this.models = models;
  }

  /** Versions of a model, oldest first; throws a not_found ServerError. */
  versions(name: string): readonly SimulatedModel[] {
    const versions = this.#byName.get(name);
    if (versions === undefined) throw unknownModel(name);
    return versions;
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
    if (name === "") return this.models;
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
    for (const model of this.models) model.close();
  }
}
