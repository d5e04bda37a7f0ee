/**
 * perf_analyzer's flags and ours, as data: one file per section of --help,
 * in the order --help shows them.
 *
 * @module
 */
import type { OptionDef } from "../option_types.ts";
import { ENGINE } from "./engine.ts";
import { GENERAL } from "./general.ts";
import { INPUT_DATA } from "./input_data.ts";
import { LOAD } from "./load.ts";
import { MEASUREMENT } from "./measurement.ts";
import { OLDER } from "./older.ts";
import { OUTPUT } from "./output.ts";
import { PROTOCOL } from "./protocol.ts";
import { SEARCH } from "./search.ts";
import { SEQUENCES } from "./sequences.ts";
import { SLO } from "./slo.ts";
import { SERVE } from "./serve.ts";
import { SWEEPS } from "./sweeps.ts";
import { TARGET } from "./target.ts";

export const OPTIONS: readonly OptionDef[] = [
  ...TARGET,
  ...LOAD,
  ...MEASUREMENT,
  ...SLO,
  ...SEQUENCES,
  ...INPUT_DATA,
  ...PROTOCOL,
  ...OUTPUT,
  ...SERVE,
  ...GENERAL,
  ...SWEEPS,
  ...SEARCH,
  ...ENGINE,
  ...OLDER,
];
