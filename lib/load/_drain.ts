/**
 * The end of a load: wait for the requests in flight, but not for ever. When
 * nothing has completed for --stall-timeout the load gives up on them: it
 * closes their sessions, which fails each as abandoned.
 */
import { abandonedMessage, settledOrStalled } from "../measure/stall.ts";

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

/**
 * Which requests a load gave up on. A request notes the epoch it was sent in;
 * giving up starts a new one, so a request of an older epoch was abandoned,
 * also one that answers after all (the C API cannot cancel).
 */
export class Abandonment {
  #epoch = 0;
  readonly #message: string;

  constructor(stallMs: number) {
    this.#message = abandonedMessage(stallMs);
  }

  /** The epoch of requests sent now. */
  get epoch(): number {
    return this.#epoch;
  }

  /** Gives up on every request sent so far. */
  giveUp(): void {
    this.#epoch++;
  }

  /** The failure of a request sent in `epoch` that was given up on; undefined when it was not. */
  of(epoch: number): string | undefined {
    return epoch === this.#epoch ? undefined : this.#message;
  }

  /** What a request sent in `epoch` that failed with `error` is recorded with. */
  failure(epoch: number, error: unknown): string {
    return this.of(epoch) ?? (error instanceof Error ? error.message : String(error));
  }
}
