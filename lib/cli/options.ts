/**
 * The option table: the single source for parsing, `--help`, validation and
 * YAML configuration (--config). Every perf_analyzer option name is here, in
 * lib/cli/flags/, one file per section of --help.
 */
import { OPTIONS } from "./flags/mod.ts";
import type { OptionDef } from "./option_types.ts";

export { OPTIONS };
export * from "./option_types.ts";

const BY_NAME = new Map(OPTIONS.map((o) => [o.name, o]));

export function optionDef(name: string): OptionDef {
  const def = BY_NAME.get(name);
  if (!def) throw new RangeError(`Unknown option "${name}"`);
  return def;
}

/** `-m/--model-name` style label used in error messages. */
export function optionLabel(name: string): string {
  const def = optionDef(name);
  return def.short ? `-${def.short}/--${def.name}` : `--${def.name}`;
}
