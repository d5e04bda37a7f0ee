/**
 * Model Analyzer's per-model settings of a search, given globally or under a
 * model of profile_models (a model's own replaces the global one whole, as
 * in Model Analyzer): perf_analyzer_flags, options every point of the model
 * passes to its profile run; triton_server_environment, the local server's
 * environment variables.
 */
import { optionDef, type RawOptions, type RawValue } from "../cli/options.ts";
import type { OptionDef } from "../cli/option_types.ts";

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

/** Options the search sets itself for every point: perf_analyzer_flags can not. */
const SET_BY_SEARCH = [
  "model-name",
  "url",
  "concurrency-range",
  "request-rate-range",
  "batch-size",
  "service-kind",
  "profile-models",
  "model-repository",
];

function definition(name: string): OptionDef | undefined {
  try {
    return optionDef(name);
  } catch {
    return undefined;
  }
}

/** A global option's dict value (`k=v` items, or a YAML mapping kept as JSON) as a mapping. */
export function dictOption(raw: RawOptions, name: string): { [key: string]: Plain } | undefined {
  const value = raw.get(name);
  if (value === undefined) return undefined;
  const items = Array.isArray(value) ? value : [String(value)];
  if (items.length === 1 && items[0]!.trimStart().startsWith("{")) {
    return JSON.parse(items[0]!) as { [key: string]: Plain };
  }
  return Object.fromEntries(
    items.flatMap((item) => item.split(",")).map((item) => {
      const at = item.indexOf("=");
      return at < 0 ? [item.trim(), true] : [item.slice(0, at).trim(), item.slice(at + 1).trim()];
    }),
  );
}

const isMapping = (v: Plain | undefined): v is { [key: string]: Plain } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * perf_analyzer_flags as options of a profile run: perf_analyzer's long
 * names (`percentile`, `measurement-mode`, `shape`, `input-data`; `_` for
 * `-` too), a list for a repeatable option. Problems go to `errors`.
 */
export function parseFlags(
  value: Plain | undefined,
  where: string,
  errors: string[],
): Record<string, RawValue> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isMapping(value)) {
    errors.push(`Invalid perf_analyzer_flags${where}: expected a mapping of perf_analyzer options`);
    return undefined;
  }
  const flags: Record<string, RawValue> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = key.replace(/^--/, "").replaceAll("_", "-");
    const def = definition(name);
    if (!def || !(def.commands ?? ["profile"]).includes("profile")) {
      errors.push(`Unknown option "${key}" in perf_analyzer_flags${where}`);
      continue;
    }
    if (SET_BY_SEARCH.includes(name) || def.group.startsWith("Model config search")) {
      errors.push(
        `Option "${key}" can not be set in perf_analyzer_flags${where}: the search sets it`,
      );
      continue;
    }
    const many = def.type === "list" || def.type === "comma-list" || def.type === "dict";
    if (def.type === "boolean") flags[name] = v === true || v === "true";
    else if (many) flags[name] = (Array.isArray(v) ? v : [v]).map(String);
    else flags[name] = String(v);
  }
  return flags;
}

/** triton_server_environment: variable names to values. */
export function parseEnvironment(
  value: Plain | undefined,
  where: string,
  errors: string[],
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isMapping(value) || Object.values(value).some((v) => isMapping(v) || Array.isArray(v))) {
    errors.push(
      `Invalid triton_server_environment${where}: expected a mapping of variable names to values`,
    );
    return undefined;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}
