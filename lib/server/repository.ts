/** The loaded models, looked up by name and version for every front end. */
import type { ModelSpec } from "./config.ts";
import { unknownModel } from "./errors.ts";
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

  close(): void {
    for (const model of this.models) model.close();
  }
}
