/**
 * The load modes, by the name a plan's `loadMode` gives. Adding one: a file
 * here exporting a LoadModeDef, and its line below. lib/load/levels.ts runs
 * whichever a plan names, on the main thread and in --workers alike.
 *
 * @module
 */
import { concurrency } from "./concurrency.ts";
import { customIntervals } from "./custom_intervals.ts";
import type { LoadModeDef } from "./mode.ts";
import { requestRate } from "./request_rate.ts";

export type { LoadModeDef, LoadPattern, PatternInputs } from "./mode.ts";

export const LOAD_MODES: Map<string, LoadModeDef> = new Map([
  ["concurrency", concurrency],
  ["request_rate", requestRate],
  ["custom_intervals", customIntervals],
]);

/** The mode a plan names; lib/cli only names registered ones. */
export function loadMode(name: string): LoadModeDef {
  const mode = LOAD_MODES.get(name);
  if (mode === undefined) throw new RangeError(`Unknown load mode "${name}"`);
  return mode;
}
