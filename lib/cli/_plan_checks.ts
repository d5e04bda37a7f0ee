/**
 * Checks of a built plan across its parts: what MPI ranks, chat sessions and
 * --workers threads can not be combined with (one line per problem).
 */
import type { ProfilePlan } from "../profile/plan.ts";
import type { RawOptions } from "./options.ts";

/** Options that need --enable-mpi, and what --shard can not split between ranks. */
export function checkMpi(
  errors: string[],
  options: { config: ProfilePlan; raw: RawOptions },
): void {
  const { config, raw } = options;
  if (config.mpi === undefined) {
    for (const name of ["shard", "mpi-library"].filter((n) => raw.has(n))) {
      errors.push(`Option --${name} needs --enable-mpi`);
    }
    return;
  }
  if (!config.mpi.shard) return;
  if (config.workers > 1) {
    errors.push(
      `Option --shard can not be used with --workers ${config.workers}: start more ranks instead`,
    );
  }
  if (config.periodic !== undefined) {
    errors.push(
      "Option --shard can not be used with --periodic-concurrency-range: its sets of requests " +
        "wait for each other's responses, which one rank must see",
    );
  }
}

/** --session-concurrency: what its sessions need (perf_analyzer's rules, and one thread). */
export function checkSessions(errors: string[], config: ProfilePlan): void {
  const n = config.sessionConcurrency;
  const { turns, datasetType } = config.syntheticPrompts;
  const multiTurn = (turns !== undefined && (turns.mean > 1 || turns.stddev > 0)) ||
    datasetType === "multi_turn";
  if (n === undefined && multiTurn) {
    errors.push(
      `${
        datasetType === "multi_turn"
          ? "A multi_turn dataset needs"
          : "Conversations of several turns need"
      } --session-concurrency N: each turn goes after the previous answer, with the history`,
    );
  }
  if (n === undefined) return;
  if (config.serviceKind !== "openai") {
    errors.push("Option --session-concurrency needs --service-kind openai (chat sessions)");
  }
  if (config.inputData.paths.length === 0 && config.serviceKind !== "openai") {
    errors.push(
      'Option --session-concurrency needs --input-data: a JSON file whose entries give each turn a "session_id"',
    );
  }
  if (config.workers > 1) {
    errors.push(
      `Option --session-concurrency can not be used with --workers ${config.workers}: each ` +
        "session's turns wait for the previous answer, which one thread must see",
    );
  }
  if (config.mpi?.shard) {
    errors.push(
      "Option --shard can not be used with --session-concurrency: each session's turns wait " +
        "for the previous answer, which one rank must see",
    );
  }
}

/** What --workers N > 1 can not split between threads. */
export function checkWorkers(errors: string[], config: ProfilePlan): void {
  const n = config.workers;
  if (n <= 1) return;
  const refuse = (what: string, why: string) =>
    errors.push(`Option --workers ${n} can not be used with ${what}: ${why}`);
  if (config.serviceKind === "triton_c_api") {
    refuse(
      "--service-kind triton_c_api",
      "each worker thread builds its own client, which here would start a second Triton " +
        "server in the same process (the core allows one per process); the in-process server " +
        "already spreads its work over its own threads",
    );
  }
  if (config.sharedMemory !== "none") {
    refuse("--shared-memory", "each worker would need its own regions and request slots");
  }
  if (config.periodic !== undefined) {
    refuse(
      "--periodic-concurrency-range",
      "its sets of requests wait for each other's responses, which one thread must see",
    );
  }
  if (config.loadMode !== "concurrency" && config.maxInflight < n) {
    refuse(`--max-inflight ${config.maxInflight}`, `each worker needs at least 1 in flight`);
  }
}
