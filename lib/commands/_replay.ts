/**
 * `inferperf report` of a search's checkpoint (Triton model configurations
 * or an engine's settings): the search run again over its stored points,
 * nothing measured.
 */
import { optionDef, type RawOptions } from "../cli/options.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { CheckpointStore } from "../sweep/mod.ts";

/**
 * The latest checkpoint of --checkpoint-directory, and an interrupt already
 * triggered, once: the replay stops at the first point the checkpoint lacks.
 */
export function openReplay(raw: RawOptions): { store: CheckpointStore; interrupt: Interrupt } {
  const directory = String(
    raw.get("checkpoint-directory") ?? optionDef("checkpoint-directory").default,
  );
  const interrupt = new Interrupt();
  interrupt.trigger();
  return { store: CheckpointStore.open(directory), interrupt };
}

/** Names the checkpoint replayed, and says so when the search it holds did not finish. */
export function printReplayed(store: CheckpointStore, options: { interrupted: boolean }): void {
  console.log(`Checkpoint ${store.loaded}\n`);
  if (options.interrupted) {
    console.log("The search did not finish: the points it had not measured are missing.\n");
  }
}
