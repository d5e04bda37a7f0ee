/**
 * Trace settings on the reference server (Triton's trace extension): the
 * global settings, shared by the HTTP and gRPC front ends, checked as Triton
 * checks them and returned after every update. The server records no traces:
 * the settings are there for clients to set and read back.
 */
import { TRACE_LEVELS } from "../protocol/trace.ts";
import type { TraceSettings } from "../protocol/types.ts";
import { ServerError } from "./errors.ts";

/** Triton's defaults (tritonserver without --trace-config), in the order it lists them. */
const DEFAULTS: ReadonlyMap<string, readonly string[]> = new Map([
  ["trace_file", [""]],
  ["trace_level", ["OFF"]],
  ["trace_rate", ["1000"]],
  ["trace_count", ["-1"]],
  ["log_frequency", ["0"]],
  ["trace_mode", ["triton"]],
]);

/** The settings a client may change that hold an integer, and the least value of each. */
const INTEGER_MINIMUM: ReadonlyMap<string, number> = new Map([
  ["trace_rate", 0],
  ["trace_count", -1],
  ["log_frequency", 0],
]);

function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

/** The checked values of one setting of an update; undefined restores the default. */
function checked(name: string, value: unknown): string[] | undefined {
  const level = name === "trace_level";
  if (!level && !INTEGER_MINIMUM.has(name)) {
    throw invalid(
      DEFAULTS.has(name)
        ? `trace setting '${name}' can not be updated through the network protocol`
        : `unknown trace setting '${name}'`,
    );
  }
  if (value === null || (Array.isArray(value) && value.length === 0)) return undefined;
  const values: unknown[] = Array.isArray(value) ? value : [value];
  if (!values.every((v) => typeof v === "string")) {
    throw invalid(
      `unable to parse '${name}', expecting a string${level ? " or an array of strings" : ""}`,
    );
  }
  const strings = values as string[];
  if (level) {
    const unknown = strings.find((l) => !TRACE_LEVELS.includes(l));
    if (unknown !== undefined) {
      throw invalid(`unsupported trace level '${unknown}', expecting ${TRACE_LEVELS.join(", ")}`);
    }
    return [...new Set(strings)];
  }
  if (strings.length !== 1) {
    throw invalid(`expecting one value for '${name}', got ${strings.length}`);
  }
  const minimum = INTEGER_MINIMUM.get(name)!;
  const text = strings[0].trim();
  if (!/^[+-]?\d+$/.test(text) || Number(text) < minimum) {
    throw invalid(
      `invalid value '${strings[0]}' for '${name}', expecting an integer >= ${minimum}`,
    );
  }
  return [String(Number(text))];
}

export class TraceSettingsStore {
  readonly #settings = new Map<string, readonly string[]>(DEFAULTS);

  /** Every setting. */
  get(): TraceSettings {
    return Object.fromEntries([...this.#settings].map(([name, values]) => [name, [...values]]));
  }

  /**
   * Applies `update` (a null or empty value restores a setting's default)
   * when all of it is valid; otherwise changes nothing and throws an
   * invalid_argument ServerError. Returns every setting.
   */
  update(update: Readonly<Record<string, unknown>>): TraceSettings {
    const changes = Object.entries(update).map(([name, value]) =>
      [name, checked(name, value) ?? DEFAULTS.get(name)!] as const
    );
    for (const [name, values] of changes) this.#settings.set(name, values);
    return this.get();
  }
}
