/**
 * The end of a load: wait for the requests in flight, but not for ever. When
 * nothing has completed for --stall-timeout the load gives up on them: it
 * closes their sessions, which fails each as abandoned.
 */
import { settledOrStalled } from "../measure/stall.ts";

/**
 * How long requests given up on may take to end once their sessions are
 * closed: the C API cannot cancel a request, so its requests are left behind.
 */
const ABANDON_WAIT_MS = 1000;

export async function drain(
  settled: Promise<unknown>,
  options: { lastMs: () => number; stallMs: number; abandon: () => void },
): Promise<void> {
  if (!await settledOrStalled(settled, options)) return;
  options.abandon();
  await settledOrStalled(settled, { lastMs: () => -Infinity, stallMs: ABANDON_WAIT_MS });
}

/** What a failed request is recorded with: `abandoned` when it was given up on, else its error. */
export function failureMessage(error: unknown, abandoned: string | undefined): string {
  return abandoned ?? (error instanceof Error ? error.message : String(error));
}
