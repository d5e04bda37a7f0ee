/** Test helpers of the command-line configuration tests. */
import type { ProfilePlan } from "../../profile/plan.ts";
import { UsageError } from "../../types/errors.ts";
import { parseArgv } from "../args.ts";
import { buildProfileConfig } from "../config.ts";

/** The plan of a command line. */
export function config(...argv: string[]): ProfilePlan {
  return buildProfileConfig(parseArgv(argv).options);
}

/** The warnings of a command line's plan (options perf_analyzer accepts and ignores, ...). */
export function warnings(...argv: string[]): string[] {
  const heard: string[] = [];
  buildProfileConfig(parseArgv(argv).options, { warn: (message) => heard.push(message) });
  return heard;
}

/** The messages of the UsageError that `fn` throws (other errors pass through). */
export function usageErrors(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof UsageError) return e.errors;
    throw e;
  }
  throw new Error("Expected a UsageError");
}
