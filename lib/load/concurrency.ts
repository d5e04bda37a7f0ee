/**
 * Closed-loop load: N workers, each with its own keep-alive session, send
 * the next request as soon as the previous one completes. A concurrency
 * shape (shape.ts) changes N on a timer: new lanes start at once, and a
 * lane above the new N ends after its request in flight (and ends its
 * sequence, on sequence models).
 */
import type { RequestRecorder } from "../measure/recorder.ts";
import { ConnectionError } from "../protocol/errors.ts";
import type { InferenceClient, InferOptions, InferSession } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";
import type { RequestFeed } from "./feed.ts";
import { Cancellation } from "./_cancel.ts";
import type { CancellationPlan } from "./plan.ts";
import { Abandonment, drain } from "./_drain.ts";
import { PrefillGate, PrefillHold } from "./_prefill.ts";
import { StepTimer } from "./_steps.ts";
import type { ConcurrencySteps } from "./shape.ts";

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
  /** --prefill-concurrency: at most this many requests waiting for their first response. */
  prefill?: number;
  /** --prefill-concurrency-ramp-duration: that limit ramps up from 1 over this long. */
  prefillRampMs?: number;
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
  readonly #prefill: PrefillGate | undefined;
  #recorder: RequestRecorder | undefined;
  #running = false;
  /** Lanes below this send (0 once stopped): the concurrency now. */
  #limit = 0;
  /** 1 while a lane's worker runs. */
  #live = new Uint8Array(0);
  /** A concurrency shape's changes. */
  readonly #steps = new StepTimer();
  #budget = Infinity;
  /** The abandonment epoch when the load started: another one at its stop means it gave up. */
  #startEpoch = 0;
  #workers: Promise<void>[] = [];
  readonly #abandonment: Abandonment;
  readonly #lastMs = () => this.#recorder?.lastCompletedMs ?? -Infinity;
  readonly #abandon = () => {
    this.#halt();
    this.#abandonment.giveUp();
    for (const session of this.#sessions) session?.close();
  };

  constructor(client: InferenceClient, options: ConcurrencyLoadOptions) {
    this.#client = client;
    this.#feed = options.feed;
    this.#stallMs = options.stallMs ?? 0;
    this.#abandonment = new Abandonment(this.#stallMs);
    this.#cancellation = options.cancellation && new Cancellation(options.cancellation);
    this.#prefill = options.prefill === undefined
      ? undefined
      : new PrefillGate(options.prefill, { rampMs: options.prefillRampMs });
  }

  /**
   * Starts `concurrency` workers recording into `recorder`, or as many as
   * `steps` say over time. With `limit`, the workers together issue exactly
   * that many requests and then stop.
   */
  start(
    concurrency: number,
    options: { recorder: RequestRecorder; limit?: number; steps?: ConcurrencySteps },
  ): void {
    if (this.#running) throw new Error("The load is already running");
    const steps = options.steps;
    const lanes = steps ? Math.max(steps.initial, ...steps.steps.map((s) => s.value)) : concurrency;
    this.#recorder = options.recorder;
    this.#budget = options.limit ?? Infinity;
    this.#startEpoch = this.#abandonment.epoch;
    this.#running = true;
    this.#limit = steps ? steps.initial : concurrency;
    this.#sessions = new Array(lanes);
    this.#cancels = new Array(lanes);
    this.#live = new Uint8Array(lanes);
    this.#workers = [];
    this.#prefill?.begin();
    for (let lane = 0; lane < this.#limit; lane++) this.#spawn(lane);
    if (steps) this.#workers.push(this.#steps.follow(steps, (n) => this.#setLanes(n)));
  }

  #spawn(lane: number): void {
    this.#live[lane] = 1;
    this.#workers.push(this.#work(this.#idle.pop(), lane));
  }

  /** The concurrency becomes `n`: lanes without a worker start; lanes above `n` end after their request. */
  #setLanes(n: number): void {
    const before = this.#limit;
    this.#limit = n;
    for (let lane = before; lane < n; lane++) if (this.#live[lane] === 0) this.#spawn(lane);
  }

  /** No lane sends any more: a stop, or giving up on a stalled server. */
  #halt(): void {
    this.#running = false;
    this.#limit = 0;
    this.#steps.stop();
    this.#prefill?.end();
    this.#prefill?.releaseWaiting();
  }

  /** Cancels every request in flight (the end of --benchmark-grace-period): each counts as cancelled. */
  cancelInflight(): void {
    for (const cancel of this.#cancels) cancel?.();
  }

  /**
   * Stops issuing requests and waits for the ones in flight (given up on
   * after a stall); each sequence under way gets its last request, with the
   * END flag, as soon as its lane's request in flight answers, and that is
   * waited for too.
   */
  async stop(): Promise<void> {
    this.#halt();
    await this.drained();
    const feed = this.#feed;
    // Lanes whose workers ended before the stop (the request count reached) still owe their END;
    // not after giving up on the server: it stopped answering.
    if (feed.endSequence !== undefined && this.#abandonment.epoch === this.#startEpoch) {
      const lanes = [...this.#sessions.keys()].filter((lane) => feed.endSequence!(lane));
      this.#workers = lanes.map((lane) => this.#work(this.#idle.pop(), lane));
      await this.drained();
    }
    this.#workers = [];
  }

  /**
   * Resolves once every worker has stopped (a `limit` was reached, or a
   * stall) and a concurrency shape has no more lanes to start.
   */
  async drained(): Promise<void> {
    // A shape starts lanes while the first ones run: wait for those too.
    for (let seen = -1; seen !== this.#workers.length;) {
      seen = this.#workers.length;
      await drain(Promise.all(this.#workers), {
        lastMs: this.#lastMs,
        stallMs: this.#stallMs,
        abandon: this.#abandon,
      });
    }
  }

  close(): void {
    for (const s of this.#idle) s.close();
    this.#idle.length = 0;
  }

  /**
   * A lane that stops sending (a stop, or a shape's lower concurrency) ends its
   * sequence under way with one more request, right after its answer, as
   * perf_analyzer sends its END at once: waiting for every other lane's answer
   * first leaves the sequence idle on the server, holding its sequence slot
   * from the sequences waiting for one, until Triton's idle timeout ends it
   * and the END fails ("must specify the START flag"). A lane that ran out of
   * the request count owes none yet: stop() ends it (those requests count in
   * no window), and a lane given up on owes none.
   */
  #owesEnd(lane: number, epoch: number): boolean {
    return lane >= this.#limit && this.#abandonment.of(epoch) === undefined &&
      this.#feed.endSequence?.(lane) === true;
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
    const hold = this.#prefill && new PrefillHold(this.#prefill);
    const plain = hold?.plain;
    const decode = hold?.decode ?? DECODE;
    for (;;) {
      if (!(lane < this.#limit && this.#budget > 0)) {
        if (!this.#owesEnd(lane, epoch)) break;
      } else {
        if (hold !== undefined) {
          await hold.gate.acquire();
          hold.begin();
          if (!(lane < this.#limit && this.#budget > 0)) {
            hold.end();
            continue;
          }
        }
        this.#budget--;
      }
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
        const outputs = await session.infer(request, timing, check ? decode : plain);
        inflight = false;
        // Given up on meanwhile (an API that cannot cancel answers late): failed as abandoned.
        const mismatch = abandonment.of(epoch) ?? check?.(outputs ?? []);
        if (cancelled) recorder.recordCancelled();
        else if (mismatch === undefined) recorder.record(timing);
        else recorder.recordError(mismatch, timing);
        failures = 0;
      } catch (e) {
        inflight = false;
        // Not held through the back-off pause below.
        hold?.end();
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
        hold?.end();
        if (timer !== undefined) clearTimeout(timer);
        if (cancelled) {
          // Its connection was closed under it: the next request opens another.
          cancelled = false;
          session = undefined;
        }
      }
    }
    this.#sessions[lane] = undefined;
    this.#live[lane] = 0;
    // Sessions closed when the requests were given up on are not reused.
    if (session && abandonment.of(epoch) === undefined) this.#idle.push(session);
  }
}
