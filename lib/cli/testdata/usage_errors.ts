/** Test helper of the command-line configuration tests. */
import { UsageError } from "../../types/errors.ts";

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
