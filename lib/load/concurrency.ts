/**
 * Closed-loop load: N workers, each with its own keep-alive session, send
 * the next request as soon as the previous one completes.
 */
import type { RequestRecorder } from "../measure/recorder.ts";
import { ConnectionError } from "../protocol/errors.ts";
import type { InferenceClient, InferOptions, InferSession } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";
import type { RequestFeed } from "./feed.ts";
import { Cancellation } from "./_cancel.ts";
import type { CancellationPlan } from "./plan.ts";
import { Abandonment, drain } from "./_drain.ts";

/**
 * Pauses after connection failures in a row, doubling from the first to the
 * last, so that a dead server does not turn into a busy loop of errors and a
 * restarted one is found again within the last pause.
 */
export const CONNECTION_BACKOFF_MS = { first: 50, max: 500 };

/** The pause after `failures` connection failures in a row (from 1). */
export function connectionBackoffMs(failures: number): number {
  const { first, max } = CONNECTION_BACKOFF_MS;
  return Math.min(max, first * 2 ** Math.min(failures - 1, 16));
}

export interface ConcurrencyLoadOptions {
  /**
   * Worker i takes its requests from lane i (its own sequence on sequence
   * models); a request with a check has its response decoded and validated.
   */
  feed: RequestFeed;
  /** --stall-timeout: stop() and drained() give up on requests when nothing completed for this long (0 = never). */
  stallMs?: number;
  /** --request-cancellation-rate and -delay: requests cancelled on purpose, counted apart. */
  cancellation?: CancellationPlan;
}

const DECODE: InferOptions = { decodeOutputs: true };

export class ConcurrencyLoad {
  readonly #client: InferenceClient;
  readonly #feed: RequestFeed;
  readonly #stallMs: number;
  readonly #idle: InferSession[] = [];
  /** Each lane's session while its worker runs: what giving up closes. */
  #sessions: (InferSession | undefined)[] = [];
  /** Each lane's way to cancel its request in flight. */
  #cancels: (() => void)[] = [];
  readonly #cancellation: Cancellation | undefined;
  #recorder: RequestRecorder | undefined;
  #running = false;
  #budget = Infinity;
  #workers: Promise<void>[] = [];
  readonly #abandonment: Abandonment;
  readonly #lastMs = () => this.#recorder?.lastCompletedMs ?? -Infinity;
  readonly #abandon = () => {
    this.#running = false;
    this.#abandonment.giveUp();
    for (const session of this.#sessions) session?.close();
  };

  constructor(client: InferenceClient, options: ConcurrencyLoadOptions) {
    this.#client = client;
    this.#feed = options.feed;
    this.#stallMs = options.stallMs ?? 0;
    this.#abandonment = new Abandonment(this.#stallMs);
    this.#cancellation = options.cancellation && new Cancellation(options.cancellation);
  }

  /**
   * Starts `concurrency` workers recording into `recorder`. With `limit`, the
   * workers together issue exactly that many requests and then stop.
   */
  start(concurrency: number, options: { recorder: RequestRecorder; limit?: number }): void {
    if (this.#running) throw new Error("The load is already running");
    this.#recorder = options.recorder;
    this.#budget = options.limit ?? Infinity;
    this.#running = true;
    this.#sessions = new Array(concurrency);
    this.#cancels = new Array(concurrency);
    this.#workers = Array.from(
      { length: concurrency },
      (_, lane) => this.#work(this.#idle.pop(), lane),
    );
  }

  /** Cancels every request in flight (the end of --benchmark-grace-period): each counts as cancelled. */
  cancelInflight(): void {
    for (const cancel of this.#cancels) cancel?.();
  }

  /** Stops issuing requests and waits for the ones in flight (given up on after a stall). */
  async stop(): Promise<void> {
    this.#running = false;
    await this.drained();
    this.#workers = [];
  }

  /** Resolves once every worker has stopped (a `limit` was reached, or a stall). */
  async drained(): Promise<void> {
    await drain(Promise.all(this.#workers), {
      lastMs: this.#lastMs,
      stallMs: this.#stallMs,
      abandon: this.#abandon,
    });
  }

  close(): void {
    for (const s of this.#idle) s.close();
    this.#idle.length = 0;
  }

  /** Sessions open lazily so that a refused connection counts as a failed request, not a fatal error. */
  async #work(reused: InferSession | undefined, lane: number): Promise<void> {
    let session = reused;
    const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const feed = this.#feed;
    const recorder = this.#recorder!;
    const abandonment = this.#abandonment;
    const epoch = abandonment.epoch;
    let failures = 0;
    this.#sessions[lane] = session;
    const cancellation = this.#cancellation;
    let inflight = false;
    let cancelled = false;
    // Made once per worker, so that a cancellation timer allocates nothing.
    const cancel = () => {
      if (!inflight || cancelled) return;
      cancelled = true;
      session?.close();
    };
    this.#cancels[lane] = cancel;
    while (this.#running && this.#budget > 0) {
      this.#budget--;
      const request = feed.next(lane);
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        // Noted once per session, not per request (a keyed store on every request).
        if (session === undefined) {
          this.#sessions[lane] = session = await this.#client.openSession();
        }
        const check = feed.check(request);
        inflight = true;
        if (cancellation?.draw()) timer = setTimeout(cancel, cancellation.delayMs);
        const outputs = await session.infer(request, timing, check && DECODE);
        inflight = false;
        // Given up on meanwhile (an API that cannot cancel answers late): failed as abandoned.
        const mismatch = abandonment.of(epoch) ?? check?.(outputs ?? []);
        if (cancelled) recorder.recordCancelled();
        else if (mismatch === undefined) recorder.record(timing);
        else recorder.recordError(mismatch, timing);
        failures = 0;
      } catch (e) {
        inflight = false;
        if (cancelled) {
          recorder.recordCancelled();
          failures = 0;
          continue;
        }
        // A request that had a session was sent (or tried): its timing dates it in the export.
        recorder.recordError(abandonment.failure(epoch, e), session && timing);
        if (e instanceof ConnectionError && abandonment.of(epoch) === undefined) {
          await new Promise((r) => setTimeout(r, connectionBackoffMs(++failures)));
        } else {
          failures = 0;
        }
      } finally {
        if (timer !== undefined) clearTimeout(timer);
        if (cancelled) {
          // Its connection was closed under it: the next request opens another.
          cancelled = false;
          session = undefined;
        }
      }
    }
    this.#sessions[lane] = undefined;
    // Sessions closed when the requests were given up on are not reused.
    if (session && abandonment.of(epoch) === undefined) this.#idle.push(session);
  }
}
