/** --num-profile-runs and its options: the repeat part of a plan, and what it can not be used with. */
import type { RepeatPlan } from "../profile/plan.ts";
import type { Reader } from "./_reader.ts";

const REPEAT_OPTIONS = [
  "confidence-level",
  "convergence-threshold",
  "profile-run-cooldown-seconds",
];

export function parseRepeat(r: Reader): RepeatPlan {
  const runs = r.bounded("num-profile-runs", (n) => n >= 1, "an integer >= 1");
  const plan: RepeatPlan = {
    numProfileRuns: runs,
    confidenceLevel: r.bounded(
      "confidence-level",
      (n) => n > 0 && n < 1,
      "a number between 0 and 1",
    ),
    cooldownMs: 1000 *
      r.bounded("profile-run-cooldown-seconds", (n) => n >= 0, "a number of seconds >= 0"),
  };
  if (r.has("convergence-threshold")) {
    plan.convergenceThreshold = r.bounded(
      "convergence-threshold",
      (n) => n > 0,
      "a number > 0 (0.1: intervals within +-5 % of the mean)",
    );
  }
  if (runs <= 1) {
    const given = REPEAT_OPTIONS.filter((name) => r.has(name));
    if (given.length > 0) {
      r.errors.push(
        `Option ${given.map((n) => `--${n}`).join(", ")} needs --num-profile-runs N with N >= 2`,
      );
    }
  }
  return plan;
}

/** What repeat runs can not be combined with: one line each. */
export function checkRepeat(
  errors: string[],
  config: RepeatPlan & { mpi?: unknown; profileExportFile?: string },
): void {
  if (config.numProfileRuns <= 1) return;
  const refuse = (option: string, why: string) =>
    errors.push(`Option --num-profile-runs can not be used with ${option}: ${why}`);
  if (config.mpi !== undefined) refuse("--enable-mpi", "the ranks would have to agree on each run");
  if (config.profileExportFile !== undefined) {
    refuse(
      "--profile-export-file",
      "the export holds one run's requests; profile once with it, or repeat without it",
    );
  }
}
