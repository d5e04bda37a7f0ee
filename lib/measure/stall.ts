/**
 * --stall-timeout: how long the client waits without any response before it
 * gives up on the requests in flight. Without a bound, one request that a
 * server never answers holds the end of a level (and the run) for ever.
 */

/** The --stall-timeout default: longer than any single answer a benchmark should wait for. */
export const DEFAULT_STALL_TIMEOUT_MS = 300_000;

/** What a request given up on is failed with, in the report and the profile export. */
export function abandonedMessage(stallMs: number): string {
  return `Abandoned: no response from the server for ${stallMs} ms (--stall-timeout)`;
}

/** A pending wait for a stall, cancelled once what it races has settled. */
export interface StallWatch {
  /** Resolves once nothing has completed for the timeout; never, when cancelled first. */
  readonly stalled: Promise<void>;
  cancel(): void;
}

/**
 * Watches for a stall: `lastMs()` is when something last completed
 * (performance.now() time), counted from the watch's start at the earliest.
 * `stallMs` <= 0 never stalls.
 */
export function watchStall(lastMs: () => number, stallMs: number): StallWatch {
  const since = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let cancelled = false;
  const stalled = new Promise<void>((resolve) => {
    if (stallMs <= 0) return;
    const check = () => {
      if (cancelled) return;
      const left = Math.max(since, lastMs()) + stallMs - performance.now();
      if (left <= 0) resolve();
      else timer = setTimeout(check, left);
    };
    check();
  });
  return {
    stalled,
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Waits for `settled`, or else for a stall (`watchStall`): true when it
 * stalled first. The watch never outlives the wait.
 */
export async function settledOrStalled(
  settled: Promise<unknown>,
  options: { lastMs: () => number; stallMs: number },
): Promise<boolean> {
  const watch = watchStall(options.lastMs, options.stallMs);
  try {
    return await Promise.race([settled.then(() => false), watch.stalled.then(() => true)]);
  } finally {
    watch.cancel();
  }
}
