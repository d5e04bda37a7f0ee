/**
 * The option table: the single source for parsing, `--help`, validation and
 * YAML configuration (--config). Every perf_analyzer option name is here, in
 * lib/cli/flags/, one file per section of --help.
 */
import { GENERAL } from "./flags/general.ts";
import { INPUT_DATA } from "./flags/input_data.ts";
import { LOAD } from "./flags/load.ts";
import { MEASUREMENT } from "./flags/measurement.ts";
import { OUTPUT } from "./flags/output.ts";
import { PROTOCOL } from "./flags/protocol.ts";
import { SEQUENCES } from "./flags/sequences.ts";
import { SERVE } from "./flags/serve.ts";
import { SWEEPS } from "./flags/sweeps.ts";
import { TARGET } from "./flags/target.ts";
import type { OptionDef } from "./option_types.ts";

export * from "./option_types.ts";

export const OPTIONS: readonly OptionDef[] = [
  ...TARGET,
  ...LOAD,
  ...MEASUREMENT,
  ...SEQUENCES,
  ...INPUT_DATA,
  ...PROTOCOL,
  ...OUTPUT,
  ...SERVE,
  ...GENERAL,
  ...SWEEPS,
];

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
